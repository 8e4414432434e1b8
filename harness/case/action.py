"""What every step is: :class:`Action` (what it checks, defines and needs, how it
runs), how a refusal names where the step was written, the captures a step may
take (:func:`column`, :func:`group`, :func:`json_path`) and :class:`Expect`, what
must hold of a finished command. The step families under :mod:`harness.case.steps`
build on this; :class:`~harness.case.run.Run` is what they act on.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import inspect
import json
import math
import os
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, ParamSpec, TypeAlias, TypeVar

from ..command import Result
from .placeholders import (
    Expectation,
    fill_expectation,
    found,
    shown,
)

if TYPE_CHECKING:
    from .run import Run

__all__ = [
    "MAX_TIMEOUT",
    "Action",
    "Capture",
    "CaseError",
    "Column",
    "Expect",
    "Group",
    "JsonPath",
    "column",
    "group",
    "json_path",
    "written_in",
]


class CaseError(ValueError):
    """A case that cannot be run as written; the message says what to change."""


# --------------------------------------------------------------------------- where a step is built

# A step is built before the Case that holds it (Python evaluates the list
# first), so a bad value raises before any Case knows of it. To name the case
# anyway, the refusal reads the source at the call site: the ``Case(...)`` call
# the step is written in, its name, and the index in its ``steps``/``probes``.

_HARNESS = str(Path(__file__).resolve().parent.parent)


def _call_site() -> tuple[str, int, int | None] | None:
    """(file, line, column) of the first call outside the harness: where a step is written."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith((_HARNESS, "<")) or name.endswith(os.sep + "dataclasses.py")):
            positions = list(frame.f_code.co_positions())
            index = frame.f_lasti // 2
            if 0 <= index < len(positions):
                line, _, col, _ = positions[index]
                if line is not None:
                    return name, line, col
            return name, frame.f_lineno, None
        frame = frame.f_back  # type: ignore[assignment]
    return None


@functools.lru_cache(maxsize=32)
def _module(filename: str) -> ast.Module | None:
    try:
        return ast.parse(Path(filename).read_bytes(), filename)
    except (OSError, SyntaxError, ValueError):
        return None


def _spans(node: ast.expr, line: int, col: int | None) -> bool:
    end_line = node.end_lineno or node.lineno
    if col is None:
        return node.lineno <= line <= end_line
    end_col = node.end_col_offset if node.end_col_offset is not None else 1 << 30
    return (node.lineno, node.col_offset) <= (line, col) < (end_line, end_col)


