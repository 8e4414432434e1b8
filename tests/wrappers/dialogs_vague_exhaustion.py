#!/usr/bin/env python3
"""A broken contenox for demonstrations: the exhausted-script error loses its turn index.

`chat`'s stderr says "asked for a turn" instead of "asked for turn N", breaking "it
fails with the script and the turn index in the message" (scripted-test-backend.md,
Running past the end fails loudly). Everything else runs the real binary, found at
$REAL_CONTENOX.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return args[:1] == ["chat"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    return out, re.sub(r"asked for turn \d+", "asked for a turn", err), code


if __name__ == "__main__":
    relay(wants, alter)
