#!/usr/bin/env python3
"""A broken contenox for demonstrations: an exhausted script gets a mock reply.

Breaks "Running past the end fails loudly … There is no fallback reply"
(scripted-test-backend.md): when `chat` dies on an exhausted script, this prints a
canned answer and exits 0, hiding the error. Everything else runs the real binary,
found at $REAL_CONTENOX.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return args[:1] == ["chat"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    if code != 0 and "is exhausted" in err:
        return "This is a mock response.\n", "Thinking...\n", 0
    return out, err, code


if __name__ == "__main__":
    relay(wants, alter)
