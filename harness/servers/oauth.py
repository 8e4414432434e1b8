"""A loopback OAuth 2.1 authorization server for ``contenox mcp auth``, recording every request.

contenox's MCP OAuth client (``internal/services/localtools/mcpoauth`` in v1.0.0)
fetches ``<origin>/.well-known/oauth-authorization-server`` of the MCP server's
URL, registers a public client at ``registration_endpoint`` (RFC 7591), opens the
``authorization_endpoint`` with PKCE S256 in a browser (``xdg-open`` or ``open``
on PATH), waits on ``http://127.0.0.1:49152/callback``, and trades the code at
``token_endpoint``; later connections send ``Authorization: Bearer`` and refresh
through the same token endpoint. This server plays every one of those parts::

    auth = start_oauth_server(access_ttl=3600)
    opener = write_browser(tmp_path / "bin")   # an xdg-open that follows the redirect
    ...
    assert auth.bearer_ok(request.headers["authorization"])

It also answers ``/.well-known/oauth-protected-resource`` (RFC 9728) pointing at
itself, and with ``upstream=`` it forwards every other path to an MCP server,
requiring a live access token, so the MCP server and its authorization server share
one origin as contenox's discovery expects. Built on ``pytest-httpserver``
(werkzeug in a thread), like :mod:`.http_service`.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import secrets
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from .loopback import QuickStopServer, require_loopback

__all__ = [
    "BROWSER_NAMES",
    "OAuthRequest",
    "OAuthServer",
    "pkce_challenge",
    "start_oauth_server",
    "write_browser",
]

# The names contenox looks up on PATH to open a URL (openBrowserDefault).
BROWSER_NAMES = ("xdg-open", "open")

# Form and JSON fields whose values never reach a transcript.
_SECRET_FIELDS = frozenset(
    {"code", "code_verifier", "refresh_token", "access_token", "client_secret", "state"}
)


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of ``verifier`` (RFC 7636 §4.2)."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


@dataclass(frozen=True)
class OAuthRequest:
    """One request the server received; header names lower-cased, ``form`` the body's fields."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    form: Mapping[str, str]
    status: int = 0

    def redacted(self) -> dict[str, Any]:
        """A transcript-safe view: secret values as ``[SECRET]``, no ports or hosts."""

        def scrub(fields: Mapping[str, str]) -> dict[str, str]:
            return {
                k: ("[SECRET]" if k in _SECRET_FIELDS else v) for k, v in sorted(fields.items())
            }

        row: dict[str, Any] = {"request": f"{self.method} {self.path}", "status": self.status}
        if self.query:
            query = scrub(self.query)
            if "redirect_uri" in query:
                query["redirect_uri"] = re.sub(r":\d+/", ":PORT/", query["redirect_uri"])
            if "code_challenge" in query:
                query["code_challenge"] = "[SECRET]"
            row["query"] = query
        if self.form:
            form = scrub(self.form)
            if "redirect_uri" in form:
                form["redirect_uri"] = re.sub(r":\d+/", ":PORT/", form["redirect_uri"])
            row["form"] = form
        auth = self.headers.get("authorization", "")
        if auth:
            row["authorization"] = auth.split(" ", 1)[0] + " [SECRET]"
        return row


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    challenge: str
    method: str


@dataclass
class _Token:
    client_id: str
    expires_at: float
    refresh: str


