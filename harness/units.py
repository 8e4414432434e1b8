"""A documentation page cut into the units a reader can point at, and quotes matched to them.

A unit is one sentence of prose, one list item, one table row or one code block
(a command with the output the page prints for it is one block, so one unit).
Headings, a table's header row, the YAML front matter, HTML comments, rules and
lines that are only HTML tags are no units. A blockquote's lines are read as if
the ``>`` were not there. Every unit knows the line it starts on and the line it
ends on, 1-based, in the page.

A quote (a promise row's doc-line cell, a not-a-promise row's first cell)
points at the units it overlaps. Quote and page are compared through
:func:`normalize`, which forgets markdown formatting (backticks, emphasis,
links, HTML tags, escapes), typographic quotes and dashes, case and runs of
whitespace, but not words: a paraphrase matches nothing. A quote may elide
with ``…`` or ``...``; each piece must then be found on the page.

The CLI reference is cut into sections (``reference/contenox-cli.md#<slug>``)
the way :func:`harness.tools.ledger.cli_sections` names them; its units before the
first section and under ``## Subcommands`` belong to the page itself.
"""

from __future__ import annotations

import html
import itertools
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CLI_PAGE",
    "Match",
    "Page",
    "Unit",
    "find_docs",
    "first_words",
    "load_pages",
    "normalize",
    "page_units",
    "quotes_in",
    "sections",
    "slug",
    "split",
]

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(\s|$)")
_HTML_HEADING = re.compile(r"^\s*<h[1-6]\b", re.IGNORECASE)
_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_SEP = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_TAG = re.compile(r"</?[A-Za-z][^<>]*>")
_BLOCKQUOTE = re.compile(r"^(\s*>)+ ?")
# Words after which a full stop does not end a sentence.
_ABBREVIATIONS = {"e.g", "i.e", "cf", "vs", "approx", "incl", "resp", "no", "fig", "eg", "ie"}
# A sentence ends at . ! or ? (and any closing quote, bracket or emphasis), then
# whitespace, then something that can start a sentence.
_SENTENCE_END = re.compile(r"[.!?][)\]\"'”’*_]*\s+(?=[A-Z0-9`\[*\"“(_<!])")
_ELLIPSIS = re.compile(r"\s*(?:…|\.\.\.)\s*")


@dataclass(frozen=True)
class Unit:
    """One thing a reader can point at on a page."""

    page: str
    line: int
    end: int
    kind: str  # "sentence", "item", "row" or "code"
    text: str
    norm: str

    @property
    def where(self) -> str:
        """``page:line`` (the page's own path, without a CLI section's slug)."""
        return f"{self.page.partition('#')[0]}:{self.line}"

    @property
    def lines(self) -> range:
        """The lines of the page the unit spans."""
        return range(self.line, self.end + 1)


@dataclass(frozen=True)
class Match:
    """What a quote points at: the indexes of the units it overlaps (none: it matches nothing)."""

    quote: str
    units: tuple[int, ...]


