"""The client: an ACP session from the editor's side, composed of the wire and the editor.

:class:`AcpClient` holds the session state (``initialize``, ``session/new``,
prompts as :class:`PendingPrompt` / :class:`~harness.acp.turn.PromptTurn`) and
the agent's lifetime (``close``, ``cleanup``); the JSON-RPC framing and waits
are :class:`~harness.acp.wire.Wire`'s, the answers to the agent's requests
:class:`~harness.acp.editor.Editor`'s. :func:`open_acp` is its one factory
inside a case.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..process import Process, start_in
from ..result import CommandTimeout, notices
from .editor import FULL_CAPABILITIES, Editor
from .schema import KNOWN_VIOLATIONS, KnownViolation, Violation, known
from .turn import PermissionAsk, PromptTurn, Ruling
from .wire import AcpError, Wire, WireMessage

if TYPE_CHECKING:
    from ..instance import Instance
    from ..recorder import Recorder

__all__ = [
    "DEFAULT_LINGER",
    "DEFAULT_TIMEOUT",
    "PROTOCOL_VERSION",
    "AcpClient",
    "PendingPrompt",
    "open_acp",
]

JSON: TypeAlias = Any

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 60.0
# How long to keep listening after a response, for updates flushed behind it.
DEFAULT_LINGER = 0.5


class AcpClient:
    """A connection to an ACP agent on a started child's stdio, from the editor's side.

    Open one on contenox with :func:`open_acp`; the harness's own tests attach
    one to a fake agent started with ``start(argv, queue_lines=True)``.

    >>> acp = AcpClient(start(["contenox", "acp"], env=env, cwd=work, queue_lines=True),
    ...                 workspace=work, env=env)
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
        schema_allowed: Sequence[KnownViolation] = KNOWN_VIOLATIONS,
    ) -> None:
        """Attach to the agent ``process`` (started with ``queue_lines=True``).

        ``env`` is what the editor's terminals run with (the agent's own, as
        an editor would pass on); files and terminal cwds outside ``roots``
        (default: the workspace) are refused. Every message the agent sends
        is checked against the ACP schema; one that breaks it fails the case,
        unless ``schema_allowed`` lists it as a known violation (``()``: none).
        """
        self.wire = Wire(process, timeout=timeout, on_violation=self._on_violation)
        self.schema_allowed = tuple(schema_allowed)
        self.editor = Editor(
            workspace=workspace,
            roots=roots,
            env=env,
            permission=permission,
            refuse_writes=refuse_writes,
            unreadable=unreadable,
            timeout=timeout,
            cancel=self.cancel,
            fail=self.wire.fail,
        )
        self.wire.on_request = self.editor.answer
        self.linger = linger
        self.recorder = recorder
        self.session_id: str | None = None
        self._closed_code: int | None = None

    def _on_violation(self, message: WireMessage, violation: Violation) -> bool:
        if known(violation, message.payload, self.schema_allowed) is not None:
            return True
        if self.recorder is not None:
            self.recorder.acp_schema(str(violation))
        return False

    # -- views onto the parts ------------------------------------------

    @property
    def process(self) -> Process:
        """The agent's process."""
        return self.wire.process

    @property
    def messages(self) -> list[WireMessage]:
        """Every message so far, both ways, in wire order."""
        return self.wire.messages

    @property
    def workspace(self) -> Path:
        return self.editor.workspace

    @property
    def roots(self) -> tuple[Path, ...]:
        return self.editor.roots

    @property
    def permission(self) -> Ruling | Callable[[PermissionAsk], Ruling]:
        """How the next permission asks are ruled; a case may change it between prompts."""
        return self.editor.permission

    @permission.setter
    def permission(self, ruling: Ruling | Callable[[PermissionAsk], Ruling]) -> None:
        self.editor.permission = ruling

    @property
    def timeout(self) -> float:
        """The default wait, in seconds, for a response or a terminal command."""
        return self.wire.timeout

    @timeout.setter
    def timeout(self, seconds: float) -> None:
        self.wire.timeout = seconds
        self.editor.timeout = seconds

    @property
    def stderr(self) -> str:
        """The agent's stderr so far: log lines and notices."""
        return self.wire.stderr

    @property
    def notices(self) -> str:
        """The agent's stderr without structured log lines."""
        return notices(self.wire.stderr)

    def describe(self, since: int = 0) -> str:
        """The agent's state, every message from ``since`` on, and its stderr notices."""
        return self.wire.describe(since)

    # -- the wire, for a case that speaks the protocol itself -----------

    def request_async(self, method: str, params: Mapping[str, JSON]) -> int:
        """Send a request without waiting; :meth:`wait_response` collects the answer."""
        return self.wire.request_async(method, params)

    def notify(self, method: str, params: Mapping[str, JSON]) -> None:
        """Send a notification (no answer expected), e.g. ``session/cancel``."""
        self.wire.notify(method, params)

    def wait_response(
        self, request_id: int, *, timeout: float | None = None, what: str | None = None
    ) -> Mapping[str, JSON]:
        """Handle incoming traffic until the response to ``request_id`` arrives; return it."""
        return self.wire.wait_response(request_id, timeout=timeout, what=what)

    def request(
        self, method: str, params: Mapping[str, JSON], *, timeout: float | None = None
    ) -> Mapping[str, JSON]:
        """Send a request and return its whole response message (``result`` or ``error``)."""
        return self.wire.request(method, params, timeout=timeout)

    def call(
        self, method: str, params: Mapping[str, JSON], *, timeout: float | None = None
    ) -> JSON:
        """Send a request; return its ``result``, failing with the transcript on an error."""
        return self.wire.call(method, params, timeout=timeout)

    def _fail(self, what: str, *, since: int = 0, timeout: bool = False) -> AcpError:
        return self.wire.fail(what, since=since, timeout=timeout)

    # -- the session ---------------------------------------------------

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
        self,
        cwd: Path | None = None,
        mcp_servers: Sequence[Mapping[str, JSON]] = (),
        *,
        meta: Mapping[str, JSON] | None = None,
    ) -> str:
        """``session/new`` with the workspace (or ``cwd``) as cwd; remember and return its id.

        ``meta`` is sent as the request's ``_meta`` (e.g. ``{"contenox.agent": "walled"}``
        to have contenox answer the session with a registered agent).
        """
        params: dict[str, JSON] = {
            "cwd": str(cwd or self.workspace),
            "mcpServers": [dict(s) for s in mcp_servers],
        }
        if meta is not None:
            params["_meta"] = dict(meta)
        result = self.call("session/new", params)
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
        rulings = len(self.editor.rulings)
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

    # -- ending --------------------------------------------------------

    def release_terminals(self) -> str | None:
        """Kill every terminal command the agent left; None if none was running, else what."""
        return self.editor.release_terminals()

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
            raise self.wire.fail(
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
            rulings=tuple(self.client.editor.rulings[self._rulings_start :]),
        )

    def wait_for(
        self, condition: Callable[[PromptTurn], bool], *, what: str, timeout: float | None = None
    ) -> PromptTurn:
        """Handle traffic until ``condition(turn so far)`` holds; return the turn so far."""
        self.client.wire.pump(
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
        self.client.wire.listen(self.client.linger)
        self._turn = self.so_far(response)
        if self.client.recorder is not None:
            self.client.recorder.acp_turn(self._turn.summary())
        return self._turn


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
    schema_allowed: Sequence[KnownViolation] = KNOWN_VIOLATIONS,
) -> AcpClient:
    """``contenox acp <args>`` in ``instance`` with an editor attached; cleaned up at the end.

    With ``handshake`` (the default) it is already initialized (full
    capabilities unless ``capabilities`` says otherwise) and holds a session
    whose cwd is the workspace. Files and terminals are served inside the
    instance root only. Every message the agent sends is checked against the
    ACP schema (:mod:`harness.acp.schema`); ``schema_allowed=()`` lets no
    known violation through.

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
    instance.recorder.started(process.argv, env)
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
        schema_allowed=schema_allowed,
    )
    instance.cleanups.append(client.release_terminals)
    if handshake:
        client.initialize(capabilities)
        client.new_session()
    return client