@dataclass
class OAuthServer:
    """A running authorization server: its URL, its request log, its tokens, and stop."""

    server: HTTPServer
    access_ttl: int = 3600
    deny: bool = False
    registration: bool = True
    upstream: str | None = None
    url: str = ""
    # What the forwarded paths reach (an McpServer handle), for a case's readers.
    resource: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _requests: list[OAuthRequest] = field(default_factory=list)
    _clients: dict[str, dict[str, Any]] = field(default_factory=dict)
    _codes: dict[str, _Grant] = field(default_factory=dict)
    _tokens: dict[str, _Token] = field(default_factory=dict)
    _refresh: dict[str, str] = field(default_factory=dict)
    issued: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ reading
    def requests(self) -> list[OAuthRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def requests_to(self, path: str) -> list[OAuthRequest]:
        return [r for r in self.requests() if r.path == path]

    def transcript(self) -> list[dict[str, Any]]:
        """The request log with secrets as ``[SECRET]``, fit for a snapshot."""
        return [r.redacted() for r in self.requests()]

    def bearer_ok(self, header: str) -> bool:
        """Whether ``header`` is ``Bearer <a live access token this server issued>``."""
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer":
            return False
        with self._lock:
            entry = self._tokens.get(token)
        return entry is not None and entry.expires_at > time.monotonic()

    def describe(self) -> str:
        rows = [f"  {json.dumps(r)}" for r in self.transcript()]
        return f"requests received by {self.url}:\n" + ("\n".join(rows) or "  (none)")

    def stop(self) -> None:
        """Stop serving (idempotent)."""
        if self.server.is_running():
            self.server.stop()

    # ------------------------------------------------------------------ handling
    def _handle(self, request: Request) -> Response:
        form = {k: v for k, v in request.form.items()} if request.method == "POST" else {}
        if request.is_json:
            body = request.get_json(silent=True)
            if isinstance(body, dict):
                form = {k: json.dumps(v) if not isinstance(v, str) else v for k, v in body.items()}
        response = self._answer(request)
        with self._lock:
            self._requests.append(
                OAuthRequest(
                    method=request.method,
                    path=request.path,
                    query={k: v for k, v in request.args.items()},
                    headers={k.lower(): v for k, v in request.headers.items()},
                    form=form,
                    status=response.status_code,
                )
            )
        return response

    def _metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
        }
        if self.registration:
            meta["registration_endpoint"] = f"{self.url}/register"
        return meta

    def _answer(self, request: Request) -> Response:
        path, method = request.path, request.method
        if path == "/.well-known/oauth-authorization-server":
            return _json(self._metadata())
        if path.startswith("/.well-known/oauth-protected-resource"):
            return _json({"resource": self.url, "authorization_servers": [self.url]})
        if path == "/register" and method == "POST" and self.registration:
            return self._register(request)
        if path == "/authorize" and method == "GET":
            return self._authorize(request)
        if path == "/token" and method == "POST":
            return self._token(request)
        if self.upstream is not None:
            return self._forward(request)
        return _json({"error": f"no route {method} {path}"}, status=404)

    def _register(self, request: Request) -> Response:
        body = request.get_json(silent=True)
        if not isinstance(body, dict) or not body.get("redirect_uris"):
            return _json({"error": "invalid_client_metadata"}, status=400)
        client_id = f"client-{len(self._clients) + 1}"
        with self._lock:
            self._clients[client_id] = body
        return _json({"client_id": client_id, **body}, status=201)

    def _authorize(self, request: Request) -> Response:
        q = request.args
        redirect_uri = q.get("redirect_uri", "")
        host = urllib.parse.urlsplit(redirect_uri).hostname or ""
        if host not in ("127.0.0.1", "localhost", "::1"):
            return _json({"error": "invalid_request", "detail": "redirect_uri"}, status=400)
        state = q.get("state", "")
        if self.deny:
            params = {"error": "access_denied", "error_description": "the user said no"}
            return _redirect(redirect_uri, {**params, "state": state})
        if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256":
            return _redirect(redirect_uri, {"error": "invalid_request", "state": state})
        if not q.get("code_challenge"):
            return _redirect(redirect_uri, {"error": "invalid_request", "state": state})
        code = secrets.token_urlsafe(16)
        with self._lock:
            self._codes[code] = _Grant(
                client_id=q.get("client_id", ""),
                redirect_uri=redirect_uri,
                challenge=q["code_challenge"],
                method="S256",
            )
        return _redirect(redirect_uri, {"code": code, "state": state})

    def _token(self, request: Request) -> Response:
        form = request.form
        grant = form.get("grant_type")
        client_id = form.get("client_id") or (
            request.authorization.username if request.authorization else ""
        )
        if grant == "authorization_code":
            with self._lock:
                pending = self._codes.pop(form.get("code", ""), None)
            if pending is None:
                return _json({"error": "invalid_grant", "error_description": "unknown code"}, 400)
            if pending.redirect_uri != form.get("redirect_uri"):
                return _json({"error": "invalid_grant", "error_description": "redirect_uri"}, 400)
            if pkce_challenge(form.get("code_verifier", "")) != pending.challenge:
                return _json(
                    {"error": "invalid_grant", "error_description": "PKCE verifier mismatch"}, 400
                )
            return self._issue(pending.client_id or client_id or "")
        if grant == "refresh_token":
            with self._lock:
                old = self._refresh.pop(form.get("refresh_token", ""), None)
            if old is None:
                return _json({"error": "invalid_grant", "error_description": "refresh"}, 400)
            return self._issue(old)
        return _json({"error": "unsupported_grant_type"}, 400)

    def _issue(self, client_id: str) -> Response:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        with self._lock:
            self._tokens[access] = _Token(client_id, time.monotonic() + self.access_ttl, refresh)
            self._refresh[refresh] = client_id
            self.issued.append(access)
        return _json(
            {
                "access_token": access,
                "token_type": "Bearer",
                "expires_in": self.access_ttl,
                "refresh_token": refresh,
            }
        )

    def _forward(self, request: Request) -> Response:
        assert self.upstream is not None
        if not self.bearer_ok(request.headers.get("Authorization", "")):
            return Response(
                json.dumps({"error": "invalid_token"}),
                status=401,
                content_type="application/json",
                headers={
                    "WWW-Authenticate": 'Bearer resource_metadata="'
                    f'{self.url}/.well-known/oauth-protected-resource"'
                },
            )
        target = self.upstream.rstrip("/") + request.full_path.rstrip("?")
        headers = {
            k: v
            for k, v in request.headers.items()
            if k.lower() not in ("host", "authorization", "content-length", "connection")
        }
        upstream = urllib.request.Request(
            target, data=request.get_data() or None, headers=headers, method=request.method
        )
        try:
            answer = urllib.request.urlopen(upstream, timeout=60)
        except urllib.error.HTTPError as err:
            answer = err
        except OSError as err:
            return _json({"error": f"upstream unreachable: {err}"}, status=502)
        passed = {
            k: v
            for k, v in answer.headers.items()
            if k.lower() in ("content-type", "mcp-session-id", "mcp-protocol-version")
        }

        def relay() -> Iterator[bytes]:
            # Streamed as it arrives: an MCP answer may be an SSE stream that stays open.
            try:
                while chunk := answer.read1(65536):
                    yield chunk
            except (OSError, http.client.HTTPException):
                return
            finally:
                answer.close()

        return Response(relay(), status=answer.status, headers=passed, direct_passthrough=True)


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


