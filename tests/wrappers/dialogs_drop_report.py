#!/usr/bin/env python3
"""A broken contenox for demonstrations: `run` drops the report from stdout.

Breaks the worked run's "stdout: scripted run reporting home"
(scripted-test-backend.md, A worked run): the first stdout line of `run` is lost.
Everything else runs the real binary, found at $REAL_CONTENOX.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return args[:1] == ["run"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    return "".join(out.splitlines(keepends=True)[1:]), err, code


if __name__ == "__main__":
    relay(wants, alter)
