"""The promise ledgers under cases/promises/: their format, and their links to the cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.catalog import all_case_names, quarantined_case_names
from harness.ledger import (
    LedgerError,
    check,
    cli_sections,
    load_all,
    main,
    page_of,
    parse,
    slug,
    summary_line,
)

REPO = Path(__file__).resolve().parents[1]
PROMISES = REPO / "cases" / "promises"
DOCS = REPO.parent / "shared" / "contenox-docs"

HEAD = "| promise | doc line | case(s) | status |\n|---|---|---|---|\n"
CASES = '''
from harness import Case, Script, defect, step

ONE = Case(name="one thing happens", script=Script(turns=["hi"]), steps=[step("run", "x")])
BROKEN = Case(
    name="a broken thing",
    script=Script(turns=["hi"]),
    steps=[step("run", "x")],
    defect="observed: it broke",
)


def test_a_function_case(instance):
    """A plain function case."""


@defect("observed: it broke too")
def test_a_quarantined_function(instance):
    """A quarantined function case."""
'''


def _ledger(tmp_path: Path, rel: str, body: str, heading: str | None = None) -> Path:
    promises = tmp_path / "promises"
    file = promises / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    page = heading if heading is not None else page_of(file, promises)
    file.write_text(f"# {page}\n\nWhat it covers.\n\n{HEAD}{body}", encoding="utf-8")
    return file


def _cases(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_area.py").write_text(CASES, encoding="utf-8")
    return cases


# --- the committed ledgers -------------------------------------------------------------


def test_every_committed_ledger_parses() -> None:
    ledgers = load_all(PROMISES)
    assert ledgers, f"no ledger under {PROMISES}"
    assert all(led.rows for led in ledgers), "a ledger with no rows"


def test_every_row_names_a_case_that_exists_and_every_case_is_named_by_a_row() -> None:
    cases = REPO / "cases"
    problems = check(load_all(PROMISES), all_case_names(cases), quarantined_case_names(cases))
    assert not problems, "\n".join(problems)


def test_every_cli_ledger_is_a_section_of_the_page() -> None:
    page = DOCS / "reference" / "contenox-cli.md"
    if not page.exists():
        pytest.skip(f"the contenox docs are not checked out at {DOCS}")
    sections = set(cli_sections(page.read_text(encoding="utf-8")))
    for file in sorted((PROMISES / "reference" / "contenox-cli").glob("*.md")):
        assert file.stem in sections, f"{file}: no ## or ### section of {page} has the slug"


# --- format ------------------------------------------------------------------------------


def test_a_heading_slug_lowercases_and_turns_other_runs_into_one_dash() -> None:
    assert slug("`contenox init [provider]`") == "contenox-init-provider"
    assert slug("`contenox acp` / `contenox acpx`") == "contenox-acp-contenox-acpx"
    assert slug("Global Flags") == "global-flags"


def test_cli_sections_fold_level_four_headings_skip_subcommands_and_code() -> None:
    page = (
        "# Title\n## Global Flags\n## Subcommands\n### `contenox backend`\n"
        "#### `scripted-test` — the backend\n```bash\n## not a heading\n```\n"
        '<h3 id="sessions"><code>contenox session</code></h3>\n'
        "### `contenox version`\n## Environment variables\n"
    )
    assert cli_sections(page) == [
        "global-flags",
        "contenox-backend",
        "contenox-session",
        "contenox-version",
        "environment-variables",
    ]


def test_a_cli_section_ledger_is_printed_as_page_hash_slug(tmp_path: Path) -> None:
    file = _ledger(
        tmp_path,
        "reference/contenox-cli/contenox-init-provider.md",
        '| a | "b" | `cases/test_area.py::test_one_thing_happens` | green |\n',
    )
    ledger = parse(file, tmp_path / "promises")
    assert ledger.page == "reference/contenox-cli.md#contenox-init-provider"
    assert summary_line(ledger) == (
        "reference/contenox-cli.md#contenox-init-provider "
        "rows=1 green=1 quarantined=0 unreachable=0 uncovered=0"
    )


def test_statuses_are_counted_and_a_remark_may_follow_the_word(tmp_path: Path) -> None:
    body = (
        '| a | "b" | `cases/test_area.py::test_one_thing_happens` | green (see x) |\n'
        '| c | "d" | `cases/test_area.py::test_a_broken_thing` | confirmed defect |\n'
        '| e | "f" | unreachable: needs a network provider | unreachable |\n'
        '| g | "h" | — | uncovered |\n'
        '| i | "a \\| pipe" | `cases/test_area.py::test_a_function_case` | green |\n'
    )
    ledger = parse(_ledger(tmp_path, "guide/hitl.md", body), tmp_path / "promises")
    assert summary_line(ledger) == (
        "guide/hitl.md rows=5 green=2 quarantined=1 unreachable=1 uncovered=1"
    )
    assert ledger.rows[0].remark == "(see x)"
    assert ledger.rows[2].why == "needs a network provider"


@pytest.mark.parametrize(
    ("row", "says"),
    [
        ('| a | "b" | `cases/test_area.py::test_x` | passing |', "is not one of green"),
        ('| a | "b" | — | unreachable |', "must say why"),
        ('| a | "b" | unreachable: | unreachable |', "must say why"),
        ('| a | "b" | `cases/test_area.py::test_x` | green | extra |', "5 cells, not 4"),
        ('| a | "b" | — | green |', "must name its case(s)"),
        ('| a | "b" | `test_x` | green |', "must be written `cases/test_<area>.py::test_<name>`"),
        ('| a | "b" | `cases/test_area.py::test_x` | uncovered |', "case cell is '—'"),
        ('|  | "b" | `cases/test_area.py::test_x` | green |', "needs its promise"),
    ],
)
def test_a_bad_row_is_an_error_naming_the_file_and_line(
    tmp_path: Path, row: str, says: str
) -> None:
    file = _ledger(tmp_path, "guide/hitl.md", f'| ok | "ok" | — | uncovered |\n{row}\n')
    with pytest.raises(LedgerError) as err:
        parse(file, tmp_path / "promises")
    assert f"{file}:8:" in str(err.value)
    assert says in str(err.value)


def test_a_heading_naming_another_page_is_an_error(tmp_path: Path) -> None:
    file = _ledger(tmp_path, "guide/hitl.md", '| a | "b" | — | uncovered |\n', "guide/other.md")
    with pytest.raises(LedgerError, match=r"hitl\.md:1: the heading names 'guide/other\.md'"):
        parse(file, tmp_path / "promises")


def test_a_wrong_header_or_a_second_table_is_an_error(tmp_path: Path) -> None:
    promises = tmp_path / "promises"
    file = promises / "guide" / "hitl.md"
    file.parent.mkdir(parents=True)
    file.write_text("# guide/hitl.md\n\n| promise | case | status |\n|---|---|---|\n")
    with pytest.raises(LedgerError, match=r"hitl\.md:3: the table's header must be"):
        parse(file, promises)
    file.write_text(f"# guide/hitl.md\n\n{HEAD}| a | b | — | uncovered |\n\n{HEAD}")
    with pytest.raises(LedgerError, match=r"hitl\.md:7: a ledger holds one table"):
        parse(file, promises)


# --- links to the cases ------------------------------------------------------------------


def test_all_case_names_lists_dataclass_and_function_cases(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    named = {n for f, n in all_case_names(cases) if f == "cases/test_area.py"}
    assert named == {
        "test_one_thing_happens",
        "test_a_broken_thing",
        "test_a_function_case",
        "test_a_quarantined_function",
    }
    quarantined = {n for f, n in quarantined_case_names(cases) if f}
    assert quarantined == {"test_a_broken_thing", "test_a_quarantined_function"}


def test_check_names_a_missing_case_and_a_case_no_row_names(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    file = _ledger(
        tmp_path,
        "guide/hitl.md",
        '| a | "b" | `cases/test_area.py::test_one_thing_happens` | green |\n'
        '| c | "d" | `cases/test_area.py::test_gone` | green |\n'
        '| e | "f" | `cases/test_area.py::test_a_broken_thing` | confirmed defect |\n'
        '| g | "h" | `cases/test_area.py::test_a_quarantined_function` | confirmed defect |\n',
    )
    problems = check(load_all(tmp_path / "promises"), all_case_names(cases))
    assert problems == [
        f"{file}:8: names cases/test_area.py::test_gone, which does not exist "
        "(renamed or removed?)",
        "cases/test_area.py::test_a_function_case is named by no ledger row under cases/promises/",
    ]


def test_a_status_that_disagrees_with_the_quarantine_is_a_problem(tmp_path: Path) -> None:
    cases = _cases(tmp_path)
    file = _ledger(
        tmp_path,
        "guide/hitl.md",
        '| a | "b" | `cases/test_area.py::test_one_thing_happens` | confirmed defect |\n'
        '| c | "d" | `cases/test_area.py::test_a_broken_thing` | green |\n'
        '| e | "f" | `cases/test_area.py::test_a_function_case` | green |\n'
        '| g | "h" | `cases/test_area.py::test_a_quarantined_function` | confirmed defect |\n',
    )
    problems = check(
        load_all(tmp_path / "promises"), all_case_names(cases), quarantined_case_names(cases)
    )
    assert problems == [
        f"{file}:7: a confirmed defect row, but none of its cases is quarantined "
        "(fixed? mark the row green)",
        f"{file}:8: a green row naming a quarantined case "
        "cases/test_area.py::test_a_broken_thing; its status is 'confirmed defect'",
    ]


def test_main_prints_one_line_per_ledger_sorted_by_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ledger(tmp_path, "guide/quickstart.md", '| a | "b" | — | uncovered |\n')
    _ledger(tmp_path, "reference/contenox-cli/contenox-version.md", '| a | "b" | — | uncovered |\n')
    _ledger(tmp_path, "guide/hitl.md", '| a | "b" | — | uncovered |\n')
    assert main(["--promises", str(tmp_path / "promises")]) == 0
    pages = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert pages == [
        "guide/hitl.md",
        "guide/quickstart.md",
        "reference/contenox-cli.md#contenox-version",
    ]


def test_main_reports_a_bad_ledger_on_stderr_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _ledger(tmp_path, "guide/hitl.md", '| a | "b" | — | maybe |\n')
    assert main(["--promises", str(tmp_path / "promises")]) == 1
    assert f"{file}:7: the status 'maybe'" in capsys.readouterr().err
