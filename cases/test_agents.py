"""`contenox agent`: listing, showing, enabling, disabling and removing declared agents.

contenox-cli.md `### contenox agent`. Every agent is registered by discovery
when a command starts, so each case reads the registry back with `agent list`.
"""

from __future__ import annotations

from harness import Case, Defect, step

HEADER = ["ID", "NAME", "SOURCE", "KIND", "ENABLED"]


def _declared(name: str) -> str:
    return (
        f"---\nname: {name}\ndescription: Checks one thing and reports it\ntools: []\n---\n\n"
        "You check one thing and say what you found.\n"
    )


LIST = Case(
    name="agent list shows every discovered agent with id name source kind and enabled",
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[*HEADER, "agent-planner", "discovered", "chain", "true"],
        )
    ],
)

SHOW = Case(
    name="agent show prints the agent's provenance and its config json",
    steps=[
        step(
            "agent",
            "show",
            "agent-planner",
            stdout_has=[
                "Name:     agent-planner",
                "Source:   discovered",
                "Config (config_json):",
                "chain-planner-default.json",
            ],
        )
    ],
)

DISABLE_ENABLE = Case(
    name="agent disable and enable toggle the enabled state agent list shows",
    steps=[
        step("agent", "disable", "run", stdout_has=['Agent "run" disabled.']),
        step("agent", "list", stdout_has=["run            discovered  chain  false"]),
        step("agent", "enable", "run", stdout_has=['Agent "run" enabled.']),
        step("agent", "list", stdout_has=["run            discovered  chain  true"]),
    ],
)

REMOVE_REDISCOVERED = Case(
    name="agent rm removes the registration and discovery registers it again while its file exists",
    steps=[
        step("agent", "rm", "reviewer", stdout_has=['Agent "reviewer" removed.']),
        step("agent", "list", stdout_has=["reviewer"]),
    ],
)

DECLARED_IN_CONTENOX_AGENTS = Case(
    name="an agent declared in the workspace contenox agents folder is listed",
    files={".contenox/agents/checker.md": _declared("checker")},
    steps=[step("agent", "list", stdout_has=["checker"])],
)

DECLARED_IN_CLAUDE_AGENTS = Case(
    name="an agent kept in claude agents is found too",
    files={".claude/agents/claude-checker.md": _declared("claude-checker")},
    steps=[step("agent", "list", stdout_has=["claude-checker"])],
)

DECLARED_IN_AGENTS_AGENTS = Case(
    name="an agent kept in agents agents is found too",
    files={".agents/agents/plain-checker.md": _declared("plain-checker")},
    steps=[step("agent", "list", stdout_has=["plain-checker"])],
    defect=Defect(
        title="a declaration in .agents/agents/ is refused instead of found",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: agent list (exit 0): 'refused  "
            "…/.agents/agents/plain-checker.md: agentdecl: cannot tell which "
            "product … was written for; it carries no field unique to one and "
            "sits outside a known agents directory. Name it with --dialect'; not "
            "in the table Note: Nothing added. guide/agents.md:39 also says "
            ".agents/agents/ is read where it is; no doc says a file there needs "
            "a dialect field."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "mkdir -p .agents/agents\n"
            "printf -- '---\\nname: plain-checker\\ndescription: checks\\ntools: "
            "Read\\n---\\nCheck.\\n' > .agents/agents/plain-checker.md\n"
            "contenox agent list\n"
            "# stderr: refused  …/.agents/agents/plain-checker.md: agentdecl: cannot "
            "tell which product … was written for;\n"
            "#   it carries no field unique to one and sits outside a known agents "
            "directory. Name it with --dialect\n"
            "# (the same file in .contenox/agents/ or .claude/agents/ is listed)"
        ),
        promised=(
            'reference/contenox-cli.md:260 "agents you already keep in '
            '`.claude/agents/` or `.agents/agents/` are found there too"'
        ),
        observed="the declaration is not listed; `agent list` refuses it for its directory",
    ),
)
