"""The e2e suite several times under xdist: each run in a new random order, with a new
hash seed and a ``--basetemp`` of another length, and every transcript that differed.

    tox -e stress                                          # all stress checks
    python stress/repeat.py --runs 5                       # this one alone
    python stress/repeat.py --runs 2 -n 2 cases/test_x.py  # a few files

A transcript that differs from its golden fails its test ("… differs from what
this run recorded"); a transcript that depends on the machine (the order of a Go
map, the hash seed, the scratch root's length, a drawing race) differs in some
runs only. So each run changes what may not matter — the order (pytest-randomly),
``PYTHONHASHSEED`` and the length of the basetemp — and the report names every
transcript that differed in any run, with the runs (seed, basetemp) it differed
in, then every other failure. Exits non-zero if any run had a failure or an
error. Rerun one with the seed and basetemp it names:
``-p randomly --randomly-seed=SEED --basetemp=DIR`` and ``PYTHONHASHSEED=SEED``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

from common import pytest_run

# The failure of a test whose transcript differs from its golden (harness.plugin).
DIFFERS = "differs from what this run recorded"


def basetemp(scratch: Path, index: int) -> Path:
    """Run ``index``'s basetemp: 0, 1, 7, 23, 40 … characters longer than the shortest."""
    extra = (0, 1, 7, 23, 40)[index] if index < 5 else (index * 13) % 61
    return scratch / ("b" + "x" * extra)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "-n", default="auto", help="xdist workers per run (auto: harness/workers.py)"
    )
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    parser.add_argument("paths", nargs="*", default=["cases"], help="what to run (default: cases)")
    opts = parser.parse_args(argv)

    shuffles = importlib.util.find_spec("pytest_randomly") is not None
    if not shuffles:
        print(
            "pytest-randomly is not installed: runs keep the file order (pip install -e .[stress])"
        )
    first = opts.seed if opts.seed is not None else random.randrange(1, 2**31)
    bad = 0
    differed: dict[str, list[str]] = defaultdict(list)
    failed: dict[str, list[str]] = defaultdict(list)
    messages: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="contenox-repeat-") as scratch:
        for index in range(opts.runs):
            seed = first + index
            base = basetemp(Path(scratch), index)
            order = ["-p", "randomly", f"--randomly-seed={seed}"] if shuffles else []
            args = [*opts.paths, "-q", "-p", "no:cacheprovider", "-n", opts.n, *order]
            args.append(f"--basetemp={base}")
            env = {**os.environ, "PYTHONHASHSEED": str(seed)}
            outcome = pytest_run(args, env=env)
            broken = outcome.counts["failed"] + outcome.counts["error"] or outcome.result.exit_code
            run = f"run {index + 1} (seed {seed}, basetemp {len(str(base))} characters)"
            print(f"{run}: {outcome.line()}", flush=True)
            for name in outcome.failed:
                message = outcome.failures[name]
                (differed if DIFFERS in message else failed)[name].append(run)
                messages.setdefault(name, message)
            if broken:
                bad += 1
                if not outcome.failed:
                    print(outcome.result.describe())
    print(f"{len(differed)} transcripts differed in some run")
    for name, runs in sorted(differed.items()):
        print(f"    DIFFERED {name} in {len(runs)} of {opts.runs}: " + "; ".join(runs))
        print("        " + messages[name][:2000].replace("\n", "\n        "))
    for name, runs in sorted(failed.items()):
        print(f"    FAILED {name} in {len(runs)} of {opts.runs}: " + "; ".join(runs))
        print("        " + messages[name][:2000].replace("\n", "\n        "))
    print(f"{opts.runs - bad} of {opts.runs} runs had zero failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
