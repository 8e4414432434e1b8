"""Real servers a case points contenox at, on loopback only, each recording what it received.

- :mod:`harness.servers.mcp_server` — an MCP server on the official Python SDK, over
  stdio (contenox spawns it from :func:`stdio_command`), SSE or streamable HTTP
  (:func:`start_mcp_server` / :func:`serve_mcp`).
- :mod:`harness.servers.http_service` — a remote HTTP service with an OpenAPI document
  (:func:`start_http_service` / :func:`serve_http`).
- :mod:`harness.servers.relay` — a relay a paired contenox dials: pairing, the signed
  handshake, and ACP carried through it (:func:`start_relay` / :func:`serve_relay`).

All refuse any address but loopback (:class:`NotLoopback`), and what they received is
read back as frozen records.
"""

from .http_service import HttpRequest, HttpService, serve_http, start_http_service
from .loopback import NotLoopback, require_loopback
from .mcp_server import (
    McpCall,
    McpRecord,
    McpServer,
    McpServerError,
    McpTransport,
    read_mcp_records,
    serve_mcp,
    start_mcp_server,
    stdio_command,
)
from .relay import Relay, RelayError, serve_relay, start_relay

__all__ = [
    "HttpRequest",
    "HttpService",
    "McpCall",
    "McpRecord",
    "McpServer",
    "McpServerError",
    "McpTransport",
    "NotLoopback",
    "Relay",
    "RelayError",
    "read_mcp_records",
    "require_loopback",
    "serve_http",
    "serve_mcp",
    "serve_relay",
    "start_http_service",
    "start_mcp_server",
    "start_relay",
    "stdio_command",
]
