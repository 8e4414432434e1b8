"""The defect report (python -m harness.tools.defects): its rows, and DEFECTS.md kept in sync."""

from __future__ import annotations

import json
from pathlib import Path

from harness.catalog import quarantines
from harness.tools.defects import REGENERATE, main, markdown

REPO = Path(__file__).resolve().parents[1]

CASES_MODULE = """
from harness import Case, Defect, Script, defect, step

BROKEN = Case(
    name="the flag is honoured",
    script=Script(turns=["hi"]),
    steps=[step("chat", "--flag", "hi")],
    defect=Defect(
        title="chat ignores --flag",
        reproduce="export HOME=$(mktemp -d); contenox init; contenox chat --flag hi\\n"
        "# prints: reply without the flag",
        promised='reference/contenox-cli.md:10 "--flag | does the thing"',
        observed="the reply is the same as without --flag",
        bears_on=('guide/flags.md:4 "the flag does the thing"',),
    ),
)


@defect(
    Defect(
        title="two pages disagree on the default",
        reproduce="contenox config get x  # prints: 1",
        promised='reference/config.md:3 "x defaults to 1"',
        observed="x is 1",
        bears_on=('guide/x.md:7 "x defaults to 2"',),
        second_reading="h9, 2026-12-01: contenox config get x printed 1",
        docs_disagree=True,
    )
)
def test_x_defaults_to_one():
    assert True
"""


def _cases(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_area.py").write_text(CASES_MODULE)
    return cases


def test_defects_md_is_in_sync_with_the_quarantines() -> None:
    committed = REPO / "DEFECTS.md"
    assert committed.is_file(), f"DEFECTS.md is missing; run `{REGENERATE}`"
    wanted = markdown(quarantines(REPO / "cases"))
    assert committed.read_text(encoding="utf-8") == wanted, (
        f"DEFECTS.md is out of date with the quarantines in cases/; run `{REGENERATE}` "
        "and commit it"
    )


def test_a_confirmed_defect_and_a_docs_disagree_row_are_reported_each_in_its_section(
    tmp_path: Path,
) -> None:
    text = markdown(quarantines(_cases(tmp_path)))
    assert "**1 confirmed defects, 1 docs-disagree findings.**" in text
    defects, disagree = text.split("## Docs disagree")
    assert "### 1. chat ignores --flag" in defects
    assert "`cases/test_area.py::test_the_flag_is_honoured`" in defects
    assert '  - reference/contenox-cli.md:10 "--flag | does the thing"' in defects
    assert '  - guide/flags.md:4 "the flag does the thing"' in defects
    assert "contenox chat --flag hi\n# prints: reply without the flag\n```" in defects
    assert "- **Second reading**: not yet" in defects
    assert "### 1. two pages disagree on the default" in disagree
    assert "`cases/test_area.py::test_x_defaults_to_one`" in disagree
    assert "h9, 2026-12-01" in disagree


def test_the_json_rows_hold_every_field(tmp_path: Path) -> None:
    out = tmp_path / "defects.json"
    assert main(["--cases", str(_cases(tmp_path)), "--json", "-o", str(out)]) == 0
    rows = json.loads(out.read_text())
    assert [(r["kind"], r["case"]) for r in rows] == [
        ("confirmed defect", "cases/test_area.py::test_the_flag_is_honoured"),
        ("docs disagree", "cases/test_area.py::test_x_defaults_to_one"),
    ]
    assert rows[0]["promised"] == ['reference/contenox-cli.md:10 "--flag | does the thing"']
    assert rows[0]["reproduce"].startswith("export HOME=$(mktemp -d)")
    assert rows[1]["bears_on"] == ['guide/x.md:7 "x defaults to 2"']


def test_a_docs_disagree_finding_runs_and_a_confirmed_defect_is_a_strict_xfail(
    tmp_path: Path,
) -> None:
    from harness.case.model import quarantine_mark
    from harness.catalog import docs_disagree_case_names, e2e_tests, quarantined_case_names

    found = quarantines(_cases(tmp_path))
    confirmed, disagree = (q.defect for q in found)
    assert not isinstance(confirmed, str) and not isinstance(disagree, str)
    xfail = quarantine_mark(confirmed).mark
    assert (xfail.name, xfail.kwargs["strict"], xfail.kwargs["defect"]) == (
        "xfail",
        True,
        confirmed,
    )
    assert quarantine_mark(disagree).mark.name == "docs_disagree"
    cases = tmp_path / "cases"
    assert ("", "test_the_flag_is_honoured") in quarantined_case_names(cases)
    assert ("", "test_x_defaults_to_one") not in quarantined_case_names(cases)
    assert ("", "test_x_defaults_to_one") in docs_disagree_case_names(cases)
    assert e2e_tests(cases)["test_area/test_the_flag_is_honoured"] == "quarantined defect"
