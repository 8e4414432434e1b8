"""The step types a :class:`~harness.case.Case` is composed of: a small closed set, one job each.

Every step is a frozen dataclass; a Case's ``steps`` run in order against one
instance and each writes what it did to ``instance.recorder``:

- :class:`Step` (``step(...)``): a contenox command and what must hold of it,
  optionally capturing values (``capture={"mission": column("ID")}``) that
  later steps use as ``"{mission}"``;
- :class:`Background` / :class:`Wait` / :class:`Signal`: a contenox command
  started under a name, ended later with the same expectations as a command;
- :class:`AwaitAsk` / :class:`Respond`: a pending ask, captured by name, and
  the verdict given on it through ``approvals respond``;
- :class:`Write` / :class:`EditDialog`: a file changed between steps;
- :class:`Prompt`: a prompt over an ACP session, with a ruling policy;
- :class:`Screen` / :class:`Keys`: ``beam`` (or any command) under a terminal;
- :class:`Probe`: a value read through contenox's own commands, with an
  optional typed expectation.

Defined from the start: ``{work}``, ``{home}``, ``{tmp}`` and ``{root}`` (the
scratch workspace, HOME, TMPDIR and the root above them), ``{dialog}`` (the
default backend's dialog file) and ``{dialog_<backend>}``.

Everything is checked when the Case is built (see ``harness.case.model``); the
runner (``harness.case.runner``) only executes, and each path a step touches is
resolved again when it runs (``harness.case.containment``).
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
import signal as _signal
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, ParamSpec, TypeAlias, TypeVar

from ..checks import check_step
from ..command import Result
from ..dialog import Script, turn_line
from . import containment

if TYPE_CHECKING:
    from ..instance import Instance
    from .runner import Run

__all__ = [
    "AcpTurn",
    "Action",
    "AwaitAsk",
    "Background",
    "CaseError",
    "Column",
    "EditDialog",
    "Expectation",
    "Group",
    "JsonPath",
    "Keys",
    "Link",
    "Predicate",
    "Probe",
    "Prompt",
    "Remove",
    "Respond",
    "Screen",
    "Signal",
    "Step",
    "Wait",
    "Write",
    "acp_turn",
    "await_ask",
    "background",
    "column",
    "edit_dialog",
    "group",
    "json_path",
    "keys",
    "link",
    "output_of",
    "probe",
    "prompt",
    "remove",
    "respond",
    "satisfies",
    "screen",
    "signal",
    "step",
    "wait",
    "write",
]

Expectation: TypeAlias = "str | re.Pattern[str]"
# ``${NAME}`` is an environment variable contenox expands (a login body's
# ``${E2E_USER}``), never a capture: the ``$`` keeps it literal.
PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")


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


# --------------------------------------------------------------------------- placeholders


def placeholders(value: object) -> set[str]:
    """The ``{name}`` placeholders in a string or a regex's pattern."""
    if isinstance(value, re.Pattern):
        value = value.pattern
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    return set()


def fill(value: str, captures: Mapping[str, str]) -> str:
    """``value`` with every ``{name}`` replaced by the captured value."""
    return PLACEHOLDER.sub(lambda m: captures.get(m.group(1), m.group(0)), value)


def fill_expectation(value: Expectation, captures: Mapping[str, str]) -> Expectation:
    """An expectation with its placeholders filled (escaped, inside a regex)."""
    if isinstance(value, re.Pattern):
        pattern = PLACEHOLDER.sub(
            lambda m: re.escape(captures[m.group(1)]) if m.group(1) in captures else m.group(0),
            value.pattern,
        )
        return re.compile(pattern, value.flags)
    return fill(value, captures)


def found(needle: Expectation, text: str) -> bool:
    """A string is a substring; a regex is searched."""
    if isinstance(needle, re.Pattern):
        return needle.search(text) is not None
    return needle in text


def shown(needle: Expectation) -> str:
    return f"/{needle.pattern}/" if isinstance(needle, re.Pattern) else repr(needle)


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


# --------------------------------------------------------------------------- commands


