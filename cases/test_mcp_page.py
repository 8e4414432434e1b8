"""integrations/tools/mcp.md, the promises test_mcp.py and test_mcp_oauth.py leave.

- The tool schema the model is sent never shows an injected key: read at a loopback
  OpenAI-compatible endpoint (harness/servers/providers.py), which sees every tool schema
  contenox offers, with the same server registered without ``--inject`` as the control.
"""

from __future__ import annotations

from harness import Case, Script, Turn, mission_finish, received, serve, step
from harness.case import open_envelope_step
from harness.servers.providers import ProviderStandIn
from harness.servers.wiring import OPEN_ENVELOPE

# --------------------------------------------------- injected keys and the model's schema


def _note_parameters(standin: ProviderStandIn) -> object:
    """Each ``note`` tool in the first chat request: its parameter names."""
    [first, *_] = standin.chat_requests()
    found: list[list[str]] = []
    for tool in first.json().get("tools", []):
        function = tool.get("function", {})
        name = str(function.get("name", ""))
        if name.endswith("note"):
            found.append(sorted(function.get("parameters", {}).get("properties", {})))
    return found or "no note tool offered"


def _schema_case(name: str, *inject: str, expect: object) -> Case:
    return Case(
        name=name,
        provider="openai",
        script=Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Done."]),
        steps=[
            open_envelope_step(),
            serve("internal", "mcp-http"),
            step(
                "mcp", "add", "internal", "--transport", "http", "--url", "{internal_url}", *inject
            ),
            step("run", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "file a note"),
            received("provider", "the note tool's parameters", _note_parameters, expect=expect),
        ],
    )


INJECTED_KEYS_ARE_NOT_IN_THE_SCHEMA = _schema_case(
    "the tool schema the model is sent never shows an injected key",
    "--inject",
    "tenant_id=inj-tenant-4471",
    "--inject",
    "env=inj-env-9902",
    expect=[["text"]],
)

# The control: the same server without --inject; its note tool declares all three.
WITHOUT_INJECT_THE_SCHEMA_HAS_EVERY_PARAMETER = _schema_case(
    "without inject the tool schema the model is sent has every declared parameter",
    expect=[["env", "tenant_id", "text"]],
)
