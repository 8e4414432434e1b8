"""A real terminal: a pty, the screen a person sees, keys and signals, waits that show the screen."""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import Instance
from harness.process import start, wait_until
from harness.terminal import Terminal, TerminalTimeout, open_terminal

ECHO_LOOP = Path(__file__).parent / "peers" / "echo_loop.py"


@pytest.fixture
def term() -> Iterator[Terminal]:
    t = Terminal.spawn([sys.executable, ECHO_LOOP])
    yield t
    t.close()


def test_the_loop_refuses_without_a_terminal_but_runs_under_one(term: Terminal) -> None:
    # The peer's own check, so the pty is proven real rather than assumed.
    piped = start([sys.executable, ECHO_LOOP], stdin=False).wait(timeout=10)
    assert piped.exit_code == 2 and "needs a terminal" in piped.stderr
    term.wait_for("welcome to echo_loop", timeout=10)


def test_the_default_terminal_is_40_rows_by_120_columns(term: Terminal) -> None:
    assert (term.rows, term.cols) == (40, 120)
    term.send_line("x" * 130)
    screen = term.wait_for("status: waiting 1", timeout=10)
    # 6 + 130 characters wrap at 120 columns, as on a real terminal.
    assert "echo: " + "x" * 114 in screen.split("\n")


def test_the_screen_shows_the_result_of_redraws_not_the_bytes(term: Terminal) -> None:
    term.send_line("one")
    term.send_line("two")
    screen = term.wait_for("status: waiting 2", timeout=10)
    assert screen.split("\n") == [
        "welcome to echo_loop",
        "echo: one",
        "echo: two",
        "status: waiting 2",
    ]
    raw = term.raw()
    assert b"\x1b[1A" in raw and b"\x1b[1m" in raw  # the soup is still there for who wants it
    assert b"status: waiting 0" in raw


def test_wait_for_takes_a_regex(term: Terminal) -> None:
    term.send_line("abc123")
    assert "echo: abc123" in term.wait_for(re.compile(r"echo: \w+\d{3}"), timeout=10)


def test_a_wait_that_times_out_shows_the_whole_screen(term: Terminal) -> None:
    term.wait_for("status: waiting 0", timeout=10)
    with pytest.raises(TerminalTimeout) as caught:
        term.wait_for("never drawn", timeout=0.3)
    message = str(caught.value)
    assert "'never drawn'" in message
    assert "|welcome to echo_loop" in message and "|status: waiting 0" in message
    assert "still running" in message


def test_typed_quit_exits_zero(term: Terminal) -> None:
    term.send_line("quit")
    assert term.wait_exit(timeout=10) == 0
    assert "bye" in term.screen()


def test_interrupt_is_ctrl_c_through_the_line_discipline(term: Terminal) -> None:
    term.wait_for("status: waiting 0", timeout=10)
    term.interrupt()
    assert term.wait_exit(timeout=10) == 130
    assert "interrupted" in term.screen()


def test_send_ctrl_d_is_end_of_input(term: Terminal) -> None:
    term.wait_for("status: waiting 0", timeout=10)
    term.send_ctrl("d")
    assert term.wait_exit(timeout=10) == 0


def test_hangup_is_what_closing_the_window_does(tmp_path: Path) -> None:
    marker = tmp_path / "hup"
    t = Terminal.spawn([sys.executable, ECHO_LOOP, marker])
    try:
        t.wait_for("status: waiting 0", timeout=10)
        t.hangup()
        assert t.wait_exit(timeout=10) == 129
        assert marker.read_text() == "hangup\n"
    finally:
        t.close()


def test_wait_exit_overrun_fails_with_the_screen(term: Terminal) -> None:
    term.wait_for("status: waiting 0", timeout=10)
    with pytest.raises(TerminalTimeout, match="did not exit within"):
        term.wait_exit(timeout=0.3)


def test_a_program_killed_by_a_signal_exits_minus_the_signal() -> None:
    t = Terminal.spawn(["sleep", "30"])
    try:
        t.close()
        assert t.wait_exit(timeout=5) == -signal.SIGKILL
    finally:
        t.close()


def test_resize_reaches_the_program_and_the_screen() -> None:
    t = Terminal.spawn(["sh", "-c", "read x; stty size"], rows=10, cols=40)
    try:
        t.resize(24, 80)
        t.send_line("")
        t.wait_for("24 80", timeout=10)
        assert (t.rows, t.cols) == (24, 80)
    finally:
        t.close()


def test_the_terminal_answers_a_cursor_position_query() -> None:
    # Ask for the cursor position (DSR 6) and read the reply a real terminal sends.
    probe = (
        "import sys, termios, tty, os\n"
        "tty.setraw(0)\n"
        "os.write(1, b'\\x1b[6n')\n"
        "reply = b''\n"
        "while not reply.endswith(b'R'):\n"
        "    reply += os.read(0, 1)\n"
        "os.write(1, b'\\r\\nreply ' + reply[1:] + b'\\r\\n')\n"
    )
    t = Terminal.spawn([sys.executable, "-c", probe])
    try:
        t.wait_for("reply [1;1R", timeout=10)
    finally:
        t.close()


def test_open_terminal_runs_in_the_instance_and_a_leftover_is_reported(tmp_path: Path) -> None:
    instance = Instance.create(tmp_path / "case", binary=Path("/nonexistent/contenox"))
    t = open_terminal(instance, program=["sh", "-c", 'echo "$TERM in $PWD"; sleep 30'])
    t.wait_for(f"xterm-256color in {instance.work}", timeout=10)
    leftovers = instance.close()
    assert len(leftovers) == 1 and "still running" in leftovers[0]
    wait_until(lambda: not t.running, 5, what="the pty program to be gone")