@dataclass(frozen=True, kw_only=True)
class Step(Expect, Action):
    """One contenox command and what must hold of it (see :class:`Expect`).

    ``full_stderr`` puts the whole redacted stderr in the transcript, not only
    the notices. ``args``, ``stdin`` and ``env`` values may hold placeholders.
    """

    kind: ClassVar[str] = "step"
    args: Sequence[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    full_stderr: bool = False
    # Where the command runs, relative to the scratch root (``work/src``,
    # ``tmp/other-project``); created if absent. None: the workspace.
    cwd: str | None = None

    def _prepare(self) -> None:
        # Types, NUL bytes and env overrides that would leave the scratch root,
        # checked on the fields as written, before they are normalised.
        try:
            check_step(self, CaseError)
        except CaseError as err:
            raise CaseError(f"{written_in(self.kind)}{err}") from None
        if not isinstance(self.args, str):
            object.__setattr__(self, "args", _tuple(self.args))
        object.__setattr__(self, "env", dict(self.env))
        self._normalise()

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if isinstance(self.args, str):
            raise problem(
                "args",
                f"must be a list of arguments, not one string {self.args!r}; "
                "write step('run', '--policy', 'run', 'the task')",
            )
        if not self.args:
            raise problem(
                "args", "is empty: a Step needs a contenox command, e.g. step('mission', 'list')"
            )
        _strings(self.args, "args", problem)
        if self.stdin is not None and not isinstance(self.stdin, str):
            raise problem("stdin", f"must be a string, got {self.stdin!r}")
        for key, value in self.env.items():
            if not isinstance(value, str):
                raise problem(f"env[{key!r}]", f"must be a string, got {value!r}")
        _timeout(self.timeout, "timeout", problem)
        if self.cwd is not None:
            _relative(self.cwd, "cwd", problem)
        self._check_expect(problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        for arg in self.args:
            yield "args", arg
        yield "stdin", self.stdin
        for key, value in self.env.items():
            yield f"env[{key!r}]", value
        yield "cwd", self.cwd
        yield from self._expect_texts()

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        cwd = None
        if self.cwd is not None:
            # The transcript says where the command ran: a bare argv would read
            # as if it ran in the workspace.
            rel = run.fill(self.cwd)
            root = run.instance.root
            with run.touching("cwd", self.cwd):
                cwd = run.path("cwd", self.cwd, root, "dir")
                containment.make_dirs(cwd, root)
                if not cwd.is_dir():
                    raise containment.Escape("is not a directory", str(cwd))
            run.instance.recorder.note(f"in {rel}/")
        result = run.instance.contenox(
            *[run.fill(a) for a in self.args],
            stdin=run.fill(self.stdin) if self.stdin is not None else None,
            env={k: run.fill(v) for k, v in self.env.items()},
            cwd=cwd,
            timeout=self.timeout,
            full_stderr=self.full_stderr,
        )
        run.check(self, result)


@_builds(Step)
def step(*args: str, **expect: Any) -> Step:
    """A :class:`Step` for ``contenox <args>``; keywords are its expectations.

    >>> step("mission", "list", capture={"mission": column("ID")})
    >>> step("mission", "show", "{mission}", stdout_has=["landed"])
    """
    return Step(args=args, **expect)


@dataclass(frozen=True, kw_only=True)
class Background(Action):
    """Start ``contenox <args>`` under ``name``; a later :class:`Wait` ends it."""

    kind: ClassVar[str] = "background"
    name: str
    args: Sequence[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # Wait until ``ready_stream`` shows this before the next step (the run is
    # under way). stderr by default, where a run announces itself; a host such
    # as `serve` prints its status screen on stdout.
    ready: Expectation | None = None
    ready_stream: Literal["stdout", "stderr"] = "stderr"
    timeout: float = 30.0

    def _prepare(self) -> None:
        if not isinstance(self.args, str):
            object.__setattr__(self, "args", _tuple(self.args))
        object.__setattr__(self, "env", dict(self.env))

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise problem("name", f"must be a non-empty string, got {self.name!r}")
        if isinstance(self.args, str) or not self.args:
            raise problem("args", f"must be a non-empty list of arguments, got {self.args!r}")
        _strings(self.args, "args", problem)
        if self.stdin is not None and not isinstance(self.stdin, str):
            raise problem("stdin", f"must be a string, got {self.stdin!r}")
        for key, value in self.env.items():
            if not isinstance(value, str):
                raise problem(f"env[{key!r}]", f"must be a string, got {value!r}")
        if self.ready is not None and not isinstance(self.ready, (str, re.Pattern)):
            raise problem("ready", f"must be a string or a regex, got {self.ready!r}")
        if self.ready_stream not in ("stdout", "stderr"):
            raise problem(
                "ready_stream", f'must be "stdout" or "stderr", got {self.ready_stream!r}'
            )
        _timeout(self.timeout, "timeout", problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        for arg in self.args:
            yield "args", arg
        yield "stdin", self.stdin
        for key, value in self.env.items():
            yield f"env[{key!r}]", value
        yield "ready", self.ready

    def starts(self) -> str | None:
        return self.name

    def execute(self, run: Run) -> None:
        from ..process import start_contenox

        proc = start_contenox(
            run.instance,
            *[run.fill(a) for a in self.args],
            env={k: run.fill(v) for k, v in self.env.items()},
            stdin=self.stdin is not None,
        )
        if self.stdin is not None:
            proc.write(run.fill(self.stdin))
            proc.close_stdin()
        run.processes[self.name] = proc
        run.last_background = self.name
        if self.ready is not None:
            proc.wait_for_output(
                fill_expectation(self.ready, run.captures),
                stream=self.ready_stream,
                timeout=self.timeout,
            )


@_builds(Background)
def background(name: str, *args: str, stdin: str | None = None, **kw: Any) -> Background:
    """Start ``contenox <args>`` in the background under ``name``.

    >>> background("run", "run", "--policy", "run", "echo hi")
    """
    return Background(name=name, args=args, stdin=stdin, **kw)


@dataclass(frozen=True, kw_only=True)
class Wait(Expect, Action):
    """End the background run ``name``: wait for it, then check it as a command step."""

    kind: ClassVar[str] = "wait"
    name: str
    timeout: float = 90.0

    def _prepare(self) -> None:
        self._normalise()

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _timeout(self.timeout, "timeout", problem)
        self._check_expect(problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        yield from self._expect_texts()

    def needs_process(self) -> str | None:
        return self.name

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        result = run.processes[self.name].wait(timeout=self.timeout)
        run.check(self, result)


@_builds(Wait)
def wait(name: str, *, timeout: float = 90.0, **expect: Any) -> Wait:
    """Wait for background run ``name`` to end; keywords are a command step's expectations."""
    return Wait(name=name, timeout=timeout, **expect)


@dataclass(frozen=True, kw_only=True)
class Signal(Action):
    """Send a signal to the process group of background run ``name``."""

    kind: ClassVar[str] = "signal"
    name: str
    signal: int = _signal.SIGINT

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if isinstance(self.signal, bool) or not isinstance(self.signal, int):
            raise problem("signal", f"must be a signal number (signal.SIGINT), got {self.signal!r}")
        if self.signal not in _signal.valid_signals():
            raise problem(
                "signal",
                f"{self.signal!r} is no signal this platform defines; give one such as "
                "signal.SIGINT or signal.SIGTERM",
            )

    def needs_process(self) -> str | None:
        return self.name

    def execute(self, run: Run) -> None:
        sig = _signal.Signals(self.signal)
        run.instance.recorder.note(f"{sig.name} to {self.name}")
        run.processes[self.name].signal(sig)


@_builds(Signal)
def signal(name: str, sig: int = _signal.SIGINT) -> Signal:
    """Send ``sig`` (SIGINT by default, as Ctrl-C does) to background run ``name``."""
    return Signal(name=name, signal=sig)


# --------------------------------------------------------------------------- asks


@dataclass(frozen=True, kw_only=True)
class AwaitAsk(Action):
    """Wait for a pending ask (of ``tool``/``kind``) and capture its id as ``name``.

    With a background run (``run``, else the latest one started) the inbox is
    read only after that run logged its own "ask raised" line, as
    :func:`harness.probes.await_approval` does. The ask's mission is captured
    too, as ``<name>_mission``.
    """

    kind: ClassVar[str] = "await_ask"
    name: str
    tool: str | None = None
    ask_kind: str | None = None
    run: str | None = None
    timeout: float = 30.0

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.name, str) or not re.fullmatch(r"[A-Za-z_]\w*", self.name):
            raise problem("name", f"must be an identifier (it is a capture), got {self.name!r}")
        for name in ("tool", "ask_kind", "run"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise problem(name, f"must be a string, got {value!r}")
        _timeout(self.timeout, "timeout", problem)

    def defines(self) -> set[str]:
        return {self.name, f"{self.name}_mission"}

    def needs_process(self) -> str | None:
        return self.run

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        from .. import probes

        proc_name = self.run or run.last_background
        proc = run.processes.get(proc_name) if proc_name else None
        with run.instance.recorder.probing():
            ask = probes.await_approval(
                run.instance, self.timeout, tool=self.tool, kind=self.ask_kind, run=proc
            )
        run.instance.recorder.note(f"ask raised: {ask.kind} {ask.tool} {ask.summary}".rstrip())
        run.remember(self.name, ask.id)
        run.remember(f"{self.name}_mission", ask.mission)


@_builds(AwaitAsk)
def await_ask(
    name: str,
    *,
    tool: str | None = None,
    kind: str | None = None,
    run: str | None = None,
    timeout: float = 30.0,
) -> AwaitAsk:
    """Wait for an ask of ``tool``/``kind`` and capture its id as ``{name}``."""
    return AwaitAsk(name=name, tool=tool, ask_kind=kind, run=run, timeout=timeout)


@dataclass(frozen=True, kw_only=True)
class Respond(Expect, Action):
    """``contenox approvals respond {name} --approve|--deny|--answer …`` and what must hold."""

    kind: ClassVar[str] = "respond"
    name: str
    verdict: Literal["approve", "deny", "answer"]
    answer: str | None = None

    def _prepare(self) -> None:
        self._normalise()

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if self.verdict not in ("approve", "deny", "answer"):
            raise problem("verdict", f'must be "approve", "deny" or answer=…, got {self.verdict!r}')
        if (self.verdict == "answer") != isinstance(self.answer, str):
            raise problem("answer", "give answer='…' (a string) alone, or approve/deny alone")
        self._check_expect(problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "answer", self.answer
        yield from self._expect_texts()

    def needs_capture(self) -> str | None:
        return self.name

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        flag = [f"--{self.verdict}"]
        if self.answer is not None:
            flag.append(run.fill(self.answer))
        result = run.instance.contenox("approvals", "respond", run.captures[self.name], *flag)
        run.check(self, result)


@_builds(Respond)
def respond(
    name: str,
    verdict: Literal["approve", "deny"] | None = None,
    *,
    answer: str | None = None,
    **expect: Any,
) -> Respond:
    """Answer the ask captured as ``name``: ``respond("ask", "approve")``, ``answer="…"``."""
    chosen: Any = "answer" if answer is not None and verdict is None else verdict
    return Respond(name=name, verdict=chosen, answer=answer, **expect)


# --------------------------------------------------------------------------- files


def _relative(path: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    if not isinstance(path, str) or not path:
        raise problem(name, f"must be a relative path, got {path!r}")
    parts = path.replace("\\", "/").split("/")
    if path.startswith("/") or ".." in parts:
        raise problem(name, f"{path!r} leaves the scratch root; give a path inside it")


def names_a_directory(path: str) -> bool:
    """Whether a relative path names a directory as written (``.``, ``a/``, ``a/.``)."""
    return path.replace("\\", "/").split("/")[-1] in ("", ".", "..")


def _file(path: object, name: str, problem: Callable[[str, str], CaseError]) -> None:
    """A relative path inside the scratch root that names a file, not a directory."""
    _relative(path, name, problem)
    if isinstance(path, str) and names_a_directory(path):
        raise problem(
            name, f"{path!r} names a directory, not a file; give the file's name, e.g. 'notes.txt'"
        )


@dataclass(frozen=True, kw_only=True)
class Write(Action):
    """Write ``text`` to ``path`` in the workspace (``home=True``: under ``~/.contenox``)."""

    kind: ClassVar[str] = "write"
    path: str
    text: str
    home: bool = False

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if not isinstance(self.text, str):
            raise problem("text", f"must be a string, got {type(self.text).__name__}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "text", self.text

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        base = run.instance.home / ".contenox" if self.home else run.instance.work
        with run.touching("path", self.path):
            target = run.path("path", self.path, base)
            containment.write(target, run.instance.root, run.fill(self.text))
        run.instance.recorder.note(f"wrote ~/.contenox/{rel}" if self.home else f"wrote {rel}")


@_builds(Write)
def write(path: str, text: str, *, home: bool = False) -> Write:
    """Change a file between steps: ``write("notes.txt", "hello")``."""
    return Write(path=path, text=text, home=home)


_UNDER = {"work": "the workspace", "contenox": "~/.contenox", "home": "the scratch $HOME"}


def _base(run: Run, under: str) -> Path:
    """The directory an ``under=`` names."""
    instance = run.instance
    return {
        "work": instance.work,
        "contenox": instance.home / ".contenox",
        "home": instance.home,
        "root": instance.root,
    }[under]


@dataclass(frozen=True, kw_only=True)
class Edit(Action):
    """Change a file ``contenox init`` (or a step) wrote, or create one outside the workspace.

    ``path`` is relative to ``under``: ``"work"`` (the workspace), ``"contenox"``
    (``~/.contenox``) or ``"home"`` (the scratch ``$HOME``). Each regex of
    ``replace`` must match the file at least once (else the step fails naming
    it) and every match is replaced; then ``append`` is added at the end (a
    missing file starts empty, so ``append`` alone creates one).
    ``executable=True`` then makes the file executable (mode 0755): a planted
    program, a tool to pin.
    """

    kind: ClassVar[str] = "edit"
    path: str
    append: str = ""
    replace: Mapping[str, str] = field(default_factory=dict)
    under: str = "work"
    executable: bool = False

    def _prepare(self) -> None:
        object.__setattr__(self, "replace", dict(self.replace))

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if self.under not in _UNDER:
            raise problem("under", f"must be one of {sorted(_UNDER)}, got {self.under!r}")
        if not isinstance(self.append, str):
            raise problem("append", f"must be a string, got {type(self.append).__name__}")
        for pattern, text in self.replace.items():
            if not isinstance(pattern, str) or not isinstance(text, str):
                raise problem("replace", f"must map regex → text, got {pattern!r}: {text!r}")
            try:
                re.compile(pattern)
            except re.error as err:
                raise problem("replace", f"{pattern!r} is not a regex: {err}") from None
        if not self.append and not self.replace and not self.executable:
            raise problem("append", "must be given (or replace={regex: text}): it changes nothing")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "append", self.append
        for text in self.replace.values():
            yield "replace", text

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        root = run.instance.root
        with run.touching("path", self.path):
            target = run.path("path", self.path, _base(run, self.under))
            text = containment.read_text(target, root) or ""
        for pattern, replacement in self.replace.items():
            text, count = re.subn(pattern, run.fill(replacement), text)
            if not count:
                raise AssertionError(
                    f"edit {rel!r} in {_UNDER[self.under]}: {pattern!r} matches nothing in\n{text}"
                )
        text += run.fill(self.append)
        with run.touching("path", self.path):
            containment.write(target, root, text, executable=self.executable)
        shown_path = {"work": "", "contenox": "~/.contenox/", "home": "~/"}[self.under] + rel
        changes = [f"replaced {p!r}" for p in self.replace] + (["appended"] if self.append else [])
        changes += ["made executable"] if self.executable else []
        run.instance.recorder.note(f"edited {shown_path}: {', '.join(changes)}")


@_builds(Edit)
def edit(
    path: str,
    *,
    append: str = "",
    replace: Mapping[str, str] | None = None,
    under: str = "work",
    executable: bool = False,
) -> Edit:
    """Change a file between steps: ``edit("agents.toml", append=TABLE, under="contenox")``."""
    return Edit(
        path=path,
        append=append,
        replace=dict(replace or {}),
        under=under,
        executable=executable,
    )


@dataclass(frozen=True, kw_only=True)
class Remove(Action):
    """Delete a file between steps (a declaration retired, a copy taken back).

    ``under`` is ``"work"``, ``"contenox"`` (``~/.contenox``) or ``"home"``,
    as for :class:`Edit`; a file that is not there fails the step, naming it.
    """

    kind: ClassVar[str] = "remove"
    path: str
    under: str = "work"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if self.under not in _UNDER:
            raise problem("under", f"must be one of {sorted(_UNDER)}, got {self.under!r}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        rel = run.fill(self.path)
        # The entry itself: a link is removed, never what it points at.
        with run.touching("path", self.path):
            target = run.path("path", self.path, _base(run, self.under), "entry")
            removed = containment.unlink(target, run.instance.root)
        if not removed:
            raise AssertionError(f"remove {rel!r} in {_UNDER[self.under]}: no such file")
        shown_path = {"work": "", "contenox": "~/.contenox/", "home": "~/"}[self.under] + rel
        run.instance.recorder.note(f"removed {shown_path}")


@_builds(Remove)
def remove(path: str, *, under: str = "work") -> Remove:
    """Delete a file between steps: ``remove("agents/biller.md", under="contenox")``."""
    return Remove(path=path, under=under)


@dataclass(frozen=True, kw_only=True)
class EditDialog(Action):
    """Rewrite the dialog file of backend ``backend`` with ``script`` (contenox rewinds it)."""

    kind: ClassVar[str] = "edit_dialog"
    script: Script
    backend: str = "scripted"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.script, Script):
            raise problem("script", f"must be a Script, got {self.script!r}")

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        written = run.dialog_paths[self.backend]
        # The dialog file may have been removed and made a link since it was registered.
        path = run.path("dialog", written.name, written.parent, fill=False)
        with run.touching("dialog", str(written), fill=False):
            self.script.write(path)
        run.instance.recorder.note(
            f"edited dialog {self.backend}: " + " / ".join(turn_line(t) for t in self.script.turns)
        )


@_builds(EditDialog)
def edit_dialog(script: Script, *, backend: str = "scripted") -> EditDialog:
    """Rewrite a registered dialog's file between steps."""
    return EditDialog(script=script, backend=backend)


# --------------------------------------------------------------------------- ACP


Ruling: TypeAlias = 'Literal["allow", "deny", "defer", "cancel"]'


@dataclass(frozen=True, kw_only=True)
class Prompt(Action):
    """Send ``text`` over the case's ACP session (opened by the first prompt) and check the turn.

    ``permission`` rules every permission request of this turn (``allow``,
    ``deny``, ``defer``, ``cancel``). ``stop_reason`` (None: any), ``text_has``,
    ``files_written`` (paths relative to the workspace, in order),
    ``requests`` (agent→client methods that must be among those seen),
    ``requests_lack`` (methods that must not be) and ``permission_requests``
    (how many the turn raised, exactly) are what must hold.
    ``acp_command`` (``acp`` or ``acpx``), ``acp_args``, ``acp_env`` (extra
    environment of the agent, placeholders allowed), ``acp_capabilities`` (the
    client capabilities declared; None: all) and ``refuse_writes`` apply when
    the session opens.
    """

    kind: ClassVar[str] = "prompt"
    text: str
    permission: Ruling = "allow"
    stop_reason: str | None = "end_turn"
    text_has: Sequence[Expectation] = ()
    text_lacks: Sequence[Expectation] = ()
    files_written: Sequence[str] | None = None
    files_read: Sequence[str] | None = None
    terminal_commands: Sequence[str] | None = None
    tool_output_has: Sequence[Expectation] = ()
    requests: Sequence[str] = ()
    permission_requests: int | None = None
    requests_lack: Sequence[str] = ()
    timeout: float | None = None
    acp_command: str = "acp"
    acp_args: Sequence[str] = ()
    acp_env: Mapping[str, str] = field(default_factory=dict)
    # The clientCapabilities the editor declares (None: full); JetBrains declares no terminal.
    acp_capabilities: Mapping[str, Any] | None = None
    refuse_writes: bool = False

    def _prepare(self) -> None:
        for name in (
            "text_has",
            "text_lacks",
            "tool_output_has",
            "requests",
            "requests_lack",
            "acp_args",
        ):
            value = getattr(self, name)
            if not isinstance(value, (str, re.Pattern)):
                object.__setattr__(self, name, _tuple(value))
        for name in ("files_written", "files_read", "terminal_commands"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                object.__setattr__(self, name, _tuple(value))
        object.__setattr__(self, "acp_env", dict(self.acp_env))

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.text, str):
            raise problem("text", f"must be a string, got {self.text!r}")
        if self.permission not in ("allow", "deny", "defer", "cancel"):
            raise problem(
                "permission", f"must be allow, deny, defer or cancel: {self.permission!r}"
            )
        for name in ("text_has", "text_lacks", "tool_output_has"):
            value = getattr(self, name)
            if isinstance(value, (str, re.Pattern)):
                raise problem(name, f"must be a list, not the single {value!r}; wrap it")
            for item in value:
                if not isinstance(item, (str, re.Pattern)):
                    raise problem(name, f"must hold strings or regexes, got {item!r}")
        _strings(self.requests, "requests", problem)
        count = self.permission_requests
        if count is not None and (type(count) is not int or count < 0):
            raise problem("permission_requests", f"must be a count (0, 1, …), got {count!r}")
        _strings(self.requests_lack, "requests_lack", problem)
        _strings(self.acp_args, "acp_args", problem)
        for key, value in self.acp_env.items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise problem(f"acp_env[{key!r}]", f"must be a string, got {value!r}")
        if self.acp_capabilities is not None and not isinstance(self.acp_capabilities, Mapping):
            raise problem(
                "acp_capabilities", f"must be a mapping or None, got {self.acp_capabilities!r}"
            )
        if self.acp_command not in ("acp", "acpx"):
            raise problem("acp_command", f"must be 'acp' or 'acpx', got {self.acp_command!r}")
        for name in ("files_written", "files_read"):
            paths = getattr(self, name)
            if paths is not None:
                _strings(paths, name, problem)
                for path in paths:
                    _relative(path, name, problem)
        if self.terminal_commands is not None:
            _strings(self.terminal_commands, "terminal_commands", problem)
        _timeout(self.timeout, "timeout", problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "text", self.text
        for key, value in self.acp_env.items():
            yield f"acp_env[{key!r}]", value
        for name in ("text_has", "text_lacks", "tool_output_has"):
            for item in getattr(self, name):
                yield name, item

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        client = run.acp(self)
        client.permission = self.permission
        turn = client.prompt(run.fill(self.text), timeout=self.timeout)
        run.last_turn = turn
        problems = []
        if self.stop_reason is not None and turn.stop_reason != self.stop_reason:
            problems.append(f"expected stop reason {self.stop_reason!r}, got {turn.stop_reason!r}")
        for needle in self.text_has:
            needle = fill_expectation(needle, run.captures)
            if not found(needle, turn.text):
                problems.append(f"expected the agent's text to contain {shown(needle)}")
        for needle in self.text_lacks:
            needle = fill_expectation(needle, run.captures)
            if found(needle, turn.text):
                problems.append(f"expected the agent's text not to contain {shown(needle)}")
        work = run.instance.work
        for name, paths in (("written", turn.paths_written), ("read", turn.paths_read)):
            expected = getattr(self, f"files_{name}")
            if expected is not None:
                want = [str(work / p) for p in expected]
                got = [str(work / p) for p in paths]  # an absolute path stays itself
                if got != want:
                    problems.append(f"expected files {name} {want}, got {paths}")
        if self.terminal_commands is not None:
            if list(turn.terminal_commands) != list(self.terminal_commands):
                problems.append(
                    f"expected terminal commands {list(self.terminal_commands)}, "
                    f"got {turn.terminal_commands}"
                )
        outputs = str(turn.tool_outputs)
        for needle in self.tool_output_has:
            needle = fill_expectation(needle, run.captures)
            if not found(needle, outputs):
                problems.append(f"expected a tool output to contain {shown(needle)}")
        if self.permission_requests is not None:
            asked = len(turn.permission_requests)
            if asked != self.permission_requests:
                problems.append(
                    f"expected {self.permission_requests} permission request(s), got {asked}"
                )
        seen = [r.method for r in turn.requests]
        for method in self.requests:
            if method not in seen:
                problems.append(f"expected a {method} request, saw {seen}")
        for method in self.requests_lack:
            if method in seen:
                problems.append(f"expected no {method} request, saw {seen}")
        if problems:
            raise AssertionError(
                "prompt failed:\n  - " + "\n  - ".join(problems) + "\n" + turn.describe()
            )


@_builds(Prompt)
def prompt(text: str, **expect: Any) -> Prompt:
    """A prompt over the case's ACP session: ``prompt("hi", text_has=["Hello."])``."""
    return Prompt(text=text, **expect)


# --------------------------------------------------------------------------- terminals


@dataclass(frozen=True, kw_only=True)
class Screen(Action):
    """Wait until the terminal shows ``shows`` (the first screen step opens ``contenox <args>``).

    ``exits=N`` instead waits for the program to exit with N (after a
    ``keys("/quit")``, say). ``lacks`` must not be on the screen at that moment.
    """

    kind: ClassVar[str] = "screen"
    shows: Expectation | None = None
    lacks: Sequence[Expectation] = ()
    exits: int | None = None
    args: Sequence[str] = ("beam", "--plain")
    timeout: float = 60.0

    def _prepare(self) -> None:
        if not isinstance(self.args, str):
            object.__setattr__(self, "args", _tuple(self.args))
        if not isinstance(self.lacks, (str, re.Pattern)):
            object.__setattr__(self, "lacks", _tuple(self.lacks))

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if (self.shows is None) == (self.exits is None):
            raise problem("shows", "give shows='…' (text to wait for) or exits=N, one of them")
        if self.shows is not None and not isinstance(self.shows, (str, re.Pattern)):
            raise problem("shows", f"must be a string or a regex, got {self.shows!r}")
        if isinstance(self.lacks, (str, re.Pattern)):
            raise problem("lacks", f"must be a list, not the single {self.lacks!r}; wrap it")
        for item in self.lacks:
            if not isinstance(item, (str, re.Pattern)):
                raise problem("lacks", f"must hold strings or regexes, got {item!r}")
        if isinstance(self.args, str):
            raise problem("args", f"must be a list of arguments, not one string {self.args!r}")
        _strings(self.args, "args", problem)
        if self.exits is not None and type(self.exits) is not int:
            raise problem("exits", f"must be an exit code, got {self.exits!r}")
        _timeout(self.timeout, "timeout", problem)

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "shows", self.shows
        for item in self.lacks:
            yield "lacks", item

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        term = run.terminal(self.args)
        if self.exits is not None:
            code = term.wait_exit(timeout=self.timeout)
            if code != self.exits:
                raise AssertionError(f"expected exit {self.exits}, got {code}\n{term.describe()}")
            return
        assert self.shows is not None
        needle = fill_expectation(self.shows, run.captures)
        screen = term.wait_for(needle, timeout=self.timeout)
        for lack in self.lacks:
            lack = fill_expectation(lack, run.captures)
            if found(lack, screen):
                raise AssertionError(
                    f"expected the screen not to show {shown(lack)}\n{term.describe()}"
                )


@_builds(Screen)
def screen(
    shows: Expectation | None = None,
    *,
    exits: int | None = None,
    lacks: Sequence[Expectation] = (),
    args: Sequence[str] = ("beam", "--plain"),
    timeout: float = 60.0,
) -> Screen:
    """Wait for the terminal to show ``shows`` (or to exit with ``exits``)."""
    return Screen(shows=shows, exits=exits, lacks=lacks, args=args, timeout=timeout)


@dataclass(frozen=True, kw_only=True)
class Keys(Action):
    """Type into the case's terminal: ``text`` then Enter (``enter=False``: no Enter)."""

    kind: ClassVar[str] = "keys"
    text: str
    enter: bool = True

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.text, str):
            raise problem("text", f"must be a string, got {self.text!r}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "text", self.text

    def execute(self, run: Run) -> None:
        if run.term is None:
            raise AssertionError("keys() before any screen(): no terminal is open")
        text = run.fill(self.text)
        if self.enter:
            run.term.send_line(text)
        else:
            run.term.send(text)


@_builds(Keys)
def keys(text: str, *, enter: bool = True) -> Keys:
    """Type ``text`` (and Enter) into the terminal the case opened."""
    return Keys(text=text, enter=enter)


# --------------------------------------------------------------------------- probes


@dataclass(frozen=True)
class Predicate:
    """An expectation on a probe's value: ``check(value)`` must be true; ``message`` says why."""

    check: Callable[[Any], bool]
    message: str


def satisfies(check: Callable[[Any], bool], message: str) -> Predicate:
    """``probe("asks", probes.approvals, expect=satisfies(lambda v: not v, "nothing pending"))``."""
    return Predicate(check=check, message=message)


_NOTHING: Any = object()


def unmet(expect: object, value: object) -> str | None:
    """What ``value`` was expected to be, if it is not: ``expect`` is a value to equal or
    :func:`satisfies`; None when it holds (or nothing is expected)."""
    if expect is _NOTHING:
        return None
    if isinstance(expect, Predicate):
        return None if expect.check(value) else expect.message
    return None if value == expect else repr(expect)


@dataclass(frozen=True, kw_only=True)
class Probe(Action):
    """State read through contenox's own commands; its value lands in the transcript.

    ``expect`` is a value the read must equal, or :func:`satisfies` (a
    predicate and the promise it checks). In ``Case.steps`` it runs at that
    point; in ``Case.probes``, after the steps and the model-demand check.
    ``capture="name"`` keeps a text value as ``{name}`` for later steps (a
    marker read before a command, compared after it).
    """

    kind: ClassVar[str] = "probe"
    name: str
    read: Callable[..., object]
    args: Sequence[str] = ()
    expect: object = _NOTHING
    capture: str | None = None

    def _prepare(self) -> None:
        if not isinstance(self.args, str):
            object.__setattr__(self, "args", _tuple(self.args))

    def texts(self) -> Iterator[tuple[str, object]]:
        for arg in self.args:
            yield "args", arg

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise problem("name", f"must be a non-empty string, got {self.name!r}")
        if not callable(self.read):
            raise problem("read", f"must be a function of the instance, got {self.read!r}")
        if isinstance(self.expect, Predicate) and not callable(self.expect.check):
            raise problem("expect", "satisfies() needs a function")
        _strings(self.args, "args", problem)
        if self.capture is not None and (
            not isinstance(self.capture, str) or not re.fullmatch(r"[A-Za-z_]\w*", self.capture)
        ):
            raise problem("capture", f"a capture name must be an identifier, got {self.capture!r}")

    def defines(self) -> set[str]:
        return {self.capture} if self.capture is not None else set()

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        recorder = run.instance.recorder
        args = [run.fill(a) for a in self.args]
        with recorder.probing():
            value = self.read(run.instance, *args)
        recorder.probe(self.name, args, value)
        if self.capture is not None:
            if not isinstance(value, str):
                raise AssertionError(
                    f"probe {self.name!r}: capture={self.capture!r} needs a text value, "
                    f"got {value!r}"
                )
            run.captures[self.capture] = value
        if self.expect is _NOTHING:
            return
        if isinstance(self.expect, Predicate):
            if not self.expect.check(value):
                raise AssertionError(
                    f"probe {self.name!r}: expected {self.expect.message}; got {value!r}"
                )
        elif value != self.expect:
            raise AssertionError(f"probe {self.name!r}: expected {self.expect!r}, got {value!r}")


@_builds(Probe)
def probe(
    name: str,
    read: Callable[..., object],
    *args: str,
    expect: object = _NOTHING,
    capture: str | None = None,
) -> Probe:
    """A named probe; ``read(instance, *args)`` returns text, a dataclass, or a list of them.

    ``args`` may hold placeholders: ``probe("mission", probes.mission, "{mission}")``;
    ``capture="marker"`` keeps a text value as ``{marker}``.

    >>> probe("pending asks", probes.approvals, expect=[])
    """
    return Probe(name=name, read=read, args=args, expect=expect, capture=capture)


@_builds(Probe)
def output_of(*args: str, expect: object = _NOTHING) -> Probe:
    """The stdout of ``contenox <args>`` (which must exit 0), as captured state."""

    def read(instance: Instance) -> object:
        return instance.must(*args).stdout

    return Probe(name=" ".join(args), read=read, expect=expect)


@dataclass(frozen=True, kw_only=True)
class AcpTurn(Probe):
    """What the last ``prompt``'s turn carried, read by ``read(turn)`` (a ``PromptTurn``).

    For what a ``prompt`` expectation does not name: the order and ids of the
    ``session/update`` notifications, a permission request's params, the
    thought channel. Its value lands in the transcript as a probe named
    ``name``; ``expect`` is a value it must equal, or :func:`satisfies`.
    """

    kind: ClassVar[str] = "acp_turn"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not callable(self.read):
            raise problem("read", f"must be a function of the prompt's turn, got {self.read!r}")
        if self.capture is not None:
            raise problem("capture", "is for probe(...) only: this reading is not kept")
        super().check(problem)

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        turn = run.last_turn
        if turn is None:
            raise AssertionError(f"acp_turn {self.name!r}: no prompt has run yet")
        value = self.read(turn)
        run.instance.recorder.probe(f"{self.name} (the last ACP turn)", [], value)
        wanted = unmet(self.expect, value)
        if wanted is not None:
            raise AssertionError(
                f"acp_turn {self.name!r}: expected {wanted}; got {value!r}\n{turn.describe()}"
            )


@_builds(AcpTurn)
def acp_turn(name: str, read: Callable[[Any], object], *, expect: object = _NOTHING) -> AcpTurn:
    """A probe of the last ACP prompt's turn: ``acp_turn("cards", lambda t: t.update_kinds,
    expect=[...])``. Put it after a ``prompt(...)``."""
    return AcpTurn(name=name, read=read, expect=expect)


@dataclass(frozen=True, kw_only=True)
class Link(Action):
    """Make ``path`` a symbolic link to ``target`` (both relative to ``under``'s directory,
    ``target`` may be ``{placeholder}``-absolute such as ``{home}/outside.txt``).

    ``under`` is ``"work"`` (the workspace) or ``"root"`` (the scratch root
    above it). A link made this way may point anywhere: that is what a case
    about links that escape the workspace needs. Its own path must lie inside
    the scratch root; one pointing outside is noted as such in the transcript,
    and no later step writes, edits or removes through it (each resolves its
    path when it runs, :mod:`harness.case.containment`).
    """

    kind: ClassVar[str] = "link"
    path: str
    target: str
    under: str = "work"

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        _file(self.path, "path", problem)
        if not isinstance(self.target, str) or not self.target:
            raise problem("target", f"must be a path, got {self.target!r}")
        if self.under not in ("work", "root"):
            raise problem("under", f"must be 'work' or 'root', got {self.under!r}")

    def texts(self) -> Iterator[tuple[str, object]]:
        yield "path", self.path
        yield "target", self.target

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        root = run.instance.root
        rel, target = run.fill(self.path), run.fill(self.target)
        with run.touching("target", self.target):
            containment.check_text(target)
        with run.touching("path", self.path):
            path = run.path("path", self.path, _base(run, self.under), "entry")
            containment.symlink(path, root, target)
        # Where it points may be anywhere; nothing is written, edited or removed
        # through it (each of those resolves its path), and the transcript says so.
        points = os.path.realpath(os.path.join(path.parent, target))
        outside = (
            ""
            if containment.inside(points, os.path.realpath(root))
            else " (outside the scratch root)"
        )
        run.instance.recorder.note(f"linked {rel} -> {target}{outside}")


@_builds(Link)
def link(path: str, target: str, *, under: str = "work") -> Link:
    """A symbolic link between steps: ``link("link.txt", "{root}/outside.txt")``."""
    return Link(path=path, target=target, under=under)
