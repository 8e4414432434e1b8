"""The recording MCP server program: ``python -m harness.servers.mcp_program --help``.

Cases do not import this; they start it through :mod:`harness.servers.mcp_server`
(:func:`~harness.servers.mcp_server.serve_mcp`, or contenox spawns it from
:func:`~harness.servers.mcp_server.stdio_command`). It records one JSON line per
MCP request into ``--record``; see :class:`~harness.servers.mcp_server.McpCall`.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

from .loopback import NotLoopback, require_loopback
from .mcp_server import _READY, SERVER_NAME, McpTransport


def _record(path: Path, entry: Mapping[str, Any]) -> None:
    # One write per line in append mode: several stdio servers spawned by one
    # contenox may share the file, and each line lands whole.
    line = json.dumps(entry, sort_keys=True, default=str) + "\n"
    with path.open("a", encoding="utf-8") as sink:
        sink.write(line)
        sink.flush()


def _headers_of(request: object) -> dict[str, str] | None:
    headers = getattr(request, "headers", None)
    if headers is None:
        return None
    return {str(k).lower(): str(v) for k, v in headers.items()}


def _build(transport: str, record: Path, host: str) -> Any:
    from mcp.server.fastmcp import FastMCP
    from mcp.server.lowlevel.server import request_ctx

    pid = os.getpid()
    server: Any = FastMCP(
        SERVER_NAME,
        instructions="A recording server for the contenox e2e suite.",
        host=host,
        log_level="WARNING",
    )
    counter = {"n": 0}

    def note(text: str, tenant_id: str, env: str = "") -> str:
        """File a note for the tenant; returns what was noted."""
        del tenant_id, env  # recorded as received; never echoed back to the model
        return f"noted: {text}"

    def count() -> str:
        """Count calls in this server process: 1 on the first call, 2 on the second."""
        counter["n"] += 1
        return f"count={counter['n']} pid={pid}"

    def add(a: int, b: int) -> str:
        """Add two integers."""
        return f"sum={a + b}"

    for tool in (note, count, add):
        server.add_tool(tool)

    # One line when the process starts: how many servers contenox spawned, and when.
    _record(record, {"method": "server/start", "transport": transport, "pid": pid, "headers": None})
    # Record each request before the SDK validates it, so the raw params as they
    # crossed the wire are kept (an argument no tool declares would otherwise be
    # dropped by validation). The low-level server sets request_ctx before it
    # calls a handler, so the HTTP request (and its headers) is at hand.
    lowlevel = server._mcp_server
    for kind, handler in list(lowlevel.request_handlers.items()):
        lowlevel.request_handlers[kind] = _recording(handler, transport, record, pid, request_ctx)
    return server


def _recording(handler: Any, transport: str, record: Path, pid: int, request_ctx: Any) -> Any:
    async def wrapped(req: Any) -> Any:
        params = req.params.model_dump(mode="json") if req.params is not None else {}
        try:
            request = request_ctx.get().request
        except LookupError:
            request = None
        entry: dict[str, Any] = {
            "method": req.method,
            "transport": transport,
            "pid": pid,
            "headers": _headers_of(request),
        }
        if req.method == "tools/call":
            entry["tool"] = params.get("name")
            entry["arguments"] = params.get("arguments") or {}
        _record(record, entry)
        return await handler(req)

    return wrapped


def _serve_http(server: Any, transport: str, host: str) -> None:
    import anyio
    import uvicorn

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, 0))
    sock.listen(64)
    port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    if transport == "sse":
        app = server.sse_app()
        url = f"http://{shown}:{port}/sse"
    else:
        app = server.streamable_http_app()
        url = f"http://{shown}:{port}/mcp"
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(f"{_READY}{url}", flush=True)
    anyio.run(lambda: uv.serve(sockets=[sock]))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the recording MCP server; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m harness.servers.mcp_program")
    parser.add_argument("--transport", choices=get_args(McpTransport), required=True)
    parser.add_argument("--record", type=Path, required=True, help="JSON-lines file to append to")
    parser.add_argument("--host", default="127.0.0.1", help="loopback address (sse/http)")
    args = parser.parse_args(argv)
    try:
        require_loopback(args.host)
    except NotLoopback as err:
        print(f"e2e-mcp: {err}", file=sys.stderr)
        return 2
    record: Path = args.record
    record.parent.mkdir(parents=True, exist_ok=True)
    server = _build(args.transport, record, args.host)
    if args.transport == "stdio":
        server.run("stdio")
    else:
        _serve_http(server, args.transport, args.host)
    return 0


if __name__ == "__main__":
    sys.exit(main())
