"""Cases for promises of the confinement (and other helper-read) pages that no other file shows.

guide/confinement/environment.md says the scrub is not a kernel boundary: a
scrubbed shell is an ordinary child of contenox, so it can read the runtime's
own pre-scrub environment from ``/proc/<contenox-pid>/environ``. The case puts a
credential in contenox's environment, has one ``local_shell`` print both what
the shell itself holds and what its parent's ``environ`` holds, and reads the
recorded tool result back through ``session show``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from test_chains import UNASKED, _named, listed
from test_confinement import WITHOUT_SHELL_HARD_BOUNDS
from test_scripted_backend_identity import ADD, NOTHING_REGISTERED
from test_shell_env import OPEN_POLICY, TOOLCHAIN, _env_case, _shell_sees
from test_tools import _chain, _chain_case, _macros, _mission, _touch

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    open_acp,
    probe,
    route,
    step,
    write,
)
from harness.acp.client import JSON
from harness.acp.schema import KNOWN_VIOLATIONS
from harness.case import model_saw
from harness.probes import session_records, transcript

# One shell line (so $PPID is contenox): what the shell holds, then what its parent holds.
# Only the two names are printed, so the transcript holds no scratch path.
_NAMES = "^(STRIPE_SECRET_KEY|DEPLOY_TOKEN)="
_PROC_COMMAND = (
    f"echo own:; env | grep -E '{_NAMES}' | sort; "
    f"echo parent:; cat /proc/$PPID/environ | tr '\\0' '\\n' | grep -E '{_NAMES}' | sort"
)

PRINT_OWN_AND_PARENT_ENV = Script(
    turns=[
        Turn(
            text="Reading my own and my parent's environment.",
            tool_calls=[ToolCall("local_shell", {"command": _PROC_COMMAND, "shell": True})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _own_and_parent(instance: Instance) -> dict[str, list[str]]:
    """The credential lines the shell held itself, and those its parent's environ held."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    outputs = [
        json.loads(m.content)
        for m in transcript(instance, unit.id).messages
        if m.role == "tool" and m.content.startswith("{")
    ]
    [shell] = [o for o in outputs if o.get("command") == _PROC_COMMAND]
    own, _, parent = str(shell["stdout"]).partition("parent:")
    return {
        "own": own.replace("own:", "").split(),
        "parent": parent.split(),
    }


SCRUB_IS_NOT_A_KERNEL_BOUNDARY = Case(
    name="a scrubbed shell still reads the runtime's pre-scrub environment from proc",
    script=PRINT_OWN_AND_PARENT_ENV,
    steps=[
        write("hitl-policy-envcheck.json", OPEN_POLICY, home=True),
        # A pipeline needs `shell: true`, which the rendered tools_policies refuse.
        WITHOUT_SHELL_HARD_BOUNDS,
        step(
            "run",
            "--policy",
            "envcheck",
            "--timeout",
            "90s",
            "read the environment",
            env={"STRIPE_SECRET_KEY": "sk-probe", "DEPLOY_TOKEN": "tok-probe"},
        ),
        probe(
            "credential lines in the shell's own env and in /proc/$PPID/environ",
            _own_and_parent,
            expect={
                "own": [],
                "parent": ["DEPLOY_TOKEN=tok-probe", "STRIPE_SECRET_KEY=sk-probe"],
            },
        ),
    ],
)


# --- development/scripted-test-backend.md: `turns` is required, at least one

# The control is every case that registers a one-turn dialog and is served it
# (test_scripted_backend_identity.py's documented registration).
SCRIPT_WITHOUT_TURNS_IS_REFUSED = [
    Case(
        name=f"backend add refuses a script {what}",
        init=False,
        files={"dialog.json": text},
        steps=[
            step(
                *ADD.args,
                exit_code=1,
                notices_has=["dialog.json", "declares no turns"],
            ),
            NOTHING_REGISTERED,
        ],
    )
    for what, text in (
        ("whose turns list is empty", '{"turns": []}\n'),
        ("with no turns field", '{"model": "scripted-test"}\n'),
    )
]


# --- development/scripted-test-backend.md: the dialog is fixed before the run starts

FIXED_REPLY = "The reply written before any prompt was seen."

