"""Remote OpenAPI tools: `contenox tools add/list/show/update/remove` and what reaches the service.

The service is the harness's recording HTTP service (harness/servers/http_service.py)
on 127.0.0.1: it serves an OpenAPI v3 document at /openapi.json and records every
request — method, path, query, headers, body.
"""

from __future__ import annotations

import json

import pytest

from harness import Case, Instance, Script, ToolCall, Turn, defect, mission_finish, step
from harness.servers import HttpService, serve_http
from harness.servers.http_service import LOGIN_COOKIE, LOGIN_TOKEN, OPENAPI
from harness.servers.wiring import model_view, offered_roster, open_envelope, run_mission

# Loopback ports nothing listens on.
NOWHERE = "http://127.0.0.1:9"
ELSEWHERE = "http://127.0.0.1:10"
DISCOVERED = ["alerts_get", "create_note", "forecast_tool", "get_private", "get_weather", "login"]


def _service(instance: Instance, *flags: str, name: str = "svc") -> HttpService:
    service = serve_http(instance)
    instance.must("tools", "add", name, "--url", service.url, *flags)
    return service


def _call_then_finish(*calls: ToolCall) -> Script:
    return Script(
        turns=[
            Turn(text="Calling the service.", tool_calls=list(calls)),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _shown_tools(show: str) -> list[str]:
    lines = show.split("Tools (", 1)[1].splitlines()[1:]
    return sorted(line.split()[0] for line in lines if line.strip())


def _prepared(instance: Instance) -> None:
    instance.init()
    open_envelope(instance)


# ---------------------------------------------------------------- registration and inspection


# function: needs a server the harness starts
def test_tools_add_discovers_every_operation_of_the_services_openapi_json(
    instance: Instance,
) -> None:
    service = serve_http(instance)

    added = instance.must("tools", "add", "svc", "--url", service.url)

    assert "6 tool(s) discovered" in added.stdout
    assert [(r.method, r.path) for r in service.requests()][:1] == [("GET", "/openapi.json")]
    assert service.url in instance.must("tools", "list").stdout


# function: needs a server the harness starts
@pytest.mark.no_transcript(
    reason="`tools show` lists a service's discovered tools in a different order each run"
)
def test_tools_show_lists_url_timeout_header_and_inject_keys_and_the_discovered_tools(
    instance: Instance,
) -> None:
    service = _service(
        instance, "--header", "X-Tenant: hdr-show-1181", "--inject", "tenant_id=inj-show-2292"
    )

    show = instance.must("tools", "show", "svc").stdout

    assert f"URL:       {service.url}" in show and "Timeout:" in show
    assert "X-Tenant" in show and "tenant_id" in show
    assert "hdr-show-1181" not in show and "inj-show-2292" not in show
    assert _shown_tools(show) == DISCOVERED


# function: needs a server the harness starts
@pytest.mark.no_transcript(
    reason="`tools show` lists a service's discovered tools in a different order each run"
)
def test_a_tool_is_named_by_operation_id_then_x_tool_name_then_path_and_method(
    instance: Instance,
) -> None:
    _service(instance)

    tools = _shown_tools(instance.must("tools", "show", "svc").stdout)

    assert "get_weather" in tools  # operationId
    assert "forecast_tool" in tools  # x-tool-name
    assert "alerts_get" in tools  # GET /alerts: <last_path_segment>_<method>


# function: needs a server the harness starts
@pytest.mark.no_transcript(
    reason="`tools show` lists a service's discovered tools in a different order each run"
)
def test_health_readiness_and_metrics_paths_are_not_discovered(instance: Instance) -> None:
    _service(instance)

    show = instance.must("tools", "show", "svc").stdout

    for excluded in (
        "probe_health",
        "probe_healthz",
        "probe_ready",
        "probe_readyz",
        "probe_metrics",
    ):
        assert excluded not in show


# function: needs a server the harness starts
def test_a_local_spec_file_replaces_the_discovered_document_while_calls_go_to_the_url(
    instance: Instance,
) -> None:
    _prepared(instance)
    subset = {**OPENAPI, "paths": {"/weather": OPENAPI["paths"]["/weather"]}}
    spec = instance.write("subset.json", json.dumps(subset))
    service = serve_http(instance)
    instance.must("tools", "add", "legacy", "--url", service.url, "--spec", "./subset.json")

    show = instance.must("tools", "show", "legacy").stdout
    assert _shown_tools(show) == ["get_weather"]
    assert spec.exists()

    run_mission(
        instance, _call_then_finish(ToolCall("get_weather", {"city": "Oslo"})), "weather"
    ).assert_success()
    assert not service.requests_to("/openapi.json")
    [call] = service.requests_to("/weather", "GET")
    assert call.query["city"] == ("Oslo",)


TOOLS_ADD_REFUSES_A_MISSING_SPEC_FILE = Case(
    name="tools add refuses a local spec file that does not exist",
    init=False,
    steps=[
        step(
            "tools", "add", "legacy", "--url", NOWHERE, "--spec", "./no-such-spec.yaml", exit_code=1
        ),
        step("tools", "list", stdout_lacks=["legacy"]),
    ],
)

TOOLS_ADD_REGISTERS_AN_UNREACHABLE_SERVICE = Case(
    name="tools add registers a service that is unreachable at registration",
    init=False,
    steps=[
        step("tools", "add", "later", "--url", NOWHERE),
        step("tools", "list", stdout_has=["later", NOWHERE]),
    ],
)

TOOLS_TIMEOUT_DEFAULTS_TO_10000 = Case(
    name="tools add without a timeout gives the service a 10000 ms request timeout",
    init=False,
    defect=(
        "`contenox tools add later --url http://127.0.0.1:9` then `tools list` shows TIMEOUT "
        "60000ms, and `tools add --help` says '(default 60000)'. contenox-cli.md `contenox "
        "tools`: '--timeout  Request timeout in milliseconds (default: 10000)'; remote.md says "
        "the same"
    ),
    steps=[
        step("tools", "add", "later", "--url", NOWHERE),
        step("tools", "list", stdout_has=["10000ms"]),
    ],
)

TOOLS_UPDATE_REPLACES = Case(
    name="tools update replaces the whole header set and the whole inject map",
    init=False,
    steps=[
        step(
            "tools",
            "add",
            "nws",
            "--url",
            NOWHERE,
            "--header",
            "X-App: v1",
            "--header",
            "X-Tenant: acme",
            "--inject",
            "tenant_id=acme",
            "--inject",
            "env=prod",
        ),
        step("tools", "update", "nws", "--header", "X-App: v2", "--inject", "region=eu"),
        step(
            "tools",
            "show",
            "nws",
            stdout_has=["X-App", "region"],
            stdout_lacks=["X-Tenant", "tenant_id", "env"],
        ),
    ],
)

TOOLS_UPDATE_TIMEOUT_AND_URL = Case(
    name="tools update changes the timeout and the url",
    init=False,
    steps=[
        step("tools", "add", "nws", "--url", NOWHERE, "--timeout", "15000"),
        step("tools", "update", "nws", "--timeout", "30000", "--url", ELSEWHERE),
        step("tools", "show", "nws", stdout_has=["30000ms", ELSEWHERE]),
    ],
)

TOOLS_UPDATE_CANNOT_CHANGE_LOGIN_OR_TLS = Case(
    name="the login flow and tls flags can only be set at tools add time",
    init=False,
    steps=[
        step("tools", "add", "erp", "--url", NOWHERE),
        step(
            "tools",
            "update",
            "erp",
            "--auth-login-url",
            f"{NOWHERE}/login",
            exit_code=1,
            stderr_has=["unknown flag: --auth-login-url"],
        ),
        step(
            "tools",
            "update",
            "erp",
            "--insecure-skip-tls-verify",
            exit_code=1,
            stderr_has=["unknown flag: --insecure-skip-tls-verify"],
        ),
    ],
)

TOOLS_REMOVE = Case(
    name="tools remove removes a registered service",
    init=False,
    steps=[
        step("tools", "add", "nws", "--url", NOWHERE),
        step("tools", "remove", "nws"),
        step("tools", "list", stdout_lacks=["nws"]),
        step("tools", "show", "nws", exit_code=1),
    ],
)


# function: needs a server the harness starts
@pytest.mark.no_transcript(
    reason="`tools show` lists a service's discovered tools in a different order each run"
)
def test_tools_update_spec_empty_reverts_to_the_services_openapi_json(
    instance: Instance,
) -> None:
    subset = {**OPENAPI, "paths": {"/weather": OPENAPI["paths"]["/weather"]}}
    instance.write("subset.json", json.dumps(subset))
    service = serve_http(instance)
    instance.must("tools", "add", "legacy", "--url", service.url, "--spec", "./subset.json")
    assert _shown_tools(instance.must("tools", "show", "legacy").stdout) == ["get_weather"]

    instance.must("tools", "update", "legacy", "--spec", "")

    assert _shown_tools(instance.must("tools", "show", "legacy").stdout) == DISCOVERED


# ---------------------------------------------------------------- what reaches the service


# function: needs a server the harness starts
def test_a_registered_header_arrives_on_every_call_and_is_never_shown_to_the_model(
    instance: Instance,
) -> None:
    _prepared(instance)
    service = _service(instance, "--header", "X-Tenant: hdr-remote-8812")

    run_mission(
        instance,
        _call_then_finish(
            ToolCall("get_weather", {"city": "Oslo"}), ToolCall("create_note", {"text": "hi"})
        ),
        "weather and a note",
    ).assert_success()

    calls = service.requests_to("/weather") + service.requests_to("/notes")
    assert len(calls) == 2
    assert {c.headers.get("x-tenant") for c in calls} == {"hdr-remote-8812"}
    assert "hdr-remote-8812" not in model_view(instance)


# function: needs a server the harness starts
def test_the_model_calls_a_remote_operation_by_its_tool_name_with_its_arguments(
    instance: Instance,
) -> None:
    _prepared(instance)
    service = _service(instance)

    run_mission(
        instance,
        _call_then_finish(ToolCall("create_note", {"text": "hello", "tenant_id": "t-9"})),
        "note",
    ).assert_success()

    [call] = service.requests_to("/notes", "POST")
    assert call.json() == {"text": "hello", "tenant_id": "t-9"}
    assert '{"created":true,"text":"hello"}' in model_view(instance)
    assert sorted(offered_roster(instance)["svc"]) == DISCOVERED


_INJECT_IGNORED = (
    "`tools add svc --url <service> --inject tenant_id=inj-acme-42`, then a run whose model "
    "calls get_weather {city} and create_note {text}: the service receives "
    'GET /weather?city=Bergen and POST /notes {"text":"hi2"} — no tenant_id at all; when '
    "the model passes tenant_id=model-tenant, that is what arrives. remote.md: 'Merges them "
    "back into every tool call **after** the model-provided args (injected values always win)'"
)


@defect(_INJECT_IGNORED)
# function: needs a server the harness starts
def test_an_injected_argument_reaches_every_call(instance: Instance) -> None:
    _prepared(instance)
    service = _service(instance, "--inject", "tenant_id=inj-remote-5501")

    run_mission(
        instance,
        _call_then_finish(
            ToolCall("get_weather", {"city": "Bergen"}), ToolCall("create_note", {"text": "hi"})
        ),
        "weather and a note",
    ).assert_success()

    [weather] = service.requests_to("/weather")
    [note] = service.requests_to("/notes")
    assert weather.query.get("tenant_id") == ("inj-remote-5501",), service.describe()
    assert note.json().get("tenant_id") == "inj-remote-5501", service.describe()


@defect(_INJECT_IGNORED)
# function: needs a server the harness starts
def test_an_injected_argument_wins_over_the_models_value(instance: Instance) -> None:
    _prepared(instance)
    service = _service(instance, "--inject", "tenant_id=inj-remote-5502")

    run_mission(
        instance,
        _call_then_finish(ToolCall("create_note", {"text": "hi", "tenant_id": "model-tenant"})),
        "note",
    ).assert_success()

    [note] = service.requests_to("/notes")
    assert note.json()["tenant_id"] == "inj-remote-5502", service.describe()


# function: needs a server the harness starts
def test_an_injected_value_is_never_shown_to_the_model(instance: Instance) -> None:
    _prepared(instance)
    _service(instance, "--inject", "tenant_id=inj-remote-5503")

    run_mission(
        instance, _call_then_finish(ToolCall("get_weather", {"city": "Oslo"})), "weather"
    ).assert_success()

    assert "inj-remote-5503" not in model_view(instance)


# function: needs a server the harness starts
def test_a_401_logs_in_with_the_cookie_flow_retries_and_persists_the_cookie(
    instance: Instance,
) -> None:
    _prepared(instance)
    service = serve_http(instance)
    instance.must(
        "tools",
        "add",
        "erp",
        "--url",
        service.url,
        "--auth-login-url",
        f"{service.url}/login",
        "--auth-login-body",
        '{"usr":"${E2E_ERP_USER}","pwd":"${E2E_ERP_PASS}"}',
        "--auth-extract-cookie",
        "sid",
        "--auth-inject-header",
        "Cookie",
    )
    instance.use_script(_call_then_finish(ToolCall("get_private", {})))
    creds = {"E2E_ERP_USER": "alice", "E2E_ERP_PASS": "pw-7731"}

    instance.contenox(
        "run", "--policy", "e2e_open", "--timeout", "90s", "private", env=creds
    ).assert_success()

    paths = [(r.method, r.path) for r in service.requests() if r.path != "/openapi.json"]
    assert paths == [("GET", "/private"), ("POST", "/login"), ("GET", "/private")], (
        service.describe()
    )
    [login] = service.requests_to("/login")
    assert login.json() == {"usr": "alice", "pwd": "pw-7731"}
    retried = service.requests_to("/private")[-1]
    assert f"sid={LOGIN_COOKIE}" in retried.headers.get("cookie", "")
    assert '"secret_area":"welcome"' in model_view(instance)

    # The token was persisted: the next command's first call is already logged in.
    instance.must("run", "--policy", "e2e_open", "--timeout", "90s", "private again", env=creds)
    later = [r for r in service.requests() if r.path in ("/private", "/login")][3:]
    assert [(r.method, r.path) for r in later] == [("GET", "/private")], service.describe()
    assert f"sid={LOGIN_COOKIE}" in later[0].headers.get("cookie", "")


# function: needs a server the harness starts
def test_a_401_logs_in_with_the_json_token_flow_and_retries_with_a_bearer_header(
    instance: Instance,
) -> None:
    _prepared(instance)
    service = serve_http(instance)
    instance.must(
        "tools",
        "add",
        "myapi",
        "--url",
        service.url,
        "--auth-login-url",
        f"{service.url}/login",
        "--auth-login-body",
        '{"username":"bob"}',
        "--auth-extract-jsonpath",
        "$.data.token",
        "--auth-inject-header",
        "Authorization",
        "--auth-inject-format",
        "Bearer %s",
    )

    run_mission(
        instance, _call_then_finish(ToolCall("get_private", {})), "private"
    ).assert_success()

    retried = service.requests_to("/private")[-1]
    assert retried.headers.get("authorization") == f"Bearer {LOGIN_TOKEN}", service.describe()
    assert '"secret_area":"welcome"' in model_view(instance)


# function: needs a server the harness starts
def test_an_agent_declaration_brings_a_service_scoped_to_it_and_retires_it_when_deleted(
    instance: Instance,
) -> None:
    service = serve_http(instance)
    instance.init()
    declaration = instance.home / ".contenox" / "agents" / "biller.md"
    declaration.write_text(
        "---\nname: biller\ndescription: An e2e agent that brings its own services\n"
        f"remoteTools:\n  billing:\n    url: {service.url}\n"
        f"mcpServers:\n  ledger:\n    type: http\n    url: {NOWHERE}/mcp\n"
        "---\n\nYou bill.\n",
        encoding="utf-8",
    )

    instance.must("agent", "list")
    tools = instance.must("tools", "list").stdout
    mcp = instance.must("mcp", "list").stdout
    assert "billing" in tools and "declaration" in tools, tools
    assert "ledger" in mcp and "declaration" in mcp, mcp

    declaration.unlink()
    instance.must("agent", "list")
    assert "billing" not in instance.must("tools", "list").stdout
    assert "ledger" not in instance.must("mcp", "list").stdout


@defect(
    "`tools add intranet --url https://127.0.0.1:<port> --insecure-skip-tls-verify` against "
    "the harness service with a fresh self-signed certificate prints 'could not reach "
    "endpoint to count tools', and `tools show intranet` says 'TLS Verify:Skip' beside 'Tools: "
    '(could not reach endpoint: … Get "https://127.0.0.1:<port>/openapi.json": tls: failed to '
    "verify certificate: x509: certificate signed by unknown authority)' — the same as without "
    "the flag. remote.md: '`--insecure-skip-tls-verify` disables TLS certificate verification "
    "entirely'"
)
# function: needs a server the harness starts
def test_insecure_skip_tls_verify_reaches_a_service_with_a_self_signed_certificate(
    instance: Instance,
) -> None:
    service = serve_http(instance, tls=True)

    added = instance.must(
        "tools", "add", "intranet", "--url", service.url, "--insecure-skip-tls-verify"
    )

    assert "6 tool(s) discovered" in added.stdout
    assert _shown_tools(instance.must("tools", "show", "intranet").stdout) == DISCOVERED


# function: needs a server the harness starts
def test_without_insecure_skip_tls_verify_a_self_signed_service_is_refused(
    instance: Instance,
) -> None:
    service = serve_http(instance, tls=True)

    added = instance.must("tools", "add", "strict", "--url", service.url)

    assert "could not reach endpoint" in added.stdout
    assert "certificate" in instance.must("tools", "show", "strict").stdout
