"""The layers contract (pyproject.toml, ``tool.importlinter``) holds, and it can fail.

``tox -e lint`` runs ``lint-imports`` on the harness. Here the same contract runs
on a copy of ``harness/`` into which one import against the layers is written —
at module level, inside a function, under ``TYPE_CHECKING`` — and on a copy with
a module no layer names: each must turn the check red, naming what broke it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` in ``root`` (its pyproject.toml, its harness/), as tox -e lint runs it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [sys.executable, "-c", LINT, "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of the harness and the pyproject.toml that declares its layers."""
    shutil.copytree(
        REPO / "harness", tmp_path / "harness", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_harness_keeps_its_layers(tree: Path) -> None:
    done = _lint(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


@pytest.mark.parametrize(
    "importing",
    [
        "from .plugin import pytest_configure\n",
        "def _late() -> object:\n    from . import plugin\n\n    return plugin\n",
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    from .plugin import pytest_configure\n",
    ],
    ids=["module-level", "inside-a-function", "under-TYPE_CHECKING"],
)
def test_a_value_module_importing_the_plugin_breaks_the_contract(
    tree: Path, importing: str
) -> None:
    result = tree / "harness" / "result.py"
    result.write_text(result.read_text(encoding="utf-8") + "\n\n" + importing, encoding="utf-8")
    done = _lint(tree)
    assert done.returncode != 0, done.stdout
    assert "BROKEN" in done.stdout
    assert "harness.result -> harness.plugin" in done.stdout, done.stdout


def test_a_lower_module_importing_a_higher_one_breaks_it(tree: Path) -> None:
    """process is below instance: a process that imports the instance is refused."""
    process = tree / "harness" / "process.py"
    process.write_text(
        process.read_text(encoding="utf-8") + "\n\ndef _host() -> object:\n"
        "    from .instance import Instance\n\n    return Instance\n",
        encoding="utf-8",
    )
    done = _lint(tree)
    assert done.returncode != 0, done.stdout
    assert "harness.process -> harness.instance" in done.stdout, done.stdout


def test_a_module_no_layer_names_breaks_it(tree: Path) -> None:
    (tree / "harness" / "stray.py").write_text('"""Given no layer."""\n', encoding="utf-8")
    done = _lint(tree)
    assert done.returncode != 0, done.stdout
    assert "harness.stray" in done.stdout, done.stdout
