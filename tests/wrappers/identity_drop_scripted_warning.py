#!/usr/bin/env python3
"""contenox whose `backend add` prints no WARNING line for a scripted-test backend.

Breaks: "`contenox backend add` prints a `WARNING:` line naming the script file."
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import drop_lines, relay


def wants(args: Sequence[str]) -> bool:
    return list(args[:2]) == ["backend", "add"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    return drop_lines(out, "WARNING:"), drop_lines(err, "WARNING:"), code


if __name__ == "__main__":
    relay(wants, alter)
