"""The promise ledgers: one per documentation page, each row a promise and its case.

A ledger lives under ``cases/promises/``, mirroring the page's path under
``contenox-docs/``: ``guide/hitl.md`` → ``cases/promises/guide/hitl.md``. The
CLI reference is too big for one ledger; it is a folder,
``cases/promises/reference/contenox-cli/``, one file per ``##``/``###``
section named by the heading's slug (``## contenox init [provider]`` →
``contenox-init-provider.md``), printed as
``reference/contenox-cli.md#contenox-init-provider``; the page's own units
outside every section (its opening, ``## Subcommands``) are
``cases/promises/reference/contenox-cli.md``.

A ledger file starts with ``# <page>`` (the path above, with ``#slug`` for a
CLI section), one line saying what it covers, then the promises::

    | promise | doc line | case(s) | status |
    |---|---|---|---|
    | init writes .contenox/ | "quoted sentence" | `cases/test_init.py::test_x` | green |

and, optionally, a second table of what on the page promises nothing::

    | not a promise | kind | why |
    |---|---|---|
    | "quoted sentence" | explanation | says why, not what |

The status is ``green``, ``confirmed defect``, ``unreachable`` (the case cell
then reads ``unreachable: <why>``), ``docs disagree`` (the row names both
lines; cases optional) or ``uncovered`` (case cell ``—``); text after the
status word is a remark. A kind is one of :data:`KINDS`; a ``duplicate`` names
the line it repeats (``line 42``, or ``guide/x.md:42`` on another page), an
``example`` the promise row that covers it (its promise cell, quoted).

The page, not the rows, is the unit: :mod:`harness.units` cuts each page into
sentences, list items, table rows and code blocks, and every unit must be
quoted by a doc-line cell or a not-a-promise row. ``python -m harness.tools.ledger``
prints one line of figures per page; ``--check`` also lists every row naming a
case that does not exist, every e2e test no row names, and, on every page that
is read (not in ``cases/promises/UNREAD.txt``, not excepted), every unit
nothing accounts for and every quote that matches no unit.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..units import CLI_PAGE, Page, find_docs, first_words, load_pages, normalize, quotes_in, slug

__all__ = [
    "CLI_PAGE",
    "COLUMNS",
    "EXCEPTED",
    "KINDS",
    "NOT_COLUMNS",
    "STATUSES",
    "Accounting",
    "Ledger",
    "LedgerError",
    "NotPromise",
    "Row",
    "account",
    "account_all",
    "check",
    "check_units",
    "cli_sections",
    "load_all",
    "page_of",
    "parse",
    "read_unread",
    "slug",
    "summary_line",
]

COLUMNS = ("promise", "doc line", "case(s)", "status")
NOT_COLUMNS = ("not a promise", "kind", "why")
STATUSES = ("green", "confirmed defect", "unreachable", "docs disagree", "uncovered")
KINDS = ("explanation", "opinion", "history", "cross-reference", "duplicate", "example")
# Pages no ledger accounts for: the licence, the docs' own README, and the
# provider pages until the loopback issue ledgers them (a prefix ends in /).
EXCEPTED = ("LICENSE", "README.md")
UNREAD_FILE = "UNREAD.txt"
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
class NotPromise:
    """A row of the second table: units of the page that promise nothing, and why."""

    file: Path
    line: int
    quote: str
    kind: str
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
    not_promises: tuple[NotPromise, ...] = ()

    def count(self, status: str) -> int:
        """How many rows have ``status``."""
        return sum(1 for r in self.rows if r.status == status)


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
        if cell == status or cell.startswith((status + " ", status + "(", status + ":")):
            return status, cell[len(status) :].lstrip(":").strip()
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
    elif status != "docs disagree" and not refs:
        raise LedgerError(
            f"{where}: a {status} row must name its case(s) as `cases/test_<area>.py::test_<name>`"
        )
    return Row(file, lineno, promise, doc_line, refs, status, remark, why)


_LINE_REF = re.compile(r"\blines? (\d+)|\b[\w./-]+\.md:(\d+)")


def _not_promise(file: Path, lineno: int, cells: list[str], rows: list[Row]) -> NotPromise:
    where = f"{file}:{lineno}"
    if len(cells) != len(NOT_COLUMNS):
        raise LedgerError(
            f"{where}: a not-a-promise row has {len(cells)} cells, not {len(NOT_COLUMNS)} "
            f"({' | '.join(NOT_COLUMNS)}); escape a pipe inside a cell as \\|"
        )
    quote, kind, why = cells
    if not quote:
        raise LedgerError(f"{where}: a not-a-promise row quotes the page's sentence first")
    if kind not in KINDS:
        raise LedgerError(
            f"{where}: the kind {kind!r} is not one of {', '.join(KINDS)}; "
            "a sentence that states what the product does is a promise, however explanatory"
        )
    if not why:
        raise LedgerError(f"{where}: a not-a-promise row says why in its last cell")
    if kind == "duplicate" and not _LINE_REF.search(why):
        raise LedgerError(
            f"{where}: a duplicate names the line it repeats: 'repeats line 42' "
            "(or 'guide/x.md:42' on another page)"
        )
    if kind == "example":
        named = [normalize(q) for q in quotes_in(why) if q != why]
        promises = [normalize(r.promise) for r in rows]
        if not named or not any(q and q in p for q in named for p in promises):
            raise LedgerError(
                f"{where}: an example names the promise row that covers it, quoting its "
                f'promise cell (e.g. example of "{rows[0].promise if rows else "…"}"); '
                f"{why!r} quotes no promise of this ledger"
            )
    return NotPromise(file, lineno, quote, kind, why)


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
    table_rows: list[tuple[int, list[str]]] = []
    tables = 0
    in_table = False
    for lineno, line in enumerate(lines[1:], start=2):
        cells = _cells(line)
        if cells is None:
            in_table = False
            continue
        if not in_table:
            tables += 1
            header = tuple(c.lower() for c in cells)
            if tables == 1 and header != COLUMNS:
                raise LedgerError(
                    f"{file}:{lineno}: the table's header must be | {' | '.join(COLUMNS)} |, "
                    f"not | {' | '.join(cells)} |"
                )
            if tables == 2 and header != NOT_COLUMNS:
                raise LedgerError(
                    f"{file}:{lineno}: a ledger's second table is "
                    f"| {' | '.join(NOT_COLUMNS)} |, not | {' | '.join(cells)} |"
                )
            if tables > 2:
                raise LedgerError(
                    f"{file}:{lineno}: a ledger holds two tables (promises, then not a "
                    "promise); this is a third"
                )
            in_table = True
            continue
        if all(set(c) <= set("-: ") and c for c in cells):
            continue  # the |---| separator
        if tables == 1:
            rows.append(_row(file, lineno, cells))
        else:
            table_rows.append((lineno, cells))
    if tables == 0:
        raise LedgerError(f"{file}: no table; a ledger holds | {' | '.join(COLUMNS)} |")
    nots = tuple(_not_promise(file, ln, cells, rows) for ln, cells in table_rows)
    return Ledger(file, page, tuple(rows), nots)


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


@dataclass(frozen=True)
class Accounting:
    """How a ledger accounts for its page's units."""

    page: Page
    by_promise: frozenset[int]
    by_not_promise: frozenset[int]
    # (where, the quote) of every quote that matches no unit of the page.
    unmatched: tuple[tuple[str, str], ...]

    @property
    def unaccounted(self) -> list[int]:
        """The indexes of the units no row quotes."""
        done = self.by_promise | self.by_not_promise
        return [k for k in range(len(self.page.units)) if k not in done]

    def figures(self) -> str:
        """``units=N promises=P not-promises=Q unaccounted=U`` (P + Q + U = N)."""
        n = len(self.page.units)
        p = len(self.by_promise)
        q = len(self.by_not_promise - self.by_promise)
        return f"units={n} promises={p} not-promises={q} unaccounted={n - p - q}" + (
            f" unmatched-quotes={len(self.unmatched)}" if self.unmatched else ""
        )


