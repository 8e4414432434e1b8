"""The HTTPS proxy (harness/servers/https_proxy.py) without contenox: a Python client through it."""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness.servers import NotLoopback
from harness.servers.https_proxy import HttpsProxy, start_https_proxy


class _Hello(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        answer = b"seen " + self.path.encode() + b" " + body
        self.send_response(200)
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


@pytest.fixture
def upstream() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    # Polling for shutdown every 50 ms, not 0.5 s: each test waited for it at its end.
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def _client(proxy: HttpsProxy, host: str, cafile: Path | None) -> http.client.HTTPSConnection:
    context = ssl.create_default_context(cafile=str(cafile) if cafile else None)
    port = int(proxy.url.rsplit(":", 1)[1])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=10)
    conn.set_tunnel(host, 443)
    return conn


def test_a_client_trusting_the_ca_reaches_the_route(tmp_path: Path, upstream: str) -> None:
    with start_https_proxy(tmp_path, {"api.openai.com": upstream}) as proxy:
        conn = _client(proxy, "api.openai.com", proxy.ca_file)
        for n in (1, 2):  # two requests on one tunnel: keep-alive works
            conn.request("POST", f"/v1/x{n}", body=b"hi", headers={"Authorization": "Bearer k"})
            answer = conn.getresponse()
            assert (answer.status, answer.read()) == (200, f"seen /v1/x{n} hi".encode())
        conn.close()
        shown = proxy.shown()
    assert [(r["host"], r["method"], r["path"], r["status"]) for r in shown] == [
        ("api.openai.com", "POST", "/v1/x1", 200),
        ("api.openai.com", "POST", "/v1/x2", 200),
    ]
    assert shown[0]["headers"]["authorization"] == "[SECRET]"  # type: ignore[index]
    assert proxy.env == {"HTTPS_PROXY": proxy.url, "SSL_CERT_FILE": str(proxy.ca_file)}


def test_a_client_without_the_ca_refuses_the_leaf(tmp_path: Path, upstream: str) -> None:
    # Control for the one above: only the trusted CA changes, and TLS verification fails.
    with start_https_proxy(tmp_path, {"api.openai.com": upstream}) as proxy:
        conn = _client(proxy, "api.openai.com", None)
        with pytest.raises(ssl.SSLCertVerificationError):
            conn.request("GET", "/")
        conn.close()


def test_an_unrouted_host_gets_a_recorded_502(tmp_path: Path, upstream: str) -> None:
    with start_https_proxy(tmp_path, {"api.openai.com": upstream}) as proxy:
        conn = _client(proxy, "api.github.com", proxy.ca_file)
        with pytest.raises(OSError, match="502"):
            conn.request("GET", "/")
        conn.close()
        [refused] = proxy.requests()
    assert (refused.host, refused.method, refused.routed, refused.status) == (
        "api.github.com",
        "CONNECT",
        False,
        502,
    )


def test_a_non_loopback_bind_or_upstream_is_refused(tmp_path: Path, upstream: str) -> None:
    with pytest.raises(NotLoopback):
        HttpsProxy(tmp_path, {}, "0.0.0.0")
    with pytest.raises(NotLoopback):
        HttpsProxy(tmp_path, {"api.openai.com": "http://192.0.2.1:80"}, "127.0.0.1")


def test_close_stops_listening(tmp_path: Path, upstream: str) -> None:
    proxy = HttpsProxy(tmp_path, {"api.openai.com": upstream}, "127.0.0.1")
    port = int(proxy.url.rsplit(":", 1)[1])
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    proxy.close()
    proxy.close()  # idempotent
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
