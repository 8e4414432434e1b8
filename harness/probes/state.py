"""Captured run state, read back: ``state list`` and ``state show`` (steps, ``--raw`` units)
and the system prompts the model was sent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..instance import Instance
from ..table import TableError, read_table
from ._common import ProbeError, _int, _json, _probe, _source, record_probes
from .sessions import CLOSING_CALL, MISSION_FINISHED, SessionMessage

__all__ = [
    "CapturedUnit",
    "StateStep",
    "captured_requests",
    "captured_steps",
    "captured_units",
    "parse_captured_requests",
    "parse_captured_steps",
    "parse_captured_units",
    "system_prompts",
    "system_prompts_of",
    "the_captured_run",
    "units_for_transcript",
]


@dataclass(frozen=True)
class StateStep:
    """One row of ``contenox state show <request-id>``: a task step that ran."""

    task: str
    handler: str
    retry: int
    duration: str
    transition: str
    status: str


@dataclass(frozen=True)
class CapturedUnit:
    """One unit of ``contenox state show <request-id> --raw``.

    ``sent`` is what the model was sent on a chat turn: the output history
    without the reply it produced. ``provider_type`` is empty for steps that
    did not call a model (tool execution).
    """

    task: str
    handler: str
    transition: str
    provider_type: str
    model_name: str
    finish_reason: str
    error: str
    input_messages: tuple[SessionMessage, ...]
    output_messages: tuple[SessionMessage, ...]
    raw: Mapping[str, Any] = field(compare=False, repr=False)

    @staticmethod
    def __transcript_many__(units: Sequence[CapturedUnit]) -> list[dict[str, object]]:
        """How a list of units reads in a transcript (see ``units_for_transcript``)."""
        return units_for_transcript(units)

    @property
    def sent(self) -> tuple[SessionMessage, ...]:
        out = self.output_messages
        if self.handler == "chat_completion" and out and out[-1].role == "assistant":
            return out[:-1]
        return out


_NO_STATE = ("(no captured state",)


def _shown(message: SessionMessage) -> dict[str, str]:
    """One message for a reader: a system prompt by its first line and length."""
    content = message.content
    if message.role == "system":
        lines = content.splitlines()
        first = lines[0] if lines else ""
        content = f"{first} … ({len(lines)} lines)" if len(lines) > 1 else first
    return {message.role: content}


def units_for_transcript(units: Sequence[CapturedUnit]) -> list[dict[str, object]]:
    """Captured units as a reviewer reads them, the same from run to run.

    Each unit is one line (task, handler, transition, who served it) plus the
    messages it added to the history; every unit repeats the whole history
    (system prompt included), so the raw form is a thousand lines of echoes.
    A chat call whose history ends on the ``mission_finish`` result is the
    closing turn that races the unit's teardown: it is named, not recorded.
    """
    out: list[dict[str, object]] = []
    seen: tuple[SessionMessage, ...] = ()
    for unit in units:
        head = f"{unit.task} {unit.handler} -> {unit.transition or '(none)'}"
        entry: dict[str, object] = {"unit": head}
        last_in = unit.input_messages[-1] if unit.input_messages else None
        if (
            unit.handler == "chat_completion"
            and last_in is not None
            and last_in.role == "tool"
            and last_in.content.startswith(MISSION_FINISHED)
        ):
            out.append({"unit": f"{unit.task} {unit.handler}", "closing": CLOSING_CALL})
            continue
        if unit.provider_type or unit.model_name:
            served = f"{unit.provider_type}/{unit.model_name}"
            entry["served_by"] = served + (f" ({unit.finish_reason})" if unit.finish_reason else "")
        if unit.error:
            entry["error"] = unit.error
        messages = unit.output_messages
        keys = [(m.role, m.content) for m in messages]
        known = [(m.role, m.content) for m in seen]
        if keys[: len(known)] == known:
            new = messages[len(known) :]
        else:
            new = tuple(m for m in messages if (m.role, m.content) not in known)
        if new:
            entry["adds"] = [_shown(m) for m in new]
        if messages:
            seen = messages
        out.append(entry)
    # The teardown may come before the closing call is even asked for: then
    # no unit records it, and the transcript names it all the same.
    if seen and seen[-1].role == "tool" and seen[-1].content.startswith(MISSION_FINISHED):
        if not out or "closing" not in out[-1]:
            out.append({"unit": "run-agent chat_completion", "closing": CLOSING_CALL})
    return out


def parse_captured_requests(text: str, source: str = "contenox state list") -> list[str]:
    stripped = text.strip()
    if any(stripped.startswith(s) for s in _NO_STATE):
        return []
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    bad = [i for i in ids if " " in i]
    if bad:
        raise TableError(
            f"{source}: expected one request id per line, got {bad[0]!r}; whole output:\n{text}"
        )
    return ids


def captured_requests(instance: Instance) -> list[str]:
    """``contenox state list``: request ids with captured state, oldest first.

    >>> captured_requests(instance)
    ['cli-5652078821a501b8']
    """
    return parse_captured_requests(_probe(instance, "state", "list").stdout)


def the_captured_run(instance: Instance) -> str:
    """The request id of the one run captured in this instance; fails unless exactly one.

    >>> steps = captured_steps(instance, the_captured_run(instance))
    """
    ids = captured_requests(instance)
    if len(ids) != 1:
        raise ProbeError(
            f"expected exactly one captured run in `contenox state list`, found {len(ids)}: "
            f"{ids}. Name the request id explicitly when a case makes several runs."
        )
    return ids[0]


def parse_captured_steps(text: str, source: str = "contenox state show") -> list[StateStep]:
    rows = read_table(
        text,
        ["TASK", "HANDLER", "RETRY", "DURATION", "TRANSITION", "STATUS"],
        empty=_NO_STATE,
        source=source,
    )
    return [
        StateStep(
            r["TASK"],
            r["HANDLER"],
            _int(r["RETRY"], "RETRY", source),
            r["DURATION"],
            r["TRANSITION"],
            r["STATUS"],
        )
        for r in rows
    ]


def captured_steps(instance: Instance, request_id: str) -> list[StateStep]:
    """``contenox state show <request-id>``: the steps that ran, in order.

    >>> [s.task for s in captured_steps(instance, the_captured_run(instance))]
    ['run-agent', 'run-tools', 'run-agent', 'run-tools']
    """
    args = ("state", "show", request_id)
    return parse_captured_steps(_probe(instance, *args).stdout, _source(*args))


def _messages(side: object) -> tuple[SessionMessage, ...]:
    if not isinstance(side, Mapping):
        return ()
    return tuple(
        SessionMessage(
            str(m.get("timestamp", "")), str(m.get("role", "")), str(m.get("content", ""))
        )
        for m in side.get("messages") or ()
        if isinstance(m, Mapping)
    )


def parse_captured_units(
    text: str, source: str = "contenox state show --raw"
) -> list[CapturedUnit]:
    if any(text.strip().startswith(s) for s in _NO_STATE):
        return []
    data = _json(text, source)
    if not isinstance(data, list):
        raise ProbeError(f"{source}: expected a JSON array of captured units, got:\n{text[:2000]}")
    units: list[CapturedUnit] = []
    for unit in data:
        error = unit.get("error")
        units.append(
            CapturedUnit(
                task=str(unit.get("taskID", "")),
                handler=str(unit.get("taskHandler", "")),
                transition=str(unit.get("transition", "")),
                provider_type=str(unit.get("providerType", "")),
                model_name=str(unit.get("modelName", "")),
                finish_reason=str(unit.get("finishReason", "")),
                error=str(error.get("error", "")) if isinstance(error, Mapping) else "",
                input_messages=_messages(unit.get("input")),
                output_messages=_messages(unit.get("output")),
                raw=unit,
            )
        )
    return units


def captured_units(instance: Instance, request_id: str) -> list[CapturedUnit]:
    """``contenox state show <request-id> --raw``: what each step saw and who served it.

    >>> {u.provider_type for u in captured_units(instance, rid) if u.handler == "chat_completion"}
    {'scripted-test'}
    """
    args = ("state", "show", request_id, "--raw")
    return parse_captured_units(_probe(instance, *args).stdout, _source(*args))


def system_prompts_of(units: Sequence[CapturedUnit]) -> list[str]:
    """The distinct system prompts sent to the model in ``units``, in first-seen order."""
    seen: list[str] = []
    for unit in units:
        if unit.handler != "chat_completion":
            continue
        for message in unit.sent:
            if message.role == "system" and message.content not in seen:
                seen.append(message.content)
    return seen


def system_prompts(instance: Instance, request_id: str | None = None) -> list[str]:
    """The system prompts the model was actually sent during a captured run.

    ``request_id`` defaults to :func:`the_captured_run`.

    >>> system_prompts(instance)[0][:20]
    'You are a task engin'
    """
    rid = the_captured_run(instance) if request_id is None else request_id
    return system_prompts_of(captured_units(instance, rid))


record_probes(globals(), __all__)
