"""Asks: :class:`AwaitAsk` captures a pending ask by name, :class:`Respond` gives the
verdict on it through ``approvals respond``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..action import (
    Action,
    CaseError,
    Expect,
    _builds,
    _timeout,
)

if TYPE_CHECKING:
    from ..run import Run


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
        from ... import probes

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
