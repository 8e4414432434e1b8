"""The seams the ACP client and the terminal are split along, each driven on its own."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest

from harness.acp import AcpError, Editor, Wire, WireMessage
from harness.process import start, wait_until
from harness.terminal import PtyChild, Screen

FAKE = Path(__file__).parent / "peers" / "fake_agent.py"


def _request(method: str, **params: object) -> WireMessage:
    payload = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return WireMessage("received", payload, time.monotonic())


def _editor(tmp_path: Path, **options: object) -> tuple[Editor, list[str | None]]:
    cancelled: list[str | None] = []
    editor = Editor(
        workspace=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout=10,
        cancel=cancelled.append,
        fail=AcpError,
        **options,  # type: ignore[arg-type]
    )
    return editor, cancelled


def test_the_editor_writes_and_reads_inside_its_roots_and_refuses_outside(tmp_path: Path) -> None:
    editor, _ = _editor(tmp_path)
    assert editor.answer(_request("fs/write_text_file", path="a.txt", content="x\ny\n")) == {
        "result": None
    }
    assert editor.answer(_request("fs/read_text_file", path="a.txt", line=2)) == {
        "result": {"content": "y\n"}
    }
    refused = editor.answer(_request("fs/read_text_file", path="/etc/hostname"))
    assert refused is not None and "outside the case's scratch dirs" in refused["error"]["message"]
    unknown = editor.answer(_request("editor/dance"))
    assert unknown is not None and unknown["error"]["code"] == -32601


def test_the_editor_runs_a_terminal_command_through_the_one_spawn_path(tmp_path: Path) -> None:
    editor, _ = _editor(tmp_path)
    created = editor.answer(
        _request("terminal/create", command="sh", args=["-c", "echo out; echo err >&2; exit 3"])
    )
    assert created is not None
    terminal = {"terminalId": created["result"]["terminalId"]}
    assert editor.answer(_request("terminal/wait_for_exit", **terminal)) == {
        "result": {"exitCode": 3, "signal": None}
    }
    output = editor.answer(_request("terminal/output", **terminal))
    assert output is not None
    # One stream, stdout and stderr merged, as a terminal shows them.
    assert output["result"]["output"] == "out\nerr\n"
    assert editor.answer(_request("terminal/release", **terminal)) == {"result": None}
    assert editor.release_terminals() is None


def test_the_editor_reports_a_terminal_command_left_running(tmp_path: Path) -> None:
    editor, _ = _editor(tmp_path)
    assert editor.answer(_request("terminal/create", command="sleep", args=["30"])) is not None
    assert "sleep 30" in (editor.release_terminals() or "")


def test_the_editor_rules_permission_and_a_cancel_ruling_cancels_the_turn(tmp_path: Path) -> None:
    options = [{"optionId": "yes", "kind": "allow_once"}, {"optionId": "no", "kind": "reject_once"}]
    editor, cancelled = _editor(tmp_path, permission="deny")
    ask = _request("session/request_permission", sessionId="s-1", options=options)
    assert editor.answer(ask) == {"result": {"outcome": {"outcome": "selected", "optionId": "no"}}}
    editor.permission = "defer"
    assert editor.answer(ask) is None
    editor.permission = "cancel"
    assert editor.answer(ask) == {"result": {"outcome": {"outcome": "cancelled"}}}
    assert cancelled == ["s-1"]
    assert editor.rulings == ["deny", "defer", "cancel"]


def test_the_wire_records_both_ways_and_hands_requests_to_its_handler(tmp_path: Path) -> None:
    agent = start([sys.executable, FAKE], env={"PATH": "/usr/bin:/bin"}, queue_lines=True)
    seen: list[str | None] = []
    try:
        wire = Wire(agent, timeout=10, on_request=lambda m: seen.append(m.method) or None)
        result = wire.call("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert isinstance(result, dict)
        assert [(m.direction, m.method) for m in wire.messages] == [
            ("sent", "initialize"),
            ("received", None),
        ]
        with pytest.raises(AcpError, match="no/such/method failed"):
            wire.call("no/such/method", {})
    finally:
        agent.kill()


def test_a_wire_refuses_a_process_whose_lines_it_cannot_read() -> None:
    agent = start(["sleep", "30"], stdin=True)
    try:
        with pytest.raises(ValueError, match="queue_lines=True"):
            Wire(agent, timeout=1)
    finally:
        agent.kill()


def test_a_screen_renders_what_a_pty_child_writes_and_the_child_takes_signals() -> None:
    pty = PtyChild.spawn(["sh", "-c", "printf 'hello\\r\\nworld'; sleep 30"], rows=5, cols=20)
    screen = Screen(pty, 5, 20)
    try:
        wait_until(lambda: "world" in screen.text(), 10, what="the screen to show world")
        assert screen.text() == "hello\nworld"
        assert b"hello" in screen.raw()
        pty.signal(signal.SIGHUP)
        assert wait_until(lambda: pty.poll(), 10, what="the child to end") == -signal.SIGHUP
    finally:
        pty.close()
        screen.join(timeout=2)
