"""A prompt turn as the client saw it: :class:`PromptTurn` and the requests in it.

Views over the messages of one ``session/prompt`` (text, updates, tool calls,
the agent's requests with the client's answers, permission asks with their
rulings); nothing here talks to the agent.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .wire import WireMessage

__all__ = [
    "RULINGS",
    "AgentRequest",
    "PermissionAsk",
    "PromptTurn",
    "Ruling",
]

JSON: TypeAlias = Any

Ruling: TypeAlias = Literal["allow", "deny", "defer", "cancel"]
RULINGS = ("allow", "deny", "defer", "cancel")


@dataclass(frozen=True)
class AgentRequest:
    """A request the agent made of the client, and the client's answer (None: unanswered)."""

    id: JSON
    method: str
    params: Mapping[str, JSON]
    answer: Mapping[str, JSON] | None

    @property
    def refused(self) -> bool:
        """The client answered with an error."""
        return self.answer is not None and "error" in self.answer


@dataclass(frozen=True)
class PermissionAsk:
    """A ``session/request_permission`` and how the client ruled on it."""

    request: AgentRequest
    ruling: Ruling

    @property
    def params(self) -> Mapping[str, JSON]:
        return self.request.params

    @property
    def tool_call(self) -> Mapping[str, JSON]:
        tool_call: Mapping[str, JSON] = self.params.get("toolCall") or {}
        return tool_call

    @property
    def options(self) -> list[Mapping[str, JSON]]:
        return list(self.params.get("options") or [])

    @property
    def meta(self) -> Mapping[str, JSON]:
        """contenox's ``_meta`` (askId, toolName, policyName, recoveryCommand, …)."""
        meta = self.params.get("_meta") or self.tool_call.get("_meta") or {}
        return meta if isinstance(meta, Mapping) else {}

    @property
    def ask_id(self) -> str | None:
        """The durable ask's id, the one ``contenox approvals respond`` takes."""
        value = self.meta.get("askId")
        return value if isinstance(value, str) else None

    @property
    def title(self) -> str:
        return str(self.tool_call.get("title", ""))


def _update_kind(message: WireMessage) -> str | None:
    if message.direction != "received" or message.method != "session/update":
        return None
    update = (message.payload.get("params") or {}).get("update") or {}
    kind = update.get("sessionUpdate")
    return kind if isinstance(kind, str) else None


def _text_of(content: JSON) -> str:
    if isinstance(content, Mapping) and content.get("type") == "text":
        return str(content.get("text", ""))
    return ""


def _requests(messages: Sequence[WireMessage]) -> list[AgentRequest]:
    answers = {
        json.dumps(m.payload.get("id")): m.payload
        for m in messages
        if m.direction == "sent" and m.is_response
    }
    return [
        AgentRequest(
            id=m.payload.get("id"),
            method=str(m.method),
            params=m.payload.get("params") or {},
            answer=answers.get(json.dumps(m.payload.get("id"))),
        )
        for m in messages
        if m.direction == "received" and m.is_request
    ]


