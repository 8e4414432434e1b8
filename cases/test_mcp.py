"""MCP servers: `contenox mcp add/list/show/update/remove`, transports, and what reaches a server.

The server is the harness's recording MCP server on the official Python SDK
(harness/servers/mcp_server.py): contenox spawns it over stdio, or the harness
starts it on 127.0.0.1 for SSE and streamable HTTP. Each case reads back what
the server received (arguments, headers, which process) and what the model was
sent (`state show --raw`).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Case, Instance, Script, ToolCall, Turn, defect, mission_finish, step
from harness.servers import McpCall, read_mcp_records, serve_mcp, stdio_command
from harness.servers.mcp_server import TOOLS
from harness.servers.wiring import model_view, offered_roster, open_envelope, run_mission

# A loopback URL nothing listens on: registration alone never connects.
NOWHERE = "http://127.0.0.1:9/mcp"

# ---------------------------------------------------------------- management (no server needed)

MCP_ADD_URL_DEFAULTS_TO_HTTP = Case(
    name="mcp add with a URL as second argument registers an http server",
    init=False,
    steps=[
        step("mcp", "add", "notion", NOWHERE, stdout_has=['MCP server "notion" added']),
        step("mcp", "show", "notion", stdout_has=['"transport": "http"', f'"url": "{NOWHERE}"']),
    ],
)

MCP_ADD_STDIO_LISTED = Case(
    name="mcp add registers a stdio server that mcp list and mcp show report with its owner",
    init=False,
    steps=[
        step(
            "mcp",
            "add",
            "myfiles",
            "--transport",
            "stdio",
            "--command",
            "/bin/cat",
            "--args",
            "-u,/tmp/projects",
        ),
        step(
            "mcp",
            "list",
            stdout_has=["NAME", "TRANSPORT", "OWNER", "myfiles", "stdio", "/bin/cat", "you"],
        ),
        step(
            "mcp",
            "show",
            "myfiles",
            stdout_has=['"command": "/bin/cat"', '"-u"', '"/tmp/projects"'],
        ),
    ],
)

MCP_SHOW_MASKS_VALUES = Case(
    name="mcp show names header and inject keys but never their values",
    init=False,
    steps=[
        step(
            "mcp",
            "add",
            "internal",
            "--transport",
            "http",
            "--url",
            NOWHERE,
            "--header",
            "X-Tenant: hdr-value-5521",
            "--inject",
            "tenant_id=inj-value-7781",
        ),
        step(
            "mcp",
            "show",
            "internal",
            stdout_has=['"X-Tenant"', '"tenant_id"'],
            stdout_lacks=["hdr-value-5521", "inj-value-7781"],
        ),
        step("mcp", "list", stdout_lacks=["hdr-value-5521", "inj-value-7781"]),
    ],
)

MCP_UPDATE_INJECT_REPLACES = Case(
    name="mcp update --inject replaces the whole inject map",
    init=False,
    steps=[
        step(
            "mcp",
            "add",
            "myserver",
            "--transport",
            "http",
            "--url",
            NOWHERE,
            "--inject",
            "tenant_id=acme",
            "--inject",
            "correlation_id=trace-xyz",
        ),
        step("mcp", "update", "myserver", "--inject", "region=eu"),
        step(
            "mcp",
            "show",
            "myserver",
            stdout_has=['"region"'],
            stdout_lacks=['"tenant_id"', '"correlation_id"'],
        ),
    ],
)

MCP_UPDATE_HEADER_REPLACES = Case(
    name="mcp update --header replaces the whole header map",
    init=False,
    steps=[
        step(
            "mcp",
            "add",
            "myserver",
            "--transport",
            "http",
            "--url",
            NOWHERE,
            "--header",
            "X-Tenant: acme",
            "--header",
            "X-Version: 2",
        ),
        step("mcp", "update", "myserver", "--header", "X-Region: eu"),
        step(
            "mcp",
            "show",
            "myserver",
            stdout_has=['"X-Region"'],
            stdout_lacks=['"X-Tenant"', '"X-Version"'],
        ),
    ],
)

MCP_UPDATE_CANNOT_CHANGE_ENDPOINT = Case(
    name="mcp update cannot change the transport, command, args or url",
    init=False,
    steps=[
        step("mcp", "add", "myserver", "--transport", "http", "--url", NOWHERE),
        *[
            step(
                "mcp",
                "update",
                "myserver",
                flag,
                value,
                exit_code=1,
                stderr_has=[f"unknown flag: {flag}"],
            )
            for flag, value in (
                ("--url", "http://127.0.0.1:10/mcp"),
                ("--transport", "sse"),
                ("--command", "/bin/cat"),
                ("--args", "a,b"),
            )
        ],
        step("mcp", "show", "myserver", stdout_has=[f'"url": "{NOWHERE}"', '"transport": "http"']),
    ],
)

MCP_REMOVE = Case(
    name="mcp remove removes a registered server",
    init=False,
    steps=[
        step("mcp", "add", "myfiles", "--transport", "stdio", "--command", "/bin/cat"),
        step("mcp", "remove", "myfiles", stdout_has=['MCP server "myfiles" removed']),
        step("mcp", "list", stdout_lacks=["myfiles"]),
        step("mcp", "show", "myfiles", exit_code=1),
    ],
)

MCP_TIMEOUT = Case(
    name="mcp add --timeout sets the connection timeout in seconds",
    init=False,
    steps=[
        step("mcp", "add", "slow", NOWHERE, "--timeout", "7"),
        step("mcp", "show", "slow", stdout_has=['"connectTimeoutSeconds": 7']),
    ],
)

MCP_OAUTH_ADD_ONLY_REGISTERS = Case(
    name=(
        "mcp add --auth-type oauth only registers the server and stores the secret's variable name"
    ),
    init=False,
    steps=[
        step(
            "mcp",
            "add",
            "hubspot",
            "--transport",
            "http",
            "--url",
            NOWHERE,
            "--auth-type",
            "oauth",
            "--oauth-client-id",
            "client-e2e",
            "--oauth-client-secret-env",
            "E2E_OAUTH_SECRET",
            env={"E2E_OAUTH_SECRET": "oauth-secret-value-3391"},
            stdout_lacks=["oauth-secret-value-3391"],
        ),
        step(
            "mcp",
            "show",
            "hubspot",
            stdout_has=["oauth", "E2E_OAUTH_SECRET"],
            stdout_lacks=["oauth-secret-value-3391"],
        ),
    ],
)

MCP_STDIO_NEEDS_COMMAND = Case(
    name="mcp add refuses a stdio server without a command",
    init=False,
    steps=[
        step(
            "mcp", "add", "nothing", "--transport", "stdio", exit_code=1, stderr_has=["--command"]
        ),
        step("mcp", "list", stdout_lacks=["nothing"]),
    ],
)


# ---------------------------------------------------------------- what reaches the server


def _note_then_finish(*calls: ToolCall) -> Script:
    return Script(
        turns=[
            Turn(text="Calling the server.", tool_calls=list(calls)),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _stdio_server(instance: Instance, name: str = "rec", *extra: str) -> Path:
    record = instance.tmp / f"{name}.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp",
        "add",
        name,
        "--transport",
        "stdio",
        "--command",
        command,
        "--args",
        ",".join(args),
        *extra,
    )
    return record


def _calls(records: list[McpCall], tool: str | None = None) -> list[McpCall]:
    return [r for r in records if r.method == "tools/call" and (tool is None or r.tool == tool)]


def _prepared(instance: Instance) -> None:
    instance.init()
    open_envelope(instance)


# function: needs a server record read after the run
def test_a_stdio_server_contenox_spawns_receives_the_models_call(instance: Instance) -> None:
    _prepared(instance)
    record = _stdio_server(instance)

    result = run_mission(
        instance, _note_then_finish(ToolCall("note", {"text": "hello", "tenant_id": "t-1"})), "note"
    )

    result.assert_success()
    [call] = _calls(read_mcp_records(record), "note")
    assert call.arguments == {"text": "hello", "tenant_id": "t-1"}
    assert call.transport == "stdio" and call.headers is None
    assert '{"result":"noted: hello"}' in model_view(instance)


# function: needs a server record read after the run
@pytest.mark.no_transcript(
    reason="the server's tools reach the system prompt only when its first connect beats "
    "the run's first turn: under load two clean runs recorded the roster with and without them"
)
def test_a_registered_server_is_offered_to_the_run_agent_with_all_its_tools(
    instance: Instance,
) -> None:
    _prepared(instance)
    _stdio_server(instance)

    run_mission(instance, _note_then_finish(), "anything").assert_success()

    assert sorted(offered_roster(instance)["rec"]) == sorted(TOOLS)


# function: needs a server the harness starts
def test_a_streamable_http_server_receives_the_models_call(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must("mcp", "add", "remote", "--transport", "http", "--url", server.url)

    result = run_mission(instance, _note_then_finish(ToolCall("add", {"a": 2, "b": 40})), "add")

    result.assert_success()
    assert [c.arguments for c in server.calls("add")] == [{"a": 2, "b": 40}]
    assert '{"result":"sum=42"}' in model_view(instance)


@defect(
    "the SSE transport never reaches a tool: contenox connects to the SDK's SSE server "
    "(GET /sse 200, POST initialize 202), then drops the event stream, and tools/list "
    'fails `mcp "remote": list-tools failed: calling "tools/list": EOF`; the model\'s '
    "call comes back 'tool add not found'. The same server answers the SDK's own SSE "
    "client (tests/test_servers.py). mcp.md 'Supported transports': `sse` — Connects "
    "to remote Server-Sent Events endpoint"
)
# function: needs a server the harness starts
def test_an_sse_server_receives_the_models_call(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "sse")
    instance.must("mcp", "add", "remote", "--transport", "sse", "--url", server.url)

    run_mission(instance, _note_then_finish(ToolCall("add", {"a": 2, "b": 40})), "add")

    assert [c.arguments for c in server.calls("add")] == [{"a": 2, "b": 40}], server.describe()


# function: needs a server the harness starts
def test_injected_values_reach_the_server_override_the_model_and_are_never_shown_to_it(
    instance: Instance,
) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must(
        "mcp",
        "add",
        "internal",
        "--transport",
        "http",
        "--url",
        server.url,
        "--inject",
        "tenant_id=inj-tenant-4471",
        "--inject",
        "env=inj-env-9902",
    )

    run_mission(
        instance,
        _note_then_finish(ToolCall("note", {"text": "hi", "tenant_id": "model-says-other"})),
        "note",
    ).assert_success()

    [call] = server.calls("note")
    assert call.arguments == {"text": "hi", "tenant_id": "inj-tenant-4471", "env": "inj-env-9902"}
    seen = model_view(instance)
    assert "inj-tenant-4471" not in seen and "inj-env-9902" not in seen


# function: needs a server record read after the run
def test_injected_values_reach_a_stdio_server_too(instance: Instance) -> None:
    _prepared(instance)
    record = _stdio_server(instance, "rec", "--inject", "tenant_id=inj-stdio-6620")

    run_mission(
        instance, _note_then_finish(ToolCall("note", {"text": "hi"})), "note"
    ).assert_success()

    [call] = _calls(read_mcp_records(record), "note")
    assert call.arguments["tenant_id"] == "inj-stdio-6620"
    assert "inj-stdio-6620" not in model_view(instance)


# function: needs a server the harness starts
def test_mcp_update_inject_changes_what_the_server_receives(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must(
        "mcp",
        "add",
        "internal",
        "--transport",
        "http",
        "--url",
        server.url,
        "--inject",
        "tenant_id=old-tenant",
        "--inject",
        "env=old-env",
    )
    instance.must("mcp", "update", "internal", "--inject", "tenant_id=new-tenant")

    run_mission(
        instance, _note_then_finish(ToolCall("note", {"text": "hi"})), "note"
    ).assert_success()

    [call] = server.calls("note")
    assert call.arguments == {"text": "hi", "tenant_id": "new-tenant"}


@defect(
    "`mcp add … --transport http --url <server> --header 'X-Tenant: hdr-mcp-12'` then a run "
    "calling a tool: the server's tools/list and tools/call requests carry accept, "
    "content-type, mcp-protocol-version, mcp-session-id, user-agent — no X-Tenant "
    "(harness record of the Python SDK server). contenox-cli.md `contenox mcp`: "
    "'--header  Additional HTTP header for SSE/HTTP connections'"
)
# function: needs a server the harness starts
def test_a_header_given_to_mcp_add_arrives_on_every_http_request(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must(
        "mcp",
        "add",
        "internal",
        "--transport",
        "http",
        "--url",
        server.url,
        "--header",
        "X-Tenant: hdr-tenant-3310",
    )

    run_mission(instance, _note_then_finish(ToolCall("count", {})), "count").assert_success()

    requests = [r for r in server.records() if r.headers is not None]
    assert requests, server.describe()
    assert {r.headers.get("x-tenant") for r in requests if r.headers} == {"hdr-tenant-3310"}
    assert "hdr-tenant-3310" not in model_view(instance)


# function: needs a server the harness starts
def test_a_bearer_token_from_auth_env_arrives_as_an_authorization_header(
    instance: Instance,
) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must(
        "mcp",
        "add",
        "memory",
        "--transport",
        "http",
        "--url",
        server.url,
        "--auth-type",
        "bearer",
        "--auth-env",
        "E2E_MCP_TOKEN",
    )
    assert "tok-bearer-5150" not in instance.must("mcp", "show", "memory").stdout

    instance.use_script(_note_then_finish(ToolCall("count", {})))
    instance.contenox(
        "run",
        "--policy",
        "e2e_open",
        "--timeout",
        "90s",
        "count",
        env={"E2E_MCP_TOKEN": "tok-bearer-5150"},
    ).assert_success()

    auths = {r.headers.get("authorization") for r in server.records() if r.headers}
    assert auths == {"Bearer tok-bearer-5150"}, server.describe()


# function: needs a server record read after the run
def test_state_is_kept_across_calls_within_a_session(instance: Instance) -> None:
    _prepared(instance)
    record = _stdio_server(instance)

    run_mission(
        instance,
        Script(
            turns=[
                Turn(tool_calls=[ToolCall("count", {})]),
                Turn(tool_calls=[ToolCall("count", {})]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
        "count twice",
    ).assert_success()

    calls = _calls(read_mcp_records(record), "count")
    assert len(calls) == 2 and calls[0].pid == calls[1].pid
    seen = model_view(instance)
    assert "count=1 " in seen and "count=2 " in seen


# function: needs a server record read after two runs
def test_a_stdio_server_is_started_per_command_and_killed_when_it_ends(
    instance: Instance,
) -> None:
    _prepared(instance)
    record = _stdio_server(instance)
    # A second process starts the dialog at turn one again, so one backend serves both runs.
    run_mission(instance, _note_then_finish(ToolCall("count", {})), "first").assert_success()
    instance.must("run", "--policy", "e2e_open", "--timeout", "90s", "second")

    starts = [r.pid for r in read_mcp_records(record) if r.method == "server/start"]
    calls = _calls(read_mcp_records(record), "count")
    assert len(calls) == 2 and calls[0].pid != calls[1].pid
    assert set(starts) >= {c.pid for c in calls}
    for pid in starts:
        assert not Path(f"/proc/{pid}").exists(), f"stdio server pid {pid} outlived its command"
    # Each invocation is clean: the second one starts counting from 1 again.
    assert model_view(instance).count("count=1 ") >= 2


# function: needs a server the harness starts
def test_an_http_server_keeps_running_after_the_command_ends(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must("mcp", "add", "remote", "--transport", "http", "--url", server.url)

    run_mission(instance, _note_then_finish(ToolCall("count", {})), "count").assert_success()

    assert server.process.running, server.describe()


# function: needs a server the harness starts
def test_a_bearer_token_literal_arrives_as_an_authorization_header(instance: Instance) -> None:
    _prepared(instance)
    server = serve_mcp(instance, "http")
    instance.must(
        "mcp",
        "add",
        "memory",
        "--transport",
        "http",
        "--url",
        server.url,
        "--auth-type",
        "bearer",
        "--auth-token",
        "tok-literal-6061",
    )

    run_mission(instance, _note_then_finish(ToolCall("count", {})), "count").assert_success()

    auths = {r.headers.get("authorization") for r in server.records() if r.headers}
    assert auths == {"Bearer tok-literal-6061"}, server.describe()
