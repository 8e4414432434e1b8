"""Declared agents and skills: contenox-docs/guide/agents.md, read line by line.

Where declarations are read from and what a malformed one reports are read back
through `contenox agent list` (discovery runs at every command's start and
prints what it refused or did not carry on stderr); what a declared agent was
given — its body as the system prompt, the `{{skills}}` index, the toolsets its
`tools:` line admits — is read from what the model was sent (`state show
--raw`); what it brought, from `mcp list` and `tools list`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dialogs import GATED_ECHO, workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    edit_dialog,
    mission_finish,
    mission_report,
    probe,
    respond,
    satisfies,
    step,
    wait,
    write,
)
from harness.probes import (
    approvals,
    captured_requests,
    captured_steps,
    captured_units,
    system_prompts,
)
from harness.servers import McpCall, read_mcp_records, stdio_command
from harness.servers.wiring import offered_roster, open_envelope

BODY = "You check one thing and say what you found."


def _decl(name: str, frontmatter: str = "tools: Read", body: str = BODY) -> str:
    """A declaration with a name, a description and ``frontmatter``'s extra lines."""
    head = f"name: {name}\ndescription: Checks one thing for {name}\n"
    return f"---\n{head}{frontmatter}\n---\n\n{body}\n"


# A mission the declared agent files and lands; the closing text after
# mission_finish is asked for only sometimes.
LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "checked the one thing")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)
# A write the envelope decides on, then a landing.
WRITES = Script(
    turns=[
        Turn(
            text="Writing.",
            tool_calls=[ToolCall("write_file", {"path": "out.txt", "content": "written\n"})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _run(agent: str, *more: str, policy: str = "run") -> object:
    """`contenox run --policy <policy> <agent> "check it"`, which must land."""
    return step(
        "run", "--policy", policy, agent, "check it", *more, notices_has=["finished: landed"]
    )


def agent_prompts(instance: Instance) -> list[str]:
    """The distinct system prompts the model was sent, over every captured run."""
    seen: list[str] = []
    for rid in captured_requests(instance):
        for prompt in system_prompts(instance, rid):
            if prompt not in seen:
                seen.append(prompt)
    return seen


def _prompt_has(*needles: str) -> object:
    """A probe: some system prompt the model was sent holds every needle."""

    def read(instance: Instance) -> list[str]:
        prompts = agent_prompts(instance)
        missing = [n for n in needles if not any(n in p for p in prompts)]
        assert not missing, f"no system prompt holds {missing}:\n" + "\n---\n".join(prompts)
        return prompts

    return probe("system prompts sent", read)


def _prompt_lacks(*needles: str) -> object:
    """A probe: no system prompt the model was sent holds any needle."""

    def read(instance: Instance) -> list[str]:
        prompts = agent_prompts(instance)
        found = [n for n in needles if any(n in p for p in prompts)]
        assert not found, f"a system prompt holds {found}:\n" + "\n---\n".join(prompts)
        return prompts

    return probe("system prompts sent", read)


def tool_results(instance: Instance) -> list[str]:
    """The distinct tool results the model was sent back, over every captured run."""
    seen: list[str] = []
    for rid in captured_requests(instance):
        for unit in captured_units(instance, rid):
            for message in unit.output_messages:
                if message.role == "tool" and message.content not in seen:
                    seen.append(message.content)
    return seen


def _roster(check: object, what: str) -> object:
    """A probe on the toolset → tools manifest the model was offered."""

    def read(instance: Instance) -> dict[str, list[str]]:
        roster = offered_roster(instance)
        assert check(roster), f"offered roster does not satisfy '{what}': {roster}"  # type: ignore[operator]
        return roster

    return probe(f"offered roster ({what})", read)


# ------------------------------------------------------------------ where declarations live

HOME_AGENT = Case(
    name="an agent declared in the home contenox agents folder is listed in every project",
    home_files={"agents/everywhere.md": _decl("everywhere")},
    steps=[step("agent", "list", stdout_has=[re.compile(r"\beverywhere\s+discovered")])],
)

CLAUDE_PREFIX = Case(
    name="claude agents are prefixed with the tool they came from and workspace ones keep theirs",
    files={
        ".claude/agents/reviewer2.md": _decl("reviewer2"),
        ".contenox/agents/checker.md": _decl("checker"),
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[
                re.compile(r"\bclaude-code-reviewer2\s+discovered"),
                re.compile(r"\s checker\s+discovered"),
            ],
            stdout_lacks=[re.compile(r"\s reviewer2\s"), "claude-code-checker"],
        )
    ],
)

DROP_IN = Case(
    name="a declaration dropped in after init is picked up by the next run",
    script=LANDS,
    steps=[
        step("agent", "list", stdout_lacks=["latecomer"]),
        write(".contenox/agents/latecomer.md", _decl("latecomer", body="LATECOMER-BODY")),
        _run("latecomer"),
    ],
    probes=[_prompt_has("LATECOMER-BODY")],
)

# ------------------------------------------------------------------ the frontmatter

MISSING_NAME = Case(
    name="a declaration without a name is refused naming the missing field",
    files={".contenox/agents/anon.md": "---\ndescription: No name\ntools: Read\n---\n\nHi.\n"},
    steps=[
        step(
            "agent",
            "list",
            notices_has=["refused", "anon.md", 'missing required field "name"'],
        )
    ],
)

MISSING_DESCRIPTION = Case(
    name="a declaration without a description is refused naming the missing field",
    files={".contenox/agents/nodesc.md": "---\nname: nodesc\ntools: Read\n---\n\nHi.\n"},
    steps=[
        step(
            "agent",
            "list",
            notices_has=["refused", "nodesc.md", 'missing required field "description"'],
            stdout_lacks=["nodesc"],
        )
    ],
)

BARE_STAR = Case(
    name="an unquoted star in tools fails to parse the whole file with the yaml message",
    files={".contenox/agents/star.md": _decl("star", "tools: *")},
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                "refused",
                "star.md",
                "did not find expected alphabetic or numeric character",
            ],
            stdout_lacks=[re.compile(r"\sstar\s")],
        )
    ],
)

