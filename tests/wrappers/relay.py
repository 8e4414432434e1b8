"""Shared by the wrappers: run the real contenox, alter what one command prints.

A wrapper stands in for contenox (``CONTENOX_BIN``) and models a binary that
breaks one promise. Commands it does not alter are handed to the real binary
with ``exec``, so a terminal or an ACP client talks to contenox directly.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Sequence

# The harness allowlists every child's environment, so check.py's launcher
# sets this inside the child rather than around pytest.
REAL = "REAL_CONTENOX"

Alter = Callable[[Sequence[str], str, str, int], tuple[str, str, int]]


def real_contenox() -> str:
    path = os.environ.get(REAL, "")
    if not path or not os.access(path, os.X_OK):
        sys.stderr.write(
            f"{sys.argv[0]}: set {REAL} to the real contenox binary "
            f"(got {path!r}), e.g. {REAL}=/tmp/e2ecache/v1.0.0/contenox\n"
        )
        sys.exit(127)
    return path


def relay(wants: Callable[[Sequence[str]], bool], alter: Alter) -> None:
    """Run contenox with this process's argv; pass ``alter`` the output when ``wants`` it."""
    real = real_contenox()
    args = sys.argv[1:]
    if not wants(args):
        os.execv(real, [real, *args])
    stdin = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    done = subprocess.run([real, *args], input=stdin, capture_output=True, check=False)
    stdout, stderr, code = alter(
        args,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
        done.returncode,
    )
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


def drop_lines(text: str, marker: str) -> str:
    """``text`` without the lines that contain ``marker``."""
    return "".join(line for line in text.splitlines(keepends=True) if marker not in line)
