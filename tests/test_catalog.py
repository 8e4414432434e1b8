"""dialogs/: every case's dialog is committed, and nothing else is."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.catalog import FIX_COMMAND, drift, main, write_dialogs

REPO = Path(__file__).resolve().parents[1]

CASES = """
from harness import Case, Script, step

ONE = Case(name="one thing happens", script=Script(turns=["hi"]), steps=[step("run", "x")])
"""


def test_the_committed_dialogs_match_what_the_cases_build() -> None:
    problems = drift(REPO / "cases", REPO / "dialogs")
    assert not problems, "\n".join([*problems, f"fix: {FIX_COMMAND}"])


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    cases, dialogs = tmp_path / "cases", tmp_path / "dialogs"
    cases.mkdir()
    dialogs.mkdir()
    (cases / "test_area.py").write_text(CASES)
    return cases, dialogs


def test_a_missing_or_changed_dialog_is_drift(tmp_path: Path) -> None:
    cases, dialogs = _tree(tmp_path)
    assert drift(cases, dialogs) == [
        "dialogs/area/one_thing_happens.json is missing: its case builds it but it is not committed"
    ]
    assert write_dialogs(cases, dialogs) == ["area/one_thing_happens.json"]
    assert drift(cases, dialogs) == []
    path = dialogs / "area" / "one_thing_happens.json"
    assert path.read_text() == '{\n  "turns": [\n    {\n      "text": "hi"\n    }\n  ]\n}\n'
    path.write_text(path.read_text().replace("hi", "hello"))
    assert drift(cases, dialogs) == [
        "dialogs/area/one_thing_happens.json differs from what its case builds"
    ]


def test_a_dialog_that_belongs_to_no_case_is_drift(tmp_path: Path) -> None:
    cases, dialogs = _tree(tmp_path)
    write_dialogs(cases, dialogs)
    (dialogs / "area" / "deleted_case.json").write_text("[]\n")
    assert drift(cases, dialogs) == [
        f"dialogs/area/deleted_case.json belongs to no case in {cases}"
    ]
    write_dialogs(cases, dialogs)
    assert not (dialogs / "area" / "deleted_case.json").exists()


def test_check_names_the_command_that_fixes_it(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    cases, dialogs = _tree(tmp_path)
    assert main(["check", "--cases", str(cases), "--dialogs", str(dialogs)]) == 1
    assert f"fix: {FIX_COMMAND}" in capsys.readouterr().out
    shutil.rmtree(dialogs)
    dialogs.mkdir()
    assert main(["write", "--cases", str(cases), "--dialogs", str(dialogs)]) == 0
    assert main(["check", "--cases", str(cases), "--dialogs", str(dialogs)]) == 0
