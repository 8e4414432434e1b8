"""An ACP client in the position an editor is in, recording everything it sees.

``contenox acp`` speaks the Agent Client Protocol over stdio: newline-delimited
JSON-RPC 2.0. This client drives it the way Zed or JetBrains would —
``initialize``, ``session/new`` with the workspace as cwd, ``session/prompt`` —
and does for real what the agent asks of an editor, inside the case's scratch
dirs: reads and writes files, runs terminal commands to completion. A prompt
returns the whole turn as the client saw it::

    acp = open_acp(instance)                     # started, initialized, session opened
    turn = acp.prompt("write the greeting")
    assert turn.stop_reason == "end_turn"
    assert turn.paths_written == [str(instance.work / "out.txt")]

Permission asks are ruled as the case chose: ``allow``, ``deny``, ``defer``
(never answered, so another process can answer with ``approvals respond``) or
``cancel`` (the user cancels the turn). Every wait has a timeout; a silent
peer fails the case with every message received so far and the agent's stderr.

Messages are kept as the plain dicts that crossed the wire, never parsed into
models: a black-box client must record what arrived, including what a typed
schema would reject or quietly normalise.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from .process import Process, start, start_in
from .result import CommandTimeout, notices

if TYPE_CHECKING:
    from .instance import Instance
    from .recorder import Recorder

__all__ = [
    "DEFAULT_LINGER",
    "DEFAULT_TIMEOUT",
    "FULL_CAPABILITIES",
    "PROTOCOL_VERSION",
    "AcpClient",
    "AcpError",
    "AcpTimeout",
    "AgentRequest",
    "PendingPrompt",
    "PermissionAsk",
    "PromptTurn",
    "Ruling",
    "WireMessage",
    "open_acp",
]

JSON: TypeAlias = Any

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 60.0
# How long to keep listening after a response, for updates flushed behind it.
DEFAULT_LINGER = 0.5

# What an editor offers: both file operations and terminals.
FULL_CAPABILITIES: Mapping[str, JSON] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}

Ruling: TypeAlias = Literal["allow", "deny", "defer", "cancel"]
_RULINGS = ("allow", "deny", "defer", "cancel")

# JSON-RPC / ACP error codes the client answers with.
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602
_INTERNAL = -32603
_RESOURCE_NOT_FOUND = -32002

# Shown per message in a failure report; a whole config dump helps nobody.
_SHOW_CHARS = 1500


class AcpError(AssertionError):
    """The ACP exchange went wrong; the message carries everything seen so far."""


class AcpTimeout(AcpError):
    """The agent went silent past a timeout."""


@dataclass(frozen=True)
class WireMessage:
    """One JSON-RPC message, as it crossed the wire, and which way it went."""

    direction: Literal["sent", "received"]
    payload: Mapping[str, JSON]
    at: float

    @property
    def method(self) -> str | None:
        method = self.payload.get("method")
        return method if isinstance(method, str) else None

    @property
    def is_request(self) -> bool:
        return "method" in self.payload and "id" in self.payload

    @property
    def is_notification(self) -> bool:
        return "method" in self.payload and "id" not in self.payload

    @property
    def is_response(self) -> bool:
        return "method" not in self.payload and "id" in self.payload

    def line(self) -> str:
        arrow = ">>" if self.direction == "sent" else "<<"
        text = json.dumps(self.payload, ensure_ascii=False)
        if len(text) > _SHOW_CHARS:
            text = text[:_SHOW_CHARS] + f"… ({len(text)} chars)"
        return f"{arrow} {text}"


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

    def describe(self) -> str:
        """The prompt, the stop reason and every message, for a failure message."""
        lines = [f"prompt {self.prompt!r} -> stop reason {self.stop_reason!r}"]
        lines += [f"  {m.line()}" for m in self.messages]
        return "\n".join(lines)


@dataclass
class _Terminal:
    """A command the agent runs in the editor's terminal: one stream (stdout and stderr
    merged, as a terminal shows them) and the byte limit the agent asked for."""

    proc: Process
    limit: int | None


def _exit_status(returncode: int) -> dict[str, JSON]:
    if returncode < 0:
        return {"exitCode": None, "signal": signal.Signals(-returncode).name}
    return {"exitCode": returncode, "signal": None}


class AcpClient:
    """A connection to an ACP agent on a child's stdio, from the editor's side.

    Open one on contenox with :func:`open_acp`; :meth:`spawn` takes any argv
    (the harness's own tests drive a fake agent with it).

    >>> acp = AcpClient.spawn(["contenox", "acp"], workspace=work, env=env)
    >>> acp.initialize(); acp.new_session()
    >>> acp.prompt("hello").text
    'Hello.'
    >>> acp.close()
    0
    """

    def __init__(
        self,
        process: Process,
        *,
        workspace: Path,
        env: Mapping[str, str] | None = None,
        roots: Iterable[Path] | None = None,
        permission: Ruling | Callable[[PermissionAsk], Ruling] = "allow",
        refuse_writes: bool = False,
        unreadable: Iterable[str | os.PathLike[str]] = (),
        timeout: float = DEFAULT_TIMEOUT,
        linger: float = DEFAULT_LINGER,
        recorder: Recorder | None = None,
    ) -> None:
        """Attach to the agent ``process`` (started with ``queue_lines=True``).

        ``env`` is what the editor's terminals run with (the agent's own, as
        an editor would pass on); files and terminal cwds outside ``roots``
        (default: the workspace) are refused.
        """
        if process.lines is None:
            raise ValueError(
                f"the agent `{' '.join(process.argv)}` was started without queue_lines=True, "
                "so its stdout lines cannot be read as messages; start it with "
                "start(..., queue_lines=True) or use open_acp"
            )
        self.process = process
        self.workspace = Path(workspace).resolve()
        self.roots = tuple(Path(r).resolve() for r in (roots or (self.workspace,)))
        self.permission = permission
        self.refuse_writes = refuse_writes
        self.unreadable = {self._resolve(p) for p in unreadable}
        self.timeout = timeout
        self.linger = linger
        self.session_id: str | None = None
        self.messages: list[WireMessage] = []
        self.recorder = recorder
        self._rulings: list[Ruling] = []
        self._env = dict(env) if env is not None else dict(os.environ)
        self._inbox: queue.Queue[bytes] = process.lines
        self._next_id = 0
        self._responses: dict[str, Mapping[str, JSON]] = {}
        self._terminals: dict[str, _Terminal] = {}
        self._closed_code: int | None = None

    # -- what was seen -------------------------------------------------

    @property
    def stderr(self) -> str:
        """The agent's stderr so far: log lines and notices."""
        return self.process.stderr

    @property
    def notices(self) -> str:
        """The agent's stderr without structured log lines."""
        return notices(self.process.stderr)

    def describe(self, since: int = 0) -> str:
        """The agent's state, every message from ``since`` on, and its stderr notices."""
        code = self.process.exit_code
        state = "still running" if code is None else f"exited {code}"
        shown = self.messages[since:]
        body = "\n".join(f"  {m.line()}" for m in shown) or "  (no messages)"
        stderr = notices(self.process.stderr).rstrip() or "(empty)"
        return (
            f"agent `{' '.join(self.process.argv)}` is {state} (pid {self.process.pid})\n"
            f"messages ({len(shown)}):\n{body}\n"
            f"agent stderr (notices):\n  " + stderr.replace("\n", "\n  ")
        )

    def _fail(self, what: str, *, since: int = 0, timeout: bool = False) -> AcpError:
        kind = AcpTimeout if timeout else AcpError
        return kind(f"{what}\n{self.describe(since)}")

    # -- the wire ------------------------------------------------------

    def _send(self, payload: Mapping[str, JSON]) -> None:
        self.messages.append(WireMessage("sent", dict(payload), time.monotonic()))
        try:
            self.process.write(json.dumps(payload, ensure_ascii=False) + "\n")
        except (BrokenPipeError, ValueError, OSError) as err:
            raise self._fail(
                f"could not send {payload.get('method') or 'a response'} to the agent ({err}); "
                "it closed its stdin or exited — its stderr below says why"
            ) from None

    def request_async(self, method: str, params: Mapping[str, JSON]) -> int:
        """Send a request without waiting; :meth:`wait_response` collects the answer."""
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Mapping[str, JSON]) -> None:
        """Send a notification (no answer expected), e.g. ``session/cancel``."""
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _receive(self, wait: float) -> bool:
        """Take one line off the wire and handle it; False when none came within ``wait``."""
        try:
            line = self._inbox.get(timeout=max(wait, 0.0))
        except queue.Empty:
            return False
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return True
        try:
            payload = json.loads(text)
        except json.JSONDecodeError:
            payload = None
        if not isinstance(payload, dict) or payload.get("jsonrpc") != "2.0":
            raise self._fail(
                f"the agent wrote a line to stdout that is not a JSON-RPC 2.0 message: "
                f"{text[:_SHOW_CHARS]!r}. stdout is the protocol channel; anything meant "
                "for a person belongs on stderr."
            )
        message = WireMessage("received", payload, time.monotonic())
        self.messages.append(message)
        if message.is_response:
            self._responses[json.dumps(payload.get("id"))] = payload
        elif message.is_request:
            self._answer(message)
        return True

    def _pump(self, done: Callable[[], bool], timeout: float, what: str, since: int) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._fail(
                    f"the agent was silent: no {what} within {timeout:g}s. Everything "
                    "received so far is below; raise the timeout if it is merely slow.",
                    since=since,
                    timeout=True,
                )
            if self._receive(min(remaining, 0.1)):
                continue
            if self.process.stdout_closed and self._inbox.empty():
                raise self._fail(
                    f"the agent closed its stdout (exit {self.process.exit_code}) before "
                    f"{what}; its stderr below says why.",
                    since=since,
                )

    def _listen(self, seconds: float) -> None:
        """Keep handling whatever arrives for ``seconds`` (updates flushed behind a response)."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if not self._receive(min(remaining, 0.05)) and self.process.stdout_closed:
                if self._inbox.empty():
                    return

    def wait_response(
        self, request_id: int, *, timeout: float | None = None, what: str | None = None
    ) -> Mapping[str, JSON]:
        """Handle incoming traffic until the response to ``request_id`` arrives; return it."""
        key = json.dumps(request_id)
        since = max(len(self.messages) - 1, 0)
        self._pump(
            lambda: key in self._responses,
            timeout if timeout is not None else self.timeout,
            what or f"response to request {request_id}",
            since,
        )
        return self._responses.pop(key)

    def request(
        self, method: str, params: Mapping[str, JSON], *, timeout: float | None = None
    ) -> Mapping[str, JSON]:
        """Send a request and return its whole response message (``result`` or ``error``)."""
        return self.wait_response(
            self.request_async(method, params), timeout=timeout, what=f"answer to {method}"
        )

    def call(
        self, method: str, params: Mapping[str, JSON], *, timeout: float | None = None
    ) -> JSON:
        """Send a request; return its ``result``, failing with the transcript on an error."""
        since = len(self.messages)
        response = self.request(method, params, timeout=timeout)
        if "error" in response:
            raise self._fail(f"{method} failed: {json.dumps(response['error'])}", since=since)
        return response.get("result")

    # -- the editor's side of the protocol -----------------------------

    def initialize(
        self,
        capabilities: Mapping[str, JSON] | None = None,
        *,
        protocol_version: int = PROTOCOL_VERSION,
        client_info: Mapping[str, JSON] | None = None,
    ) -> Mapping[str, JSON]:
        """``initialize`` with full client capabilities (or ``capabilities``); return the result."""
        result: Mapping[str, JSON] = self.call(
            "initialize",
            {
                "protocolVersion": protocol_version,
                "clientCapabilities": dict(
                    capabilities if capabilities is not None else FULL_CAPABILITIES
                ),
                "clientInfo": dict(
                    client_info or {"name": "contenox-e2e", "title": "contenox e2e", "version": "0"}
                ),
            },
        )
        return result

    def new_session(
        self, cwd: Path | None = None, mcp_servers: Sequence[Mapping[str, JSON]] = ()
    ) -> str:
        """``session/new`` with the workspace (or ``cwd``) as cwd; remember and return its id."""
        result = self.call(
            "session/new",
            {"cwd": str(cwd or self.workspace), "mcpServers": [dict(s) for s in mcp_servers]},
        )
        session_id = result.get("sessionId") if isinstance(result, Mapping) else None
        if not isinstance(session_id, str):
            raise self._fail(f"session/new answered without a sessionId: {result!r}")
        self.session_id = session_id
        return session_id

    def list_sessions(self, cwd: Path | None = None) -> list[Mapping[str, JSON]]:
        """``session/list`` (optionally filtered by ``cwd``); return its sessions."""
        params: dict[str, JSON] = {} if cwd is None else {"cwd": str(cwd)}
        result = self.call("session/list", params)
        sessions = result.get("sessions") if isinstance(result, Mapping) else None
        return list(sessions or [])

    def start_prompt(self, text: str, *, session_id: str | None = None) -> PendingPrompt:
        """Send ``session/prompt`` and return at once; the turn runs as the case waits on it."""
        sid = session_id or self.session_id
        if sid is None:
            raise AcpError("no session to prompt: call new_session() first (open_acp does)")
        start = len(self.messages)
        rulings = len(self._rulings)
        request_id = self.request_async(
            "session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}
        )
        return PendingPrompt(self, text, request_id, start, rulings, sid)

    def prompt(
        self, text: str, *, session_id: str | None = None, timeout: float | None = None
    ) -> PromptTurn:
        """``session/prompt`` and the whole turn as the client saw it.

        >>> turn = acp.prompt("hello")
        >>> turn.stop_reason, turn.text
        ('end_turn', 'Hello.')
        """
        return self.start_prompt(text, session_id=session_id).finish(timeout=timeout)

    def cancel(self, session_id: str | None = None) -> None:
        """``session/cancel``: what an editor sends when the user stops the turn."""
        self.notify("session/cancel", {"sessionId": session_id or self.session_id})

    def _answer(self, message: WireMessage) -> None:
        method = str(message.method)
        params: Mapping[str, JSON] = message.payload.get("params") or {}
        handler = {
            "session/request_permission": self._on_permission,
            "fs/read_text_file": self._on_read,
            "fs/write_text_file": self._on_write,
            "terminal/create": self._on_terminal_create,
            "terminal/output": self._on_terminal_output,
            "terminal/wait_for_exit": self._on_terminal_wait,
            "terminal/kill": self._on_terminal_kill,
            "terminal/release": self._on_terminal_release,
        }.get(method)
        if handler is None:
            reply: Mapping[str, JSON] | None = _error(
                _METHOD_NOT_FOUND, f"the e2e client does not implement {method}"
            )
        else:
            reply = handler(params)
        if reply is not None:
            self._send({"jsonrpc": "2.0", "id": message.payload.get("id"), **reply})

    def _on_permission(self, params: Mapping[str, JSON]) -> Mapping[str, JSON] | None:
        ask = PermissionAsk(AgentRequest(None, "session/request_permission", params, None), "defer")
        ruling = self.permission(ask) if callable(self.permission) else self.permission
        if ruling not in _RULINGS:
            raise AcpError(f"permission ruling must be one of {_RULINGS}, got {ruling!r}")
        self._rulings.append(ruling)
        if ruling == "defer":
            return None
        if ruling == "cancel":
            self.cancel(params.get("sessionId"))
            return {"result": {"outcome": {"outcome": "cancelled"}}}
        wanted = (
            ("allow_once", "allow_always")
            if ruling == "allow"
            else ("reject_once", "reject_always")
        )
        for kind in wanted:
            for option in ask.options:
                if option.get("kind") == kind:
                    return {
                        "result": {
                            "outcome": {"outcome": "selected", "optionId": option["optionId"]}
                        }
                    }
        raise self._fail(
            f"cannot {ruling}: the permission request offers no {' or '.join(wanted)} option "
            f"(options: {json.dumps(ask.options)})"
        )

    def _resolve(self, path: str | os.PathLike[str]) -> Path:
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        return candidate.resolve()

    def _outside(self, path: Path) -> bool:
        return not any(path == root or root in path.parents for root in self.roots)

    def _on_read(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        path = self._resolve(str(params.get("path", "")))
        if self._outside(path):
            return _error(_INVALID_PARAMS, f"{path} is outside the case's scratch dirs")
        if path in self.unreadable:
            return _error(_INTERNAL, f"permission denied: {path} is not readable")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _error(_RESOURCE_NOT_FOUND, f"no such file: {path}")
        except OSError as err:
            return _error(_INTERNAL, f"cannot read {path}: {err}")
        line, limit = params.get("line"), params.get("limit")
        if isinstance(line, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            first = max((line if isinstance(line, int) else 1) - 1, 0)
            last = first + limit if isinstance(limit, int) else len(lines)
            text = "".join(lines[first:last])
        return {"result": {"content": text}}

    def _on_write(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        path = self._resolve(str(params.get("path", "")))
        if self._outside(path):
            return _error(_INVALID_PARAMS, f"{path} is outside the case's scratch dirs")
        if self.refuse_writes:
            return _error(_INTERNAL, f"the client refused to write {path}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(params.get("content", "")), encoding="utf-8")
        except OSError as err:
            return _error(_INTERNAL, f"cannot write {path}: {err}")
        return {"result": None}

    def _on_terminal_create(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        cwd = self._resolve(str(params.get("cwd") or self.workspace))
        if self._outside(cwd):
            return _error(_INVALID_PARAMS, f"terminal cwd {cwd} is outside the case's scratch dirs")
        env = dict(self._env)
        for var in params.get("env") or []:
            env[str(var.get("name"))] = str(var.get("value"))
        argv = [str(params.get("command")), *map(str, params.get("args") or [])]
        try:
            proc = start(argv, env=env, cwd=cwd, stdin=False, merge_stderr=True)
        except OSError as err:
            return _error(_INTERNAL, f"cannot start {shlex.join(argv)}: {err}")
        limit = params.get("outputByteLimit")
        term = _Terminal(proc, limit if isinstance(limit, int) else None)
        terminal_id = f"term-{len(self._terminals) + 1}"
        self._terminals[terminal_id] = term
        return {"result": {"terminalId": terminal_id}}

    def _terminal(self, params: Mapping[str, JSON]) -> _Terminal | None:
        return self._terminals.get(str(params.get("terminalId")))

    def _on_terminal_output(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        returncode = term.proc.exit_code
        if returncode is not None:
            term.proc.drain()
        data = term.proc.output()
        truncated = term.limit is not None and len(data) > term.limit
        if truncated and term.limit is not None:
            data = data[len(data) - term.limit :]
        result: dict[str, JSON] = {
            "output": data.decode("utf-8", errors="replace"),
            "truncated": truncated,
        }
        if returncode is not None:
            result["exitStatus"] = _exit_status(returncode)
        return {"result": result}

    def _on_terminal_wait(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        try:
            returncode = term.proc.wait(timeout=self.timeout).exit_code
        except CommandTimeout as overrun:
            # An editor would wait forever; a case may not: its group was killed.
            returncode = overrun.result.exit_code
        return {"result": _exit_status(returncode)}

    def _on_terminal_kill(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        term.proc.kill()
        return {"result": None}

    def _on_terminal_release(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminals.pop(str(params.get("terminalId")), None)
        if term is not None:
            term.proc.kill()
        return {"result": None}

    # -- ending --------------------------------------------------------

    def release_terminals(self) -> str | None:
        """Kill every terminal command the agent left; None if none was running, else what."""
        left = [shlex.join(t.proc.argv) for t in self._terminals.values() if t.proc.running]
        for term in self._terminals.values():
            term.proc.kill()
        self._terminals.clear()
        if left:
            return f"terminal command(s) the agent never released were still running: {left}"
        return None

    def close(self, timeout: float = 30.0) -> int:
        """Close the agent's stdin, as an editor quitting does; return its exit code.

        An agent that does not exit within ``timeout`` is killed with its group
        and the case fails with the transcript.
        """
        if self._closed_code is not None:
            return self._closed_code
        self.release_terminals()
        self.process.close_stdin()
        try:
            result = self.process.wait(timeout=timeout)
        except CommandTimeout:
            raise self._fail(
                f"the agent did not exit within {timeout:g}s of its stdin closing; "
                "it was killed with its process group"
            ) from None
        self._closed_code = result.exit_code
        return result.exit_code

    def __enter__(self) -> AcpClient:
        return self

    def __exit__(self, kind: object, error: object, trace: object) -> None:
        # A case that failed inside the block keeps its own error; the agent
        # is killed rather than waited for.
        if kind is None:
            self.close()
        else:
            self.cleanup()

    def cleanup(self) -> str | None:
        """End-of-case cleanup: None if the agent had ended, else what was killed."""
        terminals = self.release_terminals()
        agent = self.process.cleanup()
        return "; ".join(r for r in (agent, terminals) if r) or None


class PendingPrompt:
    """A ``session/prompt`` in flight: wait on parts of it, then :meth:`finish` it.

    >>> pending = acp.start_prompt("write the file")
    >>> ask = pending.wait_for_permission(timeout=30)   # with permission="defer"
    >>> instance.must("approvals", "respond", ask.ask_id, "--approve")
    >>> turn = pending.finish()
    """

    def __init__(
        self, client: AcpClient, text: str, request_id: int, start: int, rulings: int, sid: str
    ) -> None:
        self.client = client
        self.text = text
        self.request_id = request_id
        self.session_id = sid
        self._start = start
        self._rulings_start = rulings
        self._turn: PromptTurn | None = None

    def so_far(self, response: Mapping[str, JSON] | None = None) -> PromptTurn:
        """The turn as seen up to now."""
        return PromptTurn(
            prompt=self.text,
            messages=tuple(self.client.messages[self._start :]),
            response=response,
            rulings=tuple(self.client._rulings[self._rulings_start :]),
        )

    def wait_for(
        self, condition: Callable[[PromptTurn], bool], *, what: str, timeout: float | None = None
    ) -> PromptTurn:
        """Handle traffic until ``condition(turn so far)`` holds; return the turn so far."""
        self.client._pump(
            lambda: condition(self.so_far()),
            timeout if timeout is not None else self.client.timeout,
            what,
            self._start,
        )
        return self.so_far()

    def wait_for_permission(self, timeout: float | None = None) -> PermissionAsk:
        """Wait for the turn's next unseen ``session/request_permission``; return it."""
        seen = len(self.so_far().permission_requests)
        turn = self.wait_for(
            lambda t: len(t.permission_requests) > seen,
            what="session/request_permission",
            timeout=timeout,
        )
        return turn.permission_requests[seen]

    def finish(self, timeout: float | None = None) -> PromptTurn:
        """Wait for the prompt's response, listen briefly for trailing updates; return the turn."""
        if self._turn is not None:
            return self._turn
        response = self.client.wait_response(
            self.request_id, timeout=timeout, what="end of the prompt turn (its response)"
        )
        self.client._listen(self.client.linger)
        self._turn = self.so_far(response)
        if self.client.recorder is not None:
            self.client.recorder.acp_turn(self._turn)
        return self._turn


