"""integrations/tools/remote.md, the promises test_remote.py leaves: the manifest the model
sees loses an injected parameter's name, from ``properties`` and from ``required``; and
``--auth-login-method`` names the login request's method.

The model is a loopback OpenAI-compatible endpoint (harness/servers/providers.py), which is
sent every tool schema contenox offers; the service is the recording OpenAPI service of
harness/servers/http_service.py, whose ``create_note`` declares ``text`` and ``tenant_id``,
both required. The control registers the same service without ``--inject``.
"""

from __future__ import annotations

from harness import Case, Defect, Script, ToolCall, Turn, mission_finish, received, serve, step
from harness.case import open_envelope_step
from harness.servers import HttpService
from harness.servers.providers import ProviderStandIn
from harness.servers.wiring import OPEN_ENVELOPE


def _create_note_schema(standin: ProviderStandIn) -> object:
    """Each ``create_note`` tool in the first chat request: its properties and required names."""
    [first, *_] = standin.chat_requests()
    found: list[dict[str, list[str]]] = []
    for tool in first.json().get("tools", []):
        function = tool.get("function", {})
        name = str(function.get("name", ""))
        if name.endswith("create_note"):
            parameters = function.get("parameters", {})
            found.append(
                {
                    "properties": sorted(parameters.get("properties", {})),
                    "required": sorted(parameters.get("required", [])),
                }
            )
    return found or "no create_note tool offered"


def _schema_case(name: str, *inject: str, expect: object, defect: Defect | None = None) -> Case:
    return Case(
        name=name,
        defect=defect,
        provider="openai",
        script=Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Done."]),
        steps=[
            open_envelope_step(),
            serve("svc", "openapi"),
            step("tools", "add", "svc", "--url", "{svc_url}", *inject),
            step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "make a note"),
            received(
                "provider",
                "create_note as the model is offered it",
                _create_note_schema,
                expect=expect,
            ),
        ],
    )


INJECTED_NAME_LEAVES_THE_MANIFEST = _schema_case(
    "an injected parameter is removed from the properties and required list the model sees",
    "--inject",
    "tenant_id=inj-remote-6604",
    expect=[{"properties": ["text"], "required": ["text"]}],
    defect=Defect(
        title="`tools add --inject` leaves the injected parameter in the schema the model is sent",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# an OpenAI-compatible endpoint on 127.0.0.1:<p> that records each chat request;\n"
            "# an OpenAPI service on 127.0.0.1:<q> whose POST /notes (operationId create_note)\n"
            "# declares text and tenant_id, both required\n"
            "contenox backend add openai --type openai --url http://127.0.0.1:<p>/v1 "
            "--api-key-env KEY\n"
            "contenox config set default-provider openai; contenox config set default-model <m>\n"
            "contenox tools add svc --url http://127.0.0.1:<q> --inject tenant_id=inj-remote-6604\n"
            'contenox run --policy <an envelope that allows every tool> "make a note"\n'
            "# the first chat request's tools: create_note with properties [tenant_id, text]\n"
            "# and required [tenant_id, text]"
        ),
        promised=(
            'integrations/tools/remote.md:119 "Removes injected parameter names from the tool '
            'manifest the model sees (`properties` + `required`)"'
        ),
        observed=(
            "create_note is offered with tenant_id in properties and in required, exactly as "
            "without --inject (the control); an MCP server's injected key is removed "
            "(cases/test_mcp_page.py)"
        ),
        bears_on=(
            'integrations/tools/remote.md:110 "completely hidden from the model\'s tool schema"',
            "integrations/tools/remote.md:62 "
            '"Tool call argument to inject and hide from the model"',
        ),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME; a Python fake OpenAI endpoint on 127.0.0.1:<p> "
            "recording each POST body, and an OpenAPI service on 127.0.0.1:<q> whose "
            "/openapi.json declares POST /notes operationId create_note with text and tenant_id, "
            "both required. `backend add openai --type openai --url http://127.0.0.1:<p>/v1 "
            "--api-key-env KEY`; default provider openai, model m1; `tools add svc --url "
            "http://127.0.0.1:<q> --inject tenant_id=inj-remote-6604` ('1 tool(s) discovered'; "
            "`tools show svc`: 'Inject: tenant_id (values hidden)'); envelope allowall "
            "(default_action allow); `run --policy allowall 'make a note'`. The first chat "
            "request's tools hold svc_create_note with properties ['tenant_id','text'] and "
            "required ['tenant_id','text']. Control without --inject: identical schema. (The run "
            "itself hit the 60s timeout against the fake backend; the recorded request is what "
            "counts.) Note: integrations/tools/remote.md:119 'Removes injected parameter names "
            "from the tool manifest the model sees (`properties` + `required`)', :108-110 "
            "'completely hidden from the model's tool schema', :62 and reference/contenox-"
            "cli.md:228 'inject and hide from the model'. No page says OpenAPI tools keep "
            "injected names visible; integrations/tools/mcp.md:162 promises the same hiding for "
            "MCP."
        ),
    ),
)

# The control: the same service without --inject; create_note is offered as declared.
WITHOUT_INJECT_THE_MANIFEST_IS_AS_DECLARED = _schema_case(
    "without inject the model sees every declared parameter of a remote operation",
    expect=[{"properties": ["tenant_id", "text"], "required": ["tenant_id", "text"]}],
)


# ---------------------------------------------------------------- --auth-login-method


def _login_methods(service: HttpService) -> list[str]:
    """The method of every request the login endpoint received."""
    return sorted({r.method for r in service.requests_to("/login")})


LOGIN_METHOD = Case(
    name="auth login method sends the login with the method it names",
    script=Script(
        turns=[
            Turn(text="Calling the service.", tool_calls=[ToolCall("get_private", {})]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    ),
    steps=[
        open_envelope_step(),
        serve("svc", "openapi"),
        step(
            "tools",
            "add",
            "erp",
            "--url",
            "{svc_url}",
            "--auth-login-url",
            "{svc_url}/login",
            "--auth-login-method",
            "PUT",
            "--auth-login-body",
            '{"usr":"alice"}',
            "--auth-extract-cookie",
            "sid",
            "--auth-inject-header",
            "Cookie",
        ),
        step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "private", exit_code=None),
        received("svc", "the login's method", _login_methods, expect=["PUT"]),
    ],
)
