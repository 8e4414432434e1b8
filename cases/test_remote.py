"""Remote OpenAPI tools: `contenox tools add/list/show/update/remove` and what reaches the service.

The service is the harness's recording HTTP service (harness/servers/http_service.py)
on 127.0.0.1: it serves an OpenAPI v3 document at /openapi.json and records every
request — method, path, query, headers, body.
"""

from __future__ import annotations

import json
from typing import Any

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    probe,
    received,
    remove,
    satisfies,
    step,
    write,
)
from harness.case import Action, model_saw, open_envelope_step, serve
from harness.servers import HttpService
from harness.servers.http_service import LOGIN_COOKIE, LOGIN_TOKEN, OPENAPI
from harness.servers.wiring import OPEN_ENVELOPE, offered_roster

# Loopback ports nothing listens on.
NOWHERE = "http://127.0.0.1:9"
ELSEWHERE = "http://127.0.0.1:10"
DISCOVERED = ["alerts_get", "create_note", "forecast_tool", "get_private", "get_weather", "login"]
# `tools show` lists a service's discovered tools in a different order each run: the
# cases that print it opt out of the transcript comparison (Case(snapshot=False)).
SUBSET = json.dumps({**OPENAPI, "paths": {"/weather": OPENAPI["paths"]["/weather"]}})


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


def _tools_shown(instance: Instance, name: str) -> list[str]:
    """The tools `tools show <name>` lists, sorted (it lists them in no stable order)."""
    return _shown_tools(instance.must("tools", "show", name).stdout)


def _shows(name: str, expect: object) -> Action:
    return probe(f"tools {name} shows", _tools_shown, name, expect=expect)


def _add(name: str, *flags: str, server: str = "svc", **expect: Any) -> Action:
    """``tools add <name> --url {<server>_url} <flags>``."""
    return step("tools", "add", name, "--url", f"{{{server}_url}}", *flags, **expect)


def _run(task: str, **expect: Any) -> Action:
    """``contenox run`` of ``task`` under the envelope where every tool runs unasked."""
    return step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", task, **expect)


def _service_case(name: str, script: Script, add: Action, *after: Action, **case: Any) -> Case:
    """The open envelope, the service started as ``svc`` and registered, then ``after``."""
    return Case(
        name=name,
        script=script,
        steps=[open_envelope_step(), serve("svc", "openapi"), add, *after],
        **case,
    )


def _requests(service: HttpService) -> list[str]:
    return [f"{r.method} {r.path}" for r in service.requests()]


# ---------------------------------------------------------------- registration and inspection

TOOLS_ADD_DISCOVERS = Case(
    name="tools add discovers every operation of the services openapi json",
    init=False,
    steps=[
        serve("svc", "openapi"),
        _add("svc", stdout_has=["6 tool(s) discovered"]),
        received(
            "svc",
            "the first request",
            lambda service: _requests(service)[:1],
            expect=["GET /openapi.json"],
        ),
        step("tools", "list", stdout_has=["{svc_url}"]),
    ],
)

TOOLS_SHOW_MASKS = Case(
    name="tools show lists url timeout header and inject keys and the discovered tools",
    init=False,
    snapshot=False,  # tools show's order, see SUBSET
    steps=[
        serve("svc", "openapi"),
        _add("svc", "--header", "X-Tenant: hdr-show-1181", "--inject", "tenant_id=inj-show-2292"),
        step(
            "tools",
            "show",
            "svc",
            stdout_has=["URL:       {svc_url}", "Timeout:", "X-Tenant", "tenant_id"],
            stdout_lacks=["hdr-show-1181", "inj-show-2292"],
        ),
        _shows("svc", DISCOVERED),
    ],
)

TOOL_NAMES = Case(
    name="a tool is named by operation id then x tool name then path and method",
    init=False,
    snapshot=False,  # tools show's order, see SUBSET
    steps=[
        serve("svc", "openapi"),
        _add("svc"),
        probe(
            "tools svc shows",
            _tools_shown,
            "svc",
            # operationId, x-tool-name, GET /alerts: <last_path_segment>_<method>
            expect=satisfies(
                lambda tools: {"get_weather", "forecast_tool", "alerts_get"} <= set(tools),
                "get_weather, forecast_tool and alerts_get among them",
            ),
        ),
    ],
)

PROBE_PATHS_EXCLUDED = Case(
    name="health readiness and metrics paths are not discovered",
    init=False,
    snapshot=False,  # tools show's order, see SUBSET
    steps=[
        serve("svc", "openapi"),
        _add("svc"),
        step(
            "tools",
            "show",
            "svc",
            stdout_lacks=[
                "probe_health",
                "probe_healthz",
                "probe_ready",
                "probe_readyz",
                "probe_metrics",
            ],
        ),
    ],
)


