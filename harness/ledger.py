"""The promise ledgers: one per documentation page, each row a promise and its case.

A ledger lives under ``cases/promises/``, mirroring the page's path under
``contenox-docs/``: ``guide/hitl.md`` → ``cases/promises/guide/hitl.md``. The
CLI reference is too big for one ledger; it is a folder,
``cases/promises/reference/contenox-cli/``, one file per ``##``/``###``
section named by the heading's slug (``## contenox init [provider]`` →
``contenox-init-provider.md``), printed as
``reference/contenox-cli.md#contenox-init-provider``.

A ledger file starts with ``# <page>`` (the path above, with ``#slug`` for a
CLI section), one line saying what it covers, then one markdown table::

    | promise | doc line | case(s) | status |
    |---|---|---|---|
    | init writes .contenox/ | "quoted sentence" | `cases/test_init.py::test_x` | green |

The status is ``green``, ``confirmed defect``, ``unreachable`` (the case cell
then reads ``unreachable: <why>``) or ``uncovered`` (case cell ``—``); text
after the status word is a remark. ``python -m harness.ledger`` prints one line
of figures per ledger; ``check()`` lists every row that names a case that does
not exist and every e2e test no row names.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLI_PAGE",
    "COLUMNS",
    "STATUSES",
    "Ledger",
    "LedgerError",
    "Row",
    "check",
    "cli_sections",
    "load_all",
    "page_of",
    "parse",
    "slug",
    "summary_line",
]

COLUMNS = ("promise", "doc line", "case(s)", "status")
STATUSES = ("green", "confirmed defect", "unreachable", "uncovered")
CLI_PAGE = "reference/contenox-cli.md"
# The folder holding the CLI reference's per-section ledgers.
_CLI_DIR = CLI_PAGE.removesuffix(".md")
_CASE_REF = re.compile(r"`(?P<file>cases/[\w/]+\.py)::(?P<name>test_\w+)`")
# A backticked `test_…` that is not in the file::name form: a likely typo.
_BARE_REF = re.compile(r"`(?P<ref>[^`]*\btest_\w+)`")
_EMPTY_CELLS = {"—", "-", "–", ""}
# A table cell boundary: a pipe not escaped as \|.
_CELL_SPLIT = re.compile(r"(?<!\\)\|")


class LedgerError(ValueError):
    """A ledger that cannot be read; the message names the file, the line and the fix."""


@dataclass(frozen=True)
class Row:
    """One promise: what it is, the page's sentence, the case(s) and the status."""

    file: Path
    line: int
    promise: str
    doc_line: str
    cases: tuple[tuple[str, str], ...]
    status: str
    remark: str
    why: str

    @property
    def where(self) -> str:
        """``file:line``, for messages."""
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Ledger:
    """The rows of one page (or one CLI section)."""

    file: Path
    page: str
    rows: tuple[Row, ...]

    def count(self, status: str) -> int:
        """How many rows have ``status``."""
        return sum(1 for r in self.rows if r.status == status)