UNKNOWN_TOOL_DROPPED = Case(
    name="an unknown tool name is dropped and reported and the agent runs with the rest",
    script=LANDS,
    files={".contenox/agents/websearch.md": _decl("websearch", "tools: Read, WebSearch")},
    steps=[
        step(
            "agent",
            "list",
            notices_has=["not carried  websearch: tools — resolves to nothing connected here"],
            stdout_has=[re.compile(r"\bwebsearch\s+discovered")],
        ),
        _run("websearch"),
    ],
    probes=[_roster(lambda r: "local_fs" in r, "local_fs from Read")],
    serves_all_turns=True,
)

UNKNOWN_TOOL_NAMED = Case(
    name="the not carried line for a dropped tool names the tool",
    files={".contenox/agents/websearch.md": _decl("websearch", "tools: Read, WebSearch")},
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                re.compile(r"not carried .*WebSearch.*resolves to nothing connected here")
            ],
        )
    ],
    defect=Defect(
        title="the not-carried line for an unresolved tool does not name the tool",
        reproduce=(
            "in a fresh workspace, `.contenox/agents/websearch.md` with frontmatter "
            "`name: websearch`, `description: Checks one thing for websearch`, "
            "`tools: Read, WebSearch`; `contenox init`; `contenox agent list` prints on stderr "
            "'not carried  websearch: tools — resolves to nothing connected here; the agent runs "
            "without it. Connect it and name it under [tools] in agents.toml' — the word "
            "`WebSearch` appears nowhere in it"
        ),
        promised=(
            'guide/agents.md:329 "not carried  tools: WebSearch    resolves to nothing '
            'connected here; the agent"'
        ),
        observed="'not carried  websearch: tools — resolves to nothing connected here; …'",
        bears_on=(
            'guide/tutorials/first-agent.md:109 "not carried  tools: WebSearch    '
            'resolves to nothing connected here; the agent"',
            'guide/agents.md:95-96 "An unknown name is dropped and reported; the agent runs '
            'with the rest."',
        ),
    ),
)

NOTHING_RESOLVES = Case(
    name="a declaration where no tool resolves fails",
    files={".contenox/agents/nothing.md": _decl("nothing", "tools: WebSearch")},
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                "refused",
                "nothing.md",
                "none of this declaration's tools resolve to anything connected here: WebSearch",
            ],
            stdout_lacks=[re.compile(r"\snothing\s")],
        )
    ],
)

# One field per declaration: `agent list` reports a declaration's fields in
# Go map order (a different order each run), declarations in file order.
NOT_CARRIED_FIELDS = Case(
    name="memory isolation and color are reported as not carried",
    files={
        ".contenox/agents/extras-a.md": _decl("extras-a", "tools: Read\nmemory: project"),
        ".contenox/agents/extras-b.md": _decl("extras-b", "tools: Read\nisolation: worktree"),
        ".contenox/agents/extras-c.md": _decl("extras-c", "tools: Read\ncolor: blue"),
    },
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                "not carried  extras-a: memory",
                "not carried  extras-b: isolation",
                "not carried  extras-c: color",
            ],
            stdout_has=[re.compile(r"\bextras-a\s+discovered")],
        )
    ],
)

REPLACED_FIELDS = Case(
    name="hooks skills and background are reported with what replaces them",
    files={
        ".contenox/agents/extras-a.md": _decl("extras-a", "tools: Read\nhooks: {}"),
        ".contenox/agents/extras-b.md": _decl("extras-b", "tools: Read\nskills: [timesheet]"),
        ".contenox/agents/extras-c.md": _decl("extras-c", "tools: Read\nbackground: true"),
    },
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                "not carried  extras-a: hooks — contenox governs these in the runtime",
                "not carried  extras-b: skills — skills are files the agent reads",
                re.compile(r"write \{\{skills\}\} in the declaration body"),
                "not carried  extras-c: background — already the default",
            ],
        )
    ],
)

BYPASS_REFUSED = Case(
    name="permissionMode bypassPermissions is refused",
    files={
        ".contenox/agents/bypass.md": _decl(
            "bypass", "tools: Read\npermissionMode: bypassPermissions"
        )
    },
    steps=[
        step(
            "agent",
            "list",
            notices_has=["refused", "bypass.md", "permissionMode: bypassPermissions"],
            stdout_lacks=["bypass"],
        )
    ],
)

POSTURE_WINS = Case(
    name="posture wins over permissionMode when both appear",
    script=WRITES,
    files={
        ".contenox/agents/careful.md": _decl(
            "careful", "tools: Read, Write\nposture: read_only\npermissionMode: acceptEdits"
        )
    },
    # The agent's own envelope is named after it: read_only refuses the write.
    steps=[_run("careful", policy="careful")],
    probes=[workspace_file("out.txt", expect=None)],
)

ASKS_FIRST = Case(
    name="without acceptEdits a write asks first",
    script=WRITES,
    files={".contenox/agents/asker.md": _decl("asker", "tools: Read, Write")},
    steps=[
        background("run", "run", "--policy", "asker", "--timeout", "120s", "asker", "write it"),
        await_ask("ask", run="run", tool="local_fs.write_file", kind="permission"),
        respond("ask", "deny"),
        wait("run", notices_has=["finished: landed"]),
    ],
    probes=[workspace_file("out.txt", expect=None)],
)


def models_used(instance: Instance) -> list[str]:
    """The distinct models the captured chat turns ran on (`state show --raw`)."""
    seen: list[str] = []
    for rid in captured_requests(instance):
        for unit in captured_units(instance, rid):
            if unit.handler == "chat_completion" and unit.model_name not in seen:
                seen.append(unit.model_name)
    return seen


