"""Review pending transcripts, one decision per change: ``python -m harness.tools.review``.

Every ``<snapshot>.new`` a run left (see :mod:`harness.pending`) is read and
grouped by identical change; each group is shown once, with the hunk, how
many transcripts and which tests. Accepting moves the pending file over its
snapshot; rejecting deletes it. Pending files gone stale (their snapshot
equals them already, or their test no longer exists) are reported and removed.

    python -m harness.tools.review                   # in a terminal: asks per group
    python -m harness.tools.review --accept 3f9a1c   # a group by id (or number), or a test
    python -m harness.tools.review --accept-all      # or --reject-all
    python -m harness.tools.review --markdown x.md   # the summary for a PR comment

Without a terminal and without a decision it only lists the groups.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from ..catalog import _load, cases_in
from ..pending import Group, Pending, find_pending, group, hunk_lines, summary_lines

__all__ = ["Review", "main", "markdown", "stale"]


def _tests_of(module_file: Path) -> set[str] | None:
    """The test names a module defines (Cases and functions); None if it cannot be read."""
    try:
        module = _load(module_file)
    except Exception:  # any error: the module cannot say, so the file is kept
        return None
    names = {c.test_name for c in cases_in(module)}
    names |= {n for n, v in vars(module).items() if n.startswith("test_") and callable(v)}
    return names


def stale(pendings: Sequence[Pending]) -> tuple[list[tuple[Pending, str]], list[Pending]]:
    """Split into (stale with the reason, live): equal to its snapshot, or its test is gone."""
    tests: dict[Path, set[str] | None] = {}
    gone: list[tuple[Pending, str]] = []
    live: list[Pending] = []
    for pending in pendings:
        if pending.old() == pending.new():
            gone.append((pending, "its snapshot equals it already"))
            continue
        module = pending.module_file()
        if module is None:
            gone.append((pending, f"its test module {pending.module}.py no longer exists"))
            continue
        if module not in tests:
            tests[module] = _tests_of(module)
        known = tests[module]
        if known is not None and pending.test not in known:
            gone.append((pending, f"{pending.module} no longer has a test {pending.test}"))
            continue
        live.append(pending)
    return gone, live


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def markdown(groups: Sequence[Group], root: Path) -> str:
    """The summary a PR comment needs: each change once, its count, its tests, how to accept."""
    if not groups:
        return "## Pending transcripts\n\nNo transcript differs from its snapshot.\n"
    out = ["## Pending transcripts", "", "**" + summary_lines(groups)[0].rstrip(":") + ".**", ""]
    for g in groups:
        out += [
            f"### Change {g.number} (`{g.id}`): {len(g.members)} file"
            + ("" if len(g.members) == 1 else "s"),
            "",
            "```diff",
            *hunk_lines(g.hunks),
            "```",
            "",
            f"<details><summary>{len(g.members)} tests</summary>",
            "",
            *(f"- `{m.test_id}` — `{_relative(m.snapshot, root)}`" for m in g.members),
            "",
            "</details>",
            "",
        ]
    ids = " ".join(g.id for g in groups)
    every = (
        ""
        if len(groups) == 1
        else f"; all of them: `python -m harness.tools.review --accept {ids}`"
    )
    out += [
        f"Accept a change: `python -m harness.tools.review --accept {groups[0].id}`{every}; "
        "reject one: `--reject ID`. Then commit the rewritten snapshots.",
        "",
    ]
    return "\n".join(out)


@dataclass
class Review:
    """The decisions of one review, applied as they are made."""

    root: Path
    out: TextIO
    accepted: list[Pending] = field(default_factory=list)
    rejected: list[Pending] = field(default_factory=list)

    def accept(self, pending: Pending) -> None:
        os.replace(pending.path, pending.snapshot)
        self.accepted.append(pending)

    def reject(self, pending: Pending) -> None:
        pending.path.unlink(missing_ok=True)
        self.rejected.append(pending)

    def say(self, line: str = "") -> None:
        print(line, file=self.out)

    def report(self) -> None:
        if self.accepted:
            self.say(f"accepted {len(self.accepted)}: snapshots rewritten (review and commit):")
            for p in self.accepted:
                self.say(f"  {_relative(p.snapshot, self.root)}")
        if self.rejected:
            self.say(f"rejected {len(self.rejected)}: pending files deleted")


def _select(groups: Sequence[Group], wanted: str, root: Path) -> list[Pending] | None:
    """A group by id or number, or one pending file by test id, test name or path."""
    for g in groups:
        if wanted in (g.id, str(g.number)):
            return list(g.members)
    members = [m for g in groups for m in g.members]
    matched = [
        m
        for m in members
        if wanted
        in (
            m.test_id,
            f"{m.module}::{m.name}",
            m.name,
            _relative(m.path, root),
            _relative(m.snapshot, root),
            str(m.path),
            str(m.snapshot),
        )
    ]
    return matched or None


def _interactive(groups: Sequence[Group], review: Review, ask: Callable[[str], str]) -> None:
    for g in groups:
        review.say()
        review.say("\n".join(summary_lines([g], tests_shown=len(g.members))[1:]))
        while True:
            answer = ask(
                f"change {g.number}/{len(groups)}: [a]ccept all {len(g.members)}, "
                "[r]eject all, [o]ne by one, [s]kip, [q]uit? "
            ).strip()[:1]
            if answer in ("a", "r", "o", "s", "q"):
                break
        if answer == "q":
            return
        if answer == "a":
            for m in g.members:
                review.accept(m)
        elif answer == "r":
            for m in g.members:
                review.reject(m)
        elif answer == "o":
            for m in g.members:
                one = ""
                while one not in ("a", "r", "s"):
                    one = ask(f"  {m.test_id}: [a]ccept, [r]eject, [s]kip? ").strip()[:1]
                if one == "a":
                    review.accept(m)
                elif one == "r":
                    review.reject(m)


def main(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Run the review; 0 when done, 2 when a selection names nothing."""
    out = sys.stdout if out is None else out
    stdin = sys.stdin if stdin is None else stdin
    parser = argparse.ArgumentParser(
        prog="python -m harness.tools.review",
        description="Review pending transcripts (<snapshot>.new), one decision per change.",
    )
    parser.add_argument(
        "--root", type=Path, default=Path("."), help="where to look (default: here)"
    )
    parser.add_argument(
        "--accept",
        nargs="+",
        default=[],
        metavar="GROUP",
        help="accept a group (its id or number) or one test (module::test, or a path)",
    )
    parser.add_argument(
        "--reject", nargs="+", default=[], metavar="GROUP", help="reject, as --accept selects"
    )
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument("--accept-all", action="store_true", help="accept every pending file")
    decide.add_argument("--reject-all", action="store_true", help="reject every pending file")
    parser.add_argument(
        "--markdown", type=Path, metavar="FILE", help="write the summary for a PR comment"
    )
    args = parser.parse_args(argv)
    root: Path = args.root
    review = Review(root, out)

    gone, live = stale(find_pending(root))
    for pending, why in gone:
        pending.path.unlink(missing_ok=True)
        review.say(f"removed stale {_relative(pending.path, root)}: {why}")
    groups = group(live)

    if args.markdown is not None:
        args.markdown.write_text(markdown(groups, root), encoding="utf-8")
        review.say(f"wrote {args.markdown}")
    if not groups:
        review.say("no pending transcripts")
        return 0

    chosen: list[tuple[Callable[[Pending], None], list[Pending]]] = []
    actions: list[tuple[Callable[[Pending], None], list[str]]] = [
        (review.accept, args.accept),
        (review.reject, args.reject),
    ]
    for action, wanted_list in actions:
        for wanted in wanted_list:
            selected = _select(groups, wanted, root)
            if selected is None:
                ids = ", ".join(f"{g.id} (change {g.number})" for g in groups)
                print(
                    f"harness.tools.review: {wanted!r} names no change and no pending transcript; "
                    f"the changes are {ids}, or name a test as module::test",
                    file=sys.stderr,
                )
                return 2
            chosen.append((action, selected))
    if args.accept_all or args.reject_all:
        every = [m for g in groups for m in g.members]
        chosen.append((review.accept if args.accept_all else review.reject, every))

    if chosen:
        done: set[Path] = set()
        for action, selected in chosen:
            for pending in selected:
                if pending.path not in done:
                    done.add(pending.path)
                    action(pending)
    elif stdin.isatty() and args.markdown is None:
        review.say("\n".join(summary_lines(groups)[:1]))

        def ask(prompt: str) -> str:
            print(prompt, end="", file=out, flush=True)
            line = stdin.readline()
            return line if line else "q"

        _interactive(groups, review, ask)
    else:
        for line in summary_lines(groups):
            review.say(line)
        ids = " ".join(g.id for g in groups)
        review.say(
            f"decide with --accept {ids} (or a test, module::test), --reject …, "
            "--accept-all or --reject-all; in a terminal, run it without options"
        )
    review.report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
