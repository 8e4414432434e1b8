"""The loopback OAuth authorization server, driven by urllib as contenox's client would drive it.

No contenox here: discovery, registration, authorize + token with a right and a
wrong PKCE verifier, refresh, expiry, denial, the stand-in browser, a refused
non-loopback bind, and stop.
"""

from __future__ import annotations

import http.server
import json
import secrets
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.servers.loopback import NotLoopback
from harness.servers.oauth import OAuthServer, pkce_challenge, start_oauth_server, write_browser


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def _get(url: str) -> tuple[int, dict[str, Any]]:
    with urllib.request.urlopen(url, timeout=10) as answer:
        return answer.status, json.loads(answer.read())


def _post(url: str, data: dict[str, str] | None = None, body: Any = None) -> tuple[int, Any]:
    if body is not None:
        payload, ctype = json.dumps(body).encode(), "application/json"
    else:
        payload, ctype = (
            urllib.parse.urlencode(data or {}).encode(),
            "application/x-www-form-urlencoded",
        )
    request = urllib.request.Request(url, data=payload, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _authorize(auth: OAuthServer, client_id: str, verifier: str, redirect: str) -> dict[str, str]:
    query = urllib.parse.urlencode(
        {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": redirect,
            "state": "st-1",
            "code_challenge": pkce_challenge(verifier),
            "code_challenge_method": "S256",
        }
    )
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(f"{auth.url}/authorize?{query}", timeout=10)
    except urllib.error.HTTPError as err:
        assert err.code == 302, err
        location = err.headers["Location"]
    else:  # pragma: no cover - the server always redirects
        raise AssertionError("no redirect")
    assert location.startswith(redirect)
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))


REDIRECT = "http://127.0.0.1:1/callback"


@pytest.fixture
def auth() -> Iterator[OAuthServer]:
    server = start_oauth_server()
    yield server
    server.stop()


def test_discovery_advertises_every_endpoint_on_the_servers_origin(auth: OAuthServer) -> None:
    status, meta = _get(f"{auth.url}/.well-known/oauth-authorization-server")
    assert status == 200
    assert meta["authorization_endpoint"] == f"{auth.url}/authorize"
    assert meta["token_endpoint"] == f"{auth.url}/token"
    assert meta["registration_endpoint"] == f"{auth.url}/register"
    assert meta["code_challenge_methods_supported"] == ["S256"]
    _, resource = _get(f"{auth.url}/.well-known/oauth-protected-resource")
    assert resource["authorization_servers"] == [auth.url]


def test_without_registration_the_metadata_has_no_registration_endpoint() -> None:
    server = start_oauth_server(registration=False)
    try:
        _, meta = _get(f"{server.url}/.well-known/oauth-authorization-server")
        assert "registration_endpoint" not in meta
        assert _post(f"{server.url}/register", body={"redirect_uris": [REDIRECT]})[0] == 404
    finally:
        server.stop()


def _register(auth: OAuthServer) -> str:
    status, reg = _post(f"{auth.url}/register", body={"redirect_uris": [REDIRECT]})
    assert status == 201
    return str(reg["client_id"])


def test_code_with_the_right_verifier_buys_a_bearer_token(auth: OAuthServer) -> None:
    client = _register(auth)
    verifier = secrets.token_urlsafe(40)
    back = _authorize(auth, client, verifier, REDIRECT)
    assert back["state"] == "st-1"
    form = {"grant_type": "authorization_code", "code": back["code"], "redirect_uri": REDIRECT}
    status, token = _post(
        f"{auth.url}/token", {**form, "code_verifier": verifier, "client_id": client}
    )
    assert status == 200, token
    assert token["token_type"] == "Bearer" and token["refresh_token"]
    assert auth.bearer_ok(f"Bearer {token['access_token']}")
    assert not auth.bearer_ok("Bearer forged")
    # A code is good once.
    again = _post(f"{auth.url}/token", {**form, "code_verifier": verifier})
    assert again[0] == 400


def test_a_wrong_verifier_is_refused_and_issues_nothing(auth: OAuthServer) -> None:
    client = _register(auth)
    back = _authorize(auth, client, secrets.token_urlsafe(40), REDIRECT)
    status, answer = _post(
        f"{auth.url}/token",
        {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": secrets.token_urlsafe(40),
        },
    )
    assert (status, answer["error"]) == (400, "invalid_grant")
    assert auth.issued == []