# A declaration's `model:` alone is not a pin (agents-config.md `[routing]`):
# pinning takes `pin_model = true` for that agent and a `[models]` mapping of
# the name. The control is the same declaration and dialogs without the two
# tables: routing stays on the configured default.
_PIN_TABLES = (
    "[agents.pinned.routing]\npin_model = true\n\n"
    '[models]\npinned-model = "scripted-test:pinned-model"\n'
)
PINNED_MODEL = [
    Case(
        name=name,
        backends={"main": LANDS, "pinned": Script(model="pinned-model", turns=LANDS.turns)},
        default_backend="main",
        files={
            ".contenox/agents/pinned.md": _decl("pinned", "tools: Read\nmodel: pinned-model"),
            **({".contenox/agents.toml": _PIN_TABLES} if pinned else {}),
        },
        steps=[_run("pinned")],
        probes=[probe("models the agent ran on", models_used, expect=[model])],
    )
    for name, pinned, model in (
        (
            "pin_model with a models mapping routes the agent to the model it names",
            True,
            "pinned-model",
        ),
        (
            "a declaration's model without pin_model stays on the configured default",
            False,
            "scripted-test",
        ),
    )
]

ACCEPT_EDITS = Case(
    name="permissionMode acceptEdits auto-accepts file writes",
    script=WRITES,
    files={
        ".contenox/agents/editor.md": _decl(
            "editor", "tools: Read, Write\npermissionMode: acceptEdits"
        )
    },
    steps=[_run("editor", policy="editor")],
    probes=[workspace_file("out.txt", expect="written\n")],
)

# ------------------------------------------------------------------ what tools: grants

READ_BRINGS_LOCAL_FS = Case(
    name="tools Read admits the whole local_fs toolset and nothing else",
    script=LANDS,
    files={".contenox/agents/reader.md": _decl("reader", "tools: Read")},
    steps=[_run("reader")],
    probes=[
        _roster(
            lambda r: "write_file" in r.get("local_fs", []) and set(r) <= {"local_fs", "mission"},
            "local_fs whole, no other hosted toolset",
        )
    ],
)

INHERITS_EVERYTHING = Case(
    name="a declaration without a tools line inherits every connected toolset",
    script=LANDS,
    files={".contenox/agents/heir.md": _decl("heir", "model: scripted-test")},
    steps=[_run("heir")],
    probes=[
        _roster(
            lambda r: {"local_fs", "native-echo", "native-git"} <= set(r),
            "local_fs and the native toolsets",
        )
    ],
)

QUOTED_STAR = Case(
    name="tools quoted star grants every connected toolset like omitting the line",
    script=LANDS,
    files={".contenox/agents/starry.md": _decl("starry", 'tools: "*"')},
    steps=[_run("starry")],
    probes=[
        _roster(
            lambda r: {"local_fs", "native-echo", "native-git"} <= set(r),
            "local_fs and the native toolsets",
        )
    ],
)

DISALLOWED_HIDES_ONE = Case(
    name="disallowedTools hides one tool out of the toolset tools admitted",
    script=WRITES,
    files={".contenox/agents/nowrite.md": _decl("nowrite", "tools: Read\ndisallowedTools: Write")},
    steps=[_run("nowrite")],
    probes=[
        workspace_file("out.txt", expect=None),
        probe(
            "tool results",
            lambda instance: tool_results(instance),
            expect=satisfies(
                lambda results: any("local_fs.write_file is hidden" in r for r in results),
                "the write_file call came back hidden",
            ),
        ),
    ],
)

EMPTY_GRANTS_NOTHING = Case(
    name="an empty tools list grants no toolset",
    script=LANDS,
    files={".contenox/agents/bare.md": _decl("bare", "tools: []")},
    steps=[_run("bare")],
    # No toolset at all: the prompt carries no tool manifest.
    probes=[_prompt_has(BODY), _prompt_lacks("Available tools")],
)

FLOW_STAR = Case(
    name="tools as a list holding the star grants every connected toolset",
    script=LANDS,
    files={".contenox/agents/starlist.md": _decl("starlist", 'tools: ["*"]')},
    steps=[_run("starlist")],
    probes=[
        _roster(
            lambda r: {"local_fs", "native-echo", "native-git"} <= set(r),
            "local_fs and the native toolsets",
        )
    ],
)

EVERY_NAME_RESOLVES = Case(
    name="the eight tool names resolved out of the box are carried",
    files={
        ".contenox/agents/allnames.md": _decl(
            "allnames", "tools: Read, Write, Edit, Bash, PowerShell, Glob, Grep, WebFetch"
        )
    },
    steps=[
        step(
            "agent",
            "list",
            notices_lacks=["allnames"],
            stdout_has=[re.compile(r"\ballnames\s+discovered")],
        )
    ],
    defect=Defect(
        title="Glob, Grep and WebFetch are not resolved out of the box",
        reproduce=(
            "in a fresh workspace, `.contenox/agents/allnames.md` with frontmatter "
            "`name: allnames`, `description: Checks one thing for allnames`, `tools: Read, Write, "
            "Edit, Bash, PowerShell, Glob, Grep, WebFetch`; `contenox init`; `contenox agent "
            "list` prints on stderr three times 'not carried  allnames: tools — resolves to "
            "nothing connected here; the agent runs without it. Connect it and name it under "
            "[tools] in agents.toml'; one declaration per name shows the three are `Glob`, "
            "`Grep` and `WebFetch` (`tools: Read, Glob` is carried as `Read` alone)"
        ),
        promised=(
            'guide/agents.md:94-95 "Tool names resolved out of the box: `Read`, `Write`, '
            '`Edit`, `Bash`, `PowerShell`, `Glob`, `Grep`, `WebFetch`."'
        ),
        observed="three 'not carried  allnames: tools — resolves to nothing connected here' lines",
        bears_on=(
            'reference/agents-config.md:589-595 "Two kinds of name are absent from the '
            'shipped table"',
        ),
    ),
)

