"""The wire: newline-delimited JSON-RPC 2.0 over an agent's stdio.

:class:`Wire` frames and sends messages, reads the agent's stdout line by line,
records every message both ways as it crossed (plain dicts, never parsed into
models), matches responses to requests and hands each request of the agent's
to a handler (the editor's side, :mod:`harness.acp.editor`). Every wait has a
timeout; a silent peer fails with every message received so far and the
agent's stderr.
"""

from __future__ import annotations

import json
import queue
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from ..process import Process
from ..result import notices
from .schema import Violation, check

__all__ = [
    "AcpError",
    "AcpTimeout",
    "Wire",
    "WireMessage",
]

JSON: TypeAlias = Any

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


# What the handler of an agent's request returns: the reply's ``result`` or
# ``error`` member, or None to leave the request unanswered (a deferred ask).
Handler: TypeAlias = Callable[[WireMessage], Mapping[str, JSON] | None]

# Told of every schema violation in a message the agent sent, before the wire
# fails on it; returns True when the violation is a known one (see
# :mod:`harness.acp.known`) and the exchange may go on.
SchemaHook: TypeAlias = Callable[[WireMessage, Violation], bool]


class Wire:
    """JSON-RPC over one agent process: send, receive, wait; every message recorded.

    ``process`` must have been started with ``queue_lines=True`` (its stdout
    lines are the messages). ``on_request`` answers each request the agent
    makes; without one, the agent's requests go unanswered.

    Every message the agent sends is checked against the ACP schema
    (:func:`harness.acp.schema.check`) as it arrives; a violation fails the
    exchange naming the method and the field, unless ``on_violation`` (told
    of each) says it is a known one. ``violations`` keeps every one seen.
    """

    def __init__(
        self,
        process: Process,
        *,
        timeout: float,
        on_request: Handler | None = None,
        on_violation: SchemaHook | None = None,
    ) -> None:
        if process.lines is None:
            raise ValueError(
                f"the agent `{' '.join(process.argv)}` was started without queue_lines=True, "
                "so its stdout lines cannot be read as messages; start it with "
                "start(..., queue_lines=True) or use open_acp"
            )
        self.process = process
        self.timeout = timeout
        self.on_request = on_request
        self.on_violation = on_violation
        self.messages: list[WireMessage] = []
        self.violations: list[Violation] = []
        # The method of each request sent and not yet answered, by id: what a
        # response is checked against.
        self._asked: dict[str, str] = {}
        self._inbox: queue.Queue[bytes] = process.lines
        self._next_id = 0
        self._responses: dict[str, Mapping[str, JSON]] = {}

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

    def fail(self, what: str, *, since: int = 0, timeout: bool = False) -> AcpError:
        kind = AcpTimeout if timeout else AcpError
        return kind(f"{what}\n{self.describe(since)}")

    def send(self, payload: Mapping[str, JSON]) -> None:
        self.messages.append(WireMessage("sent", dict(payload), time.monotonic()))
        try:
            self.process.write(json.dumps(payload, ensure_ascii=False) + "\n")
        except (BrokenPipeError, ValueError, OSError) as err:
            raise self.fail(
                f"could not send {payload.get('method') or 'a response'} to the agent ({err}); "
                "it closed its stdin or exited — its stderr below says why"
            ) from None

    def request_async(self, method: str, params: Mapping[str, JSON]) -> int:
        """Send a request without waiting; :meth:`wait_response` collects the answer."""
        self._next_id += 1
        self._asked[json.dumps(self._next_id)] = method
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Mapping[str, JSON]) -> None:
        """Send a notification (no answer expected), e.g. ``session/cancel``."""
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def receive(self, wait: float) -> bool:
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
            raise self.fail(
                f"the agent wrote a line to stdout that is not a JSON-RPC 2.0 message: "
                f"{text[:_SHOW_CHARS]!r}. stdout is the protocol channel; anything meant "
                "for a person belongs on stderr."
            )
        message = WireMessage("received", payload, time.monotonic())
        self.messages.append(message)
        self._check_schema(message)
        if message.is_response:
            self._responses[json.dumps(payload.get("id"))] = payload
        elif message.is_request and self.on_request is not None:
            reply = self.on_request(message)
            if reply is not None:
                self.send({"jsonrpc": "2.0", "id": payload.get("id"), **reply})
        return True

    def _check_schema(self, message: WireMessage) -> None:
        answers = None
        if message.is_response:
            answers = self._asked.pop(json.dumps(message.payload.get("id")), None)
        for violation in check(message.payload, answers):
            self.violations.append(violation)
            known = self.on_violation(message, violation) if self.on_violation else False
            if not known:
                raise self.fail(
                    f"{violation}\nin the message the agent sent: {message.line()}",
                    since=len(self.messages) - 1,
                )

    def pump(self, done: Callable[[], bool], timeout: float, what: str, since: int) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self.fail(
                    f"the agent was silent: no {what} within {timeout:g}s. Everything "
                    "received so far is below; raise the timeout if it is merely slow.",
                    since=since,
                    timeout=True,
                )
            if self.receive(min(remaining, 0.1)):
                continue
            if self.process.stdout_closed and self._inbox.empty():
                raise self.fail(
                    f"the agent closed its stdout (exit {self.process.exit_code}) before "
                    f"{what}; its stderr below says why.",
                    since=since,
                )

    def listen(self, seconds: float) -> None:
        """Keep handling whatever arrives for ``seconds`` (updates flushed behind a response)."""
        deadline = time.monotonic() + seconds
        while (remaining := deadline - time.monotonic()) > 0:
            if not self.receive(min(remaining, 0.05)) and self.process.stdout_closed:
                if self._inbox.empty():
                    return

    def wait_response(
        self, request_id: int, *, timeout: float | None = None, what: str | None = None
    ) -> Mapping[str, JSON]:
        """Handle incoming traffic until the response to ``request_id`` arrives; return it."""
        key = json.dumps(request_id)
        since = max(len(self.messages) - 1, 0)
        self.pump(
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
            raise self.fail(f"{method} failed: {json.dumps(response['error'])}", since=since)
        return response.get("result")
