"""The harness's own tests: tiny throwaway programs stand in for contenox here."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
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


def _not_the_tree(where: str, names: list[str]) -> set[str]:
    # What a pytester run leaves beside the tree: its base temps and captured streams.
    return {n for n in names if n.startswith("runpytest-") or n in ("stdout", "stderr")}


@pytest.fixture(scope="session")
def built_once(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[pytest.Pytester, str, Callable[[], None]], None]:
    """Build a pytester tree once per process; every later test gets a copy of it.

    A template database, for the pytester sessions many tests start from (the
    goldens a ``--snapshot-update`` run recorded): ``built_once(pytester, key,
    make)`` runs ``make()`` in ``pytester.path`` the first time ``key`` is asked
    for, with all its assertions, and keeps the tree it left; later, the tree is
    copied into the test's own ``pytester.path`` instead. A recording is
    deterministic (test_snapshot_lifecycle's stable-goldens test says so), so a
    copy is what the run would have written again. ``key`` names everything
    ``make`` depends on; a ``make`` that fails keeps nothing, and the next test
    builds again.
    """
    made: dict[str, Path] = {}

    def build(pytester: pytest.Pytester, key: str, make: Callable[[], None]) -> None:
        if key in made:
            shutil.copytree(made[key], pytester.path, dirs_exist_ok=True)
            return
        make()
        template = tmp_path_factory.mktemp("template")
        shutil.copytree(pytester.path, template, dirs_exist_ok=True, ignore=_not_the_tree)
        made[key] = template

    return build


@pytest.fixture
def pytester(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """pytester, whose sessions leave out the hypothesis plugin.

    hypothesis fills inputs of tests here (test_bad_input, test_containment), in
    this process; no session a test starts uses it, and its plugin imported the
    library in each of them at the end of the run (about 0.1 s of CPU a session).
    """
    monkeypatch.setenv("PYTEST_ADDOPTS", "-p no:hypothesispytest")
    return pytester