def slug(heading: str) -> str:
    """A heading's slug: lowercased, every run of other than ``[a-z0-9]`` a ``-``, trimmed."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def cli_sections(page_text: str) -> list[str]:
    """The slugs of the CLI reference's sections, in page order.

    Every ``##`` and ``###`` heading outside a code fence is a section;
    a ``####`` heading folds into the ``###`` above it, and ``## Subcommands``
    only introduces the ``###`` sections, so it is none. An HTML ``<h3>``
    heading (the page writes ``<h3 id="sessions"><code>contenox session</code></h3>``
    to give it an anchor) is a ``###`` section like the others.
    """
    out: list[str] = []
    fenced = False
    for line in page_text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = re.match(r"^(#{2,3}) (.+?)\s*$", line)
        h3 = re.match(r"^<h3\b[^>]*>(.*)</h3>\s*$", line)
        if fenced or (m is None and h3 is None):
            continue
        text = m[2] if m is not None else re.sub(r"<[^>]+>", "", h3[1] if h3 else "")
        s = slug(text)
        if s != "subcommands":
            out.append(s)
    return out


def page_of(file: Path, promises_dir: Path) -> str:
    """The page a ledger file must be about, from where it sits under ``promises_dir``."""
    rel = file.relative_to(promises_dir).as_posix()
    head, sep, section = rel.rpartition("/")
    if sep and head == _CLI_DIR:
        return f"{CLI_PAGE}#{section.removesuffix('.md')}"
    return rel


def _cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if not (stripped.startswith("|") and stripped.endswith("|")):
        return None
    return [c.strip() for c in _CELL_SPLIT.split(stripped[1:-1])]


def _status(cell: str, where: str) -> tuple[str, str]:
    for status in STATUSES:
        if cell == status or cell.startswith((status + " ", status + "(")):
            return status, cell[len(status) :].strip()
    raise LedgerError(
        f"{where}: the status {cell!r} is not one of {', '.join(STATUSES)} "
        f"(a remark may follow the word, e.g. 'green (see …)')"
    )


def _row(file: Path, lineno: int, cells: list[str]) -> Row:
    where = f"{file}:{lineno}"
    if len(cells) != len(COLUMNS):
        raise LedgerError(
            f"{where}: a row has {len(cells)} cells, not {len(COLUMNS)} "
            f"({' | '.join(COLUMNS)}); escape a pipe inside a cell as \\|"
        )
    promise, doc_line, case_cell, status_cell = cells
    if not promise or not doc_line:
        raise LedgerError(f"{where}: a row needs its promise and the page's sentence (doc line)")
    status, remark = _status(status_cell, where)
    refs = tuple((m["file"], m["name"]) for m in _CASE_REF.finditer(case_cell))
    for m in _BARE_REF.finditer(case_cell):
        if not _CASE_REF.fullmatch(f"`{m['ref']}`"):
            raise LedgerError(
                f"{where}: the case {m['ref']!r} must be written "
                "`cases/test_<area>.py::test_<name>`"
            )
    why = ""
    if status == "unreachable":
        wm = re.search(r"unreachable:\s*(.*)", case_cell)
        why = wm[1].strip(" )") if wm else ""
        if not why:
            raise LedgerError(
                f"{where}: an unreachable row must say why in its case cell: "
                f"'unreachable: <why no v1.0.0 surface reaches it>'"
            )
    elif status == "uncovered":
        if case_cell not in _EMPTY_CELLS:
            raise LedgerError(
                f"{where}: an uncovered row's case cell is '—'; "
                f"name a case and mark it green or confirmed defect instead"
            )
    elif not refs:
        raise LedgerError(
            f"{where}: a {status} row must name its case(s) as `cases/test_<area>.py::test_<name>`"
        )
    return Row(file, lineno, promise, doc_line, refs, status, remark, why)


def parse(file: Path, promises_dir: Path) -> Ledger:
    """Read one ledger file; a ``LedgerError`` names the file, the line and the fix."""
    lines = file.read_text(encoding="utf-8").splitlines()
    expected = page_of(file, promises_dir)
    if not lines or not lines[0].startswith("# "):
        raise LedgerError(f"{file}:1: a ledger starts with '# {expected}'")
    page = lines[0][2:].strip()
    if page != expected:
        raise LedgerError(
            f"{file}:1: the heading names {page!r} but the file's place says {expected!r}; "
            f"move the file or fix the heading"
        )
    rows: list[Row] = []
    tables = 0
    in_table = False
    for lineno, line in enumerate(lines[1:], start=2):
        cells = _cells(line)
        if cells is None:
            in_table = False
            continue
        if not in_table:
            tables += 1
            if tables > 1:
                raise LedgerError(f"{file}:{lineno}: a ledger holds one table; this is a second")
            if tuple(c.lower() for c in cells) != COLUMNS:
                raise LedgerError(
                    f"{file}:{lineno}: the table's header must be | {' | '.join(COLUMNS)} |, "
                    f"not | {' | '.join(cells)} |"
                )
            in_table = True
            continue
        if all(set(c) <= set("-: ") and c for c in cells):
            continue  # the |---| separator
        rows.append(_row(file, lineno, cells))
    if tables == 0:
        raise LedgerError(f"{file}: no table; a ledger holds | {' | '.join(COLUMNS)} |")
    return Ledger(file, page, tuple(rows))


def load_all(promises_dir: Path) -> list[Ledger]:
    """Every ledger under ``promises_dir``, sorted by page."""
    ledgers = [parse(f, promises_dir) for f in sorted(promises_dir.rglob("*.md"))]
    return sorted(ledgers, key=lambda led: led.page)


def check(
    ledgers: Iterable[Ledger],
    cases: set[tuple[str, str]],
    quarantined: set[tuple[str, str]] | None = None,
) -> list[str]:
    """Sentences naming every broken link between the ledgers and the cases.

    ``cases`` is every e2e test as ``(cases/test_x.py, test_name)`` (see
    ``harness.catalog.all_case_names``; entries with an empty file are
    ignored). A row naming a case not in it is a problem, and so is a case no
    row names. With ``quarantined``, a ``confirmed defect`` row must name a
    quarantined case and a ``green`` row must name none.
    """
    problems: list[str] = []
    named: set[tuple[str, str]] = set()
    for ledger in ledgers:
        for row in ledger.rows:
            for ref in row.cases:
                named.add(ref)
                if ref not in cases:
                    problems.append(
                        f"{row.where}: names {ref[0]}::{ref[1]}, which does not exist "
                        f"(renamed or removed?)"
                    )
            if quarantined is None:
                continue
            held = [r for r in row.cases if r in quarantined]
            if row.status == "confirmed defect" and row.cases and not held:
                problems.append(
                    f"{row.where}: a confirmed defect row, but none of its cases is quarantined "
                    f"(fixed? mark the row green)"
                )
            if row.status == "green" and held:
                problems.append(
                    f"{row.where}: a green row naming a quarantined case "
                    f"{held[0][0]}::{held[0][1]}; its status is 'confirmed defect'"
                )
    for file, name in sorted(c for c in cases if c[0]):
        if (file, name) not in named:
            problems.append(f"{file}::{name} is named by no ledger row under cases/promises/")
    return problems


def summary_line(ledger: Ledger) -> str:
    """``<page> rows=N green=N quarantined=N unreachable=N uncovered=N``."""
    return (
        f"{ledger.page} rows={len(ledger.rows)} green={ledger.count('green')} "
        f"quarantined={ledger.count('confirmed defect')} "
        f"unreachable={ledger.count('unreachable')} uncovered={ledger.count('uncovered')}"
    )


def main(argv: list[str] | None = None) -> int:
    """Print one line of figures per ledger; with ``--check``, also the broken links."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.ledger",
        description="One line of figures per documented page (CLI reference: per section).",
    )
    parser.add_argument("--promises", type=Path, default=Path("cases/promises"))
    parser.add_argument("--cases", type=Path, default=Path("cases"))
    parser.add_argument(
        "--check",
        action="store_true",
        help="also list rows naming missing cases and cases no row names; exit 1 if any",
    )
    args = parser.parse_args(argv)
    try:
        ledgers = load_all(args.promises)
    except LedgerError as exc:
        print(exc, file=sys.stderr)
        return 1
    for ledger in ledgers:
        print(summary_line(ledger))
    if not args.check:
        return 0
    from .catalog import all_case_names, quarantined_case_names

    problems = check(ledgers, all_case_names(args.cases), quarantined_case_names(args.cases))
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
