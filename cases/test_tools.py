"""What a model may call: a chain task's tool allowlist, the `{{tools}}` macros, and local files.

The allowlist cases run a chain of their own as a workspace chain-agent fired with `mission fire`
(one chat_completion task and its execute_tool_calls loop, both given the same
`execute_config.tools`), with the recording MCP server `rec` registered over stdio.
What the model was offered is the `{{tools}}` manifest in its system prompt; what
it could call is the tool result (`tool <name> not found`) and the server's record.

The local file cases run under `contenox run`, where the runtime serves local_fs
itself, rooted at the directory the command started in, under an envelope that
allows every call — so a refusal comes from the tool, not from an approval gate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    acp_turn,
    edit,
    link,
    mission_finish,
    probe,
    probes,
    prompt,
    received,
    route,
    satisfies,
    serve,
    step,
    write,
)
from harness.acp.turn import PromptTurn
from harness.case import Action, Edit, Probe, model_saw
from harness.servers import HttpService, McpServer, read_mcp_records, stdio_command
from harness.servers.wiring import (
    OPEN_ENVELOPE,
    model_view,
    offered_roster,
    open_envelope,
    run_mission,
)

MANIFEST = "Available tools (tools -> function names):\n{{tools}}"
ABSENT = object()


def _chain(tools: Any = ABSENT, system: str = MANIFEST) -> dict[str, Any]:
    config: dict[str, Any] = {"model": "{{var:model}}", "provider": "{{var:provider}}"}
    if tools is not ABSENT:
        config["tools"] = tools
    runner: dict[str, Any] = {} if tools is ABSENT else {"tools": tools}
    return {
        "id": "allowlist",
        "tasks": [
            {
                "id": "ask",
                "handler": "chat_completion",
                "system_instruction": system,
                "execute_config": config,
                "transition": {
                    "branches": [
                        {"operator": "equals", "when": "tool_call", "goto": "run"},
                        {"operator": "default", "goto": "end"},
                    ]
                },
            },
            {
                "id": "run",
                "handler": "execute_tool_calls",
                "input_var": "ask",
                "execute_config": runner,
                "transition": {"branches": [{"operator": "default", "goto": "ask"}]},
            },
        ],
    }


def _first_run(instance: Instance) -> str:
    runs = probes.captured_requests(instance)
    assert runs, "the chain never ran: `contenox state list` is empty"
    return runs[0]


def _called(server: McpServer | Path) -> list[str]:
    records = server.records() if isinstance(server, McpServer) else read_mcp_records(server)
    return [r.tool or "" for r in records if r.method == "tools/call"]


# ---------------------------------------------------------------- local files under `run`

SECRET = "outside-secret-4127"


def _finish(*calls: ToolCall) -> Script:
    return Script(
        turns=[
            *[Turn(text="Working.", tool_calls=[call]) for call in calls],
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _touch(*calls: ToolCall) -> Script:
    """One turn making every call at once, then a landing."""
    return Script(
        turns=[
            Turn(text="Touching files.", tool_calls=list(calls)),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _envelope_step(name: str, body: str) -> Edit:
    """Append envelope ``name`` to the global agents.toml ``init`` wrote."""
    text = f'\n[envelopes.{name}]\ndescription = "e2e"\n{body}\n'
    return edit("agents.toml", append=text, under="contenox")


# The wiring helpers' envelope, by its name: every tool runs without asking.
_OPEN = _envelope_step(OPEN_ENVELOPE, 'default_action = "allow"')


def _mission(
    script: Script,
    task: str,
    *after: Action,
    envelope: Edit = _OPEN,
    policy: str = OPEN_ENVELOPE,
    exit_code: int | None = None,
    before: Sequence[Action] = (),
    **case: Any,
) -> Case:
    """``envelope`` appended, ``before``, then one ``run --policy <policy> <task>``, then
    ``after``."""
    run = step("run", "--policy", policy, "--timeout", "90s", task, exit_code=exit_code)
    return Case(script=script, steps=[envelope, *before, run, *after], **case)


READ_INSIDE = _mission(
    _touch(ToolCall("read_file", {"path": "inside.txt"})),
    "touch the files",
    model_saw("inside-content-2291"),
    name="read_file inside the workspace returns its content",
    files={"inside.txt": "inside-content-2291\n"},
)


def _root_file(instance: Instance, name: str) -> bool:
    """Whether ``name`` exists in the scratch root, one level above the workspace."""
    return (instance.root / name).exists()


WRITE_OUTSIDE = _mission(
    _touch(ToolCall("write_file", {"path": "../escaped.txt", "content": "escaped"})),
    "touch the files",
    probe("escaped.txt outside the workspace", _root_file, "escaped.txt", expect=False),
    name="write_file refuses a path outside the workspace",
)

DENIED_SUBSTRING = _mission(
    _touch(ToolCall("read_file", {"path": "node_modules/pkg/index.js"})),
    "touch the files",
    model_saw("denied-content-8813", seen=False),
    name="read_file refuses a denied path substring",
    files={"node_modules/pkg/index.js": "denied-content-8813\n"},
)

UNREAD_OVERWRITE = _mission(
    _touch(ToolCall("write_file", {"path": "notes.txt", "content": "clobbered\n"})),
    "touch the files",
    workspace_file("notes.txt", expect="original\n"),
    name="write_file over an unread existing file is refused until it is read",
    files={"notes.txt": "original\n"},
)

LOCAL_SHELL_SERVED = _mission(
    _touch(ToolCall("local_shell", {"command": "echo", "args": ["from-the-shell-6612"]})),
    "touch the files",
    model_saw("from-the-shell-6612"),
    model_saw("tool local_shell not found", seen=False),
    name="under run a local_shell call is served by the runtime itself",
    defect=Defect(
        title="local.md says run serves no local_shell; contenox-cli.md says it does",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# an allow-all envelope appended to ~/.contenox/agents.toml:\n"
            '#   [envelopes.e2e_open]  default_action = "allow"\n'
            "# dialog: local_shell {command: echo, args: [from-the-shell-6612]}, "
            "then mission_finish landed, then a reply\n"
            'contenox run --policy e2e_open "touch the files"   # exit 0, landed\n'
            "contenox state show <request> --raw   # the tool result carries "
            "from-the-shell-6612; no 'tool local_shell not found'"
        ),
        promised=(
            'integrations/tools/local.md:11 "comes back to the model as `tool '
            'local_shell not found`"'
        ),
        observed=(
            "run serves local_shell itself, as contenox-cli.md says: the echo runs and "
            "its tool result carries from-the-shell-6612; no `not found` comes back"
        ),
        bears_on=(
            ('reference/contenox-cli.md:90 "the runtime serves local_fs and local_shell itself"'),
        ),
        docs_disagree=True,
    ),
)


def _local_fs_offered(instance: Instance) -> list[str]:
    """The local_fs tools the first captured run's manifest offered."""
    return offered_roster(instance, _first_run(instance))["local_fs"]


