"""The column-offset table reader and the labelled-field reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.table import TableError, read_fields, read_table

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


APPROVALS = ["ID", "KIND", "TOOL", "SUMMARY", "MISSION", "AGE", "EXPIRES-IN"]


def test_a_cell_with_spaces_survives_intact() -> None:
    rows = read_table(fixture("approvals_list.txt"), APPROVALS, empty=["No pending asks."])
    assert rows[0]["SUMMARY"] == "which database should I use"
    assert rows[0]["MISSION"].count("-") == 4


def test_an_empty_cell_reads_as_an_empty_string_and_does_not_shift_the_next_one() -> None:
    rows = read_table(fixture("approvals_list.txt"), APPROVALS, empty=["No pending asks."])
    permission = rows[1]
    assert permission["KIND"] == "permission"
    assert permission["SUMMARY"] == ""
    assert permission["EXPIRES-IN"] == "6d"


def test_the_table_ends_at_the_first_blank_line_before_the_footer() -> None:
    rows = read_table(fixture("approvals_list.txt"), APPROVALS, empty=["No pending asks."])
    assert len(rows) == 2
    assert all(not r["ID"].startswith("Answer") for r in rows)


def test_multibyte_marks_are_one_column_wide_like_in_go_tabwriter() -> None:
    rows = read_table(
        fixture("model_list.txt"),
        ["BACKEND", "MODEL", "CHAT", "EMBED", "PROMPT", "THINK", "VISION", "CTX"],
        empty=["No backends registered."],
    )
    assert [r["MODEL"] for r in rows] == ["tiny-embedder", "scripted-test *"]
    assert [r["CTX"] for r in rows] == ["4096", "32768"]
    assert rows[1]["VISION"] == "✓"


def test_an_empty_state_sentence_reads_as_no_rows() -> None:
    assert read_table(fixture("mission_list.empty.txt"), ["ID"], empty=["No missions"]) == []


def test_the_header_is_found_below_a_preamble_and_extra_columns_are_kept() -> None:
    text = "Showing 1 mission.\n\nID   EXTRA  STATUS\nm-1  x y    landed\n"
    assert read_table(text, ["ID", "STATUS"]) == [{"ID": "m-1", "EXTRA": "x y", "STATUS": "landed"}]


def test_a_missing_header_names_the_command_the_columns_and_the_whole_output() -> None:
    with pytest.raises(TableError) as err:
        read_table("something else entirely\n", ["ID", "STATUS"], source="contenox mission list")
    message = str(err.value)
    assert "contenox mission list" in message
    assert "ID  STATUS" in message
    assert "something else entirely" in message


def test_a_row_that_spills_across_a_column_boundary_is_refused() -> None:
    text = "ID   STATUS\nm-1  landed\na sentence that is no row\n"
    with pytest.raises(TableError, match="line 3 does not fit"):
        read_table(text, ["ID", "STATUS"], source="contenox mission list")


def test_a_sentence_that_is_not_the_declared_empty_state_is_an_error() -> None:
    with pytest.raises(TableError, match="No missions recorded"):
        read_table(fixture("mission_list.empty.txt"), ["ID", "STATUS"], empty=[])


def test_labelled_fields_read_values_with_spaces_and_skip_other_lines() -> None:
    values = read_fields(fixture("mission_show.txt"), ["Intent", "Status", "Created"])
    assert values["Intent"] == "report what you know"
    assert values["Status"] == "landed"
    assert values["Created"].endswith("ago)")


def test_an_empty_labelled_value_is_an_empty_string() -> None:
    values = read_fields(fixture("doctor.empty.txt"), ["Default model", "Default provider"])
    assert values == {"Default model": "", "Default provider": ""}


def test_a_missing_label_is_named_with_the_whole_output() -> None:
    with pytest.raises(TableError) as err:
        read_fields("Mission: m-1\n", ["Mission", "Status"], source="contenox mission show m-1")
    assert "Status" in str(err.value)
    assert "contenox mission show m-1" in str(err.value)
    assert "Mission: m-1" in str(err.value)
