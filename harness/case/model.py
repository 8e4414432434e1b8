"""The Case dataclass: an e2e case as data, checked whole when it is built.

Each step checks its own fields as it is constructed (``Step timeout must be
positive seconds``). The Case then checks what only the whole can tell, and
names the case, the step index and the field: that every ``{placeholder}``
refers to a capture an earlier step defines, that ``wait``/``signal`` name a
background run started before and every background run is waited for, and
that ``files``/``home_files`` stay inside the scratch root.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from ..checks import check_case
from ..dialog import DialogError, Script
from .steps import Action, CaseError, Probe, Prompt, Screen, placeholders

if TYPE_CHECKING:
    from ..servers.providers import Provider

__all__ = ["DEFECT_PREFIX", "Case", "defect"]

DEFECT_PREFIX = "confirmed defect: "


def defect(observed: str) -> pytest.MarkDecorator:
    """Quarantine a plain test as a confirmed defect: a strict xfail.

    ``observed`` says what contenox did, and where (command, output, the doc
    line it contradicts). If the test starts passing, the run fails with
    "defect fixed? remove the quarantine".
    """
    if not observed.strip():
        raise CaseError("a defect needs what was observed and where; it was empty")
    return pytest.mark.xfail(strict=True, reason=DEFECT_PREFIX + observed.strip())


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
    probes only (an empty-state promise) is allowed. ``defect`` quarantines
    the case as a strict xfail. ``serves_all_turns=False`` accepts a run that
    leaves turns unserved.
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
    defect: str | None = None
    serves_all_turns: bool = True
    redact: Mapping[str, str] = field(default_factory=dict)
    snapshot: bool = True
    # A provider stand-in serves ``script`` instead of the scripted-test backend:
    # "openai", "vllm", "ollama", "gemini", "anthropic" or a Provider(...).
    provider: str | Provider | None = None

    def __post_init__(self) -> None:
        check_case(self, CaseError)
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
        if self.defect is not None and not self.defect.strip():
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
            for path, text in getattr(self, kind).items():
                if not _inside_root(path):
                    raise self._problem(
                        kind,
                        repr(path),
                        "leaves the scratch root; give a relative path without '..'",
                    )
                if not isinstance(text, str):
                    raise self._problem(kind, repr(path), f"must be text, got {text!r}")

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
