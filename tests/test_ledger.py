"""The scripted-backend promise ledger names only cases that exist."""

from __future__ import annotations

import re
from pathlib import Path

from harness.catalog import all_case_names

REPO = Path(__file__).resolve().parents[1]
LEDGER = REPO / "cases" / "SCRIPTED_BACKEND_PROMISES.md"
_ROW = re.compile(r"^\|(?P<cells>.*)\|\s*$")
_CASE = re.compile(r"`(?:(?P<file>cases/[\w/]+\.py)::)?(?P<name>test_\w+)`")


def _rows() -> list[list[str]]:
    rows = []
    for line in LEDGER.read_text(encoding="utf-8").splitlines():
        m = _ROW.match(line)
        if m and not set(line) <= set("|-: "):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", m["cells"])])
    return rows[1:]  # the header


def test_every_ledger_row_names_a_case_and_a_status() -> None:
    rows = _rows()
    assert len(rows) >= 20, f"the ledger at {LEDGER} has only {len(rows)} rows"
    for row in rows:
        promise, source, cases, status = row[:4]
        assert promise and source, f"a ledger row lacks its promise or doc line: {row}"
        assert status.startswith(("green", "confirmed defect", "unreachable")), (
            f"bad status in {row}"
        )
        if status.startswith("unreachable"):
            # No case can reach it; the row must say why instead.
            assert "unreachable:" in cases, f"an unreachable promise must say why: {row}"
        else:
            assert _CASE.search(cases), f"the promise {promise!r} names no case: {row}"


def test_every_case_named_in_the_ledger_exists() -> None:
    known = all_case_names(REPO / "cases")
    missing = []
    for row in _rows():
        for m in _CASE.finditer(row[2]):
            file = m["file"] or ""
            if (file, m["name"]) not in known and ("", m["name"]) not in known:
                missing.append(f"{file + '::' if file else ''}{m['name']}")
    assert not missing, (
        f"{LEDGER.name} names cases that do not exist (renamed or removed?): {missing}"
    )