LOCAL_FS_FIVE = _mission(
    _touch(),
    "touch the files",
    probe(
        "local_fs tools offered",
        _local_fs_offered,
        expect=sorted(["read_file", "write_file", "edit_file", "sed", "read_file_range"]),
    ),
    name="a local_fs task offers exactly its five tools",
)

SHELL_OUTSIDE_ALLOWED = _mission(
    _touch(ToolCall("local_shell", {"command": "id"})),
    "touch the files",
    model_saw("uid=", seen=False),
    name="local_shell refuses a command outside the allowed commands",
)


def _edit(old: str, new: str, **more: object) -> ToolCall:
    return ToolCall(
        "edit_file", {"path": "notes.txt", "old_string": old, "new_string": new, **more}
    )


_READ_NOTES = ToolCall("read_file", {"path": "notes.txt"})

EDIT_UNIQUE = _mission(
    _finish(_READ_NOTES, _edit("alpha", "omega"), _edit("zzz", "omega"), _edit("beta", "gamma")),
    "edit",
    workspace_file("notes.txt", expect="alpha\ngamma\nalpha\n"),
    name="edit_file replaces a unique match and refuses an ambiguous one",
    files={"notes.txt": "alpha\nbeta\nalpha\n"},
    exit_code=0,
)

EDIT_REPLACE_ALL = _mission(
    _finish(_READ_NOTES, _edit("alpha", "omega", replace_all=True)),
    "edit",
    workspace_file("notes.txt", expect="omega\nbeta\nomega\n"),
    name="edit_file with replace_all replaces every occurrence",
    files={"notes.txt": "alpha\nbeta\nalpha\n"},
    exit_code=0,
)

