"""An HTTPS proxy on loopback that plays fixed hosts (``api.openai.com``, …) with a throwaway CA.

Some of contenox's endpoints are fixed URLs nobody passes with ``--url``. Go's
default transport honours ``HTTPS_PROXY`` and ``SSL_CERT_FILE``, so a child
given :attr:`HttpsProxy.env` sends its ``CONNECT api.openai.com:443`` here. The
proxy answers ``200``, terminates TLS with a leaf for that host signed by a CA
made per proxy (the only CA the child then trusts), reads each HTTP request and
forwards it to the loopback handler routed for that host (typically a stand-in
of :mod:`harness.servers.providers`), streaming the answer back::

    with start_https_proxy(tmp_dir, {"api.openai.com": standin.url}) as proxy:
        # contenox ... with env=proxy.env
        [req] = proxy.requests()   # host, method, path, headers (keys as [SECRET])

A host with no route gets ``502`` to its ``CONNECT`` and is recorded with
``routed=False``. Everything binds loopback only; every socket has a timeout;
:meth:`HttpsProxy.close` stops the serving thread.
"""

from __future__ import annotations

import http.client
import socket
import socketserver
import ssl
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .certs import ThrowawayCA
from .loopback import require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "HttpsProxy",
    "ProxyRequest",
    "serve_https_proxy",
    "start_https_proxy",
]

SECRET = "[SECRET]"
# Headers (lower-case) carrying a credential: recorded as [SECRET].
SECRET_HEADERS = frozenset(
    {"authorization", "x-api-key", "api-key", "x-goog-api-key", "x-amz-security-token"}
)
# Hop-by-hop headers the proxy does not forward as they came.
_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te"})
TIMEOUT = 30.0


@dataclass(frozen=True)
class ProxyRequest:
    """One request that reached the proxy: a CONNECT refused, or a request inside a tunnel."""

    host: str
    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    routed: bool = True
    status: int = 0

    def shown(self) -> dict[str, object]:
        """The transcript form: credential headers as ``[SECRET]``, names lower-case, sorted."""
        return {
            "host": self.host,
            "method": self.method,
            "path": self.path,
            "routed": self.routed,
            "status": self.status,
            "headers": {
                k: (SECRET if k in SECRET_HEADERS else v) for k, v in sorted(self.headers.items())
            },
        }


class _CA:
    """The proxy's throwaway CA, and a server context per host it is asked for."""

    def __init__(self, directory: Path) -> None:
        self._ca = ThrowawayCA(directory, label="contenox-e2e proxy CA", file_name="proxy-ca.pem")
        self.file = self._ca.file
        self._contexts: dict[str, ssl.SSLContext] = {}
        self._lock = threading.Lock()

    def context(self, host: str) -> ssl.SSLContext:
        with self._lock:
            if host not in self._contexts:
                stem = f"leaf-{len(self._contexts)}"
                self._contexts[host] = self._ca.server_context(
                    host, cert_name=f"{stem}.pem", key_name=f"{stem}.key", alpn=["http/1.1"]
                )
            return self._contexts[host]


def _read_head(stream: socket.socket | ssl.SSLSocket) -> tuple[str, dict[str, str], bytes] | None:
    """Read a request line and headers; return (line, headers lower-cased, leftover bytes)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = stream.recv(65536)
        if not chunk:
            return None
        data += chunk
        if len(data) > 1 << 20:
            return None
    head, rest = data.split(b"\r\n\r\n", 1)
    line, *lines = head.decode("latin-1").split("\r\n")
    headers: dict[str, str] = {}
    for raw in lines:
        name, _, value = raw.partition(":")
        headers[name.strip().lower()] = value.strip()
    return line, headers, rest


class _Handler(socketserver.BaseRequestHandler):
    server: _Server

    def handle(self) -> None:
        sock: socket.socket = self.request
        sock.settimeout(TIMEOUT)
        proxy = self.server.proxy
        try:
            got = _read_head(sock)
            if got is None:
                return
            line, _headers, _ = got
            method, target, *_ = ([*line.split(" "), "", ""])[:3]
            host = target.rsplit(":", 1)[0] if method == "CONNECT" else urlsplit(target).hostname
            host = (host or "").lower()
            upstream = proxy.routes.get(host)
            if method != "CONNECT" or upstream is None:
                why = (
                    f"no route for {host!r} in the e2e HTTPS proxy (routed: "
                    f"{', '.join(sorted(proxy.routes)) or 'none'})"
                    if method == "CONNECT"
                    else f"the e2e HTTPS proxy only tunnels CONNECT, not {method} {target}"
                )
                proxy._record(ProxyRequest(host, method, target, {}, routed=False, status=502))
                body = why.encode() + b"\n"
                sock.sendall(
                    b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
                return
            sock.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            tls = proxy._ca.context(host).wrap_socket(sock, server_side=True)
            tls.settimeout(TIMEOUT)
            self._tunnel(tls, host, upstream)
        except (OSError, ssl.SSLError, ValueError):
            return

    def _tunnel(self, tls: ssl.SSLSocket, host: str, upstream: str) -> None:
        proxy = self.server.proxy
        target = urlsplit(upstream)
        leftover = b""
        while not proxy._stopping.is_set():
            got = _read_head_with(tls, leftover)
            if got is None:
                return
            line, headers, rest = got
            method, path, *_ = ([*line.split(" "), "", ""])[:3]
            body, leftover = _read_body(tls, headers, rest)
            conn = http.client.HTTPConnection(
                target.hostname or "127.0.0.1", target.port, timeout=TIMEOUT
            )
            try:
                sent = {k: v for k, v in headers.items() if k not in _HOP and k != "content-length"}
                sent["content-length"] = str(len(body))
                conn.request(method, path, body=body, headers=sent)
                answer = conn.getresponse()
                proxy._record(ProxyRequest(host, method, path, dict(headers), status=answer.status))
                out = [f"HTTP/1.1 {answer.status} {answer.reason}"]
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP and name.lower() != "content-length":
                        out.append(f"{name}: {value}")
                out.append("Transfer-Encoding: chunked")
                tls.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
                while True:
                    chunk = answer.read1(65536)
                    if not chunk:
                        break
                    tls.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                tls.sendall(b"0\r\n\r\n")
            finally:
                conn.close()
            if headers.get("connection", "").lower() == "close":
                return


def _read_head_with(
    tls: ssl.SSLSocket, leftover: bytes
) -> tuple[str, dict[str, str], bytes] | None:
    if b"\r\n\r\n" in leftover:
        head, rest = leftover.split(b"\r\n\r\n", 1)
        line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for raw in lines:
            name, _, value = raw.partition(":")
            headers[name.strip().lower()] = value.strip()
        return line, headers, rest
    got = _read_head(_Prefixed(tls, leftover))  # type: ignore[arg-type]
    return got


class _Prefixed:
    """A socket whose first recv returns bytes already read."""

    def __init__(self, sock: ssl.SSLSocket, prefix: bytes) -> None:
        self._sock, self._prefix = sock, prefix

    def recv(self, size: int) -> bytes:
        if self._prefix:
            data, self._prefix = self._prefix, b""
            return data
        return self._sock.recv(size)


def _read_body(tls: ssl.SSLSocket, headers: Mapping[str, str], rest: bytes) -> tuple[bytes, bytes]:
    """The request body (Content-Length or chunked) and whatever came after it."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        data, body = rest, b""
        while True:
            while b"\r\n" not in data:
                data += _recv(tls)
            size_line, data = data.split(b"\r\n", 1)
            size = int(size_line.split(b";")[0], 16)
            while len(data) < size + 2:
                data += _recv(tls)
            body, data = body + data[:size], data[size + 2 :]
            if size == 0:
                while not data.startswith(b"\r\n") and b"\r\n\r\n" not in data:
                    if data == b"":
                        break
                    data += _recv(tls)
                return body, data.split(b"\r\n", 1)[1] if b"\r\n" in data else b""
    length = int(headers.get("content-length", "0") or "0")
    while len(rest) < length:
        rest += _recv(tls)
    return rest[:length], rest[length:]


