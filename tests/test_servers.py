"""The harness's servers: they start, record what they receive, stop, and bind loopback only.

No contenox here: the MCP server is driven by the MCP SDK's own client (the same
protocol contenox speaks), the HTTP service by urllib.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest

from harness.servers import (
    McpServerError,
    NotLoopback,
    read_mcp_records,
    start_http_service,
    start_mcp_server,
    stdio_command,
)
from harness.servers.mcp_program import main as mcp_main
from harness.servers.mcp_server import START_TIMEOUT, STOP_TIMEOUT, TOOLS


async def _drive(read: Any, write: Any) -> tuple[list[str], str]:
    from mcp import ClientSession

    async with ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        result = await session.call_tool(
            "note", {"text": "hi", "tenant_id": "acme", "undeclared": "kept"}
        )
        text = "".join(getattr(c, "text", "") for c in result.content)
        return sorted(t.name for t in listed.tools), text


def _call_over(transport: str, url: str, headers: dict[str, str]) -> tuple[list[str], str]:
    import httpx
    from mcp.client.sse import sse_client
    from mcp.client.streamable_http import streamable_http_client

    async def main() -> tuple[list[str], str]:
        with anyio.fail_after(30):
            if transport == "sse":
                async with sse_client(url, headers=headers) as (read, write):
                    return await _drive(read, write)
            async with (
                httpx.AsyncClient(headers=headers, timeout=30) as client,
                streamable_http_client(url, http_client=client) as (read, write, _),
            ):
                return await _drive(read, write)

    return anyio.run(main)


@pytest.mark.parametrize("transport", ["sse", "http"])
def test_the_mcp_server_records_arguments_and_headers_over_http_transports(
    tmp_path: Path, transport: str
) -> None:
    record = tmp_path / "rec.jsonl"
    started = time.monotonic()
    server = start_mcp_server(transport, record)  # type: ignore[arg-type]
    try:
        assert time.monotonic() - started < START_TIMEOUT
        assert server.url.startswith("http://127.0.0.1:")
        tools, text = _call_over(transport, server.url, {"X-Tenant": "acme"})
        assert tools == sorted(TOOLS)
        assert text == "noted: hi"
        [call] = server.calls("note")
        # Raw arguments, before validation: the undeclared one is kept.
        assert call.arguments == {"text": "hi", "tenant_id": "acme", "undeclared": "kept"}
        assert call.headers is not None and call.headers["x-tenant"] == "acme"
        assert call.transport == transport
        assert {r.method for r in server.records()} >= {"server/start", "tools/list", "tools/call"}
    finally:
        stopping = time.monotonic()
        server.stop()
        assert time.monotonic() - stopping <= STOP_TIMEOUT + 2
    assert not server.process.running


def test_the_mcp_server_records_a_call_over_stdio(tmp_path: Path) -> None:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    record = tmp_path / "rec.jsonl"
    command, args = stdio_command(record)

    async def main() -> tuple[list[str], str]:
        with anyio.fail_after(30):
            params = StdioServerParameters(command=command, args=args)
            async with stdio_client(params) as (read, write):
                return await _drive(read, write)

    tools, text = anyio.run(main)
    assert tools == sorted(TOOLS)
    assert text == "noted: hi"
    calls = [r for r in read_mcp_records(record) if r.method == "tools/call"]
    assert [(c.tool, c.headers) for c in calls] == [("note", None)]
    assert calls[0].arguments["undeclared"] == "kept"


def test_stdio_command_refuses_a_record_path_with_a_comma(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="comma"):
        stdio_command(tmp_path / "a,b.jsonl")


@pytest.mark.parametrize("host", ["0.0.0.0", "10.1.2.3", "::", "example.com"])
def test_the_mcp_server_refuses_a_non_loopback_bind_before_spawning(
    tmp_path: Path, host: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def trap(*a: object, **k: object) -> None:
        raise AssertionError("nothing may be spawned for a refused address")

    monkeypatch.setattr(subprocess, "Popen", trap)
    with pytest.raises(NotLoopback, match="refusing to bind"):
        start_mcp_server("sse", tmp_path / "rec.jsonl", host=host)


def test_the_mcp_program_itself_refuses_a_non_loopback_bind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        mcp_main(["--transport", "http", "--record", str(tmp_path / "r"), "--host", "0.0.0.0"]) == 2
    )
    assert "refusing to bind" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_server_that_exits_before_listening_fails_with_its_output(tmp_path: Path) -> None:
    broken = tmp_path / "broken-python"
    broken.write_text("#!/bin/sh\necho 'cannot import the SDK' >&2\nexit 3\n")
    broken.chmod(0o755)
    with pytest.raises(McpServerError, match="exited before it listened") as err:
        start_mcp_server("http", tmp_path / "rec.jsonl", python=str(broken))
    assert "cannot import the SDK" in str(err.value)


def test_start_mcp_server_refuses_stdio(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="stdio_command"):
        start_mcp_server("stdio", tmp_path / "rec.jsonl")


# ----------------------------------------------------------------------- the HTTP service


def _fetch(
    url: str,
    *,
    method: str = "GET",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_the_http_service_serves_its_openapi_document_and_records_every_request() -> None:
    service = start_http_service()
    try:
        assert service.url.startswith("http://127.0.0.1:")
        status, spec = _fetch(service.spec_url)
        assert status == 200 and spec["openapi"].startswith("3.")
        assert spec["paths"]["/weather"]["get"]["operationId"] == "get_weather"
        status, answer = _fetch(
            f"{service.url}/notes?tag=a&tag=b",
            method="POST",
            body=b'{"text": "hello", "tenant_id": "acme"}',
            headers={"Content-Type": "application/json", "X-Tenant": "acme"},
        )
        assert (status, answer) == (200, {"created": True, "text": "hello"})
        [note] = service.requests_to("/notes", "POST")
        assert note.query == {"tag": ("a", "b")}
        assert note.headers["x-tenant"] == "acme"
        assert note.json() == {"text": "hello", "tenant_id": "acme"}
        assert [r.path for r in service.requests()] == ["/openapi.json", "/notes"]
    finally:
        stopping = time.monotonic()
        service.stop()
        assert time.monotonic() - stopping < 5
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(service.spec_url, timeout=2)


def test_the_http_service_private_route_needs_the_login_it_hands_out() -> None:
    service = start_http_service()
    try:
        assert _fetch(f"{service.url}/private")[0] == 401
        _, login = _fetch(f"{service.url}/login", method="POST", body=b"{}")
        token = login["data"]["token"]
        assert _fetch(f"{service.url}/private", headers={"Authorization": f"Bearer {token}"}) == (
            200,
            {"secret_area": "welcome"},
        )
    finally:
        service.stop()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.5", "example.com"])
def test_the_http_service_refuses_a_non_loopback_bind(host: str) -> None:
    with pytest.raises(NotLoopback, match="refusing to bind"):
        start_http_service(host=host)


def test_the_http_service_speaks_https_with_a_self_signed_certificate(tmp_path: Path) -> None:
    import ssl

    from harness.servers.http_service import self_signed_context

    service = start_http_service(tls=self_signed_context(tmp_path))
    try:
        assert service.url.startswith("https://127.0.0.1:")
        with pytest.raises(urllib.error.URLError, match="CERTIFICATE_VERIFY_FAILED"):
            urllib.request.urlopen(service.spec_url, timeout=10)
        unverified = ssl._create_unverified_context()
        with urllib.request.urlopen(service.spec_url, timeout=10, context=unverified) as response:
            assert json.loads(response.read())["openapi"].startswith("3.")
        assert [r.path for r in service.requests()] == ["/openapi.json"]
    finally:
        service.stop()
