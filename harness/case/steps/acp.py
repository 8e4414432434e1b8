"""ACP: :class:`Prompt`, a prompt over the case's ACP session with a ruling policy, and
:class:`AcpTurn`, a probe of what the last prompt's turn carried.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from ...acp import AcpClient, open_acp
from ..action import (
    Action,
    CaseError,
    _builds,
    _relative,
    _strings,
    _timeout,
    _tuple,
)
from ..placeholders import (
    Expectation,
    fill_expectation,
    found,
    shown,
)
from .probes import _NOTHING, Probe, unmet

if TYPE_CHECKING:
    from ..run import Run


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
        client = _session(run, self)
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


def _session(run: Run, first: Prompt) -> AcpClient:
    """The case's ACP session, opened by its first prompt (with that prompt's options)."""
    if run.client is None:
        run.client = open_acp(
            run.instance,
            *first.acp_args,
            subcommand=first.acp_command,
            refuse_writes=first.refuse_writes,
            env={k: run.fill(v) for k, v in first.acp_env.items()} or None,
            capabilities=first.acp_capabilities,
        )
    return run.client


@_builds(Prompt)
def prompt(text: str, **expect: Any) -> Prompt:
    """A prompt over the case's ACP session: ``prompt("hi", text_has=["Hello."])``."""
    return Prompt(text=text, **expect)


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