def _callee(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _case_of(filename: str, line: int, col: int | None) -> tuple[str, str] | None:
    """The name of the ``Case(...)`` written around (line, col) and where in it: ``steps[3]``."""
    tree = _module(filename)
    if tree is None:
        return None
    found: ast.Call | None = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _callee(node.func) == "Case" and _spans(node, line, col):
            if found is None or _spans(found, node.lineno, node.col_offset):
                found = node  # the innermost
    if found is None:
        return None
    given = [k.value for k in found.keywords if k.arg == "name"] + found.args[:1]
    name = "?"
    if given and isinstance(given[0], ast.Constant) and isinstance(given[0].value, str):
        name = given[0].value
    for keyword in found.keywords:
        if keyword.arg in ("steps", "probes") and isinstance(keyword.value, (ast.List, ast.Tuple)):
            spread = False
            for index, element in enumerate(keyword.value.elts):
                if _spans(element, line, col):
                    return name, f"{keyword.arg}[{'…' if spread else index}]"
                spread = spread or isinstance(element, ast.Starred)
    return name, "a step"


def written_in(kind: str) -> str:
    """``case 'NAME': steps[3] (kind) at file:line: `` for a step written in a Case, else ``''``."""
    site = _call_site()
    if site is None:
        return ""
    filename, line, col = site
    found = _case_of(filename, line, col)
    if found is None:
        return ""
    try:
        shown = os.path.relpath(filename)
    except ValueError:
        shown = filename
    name, where = found
    return f"case {name!r}: {where} ({kind}) at {shown}:{line}: "


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _builds(cls: type[Action]) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """A step factory whose wrong keyword (or argument count) is a CaseError naming the case."""

    def decorate(factory: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(factory)
        params = signature.parameters.values()
        allowed = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
        if any(p.kind is p.VAR_KEYWORD for p in params):
            fields = dataclasses.fields(cls)  # type: ignore[arg-type]
            allowed |= {f.name for f in fields if f.init} - {"args"}

        @functools.wraps(factory)
        def built(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            for keyword in kwargs:
                if keyword not in allowed:
                    close = difflib.get_close_matches(keyword, allowed, n=1)
                    hint = f" (did you mean {close[0]!r}?)" if close else ""
                    raise CaseError(
                        f"{written_in(cls.kind) or _at()}{factory.__name__}() takes no keyword "
                        f"{keyword!r}{hint}; it takes {', '.join(sorted(allowed))}"
                    )
            try:
                signature.bind(*args, **kwargs)
            except TypeError as err:
                raise CaseError(f"{written_in(cls.kind) or _at()}{err}") from None
            return factory(*args, **kwargs)

        return built

    return decorate


def _at() -> str:
    site = _call_site()
    return f"{os.path.relpath(site[0])}:{site[1]}: " if site is not None else ""


# --------------------------------------------------------------------------- captures


@dataclass(frozen=True)
class Column:
    """Capture a cell of a column table: ``column("ID")`` is the first row's ID.

    ``where={"STATUS": "landed"}`` picks the first row whose cells match;
    ``row=-1`` the last. Columns are sliced at the header's offsets, as
    contenox's tabwriter lays them out.
    """

    name: str
    row: int = 0
    where: Mapping[str, str] = field(default_factory=dict)
    stream: str = "stdout"

    def read(self, text: str) -> str:
        lines = [line for line in text.splitlines() if line.strip()]
        header_at = next((i for i, line in enumerate(lines) if _has_word(line, self.name)), None)
        if header_at is None:
            raise AssertionError(f"no table with a {self.name!r} column in:\n{text}")
        header = lines[header_at]
        starts = [m.start() for m in re.finditer(r"\S+(?: \S+)*", header)]
        names = [m.group(0) for m in re.finditer(r"\S+(?: \S+)*", header)]
        rows = []
        for line in lines[header_at + 1 :]:
            cells = {}
            for i, (name, start) in enumerate(zip(names, starts, strict=True)):
                end = starts[i + 1] if i + 1 < len(starts) else None
                cells[name] = line[start:end].strip()
            rows.append(cells)
        picked = [r for r in rows if all(r.get(k) == v for k, v in self.where.items())]
        try:
            return picked[self.row][self.name]
        except (IndexError, KeyError):
            raise AssertionError(
                f"no row {self.row} with {dict(self.where)} in the {self.name!r} table:\n{text}"
            ) from None


def _has_word(line: str, word: str) -> bool:
    return re.search(rf"(^|\s){re.escape(word)}(\s|$)", line) is not None


@dataclass(frozen=True)
class Group:
    """Capture a regex group: ``group(r"Mission (\\S+) finished", 1, stream="notices")``."""

    pattern: re.Pattern[str]
    index: int | str = 1
    stream: str = "stdout"

    def read(self, text: str) -> str:
        match = self.pattern.search(text)
        if match is None:
            raise AssertionError(f"/{self.pattern.pattern}/ does not match:\n{text}")
        return str(match.group(self.index))


@dataclass(frozen=True)
class JsonPath:
    """Capture a value of JSON output: ``json_path("backends.0.name")`` (dots, list indexes)."""

    path: str
    stream: str = "stdout"

    def read(self, text: str) -> str:
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError as e:
            raise AssertionError(f"not JSON ({e}):\n{text}") from None
        for part in self.path.split("."):
            try:
                value = value[int(part)] if isinstance(value, list) else value[part]
            except (KeyError, IndexError, ValueError, TypeError):
                raise AssertionError(f"JSON has no {self.path!r} (at {part!r}):\n{text}") from None
        return value if isinstance(value, str) else json.dumps(value)


Capture: TypeAlias = "Column | Group | JsonPath"


def column(name: str, row: int = 0, *, where: Mapping[str, str] | None = None) -> Column:
    """Capture the ``name`` cell of a table row (the first, or the first matching ``where``)."""
    return Column(name=name, row=row, where=dict(where or {}))


def group(pattern: str | re.Pattern[str], index: int | str = 1, *, stream: str = "stdout") -> Group:
    """Capture group ``index`` of the first match of ``pattern`` in ``stream``."""
    return Group(pattern=re.compile(pattern), index=index, stream=stream)


def json_path(path: str, *, stream: str = "stdout") -> JsonPath:
    """Capture the value at ``path`` (``a.b.0.c``) of JSON output."""
    return JsonPath(path=path, stream=stream)


# --------------------------------------------------------------------------- base


class Action:
    """What every step type answers: what it checks, defines and needs, and how it runs."""

    kind: ClassVar[str] = "step"

    def texts(self) -> Iterator[tuple[str, object]]:
        """(field, value) for every string-valued field placeholders may appear in."""
        return iter(())

    def defines(self) -> set[str]:
        """Capture names this step makes available to later steps."""
        return set()

    def starts(self) -> str | None:
        """The background name this step starts, if any."""
        return None

    def needs_process(self) -> str | None:
        """The background name this step acts on, if any."""
        return None

    def needs_capture(self) -> str | None:
        """A capture this step needs by name (not through a placeholder)."""
        return None

    def serves(self) -> str | None:
        """The server name this step starts (``serve(...)``), if any."""
        return None

    def needs_server(self) -> str | None:
        """The server name this step reads (``received(...)``), if any."""
        return None

    def __post_init__(self) -> None:
        self._prepare()
        self.check(self._problem)
        _check_text(self, self._problem)

    def _prepare(self) -> None:
        """Normalise sequences to tuples, mappings to dicts."""

    def _problem(self, name: str, message: str) -> CaseError:
        return CaseError(f"{written_in(self.kind)}{type(self).__name__} {name} {message}")

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        """Raise ``problem(field, message)`` for anything malformed."""

    def execute(self, run: Run) -> None:
        raise NotImplementedError


def _tuple(value: object) -> tuple[Any, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, bytes, re.Pattern)):
        return (value,)  # caught by check(): a bare string is a mistake
    return tuple(value)  # type: ignore[arg-type]


def _relative(path: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    if not isinstance(path, str) or not path:
        raise problem(name, f"must be a relative path, got {path!r}")
    parts = path.replace("\\", "/").split("/")
    if path.startswith("/") or ".." in parts:
        raise problem(name, f"{path!r} leaves the scratch root; give a path inside it")


# A wait longer than this is no timeout at all: a case that hangs would hang the run.
MAX_TIMEOUT = 24 * 3600.0


def _timeout(value: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise problem(name, f"must be a number of seconds, got {value!r}")
    if not math.isfinite(value) or value <= 0:
        raise problem(name, f"must be positive seconds, a finite number, got {value!r}")
    if value > MAX_TIMEOUT:
        raise problem(
            name, f"must be at most a day ({MAX_TIMEOUT:.0f} seconds), got {value!r}: no timeout"
        )


def _unencodable(value: object) -> tuple[str, int] | None:
    """The first string in ``value`` (nested in lists, tuples, dicts, regexes) that is not
    text UTF-8 can encode (a lone surrogate), and the index of the bad character."""
    if isinstance(value, re.Pattern):
        value = value.pattern
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as err:
            return value, err.start
        return None
    items: Iterator[object]
    if isinstance(value, Mapping):
        items = (x for pair in value.items() for x in pair)
    elif isinstance(value, (list, tuple)):
        items = iter(value)
    else:
        return None
    for item in items:
        bad = _unencodable(item)
        if bad is not None:
            return bad
    return None


def _check_text(action: object, problem: Callable[[str, str], CaseError]) -> None:
    """Every string field of a step is text: a lone surrogate fails when it is written out."""
    if not dataclasses.is_dataclass(action):
        return
    for f in dataclasses.fields(action):
        bad = _unencodable(getattr(action, f.name))
        if bad is not None:
            text, at = bad
            raise problem(
                f.name,
                f"holds {text[at]!r} at index {at} of {text!r}: a lone surrogate, which is no "
                "text (UTF-8 cannot encode it); write the character itself",
            )


def _strings(value: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    if isinstance(value, str):
        raise problem(name, f"must be a list of strings, not the string {value!r}")
    for item in _tuple(value):
        if not isinstance(item, str):
            raise problem(name, f"must hold strings, got {item!r} ({type(item).__name__})")


# --------------------------------------------------------------------------- expectations


_STREAMS = ("stdout", "stderr", "notices")


@dataclass(frozen=True, kw_only=True)
class Expect:
    """What must hold of a finished command (a step, a waited background run, a response).

    ``exit_code`` is a number, ``"non-zero"``, or None (any). ``*_has`` must
    appear and ``*_lacks`` must not, in stdout, the whole stderr, or notices
    (stderr without the structured log lines); each is a string or a
    compiled regex, and may hold ``{capture}`` placeholders. ``capture``
    names values read from the result for later steps.
    """

    exit_code: int | Literal["non-zero"] | None = 0
    stdout_has: Sequence[Expectation] = ()
    stdout_lacks: Sequence[Expectation] = ()
    stderr_has: Sequence[Expectation] = ()
    stderr_lacks: Sequence[Expectation] = ()
    notices_has: Sequence[Expectation] = ()
    notices_lacks: Sequence[Expectation] = ()
    capture: Mapping[str, Capture] = field(default_factory=dict)

    def _normalise(self) -> None:
        for f in dataclasses.fields(self):
            if f.name.endswith(("_has", "_lacks")):
                value = getattr(self, f.name)
                if not isinstance(value, (str, re.Pattern)):
                    object.__setattr__(self, f.name, _tuple(value))
        object.__setattr__(self, "capture", dict(self.capture))

    def _expect_texts(self) -> Iterator[tuple[str, object]]:
        for f in dataclasses.fields(self):
            if f.name.endswith(("_has", "_lacks")):
                for item in _tuple(getattr(self, f.name)):
                    yield f.name, item

    def _check_expect(self, problem: Callable[[str, str], CaseError]) -> None:
        code = self.exit_code
        if not (code is None or code == "non-zero" or (type(code) is int)):
            raise problem("exit_code", f'must be a number, "non-zero" or None, got {code!r}')
        for f in dataclasses.fields(self):
            if f.name.endswith(("_has", "_lacks")):
                value = getattr(self, f.name)
                if isinstance(value, (str, re.Pattern)):
                    raise problem(
                        f.name, f"must be a list of strings or regexes, not the single {value!r}"
                    )
                for item in value:
                    if not isinstance(item, (str, re.Pattern)):
                        raise problem(f.name, f"must hold strings or regexes, got {item!r}")
        for name, how in self.capture.items():
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_]\w*", name):
                raise problem("capture", f"a capture name must be an identifier, got {name!r}")
            if not isinstance(how, (Column, Group, JsonPath)):
                raise problem(
                    f"capture[{name!r}]",
                    f"must be column(...), group(...) or json_path(...), got {how!r}",
                )
            if how.stream not in _STREAMS:
                raise problem(f"capture[{name!r}]", f"stream must be one of {_STREAMS}")

    def unmet(self, result: Result, captures: Mapping[str, str] | None = None) -> list[str]:
        """Every expectation ``result`` does not meet, as sentences."""
        captures = captures or {}
        problems = []
        code = self.exit_code
        if code == "non-zero":
            if result.exit_code == 0:
                problems.append("expected a non-zero exit code, got 0")
        elif code is not None and result.exit_code != code:
            problems.append(f"expected exit code {code}, got {result.exit_code}")
        streams = {"stdout": result.stdout, "stderr": result.stderr, "notices": result.notices}
        for stream, text in streams.items():
            for needle in getattr(self, f"{stream}_has"):
                needle = fill_expectation(needle, captures)
                if not found(needle, text):
                    problems.append(f"expected {stream} to contain {shown(needle)}")
            for needle in getattr(self, f"{stream}_lacks"):
                needle = fill_expectation(needle, captures)
                if found(needle, text):
                    problems.append(f"expected {stream} not to contain {shown(needle)}")
        return problems

    def captured(self, result: Result) -> dict[str, str]:
        """The values ``capture`` names, read from ``result``."""
        streams = {"stdout": result.stdout, "stderr": result.stderr, "notices": result.notices}
        return {name: how.read(streams[how.stream]) for name, how in self.capture.items()}

    def defines(self) -> set[str]:
        return set(self.capture)
