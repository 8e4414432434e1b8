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

# The control: the same read, the file one directory off the denied substring.
DENIED_SUBSTRING_CONTROL = _mission(
    _touch(ToolCall("read_file", {"path": "vendor_modules/pkg/index.js"})),
    "touch the files",
    model_saw("denied-content-8813"),
    name="read_file returns the same file off the denied path substring",
    files={"vendor_modules/pkg/index.js": "denied-content-8813\n"},
)

UNREAD_OVERWRITE = _mission(
    _touch(ToolCall("write_file", {"path": "notes.txt", "content": "clobbered\n"})),
    "touch the files",
    workspace_file("notes.txt", expect="original\n"),
    name="write_file over an unread existing file is refused until it is read",
    files={"notes.txt": "original\n"},
)

# The control: the same write, the file read first; it is overwritten.
READ_THEN_OVERWRITE = _mission(
    _finish(
        ToolCall("read_file", {"path": "notes.txt"}),
        ToolCall("write_file", {"path": "notes.txt", "content": "clobbered\n"}),
    ),
    "touch the files",
    workspace_file("notes.txt", expect="clobbered\n"),
    name="write_file over an existing file once read overwrites it",
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
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: run landed, exit 0; tool "
            'result content: \'{"exit_code":0,"stdout":"from-the-'
            'shell-6612","stderr":"","success"…\'; no \'tool local_shell not found\''
            " Note: I added the three-turn dialog (local_shell, mission_finish, "
            "text) as the report describes, and the request id came from state "
            "list. The binary matches reference/contenox-cli.md:90 ('the runtime "
            "serves `local_fs` and `local_shell` itself') and contradicts "
            "integrations/tools/local.md:11."
        ),
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

# The shell gate's own refusal, as the tool result the model is sent.
_NOT_ALLOWED = "command id is not in this chain's allowed commands"

SHELL_OUTSIDE_ALLOWED = _mission(
    _touch(ToolCall("local_shell", {"command": "id"})),
    "touch the files",
    model_saw("uid=", seen=False),
    model_saw(_NOT_ALLOWED),
    name="local_shell refuses a command outside the allowed commands",
)

