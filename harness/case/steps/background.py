"""Background and signals: :class:`Background` starts a contenox command under a name,
:class:`Wait` ends it with the expectations of a command, :class:`Signal` signals it.
"""

from __future__ import annotations

import re
import signal as _signal
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..action import (
    Action,
    CaseError,
    Expect,
    _builds,
    _strings,
    _timeout,
    _tuple,
)
from ..placeholders import (
    Expectation,
    fill_expectation,
)

if TYPE_CHECKING:
    from ..run import Run


# --------------------------------------------------------------------------- background


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
        from ...process import start_contenox

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
