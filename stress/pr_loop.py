"""The pull-request loop against a reworded notice, end to end (issue 25's acceptance).

    tox -e pr-loop                      # build the mutant, run, review, accept, run again
    python stress/pr_loop.py -n 2

A maintainer rewords one notice in contenox; hundreds of transcripts change by
that one line. This builds that change as a source mutant
(``mutants/run_waiting_notice_reworded.diff``: the waiting notice's "the unit
is a child of this process and is torn down when it exits" ends "and stops when
it exits" — a line no case asserts word for word, so only transcripts change)
and, in a throwaway copy of this repository, runs test_run, test_run_page and
test_approvals against it, then checks what the
maintainer would rely on:

1. the run fails, and every test that failed left pending files
   (``<snapshot>.new``) and failed for its transcript alone;
2. ``python -m harness.tools.review --markdown`` groups every pending file into ONE
   change, shown once with how many transcripts and which tests;
3. ``--accept-all`` moves every pending file over its snapshot and leaves none;
4. the same tests run again against the mutant are green, and every rewritten
   snapshot differs from the original by exactly the reworded line(s).

Exit 0 when all four hold, 1 naming the first that did not. The repository
itself is never touched.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from common import ROOT, pytest_run

from harness import run
from harness.pending import find_pending, group
from harness.tools.review import stale

MUTANT = "run_waiting_notice_reworded"
FILES = ("cases/test_run.py", "cases/test_run_page.py", "cases/test_approvals.py")
OLD, NEW = "is torn down when it exits", "stops when it exits"
DIFFERS = "differs from what this run recorded"
IGNORED = shutil.ignore_patterns(
    ".tox", ".git", "__pycache__", ".pytest_cache", "*.new", "*.egg-info"
)


def build() -> str:
    """The mutant binary's path (built once per machine, cached like every mutant)."""
    argv = [sys.executable, "-m", "harness.tools.mutants", "--build-only", MUTANT]
    result = run(argv, cwd=ROOT, env=os.environ, timeout=1800)
    result.assert_success()
    for line in result.stdout.splitlines():
        name, _, path = line.partition("\t")
        if name == MUTANT and path:
            return path
    raise SystemExit(f"pr_loop: {MUTANT} built but no path printed:\n{result.describe()}")


def fail(why: str) -> int:
    print(f"pr_loop: FAILED: {why}")
    return 1


def changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    removed, added = [], []
    for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")):
            continue
        (removed if line.startswith("-") else added).append(line[1:])
    return removed, added


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", default="2", help="xdist workers per run")
    opts = parser.parse_args(argv)
    binary = build()
    print(f"mutant {MUTANT}: {binary}", flush=True)
    with tempfile.TemporaryDirectory(prefix="contenox-pr-loop-") as scratch:
        copy = Path(scratch) / "repo"
        shutil.copytree(ROOT, copy, ignore=IGNORED)
        env = {**os.environ, "CONTENOX_BIN": binary, "PYTHONPATH": str(copy)}
        args = [*FILES, "-q", "-p", "no:cacheprovider", "-n", opts.n]

        first = pytest_run(args, cwd=copy, env=env)
        print(f"1. against the mutant: {first.line()}", flush=True)
        if not first.failed:
            return fail("no test failed against the reworded notice: no transcript shows it")
        not_transcript = [n for n in first.failed if DIFFERS not in first.failures[n]]
        if not_transcript:
            shown = "\n".join(f"  {n}: {first.failures[n][:300]}" for n in not_transcript)
            return fail(f"{len(not_transcript)} tests failed for something else:\n{shown}")
        gone, live = stale(find_pending(copy))
        if gone:
            return fail(f"{len(gone)} pending files were stale right after the run: {gone[:3]}")
        if not live:
            return fail(f"{len(first.failed)} tests failed but left no pending file")
        print(f"   {len(first.failed)} tests failed, {len(live)} pending files", flush=True)

        groups = group(live)
        summary = copy / "review.md"
        review = [sys.executable, "-m", "harness.tools.review", "--root", str(copy)]
        listed = run([*review, "--markdown", str(summary)], cwd=copy, env=env, timeout=120)
        listed.assert_success()
        print(f"2. review: {len(groups)} change(s)\n{summary.read_text(encoding='utf-8')}")
        if len(groups) != 1:
            return fail(f"{len(live)} pending files make {len(groups)} changes, not one")
        if len(groups[0].members) != len(live):
            return fail(f"the one change holds {len(groups[0].members)} of {len(live)} files")

        originals = {p.snapshot: p.snapshot.read_text(encoding="utf-8") for p in live}
        accepted = run([*review, "--accept-all"], cwd=copy, env=env, timeout=120)
        accepted.assert_success()
        left = find_pending(copy)
        print(f"3. --accept-all: {len(originals)} snapshots rewritten, {len(left)} pending left")
        if left:
            return fail(f"{len(left)} pending files left after --accept-all")

        second = pytest_run(args, cwd=copy, env=env)
        print(f"4. again against the mutant: {second.line()}", flush=True)
        if second.failed or second.result.exit_code != 0:
            shown = "\n".join(f"  {n}: {second.failures[n][:300]}" for n in second.failed)
            return fail(f"the run after --accept-all is not green:\n{shown}")
        for snapshot, before in originals.items():
            after = snapshot.read_text(encoding="utf-8")
            removed, added = changed_lines(before, after)
            if not removed or [r.replace(OLD, NEW) for r in removed] != added:
                where = snapshot.relative_to(copy)
                return fail(f"{where} changed by more than the reworded line: -{removed} +{added}")
        print(f"pr_loop: OK: one change over {len(originals)} transcripts, accepted, green again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