def test_refresh_trades_the_refresh_token_once_for_a_new_pair() -> None:
    auth = start_oauth_server(access_ttl=1)
    try:
        client = _register(auth)
        verifier = secrets.token_urlsafe(40)
        back = _authorize(auth, client, verifier, REDIRECT)
        _, first = _post(
            f"{auth.url}/token",
            {
                "grant_type": "authorization_code",
                "code": back["code"],
                "redirect_uri": REDIRECT,
                "code_verifier": verifier,
            },
        )
        deadline = time.monotonic() + 10
        while auth.bearer_ok(f"Bearer {first['access_token']}"):
            assert time.monotonic() < deadline, "the access token never expired"
            time.sleep(0.05)
        refresh = {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}
        status, second = _post(f"{auth.url}/token", refresh)
        assert status == 200
        assert second["access_token"] != first["access_token"]
        assert auth.bearer_ok(f"Bearer {second['access_token']}")
        assert _post(f"{auth.url}/token", refresh)[0] == 400  # rotated
    finally:
        auth.stop()


def test_deny_redirects_with_access_denied() -> None:
    auth = start_oauth_server(deny=True)
    try:
        back = _authorize(auth, "c", "v" * 43, REDIRECT)
        assert back["error"] == "access_denied" and "code" not in back
    finally:
        auth.stop()


def test_transcript_hides_every_secret(auth: OAuthServer) -> None:
    client = _register(auth)
    verifier = secrets.token_urlsafe(40)
    back = _authorize(auth, client, verifier, REDIRECT)
    _post(
        f"{auth.url}/token",
        {
            "grant_type": "authorization_code",
            "code": back["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
        },
    )
    text = json.dumps(auth.transcript())
    for secret in (verifier, back["code"], pkce_challenge(verifier), *auth.issued):
        assert secret not in text
    assert [r["request"] for r in auth.transcript()] == [
        "POST /register",
        "GET /authorize",
        "POST /token",
    ]
    assert "[SECRET]" in text and ":PORT/callback" in text


def test_the_stand_in_browser_delivers_the_redirect_to_the_callback(
    auth: OAuthServer, tmp_path: Path
) -> None:
    got: list[str] = []

    class Callback(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            got.append(self.path)
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    callback = http.server.HTTPServer(("127.0.0.1", 0), Callback)
    thread = threading.Thread(target=callback.handle_request, daemon=True)
    thread.start()
    try:
        redirect = f"http://127.0.0.1:{callback.server_port}/callback"
        query = urllib.parse.urlencode(
            {
                "response_type": "code",
                "client_id": "c",
                "redirect_uri": redirect,
                "state": "s",
                "code_challenge": pkce_challenge("v" * 43),
                "code_challenge_method": "S256",
            }
        )
        browser = write_browser(tmp_path / "bin") / "xdg-open"
        subprocess.run([str(browser), f"{auth.url}/authorize?{query}"], check=True, timeout=30)
        thread.join(timeout=10)
        assert len(got) == 1 and got[0].startswith("/callback?code=")
    finally:
        callback.server_close()


def test_forwarding_requires_a_live_bearer(tmp_path: Path) -> None:
    upstream = start_oauth_server()  # any HTTP server will do as the upstream
    auth = start_oauth_server(upstream=upstream.url)
    try:
        try:
            urllib.request.urlopen(
                f"{auth.url}/.well-known/oauth-authorization-server-x", timeout=10
            )
        except urllib.error.HTTPError as err:
            assert err.code == 401
            assert "resource_metadata" in err.headers["WWW-Authenticate"]
        else:
            raise AssertionError("forwarded without a token")
        assert upstream.requests() == []
    finally:
        auth.stop()
        upstream.stop()


def test_a_non_loopback_bind_is_refused() -> None:
    with pytest.raises(NotLoopback):
        start_oauth_server(host="0.0.0.0")


def test_stop_closes_the_port() -> None:
    auth = start_oauth_server()
    url = auth.url
    auth.stop()
    auth.stop()  # idempotent
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"{url}/.well-known/oauth-authorization-server", timeout=5)
