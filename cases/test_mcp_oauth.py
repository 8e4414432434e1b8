"""MCP OAuth: `contenox mcp auth NAME` against a loopback authorization server, then tool calls.

The server is ``serve(name, "mcp-oauth")``: the harness's HTTP MCP server behind
the OAuth 2.1 authorization server of harness/servers/oauth.py on one origin
(discovery, dynamic registration, /authorize with PKCE S256, /token for the code
and for refresh; the MCP paths want a live Bearer token). ``{name_bin}`` holds a
stand-in ``xdg-open`` that follows the authorization URL and delivers the redirect
to contenox's callback, as a browser would after the user clicks "allow". Every
reading comes from the authorization server's request log or the MCP server's
record, never contenox's database.
"""

from __future__ import annotations

from typing import Any

from harness import Case, Script, ToolCall, Turn, mission_finish, received, serve, step
from harness.case import Action, open_envelope_step
from harness.servers.oauth import OAuthServer
from harness.servers.wiring import OPEN_ENVELOPE

# contenox prints the authorization URL it opens: its state and PKCE challenge are fresh
# randomness every run, and the client id is this server's.
REDACT = {
    r"(?<=[?&]state=)[A-Za-z0-9_-]+": "[STATE]",
    r"(?<=[?&]code_challenge=)[A-Za-z0-9_-]+": "[CHALLENGE]",
}

# The authorization endpoints; every other path is the MCP server behind the token check.
_AUTH_PATHS = ("/.well-known/", "/register", "/authorize", "/token")

_COUNT = Script(
    turns=[
        Turn(text="Calling the server.", tool_calls=[ToolCall("count", {})]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _browser_path(name: str) -> dict[str, str]:
    """contenox's PATH: the stand-in browser first, then the system's own programs."""
    return {"PATH": f"{{{name}_bin}}:/usr/bin:/bin"}


def _add(name: str, *extra: str) -> Action:
    return step(
        "mcp",
        "add",
        name,
        "--transport",
        "http",
        "--url",
        f"{{{name}_url}}",
        "--auth-type",
        "oauth",
        *extra,
    )


def _auth(name: str, **expect: Any) -> Action:
    return step("mcp", "auth", name, env=_browser_path(name), timeout=60, **expect)


def _run(task: str) -> Action:
    return step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", task)


def _flow(auth: OAuthServer) -> list[str]:
    """The authorization server's log, one ``METHOD /path grant`` per request to it."""
    rows = []
    for r in auth.requests():
        if r.path.startswith(_AUTH_PATHS):
            grant = r.form.get("grant_type")
            rows.append(f"{r.method} {r.path}" + (f" {grant}" if grant else ""))
    return rows


def _bearer_on_mcp(auth: OAuthServer) -> list[str]:
    """For each request that reached past the token check to the MCP server: was its Bearer live?"""
    seen = set()
    for r in auth.requests():
        if not r.path.startswith(_AUTH_PATHS):
            seen.add("live bearer" if r.status != 401 else f"refused ({r.status})")
    return sorted(seen)


def _count_calls(auth: OAuthServer) -> int:
    return len(auth.resource.calls("count"))


AUTH_SUCCEEDS = Case(
    name="mcp auth runs discovery, registration, PKCE authorization and the code exchange",
    init=True,
    redact=REDACT,
    steps=[
        serve("rec", "mcp-oauth"),
        _add("rec"),
        _auth("rec", stdout_has=["rec: authenticated successfully."]),
        received(
            "rec",
            "the OAuth requests",
            _flow,
            expect=[
                "GET /.well-known/oauth-authorization-server",
                "POST /register",
                "GET /authorize",
                "POST /token authorization_code",
            ],
        ),
        received("rec", "the transcript of the flow", lambda a: a.transcript()),
    ],
)

AUTH_DENIED = Case(
    name="mcp auth fails when the user denies the authorization",
    init=True,
    redact=REDACT,
    steps=[
        serve("rec", "mcp-oauth-deny"),
        _add("rec"),
        _auth(
            "rec",
            exit_code="non-zero",
            stdout_lacks=["authenticated successfully"],
            stderr_has=["authorization denied: access_denied"],
        ),
        received(
            "rec",
            "the OAuth requests",
            _flow,
            expect=[
                "GET /.well-known/oauth-authorization-server",
                "POST /register",
                "GET /authorize",
            ],
        ),
    ],
)

TOKEN_SENT_AND_REUSED = Case(
    name="after mcp auth the token is sent as Bearer on tool calls and reused across sessions",
    # A second process starts the dialog at turn one again: one script serves both runs.
    script=_COUNT,
    redact=REDACT,
    steps=[
        open_envelope_step(),
        serve("rec", "mcp-oauth"),
        _add("rec"),
        _auth("rec"),
        _run("count"),
        _run("count again"),
        received("rec", "count calls reaching the MCP server", _count_calls, expect=2),
        received("rec", "Bearer on MCP requests", _bearer_on_mcp, expect=["live bearer"]),
        # One authorization and one code exchange for both sessions: no refresh either.
        received(
            "rec",
            "the OAuth requests",
            lambda a: [f for f in _flow(a) if not f.startswith("GET /.well-known")],
            expect=["POST /register", "GET /authorize", "POST /token authorization_code"],
        ),
    ],
)

NOT_AUTHENTICATED = Case(
    name="without mcp auth an oauth server's tools are never called",
    script=_COUNT,
    redact=REDACT,
    steps=[
        open_envelope_step(),
        serve("rec", "mcp-oauth"),
        _add("rec"),
        _run("count"),
        received("rec", "count calls reaching the MCP server", _count_calls, expect=0),
        received(
            "rec",
            "token requests",
            lambda a: [f for f in _flow(a) if "/token" in f or "/authorize" in f],
            expect=[],
        ),
    ],
)

REFRESHED_WHEN_EXPIRED = Case(
    name="an expired access token is refreshed through the token endpoint on the next connection",
    script=_COUNT,
    redact=REDACT,
    steps=[
        open_envelope_step(),
        serve("rec", "mcp-oauth-expiring"),
        _add("rec"),
        _auth("rec"),
        _run("count"),
        received("rec", "count calls reaching the MCP server", _count_calls, expect=1),
        received("rec", "Bearer on MCP requests", _bearer_on_mcp, expect=["live bearer"]),
        received(
            "rec",
            "a refresh happened",
            lambda a: "POST /token refresh_token" in _flow(a),
            expect=True,
        ),
    ],
)
