"""tox -e e2e's default path: cases/ unless the posargs name a path of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import DEFAULT_PATHS_VAR, default_paths, names_a_path

ENV = {DEFAULT_PATHS_VAR: "cases"}


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "cases").mkdir()
    (tmp_path / "cases" / "test_x.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["-n", "2"],
        ["--splits", "4", "--group", "1"],
        ["-k", "test_x"],
        ["--basetemp", "/tmp"],
        ["--ignore", "cases/test_x.py"],
        ["--snapshot-update-new-only", "-k", "cases"],
    ],
)
def test_no_path_among_the_arguments_runs_the_default(root: Path, args: list[str]) -> None:
    assert default_paths(args, root, ENV) == ["cases"]


@pytest.mark.parametrize(
    "args",
    [
        ["cases/test_x.py"],
        ["cases/test_x.py::test_y", "-n", "2"],
        ["-k", "y", "cases"],
        ["--ignore", "cases/test_x.py", "cases"],
    ],
)
def test_a_path_among_the_arguments_is_run_alone(root: Path, args: list[str]) -> None:
    assert default_paths(args, root, ENV) == []


def test_an_absolute_path_outside_the_root_is_an_option_value(root: Path) -> None:
    assert not names_a_path(str(root.parent), root)
    assert names_a_path(str(root / "cases" / "test_x.py"), root)


def test_without_the_variable_nothing_is_added(root: Path) -> None:
    assert default_paths([], root, {}) == []