# The control: the same call with `id` added to the [tools_policies.local_shell]
# _allowed_commands `init` wrote to agents.toml (only the gate changed); it runs.
SHELL_INSIDE_ALLOWED = _mission(
    _touch(ToolCall("local_shell", {"command": "id"})),
    "touch the files",
    model_saw("uid="),
    model_saw(_NOT_ALLOWED, seen=False),
    name="local_shell runs the same command once the allowed commands name it",
    before=[
        edit(
            "agents.toml",
            replace={'_allowed_commands = "ls,cat,': '_allowed_commands = "id,ls,cat,'},
            under="contenox",
        )
    ],
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

# The control: the same envelope with files.read turned to allow; the content comes back.
READ_ALLOWED = _mission(
    _finish(ToolCall("read_file", {"path": "inside.txt"})),
    "read",
    model_saw("inside-content-5530"),
    name="files.read allow in the same envelope lets read_file return the content",
    files={"inside.txt": "inside-content-5530\n"},
    envelope=_envelope_step("e2e_noread", 'default_action = "allow"\nfiles.read = "allow"'),
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

# The control: the same envelope whose default_action is allow; the call reaches the server.
CONNECTED_TOOL_DEFAULT_ALLOW = Case(
    name="a connected tool runs when the envelopes default action is allow",
    script=_finish(ToolCall("note", {"text": "hi", "tenant_id": "t"})),
    steps=[
        _ADD_REC,
        _envelope_step(
            "e2e_fs_only", 'default_action = "allow"\nfiles.read = "allow"\nfiles.write = "allow"'
        ),
        step("run", "--policy", "e2e_fs_only", "--timeout", "40s", "note", exit_code=None),
        probe("calls the server received", _rec_calls, expect=["note"]),
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
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: first system message: "
            "'NOW=2026-12-02' — the date alone, no time, no zone Note: I added a "
            "one-text-turn dialog and a minimal c.json (one chat_completion task,"
            " system_instruction 'NOW={{now}}', model/provider "
            "{{var:model}}/{{var:provider}}). The request id came from state "
            "list. No doc line says a bare {{now}} gives the date; only "
            "{{now:2006-01-02}} does (concepts.md:140)."
        ),
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


_HIDDEN_CHAIN = _hidden(["native-echo", "native-jq"], ["native-echo.echo"])
_HIDDEN_CALL = ToolCall("echo", {"input": "hidden-echo-4410"})
_ECHOED = '"content": "hidden-echo-4410"'
# The hand reproduction, every file verbatim (its first reading had only a prose
# sketch of the chain and tried it under `contenox chat`, whose surface has no
# native-echo). The case itself also connects `rec`, which the reproduction does not need.
_HIDDEN_DIALOG = {
    "turns": [
        {"text": "Calling.", "tool_calls": [{"name": "echo", "arguments": _HIDDEN_CALL.arguments}]},
        {"text": "Done."},
    ]
}

HIDE_TOOLS = _chain_case(
    "hide_tools suppresses a tool the allowlist selected",
    _HIDDEN_CHAIN,
    [_HIDDEN_CALL],
    # Only the offer: whether the chat task's hide_tools alone also stops the call where it
    # executes is where guide/chains/routing.md:53 and :67 disagree (the second reading).
    _offered("echo not offered", lambda roster: "echo" not in roster.get("native-echo", [])),
    defect=Defect(
        title="execute_config.hide_tools leaves the hidden tool in the manifest the model is shown",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Case's commands verbatim (fresh HOME/W, e2e_open "
            "envelope, workspace chain-agent-allowlist.json, scripted dialog, `mission fire "
            "allowlist go --wait --policy e2e_open --timeout 60s`): rc=1, derailed with "
            "'scripted-test script ... is exhausted' as the case expects. state show --raw "
            "of the first run: the system message reads 'Available tools (tools -> function "
            'names):\\n{"native-echo":["echo"],"native-jq":["jq_query"]}\' and the '
            'tool result "content": "hidden-echo-4410" comes back; no \'not found\'. Same '
            'with hide_tools ["echo"]. Control (fresh HOME/W, hide_tools '
            "[\"native-echo.echo\"] ALSO on the execute_tool_calls task 'run'): the "
            "manifest still lists echo, but the call is refused: 'native-echo.echo is "
            "hidden for task run'. Note: Reproduces for the part that matters, but the "
            "title is too broad. ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "cat >> ~/.contenox/agents.toml <<'T'\n"
            "[envelopes.e2e_open]\n"
            'default_action = "allow"\n'
            "T\n"
            "cat > dialog.json <<'J'\n" + json.dumps(_HIDDEN_DIALOG) + "\nJ\n"
            "# the chain: fired as a workspace chain-agent, where native-echo is on the surface\n"
            "cat > .contenox/chain-agent-allowlist.json <<'J'\n"
            + json.dumps(_HIDDEN_CHAIN)
            + "\nJ\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox mission fire allowlist go --wait --policy e2e_open --timeout 60s\n"
            "# derailed in the end ('script … is exhausted': the chain has no mission_finish, "
            "so the unit prompts it again); what matters is its first run:\n"
            "for r in $(contenox state list); do contenox state show $r --raw "
            '| grep -o \'native-echo[^,]*\\|"content": "hidden-echo-4410"\'; done\n'
            '# prints native-echo\\":[\\"echo\\"] (the manifest in the system message '
            'offers the hidden echo) and "content": "hidden-echo-4410" (the echo ran and '
            "its result came back), never 'tool echo not found'; the same with "
            'hide_tools ["echo"]'
        ),
        promised=(
            'specification/handlers.md:36 "Tools to suppress (by namespaced name) '
            'from both the registry tools selected via"'
        ),
        bears_on=(
            'integrations/tools/index.md:47 "Use `{{tools}}` in your `system_instruction` to '
            "inject the live tool manifest. It respects the task's `tools` allowlist — the "
            'model only sees what the task permits"',
            'guide/chains/routing.md:53 "This is enforced when a call executes, not merely by '
            'omitting the tool from what the model was offered"',
            'guide/chains/routing.md:65 "the same withholding is repeated on the paired '
            "`execute_tool_calls` task, because a tool withheld only where the model is asked "
            'would still run where calls are executed."',
        ),
        observed=(
            "the {{tools}} manifest in the system message still lists native-echo: [echo] "
            "(with hide_tools ['native-echo.echo'] and with ['echo']); that the call then runs "
            "is not asserted: routing.md:53 and :67 disagree on it"
        ),
    ),
)


# docs disagree: guide/chains/routing.md:53 says a task's hide_tools "is enforced when a
# call executes"; :67 of the same page says the withholding must be repeated on the paired
# execute_tool_calls task, "because a tool withheld only where the model is asked would
# still run where calls are executed". v1.0.0 does what :67 says: the case asserts that,
# and its control (hidden on both tasks, only that changes) shows the call refused.
HIDDEN_ON_THE_CHAT_TASK_ONLY_RUNS = _chain_case(
    "a tool hidden only on the chat task still runs where calls execute",
    _HIDDEN_CHAIN,
    [_HIDDEN_CALL],
    # The echo's result (its input echoed back as a tool message), not the call's arguments.
    model_saw(_ECHOED),
    model_saw("is hidden for task run", seen=False),
    defect=Defect(
        title="a tool hidden only where the model is asked still runs where calls execute",
        reproduce=(
            "the files and commands of the hide_tools quarantine above (_HIDDEN_CHAIN: hide_tools "
            '["native-echo.echo"] on the chat task `ask` only), `contenox mission fire '
            "allowlist go --wait --policy e2e_open --timeout 60s`; `contenox state show <first "
            'run> --raw` holds the echo\'s result "hidden-echo-4410". With the same hide_tools '
            "also on the execute_tool_calls task `run`, the call is refused: 'native-echo.echo "
            "is hidden for task run'"
        ),
        promised=(
            'guide/chains/routing.md:53 "This is enforced when a call executes, not merely by '
            "omitting the tool from what the model was offered, so a model that asks for a "
            'withheld tool anyway still cannot run it."'
        ),
        observed="the echo hidden on the chat task alone runs and its result comes back",
        bears_on=(
            'guide/chains/routing.md:65 "the same withholding is repeated on the paired '
            "`execute_tool_calls` task, because a tool withheld only where the model is asked "
            'would still run where calls are executed."',
        ),
        docs_disagree=True,
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: fresh HOME, scripted-test default (dialog: 'Calling.' + "
            "echo {input: 'hidden-echo-4410'}, then text turns); envelope e2e_open "
            "(default_action allow); my own .contenox/chain-agent-allowlist.json (the "
            "quarantine's _HIDDEN_CHAIN was not available to me): chat task `ask` with tools "
            '["*"], hide_tools ["native-echo.echo"], tool_call → execute_tool_calls task `run` '
            "(input_var ask) → ask. `mission fire allowlist go --wait --policy e2e_open` (the "
            "mission itself never finishes — no mission_finish in the dialog — and times out; "
            "irrelevant). `state show <cli-…> --raw`: ask tool_call; run tools_executed with tool"
            " message 'hidden-echo-4410'. With the same hide_tools + tools also on `run`: run "
            'no_calls_found, tool message \'{"error":"tool native-echo.echo is hidden for task '
            "run\"}'. Note: guide/chains/routing.md:53 reads as if hide_tools on its own is "
            "'enforced when a call executes … so a model that asks for a withheld tool anyway "
            "still cannot run it'. But the same page, guide/chains/routing.md:65, says 'the same "
            "withholding is repeated on the paired `execute_tool_calls` task, because a tool "
            "withheld only where the model is asked would still run where calls are executed' — "
            "exactly the binary's behaviour. specification/handlers.md:36 describes hide_tools on"
            " chat_completion only as suppression from what is offered ('Tools to suppress … from"
            " both the registry tools selected via `tools` and any client-passed tools'). Read "
            "together, the enforcement at execution is the execute task's own hide_tools, which "
            "works; line 53 alone overstates it."
        ),
    ),
)


def _hidden_on_both(tools: list[str], hidden: list[str]) -> dict[str, Any]:
    chain = _hidden(tools, hidden)
    chain["tasks"][1]["execute_config"]["hide_tools"] = hidden
    return chain


# The control: the same chain and call, the withholding repeated on the runner task.
HIDDEN_ON_BOTH_TASKS_IS_REFUSED = _chain_case(
    "a tool hidden on the chat task and on its runner is refused where calls execute",
    _hidden_on_both(["native-echo", "native-jq"], ["native-echo.echo"]),
    [_HIDDEN_CALL],
    model_saw("is hidden for task run"),
    model_saw(_ECHOED, seen=False),
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
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, scripted default with dialog "
            "['general', write_file{path:fresh.txt, content:'diff-line-7120\\n'}, 'Done.']; "
            "fresh.txt did not exist. I drove `contenox acp` with my own Python client: "
            "initialize, session/new, session/prompt. session/request_permission toolCall = "
            "{title:'local_fs.write_file: fresh.txt', kind:'edit', "
            "content:[{type:'content', content:{type:'text', text:'fresh.txt'}}], "
            "rawInput:{content:'diff-line-7120\\n', path:'fresh.txt'}, _meta:{askId, "
            "matchedRule 47, policyName hitl-policy-default.json, …}}. No message in the "
            "whole exchange had a 'diff' content item or '+diff-line-7120'. Note: "
            "integrations/tools/local.md:70 says a gated write_file's approval carries a "
            "unified diff, and a new file shows as an addition. The page's only exception "
            "is when the current contents can..."
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