READ_DENIED = _mission(
    _finish(ToolCall("read_file", {"path": "inside.txt"})),
    "read",
    model_saw("inside-content-5530", seen=False),
    name="files.read deny in the envelope refuses read_file",
    files={"inside.txt": "inside-content-5530\n"},
    envelope=_envelope_step("e2e_noread", 'default_action = "allow"\nfiles.read = "deny"'),
    policy="e2e_noread",
)


def _rec_server() -> tuple[str, str]:
    """``mcp add``'s --command and --args for the recording server, its record in the home."""
    command, args = stdio_command(Path("/rec.jsonl"))
    return command, ",".join(args).replace("/rec.jsonl", "{home}/rec.jsonl")


_REC_COMMAND, _REC_ARGS = _rec_server()
_ADD_REC = step(
    "mcp", "add", "rec", "--transport", "stdio", "--command", _REC_COMMAND, "--args", _REC_ARGS
)


def _rec_calls(instance: Instance) -> list[str]:
    """The tools/call requests the recording server received, by tool."""
    return _called(instance.home / "rec.jsonl")


CONNECTED_TOOL_DEFAULT = Case(
    name="a connected tool falls to the envelopes default action",
    script=_finish(ToolCall("note", {"text": "hi", "tenant_id": "t"})),
    steps=[
        _ADD_REC,
        _envelope_step(
            "e2e_fs_only", 'default_action = "deny"\nfiles.read = "allow"\nfiles.write = "allow"'
        ),
        step("run", "--policy", "e2e_fs_only", "--timeout", "40s", "note", exit_code=None),
        probe("calls the server received", _rec_calls, expect=[]),
    ],
)

DECLARATION_INHERITS = Case(
    name="an agent declaration without a tools line inherits every tool",
    script=_finish(ToolCall("note", {"text": "from the agent", "tenant_id": "t"})),
    steps=[
        _OPEN,
        _ADD_REC,
        write(
            "agents/inherit.md",
            "---\nname: inherit\ndescription: An e2e agent that names no tools\n---\n\n"
            "You carry out one task.\n",
            home=True,
        ),
        step("run", "inherit", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "note it"),
        probe("calls the server received", _rec_calls, expect=["note"]),
    ],
)


