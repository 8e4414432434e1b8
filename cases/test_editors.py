"""What the editor integrations rely on, checked from the client's seat.

integrations/editors/{zed,jetbrains,aionui,openclaw}.md: the command line each
launches (`contenox acp`, `contenox acp --auto`, `contenox acpx`), the
capabilities it declares (JetBrains and AionUi declare no terminal), the cards
it renders (tool-call and permission titles), the gate of the `default` envelope
and the history it replays on reopening. The editors' own UIs are out of reach.
"""

from __future__ import annotations

import re

from dialogs import WRITE_GREETING, workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    acp_turn,
    open_acp,
    probe,
    prompt,
    route,
    satisfies,
    step,
)
from harness.acp.turn import PromptTurn


def _shell(command: str, *args: str, closing: str = "Ran it.") -> Script:
    return Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall("local_shell", {"command": command, "args": list(args)})]),
            closing,
        ]
    )


ACP_AUTO_RUNS_A_GATED_WRITE_WITHOUT_ASKING = Case(
    name="acp --auto runs a gated write without asking the editor",
    script=WRITE_GREETING,
    steps=[
        prompt(
            "write the greeting",
            acp_args=["--auto"],
            permission="deny",
            files_written=["out.txt"],
            requests_lack=["session/request_permission"],
        ),
        workspace_file("out.txt", expect="hello\n"),
    ],
)

THE_DEFAULT_ENVELOPE_GATES_A_SHELL_COMMAND = Case(
    name=(
        "under the default envelope a shell command waits on the editors permission "
        "and deny keeps it from running"
    ),
    script=_shell("touch", "ran"),
    steps=[
        prompt(
            "touch a file",
            permission="deny",
            requests=["session/request_permission"],
            terminal_commands=[],
        ),
        workspace_file("ran", expect=None),
    ],
)


# edit_file and sed, the other local_fs tools the default envelope gates: the ask
# comes before the edit, so deny leaves the file as it was.
THE_DEFAULT_ENVELOPE_GATES_AN_EDIT = [
    Case(
        name=(
            f"under the default envelope {tool} waits on the editors permission "
            "and deny leaves the file unchanged"
        ),
        script=Script(turns=[route(), Turn(tool_calls=[ToolCall(tool, arguments)]), "Done."]),
        files={"notes.txt": "old line\n"},
        steps=[
            prompt(
                f"edit the notes with {tool}",
                permission="deny",
                requests=["session/request_permission"],
                files_written=[],
            ),
            workspace_file("notes.txt", expect="old line\n"),
        ],
    )
    for tool, arguments in (
        ("edit_file", {"path": "notes.txt", "old_string": "old", "new_string": "new"}),
        ("sed", {"path": "notes.txt", "pattern": "old", "replacement": "new"}),
    )
]


def _card_titles(turn: PromptTurn) -> dict[str, object]:
    """The permission cards' titles, and whether a tool card shows the command run."""
    titles = [str(c.get("title", "")) for c in turn.tool_calls.values()]
    return {
        "permission cards": [ask.title for ask in turn.permission_requests],
        "a tool card shows local_shell …: touch made-by-the-agent": any(
            re.search(r"local_shell.*: touch made-by-the-agent", t) for t in titles
        ),
    }


def _made(instance: Instance) -> bool:
    return (instance.work / "made-by-the-agent").exists()


THE_CARDS_SHOW_THE_COMMAND = Case(
    name="the tool card and the permission card show the actual command",
    script=_shell("touch", "made-by-the-agent"),
    steps=[
        prompt("touch a file", permission="allow"),
        acp_turn(
            "the cards",
            _card_titles,
            expect=satisfies(
                lambda v: (
                    len(v["permission cards"]) == 1
                    and "touch made-by-the-agent" in v["permission cards"][0]
                    and v["a tool card shows local_shell …: touch made-by-the-agent"]
                ),
                "one permission card naming 'touch made-by-the-agent', and a tool card "
                "'local_shell…: touch made-by-the-agent'",
            ),
        ),
        probe("made-by-the-agent exists", _made, expect=True),
    ],
)


def _read_card(turn: PromptTurn) -> bool:
    titles = [str(c.get("title", "")) for c in turn.tool_calls.values()]
    return any(re.search(r"read_file: \S*README\.md", t) for t in titles)


THE_READ_FILE_CARD = Case(
    name="the read file card names the file",
    files={"README.md": "# readme\n"},
    script=Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall("read_file", {"path": "README.md"})]),
            "Read it.",
        ]
    ),
    steps=[
        prompt("read the readme"),
        acp_turn("a read_file card titled read_file: …README.md", _read_card, expect=True),
    ],
)


# What GoLand and AionUi declare: file system, no terminal.
_NO_TERMINAL = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": False}


def _shell_calls(turn: PromptTurn) -> list[tuple[object, str]]:
    """Each tool call's final status and the error its card carries."""
    return [
        (call.get("status"), str(((call.get("_meta") or {}) or {}).get("error", "")))
        for call in turn.tool_calls.values()
    ]