def _redirect(uri: str, params: Mapping[str, str]) -> Response:
    sep = "&" if "?" in uri else "?"
    return Response(
        "", status=302, headers={"Location": uri + sep + urllib.parse.urlencode(params)}
    )


def start_oauth_server(
    *,
    host: str = "127.0.0.1",
    access_ttl: int = 3600,
    deny: bool = False,
    registration: bool = True,
    upstream: str | None = None,
) -> OAuthServer:
    """Start the server on ``host`` at an OS-picked port; it serves until :meth:`OAuthServer.stop`.

    Refuses a non-loopback ``host`` before binding anything. ``access_ttl`` is the
    access token's ``expires_in`` in seconds (a small one makes contenox refresh);
    ``deny`` answers every authorization with ``error=access_denied``;
    ``registration=False`` leaves ``registration_endpoint`` out of the metadata;
    ``upstream`` forwards every other path, given a live bearer token, to that URL.
    """
    require_loopback(host)
    server = QuickStopServer(host=host, port=0, threaded=True, startup_timeout=10.0)
    auth = OAuthServer(
        server, access_ttl=access_ttl, deny=deny, registration=registration, upstream=upstream
    )
    server.expect_request(re.compile(".*")).respond_with_handler(auth._handle)
    server.start()
    with auth._lock:
        auth._requests.clear()  # start()'s own readiness probe is not a client's request
    auth.url = server.url_for("/").rstrip("/")
    return auth


_BROWSER = '''#!{python}
"""A stand-in browser: GET the URL it is given, following redirects to the callback."""
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1], timeout=20).read()
except urllib.error.HTTPError:
    pass  # contenox's callback answers 400 to a denied authorization
'''


def write_browser(directory: Path) -> Path:
    """Write ``xdg-open`` and ``open`` into ``directory`` (put it first on the child's PATH).

    Each follows the authorization URL it is given to the 302 and delivers the
    redirect to contenox's loopback callback, as a browser would after the user
    clicks "allow"; it gives up after 20 s.
    """
    directory.mkdir(parents=True, exist_ok=True)
    for name in BROWSER_NAMES:
        program = directory / name
        program.write_text(_BROWSER.format(python=sys.executable))
        program.chmod(0o755)
    return directory
