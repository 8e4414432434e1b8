"""Every quarantine in cases/ carries its reproduction and the doc line it breaks.

A quarantine is a ``Defect`` (harness.case.model): the commands that show it
by hand, the promised doc line(s) as ``path:line "quote"``, what contenox did.
A plain-string ``defect=`` or a bare ``xfail`` is refused here, named by its
node id; so is a cited line whose page does not say what it quotes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.catalog import Quarantine, quarantines
from harness.tools.defects import check_doc_line, docs_dir, problems

REPO = Path(__file__).resolve().parents[1]
CASES = REPO / "cases"
DOCS = docs_dir(REPO)


@pytest.fixture(scope="module")
def found() -> list[Quarantine]:
    return quarantines(CASES)


def test_the_suite_has_quarantines_to_check(found: list[Quarantine]) -> None:
    # The walk reaches Cases and functions alike; an empty list would pass the rest.
    assert any("::test_" in q.nodeid for q in found)
    assert len(found) > 50, [q.nodeid for q in found]


def test_every_quarantine_is_a_defect_with_its_reproduction(found: list[Quarantine]) -> None:
    bad = problems(found, None)
    assert not bad, f"{len(bad)} quarantines without a reproduction:\n" + "\n".join(bad)


def test_every_cited_doc_line_says_what_it_quotes(found: list[Quarantine]) -> None:
    if DOCS is None:
        pytest.skip("contenox's docs are not checked out (shared/contenox-docs or $CONTENOX_DOCS)")
    bad = [p for p in problems(found, DOCS) if "plain-text quarantine" not in p]
    assert not bad, f"{len(bad)} cited doc lines do not hold:\n" + "\n".join(bad)


CASES_MODULE = """
import pytest
from harness import Case, Defect, Script, defect, step

D = Defect(
    title="it breaks",
    reproduce="HOME=$(mktemp -d) contenox init && contenox x  # prints: boom",
    promised='page.md:2 "it works"',
    observed="boom",
)
GOOD = Case(name="a good quarantine", script=Script(turns=["hi"]), steps=[step("x")], defect=D)
PLAIN = Case(name="a plain one", script=Script(turns=["hi"]), steps=[step("x")], defect="it broke")


@pytest.mark.xfail(strict=True, reason="confirmed defect: bare")
def test_a_bare_xfail():
    assert False


@pytest.mark.parametrize("where", ["home", pytest.param("work", marks=defect("in text only"))])
def test_a_variant(where):
    assert where


@defect(D)
def test_a_function():
    assert False
"""


def _fixture(tmp_path: Path) -> tuple[Path, Path]:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_area.py").write_text(CASES_MODULE)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "page.md").write_text("# Page\n\nIt **works**, `always`.\n")
    return cases, docs


def test_plain_text_quarantines_are_named_each_by_node_id(tmp_path: Path) -> None:
    cases, _ = _fixture(tmp_path)
    bad = problems(quarantines(cases), None)
    named = sorted(line.split(": ", 1)[0] for line in bad)
    assert named == [
        "cases/test_area.py::test_a_bare_xfail",
        "cases/test_area.py::test_a_plain_one",
        "cases/test_area.py::test_a_variant[work]",
    ], bad
    assert all("without a reproduction or a promised doc line" in line for line in bad)


def test_a_cited_line_that_does_not_say_its_quote_is_named(tmp_path: Path) -> None:
    cases, docs = _fixture(tmp_path)
    # page.md:2 is blank; the quote is at line 3.
    bad = [p for p in problems(quarantines(cases), docs) if "plain-text" not in p]
    assert len(bad) == 2, bad
    assert "page.md:2 does not say 'it works' (it is at line 3)" in bad[0]
    assert check_doc_line('page.md:3 "It works, always"', docs) is None
    assert check_doc_line('page.md:2-3 "It works … always"', docs) is None
    assert "is no page" in (check_doc_line('gone.md:1 "x"', docs) or "")
    assert "outside it" in (check_doc_line('page.md:9 "x"', docs) or "")