def slug(heading: str) -> str:
    """A heading's slug: lowercased, every run of other than ``[a-z0-9]`` a ``-``, trimmed."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def normalize(text: str) -> str:
    """The text with markdown formatting, typography, case and spacing forgotten."""
    s = text.replace("\\|", "|")
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)  # [text](url), ![alt](src)
    s = re.sub(r"\[([^\]]*)\]\[[^\]]*\]", r"\1", s)  # [text][ref]
    s = re.sub(r"<(https?://[^>]+)>", r"\1", s)  # <https://…>
    s = re.sub(r"\[([^\]]*)\]", r"\1", s)  # a link quoted without its target
    s = _TAG.sub(" ", s)
    s = html.unescape(s)
    s = re.sub(r"\\(?=[^\w\s])", "", s)  # markdown escapes
    s = s.translate(
        {
            ord("`"): None,
            ord("*"): None,
            ord("_"): None,
            ord("\u2018"): "'",
            ord("\u2019"): "'",
            ord("\u201c"): '"',
            ord("\u201d"): '"',
            ord("\u2014"): "-",
            ord("\u2013"): "-",
            ord("\u2212"): "-",
            ord("\u00a0"): " ",
            ord("\u2026"): "...",
        }
    )
    s = s.lower()
    s = re.sub(r"\s+", " ", s)
    s = re.sub(r"\s*([-|/])\s*", r"\1", s)
    # A table row may be quoted with its cells joined by a dash.
    return s.replace("|", "-").strip()


def first_words(text: str, n: int = 8) -> str:
    """The first ``n`` words of ``text`` (formatting kept), with … if there is more."""
    words = text.split()
    head = " ".join(words[:n])
    return head + (" …" if len(words) > n else "")


def _strip_quote(q: str) -> str:
    q = re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", q)  # a list item quoted with its marker
    return q.strip().strip(" .,;:!?\"'“”‘’|\\").strip()


def quotes_in(cell: str) -> list[str]:
    """The quotes of a ledger cell: the text between double quotes outside backticks.

    A cell with no such quote is one quote, whole. A ``"`` inside a backtick
    span (``timeout = "never"``) does not open or close a quote.
    """
    segments: list[str] = []
    buf: list[str] = []
    in_code = False
    in_quote = False
    prev = ""
    for ch in cell:
        if ch == "`":
            in_code = not in_code
        if not in_code and ch in '"“”' and prev != "\\":
            if in_quote:
                segments.append("".join(buf))
                buf = []
            in_quote = not in_quote
            continue
        if in_quote:
            buf.append(ch)
        prev = ch
    if in_quote or not segments:
        return [cell]
    return [s for s in segments if _strip_quote(s)] or [cell]


def _paragraph_units(page: str, lines: list[tuple[int, str]], kind: str) -> list[Unit]:
    """One unit for an item; one per sentence for prose."""
    text = " ".join(t.strip() for _, t in lines)
    if kind == "item" or not text:
        return [Unit(page, lines[0][0], lines[-1][0], kind, text, normalize(text))]
    # Where each joined line starts, to give a sentence its line.
    starts: list[tuple[int, int]] = []
    offset = 0
    for lineno, t in lines:
        starts.append((offset, lineno))
        offset += len(t.strip()) + 1
    # Spans a sentence may not end inside: code spans and link targets.
    masked = list(text)
    for m in re.finditer(r"(`+).*?\1|\]\([^)]*\)", text):
        for i in range(m.start() + 1, m.end()):
            masked[i] = "x"
    flat = "".join(masked)
    cuts = [0]
    for m in _SENTENCE_END.finditer(flat):
        head = flat[: m.start() + 1].rsplit(None, 1)
        token = head[-1] if head else ""
        if token.strip("(*_\"'").lower().rstrip(".!?") in _ABBREVIATIONS:
            continue
        cuts.append(m.end())
    cuts.append(len(text))

    def line_at(pos: int) -> int:
        return max(ln for off, ln in starts if off <= pos)

    out: list[Unit] = []
    for a, b in itertools.pairwise(cuts):
        sentence = text[a:b].strip()
        if not sentence or not normalize(sentence).strip(" .,;:-|"):
            continue
        last = line_at(max(a, b - 1))
        out.append(Unit(page, line_at(a), last, "sentence", sentence, normalize(sentence)))
    return out


def _row_text(line: str) -> str:
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    cells = [c.strip() for c in re.split(r"(?<!\\)\|", s)]
    return " | ".join(cells)


def split(page: str, text: str) -> list[Unit]:
    """The units of a page's markdown, in page order."""
    raw = text.splitlines()
    lines = [_BLOCKQUOTE.sub("", ln) for ln in raw]
    units: list[Unit] = []
    i = 0
    n = len(lines)
    if n and lines[0].strip() == "---":  # YAML front matter
        j = 1
        while j < n and lines[j].strip() != "---":
            j += 1
        i = j + 1
    block: list[tuple[int, str]] = []
    block_kind = "sentence"

    def flush() -> None:
        nonlocal block, block_kind
        if block:
            units.extend(_paragraph_units(page, block, block_kind))
        block = []
        block_kind = "sentence"

    while i < n:
        line = lines[i]
        lineno = i + 1
        stripped = line.strip()
        fence = _FENCE.match(line)
        if fence:
            flush()
            mark = fence[2]
            j = i + 1
            while j < n and not lines[j].strip().startswith(mark[0] * len(mark)):
                j += 1
            body = "\n".join(lines[i + 1 : j])
            units.append(Unit(page, lineno, min(j + 1, n), "code", body, normalize(body)))
            i = j + 1
            continue
        if stripped.startswith("<!--"):
            flush()
            j = i
            while j < n and "-->" not in lines[j]:
                j += 1
            i = j + 1
            continue
        if not stripped or _HEADING.match(line) or _HTML_HEADING.match(line) or _RULE.match(line):
            flush()
            i += 1
            continue
        if stripped.startswith("|"):
            flush()
            header = i + 1 < n and _TABLE_SEP.match(lines[i + 1]) is not None
            j = i + 2 if header else i
            while j < n and lines[j].strip().startswith("|"):
                if not _TABLE_SEP.match(lines[j]):
                    row = _row_text(lines[j])
                    units.append(Unit(page, j + 1, j + 1, "row", row, normalize(row)))
                j += 1
            i = j
            continue
        if not _TAG.sub("", stripped).strip():
            flush()  # a line of HTML tags only: <details>, </div>
            i += 1
            continue
        item = _ITEM.match(line)
        if item and not _RULE.match(line):
            flush()
            block = [(lineno, item[3])]
            block_kind = "item"
            i += 1
            continue
        block.append((lineno, line))
        i += 1
    flush()
    return units


