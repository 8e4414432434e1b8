"""The defect report: every quarantine in ``cases/``, as the list a contenox maintainer files from.

``python -m harness.tools.defects -o DEFECTS.md`` writes it (Markdown; ``--json``
for the same rows as JSON). Each confirmed defect and each docs-disagree
finding gives its title, the doc line(s) it rests on, the reproduction,
promised vs observed, and the case that turns green when it is fixed. The
cases are read by importing them (harness.catalog); nothing runs contenox.
``tests/test_defects.py`` fails when the committed DEFECTS.md is out of date.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..case import Defect
from ..case.model import DOC_LINE, HELP_LINE, doc_lines
from ..catalog import Quarantine, quarantines

__all__ = [
    "REFERENCE_PAGES",
    "REGENERATE",
    "as_json",
    "check_doc_line",
    "docs_dir",
    "main",
    "markdown",
    "problems",
    "rows",
]

REGENERATE = "python -m harness.tools.defects -o DEFECTS.md"
# The contract: where two pages disagree, these say what the binary owes.
REFERENCE_PAGES = (
    "reference/contenox-cli.md",
    "reference/config.md",
    "reference/agents-config.md",
)


def docs_dir(start: Path | None = None) -> Path | None:
    """contenox's docs: ``$CONTENOX_DOCS``, else ``shared/contenox-docs`` above ``start``."""
    if os.environ.get("CONTENOX_DOCS"):
        return Path(os.environ["CONTENOX_DOCS"])
    here = (start or Path(__file__)).resolve()
    for parent in here.parents:
        candidate = parent / "shared" / "contenox-docs"
        if candidate.is_dir():
            return candidate
    return None


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[`*]", "", text).split()).casefold()


def check_doc_line(line: str, docs: Path) -> str | None:
    """What is wrong with a cited doc line (None: the quote is at that line of that page).

    The quote may leave out words with ``…``; each piece must appear, in
    order, in the cited line (or range), backticks, emphasis and case aside.
    """
    if HELP_LINE.match(line.strip()):
        return None  # the binary's help: read by running it, not from the docs
    match = DOC_LINE.match(line.strip())
    if match is None:
        return f'{line!r} is not path:line "quote"'
    page = docs / match["path"]
    if not page.is_file():
        return f"{match['path']} is no page of {docs}"
    text = page.read_text(encoding="utf-8").splitlines()
    start = int(match["start"])
    end = int(match["end"] or start)
    if not 1 <= start <= end <= len(text):
        return f"{match['path']} has {len(text)} lines; {start}-{end} is outside it"
    # A blockquote's "> " opens each of its lines; a quote spanning two reads without them.
    cited = _plain(" ".join(re.sub(r"^\s*>\s?", "", t) for t in text[start - 1 : end]))
    at = 0
    for piece in re.split(r"…|\.\.\.", match["quote"]):
        piece = _plain(piece)
        if not piece:
            continue
        found = cited.find(piece, at)
        if found < 0:
            near = [n + 1 for n, t in enumerate(text) if piece[:40] in _plain(t)]
            hint = f" (it is at line {', '.join(map(str, near[:3]))})" if near else ""
            cited_at = f"{start}-{end}" if end != start else str(start)
            return f"{match['path']}:{cited_at} does not say {piece!r}{hint}"
        at = found + len(piece)
    return None


def problems(found: Sequence[Quarantine], docs: Path | None) -> list[str]:
    """Every quarantine that is no reproducible defect, by node id and what it lacks.

    A plain string (or bare xfail) has no reproduction and no doc line; with
    ``docs``, every cited line must say what the quarantine quotes.
    """
    out: list[str] = []
    for q in found:
        d = q.defect
        if not isinstance(d, Defect):
            out.append(
                f"{q.nodeid}: a plain-text quarantine, without a reproduction or a promised "
                "doc line; write it as Defect(title=…, reproduce=…, promised=…, observed=…)"
            )
            continue
        lines = [*doc_lines(d.promised), *d.bears_on]
        if docs is not None:
            for line in lines:
                wrong = check_doc_line(line, docs)
                if wrong is not None:
                    out.append(f"{q.nodeid}: {wrong}")
    return out


def rows(found: Sequence[Quarantine]) -> list[dict[str, Any]]:
    """One row a quarantine: the Defect's fields, its case's node id and its kind."""
    out: list[dict[str, Any]] = []
    for q in found:
        d = q.defect
        if isinstance(d, Defect):
            kind = "docs disagree" if d.docs_disagree else "confirmed defect"
            out.append(
                {
                    "kind": kind,
                    "case": q.nodeid,
                    "title": d.title.strip(),
                    "promised": doc_lines(d.promised),
                    "bears_on": [b.strip() for b in d.bears_on],
                    "reproduce": d.reproduce.strip(),
                    "observed": d.observed.strip(),
                    "second_reading": d.second_reading.strip(),
                }
            )
        else:
            out.append({"kind": "no reproduction", "case": q.nodeid, "text": d.strip()})
    return out


def as_json(found: Sequence[Quarantine]) -> str:
    return json.dumps(rows(found), indent=2, ensure_ascii=False) + "\n"


def _entry(number: int, row: dict[str, Any]) -> list[str]:
    lines = [f"### {number}. {row['title']}", ""]
    if row["kind"] == "docs disagree":
        lines.append(f"- **Case** (asserts what the binary does): `{row['case']}`")
    else:
        lines.append(f"- **Turns green when fixed**: `{row['case']}`")
    lines.append("- **Promised**:")
    lines += [f"  - {p}" for p in row["promised"]]
    if row["bears_on"]:
        lines.append("- **Bears on it**:")
        lines += [f"  - {b}" for b in row["bears_on"]]
    lines.append("- **Observed**: " + " ".join(row["observed"].split()))
    second = row["second_reading"] or "not yet"
    lines.append("- **Second reading**: " + " ".join(second.split()))
    lines += ["", "```sh", row["reproduce"], "```", ""]
    return lines


def markdown(found: Sequence[Quarantine]) -> str:
    """The report as one Markdown document."""
    table = rows(found)
    defects = [r for r in table if r["kind"] == "confirmed defect"]
    disagree = [r for r in table if r["kind"] == "docs disagree"]
    bare = [r for r in table if r["kind"] == "no reproduction"]
    out = [
        "# Defects of contenox v1.0.0 found by this suite",
        "",
        f"Generated from the quarantines in `cases/` by `{REGENERATE}`; do not edit by",
        "hand (`tox -e py` fails when this file is out of date). Doc lines are",
        '`path:line "quote"`, the path relative to contenox-docs/. Each reproduction',
        "runs in a scratch home (`export HOME=$(mktemp -d)`), never the real `~/.contenox`.",
        "",
        f"**{len(defects)} confirmed defects, {len(disagree)} docs-disagree findings"
        + (f", {len(bare)} quarantines without a reproduction" if bare else "")
        + ".**",
        "",
        "## Confirmed defects",
        "",
        "Each is quarantined as a strict xfail; the named case passes once contenox",
        "keeps the promise.",
        "",
    ]
    for number, row in enumerate(defects, 1):
        out += _entry(number, row)
    out += [
        "## Docs disagree",
        "",
        "Two pages contradict each other. The case asserts what the binary does and what",
        "the reference pages (reference/contenox-cli.md, reference/config.md,",
        "reference/agents-config.md) say, and runs green: a finding for the docs.",
        "",
    ]
    if not disagree:
        out += ["None.", ""]
    for number, row in enumerate(disagree, 1):
        out += _entry(number, row)
    if bare:
        out += ["## Quarantines without a reproduction", ""]
        for row in bare:
            out += [f"- `{row['case']}`: " + " ".join(row["text"].split())]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.tools.defects", description=__doc__)
    parser.add_argument("--cases", default="cases", help="the cases directory (default: cases)")
    parser.add_argument("--json", action="store_true", help="write the rows as JSON")
    parser.add_argument("-o", "--output", help="write to this file instead of stdout")
    args = parser.parse_args(argv)
    cases = Path(args.cases)
    if not cases.is_dir():
        parser.error(f"{cases} is not a directory of cases; run from the repo root or give --cases")
    found = quarantines(cases)
    text = as_json(found) if args.json else markdown(found)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
