"""Terminals: :class:`Screen` and :class:`Keys`, ``beam`` (or any command) under a pty,
asserted on the screen a person sees.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from ..action import (
    Action,
    CaseError,
    _builds,
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

if TYPE_CHECKING:
    from ..run import Run


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
