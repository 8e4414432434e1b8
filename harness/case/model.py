"""The Case dataclass: an e2e case as data, checked whole when it is built.

Each step checks its own fields as it is constructed (``Step timeout must be
positive seconds``). The Case then checks what only the whole can tell, and
names the case, the step index and the field: that every ``{placeholder}``
refers to a capture an earlier step defines, that ``wait``/``signal`` name a
background run started before and every background run is waited for, and
that ``files``/``home_files`` stay inside the scratch root, each naming a
file (not ``.``, not the directory of another) in text UTF-8 can encode.

A quarantine is a :class:`Defect`, built with exactly this signature::

    Defect(
        title: str,                      # one line: what is broken
        reproduce: str,                  # by hand: setup, command, what it printed
        promised: str,                   # the doc line(s): 'path:line "quote"', one a line
        observed: str,                   # what contenox did instead
        bears_on: tuple[str, ...] = (),  # every other doc line that bears on it, same form
        second_reading: str = "",        # who reproduced it from this text alone, when, what
        docs_disagree: bool = False,     # two pages contradict each other: a docs finding
    )

and given as ``Case(defect=Defect(...))`` or ``@defect(Defect(...))`` (also
inside ``pytest.param(..., marks=defect(Defect(...)))``). A doc line's path is
relative to contenox-docs/ (``reference/contenox-cli.md:317 "a project means
one thing"``); a line range is ``path:132-136``; the binary's own help text, where
no page says it, is `` `contenox run --help` "quote" ``. A confirmed defect is a strict
xfail. ``docs_disagree=True`` is not: its case asserts what the binary does and
what the reference pages (reference/contenox-cli.md, reference/config.md,
reference/agents-config.md) say, and it runs green; ``promised`` and
``bears_on`` hold the two sides.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

import pytest

from ..checks import check_case
from ..dialog import DialogError, Script
from .steps import (
    Action,
    CaseError,
    Probe,
    Prompt,
    Screen,
    _unencodable,
    names_a_directory,
    placeholders,
)

if TYPE_CHECKING:
    from ..servers.providers import Provider

__all__ = ["DEFECT_PREFIX", "DOCS_DISAGREE_MARK", "Case", "Defect", "defect", "quarantine_mark"]

DEFECT_PREFIX = "confirmed defect: "
DOCS_DISAGREE_MARK = "docs_disagree"

# 'reference/contenox-cli.md:317 "a project means one thing"' (or path:132-136 "…"), or
# the binary's own help, which no page repeats: '`contenox run --help` "Piped stdin is …"'.
DOC_LINE = re.compile(r'^(?P<path>[^\s:"]+\.md):(?P<start>\d+)(?:-(?P<end>\d+))? "(?P<quote>.+)"$')
HELP_LINE = re.compile(r'^`contenox [^`]*--help` "(?P<quote>.+)"$')


def doc_lines(text: str) -> list[str]:
    """The non-blank lines of a ``promised`` text, stripped."""
    return [line.strip() for line in text.splitlines() if line.strip()]


@dataclass(frozen=True)
class Defect:
    """A confirmed defect of contenox (or, with ``docs_disagree``, of its docs).

    ``reproduce`` is what a second reader with only this text and the docs
    runs by hand: the setup (a scratch ``HOME``, the files, ``contenox
    init``), the command, and what it printed. ``promised`` is the doc line
    it breaks, one ``path:line "quote"`` a line; ``bears_on`` every other doc
    line that bears on it (the other side, when ``docs_disagree``).
    """

    title: str
    reproduce: str
    promised: str
    observed: str
    bears_on: tuple[str, ...] = ()
    second_reading: str = ""
    docs_disagree: bool = False

    def __post_init__(self) -> None:
        for name in ("title", "reproduce", "promised", "observed", "second_reading"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise CaseError(f"Defect {name} must be text, got {value!r}")
        title = self.title.strip() or "(no title)"
        if not self.title.strip() or "\n" in self.title.strip():
            raise CaseError(f"Defect title must be one non-blank line, got {self.title!r}")
        for name in ("reproduce", "observed"):
            if not getattr(self, name).strip():
                raise CaseError(
                    f"Defect {title!r}: {name} is empty; say "
                    + (
                        "the setup, the command and what it printed"
                        if name == "reproduce"
                        else "what contenox did instead"
                    )
                )
        if isinstance(self.bears_on, (str, bytes)) or not isinstance(self.bears_on, (tuple, list)):
            raise CaseError(
                f"Defect {title!r}: bears_on must be a tuple of doc lines, got {self.bears_on!r}"
            )
        object.__setattr__(self, "bears_on", tuple(self.bears_on))
        if not isinstance(self.docs_disagree, bool):
            raise CaseError(
                f"Defect {title!r}: docs_disagree must be True or False, got {self.docs_disagree!r}"
            )
        promised = doc_lines(self.promised)
        if not promised:
            raise CaseError(
                f'Defect {title!r}: promised is empty; give the doc line as path:line "quote"'
            )
        for where, line in [("promised", p) for p in promised] + [
            ("bears_on", b) for b in self.bears_on
        ]:
            if not isinstance(line, str) or not (
                DOC_LINE.match(line.strip()) or HELP_LINE.match(line.strip())
            ):
                raise CaseError(
                    f"Defect {title!r}: {where} {line!r} is not a doc line; write it as "
                    'path:line "quote", the path relative to contenox-docs/ '
                    '(reference/contenox-cli.md:317 "a project means one thing")'
                )
        if self.docs_disagree and not self.bears_on:
            raise CaseError(
                f"Defect {title!r}: docs_disagree needs both pages; put the other page's line "
                "in bears_on"
            )

    @property
    def reason(self) -> str:
        """The one-paragraph reason pytest prints: title, promise, observation."""
        promised = "; ".join(doc_lines(self.promised))
        return f"{self.title.strip()} — promised {promised}; observed: {self.observed.strip()}"


def quarantine_mark(found: Defect | str) -> pytest.MarkDecorator:
    """The mark a quarantine puts on its test item.

    A confirmed defect is a strict xfail whose reason starts with
    :data:`DEFECT_PREFIX` and which carries the Defect as ``defect=``; a
    docs-disagree finding is a ``docs_disagree`` mark (the case runs).
    """
    if isinstance(found, Defect):
        if found.docs_disagree:
            mark: pytest.MarkDecorator = getattr(pytest.mark, DOCS_DISAGREE_MARK)
            return mark.with_args(reason=found.reason, defect=found)
        return pytest.mark.xfail.with_args(
            strict=True, reason=DEFECT_PREFIX + found.reason, defect=found
        )
    if not isinstance(found, str) or not found.strip():
        raise CaseError(
            "a defect needs what was observed and where; give defect(Defect(title=…, "
            f"reproduce=…, promised=…, observed=…)), got {found!r}"
        )
    return pytest.mark.xfail(strict=True, reason=DEFECT_PREFIX + found.strip())


def defect(found: Defect | str) -> pytest.MarkDecorator:
    """Quarantine a plain test: ``@defect(Defect(...))``.

    A confirmed defect runs as a strict xfail: if the test starts passing,
    the run fails with "defect fixed? remove the quarantine". A plain string
    is still accepted while the cases move to Defect; tests/test_quarantines.py
    refuses every one left.
    """
    if isinstance(found, str) and not found.strip():
        raise CaseError("a defect needs what was observed and where; it was empty")
    return quarantine_mark(found)


def _slug(name: str) -> str:
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()


def _inside_root(path: object) -> bool:
    if not isinstance(path, str) or not path or path.startswith("/"):
        return False
    return ".." not in path.replace("\\", "/").split("/")


@dataclass(frozen=True)
class Case:
    """An e2e case as data. ``name`` is the promise, as a sentence.

    Give ``script`` (one backend called ``scripted``) or ``backends`` (several
    named ones; ``default_backend`` names the one the defaults point at,
    else the first). ``files`` are placed in the workspace, ``home_files``
    in the scratch ``~/.contenox``, before ``contenox init`` (``init=False``
    skips it). ``steps`` are any of the step types (``harness.case.steps``);
    ``probes`` run after the steps and the model-demand check. A case of
    probes only (an empty-state promise) is allowed. ``defect`` (a
    :class:`Defect`) quarantines the case as a strict xfail, or, with
    ``docs_disagree``, marks it a docs finding that runs.
    ``serves_all_turns=False`` accepts a run that leaves turns unserved.
    """

    name: str
    steps: Sequence[Action] = ()
    script: Script | None = None
    backends: Mapping[str, Script] = field(default_factory=dict)
    default_backend: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    home_files: Mapping[str, str] = field(default_factory=dict)
    init: bool = True
    probes: Sequence[Probe] = ()
    defect: Defect | str | None = None
    serves_all_turns: bool = True
    redact: Mapping[str, str] = field(default_factory=dict)
    snapshot: bool = True
    # A provider stand-in serves ``script`` instead of the scripted-test backend:
    # "openai", "vllm", "ollama", "gemini", "anthropic" or a Provider(...).
    provider: str | Provider | None = None

    def __post_init__(self) -> None:
        check_case(self, CaseError, Defect)
        self._check_provider()
        if not isinstance(self.name, str) or not _slug(self.name):
            raise CaseError(f"a Case needs a name that states the promise, got {self.name!r}")
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "probes", tuple(self.probes))
        if not self.steps and not self.probes:
            raise CaseError(
                f"case {self.name!r} has no steps; add step(...) commands to run "
                "(or probes, for an empty-state promise)"
            )
        if self.script is not None and self.backends:
            raise CaseError(f"case {self.name!r}: give script or backends, not both")
        for name, script in self.dialogs.items():
            if not isinstance(script, Script):
                raise DialogError(f"case {self.name!r}: backend {name!r} needs a Script")
        if self.default_backend is not None and self.default_backend not in self.dialogs:
            raise CaseError(
                f"case {self.name!r}: default_backend {self.default_backend!r} is not one of "
                f"{sorted(self.dialogs)}"
            )
        if isinstance(self.defect, str) and not self.defect.strip():
            raise CaseError(f"case {self.name!r}: a defect needs what was observed and where")
        self._check_files()
        self._check_steps()

    def _check_provider(self) -> None:
        if self.provider is None:
            return
        from ..servers.providers import ProviderError, as_provider

        try:
            object.__setattr__(self, "provider", as_provider(self.provider, self.name))
        except ProviderError as err:
            raise CaseError(str(err)) from None
        if self.script is None:
            raise CaseError(f"case {self.name!r}: provider needs script=Script(...) to serve")

    def _problem(self, where: str, name: str, message: str) -> CaseError:
        return CaseError(f"case {self.name!r}: {where} {name}: {message}")

    def _check_files(self) -> None:
        for kind in ("files", "home_files"):
            placed: dict[PurePosixPath, str] = {}
            for path, text in getattr(self, kind).items():
                if not _inside_root(path):
                    raise self._problem(
                        kind,
                        repr(path),
                        "leaves the scratch root; give a relative path without '..'",
                    )
                if names_a_directory(path):
                    raise self._problem(
                        kind,
                        repr(path),
                        "names a directory, not a file; give the file's name, e.g. 'notes.txt'",
                    )
                if not isinstance(text, str):
                    raise self._problem(kind, repr(path), f"must be text, got {text!r}")
                for name, value in (("path", path), ("text", text)):
                    bad = _unencodable(value)
                    if bad is not None:
                        raise self._problem(
                            kind,
                            repr(path),
                            f"{name} holds {bad[0][bad[1]]!r} at index {bad[1]}: a lone "
                            "surrogate, which is no text (UTF-8 cannot encode it)",
                        )
                pure = PurePosixPath(path.replace("\\", "/"))
                for other, given in placed.items():
                    if other == pure:
                        raise self._problem(
                            kind, repr(path), f"names the same file as {given!r}; give it once"
                        )
                    if other in pure.parents or pure in other.parents:
                        inner, outer = (path, given) if other in pure.parents else (given, path)
                        raise self._problem(
                            kind,
                            repr(path),
                            f"{outer!r} is a file and also the directory of {inner!r}; "
                            "rename one of them",
                        )
                placed[pure] = path

    def _check_steps(self) -> None:
        # Defined before the first step: the scratch dirs and the dialog files.
        captures: set[str] = {"work", "home", "tmp", "root"}
        if self.dialogs:
            captures |= {"dialog"} | {f"dialog_{name}" for name in self.dialogs}
        started: set[str] = set()
        waited: set[str] = set()
        served: set[str] = {"provider"} if self.provider is not None else set()
        for index, s in enumerate((*self.steps, *self.probes)):
            where = f"steps[{index}]" if index < len(self.steps) else "probes"
            if not isinstance(s, Action):
                raise CaseError(
                    f"case {self.name!r}: {where} must be a Step or another step type "
                    f"(step(...), background(...), probe(...), …), got {s!r}"
                )
            where = f"{where} ({s.kind})"

            def problem(name: str, message: str, where: str = where) -> CaseError:
                return self._problem(where, name, message)

            if where.startswith("probes") and not isinstance(s, Probe):
                raise problem("", "probes holds probe(...) only; put other steps in steps")
            s.check(problem)
            for name, value in s.texts():
                for used in placeholders(value):
                    if used not in captures:
                        known = ", ".join(sorted(captures)) or "none yet"
                        raise problem(
                            name,
                            f"{{{used}}} refers to no capture an earlier step defines "
                            f"(defined so far: {known}); add capture={{{used!r}: …}} to a "
                            "step before it",
                        )
            needed = s.needs_capture()
            if needed is not None and needed not in captures:
                raise problem("name", f"{needed!r} is no ask captured before; add await_ask first")
            proc = s.needs_process()
            if proc is not None and proc not in started:
                raise problem("name", f"{proc!r} is no background run started before this step")
            if s.kind == "wait" and proc is not None:
                waited.add(proc)
            if s.starts() is not None:
                if s.starts() in started:
                    raise problem("name", f"{s.starts()!r} is already a background run's name")
                started.add(s.starts() or "")
            server = s.needs_server()
            if server is not None and server not in served:
                known = ", ".join(sorted(served)) or "none yet"
                raise problem(
                    "server",
                    f"{server!r} is no server a step before it started (started so far: "
                    f"{known}); add serve({server!r}, …) before it",
                )
            if s.serves() is not None:
                if s.serves() in served:
                    raise problem("name", f"{s.serves()!r} is already a server's name")
                served.add(s.serves() or "")
            backend = getattr(s, "backend", None)
            if s.kind == "edit_dialog" and backend not in self.dialogs:
                raise problem("backend", f"{backend!r} is not one of {sorted(self.dialogs)}")
            if s.kind == "acp_turn" and not any(isinstance(p, Prompt) for p in self.steps[:index]):
                raise problem("read", "acp_turn() before any prompt(): it reads the last turn")
            if s.kind == "keys" and not any(isinstance(p, Screen) for p in self.steps[:index]):
                raise problem("text", "keys() before any screen(): open the terminal first")
            captures |= s.defines()
        for name in sorted(started - waited):
            raise CaseError(
                f"case {self.name!r}: background run {name!r} is never waited for; "
                f"add wait({name!r}, …) so its end is checked"
            )

    @property
    def test_name(self) -> str:
        """The pytest item name: the promise, snake_cased, prefixed ``test_``."""
        slug = _slug(self.name)
        return slug if slug.startswith("test_") else f"test_{slug}"

    @property
    def dialogs(self) -> dict[str, Script]:
        """Backend name → dialog."""
        if self.script is not None:
            return {"scripted": self.script}
        return dict(self.backends)

    def dialog_filename(self, backend: str) -> str:
        """The dialog's file name, in the workspace and under ``dialogs/<area>/``."""
        base = self.test_name.removeprefix("test_")
        return f"{base}.json" if self.script is not None else f"{base}.{backend}.json"