def sections(page_text: str) -> list[tuple[int, str]]:
    """``(line, slug)`` of every CLI-reference section heading, in page order.

    ``""`` starts a stretch that belongs to the page itself (``## Subcommands``).
    """
    out: list[tuple[int, str]] = []
    fenced = False
    for lineno, line in enumerate(page_text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        m = re.match(r"^(#{2,3}) (.+?)\s*$", line)
        h3 = re.match(r"^<h3\b[^>]*>(.*)</h3>\s*$", line)
        if fenced or (m is None and h3 is None):
            continue
        text = m[2] if m is not None else re.sub(r"<[^>]+>", "", h3[1] if h3 else "")
        s = slug(text)
        out.append((lineno, "" if s == "subcommands" else s))
    return out


class Page:
    """The units of one page (or CLI section), and the quotes matched against them."""

    def __init__(self, name: str, units: list[Unit]) -> None:
        self.name = name
        self.units = units
        self._bounds: list[tuple[int, int]] = []
        pos = 0
        for u in units:
            self._bounds.append((pos, pos + len(u.norm)))
            pos += len(u.norm) + 1
        self._stream = " ".join(u.norm for u in units)

    def match(self, quote: str) -> Match:
        """The units ``quote`` overlaps, everywhere it occurs; none if a piece is not found."""
        whole = normalize(_strip_quote(quote))
        pieces = [whole] if whole and whole in self._stream else _pieces(quote)
        hit: set[int] = set()
        for piece in pieces:
            if not piece or piece not in self._stream:
                return Match(quote, ())
            start = self._stream.find(piece)
            while start != -1:
                end = start + len(piece)
                hit.update(k for k, (a, b) in enumerate(self._bounds) if a < end and start < b)
                start = self._stream.find(piece, start + 1)
        return Match(quote, tuple(sorted(hit)))


def _pieces(quote: str) -> list[str]:
    parts = [normalize(_strip_quote(p.strip("[]() "))) for p in _ELLIPSIS.split(quote)]
    return [p for p in parts if p] or [""]


CLI_PAGE = "reference/contenox-cli.md"


def page_units(page: str, text: str) -> dict[str, list[Unit]]:
    """The units of one page by the name its ledger is printed under.

    Every page is one name, but the CLI reference is one per section
    (``reference/contenox-cli.md#<slug>``) plus the page itself for the units
    before its first section and under ``## Subcommands``.
    """
    if page != CLI_PAGE:
        return {page: split(page, text)}
    heads = sections(text)
    out: dict[str, list[Unit]] = {page: []}
    for _, s in heads:
        if s:
            out.setdefault(f"{page}#{s}", [])
    for u in split(page, text):
        name = page
        for lineno, s in heads:
            if lineno > u.line:
                break
            name = f"{page}#{s}" if s else page
        out[name].append(Unit(name, u.line, u.end, u.kind, u.text, u.norm))
    return out


def load_pages(docs: Path) -> dict[str, Page]:
    """Every ``*.md`` page under ``docs`` (CLI sections apart), by name, sorted."""
    out: dict[str, Page] = {}
    for file in sorted(docs.rglob("*.md")):
        rel = file.relative_to(docs).as_posix()
        for name, units in page_units(rel, file.read_text(encoding="utf-8")).items():
            out[name] = Page(name, units)
    return dict(sorted(out.items()))


def find_docs(start: Path | None = None) -> Path | None:
    """The contenox documentation: ``$CONTENOX_DOCS``, else a ``shared/contenox-docs``
    beside the repository or one of its parents (the worktrees sit deeper than main)."""
    env = os.environ.get("CONTENOX_DOCS")
    if env:
        return Path(env)
    here = (start or Path(__file__)).resolve()
    for parent in [here, *here.parents]:
        candidate = parent / "shared" / "contenox-docs"
        if candidate.is_dir():
            return candidate
    return None
