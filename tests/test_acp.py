"""The ACP client against a fake agent: it records every message and does what an editor does."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness import Instance
from harness.acp import AcpClient, AcpError, AcpTimeout, PermissionAsk, open_acp
from harness.process import start

FAKE = Path(__file__).parent / "peers" / "fake_agent.py"


@pytest.fixture
def connect(tmp_path: Path) -> Iterator[Callable[..., AcpClient]]:
    clients: list[AcpClient] = []
    work = tmp_path / "work"
    work.mkdir()

    def make(**options: object) -> AcpClient:
        env = {"PATH": "/usr/bin:/bin", **options.pop("env", {})}  # type: ignore[dict-item]
        client = AcpClient(
            start([sys.executable, FAKE], env=env, cwd=work, queue_lines=True),
            workspace=work,
            env=env,
            timeout=options.pop("timeout", 10.0),  # type: ignore[arg-type]
            **options,  # type: ignore[arg-type]
        )
        clients.append(client)
        client.initialize()
        client.new_session()
        return client

    yield make
    for client in clients:
        client.cleanup()


def test_a_turn_reassembles_its_text_and_keeps_updates_flushed_after_the_response(
    connect: Callable[..., AcpClient],
) -> None:
    turn = connect().prompt("hello")
    assert turn.stop_reason == "end_turn"
    assert turn.text == "Hello, world. (late)"
    assert turn.update_kinds == [
        "agent_message_chunk",
        "agent_message_chunk",
        "usage_update",
        "agent_message_chunk",
    ]
    assert turn.updates_of("usage_update") == [
        {"sessionUpdate": "usage_update", "used": 10, "size": 100}
    ]
    assert turn.messages[0].direction == "sent" and turn.messages[0].method == "session/prompt"


def test_initialize_offers_full_capabilities_by_default_or_the_ones_given(
    tmp_path: Path,
) -> None:
    agent = start([sys.executable, FAKE], env={"PATH": "/usr/bin:/bin"}, queue_lines=True)
    client = AcpClient(agent, workspace=tmp_path, timeout=10)
    try:
        full = client.initialize()
        custom = client.initialize({"fs": {"readTextFile": True}})
    finally:
        client.cleanup()
    assert full["_meta"]["sawCapabilities"] == {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
    }
    assert custom["_meta"]["sawCapabilities"] == {"fs": {"readTextFile": True}}


def test_session_new_uses_the_workspace_and_session_list_reads_it_back(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect()
    assert client.session_id == "fake-session-1"
    assert client.list_sessions() == [{"sessionId": "fake-session-1", "cwd": str(client.workspace)}]


def test_an_allowed_write_lands_in_the_workspace(connect: Callable[..., AcpClient]) -> None:
    client = connect(permission="allow")
    target = client.workspace / "sub" / "out.txt"
    turn = client.prompt(f"write {target}")
    assert target.read_text() == "written by the fake\n"
    assert turn.paths_written == [str(target)]
    assert [p.ruling for p in turn.permission_requests] == ["allow"]
    assert turn.permission_requests[0].ask_id == "ask-1"
    assert turn.text == "write completed"
    assert turn.tool_calls["call-1"]["status"] == "completed"


def test_a_denied_ask_answers_the_reject_option_and_nothing_is_written(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect(permission="deny")
    target = client.workspace / "out.txt"
    turn = client.prompt(f"write {target}")
    assert not target.exists()
    assert turn.paths_written == []
    answer = turn.permission_requests[0].request.answer
    assert answer is not None
    assert answer["result"] == {"outcome": {"outcome": "selected", "optionId": "no"}}


def test_refused_writes_reach_the_client_but_the_file_never_appears(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect(refuse_writes=True)
    target = client.workspace / "out.txt"
    turn = client.prompt(f"write {target}")
    assert turn.paths_written == [str(target)]
    assert turn.requests_of("fs/write_text_file")[0].refused
    assert not target.exists()
    assert turn.text == "write failed"


def test_a_write_outside_the_scratch_dirs_is_refused(
    connect: Callable[..., AcpClient], tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    turn = connect().prompt(f"write {outside}")
    assert turn.requests_of("fs/write_text_file")[0].refused
    assert not outside.exists()


def test_reads_are_served_and_one_path_can_be_made_unreadable(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect(unreadable=["secret.txt"])
    (client.workspace / "notes.txt").write_text("hi")
    (client.workspace / "secret.txt").write_text("shh")
    served = client.prompt(f"read {client.workspace / 'notes.txt'}")
    refused = client.prompt(f"read {client.workspace / 'secret.txt'}")
    assert served.text == "read: hi"
    assert refused.text.startswith("read error: permission denied")
    assert refused.paths_read == [str(client.workspace / "secret.txt")]


def test_a_terminal_command_runs_for_real_and_its_output_is_answered(
    connect: Callable[..., AcpClient],
) -> None:
    turn = connect().prompt('run ["sh", "-c", "pwd; echo done"]')
    assert turn.terminal_commands == ["sh -c 'pwd; echo done'"]
    assert [r.method for r in turn.requests] == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    output = turn.requests_of("terminal/output")[0].answer
    assert output is not None
    assert output["result"]["output"].endswith("/work\ndone\n")
    assert output["result"]["exitStatus"] == {"exitCode": 0, "signal": None}


def test_a_deferred_ask_is_never_answered_and_can_be_released_elsewhere(
    connect: Callable[..., AcpClient], tmp_path: Path
) -> None:
    release = tmp_path / "release"
    client = connect(permission="defer", env={"FAKE_RELEASE": str(release)})
    pending = client.start_prompt("ask")
    ask = pending.wait_for_permission(timeout=5)
    assert ask.ruling == "defer" and ask.ask_id == "ask-1"
    release.write_text("approved elsewhere")  # the second process, in miniature
    turn = pending.finish(timeout=10)
    assert turn.text == 'ruled: {"outcome": "selected", "optionId": "released"}'
    assert turn.permission_requests[0].request.answer is None
    assert turn.notifications[0]["method"] == "$/cancel_request"


def test_cancel_sends_session_cancel_and_answers_the_ask_cancelled(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect(permission="cancel")
    turn = client.prompt("ask")
    assert turn.stop_reason == "cancelled"
    sent = [m.method for m in turn.messages if m.direction == "sent"]
    assert "session/cancel" in sent


def test_a_ruling_can_be_a_function_of_the_ask(connect: Callable[..., AcpClient]) -> None:
    seen: list[PermissionAsk] = []

    def rule(ask: PermissionAsk) -> str:
        seen.append(ask)
        return "deny"

    turn = connect(permission=rule).prompt("ask")
    assert [a.title for a in seen] == ["write_file"]
    assert turn.text == 'ruled: {"outcome": "selected", "optionId": "no"}'


def test_a_silent_agent_fails_with_everything_received_so_far(
    connect: Callable[..., AcpClient],
) -> None:
    # Connect with the default timeout (a loaded machine can take longer than
    # half a second to start the fake); only the silent prompt gets 0.5 s.
    client = connect()
    with pytest.raises(AcpTimeout) as caught:
        client.prompt("silence", timeout=0.5)
    message = str(caught.value)
    assert "the agent was silent" in message
    assert '"session/prompt"' in message and "silence" in message
    assert "fake agent: a notice for a person" in message
    assert "level=INFO" not in message  # notices, not log lines


def test_a_line_that_is_not_json_rpc_fails_the_case(connect: Callable[..., AcpClient]) -> None:
    with pytest.raises(AcpError, match=r"not a JSON-RPC 2\.0 message: 'this is not json'"):
        connect().prompt("garbage")


def test_close_returns_the_exit_code_and_stderr_stays_readable(
    connect: Callable[..., AcpClient],
) -> None:
    client = connect()
    assert client.close() == 0
    assert "fake agent: a notice for a person" in client.notices
    assert "level=INFO" in client.stderr
    assert client.cleanup() is None


def test_every_message_is_recorded_both_ways(connect: Callable[..., AcpClient]) -> None:
    client = connect()
    client.prompt("hello")
    methods = [(m.direction, m.method) for m in client.messages if m.method]
    assert methods[:3] == [
        ("sent", "initialize"),
        ("sent", "session/new"),
        ("sent", "session/prompt"),
    ]
    assert all(json.dumps(m.payload) for m in client.messages)


def test_open_acp_runs_in_the_instance_and_a_leftover_agent_is_reported(tmp_path: Path) -> None:
    instance = Instance.create(tmp_path / "case", binary=Path(sys.executable))
    fake = instance.work / "fake_agent.py"
    fake.write_text(FAKE.read_text())
    client = open_acp(instance, subcommand=str(fake), timeout=10)
    assert client.prompt("hello").stop_reason == "end_turn"
    leftovers = instance.close()
    assert len(leftovers) == 1 and "still running" in leftovers[0]


def test_a_client_refuses_an_agent_whose_lines_it_cannot_read(tmp_path: Path) -> None:
    agent = start([sys.executable, FAKE], env={"PATH": "/usr/bin:/bin"})
    try:
        with pytest.raises(ValueError, match="queue_lines=True"):
            AcpClient(agent, workspace=tmp_path)
    finally:
        agent.kill()