# The outside file the path cases aim at, one level above the workspace.
def _file_run(instance: Instance, *calls: ToolCall) -> str:
    instance.init()
    open_envelope(instance)
    (instance.root / "outside.txt").write_text(SECRET + "\n", encoding="utf-8")
    run_mission(
        instance,
        Script(
            turns=[
                Turn(text="Touching files.", tool_calls=list(calls)),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
        "touch the files",
    )
    return model_view(instance)


# function: its absolute variant names the scratch root in the dialog, which holds no placeholders
@pytest.mark.parametrize(
    "path", ["../outside.txt", "{root}/outside.txt"], ids=["dotdot", "absolute"]
)
def test_read_file_refuses_a_path_outside_the_workspace(instance: Instance, path: str) -> None:
    seen = _file_run(instance, ToolCall("read_file", {"path": path.format(root=instance.root)}))

    assert SECRET not in seen


def _home_file(instance: Instance, name: str) -> bool:
    """Whether ``name`` exists in the scratch $HOME, outside the workspace."""
    return (instance.home / name).exists()


# The secret, planted outside the workspace (in the scratch $HOME) for the link cases.
_SECRET_AT_HOME = edit("outside.txt", append=SECRET + "\n", under="home")

LINK_READ = _mission(
    _touch(ToolCall("read_file", {"path": "link.txt"})),
    "touch the files",
    model_saw(SECRET, seen=False),
    name="read_file refuses a link in the workspace that points outside it",
    before=[_SECRET_AT_HOME, link("link.txt", "{home}/outside.txt")],
    exit_code=None,
)

LINK_WRITE = _mission(
    _touch(ToolCall("write_file", {"path": "out/escaped.txt", "content": "escaped"})),
    "touch the files",
    probe("escaped.txt outside the workspace", _home_file, "escaped.txt", expect=False),
    name="write_file refuses to write through a link that points outside",
    before=[link("out", "{home}")],
    exit_code=None,
)


def _chain_case(
    name: str, chain: dict[str, Any], calls: Sequence[ToolCall], *checks: Probe, **case: Any
) -> Case:
    """The open envelope, `rec` over stdio, then the chain fired as a workspace chain-agent.

    The chain is a chain-agent file in the workspace, fired with `mission fire`. It has
    no mission_finish, so after its first run the drive loop prompts it again and the
    dialog runs out: the checks read the first captured run only.
    """
    turns: list[Turn | str] = [Turn(text="Calling.", tool_calls=list(calls))] if calls else []
    return Case(
        name=name,
        script=Script(turns=[*turns, "Done."], runs_past_end=True),
        files={f".contenox/chain-agent-{chain['id']}.json": json.dumps(chain, indent=2)},
        steps=[
            _OPEN,
            _ADD_REC,
            step(
                "mission",
                "fire",
                chain["id"],
                "go",
                "--wait",
                "--policy",
                OPEN_ENVELOPE,
                "--timeout",
                "60s",
                exit_code=None,
            ),
            *checks,
        ],
        **case,
    )


def _roster(instance: Instance) -> dict[str, list[str]]:
    """What the first captured run's ``{{tools}}`` manifest offered: toolset → tools."""
    return offered_roster(instance, _first_run(instance))


def _offered(message: str, check: Callable[[dict[str, list[str]]], bool]) -> Probe:
    """Whether the first run's manifest meets ``check`` (read as a yes or no: `rec` itself
    is sometimes missing from the manifest, so the roster is not recorded whole)."""

    def read(instance: Instance) -> bool:
        return check(_roster(instance))

    return probe(message, read, expect=True)


def _server_got(calls: list[str]) -> Probe:
    return probe("calls the server received", _rec_calls, expect=calls)


_ADD = ToolCall("add", {"a": 1, "b": 2})


# ---------------------------------------------------------------- the allowlist

NO_ALLOWLIST = [
    _chain_case(
        f"a task without an allowlist or with an empty one offers no tools ({variant})",
        _chain(tools),
        [_ADD],
        probe("the manifest offered", _roster, expect={}),
        model_saw("tool add not found"),
        _server_got([]),
    )
    for variant, tools in (("absent", ABSENT), ("null", None), ("empty", []))
]

# Only `rec` may be in the manifest. Whether it is there at all varies from run to
# run (a connected MCP server is sometimes missing from `{{tools}}`: one chain
# fired twice against the same warm server listed it once and omitted it once),
# so the call and the refusal are what prove the allowlist.
NAMED_ALLOWLIST = _chain_case(
    "a named allowlist offers only the named toolsets",
    _chain(["rec"]),
    [_ADD, ToolCall("echo", {"text": "x"})],
    _offered("nothing but rec offered", lambda roster: set(roster) <= {"rec"}),
    _server_got(["add"]),
    model_saw("tool echo not found"),
)

# `rec` itself is sometimes missing from the manifest (see the named-allowlist
# case); the call reaching it is what shows `*` admitted it.
STAR_ALLOWLIST = _chain_case(
    "a star allowlist offers every connected toolset namespaced ones included",
    _chain(["*"]),
    [_ADD],
    _offered(
        "native-echo, native-git, native-fs-browse and native-jq offered",
        lambda roster: (
            {"native-echo", "native-git", "native-fs-browse", "native-jq"} <= set(roster)
        ),
    ),
    _server_got(["add"]),
)

EXCLUSION_WINS = [
    _chain_case(
        f"an exclusion wins over star wherever it stands ({variant})",
        _chain(tools),
        [_ADD],
        _offered(
            "rec not offered, native-echo offered",
            lambda roster: "rec" not in roster and "native-echo" in roster,
        ),
        model_saw("tool add not found"),
        _server_got([]),
    )
    for variant, tools in (("exclusion after", ["*", "!rec"]), ("exclusion before", ["!rec", "*"]))
]

NAMESPACED_EXCLUSION = _chain_case(
    "an exclusion removes a namespaced in-process toolset",
    _chain(["*", "!native-git"]),
    [],
    _offered(
        "native-git not offered, native-echo offered",
        lambda roster: "native-git" not in roster and "native-echo" in roster,
    ),
)

UNKNOWN_NAME = _chain_case(
    "an unknown name in an exact allowlist is ignored",
    _chain(["rec", "no-such-toolset"]),
    [ToolCall("count", {})],
    _offered("nothing but rec offered", lambda roster: set(roster) <= {"rec"}),
    _server_got(["count"]),
)


# ---------------------------------------------------------------- the macros


def _prompt_lines(instance: Instance) -> dict[str, str]:
    """The first run's one system prompt, read as NAME=value lines."""
    [prompt] = probes.system_prompts(instance, _first_run(instance))
    return dict(line.split("=", 1) for line in prompt.splitlines())


def _macros(instance: Instance) -> dict[str, object]:
    """Each NAME=value line of the system prompt, its value read as JSON."""
    return {name: json.loads(value) for name, value in _prompt_lines(instance).items()}


TOOLSERVICE_MACROS = _chain_case(
    "the toolservice tools macros render the allowed toolsets and their tools",
    _chain(
        ["native-echo"],
        "\n".join(
            [
                "MANIFEST={{tools}}",
                "TOOLS={{toolservice:tools}}",
                "ONE={{toolservice:tools native-echo}}",
            ]
        ),
    ),
    [],
    probe(
        "the rendered macros",
        _macros,
        expect={"MANIFEST": {"native-echo": ["echo"]}, "TOOLS": ["native-echo"], "ONE": ["echo"]},
    ),
)

LIST_MACRO = _chain_case(
    "the toolservice list macro renders the same as tools",
    _chain(["native-echo"], "LIST={{toolservice:list}}\nMANIFEST={{tools}}"),
    [],
    probe(
        "the rendered macros",
        _macros,
        expect={"LIST": {"native-echo": ["echo"]}, "MANIFEST": {"native-echo": ["echo"]}},
    ),
)


def _template_values(instance: Instance) -> dict[str, object]:
    """The template macros as rendered, the day read by its shape (it changes daily)."""
    lines = _prompt_lines(instance)
    day = lines["DAY"]
    return {
        "CHAIN": lines["CHAIN"],
        "OS": lines["OS"],
        "ARCH is amd64 or arm64": lines["ARCH"] in ("amd64", "arm64"),
        "DAY is YYYY-MM-DD": len(day) == 10 and day[4] == "-" and day[7] == "-",
        "MODEL": lines["MODEL"],
    }


TEMPLATE_MACROS = _chain_case(
    "the template macros render chain host time and caller variables",
    _chain(
        ["rec"],
        "\n".join(
            [
                "CHAIN={{chain:id}}",
                "OS={{host:os}}",
                "ARCH={{host:arch}}",
                "DAY={{now:2006-01-02}}",
                "MODEL={{var:model}}",
            ]
        ),
    ),
    [],
    probe(
        "the rendered macros",
        _template_values,
        expect={
            "CHAIN": "allowlist",
            "OS": "linux",
            "ARCH is amd64 or arm64": True,
            "DAY is YYYY-MM-DD": True,
            "MODEL": "scripted-test",
        },
    ),
)

_RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def _now_is_rfc3339(instance: Instance) -> bool:
    return bool(_RFC3339.fullmatch(_prompt_lines(instance)["NOW"]))


NOW_MACRO = _chain_case(
    "the now macro renders the current time in rfc3339",
    _chain(["native-echo"], "NOW={{now}}"),
    [],
    probe("NOW is RFC3339", _now_is_rfc3339, expect=True),
    defect=Defect(
        title="{{now}} renders the date alone, not RFC3339",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# c.json: a chat task with system_instruction 'NOW={{now}}'\n"
            "contenox chat --chain c.json hi\n"
            "contenox state show <request> --raw   # the first system message: "
            "NOW=2026-11-30"
        ),
        promised='integrations/tools/index.md:62 "Current time in RFC3339 format"',
        observed="'NOW=2026-11-30': no time, no zone",
    ),
)


def _system_prompts(instance: Instance) -> list[str]:
    return probes.system_prompts(instance, _first_run(instance))


NOTHING_ADDED = _chain_case(
    "nothing is added to a system instruction it does not declare",
    _chain(["rec"], "You are terse."),
    [],
    probe("system prompts", _system_prompts, expect=["You are terse."]),
)


def _hidden(tools: list[str], hidden: list[str]) -> dict[str, Any]:
    chain = _chain(tools)
    chain["tasks"][0]["execute_config"]["hide_tools"] = hidden
    return chain


HIDE_TOOLS = _chain_case(
    "hide_tools suppresses a tool the allowlist selected",
    _hidden(["native-echo", "native-jq"], ["native-echo.echo"]),
    [ToolCall("echo", {"input": "hidden-echo-4410"})],
    _offered("echo not offered", lambda roster: "echo" not in roster.get("native-echo", [])),
    model_saw("tool echo not found"),
    defect=Defect(
        title="execute_config.hide_tools suppresses nothing",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: could not reproduce from the text. Saw: with hide_tools: system message '{}' "
            '(no manifest entry at all, native-jq included), tool result \'{"error":"tool echo not '
            "found\"}', reply 'final reply'. Control, no hide_tools: tools [\"native-echo\"] "
            "→ system"
            " '{}' and 'tool echo not found' again; tools [\"*\"] → system '{\"local_fs\":[\"ed"
            'it_file"'
            ',"read_file","read_file_range","sed","write_file"],"local_shell":["local_shell"]}\' '
            "and echo still 'not found' Note: I could not see what the case says it saw. Under "
            "`contenox chat` in v1.0.0, native-echo is never in the {{tools}} manifest and `echo` "
            "never resolves, hidden or not, so this surface cannot show hide_tools doing anything "
            "either way. The text does not give c.json verbatim (handler names, whether "
            "execute_tool_calls also carries hide_tools, how native-echo got onto the chat "
            "surface). Needed: the exa..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# ~/.contenox/agents.toml: append [envelopes.e2e_open] "
            'default_action = "allow"\n'
            "# .contenox/chain-agent-allowlist.json: task 'ask' (chat_completion,\n"
            "#   system_instruction 'Available tools (tools -> function names):\\n{{tools}}',\n"
            '#   execute_config {model: "{{var:model}}", provider: "{{var:provider}}",\n'
            '#   tools: ["native-echo", "native-jq"], hide_tools: ["native-echo.echo"]},\n'
            "#   tool_call -> run, default -> end) and task 'run' (execute_tool_calls,\n"
            '#   input_var ask, execute_config {tools: ["native-echo", "native-jq"]}, -> ask)\n'
            "# dialog: a turn calling echo {input: hidden-echo-4410}, then 'Done.'\n"
            "contenox mission fire allowlist go --wait --policy e2e_open --timeout 60s\n"
            "contenox state list; contenox state show <the first request> --raw\n"
            '# its system message lists {"native-echo":["echo"], …} and the echo call '
            'executes (also with hide_tools ["echo"]); under `contenox chat` the chain '
            "never reaches native-echo: the surface is the fired chain-agent"
        ),
        promised=(
            'specification/handlers.md:36 "Tools to suppress (by namespaced name) '
            'from both the registry tools selected via"'
        ),
        observed="the hidden tool is listed to the model and runs",
    ),
)


