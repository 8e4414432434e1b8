"""Pending transcripts: what a run recorded where it differs from the snapshot, grouped by change.

A transcript (``cases/__snapshots__/<module>/<test>.yaml``) or a dialog
(``dialogs/<module>/<test>.json``) that differs from what a run recorded is
left alone; the recording is written beside it as ``<snapshot file>.new``,
the way insta writes ``.snap.new``. A reworded notice then changes hundreds
of transcripts the same way, so pending files are grouped by their change:
the lines removed and added, without positions or indentation, with
numbered placeholders (``[UUID3]``) unnumbered. One group is one decision::

    groups = group(find_pending(Path(".")))
    print("\\n".join(summary_lines(groups)))
    # 277 transcripts differ by one change:
    #   change 1 (3f9a1c): 277 transcripts
    #     -  Mission fired at agent "run" under envelope "run".
    #     +  Mission launched at agent "run" under envelope "run".

``python -m harness.tools.review`` accepts or rejects them; the pytest plugin
registers this module, so a run ends with the same grouping.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "PENDING_SUFFIX",
    "Group",
    "Hunk",
    "Pending",
    "discard_pending",
    "failure_message",
    "find_pending",
    "group",
    "hunks",
    "pending_path",
    "summary_lines",
    "write_pending",
]

PENDING_SUFFIX = ".new"
# The two kinds of snapshot, by the directory they sit under and their suffix.
_KINDS = {"__snapshots__": ("transcript", ".yaml"), "dialogs": ("dialog", ".json")}
_SKIP_DIRS = {"__pycache__", "node_modules"}
_NUMBERED = re.compile(r"\[([A-Z][A-Z_]*?)\d+\]")
# At most this many lines of a hunk (and tests of a group) in a terminal.
_SHOWN_LINES = 12
_SHOWN_TESTS = 5


def pending_path(snapshot: Path) -> Path:
    """``x/test_a.yaml`` → ``x/test_a.yaml.new``."""
    return snapshot.with_name(snapshot.name + PENDING_SUFFIX)


def write_pending(snapshot: Path, text: str) -> Path:
    """Write what a run recorded beside ``snapshot``; the snapshot itself is untouched."""
    path = pending_path(snapshot)
    path.parent.mkdir(parents=True, exist_ok=True)
    # As syrupy writes a text snapshot, so accepting it equals --snapshot-update.
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def discard_pending(snapshot: Path) -> bool:
    """Remove the pending file of ``snapshot`` if there is one; whether there was."""
    try:
        pending_path(snapshot).unlink()
    except FileNotFoundError:
        return False
    return True


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return None


@dataclass(frozen=True)
class Hunk:
    """One run of changed lines: what the snapshot had, what the run recorded."""

    removed: tuple[str, ...]
    added: tuple[str, ...]

    def lines(self) -> list[str]:
        return [f"-{line}" for line in self.removed] + [f"+{line}" for line in self.added]

    def normalised(self) -> Hunk:
        """Without indentation, trailing blanks or placeholder numbers: the change itself."""

        def norm(lines: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(_NUMBERED.sub(r"[\1]", line.strip()) for line in lines)

        return Hunk(norm(self.removed), norm(self.added))


def hunks(old: str, new: str) -> tuple[Hunk, ...]:
    """The changed runs of lines from ``old`` to ``new``, in order."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    return tuple(
        Hunk(tuple(a[i1:i2]), tuple(b[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )


def _change_key(found: Iterable[Hunk]) -> tuple[Hunk, ...]:
    # A notice a transcript prints twice is one change, not two.
    return tuple(sorted({h.normalised() for h in found}, key=lambda h: (h.removed, h.added)))


@dataclass(frozen=True)
class Pending:
    """A pending file and the snapshot it would replace."""

    path: Path
    snapshot: Path
    kind: str  # "transcript" or "dialog"
    module: str
    name: str  # the file's stem: <test> or <test>[<id>]

    @property
    def test(self) -> str:
        """The test function (or Case) it belongs to: the name before any ``[id]``."""
        return self.name.split("[", 1)[0]

    @property
    def test_id(self) -> str:
        return f"{self.module}::{self.name}" + (" (dialog)" if self.kind == "dialog" else "")

    def old(self) -> str | None:
        return _read(self.snapshot)

    def new(self) -> str:
        return _read(self.path) or ""

    def hunks(self) -> tuple[Hunk, ...]:
        return hunks(self.old() or "", self.new())

    def module_file(self) -> Path | None:
        """The test module the snapshot belongs to, if it is still there."""
        base = self.snapshot.parent.parent.parent
        for candidate in (
            (base / f"{self.module}.py",)
            if self.kind == "transcript"
            else (base / "cases" / f"{self.module}.py", base / f"{self.module}.py")
        ):
            if candidate.is_file():
                return candidate
        return None


def _pending_of(path: Path) -> Pending | None:
    if not path.name.endswith(PENDING_SUFFIX):
        return None
    snapshot = path.with_name(path.name[: -len(PENDING_SUFFIX)])
    kind = _KINDS.get(snapshot.parent.parent.name)
    if kind is None or snapshot.suffix != kind[1]:
        return None
    return Pending(path, snapshot, kind[0], snapshot.parent.name, snapshot.stem)


def find_pending(root: Path) -> list[Pending]:
    """Every pending file under ``root`` (hidden directories, such as .tox, skipped)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIP_DIRS)
        for filename in sorted(filenames):
            if filename.endswith(PENDING_SUFFIX):
                pending = _pending_of(Path(dirpath) / filename)
                if pending is not None:
                    found.append(pending)
    return found


@dataclass(frozen=True)
class Group:
    """Pending files that all make the same change; ``id`` names it on the command line."""

    number: int
    id: str
    hunks: tuple[Hunk, ...]  # as the first member shows it
    members: tuple[Pending, ...]

    @property
    def new_snapshots(self) -> bool:
        return all(not m.snapshot.exists() for m in self.members)


def _group_id(key: tuple[Hunk, ...]) -> str:
    text = "\n".join("\n".join(h.lines()) + "\n@@" for h in key)
    return hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]


def group(pendings: Iterable[Pending]) -> list[Group]:
    """Pending files grouped by identical change, the largest group first."""
    by_key: dict[tuple[Hunk, ...], list[tuple[Pending, tuple[Hunk, ...]]]] = {}
    for pending in pendings:
        found = pending.hunks()
        by_key.setdefault(_change_key(found), []).append((pending, found))
    ordered = sorted(by_key.items(), key=lambda kv: (-len(kv[1]), min(p.test_id for p, _ in kv[1])))
    groups = []
    for number, (key, members) in enumerate(ordered, start=1):
        members.sort(key=lambda m: (m[0].module, m[0].name, m[0].kind))
        groups.append(Group(number, _group_id(key), members[0][1], tuple(p for p, _ in members)))
    return groups


def _count(members: Sequence[Pending]) -> str:
    transcripts = sum(1 for m in members if m.kind == "transcript")
    dialogs = len(members) - transcripts
    parts = []
    if transcripts or not dialogs:
        parts.append(f"{transcripts} transcript{'' if transcripts == 1 else 's'}")
    if dialogs:
        parts.append(f"{dialogs} dialog{'' if dialogs == 1 else 's'}")
    return " and ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{'one' if n == 1 else n} {word}{'' if n == 1 else 's'}"


def headline(groups: Sequence[Group]) -> str:
    """``277 transcripts differ by one change:``."""
    members = [m for g in groups for m in g.members]
    verb = "differs" if len(members) == 1 else "differ"
    return f"{_count(members)} {verb} by {_plural(len(groups), 'change')}:"


def hunk_lines(found: Sequence[Hunk], limit: int | None = None) -> list[str]:
    """The hunks as -/+ lines, ``@@`` between them; cut after ``limit`` lines."""
    lines: list[str] = []
    for i, h in enumerate(found):
        if i:
            lines.append("@@")
        lines.extend(h.lines())
    if limit is not None and len(lines) > limit:
        lines = [*lines[:limit], f"… {len(lines) - limit} more lines"]
    return lines


def summary_lines(groups: Sequence[Group], *, tests_shown: int = _SHOWN_TESTS) -> list[str]:
    """The grouping as plain lines: one headline, then each change once with its tests."""
    if not groups:
        return []
    out = [headline(groups)]
    for g in groups:
        new = " (new snapshots)" if g.new_snapshots else ""
        out.append(f"  change {g.number} ({g.id}){new}: {_count(g.members)}")
        out.extend(f"    {line}" for line in hunk_lines(g.hunks, _SHOWN_LINES))
        names = [m.test_id for m in g.members]
        shown = ", ".join(names[:tests_shown])
        if len(names) > tests_shown:
            shown += f" and {len(names) - tests_shown} more"
        out.append(f"    in {shown}")
    return out


def failure_message(snapshot: Path, new: str, shown: Path, test: str) -> str:
    """The failure of one test whose snapshot differs: the diff, where it waits, what to do."""
    old = _read(snapshot) or ""
    diff = list(
        difflib.unified_diff(
            old.splitlines(), new.splitlines(), "snapshot", "this run", n=1, lineterm=""
        )
    )[2:]
    if len(diff) > 40:
        diff = [*diff[:40], f"… {len(diff) - 40} more lines in the pending file"]
    pending_shown = shown.with_name(shown.name + PENDING_SUFFIX)
    return (
        f"{shown} differs from what this run recorded (- snapshot, + this run):\n"
        + "\n".join(diff)
        + f"\nwhat this run recorded is pending in {pending_shown}.\n"
        "If the new text is what a user should see, review it with every transcript that "
        "changed the same way: tox -e review\n"
        f"or update this test alone: tox -e e2e -- -k {test} --snapshot-update"
    )


# ---------------------------------------------------------------------------
# The end of a pytest run: the grouping of what this run left pending. Under
# xdist the workers write the files; the controller, which has the terminal and
# sees every report, reads those of the tests it saw, written since it started
# (a second run in the same checkout writes its own).

_START = pytest.StashKey[float]()
# (module stem, test name) of every test this process saw a report of; under
# xdist the controller sees every worker's reports.
_tests: set[tuple[str, str]] = set()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_START] = time.time()
    _tests.clear()


def _test_of(nodeid: str) -> tuple[str, str]:
    """``cases/test_run.py::test_x[a]`` → ``("test_run", "test_x")``."""
    module, _, name = nodeid.partition("::")
    return Path(module).stem, name.rsplit("::", 1)[-1].split("[", 1)[0]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _tests.add(_test_of(report.nodeid))


def _this_run(config: pytest.Config, pendings: Iterable[Pending]) -> Iterator[Pending]:
    start = config.stash.get(_START, None)
    if start is None:
        return
    for pending in pendings:
        if (pending.module, pending.test) not in _tests:
            continue
        try:
            if pending.path.stat().st_mtime >= start:
                yield pending
        except FileNotFoundError:
            continue


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    groups = group(_this_run(config, find_pending(config.rootpath)))
    if not groups:
        return
    terminalreporter.section("pending transcripts", red=True)
    for line in summary_lines(groups):
        terminalreporter.write_line(line)
    accept = " ".join(g.id for g in groups)
    terminalreporter.write_line(
        "review them (each change once): tox -e review; accept them all: "
        f"python -m harness.tools.review --accept {accept}"
    )
