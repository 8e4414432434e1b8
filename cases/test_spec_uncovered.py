"""Ledger rows that stood `uncovered` on the specification, tools and development pages.

integrations/tools/index.md:57 says the macros work in `prompt_template` as in a system
instruction; every other macro case renders them in a `system_instruction`. What a task sent
the model is read back with `state show --raw`.
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.parse
from typing import Any

from chains import END, chain, task
from relaying import INIT, INSTANCE_ID, _connected, _end
from test_tutorials import FILES_THE_NOTE, FIRE_VAULT, FIRED, NOTE_PATH, VAULT_FILES

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    probe,
    probes,
    received,
    step,
)
from harness.case import Action, model_saw, open_envelope_step, serve
from harness.servers import HttpService
from harness.servers.http_service import LOGIN_COOKIE, OPENAPI
from harness.servers.https_proxy import HttpsProxy, serve_https_proxy
from harness.servers.oauth import OAuthServer
from harness.servers.relay import Relay
from harness.servers.wiring import OPEN_ENVELOPE


def _sent_to(task_id: str):
    """What the one captured run sent the model on ``task_id``'s turn, system prompts aside."""

    def read(instance: Instance) -> list[str]:
        run = probes.the_captured_run(instance)
        return [
            m.content
            for u in probes.captured_units(instance, run)
            if u.task == task_id
            for m in u.sent
            if m.role != "system"
        ]

    return read


# The same macros the system-instruction case renders, here in the task's prompt_template; the
# input is spliced in beside them so the template is seen to be what was sent.
MACROS_IN_A_PROMPT_TEMPLATE = Case(
    name="the chain and var macros render in a prompt template",
    script=Script(turns=["templated answer"]),
    files={
        "c.json": chain(
            task(
                "ask",
                prompt_template=(
                    "CHAIN={{chain:id}} MODEL={{var:model}} Q={{ (last .input.Messages).Content }}"
                ),
                transition=END,
            ),
            chain_id="macro-chain",
        )
    },
    steps=[step("chat", "--chain", "c.json", "the question", stdout_has=["templated answer"])],
    probes=[
        probe(
            "what the ask task sent the model",
            _sent_to("ask"),
            expect=["CHAIN=macro-chain MODEL=scripted-test Q=the question"],
        )
    ],
)


# ---------------------------------------------------------------- remote.md: a 403 logs in
# integrations/tools/remote.md:128 "When a tool call receives a `401` or `403`, the runtime:"
# The recording service's /forbidden answers 403 until logged in; it is no part of the shared
# OPENAPI (every discovery case would change), so this case registers it with its own --spec.
_FORBIDDEN_SPEC = json.dumps(
    {
        **OPENAPI,
        "paths": {
            "/forbidden": {
                "get": {
                    "operationId": "get_forbidden",
                    "summary": "Needs a login (answers 403)",
                    "responses": {"200": {"description": "ok"}},
                }
            },
            "/login": OPENAPI["paths"]["/login"],
        },
    }
)


def _forbidden_flow(service: HttpService) -> dict[str, object]:
    """The /forbidden and /login requests, and whether the retry carried the cookie."""
    calls = [r for r in service.requests() if r.path in ("/forbidden", "/login")]
    forbidden = service.requests_to("/forbidden")
    return {
        "requests": [f"{r.method} {r.path}" for r in calls],
        "the retry carries the cookie": bool(forbidden)
        and f"sid={LOGIN_COOKIE}" in forbidden[-1].headers.get("cookie", ""),
    }


