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
schema would reject or quietly normalise. Each message the agent sends is
*checked* against the ACP schema as it arrives (:mod:`.schema`): one that breaks
it fails the case naming the method and the field.

The package splits the client along its jobs: :mod:`.wire` (JSON-RPC framing,
the pump, timeouts), :mod:`.editor` (the editor-side handlers: ``fs/*``,
``terminal/*``, permission rulings), :mod:`.turn` (what a prompt turn was) and
:mod:`.client` (the session state, and :func:`open_acp`, its one factory).
"""

from .client import (
    DEFAULT_LINGER,
    DEFAULT_TIMEOUT,
    PROTOCOL_VERSION,
    AcpClient,
    PendingPrompt,
    open_acp,
)
from .editor import FULL_CAPABILITIES, Editor
from .schema import (
    KNOWN_VIOLATIONS,
    SCHEMA_PROTOCOL_VERSION,
    SCHEMA_REF,
    KnownViolation,
    Violation,
)
from .turn import AgentRequest, PermissionAsk, PromptTurn, Ruling
from .wire import AcpError, AcpTimeout, Wire, WireMessage

__all__ = [
    "DEFAULT_LINGER",
    "DEFAULT_TIMEOUT",
    "FULL_CAPABILITIES",
    "KNOWN_VIOLATIONS",
    "PROTOCOL_VERSION",
    "SCHEMA_PROTOCOL_VERSION",
    "SCHEMA_REF",
    "AcpClient",
    "AcpError",
    "AcpTimeout",
    "AgentRequest",
    "Editor",
    "KnownViolation",
    "PendingPrompt",
    "PermissionAsk",
    "PromptTurn",
    "Ruling",
    "Violation",
    "Wire",
    "WireMessage",
    "open_acp",
]
