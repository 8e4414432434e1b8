"""A full run leaves a real ~/.contenox byte for byte as it was.

    python stress/sentinel.py [-n auto] [--splits N --group K]

Makes a temporary HOME holding a sentinel ``.contenox/`` (a config, a binary
file standing in for the database, a nested file, an empty dir), runs the
e2e suite with HOME pointed there — the binary cache stays where it was, so
nothing is rebuilt — then compares the tree listing, every file's SHA-256,
mode and mtime before and after. Any difference fails, naming the path.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path

from common import pytest_run

from harness import cache_dir

SENTINEL = {
    "config.yaml": b"default-provider: openai\ndefault-model: gpt-sentinel\n",
    "local.db": os.urandom(64 * 1024),
    "chains/chain-sentinel.json": b'{"id": "sentinel", "tasks": []}\n',
    "hitl-policies/policy-sentinel.json": b'{"name": "sentinel"}\n',
}


def snapshot(root: Path) -> dict[str, tuple[object, ...]]:
    """relpath -> (kind, mode, size, mtime_ns, sha256) for everything under ``root``."""
    tree: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            info = path.lstat()
            rel = str(path.relative_to(root))
            if stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                tree[rel] = ("file", info.st_mode, info.st_size, info.st_mtime_ns, digest)
            else:
                tree[rel] = ("other", info.st_mode, info.st_mtime_ns)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", default="auto", help="xdist workers (auto: harness/workers.py)")
    parser.add_argument(
        "--splits",
        type=int,
        default=1,
        help="run one shard of the suite (pytest-split) instead of all of it: CI's quick check",
    )
    parser.add_argument("--group", type=int, default=1, help="which shard, with --splits")
    opts = parser.parse_args(argv)
    shard = ["--splits", str(opts.splits), "--group", str(opts.group)] if opts.splits > 1 else []

    with tempfile.TemporaryDirectory(prefix="contenox-sentinel-home-") as home:
        real = Path(home) / ".contenox"
        for rel, data in SENTINEL.items():
            (real / rel).parent.mkdir(parents=True, exist_ok=True)
            (real / rel).write_bytes(data)
        (real / "empty").mkdir()
        before = snapshot(real)

        env = dict(os.environ)
        env["CONTENOX_E2E_CACHE"] = str(cache_dir())  # resolved against the real HOME
        env["HOME"] = home
        outcome = pytest_run(
            ["cases", "-q", "-p", "no:cacheprovider", "-n", opts.n, *shard], env=env
        )
        after = snapshot(real)

    print(f"suite with HOME={home}: {outcome.line()}")
    changed = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    problems = [f"changed: {k}" for k in changed]
    problems += [f"removed: {k}" for k in sorted(before.keys() - after.keys())]
    problems += [f"created: {k}" for k in sorted(after.keys() - before.keys())]
    if problems:
        print(f"the sentinel ~/.contenox was touched ({len(problems)} differences):")
        print("\n".join(f"  {p}" for p in problems))
        return 1
    print(f"sentinel ~/.contenox unchanged: {len(before)} entries, every byte, mode and mtime")
    # A failing case is repeat.py's business; a run that never got going proves nothing here.
    if outcome.counts["passed"] == 0 or outcome.result.exit_code not in (0, 1):
        print("...but the suite did not run under that HOME, so this proves nothing:")
        print(outcome.result.describe())
        return 1
    for name in outcome.failed:
        print(f"  (a case failed under that HOME, not counted here: {name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