_DIRECT_CHAIN = {
    "id": "direct",
    "tasks": [
        {
            "id": "weather",
            "handler": "tools",
            "tools": {"name": "svc", "tool_name": "get_weather", "args": {"city": "Oslo"}},
            "output_template": "{{.forecast}}",
            "transition": {
                "branches": [
                    {"operator": "equals", "when": "sunny", "goto": "sunny"},
                    {"operator": "default", "goto": "other"},
                ]
            },
        },
        {
            "id": "sunny",
            "handler": "noop",
            "transition": {"branches": [{"operator": "default", "goto": "end"}]},
        },
        {
            "id": "other",
            "handler": "noop",
            "transition": {"branches": [{"operator": "default", "goto": "end"}]},
        },
    ],
}


def _first_weather_query(service: HttpService) -> dict[str, list[str]] | None:
    """The query of the first GET /weather (the chain may be fired again before the timeout,
    so how many calls arrive is not the promise)."""
    calls = service.requests_to("/weather", "GET")
    return {k: list(v) for k, v in calls[0].query.items()} if calls else None


def _tasks_run(instance: Instance) -> list[str]:
    return [s.task for s in probes.captured_steps(instance, _first_run(instance))]


TOOLS_TASK = Case(
    name=(
        "a tools task calls one remote operation with no model and routes on its output template"
    ),
    script=Script(turns=["No model is asked."], runs_past_end=True),
    files={".contenox/chain-agent-direct.json": json.dumps(_DIRECT_CHAIN)},
    steps=[
        _OPEN,
        serve("svc", "openapi"),
        step("tools", "add", "svc", "--url", "{svc_url}"),
        step(
            "mission",
            "fire",
            "direct",
            "go",
            "--wait",
            "--policy",
            OPEN_ENVELOPE,
            "--timeout",
            "30s",
            exit_code=None,
        ),
        received(
            "svc",
            "the first GET /weather's query",
            _first_weather_query,
            expect=satisfies(
                lambda query: query is not None and query.get("city") == ["Oslo"],
                "a first call with city=Oslo",
            ),
        ),
        probe("tasks the first run stepped through", _tasks_run, expect=["weather", "sunny"]),
    ],
)


