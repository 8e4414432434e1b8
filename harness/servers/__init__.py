"""Real servers a case points contenox at, on loopback only, each recording what it received.

- :mod:`harness.servers.mcp_server` — an MCP server on the official Python SDK, over
  stdio (contenox spawns it from :func:`stdio_command`), SSE or streamable HTTP
  (:func:`start_mcp_server` / :func:`serve_mcp`).
- :mod:`harness.servers.http_service` — a remote HTTP service with an OpenAPI document
  (:func:`start_http_service` / :func:`serve_http`).
- :mod:`harness.servers.relay` — a relay a paired contenox dials: pairing, the signed
  handshake, and ACP carried through it (:func:`start_relay` / :func:`serve_relay`).
- :mod:`harness.servers.nats` — a real nats-server recording every message on ``>``,
  for ``CONTENOX_NATS_URL`` (:func:`start_nats_server` / :func:`serve_nats`).

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
from .nats import NatsMessage, NatsServer, NatsServerError, serve_nats, start_nats_server
from .relay import Relay, RelayError, serve_relay, start_relay

__all__ = [
    "HttpRequest",
    "HttpService",
    "McpCall",
    "McpRecord",
    "McpServer",
    "McpServerError",
    "McpTransport",
    "NatsMessage",
    "NatsServer",
    "NatsServerError",
    "NotLoopback",
    "Relay",
    "RelayError",
    "read_mcp_records",
    "require_loopback",
    "serve_http",
    "serve_mcp",
    "serve_nats",
    "serve_relay",
    "start_http_service",
    "start_mcp_server",
    "start_nats_server",
    "start_relay",
    "stdio_command",
]
