"""The harness's own tests: tiny throwaway programs stand in for contenox here."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def make_program(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write an executable Python program into ``tmp_path/bin`` and return its path."""

    def make(name: str, source: str) -> Path:
        bindir = tmp_path / "bin"
        bindir.mkdir(exist_ok=True)
        path = bindir / name
        path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(source), encoding="utf-8")
        path.chmod(0o755)
        return path

    return make