# Each chat is its own process, so each starts at turn 1: only the prompt differs.
THE_SAME_TURN_WHATEVER_THE_PROMPT = Case(
    name="the same turn comes back whatever the prompt said",
    script=Script(turns=[FIXED_REPLY]),
    steps=[
        step("chat", "summarise the README", stdout_has=[FIXED_REPLY]),
        step("chat", "delete every file and say nothing", stdout_has=[FIXED_REPLY]),
    ],
)


# --- development/hard-parts.md: chain discovery reads one directory level

# The control is the second step: the same file one level up is listed.
A_NESTED_CHAIN_IS_NOT_DISCOVERED = Case(
    name="a chain agent filed in a subdirectory is not discovered and nothing reports it",
    script=UNASKED,
    files={".contenox/reviews/chain-agent-nestedbot.json": _named("nestedbot")},
    steps=[
        step("agent", "list", stdout_lacks=["nestedbot"], notices_lacks=["nestedbot", "reviews"]),
        write(".contenox/chain-agent-nestedbot.json", _named("nestedbot")),
        step("agent", "list", stdout_has=[listed("nestedbot")]),
    ],
)


# --- development/hard-parts.md: a map rendered into the prompt is sorted

_UNSORTED_GRANT = ["native-jq", "native-echo", "native-git"]


def _manifest_order(instance: Instance) -> dict[str, object]:
    """The order the first run's prompt rendered the granted toolsets and their tools in."""
    macros = _macros(instance)
    manifest = macros["MANIFEST"]
    assert isinstance(manifest, dict), macros
    return {
        "manifest toolsets": list(manifest),
        "every toolset's tools sorted": all(list(t) == sorted(t) for t in manifest.values()),
        "toolservice:tools": macros["TOOLS"],
    }


# The grant is deliberately out of order, so grant order and sorted order differ.
THE_TOOL_MANIFEST_IS_SORTED = _chain_case(
    "the tool manifest in a system instruction is sorted whatever order the grant names",
    _chain(_UNSORTED_GRANT, "MANIFEST={{tools}}\nTOOLS={{toolservice:tools}}"),
    [],
    probe(
        "the rendered manifest's order",
        _manifest_order,
        expect={
            "manifest toolsets": sorted(_UNSORTED_GRANT),
            "every toolset's tools sorted": True,
            "toolservice:tools": sorted(_UNSORTED_GRANT),
        },
    ),
)


# --- guide/confinement/environment.md: SANDBOX_TERMINAL_SCRUB governs nothing yet

# The control is test_shell_env.py's strict case: SANDBOX_SHELL_SCRUB=strict on the
# same kind of run drops GOCACHE and PROBE_PLAIN. Here only the terminal's variable
# says strict, and the agent shell keeps both and still loses the credential.
TERMINAL_SCRUB_GOVERNS_NO_AGENT_SHELL = _env_case(
    "sandbox terminal scrub strict leaves an agent shell under deny secrets",
    {**TOOLCHAIN, "DEPLOY_TOKEN": "tok-probe", "SANDBOX_TERMINAL_SCRUB": "strict"},
    _shell_sees(
        *TOOLCHAIN,
        "DEPLOY_TOKEN",
        expect={**TOOLCHAIN, "DEPLOY_TOKEN": None},
    ),
)


# --- development/hard-parts.md: a session's agent is fixed when it starts


def _agent_of(answer: Mapping[str, JSON]) -> object:
    """The ``agent`` option's current value in a config-option answer (or its error)."""
    result = answer.get("result")
    options = result.get("configOptions") if isinstance(result, Mapping) else None
    for option in options if isinstance(options, list) else []:
        if isinstance(option, Mapping) and option.get("id") == "agent":
            return option.get("currentValue")
    return answer.get("error")


# The configOptions category finding (quarantined in test_acp_client.py) comes back in
# every set_config_option answer too; let it through there so the rest stays checked.
_CATEGORY_FINDING_ON_SET = tuple(
    dataclasses.replace(k, methods=(*k.methods, "session/set_config_option response"))
    for k in KNOWN_VIOLATIONS
)