# docs disagree: jetbrains.md:45 and :96, aionui.md:95 say that without the terminal
# capability `local_shell` still runs and reports its output; the reference's
# contenox-cli.md:732 and local.md:7, :115 say local_shell is forwarded to the client's
# `terminal/*` capability (`acp --help`: "a client that grants neither is served
# neither"). v1.0.0 does the latter: the call is 'tool local_shell not found'.
NO_TERMINAL_CAPABILITY = Case(
    name="without the terminal capability local_shell is not served",
    script=_shell("echo", "reported back"),
    steps=[
        prompt(
            "echo something",
            permission="allow",
            acp_capabilities=_NO_TERMINAL,
            requests_lack=["terminal/create"],
            permission_requests=0,
        ),
        acp_turn(
            "the local_shell card",
            _shell_calls,
            expect=[("failed", "tool local_shell not found")],
        ),
    ],
    defect=Defect(
        title=(
            "without the terminal capability local_shell is 'not found' instead of run and reported"
        ),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: clientCapabilities {fs "
            "read/write, terminal:false}: tool_call 'local_shell' status "
            "'failed', _meta.error 'tool local_shell not found'; stopReason "
            "end_turn Note: Dialog needed a first 'general' turn (the ACP chain's"
            " router consumes one). Reproduces, but integrations/tools/local.md:7"
            ' "`local_fs` and `local_shell` calls are forwarded to the connected '
            "client's `fs/*` and `terminal/*` capabilities, which the client … "
            'actually carries out" and :115 "`local_shell` is forwarded to the '
            "ACP client's `terminal/*` capability\" (and acp --help 'a client that"
            " grants neither is served neither') support the binary; "
            "jetbrains.md:45/96 and aionui.md:95 disagree."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a local_shell {command: \"echo 'reported back'\"} call, then a "
            "reply\n"
            "contenox acp   # client: initialize with clientCapabilities {fs: "
            "{readTextFile: true, writeTextFile: true}, terminal: false}\n"
            "#   (what GoLand and AionUi declare), session/new, prompt; allow the "
            "call if asked\n"
            "# the tool call ends 'failed' with _meta.error 'tool local_shell not "
            "found', no output"
        ),
        promised=(
            'integrations/editors/jetbrains.md:45 "`local_shell` runs the command '
            'and returns its output in the tool card"'
        ),
        observed="the call fails 'tool local_shell not found'",
        bears_on=(
            (
                'integrations/editors/aionui.md:95 "so `local_shell` commands run and '
                'report their output"'
            ),
            '`contenox acp --help` "a client that grants neither is served neither"',
            "reference/contenox-cli.md:732 \"Those tools are forwarded to a connected client's "
            '`fs/*` and `terminal/*` capabilities"',
            "integrations/tools/local.md:115 \"`local_shell` is forwarded to the ACP client's "
            '`terminal/*` capability"',
        ),
        docs_disagree=True,
    ),
)


# function: the history is replayed by a second agent process on session/load,
# a request outside any prompt.
def test_reopening_a_session_replays_the_prompt_and_the_reply(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello from the first sitting."]))
    with open_acp(instance) as first:
        first.prompt("remember this greeting")
        session = first.session_id
    with open_acp(instance, handshake=False) as second:
        second.initialize()
        second.call(
            "session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []}
        )
        second.wire.listen(1.0)
        replayed = [
            m.payload["params"]["update"]
            for m in second.messages
            if m.direction == "received" and m.method == "session/update"
        ]
    said = {
        u.get("sessionUpdate"): str((u.get("content") or {}).get("text", ""))
        for u in replayed
        if u.get("sessionUpdate") in ("user_message_chunk", "agent_message_chunk")
    }
    instance.recorder.note(f"replayed: {sorted(said.items())}")
    assert "remember this greeting" in said.get("user_message_chunk", ""), replayed
    assert "Hello from the first sitting." in said.get("agent_message_chunk", ""), replayed


# function: it sends session/new itself and reads the error it answers.
def test_without_a_default_model_session_new_names_the_setting_to_fix(instance: Instance) -> None:
    instance.init()
    with open_acp(instance, handshake=False) as acp:
        acp.initialize()
        answer = acp.request("session/new", {"cwd": str(instance.work), "mcpServers": []})
    message = str((answer.get("error") or {}).get("message", ""))
    assert "default-model" in message, answer


def _telemetry_log(instance: Instance) -> dict[str, bool]:
    log = instance.home / ".contenox" / "telemetry.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return {"exists": log.exists(), "holds a trace": bool(text.strip())}


TELEMETRY_LOG = Case(
    name="with telemetry enabled an acp session writes its trace to telemetry log",
    script=Script(turns=[route(), "Hello."]),
    steps=[
        step("config", "set", "telemetry-enabled", "true"),
        prompt("hello", stop_reason=None),
    ],
    # Read once the editor closed the session: the trace is the session's.
    probes=[
        probe(
            "~/.contenox/telemetry.log",
            _telemetry_log,
            expect={"exists": True, "holds a trace": True},
        )
    ],
    defect=Defect(
        title="with telemetry enabled an ACP session writes nothing to telemetry.log",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: before the session there was no telemetry.log. After it: '-rw-r--r--"
            " … 0 Dec 2 02:06 ~/.contenox/telemetry.log' and no .contenox/telemetry.log in the "
            "workspace. The 109 operation traces (operation=chain_exec subject=chain-acp, load "
            "acp_chain, execute prompt, …) all went to the process's stderr Note: Reproduces. The "
            "file is created but left empty after the process exits. I grepped the docs and no "
            "page says the traces go elsewhere. troubleshooting.md:238 also looks for the "
            "workspace's .contenox/telemetry.log, and none was written there."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox config set telemetry-enabled true\n"
            "contenox acp   # ACP client: initialize, session/new, one prompt the "
            "dialog answers\n"
            "ls -l ~/.contenox/telemetry.log   # exists, 0 bytes"
        ),
        promised=(
            'integrations/editors/zed.md:121 "Subsequent ACP sessions write '
            'structured operation traces to `~/.contenox/telemetry.log`"'
        ),
        observed="~/.contenox/telemetry.log exists but is empty",
        bears_on=(
            (
                'integrations/editors/jetbrains.md:90 "Subsequent ACP sessions write '
                'structured operation traces"'
            ),
        ),
    ),
)
