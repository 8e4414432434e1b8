"""A remote HTTP service with an OpenAPI v3 document, on loopback, recording every request.

It stands for the API a user registers with ``contenox tools add``: it serves
``/openapi.json`` (:data:`OPENAPI`) and answers each operation with a small JSON
body, and it records every request it receives — method, path, query, headers,
body — as :class:`HttpRequest` rows, in arrival order::

    service = serve_http(instance)
    instance.must("tools", "add", "svc", "--url", service.url, "--header", "X-Tenant: acme")
    ...
    [call] = service.requests_to("/weather")
    assert call.headers["x-tenant"] == "acme"

Built on ``pytest-httpserver`` (a maintained werkzeug server in a thread, with a
request log and port 0 support) rather than a hand-written ``http.server``: what
contenox sends is parsed by a real HTTP stack, and the server is a few lines of
routing, not a protocol implementation of our own.

Operations (tool names as contenox should derive them):

====================  ================================  ==========================================
path                  tool name                         answer
====================  ================================  ==========================================
GET /weather          ``get_weather`` (operationId)     ``{"city": …, "forecast": "sunny"}``
POST /notes           ``create_note`` (operationId)     ``{"created": true, "text": …}``
GET /alerts           ``alerts_get`` (fallback)         ``{"alerts": 0}``
GET /forecast         ``forecast_tool`` (x-tool-name)   ``{"forecast": "rain"}``
GET /private          ``get_private`` (operationId)     401 unless logged in (cookie or bearer)
POST /login           ``login`` (operationId)           sets cookie ``sid``, body ``data.token``
GET /forbidden        ``get_forbidden`` (own --spec)    403 unless logged in; not in OPENAPI
GET /health, /healthz, /ready, /readyz, /metrics       excluded from discovery by contenox
====================  ================================  ==========================================
"""

from __future__ import annotations

import json
import logging
import re
import ssl
import subprocess
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from .loopback import QuickStopServer, require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "LOGIN_COOKIE",
    "LOGIN_TOKEN",
    "OPENAPI",
    "HttpRequest",
    "HttpService",
    "serve_http",
    "start_http_service",
]

# werkzeug logs every request on stderr; the records are the log that counts.
logging.getLogger("werkzeug").setLevel(logging.WARNING)

# What /login hands out; /private accepts either.
LOGIN_COOKIE = "sid-e2e-7f3a"
LOGIN_TOKEN = "tok-e2e-91c2"


def _op(
    op_id: str | None,
    summary: str,
    *,
    params: tuple[tuple[str, bool], ...] = (),
    body: Mapping[str, Any] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    op: dict[str, Any] = {"summary": summary, "responses": {"200": {"description": "ok"}}}
    if op_id is not None:
        op["operationId"] = op_id
    if params:
        op["parameters"] = [
            {"name": name, "in": "query", "required": required, "schema": {"type": "string"}}
            for name, required in params
        ]
    if body is not None:
        op["requestBody"] = {"required": True, "content": {"application/json": {"schema": body}}}
    if extra:
        op.update(extra)
    return op


OPENAPI: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "e2e recording service", "version": "1.0.0"},
    "paths": {
        "/weather": {
            "get": _op(
                "get_weather",
                "Weather for a city",
                params=(("city", True), ("tenant_id", False)),
            )
        },
        "/notes": {
            "post": _op(
                "create_note",
                "Create a note",
                body={
                    "type": "object",
                    "properties": {"text": {"type": "string"}, "tenant_id": {"type": "string"}},
                    "required": ["text", "tenant_id"],
                },
            )
        },
        "/alerts": {"get": _op(None, "Active alerts")},
        "/forecast": {"get": _op(None, "Forecast", extra={"x-tool-name": "forecast_tool"})},
        "/private": {"get": _op("get_private", "Needs a login")},
        "/login": {"post": _op("login", "Log in")},
        **{
            path: {"get": _op(f"probe_{path.strip('/')}", f"{path} probe")}
            for path in ("/health", "/healthz", "/ready", "/readyz", "/metrics")
        },
    },
}