BANG_IS_DROPPED = Case(
    name="a bang name in a declaration's tools resolves to nothing and is dropped",
    files={".contenox/agents/bang.md": _decl("bang", 'tools: Read, "!local_shell"')},
    steps=[
        step(
            "agent",
            "list",
            notices_has=["not carried  bang: tools — resolves to nothing connected here"],
            stdout_has=[re.compile(r"\bbang\s+discovered")],
        )
    ],
)

TOOLS_MAPPING = Case(
    name="a name mapped under tools in agents.toml resolves and is no longer dropped",
    script=LANDS,
    files={
        ".contenox/agents/searcher.md": _decl("searcher", "tools: Read, WebSearch"),
        ".contenox/agents.toml": '[tools]\nWebSearch = "native-echo.echo"\n',
    },
    steps=[
        step("agent", "list", notices_lacks=["searcher: tools"]),
        _run("searcher"),
    ],
    probes=[_roster(lambda r: "native-echo" in r, "native-echo through WebSearch")],
)

# ------------------------------------------------------------------ using it

BODY_IS_THE_PROMPT = Case(
    name="run with a declared agent sends its body as the system prompt",
    script=LANDS,
    files={".contenox/agents/checker.md": _decl("checker", body="CHECKER-BODY: you check.")},
    steps=[_run("checker")],
    probes=[_prompt_has("CHECKER-BODY: you check.")],
)

BODY_MACROS = Case(
    name="a declaration's body expands the var host and date macros",
    script=LANDS,
    files={
        ".contenox/agents/capper.md": _decl(
            "capper", body="Cap {{var:max_tokens}} tokens on {{host:os}}, today {{date}}."
        )
    },
    steps=[
        step("config", "set", "default-max-tokens", "4321"),
        _run("capper"),
    ],
    probes=[
        probe(
            "system prompts sent",
            agent_prompts,
            expect=satisfies(
                lambda prompts: any(
                    re.search(r"Cap 4321 tokens on linux, today \d{4}-\d\d-\d\d\.", p)
                    for p in prompts
                ),
                "the var, host and date macros expanded",
            ),
        )
    ],
    redact={r"\b\d{4}-\d\d-\d\d\b": "[DATE]"},
)

MISSION_FIRE_DECLARED = Case(
    name="mission fire dispatches a declared agent and waits for it to land",
    script=LANDS,
    files={".contenox/agents/checker.md": _decl("checker")},
    steps=[
        step(
            "mission",
            "fire",
            "checker",
            "check it",
            "--policy",
            "run",
            "--wait",
            stdout_has=[
                'Mission fired at agent "checker"',
                "finished: landed",
                "checked the one thing",
            ],
        ),
        step("mission", "list", stdout_has=[re.compile(r"\bchecker\s+run\s+landed")]),
    ],
)

# ------------------------------------------------------------------ skills

SKILL_TIMESHEET = (
    "---\nname: timesheet\ndescription: File this week's hours to the timesheet system\n---\n\n"
    "Read the tracked hours, present the week, submit the approved rows.\n"
)
OFFICE = _decl("office", body="You handle recurring work.\n\n{{skills}}")

SKILLS_INDEX = Case(
    name="the skills macro expands to the index of the workspace skills",
    script=LANDS,
    files={".contenox/agents/office.md": OFFICE, ".contenox/skills/timesheet.md": SKILL_TIMESHEET},
    steps=[_run("office")],
    probes=[
        _prompt_has(
            "Skills are procedures for repeated work. When a request matches one, read its\n"
            "file before starting, then follow it."[:60],
            "- timesheet: File this week's hours to the timesheet system — "
            "read .contenox/skills/timesheet.md",
        ),
        # The index, not the bodies.
        _prompt_lacks("Read the tracked hours"),
    ],
)

SKILL_EDITED = Case(
    name="an edited skill is what the next run's index says",
    script=LANDS,
    files={".contenox/agents/office.md": OFFICE, ".contenox/skills/timesheet.md": SKILL_TIMESHEET},
    steps=[
        _run("office"),
        write(
            ".contenox/skills/timesheet.md",
            SKILL_TIMESHEET.replace("File this week's hours", "File last week's hours"),
        ),
        edit_dialog(LANDS),
        _run("office"),
    ],
    probes=[_prompt_has("- timesheet: File last week's hours to the timesheet system")],
)

SKILL_FOLDER = Case(
    name="a skill folder is listed by its SKILL.md",
    script=LANDS,
    files={
        ".contenox/agents/office.md": OFFICE,
        ".contenox/skills/release/SKILL.md": (
            "---\nname: release\ndescription: Cut a release\n---\n\nTag.\n"
        ),
        ".contenox/skills/release/checklist.md": "1. tag\n",
    },
    steps=[_run("office")],
    probes=[_prompt_has("- release: Cut a release — read .contenox/skills/release/SKILL.md")],
)

SKILL_BARE = Case(
    name="a bare skill file takes its name from the file and its description from the first line",
    script=LANDS,
    files={
        ".contenox/agents/office.md": OFFICE,
        ".contenox/skills/backup.md": "Back up the shared drive\n\nCopy it, then verify.\n",
    },
    steps=[_run("office")],
    probes=[_prompt_has("- backup: Back up the shared drive — read .contenox/skills/backup.md")],
)

SKILL_IN_HOME_NOT_LISTED = Case(
    name="a skill in the home contenox skills folder is not listed for a workspace agent",
    script=LANDS,
    files={".contenox/agents/office.md": OFFICE, ".contenox/skills/timesheet.md": SKILL_TIMESHEET},
    home_files={"skills/homeonly.md": "---\nname: homeonly\ndescription: Lives at home\n---\nx\n"},
    steps=[_run("office")],
    probes=[_prompt_lacks("homeonly", "Lives at home")],
)

