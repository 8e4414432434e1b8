#!/usr/bin/env python3
"""contenox whose `backend list` shows a scripted backend as an `openai` one.

Breaks: "`contenox backend list` shows the type in its own column."
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from relay import relay


def wants(args: Sequence[str]) -> bool:
    return list(args[:2]) == ["backend", "list"]


def alter(args: Sequence[str], out: str, err: str, code: int) -> tuple[str, str, int]:
    # Same width, so the table still lines up and only the word is a lie.
    return out.replace("scripted-test", "openai       "), err, code


if __name__ == "__main__":
    relay(wants, alter)
