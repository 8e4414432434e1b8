"""Files changed between steps: :class:`Write`, :class:`Edit`, :class:`Remove`,
:class:`Link` and :class:`EditDialog`; each path is resolved inside the scratch root
when the step runs (:mod:`harness.case.containment`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from ...dialog import Script, turn_line
from .. import containment
from ..action import (
    Action,
    CaseError,
    _builds,
    _relative,
)

if TYPE_CHECKING:
    from ..run import Run


# --------------------------------------------------------------------------- files


def names_a_directory(path: str) -> bool:
    """Whether a relative path names a directory as written (``.``, ``a/``, ``a/.``)."""
    return path.replace("\\", "/").split("/")[-1] in ("", ".", "..")


def _file(path: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    """A relative path inside the scratch root that names a file, not a directory."""
    _relative(path, name, problem)
    if isinstance(path, str) and names_a_directory(path):
        raise problem(
            name, f"{path!r} names a directory, not a file; give the file's name, e.g. 'notes.txt'"
        )


@dataclass(frozen=True, kw_only=True)
class Write(Action):
    """Write ``text`` to ``path`` in the workspace (``home=True``: under ``~/.contenox``)."""

    kind: ClassVar[str] = "write"
    path: str
    text: str
    home: bool = False

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if not isinstance(self.text, str):
            raise problem("text", f"must be a string, got {type(self.text).__name__}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "text", self.text

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        base = run.instance.home / ".contenox" if self.home else run.instance.work
        with run.touching("path", self.path):
            target = run.path("path", self.path, base)
            containment.write(target, run.instance.root, run.fill(self.text))
        run.instance.recorder.note(f"wrote ~/.contenox/{rel}" if self.home else f"wrote {rel}")


@_builds(Write)
def write(path: str, text: str, *, home: bool = False) -> Write:
    """Change a file between steps: ``write("notes.txt", "hello")``."""
    return Write(path=path, text=text, home=home)


_UNDER = {"work": "the workspace", "contenox": "~/.contenox", "home": "the scratch $HOME"}


def _base(run: Run, under: str) -> Path:
    """The directory an ``under=`` names."""
    instance = run.instance
    return {
        "work": instance.work,
        "contenox": instance.home / ".contenox",
        "home": instance.home,
        "root": instance.root,
    }[under]


@dataclass(frozen=True, kw_only=True)
class Edit(Action):
    """Change a file ``contenox init`` (or a step) wrote, or create one outside the workspace.

    ``path`` is relative to ``under``: ``"work"`` (the workspace), ``"contenox"``
    (``~/.contenox``) or ``"home"`` (the scratch ``$HOME``). Each regex of
    ``replace`` must match the file at least once (else the step fails naming
    it) and every match is replaced; then ``append`` is added at the end (a
    missing file starts empty, so ``append`` alone creates one).
    ``executable=True`` then makes the file executable (mode 0755): a planted
    program, a tool to pin.
    """

    kind: ClassVar[str] = "edit"
    path: str
    append: str = ""
    replace: Mapping[str, str] = field(default_factory=dict)
    under: str = "work"
    executable: bool = False

    def _prepare(self) -> None:
        object.__setattr__(self, "replace", dict(self.replace))

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if self.under not in _UNDER:
            raise problem("under", f"must be one of {sorted(_UNDER)}, got {self.under!r}")
        if not isinstance(self.append, str):
            raise problem("append", f"must be a string, got {type(self.append).__name__}")
        for pattern, text in self.replace.items():
            if not isinstance(pattern, str) or not isinstance(text, str):
                raise problem("replace", f"must map regex → text, got {pattern!r}: {text!r}")
            try:
                re.compile(pattern)
            except re.error as err:
                raise problem("replace", f"{pattern!r} is not a regex: {err}") from None
        if not self.append and not self.replace and not self.executable:
            raise problem("append", "must be given (or replace={regex: text}): it changes nothing")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "append", self.append
        for text in self.replace.values():
            yield "replace", text

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        root = run.instance.root
        with run.touching("path", self.path):
            target = run.path("path", self.path, _base(run, self.under))
            text = containment.read_text(target, root) or ""
        for pattern, replacement in self.replace.items():
            text, count = re.subn(pattern, run.fill(replacement), text)
            if not count:
                raise AssertionError(
                    f"edit {rel!r} in {_UNDER[self.under]}: {pattern!r} matches nothing in\n{text}"
                )
        text += run.fill(self.append)
        with run.touching("path", self.path):
            containment.write(target, root, text, executable=self.executable)
        shown_path = {"work": "", "contenox": "~/.contenox/", "home": "~/"}[self.under] + rel
        changes = [f"replaced {p!r}" for p in self.replace] + (["appended"] if self.append else [])
        changes += ["made executable"] if self.executable else []
        run.instance.recorder.note(f"edited {shown_path}: {', '.join(changes)}")


@_builds(Edit)
def edit(
    path: str,
    *,
    append: str = "",
    replace: Mapping[str, str] | None = None,
    under: str = "work",
    executable: bool = False,
) -> Edit:
    """Change a file between steps: ``edit("agents.toml", append=TABLE, under="contenox")``."""
    return Edit(
        path=path,
        append=append,
        replace=dict(replace or {}),
        under=under,
        executable=executable,
    )


@dataclass(frozen=True, kw_only=True)
class Remove(Action):
    """Delete a file between steps (a declaration retired, a copy taken back).

    ``under`` is ``"work"``, ``"contenox"`` (``~/.contenox``) or ``"home"``,
    as for :class:`Edit`; a file that is not there fails the step, naming it.
    """

    kind: ClassVar[str] = "remove"
    path: str
    under: str = "work"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if self.under not in _UNDER:
            raise problem("under", f"must be one of {sorted(_UNDER)}, got {self.under!r}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        # The entry itself: a link is removed, never what it points at.
        with run.touching("path", self.path):
            target = run.path("path", self.path, _base(run, self.under), "entry")
            removed = containment.unlink(target, run.instance.root)
        if not removed:
            raise AssertionError(f"remove {rel!r} in {_UNDER[self.under]}: no such file")
        shown_path = {"work": "", "contenox": "~/.contenox/", "home": "~/"}[self.under] + rel
        run.instance.recorder.note(f"removed {shown_path}")


@_builds(Remove)
def remove(path: str, *, under: str = "work") -> Remove:
    """Delete a file between steps: ``remove("agents/biller.md", under="contenox")``."""
    return Remove(path=path, under=under)


@dataclass(frozen=True, kw_only=True)
class EditDialog(Action):
    """Rewrite the dialog file of backend ``backend`` with ``script`` (contenox rewinds it)."""

    kind: ClassVar[str] = "edit_dialog"
    script: Script
    backend: str = "scripted"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.script, Script):
            raise problem("script", f"must be a Script, got {self.script!r}")

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        written = run.dialog_paths[self.backend]
        # The dialog file may have been removed and made a link since it was registered.
        path = run.path("dialog", written.name, written.parent, fill=False)
        with run.touching("dialog", str(written), fill=False):
            self.script.write(path)
        run.instance.recorder.note(
            f"edited dialog {self.backend}: " + " / ".join(turn_line(t) for t in self.script.turns)
        )


@_builds(EditDialog)
def edit_dialog(script: Script, *, backend: str = "scripted") -> EditDialog:
    """Rewrite a registered dialog's file between steps."""
    return EditDialog(script=script, backend=backend)