# ------------------------------------------------------------------ tools an agent brings

BRINGS = _decl(
    "brings",
    "tools: Read\nmcpServers:\n  filesystem:\n    command: /bin/true\n"
    "remoteTools:\n  billing:\n    url: http://127.0.0.1:9\n    spec: http://127.0.0.1:9/openapi.json",
)

BROUGHT_SERVER_LISTED = Case(
    name="a server an agent brings shows in mcp list under the owner declaration",
    files={".contenox/agents/brings.md": BRINGS},
    steps=[
        step("agent", "list"),
        step(
            "mcp",
            "list",
            stdout_has=[re.compile(r"decl-brings-filesystem\s+stdio\s+/bin/true\s+declaration")],
        ),
    ],
)

BROUGHT_SERVICE_LISTED = Case(
    name="a remote service an agent brings shows in tools list under the owner declaration",
    files={".contenox/agents/brings.md": BRINGS},
    steps=[
        step("agent", "list"),
        step(
            "tools",
            "list",
            stdout_has=[
                re.compile(r"decl-brings-billing\s+http://127\.0\.0\.1:9\s+\S+\s+declaration")
            ],
        ),
    ],
)

TWO_FILESYSTEMS = Case(
    name="two agents may each bring a filesystem server without colliding",
    files={
        ".contenox/agents/one.md": _decl(
            "one", "tools: Read\nmcpServers:\n  filesystem:\n    command: /bin/true"
        ),
        ".contenox/agents/two.md": _decl(
            "two", "tools: Read\nmcpServers:\n  filesystem:\n    command: /bin/true"
        ),
    },
    steps=[
        step("agent", "list"),
        step("mcp", "list", stdout_has=["decl-one-filesystem", "decl-two-filesystem"]),
    ],
)

REMOVED_ROW_COMES_BACK = Case(
    name="removing a declaration owned server by hand does not stick",
    files={".contenox/agents/brings.md": BRINGS},
    steps=[
        step("agent", "list"),
        step("mcp", "remove", "decl-brings-filesystem"),
        step("agent", "list"),
        step("mcp", "list", stdout_has=[re.compile(r"decl-brings-filesystem\s.*declaration")]),
    ],
)

YOURS_UNTOUCHED = Case(
    name="a server you registered yourself is never touched by a declaration",
    files={
        ".contenox/agents/brings.md": _decl(
            "brings", "tools: Read\nmcpServers:\n  filesystem:\n    command: /bin/true"
        )
    },
    steps=[
        step("mcp", "add", "filesystem", "--transport", "stdio", "--command", "/bin/echo"),
        step("agent", "list"),
        step(
            "mcp",
            "list",
            stdout_has=[
                re.compile(r"\bfilesystem\s+stdio\s+/bin/echo\s+you"),
                re.compile(r"decl-brings-filesystem\s+stdio\s+/bin/true\s+declaration"),
            ],
        ),
    ],
)

LITERAL_TOKEN_REFUSED = Case(
    name="a literal credential in a declaration is refused with the file and field named",
    files={
        ".contenox/agents/tok.md": _decl(
            "tok",
            "tools: Read\nmcpServers:\n  linear:\n    type: http\n"
            "    url: http://127.0.0.1:9/mcp\n    authToken: sk-live-abc123",
        )
    },
    steps=[
        step(
            "agent",
            "list",
            notices_has=["refused", "tok.md", 'mcpServers.linear sets "authToken"', "authEnvKey"],
            notices_lacks=["sk-live-abc123"],
        ),
        step("mcp", "list", stdout_lacks=["linear"]),
    ],
)

ENV_KEY_ACCEPTED = Case(
    name="a declaration naming its credential by authEnvKey is accepted",
    files={
        ".contenox/agents/linear.md": _decl(
            "linear",
            "tools: Read\nmcpServers:\n  linear:\n    type: http\n"
            "    url: http://127.0.0.1:9/mcp\n    authEnvKey: LINEAR_TOKEN",
        )
    },
    steps=[
        step("agent", "list", notices_lacks=["linear.md"]),
        step("mcp", "list", stdout_has=[re.compile(r"decl-linear-linear\s+http\s.*declaration")]),
    ],
)

# ------------------------------------------------------------------ branching

SORTER = (
    "---\nname: sorter\ndescription: Send a request to its branch\n{default}---\n\n"
    "Answer with one label.\n"
)


def _branch(label: str) -> str:
    head = f"---\nname: {label}\ndescription: The {label} branch\ntools: Read\n---\n\n"
    return head + f"BRANCH-{label.upper()}: do it.\n"


def _tree(default: str) -> dict[str, str]:
    return {
        ".contenox/agents/sorter/agent.md": SORTER.format(default=default),
        ".contenox/agents/sorter/code/agent.md": _branch("code"),
        ".contenox/agents/sorter/docs/agent.md": _branch("docs"),
    }


TREE_IS_ONE_AGENT = Case(
    name="a directory with branches is one agent named for its router",
    files=_tree("default: docs\n"),
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[re.compile(r"\bsorter\s+discovered")],
            stdout_lacks=[re.compile(r"\s(code|docs)\s+discovered")],
        )
    ],
)

DEFAULT_NAMING_NO_BRANCH = Case(
    name="a router default naming no branch is refused",
    files=_tree("default: nowhere\n"),
    steps=[
        step(
            "agent",
            "list",
            notices_has=["refused", 'declares default "nowhere", which is not one of code, docs'],
            stdout_lacks=["sorter"],
        )
    ],
)

DEFAULT_REQUIRED = Case(
    name="a router with two branches and no default is refused",
    files=_tree(""),
    steps=[
        step("agent", "list", notices_has=["refused", "sorter", "default"], stdout_lacks=["sorter"])
    ],
)

