"""An MCP server on the official Python SDK that records every request it receives.

It serves a few tools (``note``, ``count``, ``add``) and appends one JSON line per
inbound MCP message to a record file: the method, the raw params as they arrived
(before the SDK validates them, so an argument the tool does not declare is kept),
the HTTP headers the message came with (None over stdio) and the server's pid.

Three transports, one program (``python -m harness.servers.mcp_server``):

- **stdio**: contenox spawns it. :func:`stdio_command` gives the ``--command`` and
  ``--args`` to register, running this module with the harness's own Python::

      command, args = stdio_command(instance.tmp / "mcp.jsonl")
      instance.must("mcp", "add", "rec", "--transport", "stdio",
                    "--command", command, "--args", ",".join(args))

- **sse** and **http** (streamable HTTP): the harness starts it on 127.0.0.1 on a
  port the OS picks, and stops it with the case::

      server = serve_mcp(instance, "sse")
      instance.must("mcp", "add", "rec", "--transport", "sse", "--url", server.url)
      ...
      [call] = server.calls("note")
      assert call.arguments["tenant_id"] == "acme"

A server that exits before it listens fails the case with its output
(:class:`McpServerError`); one asked for a non-loopback address refuses before
anything is spawned (:class:`~harness.servers.loopback.NotLoopback`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..process import Process, WaitTimeout, start, wait_until
from .loopback import require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "SERVER_NAME",
    "TOOLS",
    "McpCall",
    "McpRecord",
    "McpServer",
    "McpServerError",
    "McpTransport",
    "read_mcp_records",
    "serve_mcp",
    "start_mcp_server",
    "stdio_command",
]

McpTransport = Literal["stdio", "sse", "http"]
SERVER_NAME = "e2e-recorder"
# The tools it serves, by name: what a roster offered to the model should list.
TOOLS = ("note", "count", "add")
# The program (python -m …): kept out of this module so the package import does
# not load it before runpy does, and so the launcher never imports the SDK.
_PROGRAM = "harness.servers.mcp_program"
# The line the program prints on stdout once its socket listens.
_READY = "e2e-mcp listening "
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


class McpServerError(AssertionError):
    """The MCP server did not come up (or did not stop); the message carries its output."""


@dataclass(frozen=True)
class McpCall:
    """One MCP message the server received.

    ``method`` is the JSON-RPC method (``initialize``, ``tools/list``,
    ``tools/call`` …); for ``tools/call``, ``tool`` and ``arguments`` are the
    tool's name and the raw arguments as sent. ``headers`` are the HTTP request
    headers, lower-cased (None over stdio). ``pid`` tells server processes apart.
    """

    method: str
    transport: str
    pid: int
    tool: str | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> McpCall:
        headers = data.get("headers")
        return cls(
            method=str(data["method"]),
            transport=str(data["transport"]),
            pid=int(data["pid"]),
            tool=data.get("tool"),
            arguments=dict(data.get("arguments") or {}),
            headers=dict(headers) if isinstance(headers, Mapping) else None,
        )


def read_mcp_records(path: Path) -> list[McpCall]:
    """Every message recorded in ``path`` so far, oldest first ([] if none yet)."""
    if not path.exists():
        return []
    records: list[McpCall] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(McpCall.from_json(json.loads(line)))
        except (ValueError, KeyError, TypeError) as err:
            raise McpServerError(
                f"{path}:{number}: not a record the server writes ({err}): {line!r}"
            ) from err
    return records


def stdio_command(record: Path, *, python: str | None = None) -> tuple[str, list[str]]:
    """The ``--command`` and ``--args`` that make contenox spawn this server over stdio.

    The record path travels in ``--args``, which contenox splits on commas, so a
    path with a comma is refused here rather than silently cut in two.
    """
    path = str(Path(record).resolve())
    if "," in path:
        raise ValueError(
            f"record path {path!r} contains a comma; contenox splits --args on commas. "
            "Put the record file under a directory without one."
        )
    exe = python or sys.executable
    return exe, ["-m", _PROGRAM, "--transport", "stdio", "--record", path]


class McpRecord:
    """What a server recorded in ``record``, read back: a stdio server contenox spawned
    leaves only this file; :class:`McpServer` adds the process the harness started."""

    def __init__(self, record: Path) -> None:
        self.record = record

    def records(self) -> list[McpCall]:
        """Every MCP message received so far."""
        return read_mcp_records(self.record)

    def calls(self, tool: str | None = None) -> list[McpCall]:
        """The ``tools/call`` messages received so far, of ``tool`` if named."""
        return [
            r
            for r in self.records()
            if r.method == "tools/call" and (tool is None or r.tool == tool)
        ]

    def describe(self) -> str:
        """The records so far, for a failure message."""
        lines = [f"records ({self.record}):"]
        lines += [f"  {r}" for r in self.records()] or ["  (none)"]
        return "\n".join(lines)


class McpServer(McpRecord):
    """A running SSE or streamable-HTTP MCP server: its URL, its records, its process."""

    def __init__(self, transport: McpTransport, url: str, record: Path, process: Process) -> None:
        super().__init__(record)
        self.transport = transport
        self.url = url
        self.process = process

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM the server's group, SIGKILL what is left after ``timeout``."""
        self.process.kill(grace=timeout)

    def describe(self) -> str:
        """The server's argv, state, output and records, for a failure message."""
        return f"{self.process.describe()}\n{super().describe()}"


