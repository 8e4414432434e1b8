#!/usr/bin/env python3
"""contenox whose `doctor` stays silent while scripted-test is the default provider.

Breaks: doctor "raises a warning for as long as it is the default provider: replies are
replayed from the backend's script file and NO model is called."
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import drop_lines, relay


def wants(args: Sequence[str]) -> bool:
    return bool(args) and args[0] == "doctor"


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    return drop_lines(out, "NO model is called"), err, code


if __name__ == "__main__":
    relay(wants, alter)