@dataclass(frozen=True)
class PromptTurn:
    """One ``session/prompt`` as the client saw it, in wire order.

    ``messages`` holds every message of the turn both ways; the properties
    are views over it.
    """

    prompt: str
    messages: tuple[WireMessage, ...]
    response: Mapping[str, JSON] | None
    rulings: tuple[Ruling, ...] = ()

    @property
    def stop_reason(self) -> str | None:
        result = (self.response or {}).get("result") or {}
        reason = result.get("stopReason") if isinstance(result, Mapping) else None
        return reason if isinstance(reason, str) else None

    @property
    def error(self) -> Mapping[str, JSON] | None:
        """The JSON-RPC error the prompt ended with, if it did."""
        error = (self.response or {}).get("error")
        return error if isinstance(error, Mapping) else None

    @property
    def updates(self) -> list[Mapping[str, JSON]]:
        """Every ``session/update``'s ``update`` object, in order."""
        return [
            (m.payload.get("params") or {}).get("update") or {}
            for m in self.messages
            if _update_kind(m) is not None
        ]

    def updates_of(self, kind: str) -> list[Mapping[str, JSON]]:
        """The updates of one ``sessionUpdate`` kind, e.g. ``"tool_call_update"``."""
        return [u for u in self.updates if u.get("sessionUpdate") == kind]

    @property
    def update_kinds(self) -> list[str]:
        return [str(u.get("sessionUpdate")) for u in self.updates]

    @property
    def text(self) -> str:
        """The agent's message, reassembled from its ``agent_message_chunk`` updates."""
        return "".join(_text_of(u.get("content")) for u in self.updates_of("agent_message_chunk"))

    @property
    def thoughts(self) -> str:
        return "".join(_text_of(u.get("content")) for u in self.updates_of("agent_thought_chunk"))

    @property
    def tool_calls(self) -> dict[str, dict[str, JSON]]:
        """Each tool call's final state: its ``tool_call`` merged with every later update."""
        calls: dict[str, dict[str, JSON]] = {}
        for update in self.updates:
            if update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
                call_id = str(update.get("toolCallId"))
                calls.setdefault(call_id, {}).update(
                    {k: v for k, v in update.items() if k != "sessionUpdate"}
                )
        return calls

    @property
    def tool_outputs(self) -> list[JSON]:
        """Each finished tool call's ``rawOutput``, in the order they finished."""
        return [
            u.get("rawOutput")
            for u in self.updates
            if u.get("sessionUpdate") in ("tool_call", "tool_call_update")
            and u.get("status") in ("completed", "failed")
            and "rawOutput" in u
        ]

    @property
    def requests(self) -> list[AgentRequest]:
        """Every request the agent made of the client, with the client's answer."""
        return _requests(self.messages)

    def requests_of(self, method: str) -> list[AgentRequest]:
        return [r for r in self.requests if r.method == method]

    @property
    def permission_requests(self) -> list[PermissionAsk]:
        asks = self.requests_of("session/request_permission")
        return [PermissionAsk(ask, ruling) for ask, ruling in zip(asks, self.rulings, strict=False)]

    @property
    def notifications(self) -> list[Mapping[str, JSON]]:
        """Notifications other than ``session/update`` (e.g. ``$/cancel_request``)."""
        return [
            m.payload
            for m in self.messages
            if m.direction == "received" and m.is_notification and m.method != "session/update"
        ]

    @property
    def paths_read(self) -> list[str]:
        return [str(r.params.get("path")) for r in self.requests_of("fs/read_text_file")]

    @property
    def paths_written(self) -> list[str]:
        return [str(r.params.get("path")) for r in self.requests_of("fs/write_text_file")]

    @property
    def terminal_commands(self) -> list[str]:
        """Each ``terminal/create``'s command line, shell-quoted."""
        return [
            shlex.join([str(r.params.get("command")), *map(str, r.params.get("args") or [])])
            for r in self.requests_of("terminal/create")
        ]

    def summary(self) -> dict[str, object]:
        """This prompt as its transcript entry shows it to a reader (``Recorder.acp_turn``):
        stop reason, agent text, tool calls with their final status, the agent's requests
        with the client's answers and the rulings."""
        turn = self
        entry: dict[str, object] = {"acp_prompt": turn.prompt}
        if turn.error is not None:
            entry["error"] = dict(turn.error)
        else:
            entry["stop_reason"] = turn.stop_reason
        if turn.text:
            entry["agent"] = turn.text
        calls = [
            {"title": str(c.get("title", "")), "status": str(c.get("status", ""))}
            for c in turn.tool_calls.values()
        ]
        if calls:
            entry["tool_calls"] = calls
        requests: list[dict[str, object]] = []
        asks = iter(turn.permission_requests)
        for request in turn.requests:
            item: dict[str, object] = {"method": request.method}
            params = request.params
            if request.method == "session/request_permission":
                ask = next(asks, None)
                item["title"] = str((params.get("toolCall") or {}).get("title", ""))
                item["ruling"] = ask.ruling if ask is not None else "unanswered"
            else:
                if "path" in params:
                    item["path"] = str(params["path"])
                if request.method == "terminal/create":
                    item["command"] = shlex.join(
                        [str(params.get("command")), *map(str, params.get("args") or [])]
                    )
                if request.answer is None:
                    item["answer"] = "none"
                elif request.refused:
                    item["answer"] = "error: " + str(
                        (request.answer.get("error") or {}).get("message", "")
                    )
            if request.method.startswith("terminal/") and request.method != "terminal/create":
                continue  # output/wait/release follow every create: noise for a reader
            requests.append(item)
        if requests:
            entry["requests"] = requests
        return entry

    def describe(self) -> str:
        """The prompt, the stop reason and every message, for a failure message."""
        lines = [f"prompt {self.prompt!r} -> stop reason {self.stop_reason!r}"]
        lines += [f"  {m.line()}" for m in self.messages]
        return "\n".join(lines)