# function: two raw ACP requests on one live session, which a prompt step cannot send.
# The control is the same request for the session's `think` option (only the option
# changes): it is accepted, and the agent it reports is still the one chosen at start.
def test_asking_to_change_a_session_s_agent_after_it_starts_is_an_error_not_a_no_op(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello."]))
    with open_acp(instance, schema_allowed=_CATEGORY_FINDING_ON_SET) as acp:
        change = {"sessionId": acp.session_id, "configId": "agent", "value": "reviewer"}
        refused = acp.request("session/set_config_option", change)
        control = {"sessionId": acp.session_id, "configId": "think", "value": "low"}
        accepted = acp.request("session/set_config_option", control)
        turn = acp.prompt("hello")
    error = refused.get("error")
    instance.recorder.note(f"set agent=reviewer answered: {json.dumps(error or refused)}")
    instance.recorder.note(f"set think=low: agent still {_agent_of(accepted)!r}")
    assert isinstance(error, Mapping), f"changing the agent was not refused: {refused}"
    assert "cannot be changed" in str(error.get("message")), error
    assert "error" not in accepted, f"the control (think=low) was refused: {accepted}"
    assert _agent_of(accepted) == "", f"the agent changed although refused: {accepted}"
    assert turn.text.endswith("Hello."), turn


# --- development/hard-parts.md: a session's working directory is fixed when it starts


# function: a raw session/load on a live session, which a prompt step cannot send.
# The control is the agent case above: the same session refuses an agent change.
@defect(
    Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME; W/ws/notes.txt 'work', W/other/notes.txt 'other'; "
            "dialog ['general'; read_file {path: notes.txt}; 'Read it.']; ACP client: session/new"
            " {cwd: W/ws} -> acp-f62fcd55-...; session/load {sessionId: same, cwd: W/other} -> a "
            "result (configOptions), no error; session/prompt 'read' -> agent asks "
            "fs/read_text_file path 'W/other/notes.txt'; session/list -> {sessionId: "
            "acp-f62fcd55-..., cwd: 'W/other'}; session/set_config_option {configId: agent, "
            "value: chain-acpx} -> error -32602 'the agent cannot be changed after the session "
            "starts; start a new session to use a different one'. Note: development/hard-"
            "parts.md:101-103: a session's working directory and agent are fixed at start, and a "
            "request to change either 'gets an error, not a quiet no-op'. The agent half is kept;"
            " the cwd half is not: session/load takes the new cwd without an error and moves the "
            "session. Other pages back the promise rather than the binary: reference/contenox-"
            "cli.md:130 'One instance serves exactly one workspace, fixed at launch' and :140 'A "
            "client does not propose a working directory'. contenox-cli.md:138 ('the client owns "
            "the cwd') covers the cwd the editor opens with, not moving a live session."
        ),
        title="a session/load with another cwd moves a live ACP session there instead of refusing",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: a route label, a read_file {path: notes.txt} turn, a reply\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "mkdir ../other; echo other > ../other/notes.txt; echo work > notes.txt\n"
            "contenox acp   # ACP client: initialize, session/new {cwd: <workspace>}, then\n"
            "#   session/load {sessionId: <same>, cwd: <../other>} -> a result, no error;\n"
            "#   session/prompt 'read' -> fs/read_text_file asks for <../other>/notes.txt;\n"
            "#   session/list -> the session's cwd is <../other>"
        ),
        promised=(
            "development/hard-parts.md:101 \"A session's working directory and its agent "
            'are fixed when the session starts."\n'
            'development/hard-parts.md:102 "A client asking to change either gets an '
            'error, not a quiet no-op"'
        ),
        observed=(
            "session/load with another cwd answers a result; the session's next read "
            "resolves under the new directory and session/list reports the new cwd "
            "(a session/set_config_option for the agent is refused, as promised)"
        ),
        bears_on=(
            # The other reading: the reference says which directory an acp session
            # starts in, not that a live one may be moved; no page says it may.
            'reference/contenox-cli.md:138 "whatever the editor opened — per the protocol, '
            'the client owns the cwd"',
        ),
    )
)
def test_asking_to_move_a_live_session_to_another_directory_is_an_error(
    instance: Instance,
) -> None:
    instance.init()
    other = instance.root / "other"
    other.mkdir()
    (other / "notes.txt").write_text("other notes\n")
    (instance.work / "notes.txt").write_text("work notes\n")
    read = Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})])
    instance.use_script(Script(turns=[route(), read, "Read."]))
    with open_acp(instance, schema_allowed=_CATEGORY_FINDING_ON_SET) as acp:
        load = {"sessionId": acp.session_id, "cwd": str(other), "mcpServers": []}
        moved = acp.request("session/load", load)
        turn = acp.prompt("read the notes")
        [listed] = acp.list_sessions()
    instance.recorder.note(f"session/load to ../other answered an error: {'error' in moved}")
    instance.recorder.note(f"the session's cwd afterwards: {listed.get('cwd')}")
    assert "error" in moved, f"moving the session to {other} was accepted: {moved}"
    assert listed.get("cwd") == str(instance.work), listed
    assert turn.paths_read == [str(instance.work / "notes.txt")], turn.paths_read