def _diff_in_the_ask(turn: PromptTurn) -> dict[str, object]:
    """How many permission requests the turn raised, and whether the one carries the diff."""
    asks = turn.permission_requests
    return {
        "permission requests": len(asks),
        "the ask shows +diff-line-7120": len(asks) == 1
        and "+diff-line-7120" in json.dumps(asks[0].params),
    }


GATED_WRITE_DIFF = Case(
    name="a gated write asks with a diff that shows a new file as an addition",
    script=Script(
        turns=[
            route(),
            Turn(
                text="Writing.",
                tool_calls=[
                    ToolCall("write_file", {"path": "fresh.txt", "content": "diff-line-7120\n"})
                ],
            ),
            "Done.",
        ]
    ),
    steps=[
        # The run need not end its turn cleanly: the ask is what is checked.
        prompt("write the file", permission="deny", stop_reason=None),
        acp_turn(
            "the write's permission request",
            _diff_in_the_ask,
            expect={"permission requests": 1, "the ask shows +diff-line-7120": True},
        ),
        workspace_file("fresh.txt", expect=None),
    ],
    defect=Defect(
        title="a gated write's approval carries no diff",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: session/request_permission toolCall: title 'local_fs.write_file: "
            "fresh.txt', kind edit, content [{type: content, content: {type: text, text: "
            "'fresh.txt'}}], rawInput {content: 'diff-line-7120\\n', path: fresh.txt}, _meta "
            "policyName hitl-policy-default.json matchedRule 47. The permission request has no "
            "diff entry and no '+diff-line-7120' (there is no '+diff-line' anywhere in the "
            "transcript). Only after Allow does a tool_call_update with status completed carry "
            "{type: diff, path: …/fresh.txt, new... Note: Reproduces. The approval prompt carries "
            "only the path and the raw arguments. An ACP diff appears only in the completed update"
            " after approval, so it can't be reviewed before approving. A new file is the case "
            "local.md:70 says is always established, so its 'without a diff' escape doesn't apply."
            " I grepped the docs and no page says an ACP ask leaves the diff out."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: write_file {path: fresh.txt, content: 'diff-line-7120\\n'}, "
            "then a reply\n"
            "contenox acp   # ACP client: session/new, prompt (default envelope)\n"
            "# session/request_permission: toolCall.content [{type: content, "
            "content: {type: text, text: 'fresh.txt'}}] and rawInput;\n"
            "# no 'diff' content, no '+diff-line-7120' anywhere"
        ),
        promised=(
            'integrations/tools/local.md:70 "A new file (no prior content) shows as an addition."'
        ),
        observed="the ask carries the path and raw input, no diff",
        bears_on=(
            (
                'integrations/tools/local.md:70 "the approval prompt carries a unified '
                'diff of the exact change"'
            ),
        ),
    ),
)


SERVE_MOUNTS_NO_LOCAL_TOOLS = Case(
    name="doctor's roster says a serve host mounts neither local_fs nor local_shell",
    # The roster is long and names this machine's paths; the one line is the point.
    steps=[
        step(
            "doctor",
            exit_code=None,
            stdout_has=["local_fs, local_shell — not mounted under `contenox serve`"],
        )
    ],
)
