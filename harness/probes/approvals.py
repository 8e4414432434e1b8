"""The ask inbox: ``approvals list``, waiting for an ask, and the actions that answer
one (``approve``, ``deny``, ``answer``)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..instance import Instance
from ..process import Process
from ..result import Result
from ..table import read_table
from ._common import ProbeError, _probe, _source, record_probes

__all__ = [
    "Ask",
    "answer",
    "approvals",
    "approve",
    "await_approval",
    "deny",
    "parse_approvals",
]


@dataclass(frozen=True)
class Ask:
    """One pending ask of ``contenox approvals list``.

    ``kind`` is ``permission`` (answer with approve/deny) or ``question``
    (answer with words). ``summary`` may be empty: a permission ask has none.
    """

    id: str
    kind: str
    tool: str
    summary: str
    mission: str
    age: str
    expires_in: str


_NO_ASKS = ("No pending asks.",)
_ASK_COLUMNS = ["ID", "KIND", "TOOL", "SUMMARY", "MISSION", "AGE", "EXPIRES-IN"]


# What `approvals list` may print before its table or its empty sentence: it is
# also the reconciling read, and it says what it reconciled (hitl.md, troubleshooting.md).
_LEAD_LINE = re.compile(
    r"^(Swept \d+ expired ask\(s\) to their on-timeout verdict\."
    r"|Resumed \d+ stranded run\(s\) to completion in this process\.)\s*$"
)


def _without_lead_lines(text: str) -> str:
    """``text`` from its first line that is neither a reconciliation notice nor blank."""
    lines = text.splitlines(keepends=True)
    skipped = 0
    for line in lines:
        if not (line.strip() == "" or _LEAD_LINE.match(line.rstrip("\n"))):
            break
        skipped += 1
    return "".join(lines[skipped:])


def parse_approvals(text: str, source: str = "contenox approvals list") -> list[Ask]:
    """Rows of ``approvals list``; the lines it leads with when it swept expired asks or
    resumed stranded runs are not the table, and are passed over."""
    rows = read_table(_without_lead_lines(text), _ASK_COLUMNS, empty=_NO_ASKS, source=source)
    return [
        Ask(r["ID"], r["KIND"], r["TOOL"], r["SUMMARY"], r["MISSION"], r["AGE"], r["EXPIRES-IN"])
        for r in rows
    ]


def approvals(instance: Instance, *, limit: int | None = None) -> list[Ask]:
    """``contenox approvals list``: the pending asks, ``[]`` when none.

    Note the command is also contenox's reconciling read (it applies expired
    asks' on_timeout verdicts), so reading it is not free of effects.

    >>> [a.tool for a in approvals(instance)]
    ['native-echo.echo']
    """
    args = ("approvals", "list") + (("--limit", str(limit)) if limit is not None else ())
    return parse_approvals(_probe(instance, *args).stdout, _source(*args))


# What a run logs once the call that raises an ask is under way: a gated call's
# durable ask, or a mission question's tool call.
_ASK_UNDER_WAY = re.compile(
    r'subject="ask raised"|operation=tool_call subject=mission\.mission_ask_attention'
)


def await_approval(
    instance: Instance,
    timeout: float = 30.0,
    *,
    tool: str | None = None,
    kind: str | None = None,
    poll: float = 0.5,
    run: Process | None = None,
    context: Callable[[], str] | None = None,
) -> Ask:
    """Poll ``approvals list`` until an ask (of ``tool``/``kind``, if given) appears.

    Pass the waiting ``run`` (a background :class:`~harness.process.Process`):
    the inbox is then read only once the run has logged that its ask is under
    way, because a second process opening the store while ``run`` starts up
    can make that start fail with SQLITE_BUSY (seen under load). Fails after
    ``timeout`` seconds with the last listing and the run's output (or
    ``context()``), so a run that never raised its ask explains itself.

    >>> run = start_contenox(instance, "run", "--policy", "run", "echo hi")
    >>> ask = await_approval(instance, 30, tool="native-echo.echo", run=run)
    """
    deadline = time.monotonic() + timeout
    if run is not None:
        run.wait_for_output(_ASK_UNDER_WAY, stream="stderr", timeout=timeout)
        context = context or run.describe
    args = ("approvals", "list")
    while True:
        result = _probe(instance, *args)
        for ask in parse_approvals(result.stdout, _source(*args)):
            if (tool is None or ask.tool == tool) and (kind is None or ask.kind == kind):
                return ask
        if time.monotonic() >= deadline:
            wanted = ", ".join(
                f"{k}={v!r}" for k, v in (("tool", tool), ("kind", kind)) if v is not None
            )
            raise ProbeError(
                f"no pending ask{' with ' + wanted if wanted else ''} appeared within "
                f"{timeout:g}s. Is the run still waiting (did it start, did the envelope "
                "gate the call)? The last listing:\n"
                + result.describe(logs=False)
                + (f"\nMeanwhile:\n{context()}" if context is not None else "")
            )
        time.sleep(poll)


def _respond(instance: Instance, ask_id: str, *flag: str) -> Result:
    return _probe(instance, "approvals", "respond", ask_id, *flag)


def approve(instance: Instance, ask_id: str) -> Result:
    """``contenox approvals respond <id> --approve``; fails unless it exits 0.

    >>> approve(instance, ask.id).stdout
    'Verdict recorded for …'
    """
    return _respond(instance, ask_id, "--approve")


def deny(instance: Instance, ask_id: str) -> Result:
    """``contenox approvals respond <id> --deny``; fails unless it exits 0."""
    return _respond(instance, ask_id, "--deny")


def answer(instance: Instance, ask_id: str, text: str) -> Result:
    """``contenox approvals respond <id> --answer <text>``: a question's answer, in words."""
    return _respond(instance, ask_id, "--answer", text)


record_probes(globals(), __all__)