A_403_LOGS_IN = Case(
    name="a 403 logs in with the cookie flow and retries as a 401 does",
    script=Script(
        turns=[
            Turn(text="Calling the service.", tool_calls=[ToolCall("get_forbidden", {})]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    ),
    files={"forbidden.json": _FORBIDDEN_SPEC},
    steps=[
        open_envelope_step(),
        serve("svc", "openapi"),
        step(
            "tools",
            "add",
            "erp",
            "--url",
            "{svc_url}",
            "--spec",
            "./forbidden.json",
            "--auth-login-url",
            "{svc_url}/login",
            "--auth-login-body",
            '{"usr":"alice"}',
            "--auth-extract-cookie",
            "sid",
            "--auth-inject-header",
            "Cookie",
        ),
        step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "forbidden"),
        received(
            "svc",
            "the calls and the login",
            _forbidden_flow,
            expect={
                "requests": ["GET /forbidden", "POST /login", "GET /forbidden"],
                "the retry carries the cookie": True,
            },
        ),
        model_saw('"secret_area":"welcome"'),
    ],
)


# ---------------------------------------------------------------- mcp.md: OAuth again, pre-issued
# integrations/tools/mcp.md, against harness/servers/oauth.py behind `serve(name, "mcp-oauth")`,
# the browser a stand-in xdg-open on PATH (as cases/test_mcp_oauth.py).


# The authorization URL contenox prints holds fresh randomness each run.
_OAUTH_REDACT = {
    r"(?<=[?&]state=)[A-Za-z0-9_-]+": "[STATE]",
    r"(?<=[?&]code_challenge=)[A-Za-z0-9_-]+": "[CHALLENGE]",
}
_AUTH_PATHS = ("/.well-known/", "/register", "/authorize", "/token")
_COUNT = Script(
    turns=[
        Turn(text="Calling the server.", tool_calls=[ToolCall("count", {})]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _mcp_add_oauth(name: str, *extra: str) -> Action:
    return step(
        "mcp", "add", name, "--transport", "http", "--url", f"{{{name}_url}}",
        "--auth-type", "oauth", *extra,
    )  # fmt: skip


def _mcp_auth(name: str, env_secret: str | None = None, **expect: Any) -> Action:
    """`mcp auth` with the stand-in browser first on PATH (and the client secret, if given)."""
    env = {"PATH": f"{{{name}_bin}}:/usr/bin:/bin"}
    if env_secret is not None:
        env["E2E_HUB_SECRET"] = env_secret
    return step("mcp", "auth", name, env=env, timeout=60, **expect)


def _oauth_flow(auth: OAuthServer) -> list[str]:
    """The authorization server's log, ``METHOD /path`` (and the grant) per request to it."""
    rows = []
    for r in auth.requests():
        if r.path.startswith(_AUTH_PATHS):
            grant = r.form.get("grant_type")
            rows.append(f"{r.method} {r.path}" + (f" {grant}" if grant else ""))
    return rows


MCP_AUTH_AGAIN = Case(
    name="mcp auth again runs a second authorization and code exchange",
    init=True,
    redact=_OAUTH_REDACT,
    steps=[
        serve("rec", "mcp-oauth"),
        _mcp_add_oauth("rec"),
        _mcp_auth("rec", stdout_has=["rec: authenticated successfully."]),
        _mcp_auth("rec", stdout_has=["rec: authenticated successfully."]),
        received(
            "rec",
            "authorizations and code exchanges",
            lambda a: [f for f in _oauth_flow(a) if "/authorize" in f or "/token" in f],
            expect=[
                "GET /authorize",
                "POST /token authorization_code",
                "GET /authorize",
                "POST /token authorization_code",
            ],
        ),
    ],
)


def _client_credentials(auth: OAuthServer) -> list[dict[str, str]]:
    """Each distinct (grant, client id, secret) the /token requests carried (Basic or form).

    The expiring server's token lives a moment, so a run refreshes before each request: how
    many refreshes is timing, what they carry is not."""
    rows: list[dict[str, str]] = []
    for r in auth.requests_to("/token"):
        client_id, secret = r.form.get("client_id", ""), r.form.get("client_secret", "")
        header = r.headers.get("authorization", "")
        if header.lower().startswith("basic "):
            user, _, password = base64.b64decode(header[6:]).decode().partition(":")
            client_id = client_id or urllib.parse.unquote(user)
            secret = secret or urllib.parse.unquote(password)
        row = {"grant": r.form.get("grant_type", ""), "client": client_id, "secret": secret}
        if row not in rows:
            rows.append(row)
    return rows


def _authorize_clients(auth: OAuthServer) -> list[dict[str, str]]:
    """The client id and redirect URI each /authorize request named."""
    return [
        {"client_id": r.query.get("client_id", ""), "redirect_uri": r.query.get("redirect_uri", "")}
        for r in auth.requests_to("/authorize")
    ]


# The variable's value is a different one at `mcp auth` and at the run that refreshes the
# expired token: what each request carries is the environment of the command that made it.
PRE_ISSUED_CLIENT = Case(
    name=(
        "a pre issued oauth client authenticates without registration "
        "and its secret is read at each connection"
    ),
    script=_COUNT,
    redact=_OAUTH_REDACT,
    steps=[
        open_envelope_step(),
        serve("rec", "mcp-oauth-expiring"),
        _mcp_add_oauth(
            "rec", "--oauth-client-id", "hub-app-1", "--oauth-client-secret-env", "E2E_HUB_SECRET"
        ),
        _mcp_auth("rec", env_secret="first-secret-1", stdout_has=["authenticated successfully"]),
        received(
            "rec",
            "the OAuth requests of mcp auth",
            _oauth_flow,
            expect=[
                "GET /.well-known/oauth-authorization-server",
                "GET /authorize",
                "POST /token authorization_code",
            ],
        ),
        received(
            "rec",
            "the client and redirect /authorize was given",
            _authorize_clients,
            expect=[{"client_id": "hub-app-1", "redirect_uri": "http://127.0.0.1:49152/callback"}],
        ),
        step(
            "run",
            "--policy",
            OPEN_ENVELOPE,
            "--timeout",
            "90s",
            "count",
            env={"E2E_HUB_SECRET": "second-secret-2"},
        ),
        received(
            "rec",
            "the client credentials each token request carried",
            _client_credentials,
            expect=[
                {"grant": "authorization_code", "client": "hub-app-1", "secret": "first-secret-1"},
                {"grant": "refresh_token", "client": "hub-app-1", "secret": "second-secret-2"},
            ],
        ),
    ],
)


# ---------------------------------------------------------------- relay-protocol.md: no TLS pinning
# specification/relay-protocol.md:104 "deliberately not TLS pinning: a relay's certificate comes
# from an ACME CA and rotates every ~90 days". The relay keeps its address and its CA and serves
# a fresh leaf; the runtime's next dial must get through. A pinning runtime would refuse the
# handshake, and no second connection would reach the upgrade.


def _served_leaf(relay: Relay) -> str:
    host, port = relay.url.removeprefix("https://").rsplit(":", 1)
    return ssl.get_server_certificate((host, int(port)))


def test_a_relay_serving_a_renewed_leaf_from_the_same_ca_is_dialled_again(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay, first, proc = _connected(instance)
    before = _served_leaf(relay)
    relay.rotate_leaf()
    after = _served_leaf(relay)
    assert before != after, "the relay still serves the leaf it paired with"
    first.close()
    second = relay.wait_link(1)
    assert second.state.startswith("connected"), relay.describe()
    assert second.bearer == first.bearer and second.instance == INSTANCE_ID, relay.describe()
    assert second.request("relay.heartbeat").type == "relay.ack", second.describe()
    _end(proc)


# ---------------------------------------------------------------- relay-protocol.md: a byte copy
# specification/relay-protocol.md:47 "a connector splices an ACP line into a frame with a byte
# copy and no re-encode". One `contenox acp` is both an editor's stdio session and the paired
# runtime: the same request asked both ways must come back as the same bytes, the frame's payload
# (its raw JSON text, harness/servers/relay.py's Frame.payload) being the line stdio writes.


def test_a_relay_frame_s_payload_is_byte_for_byte_the_line_the_session_writes_over_stdio(
    instance: Instance,
) -> None:
    # function: drives the relay and the stdio session
    _, link, proc = _connected(instance)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}
    proc.write(json.dumps(request) + "\n")
    stdout = proc.wait_for_output('"id":1', stream="stdout", timeout=60)
    [stdio_line] = [line for line in stdout.splitlines() if '"id":1' in line]
    client = link.attach()
    client.request("initialize", INIT)
    [frame] = [f for f in link.frames() if f.type == "acp.message" and '"id":1' in f.payload]
    assert json.loads(stdio_line)["result"]["agentInfo"]["name"] == "contenox", stdio_line
    assert frame.payload == stdio_line, (
        f"frame payload:\n{frame.payload}\nstdio line:\n{stdio_line}"
    )
    _end(proc)


# ---------------------------------------------------------------- vault-agent.md: nothing leaves
# guide/tutorials/vault-agent.md:340 "Nothing here leaves your machine if the model does not."
# The tutorial's mission, its model the local scripted backend, every command run with
# HTTPS_PROXY and HTTP_PROXY at a recording proxy that routes nothing: any connection contenox
# made off the machine (an update check, telemetry) would be recorded there. The proxy is seen
# to catch contenox's outbound calls in cases/test_fixed_endpoints.py (openai without --url).


def _vault_through_a_proxy(instance: Instance, *before: tuple[str, ...]) -> HttpsProxy:
    """The tutorial's files, its envelope activated, its mission fired; the proxy it all went by."""
    proxy = serve_https_proxy(instance, {})
    env = {**proxy.env, "HTTP_PROXY": proxy.url, "http_proxy": proxy.url, "https_proxy": proxy.url}
    for path, content in VAULT_FILES.items():
        instance.write(path, content)
    instance.init()
    instance.use_script(FILES_THE_NOTE)
    for argv in before:
        instance.must(*argv, env=env)
    instance.must("config", "set", "default-mission-policy", "hitl-policy-vault.json", env=env)
    fired = instance.contenox(*FIRE_VAULT, env=env)
    assert FIRED in fired.stdout, fired.stdout + fired.stderr
    assert (instance.work / NOTE_PATH).is_file(), fired.stdout + fired.stderr
    instance.contenox("mission", "list", env=env)
    return proxy


@defect(
    Defect(
        title="a never-paired install with a local model still connects out: the automatic "
        "update check reaches api.github.com",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch"
            " home: real. Saw: Fresh HOME/workspace each run; the vault tutorial's chain and "
            "envelope in .contenox/, a scripted-test backend as default provider/model, and a"
            " tiny CONNECT-logging proxy (/tmp/rereadE/proxy.py, answers 502) on 127.0.0.1. "
            "Run 1: HTTPS_PROXY=... contenox config set default-mission-policy hitl-policy-"
            'vault.json, then HTTPS_PROXY=... contenox mission fire vaultfiler "File '
            'everything in inbox/ into the vault." --wait --timeout 60s. The proxy logged '
            "'13:57:17 CONNECT api.github.com:443 HTTP/1.1' and the mission wrote "
            "vault/Backup Window.md. (It then derailed because the script ran out of turns, "
            "which has nothing to do with this.) Run 2 logged each step: init, backend add, "
            "config set x3, config list and config set default-mission-policy made no "
            "CONNECT, and mission fire made exactly one CONNECT api.github.com:443. `config "
            "list` shows update-check unset. Run 3: mission fire with update-check unset -> "
            "CONNECT api.github.com:443; after `contenox config set update-check false`, "
            "mission fire and `contenox run` -> no CONNECT; after `update-check true`, "
            "`contenox run` -> CONNECT api.github.com:443; doctor -> none. So the call is the"
            " automatic update check, it is on when the key is unset, and `contenox update "
            "--help` (the binary, not the docs) calls update-check an 'opt-out flag'. Note: "
            "Promise: guide/tutorials/vault-agent.md:340-341 'Keep the inference local. "
            "Nothing here leaves your machine if the model does not.' Two other pages back "
            "this promise rather than the binary. guide/pairing.md:150-151: 'A contenox "
            "install that is never paired behaves exactly as it did before: local models or "
            "your own provider keys, local SQLite, no account, nothing outbound.' "
            "guide/sovereignty.md:16: 'an install that never pairs contacts none; telemetry "
            "is opt-in and off by default.' The cited bears_on line, reference/config.md:112 "
            "('| `update-check` | global | Enable automatic update checks (`true` / `false`) "
            "|'), only names a switch. It gives no default and does not say the check runs "
            "when the key is unset. Read next to the telemetry key at config.md:111 ('Enable "
            "local telemetry logs'), which sovereignty.md:16 calls opt-in and off by default,"
            " it reads as opt-in too. reference/contenox-cli.md:425 and :687-693 list the key"
            " and the manual `contenox update check` without saying there is an automatic "
            "check by default. No doc page says contacting api.github.com unasked is right, "
            "and the opt-out wording appears only in the binary's own help. So I judge the "
            "defect's own kind, 'docs disagree', too strong: the docs are at most silent on "
            "the default. On a fresh, never-paired local install, mission fire (and run) send"
            " a request to api.github.com, which breaks the vault tutorial's promise and "
            "pairing.md's 'nothing outbound'. One caveat: the request carries no note "
            "content, so a reader who takes 'nothing leaves' to mean only the user's data "
            "could call it a case error. The 'nothing outbound' wording in pairing.md rules "
            "that reading out."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# the vault tutorial's files, a scripted-test backend as the default model\n"
            "# a recording proxy at 127.0.0.1:<port> routing nothing\n"
            "HTTPS_PROXY=http://127.0.0.1:<port> contenox config set default-mission-policy "
            "hitl-policy-vault.json\n"
            'HTTPS_PROXY=… contenox mission fire vaultfiler "File everything in inbox/ into '
            'the vault." --wait --timeout 60s\n'
            "# the proxy records CONNECT api.github.com:443; after\n"
            "# `contenox config set update-check false` it records nothing"
        ),
        promised=(
            'guide/tutorials/vault-agent.md:340-341 "**Keep the inference local.** Nothing here '
            'leaves your machine if the model does not."\n'
            'guide/pairing.md:148-150 "A contenox install that is never paired behaves exactly '
            "as it did before: local models or your own provider keys, local SQLite, no "
            'account, nothing outbound."'
        ),
        observed=(
            "one CONNECT api.github.com:443 through the proxy, the model being local; no page "
            "gives update-check a default (`contenox update --help` calls it an opt-out flag)"
        ),
        bears_on=(
            'reference/config.md:112 "| `update-check` | global | Enable automatic update '
            'checks (`true` / `false`) |"',
            'guide/sovereignty.md:16 "no contenox service is in the loop unless you deliberately '
            "[pair a machine with the relay](/docs/guide/pairing/) — an install that never pairs "
            'contacts none"',
        ),
    )
)
def test_a_never_paired_install_with_a_local_model_makes_no_connection_off_the_machine(
    instance: Instance,
) -> None:
    # function: drives the HTTPS proxy. First filed as docs disagree (against config.md:112);
    # its second reader found no page giving update-check a default, and pairing.md:148-150
    # promising "nothing outbound": a defect. The control below turns the check off.
    proxy = _vault_through_a_proxy(instance)
    assert proxy.requests() == [], proxy.describe()


def test_with_update_check_off_the_vault_tutorial_makes_no_connection_through_the_proxy(
    instance: Instance,
) -> None:
    # function: drives the HTTPS proxy (control: only update-check changes)
    proxy = _vault_through_a_proxy(instance, ("config", "set", "update-check", "false"))
    assert proxy.requests() == [], proxy.describe()