def account(ledger: Ledger | None, page: Page) -> Accounting:
    """Match every quote of ``ledger`` against ``page``'s units (no ledger: nothing accounted)."""
    return account_all([ledger] if ledger is not None else [], {page.name: page})[page.name]


def account_all(ledgers: Iterable[Ledger], pages: dict[str, Page]) -> dict[str, Accounting]:
    """Every page's accounting, by name.

    A quote is matched against its own page; a CLI section's quote that its
    section lacks is matched against the whole CLI reference, and accounts for
    the units it finds in whichever section holds them.
    """
    promise: dict[str, set[int]] = {name: set() for name in pages}
    nots: dict[str, set[int]] = {name: set() for name in pages}
    unmatched: dict[str, list[tuple[str, str]]] = {name: [] for name in pages}
    cli = sorted(
        (
            (name, k)
            for name in pages
            if name.partition("#")[0] == CLI_PAGE
            for k in range(len(pages[name].units))
        ),
        key=lambda nk: pages[nk[0]].units[nk[1]].line,
    )
    whole = Page(CLI_PAGE, [pages[name].units[k] for name, k in cli])
    for ledger in ledgers:
        page = pages.get(ledger.page)
        if page is None:
            continue
        quoted = [(r.where, r.doc_line, promise) for r in ledger.rows]
        quoted += [(n.where, n.quote, nots) for n in ledger.not_promises]
        for where, cell, into in quoted:
            for quote in quotes_in(cell):
                m = page.match(quote)
                if m.units:
                    into[ledger.page].update(m.units)
                    continue
                wide = whole.match(quote) if ledger.page.startswith(CLI_PAGE) else None
                if wide is None or not wide.units:
                    unmatched[ledger.page].append((where, quote))
                    continue
                for k in wide.units:
                    name, local = cli[k]
                    into[name].add(local)
    return {
        name: Accounting(
            pages[name], frozenset(promise[name]), frozenset(nots[name]), tuple(unmatched[name])
        )
        for name in pages
    }


