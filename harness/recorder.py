"""The transcript of one instance: what every layer of a case did, in order, redacted once.

Every :class:`~harness.instance.Instance` owns a :class:`Recorder`. Each layer
writes to it as it goes:

- ``Instance.run/contenox/must``: argv, exit code, stdout, notices (and the
  whole stderr when a step asks);
- ``use_script``: the dialog, by backend name;
- ``start_contenox``: argv at start; exit code, stdout and notices at the end;
- ``open_terminal``: the screen at each ``wait_for`` checkpoint and at exit;
- ``open_acp``: per prompt, what a reader needs (stop reason, agent text, tool
  calls with their final status, agent→client requests and the rulings);
- ``harness.probes``: the typed value each probe returns, by name.

Nothing is redacted until :meth:`Recorder.transcript`, which walks the entries
in order with one :class:`~harness.redact.Redactor`: an id is the same
placeholder everywhere, numbered by first appearance in the transcript. A
case can name a captured value instead (``recorder.name(ask.id, "[ASK]")``).

Polling is not a transcript: commands run inside :func:`quiet` (every
``wait_until``) or inside a probe are not recorded one by one.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .demand import Demand
from .dialog import turn_line
from .quiet import is_quiet, quiet
from .redact import Redactor
from .result import Result, notices

if TYPE_CHECKING:
    from .dialog import Script

__all__ = ["Recorder", "quiet", "recorded_probe"]

F = TypeVar("F", bound=Callable[..., Any])


def _shell(argv: Sequence[str], binary: str) -> str:
    words = ["contenox" if a == binary else a for a in argv]
    return " ".join(w if re.fullmatch(r"[\w@%+=:,./\[\]-]+", w) else shlex.quote(w) for w in words)


def plain(value: object) -> object:
    """Dataclasses, mappings and sequences as plain YAML-able values.

    A dataclass field hidden from its repr (a probe's ``raw`` JSON) stays out;
    a ``duration`` number (nanoseconds a step took) reads ``[DURATION]``. A type
    may say how it reads: ``__transcript__(value)`` for one value,
    ``__transcript_many__(values)`` for a list of them (captured units read as
    the messages each adds, not the whole history again).
    """
    own = getattr(type(value), "__transcript__", None)
    if own is not None:
        return plain(own(value))
    if isinstance(value, (list, tuple)) and value:
        many = getattr(type(value[0]), "__transcript_many__", None)
        if many is not None and all(type(v) is type(value[0]) for v in value):
            return plain(many(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _timed(f.name, plain(getattr(value, f.name)))
            for f in dataclasses.fields(value)
            if f.repr
        }
    if isinstance(value, Mapping):
        return {str(k): _timed(str(k), plain(v)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _timed(key: str, value: object) -> object:
    if key == "duration" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return "[DURATION]"
    return value


def _redact_all(value: object, redactor: Redactor) -> object:
    if isinstance(value, str):
        return redactor(value)
    if isinstance(value, Mapping):
        return {redactor(str(k)): _redact_all(v, redactor) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_all(v, redactor) for v in value]
    return value


# beam's status bar gains its token counter (``0/131072 (0%)``) once the backend reports
# the model's context, a moment after the first reply or not before the screen is read:
# two clean runs drew the same screen with and without it. Screens are recorded without
# it; a case that checks the counter reads the screen itself.
_TOKEN_COUNTER = re.compile(r"(?m)(?<=\S)  \d+/\d+ \(\d+%\)(?=  )")


@dataclasses.dataclass
class _Dialog:
    backend: str
    path: str
    script: Script
    key: str  # the backend name, made unique within the test (its golden's name)


class Recorder:
    """One instance's transcript, built as the case runs; redacted when read.

    >>> instance.recorder.name(ask.id, "[ASK]")
    >>> instance.recorder.transcript()["transcript"][0]
    {'run': 'contenox init', 'exit': 0, 'stdout': '…'}
    """

    def __init__(self, paths: Mapping[str, Path], binary: Path) -> None:
        self.paths = dict(paths)
        self.binary = str(binary)
        self.entries: list[dict[str, object]] = []
        self.dialogs: list[_Dialog] = []
        self.extra: dict[str, str] = {}
        self._named: dict[str, str] = {}
        self._stderrs: list[str] = []
        self._probing = 0
        self._setup = 0
        # The test's promise (a Case's name, a function's docstring) heading the transcript.
        self.title: str | None = None
        # False only for a Case that still says serves_all_turns=False.
        self.demand_checked = True
        # The demand check_demand computed (with what the captured state shows):
        # the transcript's head reports this one, not a re-count of the logs alone.
        self.checked_demands: dict[str, Demand] | None = None

    # -- what the layers call ------------------------------------------------

    @property
    def recording(self) -> bool:
        return not is_quiet() and self._probing == 0

    def name(self, value: str, placeholder: str) -> None:
        """Show ``value`` as ``placeholder`` everywhere in the transcript (e.g. ``"[ASK]"``)."""
        if not value:
            raise ValueError(f"cannot name an empty value {placeholder}")
        self._named[value] = placeholder

    def redact(self, pattern: str, placeholder: str) -> None:
        """Replace every match of the regex ``pattern`` with ``placeholder``."""
        self.extra[pattern] = placeholder

    def command(
        self,
        result: Result,
        *,
        stdin: str | bytes | None = None,
        full_stderr: bool = False,
        env: Mapping[str, str] | None = None,
    ) -> None:
        """A finished command: argv, the environment the case gave it, exit code,
        stdout and notices (or the whole stderr)."""
        self._stderrs.append(result.stderr)
        if not self.recording:
            return
        entry: dict[str, object] = {"run": _shell(result.argv, self.binary)}
        if env:
            entry["env"] = dict(env)
        if isinstance(stdin, str) and stdin:
            entry["stdin"] = stdin
        entry["exit"] = result.exit_code
        if not self._setup or result.exit_code != 0:
            self._streams(entry, result.stdout, result.stderr, full_stderr)
        self.entries.append(entry)

    def _streams(self, entry: dict[str, object], stdout: str, stderr: str, full: bool) -> None:
        if stdout:
            entry["stdout"] = stdout
        if full and stderr:
            entry["stderr"] = stderr
        elif notices(stderr):
            entry["notices"] = notices(stderr)

    def dialog(self, backend: str, path: Path, script: Script) -> None:
        """A dialog registered as scripted-test backend ``backend``."""
        keys = {d.key for d in self.dialogs}
        key, n = backend, 1
        while key in keys:
            n += 1
            key = f"{backend}-{n}"
        self.dialogs.append(_Dialog(backend, str(path), script, key))
        self.entries.append({"dialog": backend, "turns": [turn_line(t) for t in script.turns]})

    def started(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        """A background process started (with the environment the case gave it)."""
        entry: dict[str, object] = {"start": _shell(argv, self.binary)}
        if env:
            entry["env"] = dict(env)
        self.entries.append(entry)

    def ended(self, result: Result) -> None:
        """A background process ended (waited for, or killed at cleanup)."""
        self._stderrs.append(result.stderr)
        entry: dict[str, object] = {"ended": _shell(result.argv, self.binary)}
        entry["exit"] = result.exit_code
        self._streams(entry, result.stdout, result.stderr, False)
        self.entries.append(entry)

    def ended_acp(self, result: Result) -> None:
        """An ACP agent ended: its exit code and notices (its stdout is the wire, summarised
        per prompt by :meth:`acp_turn`)."""
        self._stderrs.append(result.stderr)
        entry: dict[str, object] = {"ended": _shell(result.argv, self.binary)}
        entry["exit"] = result.exit_code
        self._streams(entry, "", result.stderr, False)
        self.entries.append(entry)

    def screen(self, argv: Sequence[str], checkpoint: str, screen: str) -> None:
        """What a terminal showed at a checkpoint (``wait_for …``, ``exit 0``)."""
        self.entries.append(
            {
                "terminal": _shell(argv, self.binary),
                "at": checkpoint,
                "screen": _TOKEN_COUNTER.sub("", self._unwrap(screen)),
            }
        )

    def _unwrap(self, screen: str) -> str:
        """Undo the terminal's wrapping of a token that holds a scratch path.

        The scratch root's length varies per run and per worker, so where a
        program wraps a long path (beam's ``logs: <HOME>/…`` header) would
        too, and the redacted screen with it.
        """
        roots = sorted((str(p) for p in self.paths.values()), key=len, reverse=True)
        for root in roots:
            wrapped = "\n?".join(re.escape(c) for c in root)
            screen = re.sub(wrapped, lambda _m, r=root: r, screen)  # type: ignore[misc]
        lines: list[str] = []
        for line in screen.split("\n"):
            last = lines[-1].rsplit(" ", 1)[-1] if lines else ""
            if line and not line[0].isspace() and last.startswith(tuple(roots)):
                lines[-1] += line
            else:
                lines.append(line)
        return "\n".join(lines)

    def acp_turn(self, summary: Mapping[str, object]) -> None:
        """One ACP prompt, as :meth:`harness.acp.PromptTurn.summary` puts it for a reader."""
        self.entries.append(dict(summary))

    def acp_schema(self, violation: str) -> None:
        """A message the agent sent broke the ACP schema (the case fails on it)."""
        self.entries.append({"acp_schema": violation})

    def probe(self, name: str, args: Sequence[object], value: object) -> None:
        """A probe's typed value, by name."""
        shown = name + "(" + ", ".join(repr(a) for a in args) + ")" if args else name
        self.entries.append({"probe": shown, "value": plain(value)})

    def note(self, text: str) -> None:
        """A line of the case's own (``instance.recorder.note("the run is waiting")``)."""
        self.entries.append({"note": text})

    # -- model demand ------------------------------------------------------

    def demands(self, in_state: Mapping[str, int] | None = None) -> dict[str, Demand]:
        """Backend → turns its dialog holds against turns served.

        Served is read from every stderr seen (contenox's operation log lines)
        and, when given, ``in_state``: model name → calls the captured state
        shows, used for a dialog whose model name no other dialog shares.
        """
        names = [d.script.model_name for d in self.dialogs]
        out = {}
        for d in self.dialogs:
            model = d.script.model_name
            at_least = (in_state or {}).get(model, 0) if names.count(model) == 1 else 0
            out[d.key] = Demand.from_stderrs(
                self._stderrs,
                d.path,
                len(d.script.turns),
                optional=d.script.optional_turns,
                at_least=at_least,
            )
        return out

    # -- reading -----------------------------------------------------------

    def redactor(self) -> Redactor:
        named = {re.escape(value): placeholder for value, placeholder in self._named.items()}
        return Redactor(paths=self.paths, extra={**named, **self.extra})

    def transcript(self, head: Mapping[str, object] | None = None) -> dict[str, object]:
        """The whole transcript, redacted in order by one redactor."""
        data: dict[str, object] = dict(head or {})
        data["transcript"] = list(self.entries)
        redacted = _redact_all(data, self.redactor())
        assert isinstance(redacted, dict)
        return redacted

    @contextmanager
    def setup(self) -> Iterator[None]:
        """Setup commands (``init``, ``use_script``): argv and exit code only, when they pass."""
        self._setup += 1
        try:
            yield
        finally:
            self._setup -= 1

    @contextmanager
    def probing(self) -> Iterator[bool]:
        """Inside a probe: its commands are not recorded; yields True for the outermost one."""
        outer = self._probing == 0 and not is_quiet()
        self._probing += 1
        try:
            yield outer
        finally:
            self._probing -= 1


def recorded_probe(fn: F) -> F:
    """Wrap a probe ``fn(instance, …)`` so its typed value lands in the instance's transcript."""

    @functools.wraps(fn)
    def wrapper(instance: Any, *args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        recorder: Recorder | None = getattr(instance, "recorder", None)
        if recorder is None:
            return fn(instance, *args, **kwargs)
        with recorder.probing() as outer:
            value = fn(instance, *args, **kwargs)
        if outer:
            if isinstance(value, Result):
                recorder.command(value)
            else:
                shown = [a for a in args if isinstance(a, (str, int))]
                recorder.probe(fn.__name__, shown, value)
        return value

    wrapper.__signature__ = inspect.signature(fn)  # type: ignore[attr-defined]
    return wrapper  # type: ignore[return-value]