# --- development/scripted-test-backend.md: tool names are the roster's leaf names

# One case, two calls in the same turn: the toolset's name and its leaf name. Only
# the name differs; the leaf reads the file, the toolset's name is not a tool.
A_TOOLSET_NAME_IS_NOT_A_TOOL_NAME = _mission(
    _touch(
        ToolCall("local_fs", {"path": "notes.txt"}),
        ToolCall("read_file", {"path": "notes.txt"}),
    ),
    "read the notes",
    model_saw("tool local_fs not found"),
    model_saw("leaf-name-content-5120"),
    name="a scripted call by its toolset name is not found while the leaf name runs",
    files={"notes.txt": "leaf-name-content-5120\n"},
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: Three fresh HOMEs, each: notes.txt 'leaf-name-content-5120'; dialog"
            " [local_fs {path: notes.txt} + read_file {path: notes.txt}; mission_finish landed; "
            "'done reading']; envelope [envelopes.e2e_open] default_action=\"allow\" appended to "
            "~/.contenox/agents.toml; `contenox run --policy e2e_open 'read the notes'` rc=0. The"
            " call named local_fs was dispatched as a different local_fs tool each run: run 1 "
            "'operation=tool_call subject=local_fs.read_file_range' (succeeded, 23 bytes), run 2 "
            "'subject=local_fs.sed' -> 'tool local_fs.sed execution failed: local_fs: pattern "
            "required for sed', run 3 'subject=local_fs.write_file' -> 'tool local_fs.write_file "
            "execution failed: local_fs: content required for write_file'. Control: a call named "
            "no_such_tool_zz -> 'tool no_such_tool_zz not found'. (`session show <workspace id>` "
            "as in the reproduce line answers 'not found'; I read the stderr trace instead.) "
            "Note: development/scripted-test-backend.md:109-112: tool names are the roster's leaf"
            " names, 'not the toolset they came from'. A toolset name is not on the roster, yet "
            "it resolves to an arbitrary member of the toolset, chosen differently from run to "
            "run; in run 3 that was a mutating tool (write_file) picked for a call the model "
            "never made by that name. No page documents toolset-name dispatch."
        ),
        title=(
            "a tool call named by its toolset (local_fs) is dispatched to an arbitrary tool "
            "of that toolset"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "echo leaf-name-content-5120 > notes.txt\n"
            "# dialog.json: one turn calling local_fs {path: notes.txt} and read_file "
            "{path: notes.txt}, then mission_finish landed, then a reply\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# an allow-all envelope appended to ~/.contenox/agents.toml:\n"
            '#   [envelopes.e2e_open]  default_action = "allow"\n'
            'contenox run --policy e2e_open "read the notes"\n'
            "# the tool results: in the session `session list --all` names for the run (a\n"
            "# second reader found `session show <workspace id>` answers not found and read\n"
            "# them from the stderr of the same run with --trace)\n"
            "# the local_fs call's result: 'tool local_fs.edit_file execution failed: "
            "old_string required' on one run, 'tool local_fs.write_file execution "
            "failed: content required' on the next; never 'tool local_fs not found'"
        ),
        promised=(
            'development/scripted-test-backend.md:109-112 "Tool names are the ones the '
            "agent's roster advertises — the leaf names `contenox doctor` prints under "
            '"Tool roster" (`git_diff`, `mission_report`, `local_shell`), not the toolset '
            'they came from."'
        ),
        observed=(
            "the call named local_fs runs as one of local_fs's tools, a different one from "
            "run to run (edit_file, then write_file: Go map order), instead of coming back "
            "'tool local_fs not found' as a name off the roster does"
        ),
    ),
)