def start_mcp_server(
    transport: McpTransport,
    record: Path,
    *,
    host: str = "127.0.0.1",
    env: Mapping[str, str] | None = None,
    timeout: float = START_TIMEOUT,
    python: str | None = None,
) -> McpServer:
    """Start an SSE or streamable-HTTP server on ``host`` (OS-picked port); wait till it listens.

    Nobody stops this one for you: call :meth:`McpServer.stop`, or prefer
    :func:`serve_mcp` inside a case.
    """
    if transport not in ("sse", "http"):
        raise ValueError(
            f"transport must be 'sse' or 'http' for a server the harness starts, got "
            f"{transport!r}; a stdio server is spawned by contenox from stdio_command()"
        )
    require_loopback(host)
    argv = [
        python or sys.executable,
        "-m",
        _PROGRAM,
        "--transport",
        transport,
        "--record",
        str(record),
        "--host",
        host,
    ]
    proc = start(argv, env=env, stdin=False)

    def listening() -> str | None:
        for line in proc.stdout.splitlines():
            if line.startswith(_READY):
                return line[len(_READY) :].strip()
        if not proc.running:
            # wait() drains both pipes, so the output it died with is in the message.
            finished = proc.wait(timeout=STOP_TIMEOUT)
            raise McpServerError(
                f"the MCP {transport} server exited before it listened:\n{finished.describe()}"
            )
        return None

    try:
        url = wait_until(
            listening, timeout, what=f"the MCP {transport} server to listen", context=proc.describe
        )
    except (WaitTimeout, McpServerError):
        proc.kill()
        raise
    return McpServer(transport, url, record, proc)


def serve_mcp(
    instance: Instance,
    transport: McpTransport,
    *,
    record: Path | None = None,
    timeout: float = START_TIMEOUT,
) -> McpServer:
    """Start an SSE or HTTP MCP server for this case; it is stopped when the case ends.

    The record lands in the instance's ``tmp/`` unless ``record`` names a file.
    """
    path = record if record is not None else instance.tmp / f"mcp-{transport}.jsonl"
    server = start_mcp_server(transport, path, env=instance.env(), timeout=timeout)

    def stop() -> None:
        # Its job ends with the case: stopping it here is the plan, not a leak.
        server.stop()

    instance.cleanups.append(stop)
    return server