def _excepted(page: str) -> bool:
    return any(page == e or (e.endswith("/") and page.startswith(e)) for e in EXCEPTED)


def read_unread(file: Path) -> list[str]:
    """The pages of ``UNREAD.txt``: one a line; blank lines and ``#`` comments skipped."""
    if not file.exists():
        return []
    lines = file.read_text(encoding="utf-8").splitlines()
    return [ln.strip() for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]


def check_units(
    ledgers: Iterable[Ledger],
    pages: dict[str, Page],
    unread: list[str],
    unread_file: Path = Path("cases/promises") / UNREAD_FILE,
    only: Iterable[str] = (),
) -> tuple[list[str], list[str]]:
    """``(problems, notes)``: what leaves a read page's units unaccounted, and what is unread.

    A page is read unless it is in ``unread`` or excepted (:data:`EXCEPTED`);
    a read page must have every unit quoted by a row and every quote of its
    ledger matching a unit. ``only`` checks just those pages, read or not.
    An entry of ``unread`` that is no page, or is already fully accounted
    for, is a problem too: the list only ever shrinks.
    """
    by_page = {led.page: led for led in ledgers}
    problems: list[str] = []
    for orphan in sorted(set(by_page) - set(pages)):
        problems.append(
            f"{by_page[orphan].file}:1: {orphan} is no page (or CLI section) of the docs; "
            "rename the ledger or remove it"
        )
    seen: set[str] = set()
    for entry in unread:
        if entry in seen:
            problems.append(f"{unread_file}: {entry} is listed twice")
        seen.add(entry)
        if entry not in pages:
            problems.append(f"{unread_file}: {entry} is no page (or CLI section) of the docs")
    targets = list(only) or [p for p in pages if p not in seen and not _excepted(p)]
    accounted = account_all(by_page.values(), pages)
    for name in targets:
        if name not in pages:
            problems.append(f"{name} is no page (or CLI section) of the docs")
            continue
        page = pages[name]
        ledger = by_page.get(name)
        acc = accounted[name]
        if ledger is None and page.units:
            problems.append(
                f"{name}: no ledger (cases/promises/{name.replace('.md#', '/')}"
                f"{'.md' if '#' in name else ''}) accounts for its {len(page.units)} units"
            )
        for where, quote in acc.unmatched:
            problems.append(
                f'{where}: the quote "{first_words(quote, 10)}" matches no unit of {name} '
                "(the page changed, or the quote is a paraphrase)"
            )
        for k in acc.unaccounted:
            unit = page.units[k]
            problems.append(
                f'{unit.where}: unaccounted {unit.kind} "{first_words(unit.text)}" '
                f"({name}: quote it in a promise row or a not-a-promise row)"
            )
    for entry in unread:
        if entry in pages and entry not in only:
            acc = accounted[entry]
            if not acc.unaccounted and not acc.unmatched and by_page.get(entry):
                problems.append(
                    f"{unread_file}: {entry} is fully accounted for; remove it from the list"
                )
    notes = [f"{len(unread)} pages not yet read: {', '.join(unread)}"] if unread else []
    return problems, notes


