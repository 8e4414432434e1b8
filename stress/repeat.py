"""The whole e2e suite, several times in a row under xdist, in a new random order each time.

    tox -e stress                          # all stress checks
    python stress/repeat.py --runs 5 -n 2  # this one alone

Prints the outcome counts of every run and exits non-zero if any run had a
failure or an error, naming each failed case and the seed that ordered it
(rerun with ``-p randomly -p no:cacheprovider --randomly-seed=SEED``). With
pytest-randomly installed every run shuffles the cases (per xdist worker), so a
case that leans on a neighbour's state or on running first shows up here.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys

from common import pytest_run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("-n", default="2", help="xdist workers per run")
    parser.add_argument("--seed", type=int, default=None, help="first seed (default: random)")
    opts = parser.parse_args(argv)

    shuffles = importlib.util.find_spec("pytest_randomly") is not None
    if not shuffles:
        print(
            "pytest-randomly is not installed: runs keep the file order (pip install -e .[stress])"
        )
    first = opts.seed if opts.seed is not None else random.randrange(1, 2**31)
    bad = 0
    for index in range(opts.runs):
        seed = first + index
        order = ["-p", "randomly", f"--randomly-seed={seed}"] if shuffles else []
        args = ["cases", "-q", "-p", "no:cacheprovider", "-n", opts.n, *order]
        outcome = pytest_run(args)
        broken = outcome.counts["failed"] + outcome.counts["error"] or outcome.result.exit_code
        print(
            f"run {index + 1}/{opts.runs} (seed {seed if shuffles else '-'}): {outcome.line()}",
            flush=True,
        )
        for name in outcome.failed:
            print(
                f"    FAILED {name}\n        "
                + outcome.failures[name][:2000].replace("\n", "\n        ")
            )
        if broken:
            bad += 1
            if not outcome.failed:
                print(outcome.result.describe())
    print(f"{opts.runs - bad} of {opts.runs} runs had zero failures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