@dataclass(frozen=True, kw_only=True)
class Link(Action):
    """Make ``path`` a symbolic link to ``target`` (both relative to ``under``'s directory,
    ``target`` may be ``{placeholder}``-absolute such as ``{home}/outside.txt``).

    ``under`` is ``"work"`` (the workspace) or ``"root"`` (the scratch root
    above it). A link made this way may point anywhere: that is what a case
    about links that escape the workspace needs. Its own path must lie inside
    the scratch root; one pointing outside is noted as such in the transcript,
    and no later step writes, edits or removes through it (each resolves its
    path when it runs, :mod:`harness.case.containment`).
    """

    kind: ClassVar[str] = "link"
    path: str
    target: str
    under: str = "work"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if not isinstance(self.target, str) or not self.target:
            raise problem("target", f"must be a path, got {self.target!r}")
        if self.under not in ("work", "root"):
            raise problem("under", f"must be 'work' or 'root', got {self.under!r}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "target", self.target

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        root = run.instance.root
        rel, target = run.fill(self.path), run.fill(self.target)
        with run.touching("target", self.target):
            containment.check_text(target)
        with run.touching("path", self.path):
            path = run.path("path", self.path, _base(run, self.under), "entry")
            containment.symlink(path, root, target)
        # Where it points may be anywhere; nothing is written, edited or removed
        # through it (each of those resolves its path), and the transcript says so.
        points = os.path.realpath(os.path.join(path.parent, target))
        outside = (
            ""
            if containment.inside(points, os.path.realpath(root))
            else " (outside the scratch root)"
        )
        run.instance.recorder.note(f"linked {rel} -> {target}{outside}")


@_builds(Link)
def link(path: str, target: str, *, under: str = "work") -> Link:
    """A symbolic link between steps: ``link("link.txt", "{root}/outside.txt")``."""
    return Link(path=path, target=target, under=under)