def _spec_file_kept(instance: Instance) -> bool:
    return (instance.work / "subset.json").exists()


def _weather_without_discovery(service: HttpService) -> dict[str, object]:
    return {
        "GET /openapi.json": len(service.requests_to("/openapi.json")),
        "GET /weather queries": [
            {k: list(v) for k, v in r.query.items()} for r in service.requests_to("/weather", "GET")
        ],
    }


LOCAL_SPEC = _service_case(
    "a local spec file replaces the discovered document while calls go to the url",
    _call_then_finish(ToolCall("get_weather", {"city": "Oslo"})),
    _add("legacy", "--spec", "./subset.json"),
    _shows("legacy", ["get_weather"]),
    probe("subset.json is still there", _spec_file_kept, expect=True),
    _run("weather"),
    received(
        "svc",
        "what the service received",
        _weather_without_discovery,
        expect={"GET /openapi.json": 0, "GET /weather queries": [{"city": ["Oslo"]}]},
    ),
    files={"subset.json": SUBSET},
)

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
    defect=Defect(
        title="`tools add` defaults to a 60000 ms timeout, not 10000",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init. `tools add later --url "
            'http://127.0.0.1:9` -> \'Registered tools "later" — could not reach endpoint '
            "…', exit 0. `tools list` -> later  http://127.0.0.1:9  60000ms  you. `tools "
            "add --help` -> '--timeout int  Request timeout in milliseconds (default "
            "60000)'. Note: Reproduces. contenox-cli.md:229 and "
            "integrations/tools/remote.md:63 both say the default is 10000. No page in the "
            "docs says 60000. Only the binary's own --help does, and it agrees with the "
            "binary."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "contenox tools add later --url http://127.0.0.1:9\n"
            "contenox tools list          # TIMEOUT 60000ms\n"
            "contenox tools add --help    # --timeout … (default 60000)"
        ),
        promised=(
            'reference/contenox-cli.md:229 "Request timeout in milliseconds (default: 10000)"'
        ),
        observed="the default is 60000 ms",
        bears_on=('integrations/tools/remote.md:63 "10000"',),
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


TOOLS_UPDATE_SPEC_EMPTY = Case(
    name="tools update spec empty reverts to the services openapi json",
    init=False,
    snapshot=False,  # tools show's order, see SUBSET
    files={"subset.json": SUBSET},
    steps=[
        serve("svc", "openapi"),
        _add("legacy", "--spec", "./subset.json"),
        _shows("legacy", ["get_weather"]),
        step("tools", "update", "legacy", "--spec", ""),
        _shows("legacy", DISCOVERED),
    ],
)


# ---------------------------------------------------------------- what reaches the service


def _tenant_headers(service: HttpService) -> dict[str, object]:
    calls = service.requests_to("/weather") + service.requests_to("/notes")
    return {
        "calls": len(calls),
        "X-Tenant": sorted({c.headers.get("x-tenant", "(absent)") for c in calls}),
    }


HEADER_ON_EVERY_CALL = _service_case(
    "a registered header arrives on every call and is never shown to the model",
    _call_then_finish(
        ToolCall("get_weather", {"city": "Oslo"}), ToolCall("create_note", {"text": "hi"})
    ),
    _add("svc", "--header", "X-Tenant: hdr-remote-8812"),
    _run("weather and a note"),
    received(
        "svc",
        "the tool calls' X-Tenant",
        _tenant_headers,
        expect={"calls": 2, "X-Tenant": ["hdr-remote-8812"]},
    ),
    model_saw("hdr-remote-8812", seen=False),
)


def _note_bodies(service: HttpService) -> list[object]:
    return [r.json() for r in service.requests_to("/notes", "POST")]


def _offered_svc(instance: Instance) -> list[str]:
    return sorted(offered_roster(instance)["svc"])


BY_TOOL_NAME = _service_case(
    "the model calls a remote operation by its tool name with its arguments",
    _call_then_finish(ToolCall("create_note", {"text": "hello", "tenant_id": "t-9"})),
    _add("svc"),
    _run("note"),
    received(
        "svc", "POST /notes bodies", _note_bodies, expect=[{"text": "hello", "tenant_id": "t-9"}]
    ),
    model_saw('{"created":true,"text":"hello"}'),
    probe("svc's tools offered", _offered_svc, expect=DISCOVERED),
)


def _tenants(service: HttpService) -> dict[str, list[object]]:
    """tenant_id as each GET /weather (its query) and POST /notes (its body) carried it."""
    return {
        "GET /weather": [
            list(r.query.get("tenant_id", ())) for r in service.requests_to("/weather")
        ],
        "POST /notes": [r.json().get("tenant_id") for r in service.requests_to("/notes")],
    }


