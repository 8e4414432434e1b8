#!/usr/bin/env python3
"""A broken contenox for demonstrations: `chat` replies differ from run to run.

Breaks "every model turn … served by the next turn in that file — in order, byte for
byte, every time" (scripted-test-backend.md). Everything else runs the real binary,
found at $REAL_CONTENOX.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return args[:1] == ["chat"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    if out.endswith("\n"):
        out = out[:-1] + f" (take {time.time_ns() % 1000})\n"
    return out, err, code


if __name__ == "__main__":
    relay(wants, alter)
