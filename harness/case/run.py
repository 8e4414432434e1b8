"""One Case's run in progress: :class:`Run`, what its steps act on.

The steps (:mod:`harness.case.steps`) read and write it: the captures so far,
the background processes by name, the ACP session and the terminal a step
opened, the servers started. :func:`harness.case.runner.run_case` makes one per
case and hands it to each step in turn. It knows the case only by its name and
an expectation only by its shape (:class:`Named`, :class:`Expecting`): the
steps and the Case are built on this module, not under it.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..command import Result
from ..instance import Instance
from ..terminal import Terminal, open_terminal
from . import containment
from .containment import Escape, Kind
from .placeholders import fill

if TYPE_CHECKING:
    from ..acp import AcpClient, PromptTurn
    from ..process import Process

__all__ = ["Expecting", "Named", "Run"]


class Named(Protocol):
    """What a run needs of its case: the name a refusal gives."""

    @property
    def name(self) -> str: ...


class Expecting(Protocol):
    """What :meth:`Run.check` needs of an expectation (:class:`harness.case.action.Expect`)."""

    def unmet(self, result: Result, captures: Mapping[str, str]) -> list[str]: ...

    def captured(self, result: Result) -> dict[str, str]: ...


@dataclass
class Run:
    """One Case's run in progress: what its steps captured and opened."""

    case: Named
    instance: Instance
    captures: dict[str, str] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    last_background: str | None = None
    dialog_paths: dict[str, Path] = field(default_factory=dict)
    # The case's ACP session, opened by its first prompt(...).
    client: AcpClient | None = None
    term: Terminal | None = None
    # serve(...)'s servers by name: their handles, for received(...) to read.
    servers: dict[str, Any] = field(default_factory=dict)
    # The turn the last prompt(...) returned, for acp_turn(...) to read.
    last_turn: PromptTurn | None = None
    # The step running, as a refusal names it: "steps[3] (write)".
    where: str = "setup"

    def path(
        self, name: str, template: str, base: Path, kind: Kind = "file", *, fill: bool = True
    ) -> Path:
        """Where the path field ``name`` (``template``, filled) really is, inside the root.

        Resolved now, after the placeholders are filled, following links
        (:func:`harness.case.containment.resolve`); anything outside the
        case's scratch root fails the case, naming the step, the field, the
        filled value and where it led.
        """
        value = self.fill(template) if fill else template
        try:
            return containment.resolve(self.instance.root, base, value, kind)
        except Escape as err:
            raise self.refusal(name, template, value, err.reason, err.resolved) from None

    @contextlib.contextmanager
    def touching(self, name: str, template: str, *, fill: bool = True) -> Iterator[None]:
        """Turn a refusal or an OS error of a file operation into the case's failure."""
        __tracebackhide__ = True
        try:
            yield
        except Escape as err:
            value = self.fill(template) if fill else template
            raise self.refusal(name, template, value, err.reason, err.resolved) from None
        except (OSError, ValueError) as err:
            value = self.fill(template) if fill else template
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            raise self.refusal(name, template, value, f"cannot be used: {reason}", None) from None

    def refusal(
        self, name: str, template: str, value: str, reason: str, resolved: str | None
    ) -> AssertionError:
        """The failure of a step whose path field ``name`` cannot be touched."""
        shown = repr(value) if value == template else f"{template!r} (filled: {value!r})"
        led = f" (it resolves to {resolved})" if resolved is not None else ""
        return AssertionError(
            f"case {self.case.name!r}: {self.where} {name} {shown} {reason}{led}; refused: "
            f"a step touches only what lies inside the case's scratch root {self.instance.root}"
        )

    def fill(self, text: str) -> str:
        """``text`` with its ``{capture}`` placeholders filled."""
        return fill(text, self.captures)

    def remember(self, name: str, value: str) -> None:
        """Keep a captured value; an id-like one reads as ``[NAME]`` in the transcript."""
        known = value in self.captures.values()
        self.captures[name] = value
        if not known and len(value) >= 8 and re.fullmatch(r"[\w.:-]+", value):
            self.instance.recorder.name(value, f"[{name.upper()}]")

    def check(self, expect: Expecting, result: Result) -> None:
        """Fail unless ``result`` meets ``expect``; then keep what it captures."""
        __tracebackhide__ = True
        problems = expect.unmet(result, self.captures)
        if problems:
            raise AssertionError(
                "step failed:\n  - "
                + "\n  - ".join(problems)
                + f"\n{result.describe()}{self.demand_note()}"
            )
        for name, value in expect.captured(result).items():
            self.remember(name, value)

    def demand_note(self) -> str:
        return "".join(
            f"\n  model demand ({n}): {d.summary()}"
            for n, d in self.instance.recorder.demands().items()
        )

    def terminal(self, args: Sequence[str]) -> Terminal:
        """The case's terminal, opened (``contenox <args>``) by the first screen step."""
        if self.term is None:
            self.term = open_terminal(self.instance, *args)
        return self.term

    def close(self) -> None:
        """Close the ACP session as an editor quitting does (its exit lands in the transcript)."""
        if self.client is not None:
            client, self.client = self.client, None
            code = client.close()
            if code != 0:
                raise AssertionError(
                    f"the ACP agent exited {code} when the editor closed it\n{client.describe()}"
                )