INJECT_EVERY_CALL = _service_case(
    "an injected argument reaches every call",
    _call_then_finish(
        ToolCall("get_weather", {"city": "Bergen"}), ToolCall("create_note", {"text": "hi"})
    ),
    _add("svc", "--inject", "tenant_id=inj-remote-5501"),
    _run("weather and a note"),
    received(
        "svc",
        "tenant_id per call",
        _tenants,
        expect={"GET /weather": [["inj-remote-5501"]], "POST /notes": ["inj-remote-5501"]},
    ),
    defect=Defect(
        title="`tools add --inject` values never reach the service",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: the recording service got 'GET "
            '/weather?city=Bergen\' and \'POST /notes {"text":"hi2"}\', with no '
            "tenant_id after 'tools add svc … --inject tenant_id=inj-acme-42' ('2"
            " tool(s) discovered') Note: I added a Python OpenAPI stub serving "
            "/openapi.json, and an allow-all envelope [envelopes.e2e_open] "
            "because under --policy run the svc.get_weather call was held for "
            "approval and the run timed out. integrations/tools/remote.md:120 "
            "promises the injected values are merged into every call."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# an OpenAPI service with GET /weather?city= and POST /notes {text}, "
            "recording requests\n"
            "contenox tools add svc --url http://127.0.0.1:<port> --inject "
            "tenant_id=inj-acme-42\n"
            "# dialog: get_weather {city: Bergen}, create_note {text: hi2}, then a "
            "reply\n"
            'contenox run --policy run "weather and a note"\n'
            "# the service receives GET /weather?city=Bergen and POST /notes "
            '{"text":"hi2"} — no tenant_id'
        ),
        promised='integrations/tools/remote.md:120 "Merges them back into every tool call"',
        observed="no call carries tenant_id",
    ),
)


def _note_tenants(service: HttpService) -> list[object]:
    return [r.json().get("tenant_id") for r in service.requests_to("/notes")]


INJECT_WINS = _service_case(
    "an injected argument wins over the models value",
    _call_then_finish(ToolCall("create_note", {"text": "hi", "tenant_id": "model-tenant"})),
    _add("svc", "--inject", "tenant_id=inj-remote-5502"),
    _run("note"),
    received("svc", "POST /notes tenant_id", _note_tenants, expect=["inj-remote-5502"]),
    defect=Defect(
        title="an injected argument does not win over the model's value",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: the model's call {city: Bergen, "
            "tenant_id: model-tenant} reached the service as 'GET "
            "/weather?city=Bergen&tenant_id=model-tenant'; inj-acme-42 never "
            "arrived Note: Done in the same run as A7, with the same stub "
            "(tenant_id declared as a query parameter) and the allow-all e2e_open"
            " envelope in place of --policy run. remote.md:120 says '(injected "
            "values always win)'."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# an OpenAPI service with GET /weather?city=&tenant_id=, recording "
            "requests\n"
            "contenox tools add svc --url http://127.0.0.1:<port> --inject "
            "tenant_id=inj-acme-42\n"
            "# dialog: get_weather {city: Bergen, tenant_id: model-tenant}, then a "
            "reply\n"
            'contenox run --policy run "weather"\n'
            "# the service receives tenant_id=model-tenant"
        ),
        promised='integrations/tools/remote.md:120 "(injected values always win)"',
        observed="the model's tenant_id arrives; the injected one never does",
    ),
)

INJECT_NEVER_SHOWN = _service_case(
    "an injected value is never shown to the model",
    _call_then_finish(ToolCall("get_weather", {"city": "Oslo"})),
    _add("svc", "--inject", "tenant_id=inj-remote-5503"),
    _run("weather"),
    model_saw("inj-remote-5503", seen=False),
)

_CREDS = {"E2E_ERP_USER": "alice", "E2E_ERP_PASS": "pw-7731"}


def _login_flow(service: HttpService) -> dict[str, object]:
    """The calls after discovery, the login body, and whether the retry carried the cookie."""
    private = service.requests_to("/private")
    return {
        "requests": [x for x in _requests(service) if x != "GET /openapi.json"],
        "login bodies": [r.json() for r in service.requests_to("/login")],
        "the retry carries the cookie": bool(private)
        and f"sid={LOGIN_COOKIE}" in private[-1].headers.get("cookie", ""),
    }


def _second_command(service: HttpService) -> dict[str, object]:
    """The /private and /login requests after the first command's three."""
    later = [r for r in service.requests() if r.path in ("/private", "/login")][3:]
    return {
        "requests": [f"{r.method} {r.path}" for r in later],
        "the first carries the cookie": bool(later)
        and f"sid={LOGIN_COOKIE}" in later[0].headers.get("cookie", ""),
    }