NESTED_TREE = Case(
    name="a branch that itself branches is still one agent",
    files={
        **_tree("default: docs\n"),
        ".contenox/agents/sorter/code/agent.md": (
            "---\nname: code\ndescription: The code branch\ndefault: go\n---\n\nWhich language?\n"
        ),
        ".contenox/agents/sorter/code/go/agent.md": _branch("go"),
        ".contenox/agents/sorter/code/py/agent.md": _branch("py"),
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[re.compile(r"\bsorter\s+discovered")],
            stdout_lacks=[re.compile(r"\s(code|docs|go|py)\s+discovered")],
            notices_lacks=["sorter"],
        )
    ],
)

ONE_BRANCH_NO_DEFAULT = Case(
    name="a router with exactly one branch needs no default",
    files={
        ".contenox/agents/solo/agent.md": (
            "---\nname: solo\ndescription: One way\n---\n\nLabel it.\n"
        ),
        ".contenox/agents/solo/only/agent.md": _branch("only"),
    },
    steps=[
        step(
            "agent", "list", stdout_has=[re.compile(r"\bsolo\s+discovered")], notices_lacks=["solo"]
        )
    ],
)

ROUTED = Script(
    turns=[
        Turn(text="docs"),
        Turn(text="Filing.", tool_calls=[mission_report("result", "routed to docs")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)

LABEL_IS_THE_DIRECTORY = Case(
    name="the router's answer picks the branch of that directory name",
    script=ROUTED,
    files=_tree("default: code\n"),
    steps=[_run("sorter")],
    probes=[
        _prompt_has("BRANCH-DOCS"),
        _prompt_lacks("BRANCH-CODE"),
    ],
)


def router_prompt(instance: Instance) -> str:
    """The classifier prompt `sorter` was transpiled into (`.contenox/.generated/`).

    The page points the reader at `.generated/` ("you can read and edit it"); the
    captured state of a `route` step does not record the prompt it was sent.
    """
    chain = instance.work / ".contenox" / ".generated" / "chain-agent-sorter.json"
    tasks = json.loads(chain.read_text(encoding="utf-8"))["tasks"]
    [route_task] = [t for t in tasks if t.get("handler") == "route"]
    prompt: str = route_task["system_instruction"]
    return prompt


LABELS_APPENDED = Case(
    name="the router prompt is told each branch label with its description",
    files=_tree("default: code\n"),
    steps=[step("agent", "list", stdout_has=["sorter"])],
    probes=[
        probe(
            "router prompt",
            router_prompt,
            expect=satisfies(
                lambda p: (
                    p.startswith("Answer with one label.")
                    and "- code: The code branch\n- docs: The docs branch" in p
                ),
                "the author's prompt, then every label with its description",
            ),
        )
    ],
)

UNMAPPED_TAKES_DEFAULT = Case(
    name="a classifier answer naming no branch takes the default branch",
    script=Script(
        turns=[
            Turn(text="banana"),
            Turn(text="Filing.", tool_calls=[mission_report("result", "went to the default")]),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files=_tree("default: docs\n"),
    steps=[_run("sorter")],
    probes=[_prompt_has("BRANCH-DOCS"), _prompt_lacks("BRANCH-CODE")],
)

# ------------------------------------------------------------------ the shipped agents


def home_agents(instance: Instance) -> list[str]:
    """The files `init` wrote under ~/.contenox/agents/ (the page: "you can read and edit it")."""
    root = instance.home / ".contenox" / "agents"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.md"))


SHIPPED = (
    "triage/agent.md",
    "acp/agent.md",
    "acp/coding/agent.md",
    "acp/general/agent.md",
    "acp/review/agent.md",
    "acpx.md",
)

SHIPPED_DECLARATIONS = Case(
    name="init seeds triage the acp tree and the flat acpx as declarations under home agents",
    steps=[step("agent", "list", stdout_has=["triage", "chain-acp ", "chain-acpx"])],
    probes=[
        probe(
            "home agents",
            home_agents,
            expect=satisfies(
                lambda found: set(SHIPPED) <= set(found), "holds " + ", ".join(SHIPPED)
            ),
        )
    ],
)

SHIPPED_JSON_CHAINS = Case(
    name="compact fim planner and oracle are still shipped as json chains",
    steps=[
        step(
            "vet",
            "--all",
            stdout_has=[
                re.compile(r"ok\s+\S*chain-compact-default\.json"),
                re.compile(r"ok\s+\S*chain-fim-default\.json"),
                re.compile(r"ok\s+\S*chain-planner-default\.json"),
                re.compile(r"ok\s+\S*chain-oracle-default\.json"),
            ],
        )
    ],
)

# ------------------------------------------------------------------ agents.toml and vet

TYPO_SECTION_REPORTED = Case(
    name="an agents.toml section naming an agent that does not exist is reported",
    files={".contenox/agents.toml": "[agents.revieewer.chain]\ntoken_limit = 32768\n"},
    steps=[
        step(
            "agent",
            "list",
            notices_has=["agents.toml [agents.revieewer]: no declaration by that name"],
        )
    ],
)

VET_CHECKS_WHAT_IT_BECAME = Case(
    name="vet validates the chain a declaration became",
    files={".contenox/agents/checker.md": _decl("checker")},
    steps=[
        step("agent", "list"),
        step("vet", stdout_has=[re.compile(r"ok\s+\S*\.generated/chain-agent-checker\.json")]),
    ],
)


def test_deleting_a_declaration_retires_the_server_it_brought(instance: Instance) -> None:
    # function: a declaration file is deleted between two commands, which no step type does
    declaration = instance.work / ".contenox" / "agents" / "brings.md"
    declaration.parent.mkdir(parents=True, exist_ok=True)
    declaration.write_text(BRINGS, encoding="utf-8")
    instance.init()
    instance.must("agent", "list")
    before = instance.must("mcp", "list")
    assert "decl-brings-filesystem" in before.stdout, before.describe()
    declaration.unlink()
    instance.must("agent", "list")
    after = instance.contenox("mcp", "list")
    assert "decl-brings-filesystem" not in after.stdout, after.describe()


# ------------------------------------------------------------------ reach through MCP servers


def _server_yaml(instance: Instance, record_name: str) -> str:
    """The `command:`/`args:` lines that make contenox spawn the recording MCP server."""
    command, args = stdio_command(instance.tmp / record_name)
    return f"    command: {json.dumps(command)}\n    args: {json.dumps(args)}"


def _declare(instance: Instance, name: str, frontmatter: str) -> None:
    path = instance.work / ".contenox" / "agents" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_decl(name, frontmatter), encoding="utf-8")


NOTE_THEN_FINISH = Script(
    turns=[
        Turn(text="Noting.", tool_calls=[ToolCall("note", {"text": "reached"})]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _notes_reaching(instance: Instance, agent: str, record: Path) -> list[McpCall]:
    """Run ``agent`` on a dialog that calls the server's `note`; the calls the server got.

    The run is under an envelope where every tool runs unasked (a connected tool
    would otherwise wait on an ask): reach, not permission, is what is checked.
    A tool the agent cannot reach comes back "not found" and the server records nothing.
    """
    policy = open_envelope(instance)
    instance.use_script(NOTE_THEN_FINISH)
    ran = instance.contenox("run", "--policy", policy, "--timeout", "120s", agent, "note it")
    assert "finished: landed" in ran.stderr, ran.describe()
    calls = [c for c in read_mcp_records(record) if c.method == "tools/call"]
    instance.recorder.probe("note calls the server received", (), [c.arguments for c in calls])
    return calls


def test_a_registered_server_named_under_mcpservers_is_granted_without_listing_it_in_tools(
    instance: Instance,
) -> None:
    # function: the server's command line is known only once the scratch root exists
    instance.init()
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", "rec", "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    _declare(instance, "granted", "tools: Read\nmcpServers: [rec]")
    [call] = _notes_reaching(instance, "granted", record)
    assert (call.tool, call.arguments) == ("note", {"text": "reached"})


def test_an_agent_s_own_server_is_granted_whatever_its_tools_line_says(
    instance: Instance,
) -> None:
    # function: the server's command line is known only once the scratch root exists
    instance.init()
    _declare(
        instance,
        "bringer",
        "tools: Read\nmcpServers:\n  rec:\n" + _server_yaml(instance, "rec.jsonl"),
    )
    [call] = _notes_reaching(instance, "bringer", instance.tmp / "rec.jsonl")
    assert (call.tool, call.arguments) == ("note", {"text": "reached"})


def test_an_agent_inheriting_every_tool_reaches_a_server_another_agent_brought(
    instance: Instance,
) -> None:
    # function: the server's command line is known only once the scratch root exists
    instance.init()
    _declare(
        instance,
        "bringer",
        "tools: Read\nmcpServers:\n  rec:\n" + _server_yaml(instance, "rec.jsonl"),
    )
    _declare(instance, "heir", 'tools: "*"')
    [call] = _notes_reaching(instance, "heir", instance.tmp / "rec.jsonl")
    assert (call.tool, call.arguments) == ("note", {"text": "reached"})


# ------------------------------------------------------------------ recovery, failure, budgets

FAILURE_MD = (
    "---\nname: sorter-failure\ndescription: Says every branch gave up\n---\n\n"
    "FAILURE-TEXT: every branch gave up.\n"
)
RECOVERY_MD = (
    "---\nname: code-recovery\ndescription: A second attempt\n---\n\n"
    "You have used {{rounds_used}} of {{main_rounds}} main and\n"
    "{{recovery_rounds_used}} of {{recovery_rounds}} recovery rounds.\n"
)


def generated_prompts(instance: Instance) -> dict[str, str]:
    """Task id → system prompt of the chain `sorter` was transpiled into (`.generated/`)."""
    chain = instance.work / ".contenox" / ".generated" / "chain-agent-sorter.json"
    tasks = json.loads(chain.read_text(encoding="utf-8"))["tasks"]
    return {t["id"]: t.get("system_instruction", "").split("\n\nAvailable tools")[0] for t in tasks}


BUDGETS_RESOLVED = Case(
    name="a recovery prompt's budgets are the numbers agents.toml sets, layered per agent",
    files={
        **_tree("default: docs\n"),
        ".contenox/agents/sorter/code/recovery.md": RECOVERY_MD,
        # The root layer sets both budgets; the agent's own section overrides one.
        ".contenox/agents.toml": (
            "[chain]\nmain_rounds = 40\nrecovery_rounds = 5\n\n"
            "[agents.sorter.chain]\nrecovery_rounds = 8\n"
        ),
    },
    steps=[step("agent", "list", stdout_has=["sorter"], notices_lacks=["sorter"])],
    probes=[
        probe(
            "generated prompts",
            generated_prompts,
            expect=satisfies(
                lambda p: (
                    re.fullmatch(
                        r"You have used \{\{edge_count:[^}]+\}\} of 40 main and\n"
                        r"\{\{edge_count:[^}]+\}\} of 8 recovery rounds\.",
                        p.get("sorter-code-recovery", ""),
                    )
                    is not None
                ),
                "live counters, main 40 from [chain], recovery 8 from [agents.sorter.chain]",
            ),
        )
    ],
)

RECOVERY_PRESENT_OR_ABSENT = Case(
    name="only a branch with a recovery file gets a recovery stage",
    files={**_tree("default: docs\n"), ".contenox/agents/sorter/code/recovery.md": RECOVERY_MD},
    steps=[step("agent", "list", stdout_has=["sorter"], notices_lacks=["sorter"])],
    probes=[
        probe(
            "generated prompts",
            generated_prompts,
            expect=satisfies(
                lambda p: (
                    "sorter-code-recovery" in p
                    and not any(k.startswith("sorter-docs-recovery") for k in p)
                ),
                "code has a recovery stage, docs none",
            ),
        )
    ],
)

FAILURE_REPORT = Case(
    name="failure md at the root of a tree is what the chain says when every branch gave up",
    files={**_tree("default: docs\n"), ".contenox/agents/sorter/failure.md": FAILURE_MD},
    steps=[step("agent", "list", stdout_has=["sorter"], notices_lacks=["sorter"])],
    probes=[
        probe(
            "generated prompts",
            generated_prompts,
            expect=satisfies(
                lambda p: p.get("sorter-summarise") == "FAILURE-TEXT: every branch gave up.",
                "the summarising stage speaks failure.md",
            ),
        )
    ],
)


# ------------------------------------------------------------------ naming is not permitting

ALWAYS_ALLOW = Case(
    name="a policy always_allow rule in agents.toml lets a connected tool run unattended",
    # Without the rule `echo` is on the run envelope's approve floor and would wait on an ask.
    script=GATED_ECHO,
    files={
        ".contenox/agents.toml": ('[[policy.always_allow]]\ntools = "native-echo"\ntool = "echo"\n')
    },
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "--timeout",
            "60s",
            "echo hi",
            stdout_has=["echoed after the verdict"],
            notices_has=["finished: landed"],
        )
    ],
    probes=[probe("pending asks", approvals, expect=[])],
)


# ------------------------------------------------------------------ maxTurns

READS_THRICE = Script(
    turns=[
        *[
            Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})])
            for _ in range(3)
        ],
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def tasks_run(instance: Instance) -> list[str]:
    """The distinct chain tasks that ran, over every captured run (`state show`)."""
    seen: list[str] = []
    for rid in captured_requests(instance):
        for row in captured_steps(instance, rid):
            if row.task not in seen:
                seen.append(row.task)
    return seen


def envelope_compute(agent: str, tool_calls: int) -> object:
    """A probe: the `compute` block of the envelope emitted for ``agent``, whose
    ``maxToolCalls`` must be ``tool_calls``."""

    def read(instance: Instance) -> object:
        path = instance.work / ".contenox" / ".generated" / f"hitl-policy-{agent}.json"
        return json.loads(path.read_text(encoding="utf-8")).get("compute")

    return probe(
        f"compute of the envelope emitted for {agent}",
        read,
        expect=satisfies(
            lambda compute: isinstance(compute, dict) and compute.get("maxToolCalls") == tool_calls,
            f"maxToolCalls {tool_calls}",
        ),
    )


# agents-config.md `[policy.compute]`: a declaration's `maxTurns` lowers
# `max_tool_calls` (default 300) when tighter and never raises it, and
# `max_tool_calls` "is validated but not enforced by the shipped hosts" — so a
# run of three read rounds under `maxTurns: 1` still lands; no page promises a
# hand-over to recovery. The looser declaration is the control: 300 stays.
MAX_TURNS_TIGHTENS = [
    Case(
        name=name,
        script=READS_THRICE if turns == 1 else LANDS,
        files={
            "notes.txt": "a note\n",
            f".contenox/agents/{agent}.md": _decl(agent, f"tools: Read\nmaxTurns: {turns}"),
        },
        steps=[_run(agent)],
        probes=[envelope_compute(agent, calls)],
    )
    for name, agent, turns, calls in (
        (
            "maxTurns tighter than max_tool_calls lowers the agent's ceiling "
            "and the run is not cut",
            "brief",
            1,
            1,
        ),
        ("maxTurns looser than max_tool_calls never raises the ceiling", "lavish", 500, 300),
    )
]


PREFIXED_SECTION = Case(
    name="a per agent section names an imported agent by its prefixed name",
    files={
        ".claude/agents/reviewer.md": _decl("reviewer"),
        ".contenox/agents.toml": (
            "[agents.claude-code-reviewer.chain]\ntoken_limit = 32768\n\n"
            "[agents.reviewer2.chain]\ntoken_limit = 32768\n"
        ),
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=["claude-code-reviewer"],
            # The unknown name is reported, the prefixed one is not: it names an agent.
            notices_has=["agents.toml [agents.reviewer2]: no declaration by that name"],
            notices_lacks=["[agents.claude-code-reviewer]"],
        )
    ],
)


def shell_allowlists(instance: Instance) -> dict[str, str]:
    """Agent → the local_shell `_allowed_commands` its emitted chain carries (`.generated/`)."""
    out: dict[str, str] = {}
    for agent in ("narrow", "wide"):
        chain = instance.work / ".contenox" / ".generated" / f"chain-agent-{agent}.json"
        config = json.loads(chain.read_text(encoding="utf-8"))["tasks"][0]["execute_config"]
        out[agent] = config["tools_policies"]["local_shell"]["_allowed_commands"]
    return out


PER_AGENT_TOOLS_POLICY = Case(
    name="a per agent tools_policies section applies to that agent only",
    files={
        ".contenox/agents/narrow.md": _decl("narrow", "tools: Read, Bash"),
        ".contenox/agents/wide.md": _decl("wide", "tools: Read, Bash"),
        ".contenox/agents.toml": (
            '[agents.narrow.tools_policies.local_shell]\n_allowed_commands = "git,go"\n'
        ),
    },
    steps=[step("agent", "list", stdout_has=["narrow", "wide"], notices_lacks=["narrow"])],
    probes=[
        probe(
            "shell allowlists emitted",
            shell_allowlists,
            expect=satisfies(
                lambda a: a["narrow"] == "git,go" and a["wide"] != "git,go",
                "narrow carries git,go; wide keeps the default list",
            ),
        )
    ],
)
