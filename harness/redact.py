"""Redactions that make a transcript stable across runs, machines and workers.

Paths become ``[ROOT]``, ``[HOME]``, ``[WORK]``, ``[TMP]``, ``[BIN]``;
timestamps ``[TIME]``; durations ``[DURATION]``; loopback ports ``[PORT1]``; versions that vary
``[VERSION]``; generated ids are numbered by first appearance, so the same
id is the same placeholder everywhere in one transcript::

    r = Redactor(paths={"[WORK]": Path("/tmp/x/work")})
    r("mission 9d4e…-…  in /tmp/x/work; again 9d4e…-…")
    # 'mission [UUID1]  in [WORK]; again [UUID1]'
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

__all__ = ["Redactor"]

_HEX = "[0-9a-f]"
# Numbered id families, in the order they are tried (longest shapes first).
_IDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("UUID", re.compile(rf"\b{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\b")),
    ("REQ", re.compile(rf"\bcli-{_HEX}{{16}}\b")),
    ("CALL", re.compile(r"\bscripted-test-\d+-\d+-[0-9a-f]{4}\b")),
    ("CALL", re.compile(r"\bcall-scripted-\d+-[0-9a-f]{4}\b")),
    ("OP", re.compile(r"\bop-\d{8}-\d{6}\.\d{3}-[0-9a-z]+\b")),
    # A loopback port the OS handed a server this case started (MCP, OpenAPI,
    # relay, serve): numbered, so two servers stay two placeholders.
    # beam names its session beam-<8 digits or hex>: all digits in some runs.
    ("BEAM", re.compile(r"(?<=\bbeam-)[0-9a-f]{8}\b")),
    ("PORT", re.compile(r"(?:(?<=127\.0\.0\.1:)|(?<=localhost:)|(?<=\[::1\]:))\d{2,5}\b")),
    # A hex id contenox cut with an ellipsis ("Forked … to session \"31520946…\""):
    # all digits in some runs, so the letter the next shape needs may be missing.
    ("HEX", re.compile(rf"\b{_HEX}{{8,64}}(?=…)")),
    # An event dispatch's request id (request=evt-<16 hex>): all digits in some runs.
    ("HEX", re.compile(rf"(?<=\bevt-){_HEX}{{16}}\b")),
    # Short hex ids (session ids, hashes): a mix of digits and letters, 8+ long.
    ("HEX", re.compile(rf"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9]){_HEX}{{8,64}}\b")),
)

_FIXED: tuple[tuple[re.Pattern[str], str], ...] = (
    # 2026-11-30T09:02:41.709Z, 2026-11-30 09:02:41.762945517 +0000 UTC, 2026-11-30 09:02
    (
        re.compile(
            r"\b\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?"
            r"(?:Z| ?[+-]\d\d:?\d\d(?: [A-Z]{3,4})?)?"
        ),
        "[TIME]",
    ),
    (re.compile(r"\b\d{8}-\d{6}\b"), "[TIME]"),
    # A bare date (beam's log file is named for the day it was written).
    (re.compile(r"\b\d{4}-\d\d-\d\d\b"), "[DATE]"),
    # --trace's log prefix: 2026/11/30 20:21:54
    (re.compile(r"\b\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\b"), "[TIME]"),
    # Go-style and human durations: 71.295864ms, 30m0s, 2s, 1h2m3s, 54.562µs.
    (
        re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)(?:\d+(?:\.\d+)?(?:ms|s|m))*\b"),
        "[DURATION]",
    ),
    (re.compile(r"\b(?:\d+ (?:seconds?|minutes?|hours?|days?) ago)\b"), "[AGE]"),
    # A timing in JSON: a tool result's ("duration_seconds":0.0086), a captured
    # step's in `state show --raw` ("duration": 97589992 nanoseconds).
    (
        re.compile(r'(?<="duration)((?:_seconds)?\\?":\s*)\d+(?:\.\d+)?(?:e-?\d+)?'),
        r"\1[DURATION]",
    ),
    # A duration in a table column: the padding after it is the column's width
    # less the value's, so it varies with the value; two spaces stay.
    (re.compile(r"(?<=\[DURATION\])  +"), "  "),
    (re.compile(r"\bgo1\.\d+(?:\.\d+)?\b"), "[GOVERSION]"),
    (re.compile(r"(?<=version )v?\d+\.\d+\.\d+(?:-[\w.]+)?(?:\+[\w.]+)?"), "[VERSION]"),
    (re.compile(r"\bpid[ =:]+\d+\b"), "pid [PID]"),
    # The marker every child carries names this pytest process (pid, start time).
    (re.compile(r"(?<=E2E_HARNESS_SESSION=)[0-9a-f.]+(?:\[HEX\d+\])?"), "[SESSION]"),
)

# What ends a path in text: whitespace and quotes.
_STOP = frozenset(" \t\n\r\f\v'\"")
_ELLIPSIS = "…"
# A path under pytest's basetemp (another case's root, another worker's): found by
# this anchor alone, then widened by hand to the path it belongs to. A pattern that
# matched the leading directories too (``(?:/[^\s/]+)*/pytest-of-…``) was tried at
# every position of a long token and backtracked over the rest of it: quadratic,
# 76 s on 80 KB of base64.
_BASETEMP = re.compile(r"/pytest-of-[^/\s'\"]+/pytest-\d+")
_WORKER = re.compile(r"/popen-gw\d+")
# The shortest prefix of a known path read as that path cut with an ellipsis ("/t…").
_MIN_CUT = 2


def _basetemp_paths(text: str) -> str:
    """``…/pytest-of-U/pytest-N[/popen-gwK]`` → ``[BASETEMP]``; cut with "…" → ``[ROOT]…``.

    Linear: each anchor is found once, the path's start is found by walking back
    no further than the end of the previous replacement, and the end of the token
    after an anchor is scanned once whatever number of anchors it holds.
    """
    out: list[str] = []
    done = 0  # text[:done] is in out
    stop_from, stop_at = -1, -1  # text[stop_from:stop_at] holds no stop char nor "…"
    for m in _BASETEMP.finditer(text):
        if m.start() < done:
            continue
        # The earliest "/" of the run of /segments that ends at the anchor.
        start = j = m.start()
        while j > done and text[j - 1] not in _STOP:
            j -= 1
            if text[j] == "/":
                if text[j + 1] == "/":
                    break
                start = j
        end = m.end()
        if not stop_from <= end <= stop_at:
            stop_from = stop_at = end
            while stop_at < len(text) and text[stop_at] not in _STOP and text[stop_at] != _ELLIPSIS:
                stop_at += 1
        out.append(text[done:start])
        if stop_at < len(text) and text[stop_at] == _ELLIPSIS:
            # A scratch path contenox cut with an ellipsis: where it is cut depends on
            # how long the machine's basetemp is, so the whole fragment goes.
            out.append("[ROOT]" + _ELLIPSIS)
            done = stop_at + 1
        else:
            worker = _WORKER.match(text, end)
            out.append("[BASETEMP]")
            done = worker.end() if worker else end
    out.append(text[done:])
    return "".join(out)


def _prefixes(path: str) -> str:
    """A regex for every prefix of ``path`` of :data:`_MIN_CUT` characters or more.

    Nested optional groups (``/t(?:m(?:p)?)?``): matching one is a single pass
    over the text it covers, with no choice to backtrack into.
    """
    head, rest = path[:_MIN_CUT], path[_MIN_CUT:]
    return re.escape(head) + "".join("(?:" + re.escape(c) for c in rest) + ")?" * len(rest)


@functools.lru_cache(maxsize=64)
def _cut_regex(paths: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    # One alternative per path, shortest first: a fragment that is a prefix of
    # [ROOT] and of [HOME] reads [ROOT]. Not inside a longer word or path.
    alternatives = "|".join(f"(?P<p{i}>{_prefixes(path)})" for i, (path, _) in enumerate(paths))
    return re.compile(rf"(?<![\w./-])(?:{alternatives}){_ELLIPSIS}")


def _cut_paths(
    text: str, paths: Mapping[str, Path], machine: Mapping[str, Path] | None = None
) -> str:
    """A known path that contenox cut with "…" anywhere (``"/tmp/cxe-ab…"``) → ``[ROOT]…``.

    contenox cuts a long message at a fixed width, so where a path in it is cut
    depends on the path's length: any prefix of a known path (two characters or
    more) followed by "…" becomes the placeholder of the shortest path it begins.
    A fragment that begins one of the case's own paths and a machine path alike
    (``"/tmp/c…"`` of ``/tmp/cxe_…`` and ``/tmp/ci/.tox/py``) reads as the case's:
    the case's paths are tried first, the machine's (``machine``) after.
    """
    if _ELLIPSIS not in text:
        return text
    ranked = [(0, name, p) for name, p in paths.items()]
    ranked += [(1, name, p) for name, p in (machine or {}).items() if name not in paths]
    known = tuple(
        (str(p), name)
        for _, name, p in sorted(
            ((rank, name, p) for rank, name, p in ranked if str(p).startswith("/")),
            key=lambda item: (item[0], len(str(item[2])), str(item[2])),
        )
    )
    if not known:
        return text
    names = {f"p{i}": name for i, (_, name) in enumerate(known)}
    by_path = dict(known)

    def cut(m: re.Match[str]) -> str:
        fragment = m.group(0)[: -len(_ELLIPSIS)]
        # "<root>/…" begins [HOME] and [WORK] alike: it reads as the root it names.
        if fragment.endswith("/") and fragment[:-1] in by_path:
            return by_path[fragment[:-1]] + "/" + _ELLIPSIS
        return names[str(m.lastgroup)] + _ELLIPSIS

    return _cut_regex(known).sub(cut, text)


# The case's own scratch paths, all under its root.
_SCRATCH = ("[ROOT]", "[HOME]", "[WORK]", "[TMP]")


def _cut_scratch(text: str, paths: Mapping[str, Path]) -> str:
    """A scratch path cut inside it (``"[WORK]/a_named_allow…"``) → ``[ROOT]…``.

    contenox cuts a long message at a fixed width: with the root at one length the
    cut falls in the file name under [WORK], with a longer root in the root itself.
    Whatever part of the path survived, it reads as the root, cut.
    """
    if _ELLIPSIS not in text:
        return text
    names = [re.escape(name) for name in _SCRATCH if name in paths]
    if not names:
        return text
    return re.sub(
        rf"(?:{'|'.join(names)})[^\s\"'`{_ELLIPSIS}]*{_ELLIPSIS}", "[ROOT]" + _ELLIPSIS, text
    )


# A pattern that cannot match without one of these words is not run over a text
# without them: a pass of a regex over a megabyte costs a tenth of a second. Each
# pattern is named by its distinctive literal, which must appear in it.
_NEEDS: dict[str, tuple[str, ...]] = {}
for _regex in [r for _, r in _IDS] + [r for r, _ in _FIXED]:
    for _words in (
        ("cli-",),
        ("scripted-test-",),
        ("call-scripted-",),
        ("op-",),
        ("beam-",),
        ("127.0.0.1:", "localhost:", "[::1]:"),
        ("evt-",),
        (_ELLIPSIS,),
        (" ago",),
        ('"duration',),
        ("[DURATION]",),
        ("go1.",),
        ("version ",),
        ("pid",),
        ("E2E_HARNESS_SESSION=",),
    ):
        if all(w in _regex.pattern or re.escape(w) in _regex.pattern for w in _words):
            _NEEDS[_regex.pattern] = _words


def _may_match(regex: re.Pattern[str], text: str) -> bool:
    words = _NEEDS.get(regex.pattern)
    return words is None or any(w in text for w in words)


def machine_paths() -> dict[str, Path]:
    """Paths that differ from machine to machine but not from run to run.

    The Python running the suite (``[VENV]``, e.g. a case hands contenox
    ``[VENV]/bin/python`` as an MCP server's command) and the ``PATH`` every
    child inherits (``[PATH]``, printed whole by a shell that runs ``env``).
    """
    paths = {"[VENV]": Path(sys.prefix)}
    search = os.environ.get("PATH", "")
    if os.pathsep in search:
        paths["[PATH]"] = Path(search)
    return paths


@dataclass
class Redactor:
    """Replace volatile text with placeholders; ids keep one number each."""

    paths: Mapping[str, Path] = field(default_factory=dict)
    extra: Mapping[str, str] = field(default_factory=dict)
    _numbers: dict[tuple[str, str], int] = field(default_factory=dict)
    _counters: dict[str, int] = field(default_factory=dict)

    def _number(self, family: str, value: str) -> str:
        key = (family, value)
        if key not in self._numbers:
            self._counters[family] = self._counters.get(family, 0) + 1
            self._numbers[key] = self._counters[family]
        return f"[{family}{self._numbers[key]}]"

    def only_paths(self, text: str) -> str:
        """Replace the scratch and machine paths only (a dialog keeps its ids and times)."""
        paths = self._all_paths()
        # Longest path first, so [WORK] wins over the [ROOT] that contains it.
        for placeholder, path in sorted(
            paths.items(), key=lambda item: len(str(item[1])), reverse=True
        ):
            text = text.replace(str(path), placeholder)
            # A path inside a URL (doctor --bundle's issue link) is percent-encoded.
            text = text.replace(quote(str(path), safe=""), placeholder)
        return text

    def _all_paths(self) -> dict[str, Path]:
        return {**machine_paths(), **self.paths}

    def __call__(self, text: str) -> str:
        text = _cut_paths(text, self.paths, machine_paths())
        text = self.only_paths(text)
        text = _cut_scratch(text, self.paths)
        text = _basetemp_paths(text)
        for pattern, replacement in self.extra.items():
            text = re.sub(pattern, replacement, text)
        for family, regex in _IDS:
            if _may_match(regex, text):
                text = regex.sub(lambda m, f=family: self._number(f, m.group(0)), text)  # type: ignore[misc]
        for regex, placeholder in _FIXED:
            if _may_match(regex, text):
                text = regex.sub(placeholder, text)
        return text
