"""Model demand: how many turns the scripted backend served, read from what contenox logs.

contenox logs every model call the scripted-test backend serves as an
operation on stderr, naming ``subject=scripted-test``, the model and the
script path; a call that found the script exhausted logs ``Operation failed``
with the same ``op_id`` and the turn it asked for::

    msg="Operation started" operation=stream subject=scripted-test op_id=op-1 … script=/w/d.json
    msg="Operation failed" operation=stream subject=scripted-test op_id=op-2 error="… is
      exhausted: stream asked for turn 3 but the script holds 3 turn(s); …"

The cursor belongs to the script file for the life of one process, so each
process starts at turn 0: the turns a case served are the most any one of its
processes served.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = ["Demand", "served_calls"]

_STARTED = re.compile(
    r'msg="Operation started" operation=(?P<op>\S+) subject=scripted-test '
    r"op_id=(?P<id>\S+).*? script=(?P<script>\S+)"
)
_FAILED = re.compile(
    r'msg="Operation failed" operation=\S+ subject=scripted-test op_id=(?P<id>\S+)'
)
_EXHAUSTED = re.compile(
    r'scripted-test script \\?"(?P<script>[^"\\]+)\\?" is exhausted: (?P<op>\w+) asked for turn '
    r"(?P<turn>\d+) but the script holds (?P<held>\d+) turn"
)


def served_calls(stderr: str, script: str) -> int:
    """Model calls one process's stderr shows the scripted backend serving from ``script``."""
    started = {m["id"] for m in _STARTED.finditer(stderr) if m["script"] == script}
    failed = {m["id"] for m in _FAILED.finditer(stderr)}
    return len(started - failed)


@dataclass(frozen=True)
class Demand:
    """Turns a dialog holds against turns the run served, and any exhaustion."""

    script: str
    held: int
    served: int
    exhausted_at: int | None = None
    # Trailing turns contenox may or may not ask for (Turn(optional=True)).
    optional: int = 0

    @classmethod
    def from_stderrs(
        cls,
        stderrs: Iterable[str],
        script: str,
        held: int,
        *,
        optional: int = 0,
        at_least: int = 0,
    ) -> Demand:
        """Read the demand from stderrs; ``at_least`` is what another witness (state) saw."""
        served = at_least
        exhausted: int | None = None
        for stderr in stderrs:
            served = max(served, served_calls(stderr, script))
            for m in _EXHAUSTED.finditer(stderr):
                if m["script"] == script and exhausted is None:
                    exhausted = int(m["turn"])
        return cls(
            script=script,
            held=held,
            served=min(served, held),
            exhausted_at=exhausted,
            optional=optional,
        )

    @property
    def required(self) -> int:
        """Turns the run must be served: all but the trailing optional ones."""
        return self.held - self.optional

    @property
    def never_asked(self) -> bool:
        """contenox asked for no turn at all (a backend registered only to be listed, refused)."""
        return self.served == 0 and self.exhausted_at is None

    @property
    def unserved(self) -> int:
        """Required turns the run was never served, once it asked for any."""
        if self.never_asked:
            return 0
        return max(0, self.required - self.served)

    def problem(self) -> str | None:
        """A sentence when the run did not consume exactly the dialog; None when it did."""
        if self.exhausted_at is not None:
            return (
                f"the run went past the end of {self.script}: it asked for "
                f"turns[{self.exhausted_at}] but the dialog holds {self.held} turn(s); "
                "add the missing turn or shorten the run"
            )
        if self.unserved:
            first = self.served
            return (
                f"the run took another branch: {self.unserved} of {self.required} turns "
                f"{'was' if self.unserved == 1 else 'were'} never served (turns[{first}] onward "
                f"of {self.script}); fix the dialog, or mark a closing turn "
                "Turn(..., optional=True) if contenox may or may not ask for it"
            )
        return None

    def summary(self) -> str:
        """A stable sentence: an optional turn served or not reads the same."""
        if self.never_asked:
            return f"no served call seen ({self.held} turn{'s' if self.held != 1 else ''} held)"
        if self.optional and self.exhausted_at is None and self.served >= self.required:
            if not self.required:
                return f"no turn required; {self.held} optional"
            return f"{self.required} of {self.held} turns served, the last {self.optional} optional"
        text = f"{self.served} of {self.held} turns served"
        if self.exhausted_at is not None:
            text += f"; exhausted asking for turns[{self.exhausted_at}]"
        return text