COOKIE_LOGIN = _service_case(
    "a 401 logs in with the cookie flow retries and persists the cookie",
    _call_then_finish(ToolCall("get_private", {})),
    _add(
        "erp",
        "--auth-login-url",
        "{svc_url}/login",
        "--auth-login-body",
        '{"usr":"${E2E_ERP_USER}","pwd":"${E2E_ERP_PASS}"}',
        "--auth-extract-cookie",
        "sid",
        "--auth-inject-header",
        "Cookie",
    ),
    _run("private", env=_CREDS),
    received(
        "svc",
        "the first command",
        _login_flow,
        expect={
            "requests": ["GET /private", "POST /login", "GET /private"],
            "login bodies": [{"usr": "alice", "pwd": "pw-7731"}],
            "the retry carries the cookie": True,
        },
    ),
    model_saw('"secret_area":"welcome"'),
    # The token was persisted: the next command's first call is already logged in.
    _run("private again", env=_CREDS),
    received(
        "svc",
        "the second command",
        _second_command,
        expect={"requests": ["GET /private"], "the first carries the cookie": True},
    ),
)


def _retry_authorization(service: HttpService) -> str | None:
    private = service.requests_to("/private")
    return private[-1].headers.get("authorization") if private else None


TOKEN_LOGIN = _service_case(
    "a 401 logs in with the json token flow and retries with a bearer header",
    _call_then_finish(ToolCall("get_private", {})),
    _add(
        "myapi",
        "--auth-login-url",
        "{svc_url}/login",
        "--auth-login-body",
        '{"username":"bob"}',
        "--auth-extract-jsonpath",
        "$.data.token",
        "--auth-inject-header",
        "Authorization",
        "--auth-inject-format",
        "Bearer %s",
    ),
    _run("private"),
    received(
        "svc", "the retry's Authorization", _retry_authorization, expect=f"Bearer {LOGIN_TOKEN}"
    ),
    model_saw('"secret_area":"welcome"'),
)


DECLARATION_BRINGS_AND_RETIRES = Case(
    name="an agent declaration brings a service scoped to it and retires it when deleted",
    steps=[
        serve("svc", "openapi"),
        write(
            "agents/biller.md",
            "---\nname: biller\ndescription: An e2e agent that brings its own services\n"
            "remoteTools:\n  billing:\n    url: {svc_url}\n"
            f"mcpServers:\n  ledger:\n    type: http\n    url: {NOWHERE}/mcp\n"
            "---\n\nYou bill.\n",
            home=True,
        ),
        step("agent", "list"),
        step("tools", "list", stdout_has=["billing", "declaration"]),
        step("mcp", "list", stdout_has=["ledger", "declaration"]),
        remove("agents/biller.md", under="contenox"),
        step("agent", "list"),
        step("tools", "list", stdout_lacks=["billing"]),
        step("mcp", "list", stdout_lacks=["ledger"]),
    ],
)


SKIP_TLS_VERIFY = Case(
    name="insecure skip tls verify reaches a service with a self signed certificate",
    init=False,
    steps=[
        serve("svc", "openapi", tls=True),
        _add("intranet", "--insecure-skip-tls-verify", stdout_has=["6 tool(s) discovered"]),
        _shows("intranet", DISCOVERED),
    ],
    defect=Defect(
        title="`--insecure-skip-tls-verify` still verifies the certificate",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: tools add intranet --url "
            "https://127.0.0.1:18443 --insecure-skip-tls-verify -> 'could not "
            "reach endpoint to count tools'; tools show: 'TLS Verify:Skip', "
            "'Tools: (could not reach endpoint: … Get "
            '"https://127.0.0.1:18443/openapi.json": tls: failed to verify '
            "certificate: x509: certificate signed by unknown authority)' Note: I"
            " wrote a small python https server (fresh openssl self-signed cert, "
            "SAN IP:127.0.0.1) serving an OpenAPI 3 spec on every GET; its log "
            "shows no completed request."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# an OpenAPI service on https://127.0.0.1:<port> with a fresh "
            "self-signed certificate\n"
            "contenox tools add intranet --url https://127.0.0.1:<port> "
            "--insecure-skip-tls-verify\n"
            "# prints: could not reach endpoint to count tools\n"
            "contenox tools show intranet\n"
            "# TLS Verify:Skip; Tools: (could not reach endpoint: … tls: failed to "
            "verify certificate: x509: certificate signed by unknown authority)"
        ),
        promised=(
            'integrations/tools/remote.md:170 "disables TLS certificate verification entirely"'
        ),
        observed="the same x509 failure as without the flag",
    ),
)

SELF_SIGNED_REFUSED = Case(
    name="without insecure skip tls verify a self signed service is refused",
    init=False,
    steps=[
        serve("svc", "openapi", tls=True),
        _add("strict", stdout_has=["could not reach endpoint"]),
        step("tools", "show", "strict", stdout_has=["certificate"]),
    ],
)
