"""Probes: :class:`Probe`, a value read through contenox's own commands with an optional
typed expectation (a value it must equal, or :func:`satisfies`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..action import (
    Action,
    CaseError,
    _builds,
    _strings,
    _tuple,
)

if TYPE_CHECKING:
    from ...instance import Instance
    from ..run import Run


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
