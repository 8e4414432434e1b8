"""`contenox acp`: a turn as an editor sees it — messages, file and terminal calls, asks."""

from __future__ import annotations

import re

from dialogs import WRITE_GREETING, workspace_file
from harness import Case, Instance, Script, ToolCall, Turn, open_acp, prompt, route

WRITE = WRITE_GREETING

A_SCRIPTED_PROMPT_ENDS_WITH_END_TURN = Case(
    name="a scripted prompt ends with end_turn and the scripted text",
    script=Script(turns=[route(), "Hello from the script."]),
    # The session closes at the end of the case: the agent must exit 0.
    steps=[
        prompt(
            "say hello",
            stop_reason="end_turn",
            text_has=[re.compile(r"\AHello from the script\.\Z")],
        )
    ],
)

A_SCRIPTED_WRITE_FILE_ARRIVES_AS_AN_FS_WRITE = Case(
    name="a scripted write_file arrives as an fs write and the file appears",
    script=WRITE,
    steps=[
        prompt(
            "write the greeting",
            permission="allow",
            files_written=["out.txt"],
            requests=["fs/write_text_file"],
        ),
        workspace_file("out.txt", expect="hello\n"),
    ],
)

A_SCRIPTED_READ_FILE_ARRIVES_AS_AN_FS_READ = Case(
    name="a scripted read_file arrives as an fs read and its content reaches the tool",
    script=Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall(name="read_file", arguments={"path": "notes.txt"})]),
            "Read it.",
        ]
    ),
    files={"notes.txt": "the answer is 42\n"},
    steps=[
        prompt("read the notes", files_read=["notes.txt"], tool_output_has=["the answer is 42"])
    ],
)

A_SCRIPTED_LOCAL_SHELL_RUNS_IN_THE_EDITORS_TERMINAL = Case(
    name="a scripted local_shell runs in the editors terminal",
    script=Script(
        turns=[
            route(),
            Turn(
                tool_calls=[
                    ToolCall(
                        name="local_shell", arguments={"command": "echo", "args": ["hi there"]}
                    )
                ]
            ),
            "Ran it.",
        ]
    ),
    steps=[
        prompt("greet", terminal_commands=["echo 'hi there'"], tool_output_has=["hi there"]),
    ],
)


# function: the refused write request and each tool call's "failed" end are not in prompt()
def test_with_writes_refused_the_file_never_appears(instance: Instance) -> None:
    instance.init()
    instance.use_script(WRITE)
    with open_acp(instance, permission="allow", refuse_writes=True) as acp:
        turn = acp.prompt("write the greeting")
        assert turn.stop_reason == "end_turn", turn.describe()
        writes = turn.requests_of("fs/write_text_file")
        assert len(writes) == 1 and writes[0].refused, turn.describe()
        assert not (instance.work / "out.txt").exists()
        assert turn.tool_calls, turn.describe()
        assert all(call.get("status") == "failed" for call in turn.tool_calls.values()), (
            turn.describe()
        )


# function: reads the permission request's _meta.toolName, which prompt() does not expose
def test_a_gated_call_raises_a_permission_request_that_deny_refuses(instance: Instance) -> None:
    instance.init()
    instance.use_script(WRITE)
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("write the greeting")
        asks = turn.permission_requests
        assert len(asks) == 1, turn.describe()
        assert asks[0].ruling == "deny"
        assert asks[0].meta.get("toolName") == "write_file", turn.describe()
        assert turn.paths_written == [], turn.describe()
        assert not (instance.work / "out.txt").exists()
        assert turn.stop_reason == "end_turn", turn.describe()


# function: another process answers while the prompt is still open (prompt() waits it out)
def test_a_deferred_ask_is_answered_from_another_process_while_the_turn_waits(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(WRITE)
    with open_acp(instance, permission="defer") as acp:
        pending = acp.start_prompt("write the greeting")
        ask = pending.wait_for_permission(timeout=60)
        assert ask.ask_id, pending.so_far().describe()

        inbox = instance.must("approvals", "list")
        inbox.assert_stdout_contains(ask.ask_id)
        assert not (instance.work / "out.txt").exists(), "the write ran before anyone answered"
        instance.must("approvals", "respond", ask.ask_id, "--approve")

        turn = pending.finish(timeout=60)
        assert turn.stop_reason == "end_turn", turn.describe()
        assert turn.paths_written == [str(instance.work / "out.txt")], turn.describe()
        assert (instance.work / "out.txt").read_text() == "hello\n"
        assert ask.ask_id not in instance.must("approvals", "list").stdout


# function: sends session/list, a request outside any prompt, which no step type sends
def test_session_list_shows_the_session_the_editor_opened(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello."]))
    with open_acp(instance) as acp:
        acp.prompt("hello")
        sessions = acp.list_sessions()
        assert acp.session_id in [s.get("sessionId") for s in sessions], acp.describe()
