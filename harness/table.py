"""Reading what contenox prints for a person: column tables and labelled fields.

contenox lays its lists out with Go's ``tabwriter``: every column is padded to
its widest cell, so a column starts at the same character offset on every line
as it does in the header. Slicing each row at the header's own offsets keeps a
cell that contains spaces (a SUMMARY such as ``read the whole tree``, or the
default-model marker in ``scripted-test *``) in one piece, where ``split()``
would tear it apart::

    rows = read_table(
        result.stdout,
        ["ID", "AGENT", "ENVELOPE", "STATUS", "AGE"],
        empty=["No missions recorded."],
        source="contenox mission list",
    )
    rows[0]["STATUS"]  # 'landed'

An empty state is a sentence, not a table; a sentence named in ``empty`` reads
as ``[]``. Anything else that is not the expected table raises
:class:`TableError` with the command, the columns and the whole output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Column",
    "TableError",
    "read_fields",
    "read_table",
]

_WORD = re.compile(r"\S+")


class TableError(AssertionError):
    """Output that is not the table (or the fields) a probe expected.

    An ``AssertionError`` on purpose: in a case it means contenox printed
    something other than what it promised, and pytest should show it as a
    failure with the whole output, not as a crash of the harness.
    """


@dataclass(frozen=True)
class Column:
    """One header column: its name and where its cells start and end on a line."""

    name: str
    start: int
    end: int | None  # None: the last column runs to the end of the line


def _indent(text: str) -> str:
    if not text.strip():
        return "    (empty)"
    return "\n".join(f"    {line}" for line in text.splitlines())


def _fail(source: str, problem: str, columns: Sequence[str], text: str, fix: str) -> TableError:
    return TableError(
        f"{source}: {problem}\n"
        f"  expected columns: {'  '.join(columns)}\n"
        f"  {fix}\n"
        f"  whole output:\n{_indent(text)}"
    )


def _header_columns(line: str, expected: Sequence[str]) -> tuple[Column, ...] | None:
    """The columns of ``line`` if it is a header naming ``expected`` in order."""
    words = [(m.group(), m.start()) for m in _WORD.finditer(line)]
    names = [w for w, _ in words]
    position = 0
    for name in expected:
        try:
            position = names.index(name, position) + 1
        except ValueError:
            return None
    starts = [start for _, start in words]
    return tuple(
        Column(name, start, starts[i + 1] if i + 1 < len(starts) else None)
        for i, (name, start) in enumerate(words)
    )


def _fits(line: str, columns: Sequence[Column]) -> bool:
    """True when no cell of ``line`` spills across a column boundary.

    tabwriter pads every cell to its column's width plus a gap, so the
    character just before each column's start is blank on every real row.
    A line that has text there is not a row of this table: a sentence, a
    wrapped cell, or a layout contenox changed.
    """
    if line[:1].isspace():
        return False
    return all(c.start == 0 or c.start > len(line) or line[c.start - 1] == " " for c in columns)


def read_table(
    text: str,
    columns: Sequence[str],
    *,
    empty: Iterable[str] = (),
    source: str = "output",
) -> list[dict[str, str]]:
    """Rows of the table in ``text`` whose header names ``columns``, as dicts.

    The header is the first line naming every expected column in order (extra
    columns are kept under their own names, so a new column does not break a
    case). Rows are sliced at the header's offsets and stripped; the table
    ends at the first blank line (contenox's footers follow one). If ``text``
    starts with one of the ``empty`` sentences, the table is absent because
    the state is empty: ``[]``.

    >>> read_table("NAME  TYPE\\nmine  scripted-test\\n", ["NAME", "TYPE"])
    [{'NAME': 'mine', 'TYPE': 'scripted-test'}]
    """
    stripped = text.strip()
    for sentence in empty:
        if stripped.startswith(sentence):
            return []
    lines = text.splitlines()
    header_at = None
    header: tuple[Column, ...] = ()
    for index, line in enumerate(lines):
        found = _header_columns(line, columns)
        if found is not None:
            header_at, header = index, found
            break
    if header_at is None:
        sentences = "; ".join(repr(s) for s in empty) or "none given"
        raise _fail(
            source,
            f"no header row naming the expected columns, and no empty-state sentence ({sentences})",
            columns,
            text,
            "If contenox renamed a column or reworded its empty state, re-record the "
            "fixtures (python scripts/record_fixtures.py) and update the probe.",
        )
    rows: list[dict[str, str]] = []
    for number, line in enumerate(lines[header_at + 1 :], start=header_at + 2):
        if not line.strip():
            break
        if not _fits(line, header):
            raise _fail(
                source,
                f"line {number} does not fit the header's columns: {line!r}",
                columns,
                text,
                "A cell spills across a column boundary; the table layout is not what "
                "the probe reads. Re-record the fixtures and check the probe.",
            )
        rows.append(
            {c.name: (line[c.start : c.end] if c.start < len(line) else "").strip() for c in header}
        )
    return rows


def read_fields(
    text: str,
    labels: Sequence[str],
    *,
    required: Sequence[str] | None = None,
    source: str = "output",
) -> dict[str, str]:
    """Values of ``Label:   value`` lines, for the labels asked for.

    Only lines that start with a wanted label followed by a colon are read,
    so a sentence elsewhere that happens to contain a colon is ignored. The
    first occurrence of a label wins. Every label in ``required`` (all of
    ``labels`` when not given) must be present, else :class:`TableError`.

    >>> read_fields("Mission:   m-1\\nStatus:    landed\\n", ["Mission", "Status"])
    {'Mission': 'm-1', 'Status': 'landed'}
    """
    wanted = {label: re.compile(rf"^{re.escape(label)}:[ \t]*(.*?)\s*$") for label in labels}
    found: dict[str, str] = {}
    for line in text.splitlines():
        for label, pattern in wanted.items():
            if label in found:
                continue
            match = pattern.match(line)
            if match:
                found[label] = match.group(1)
                break
    missing = [label for label in (labels if required is None else required) if label not in found]
    if missing:
        raise TableError(
            f"{source}: missing the labelled field(s) {', '.join(missing)}\n"
            f"  expected labels: {', '.join(labels)}\n"
            "  If contenox renamed a label, re-record the fixtures "
            "(python scripts/record_fixtures.py) and update the probe.\n"
            f"  whole output:\n{_indent(text)}"
        )
    return found