def _error(code: int, message: str) -> dict[str, JSON]:
    return {"error": {"code": code, "message": message}}


def open_acp(
    instance: Instance,
    *args: str,
    subcommand: str = "acp",
    permission: Ruling | Callable[[PermissionAsk], Ruling] = "allow",
    refuse_writes: bool = False,
    unreadable: Iterable[str | os.PathLike[str]] = (),
    capabilities: Mapping[str, JSON] | None = None,
    handshake: bool = True,
    env: Mapping[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    linger: float = DEFAULT_LINGER,
) -> AcpClient:
    """``contenox acp <args>`` in ``instance`` with an editor attached; cleaned up at the end.

    With ``handshake`` (the default) it is already initialized (full
    capabilities unless ``capabilities`` says otherwise) and holds a session
    whose cwd is the workspace. Files and terminals are served inside the
    instance root only.

    Leave it running and the case fails at teardown; ``with`` closes it
    (stdin closed, exit awaited) as an editor quitting does::

        with open_acp(instance, permission="deny") as acp:
            turn = acp.prompt("write the file")
        assert turn.permission_requests[0].ruling == "deny"
    """
    child_env = instance.env(env)
    process = start_in(
        instance,
        [instance.binary, subcommand, *args],
        env=env,
        cwd=instance.work,
        queue_lines=True,
    )
    instance.recorder.started(process.argv)
    process.on_end = instance.recorder.ended_acp
    client = AcpClient(
        process,
        workspace=instance.work,
        env=child_env,
        roots=(instance.root,),
        permission=permission,
        refuse_writes=refuse_writes,
        unreadable=unreadable,
        timeout=timeout,
        linger=linger,
        recorder=instance.recorder,
    )
    instance.cleanups.append(client.release_terminals)
    if handshake:
        client.initialize(capabilities)
        client.new_session()
    return client
