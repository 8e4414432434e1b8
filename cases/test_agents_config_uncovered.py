"""reference/agents-config.md, the rows no case held: the layers' errors and what is not per agent.

As in cases/test_agents_config_page.py, what a layer did is read from what
contenox compiled out of it — the renders in ``~/.contenox/.generated/`` and what
``contenox agent list`` prints — never from contenox's own files.
"""

from __future__ import annotations

from test_agents_config_page import _decl
from test_mcp import _add_stdio, _note_then_finish

from harness import Case, Defect, Instance, ToolCall, edit, probe, received, serve, step


def _rendered(instance: Instance) -> list[str]:
    """The e2e envelopes (``mine``, ``rootone``) rendered into ``~/.contenox/.generated/``."""
    generated = instance.home / ".contenox" / ".generated"
    return sorted(
        name for name in ("mine", "rootone") if (generated / f"hitl-policy-{name}.json").is_file()
    )


# agents-config.md:63 "`[envelopes.*]` is not per-agent … it lives at the root and is picked by
# name". An envelope table nested under an agent is no envelope: nothing renders it; the root
# envelope beside it, the control, is rendered by the same session start.
ENVELOPE_UNDER_AN_AGENT = Case(
    name="an envelope table nested under an agent is not rendered while a root one is",
    files={".contenox/agents/plain.md": _decl("plain")},
    steps=[
        edit(
            "agents.toml",
            append=(
                '\n[agents.plain.envelopes.mine]\ndescription = "e2e"\ndefault_action = "allow"\n'
                '\n[envelopes.rootone]\ndescription = "e2e"\ndefault_action = "allow"\n'
            ),
            under="contenox",
        ),
        step("agent", "list", stdout_has=["plain"]),
        # a session start renders the envelopes (test_envelopes.py's shipped-render case)
        step("acp", stdin=""),
        probe("e2e envelopes rendered", _rendered, expect=["rootone"]),
    ],
)

# agents-config.md:31-33 for the home file (the workspace file's case is in
# test_agents_config_page.py): a malformed ~/.contenox/agents.toml is an error.
MALFORMED_HOME_FILE = Case(
    name="a malformed home agents toml is reported naming the file",
    home_files={"agents.toml": "[chain\nmain_rounds = 50\n"},
    files={".contenox/agents/plain.md": _decl("plain")},
    steps=[step("agent", "list", notices_has=["agents.toml"])],
    defect=Defect(
        title=(
            "a malformed ~/.contenox/agents.toml is only a note of init (exit 0); agent list"
            " says nothing and the agents vanish"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; mkdir -p .contenox/agents ~/.contenox\n'
            "printf -- '---\\nname: plain\\ndescription: Checks one thing\\ntools: Read\\n---\\n\\n"
            "body\\n' > .contenox/agents/plain.md\n"
            "printf '[chain\\nmain_rounds = 50\\n' > ~/.contenox/agents.toml   # unclosed header\n"
            "contenox init; echo $?            # 0\n"
            "contenox agent list; echo $?      # lists agent-planner only, stderr empty, 0"
        ),
        promised=(
            'reference/agents-config.md:31-33 "A malformed one is an error rather than a '
            "silent fall back to shipped values — an operator who edited a file and got the "
            'defaults anyway has been lied to."'
        ),
        observed=(
            "init prints 'note: could not read agents.toml (… toml: expected character ])' on "
            "stdout and exits 0; agent list exits 0 with nothing on stderr and shows only "
            "agent-planner: plain and the shipped agents (run, chat, triage, …) are not listed. "
            "(`contenox acp`, by contrast, fails naming it: 'rendering envelopes: agentdecl: "
            "parse …/.contenox/agents.toml: toml: expected character ]', then 'Error: seeded … "
            'but no chain "chain-agent-acp.json" was compiled\', exit 1.)'
        ),
        bears_on=('reference/agents-config.md:20 "`~/.contenox/agents.toml`"',),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, ~/.contenox/agents.toml = '[chain\\nmain_rounds = 50'; "
            "`contenox init` rc=0, stderr empty, but stdout DOES carry 'note: could not read "
            "agents.toml (agentdecl: parse …/.contenox/agents.toml: toml: expected character ]); "
            "declared agents were not transpiled' and 'note: rendering envelopes from agents.toml"
            " failed (…)'. `contenox agent list` rc=0, stderr empty, stdout lists only agent-"
            "planner (no plain, run, chat, triage, reviewer, …). `contenox doctor` rc=0, no "
            "mention of agents.toml. Control with '[chain]' fixed: agent list shows triage, run, "
            "reviewer, researcher, plain, chat, change, chain-acpx, chain-acp, agent-planner. "
            "Note: reference/agents-config.md:31-33: 'A malformed one is an error rather than a "
            "silent fall back to shipped values'. No other page says a malformed agents.toml may "
            "be tolerated (grep malformed/agents.toml). The binary treats it as a non-fatal note "
            "at init (exit 0) and is fully silent in `agent list`/`doctor`, where declared and "
            "shipped agents alike disappear. Correction to the defect text: 'reported nowhere' is"
            " too strong — init's stdout names the parse error as a 'note'; the defect stands for"
            " agent list (silent, exit 0, agents vanish) and for init exiting 0."
        ),
    ),
)


# agents-config.md:485 "A web-shaped tool you connected is an MCP tool — it is reached by its
# own name under `tools` above, and no network axis touches it." Both network axes deny; the
# connected server's `note` still runs. The control: the same envelope naming `rec.note` under
# its `tools` as deny, and the call never reaches the server.
def _network_denied(name: str, tools: str, calls: list[dict[str, str]]) -> Case:
    return Case(
        name=name,
        script=_note_then_finish(ToolCall("note", {"text": "through"})),
        steps=[
            edit(
                "agents.toml",
                append=(
                    '\n[envelopes.e2e_nonet]\ndescription = "e2e"\ndefault_action = "allow"\n'
                    'network.read = "deny"\nnetwork.write = "deny"\n' + tools
                ),
                under="contenox",
            ),
            serve("rec", "mcp-stdio"),
            _add_stdio("rec"),
            step("run", "--policy", "e2e_nonet", "--timeout", "90s", "note it", exit_code=None),
            received(
                "rec",
                "note calls",
                lambda server: [dict(c.arguments) for c in server.calls("note")],
                expect=calls,
            ),
        ],
    )


NETWORK_AXES_DO_NOT_TOUCH_A_CONNECTED_TOOL = [
    _network_denied(
        "a connected mcp tool runs under an envelope denying both network axes",
        "",
        [{"text": "through"}],
    ),
    _network_denied(
        "the same connected tool named deny under the envelope s tools never runs",
        '[envelopes.e2e_nonet.tools]\n"rec.note" = "deny"\n',
        [],
    ),
]