def _recv(tls: ssl.SSLSocket) -> bytes:
    chunk = tls.recv(65536)
    if not chunk:
        raise ValueError("the client closed the tunnel mid-request")
    return chunk


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], proxy: HttpsProxy) -> None:
        self.proxy = proxy
        super().__init__(address, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        pass


class HttpsProxy:
    """A running proxy: its URL, the CA file a child trusts, what it received, and close."""

    def __init__(self, directory: Path, routes: Mapping[str, str], host: str) -> None:
        require_loopback(host)
        for name, upstream in routes.items():
            parts = urlsplit(upstream)
            if parts.scheme != "http" or parts.hostname is None:
                raise ValueError(
                    f"route {name!r}: upstream must be http://HOST:PORT, not {upstream!r}"
                )
            require_loopback(parts.hostname)
        self.routes = {k.lower(): v for k, v in routes.items()}
        self._ca = _CA(directory)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[ProxyRequest] = []
        self._server = _Server((host, 0), self)
        self.url = f"http://{host}:{self._server.server_address[1]}"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()

    @property
    def ca_file(self) -> Path:
        """The PEM file of the throwaway CA (the only CA a child given :attr:`env` trusts)."""
        return self._ca.file

    @property
    def env(self) -> dict[str, str]:
        """What a child needs to go through the proxy: ``HTTPS_PROXY`` and ``SSL_CERT_FILE``."""
        return {"HTTPS_PROXY": self.url, "SSL_CERT_FILE": str(self._ca.file)}

    def requests(self) -> list[ProxyRequest]:
        """Every request so far, oldest first (refused CONNECTs included, ``routed=False``)."""
        with self._lock:
            return list(self._requests)

    def shown(self) -> list[dict[str, object]]:
        return [r.shown() for r in self.requests()]

    def describe(self) -> str:
        rows = [f"  {r.method} {r.host} {r.path} status={r.status}" for r in self.requests()]
        return f"requests received by the HTTPS proxy at {self.url}:\n" + (
            "\n".join(rows) or "  (none)"
        )

    def close(self) -> None:
        """Stop serving and wait for the serving thread (idempotent)."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10.0)

    def __enter__(self) -> HttpsProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _record(self, request: ProxyRequest) -> None:
        with self._lock:
            self._requests.append(request)


@contextmanager
def start_https_proxy(
    directory: Path, routes: Mapping[str, str], *, host: str = "127.0.0.1"
) -> Iterator[HttpsProxy]:
    """A proxy routing each host of ``routes`` to its ``http://127.0.0.1:PORT`` upstream."""
    proxy = HttpsProxy(directory, routes, host)
    try:
        yield proxy
    finally:
        proxy.close()


def serve_https_proxy(instance: Instance, routes: Mapping[str, str]) -> HttpsProxy:
    """A proxy for this case, its CA inside the scratch root; closed when the case ends."""
    proxy = HttpsProxy(instance.root / "proxy", routes, "127.0.0.1")
    instance.recorder.name(proxy.url, "[HTTPS_PROXY]")
    instance.recorder.name(str(proxy.ca_file), "[PROXY_CA]")

    def stop() -> None:
        proxy.close()

    instance.cleanups.append(stop)
    return proxy