@dataclass(frozen=True)
class HttpRequest:
    """One request the service received. Header names are lower-cased."""

    method: str
    path: str
    query: Mapping[str, tuple[str, ...]]
    headers: Mapping[str, str]
    body: str

    def json(self) -> Any:
        """The body parsed as JSON (fails with the body if it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError as err:
            raise AssertionError(
                f"{self.method} {self.path}: body is not JSON ({err}): {self.body!r}"
            ) from err


class HttpService:
    """A running recording service: its base URL, its requests, and stop."""

    def __init__(self, server: HTTPServer, spec: Mapping[str, Any]) -> None:
        self._server = server
        self._spec = dict(spec)
        self._lock = threading.Lock()
        self._requests: list[HttpRequest] = []
        # Set once the server listens (its port is picked by the OS at start).
        self.url = ""

    @property
    def spec_url(self) -> str:
        return f"{self.url}/openapi.json"

    def requests(self) -> list[HttpRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str, method: str | None = None) -> list[HttpRequest]:
        """The requests to ``path`` (and ``method`` if given) received so far."""
        return [
            r
            for r in self.requests()
            if r.path == path and (method is None or r.method == method.upper())
        ]

    def describe(self) -> str:
        """Every request so far, one per line, for a failure message."""
        rows = [
            f"  {r.method} {r.path} {dict(r.query)} {dict(r.headers)} {r.body!r}"
            for r in self.requests()
        ]
        return f"requests received by {self.url}:\n" + ("\n".join(rows) or "  (none)")

    def _forget(self) -> None:
        with self._lock:
            self._requests.clear()

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self._server.is_running():
            self._server.stop()

    # ------------------------------------------------------------------ handling

    def _handle(self, request: Request) -> Response:
        body = request.get_data(as_text=True)
        with self._lock:
            self._requests.append(
                HttpRequest(
                    method=request.method,
                    path=request.path,
                    query={k: tuple(request.args.getlist(k)) for k in request.args},
                    headers={k.lower(): v for k, v in request.headers.items()},
                    body=body,
                )
            )
        return self._answer(request, body)

    def _answer(self, request: Request, body: str) -> Response:
        path, method = request.path, request.method
        if path == "/openapi.json" and method == "GET":
            return _json(self._spec)
        if path == "/weather":
            return _json({"city": request.args.get("city", ""), "forecast": "sunny"})
        if path == "/notes" and method == "POST":
            try:
                text = json.loads(body or "{}").get("text", "")
            except (ValueError, AttributeError):
                text = ""
            return _json({"created": True, "text": text})
        if path == "/alerts":
            return _json({"alerts": 0})
        if path == "/forecast":
            return _json({"forecast": "rain"})
        if path == "/login" and method == "POST":
            response = _json({"data": {"token": LOGIN_TOKEN}})
            response.set_cookie("sid", LOGIN_COOKIE)
            return response
        if path == "/private":
            cookie = request.cookies.get("sid")
            bearer = request.headers.get("Authorization", "")
            if cookie == LOGIN_COOKIE or bearer == f"Bearer {LOGIN_TOKEN}":
                return _json({"secret_area": "welcome"})
            return _json({"error": "login required"}, status=401)
        if path == "/forbidden":
            cookie = request.cookies.get("sid")
            bearer = request.headers.get("Authorization", "")
            if cookie == LOGIN_COOKIE or bearer == f"Bearer {LOGIN_TOKEN}":
                return _json({"secret_area": "welcome"})
            return _json({"error": "forbidden"}, status=403)
        if path in ("/health", "/healthz", "/ready", "/readyz", "/metrics"):
            return _json({"status": "ok"})
        return _json({"error": f"no route {method} {path}"}, status=404)


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


def self_signed_context(directory: Path, host: str = "127.0.0.1") -> ssl.SSLContext:
    """A server TLS context with a fresh self-signed certificate for ``host`` (openssl, 60 s)."""
    directory.mkdir(parents=True, exist_ok=True)
    key, cert = directory / "e2e-key.pem", directory / "e2e-cert.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-keyout", str(key), "-out", str(cert), "-subj", f"/CN={host}",
            "-addext", f"subjectAltName=IP:{host}",
        ],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    return context


def start_http_service(
    *,
    host: str = "127.0.0.1",
    spec: Mapping[str, Any] | None = None,
    tls: ssl.SSLContext | None = None,
) -> HttpService:
    """Start the service on ``host`` at an OS-picked port; it serves until :meth:`HttpService.stop`.

    Refuses a non-loopback ``host`` before binding anything. With ``tls`` it speaks
    HTTPS (:func:`self_signed_context` makes a certificate nobody trusts).
    """
    require_loopback(host)
    # The readiness probe is a plain urllib GET that would refuse our own self-signed
    # certificate; werkzeug has bound and is listening once start() returns anyway.
    probe = None if tls is not None else 10.0
    server = QuickStopServer(
        host=host, port=0, threaded=True, startup_timeout=probe, ssl_context=tls
    )
    service = HttpService(server, spec if spec is not None else OPENAPI)
    server.expect_request(re.compile(".*")).respond_with_handler(service._handle)
    server.start()
    # start() probes the server with a GET / of its own: not a request contenox made.
    service._forget()
    service.url = server.url_for("/").rstrip("/")
    return service


def serve_http(
    instance: Instance,
    *,
    host: str = "127.0.0.1",
    spec: Mapping[str, Any] | None = None,
    tls: bool = False,
) -> HttpService:
    """Start the service for this case (HTTPS, self-signed, with ``tls``); stopped when it ends."""
    context = self_signed_context(instance.tmp / "tls", host) if tls else None
    service = start_http_service(host=host, spec=spec, tls=context)

    def stop() -> None:
        service.stop()

    instance.cleanups.append(stop)
    return service
