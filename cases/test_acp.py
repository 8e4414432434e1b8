"""`contenox acp`: a turn as an editor sees it — messages, file and terminal calls, asks."""

from __future__ import annotations

from harness import Instance, Script, ToolCall, Turn, open_acp, route

WRITE = Script(
    turns=[
        route(),
        Turn(
            text="Writing the greeting.",
            tool_calls=[
                ToolCall(name="write_file", arguments={"path": "out.txt", "content": "hello\n"})
            ],
        ),
        "Done.",
    ]
)


def test_a_scripted_prompt_ends_with_end_turn_and_the_scripted_text(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello from the script."]))
    acp = open_acp(instance)
    turn = acp.prompt("say hello")
    assert turn.stop_reason == "end_turn", turn.describe()
    assert turn.text == "Hello from the script.", turn.describe()
    assert acp.close() == 0, acp.describe()


def test_a_scripted_write_file_arrives_as_an_fs_write_and_the_file_appears(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(WRITE)
    with open_acp(instance, permission="allow") as acp:
        turn = acp.prompt("write the greeting")
        assert turn.stop_reason == "end_turn", turn.describe()
        assert turn.paths_written == [str(instance.work / "out.txt")], turn.describe()
        assert (instance.work / "out.txt").read_text() == "hello\n"


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


def test_a_scripted_read_file_arrives_as_an_fs_read_and_its_content_reaches_the_tool(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("notes.txt", "the answer is 42\n")
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall(name="read_file", arguments={"path": "notes.txt"})]),
                "Read it.",
            ]
        )
    )
    with open_acp(instance) as acp:
        turn = acp.prompt("read the notes")
        assert turn.paths_read == [str(instance.work / "notes.txt")], turn.describe()
        assert "the answer is 42" in str(turn.tool_outputs), turn.describe()


def test_a_scripted_local_shell_runs_in_the_editors_terminal(instance: Instance) -> None:
    instance.init()
    instance.use_script(
        Script(
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
        )
    )
    with open_acp(instance) as acp:
        turn = acp.prompt("greet")
        assert turn.terminal_commands == ["echo 'hi there'"], turn.describe()
        assert "hi there" in str(turn.tool_outputs), turn.describe()


def test_session_list_shows_the_session_the_editor_opened(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello."]))
    with open_acp(instance) as acp:
        acp.prompt("hello")
        sessions = acp.list_sessions()
        assert acp.session_id in [s.get("sessionId") for s in sessions], acp.describe()
