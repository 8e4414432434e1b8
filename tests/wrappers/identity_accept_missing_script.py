#!/usr/bin/env python3
"""contenox whose `backend add --type scripted-test` accepts a script file that is missing.

Breaks: "`--script` is validated when you add the backend: a missing or malformed dialog
file is refused there, not three commands later."
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return list(args[:2]) == ["backend", "add"] and "scripted-test" in args


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    if code != 0 and "cannot be read" in err:
        name = args[2] if len(args) > 2 else "scripted"
        return f'Backend "{name}" added (scripted-test).\n', "", 0
    return out, err, code


if __name__ == "__main__":
    relay(wants, alter)
