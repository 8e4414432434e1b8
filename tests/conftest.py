"""The harness's own tests: tiny throwaway programs stand in for contenox here."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Iterator
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


@pytest.fixture(autouse=True, scope="session")
def _bytecode_for_children(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Let every Python child of this run cache its bytecode, even under PYTHONDONTWRITEBYTECODE.

    Most of this suite's time is pytest subprocesses (pytester runs of whole
    sessions). Where PYTHONDONTWRITEBYTECODE is set each one compiled, and
    assertion-rewrote, every module of pytest's plugins and of the harness from
    source again: about a second of each run. There the children write their
    bytecode under the run's base temp instead (PYTHONPYCACHEPREFIX, which
    pytest's rewrite cache honours too), shared by the xdist workers: nothing is
    written beside the sources, and the tests run the same code.
    """
    if not os.environ.get("PYTHONDONTWRITEBYTECODE"):
        yield
        return
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("PYTHONDONTWRITEBYTECODE")
        mp.setenv("PYTHONPYCACHEPREFIX", str(shared / "pycache"))
        yield