def summary_line(ledger: Ledger, accounting: Accounting | None = None) -> str:
    """``<page> rows=N green=N quarantined=N unreachable=N [docs-disagree=N] uncovered=N``,
    then the unit figures when the page's units are known."""
    disagree = ledger.count("docs disagree")
    line = (
        f"{ledger.page} rows={len(ledger.rows)} green={ledger.count('green')} "
        f"quarantined={ledger.count('confirmed defect')} "
        f"unreachable={ledger.count('unreachable')} "
        + (f"docs-disagree={disagree} " if disagree else "")
        + f"uncovered={ledger.count('uncovered')}"
    )
    return f"{line} {accounting.figures()}" if accounting is not None else line


def main(argv: list[str] | None = None) -> int:
    """Print one line of figures per page; with ``--check``, also every problem."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.tools.ledger",
        description="One line of figures per documented page (CLI reference: per section).",
    )
    parser.add_argument("--promises", type=Path, default=Path("cases/promises"))
    parser.add_argument("--cases", type=Path, default=Path("cases"))
    parser.add_argument(
        "--docs",
        type=Path,
        default=None,
        help="the contenox-docs folder (default: $CONTENOX_DOCS, else shared/contenox-docs "
        "beside the repository or a parent of it)",
    )
    parser.add_argument(
        "--page",
        action="append",
        default=[],
        help="check only this page (or page#section), read or not; repeatable",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="also list rows naming missing cases, cases no row names, and on every read "
        "page each unaccounted unit and unmatched quote; exit 1 if any",
    )
    args = parser.parse_args(argv)
    try:
        ledgers = load_all(args.promises)
    except LedgerError as exc:
        print(exc, file=sys.stderr)
        return 1
    docs = args.docs or find_docs(args.promises) or find_docs()
    pages = load_pages(docs) if docs is not None and docs.is_dir() else None
    unread_file = args.promises / UNREAD_FILE
    unread = read_unread(unread_file)
    by_page = {led.page: led for led in ledgers}
    accounted = account_all(ledgers, pages) if pages is not None else {}
    names = sorted(set(by_page) | set(pages or {}))
    for name in names:
        page = pages.get(name) if pages is not None else None
        if page is None and name not in by_page:
            continue
        ledger = by_page.get(name) or Ledger(args.promises / f"{name}", name, ())
        acc = accounted.get(name)
        mark = " (excepted)" if _excepted(name) else " (unread)" if name in unread else ""
        if page is not None and not page.units and name not in by_page:
            continue
        print(summary_line(ledger, acc) + mark)
    if not args.check:
        return 0
    from ..catalog import all_case_names, quarantined_case_names

    problems = check(ledgers, all_case_names(args.cases), quarantined_case_names(args.cases))
    if pages is None:
        problems.append(
            "the contenox docs were not found: pass --docs "
            "or set CONTENOX_DOCS=/path/to/contenox-docs"
        )
    else:
        unit_problems, notes = check_units(ledgers, pages, unread, unread_file, args.page)
        problems += unit_problems
        for note in notes:
            print(note, file=sys.stderr)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
