"""Background processes: stdin, signals to the whole group, Results, cleanups that report."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from harness import CommandTimeout, Instance, Result
from harness.process import Process, ProcessExited, WaitTimeout, start, start_in, wait_until

PEERS = Path(__file__).parent / "peers"
TREE = PEERS / "tree.py"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A killed child of ours that nobody reaped yet is a zombie: dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def _tree(tmp_path: Path) -> tuple[Process, int, int]:
    pidfile = tmp_path / "pids"
    proc = start([sys.executable, TREE, pidfile])
    wait_until(pidfile.exists, 10, what="the tree to write its pids", context=proc.describe)
    parent, child = (int(p) for p in pidfile.read_text().split())
    return proc, parent, child


def test_wait_returns_the_same_result_a_finished_command_has() -> None:
    proc = start(
        [
            sys.executable,
            "-c",
            "import sys; print('out'); print('err', file=sys.stderr); sys.exit(4)",
        ]
    )
    result = proc.wait(timeout=10)
    assert isinstance(result, Result)
    assert (result.exit_code, result.stdout, result.stderr) == (4, "out\n", "err\n")
    assert result.argv[0] == sys.executable and not result.timed_out


def test_what_is_written_to_stdin_reaches_the_child_and_close_ends_it() -> None:
    proc = start(["cat"])
    proc.write("first\n")
    proc.wait_for_output("first", stream="stdout", timeout=10)
    proc.write(b"second\n")
    proc.close_stdin()
    assert proc.wait(timeout=10).assert_success().stdout == "first\nsecond\n"


def test_interrupt_reaches_the_group_and_the_child_handles_it(tmp_path: Path) -> None:
    proc, _, child = _tree(tmp_path)
    proc.interrupt()
    result = proc.wait(timeout=10)
    assert result.exit_code == 3, result.describe()
    result.assert_stdout_contains("parent got SIGINT")
    wait_until(lambda: not _alive(child), 10, what="the grandchild to die of SIGINT too")


def test_hangup_ends_a_child_that_keeps_the_default_action() -> None:
    proc = start(["sleep", "30"], stdin=False)
    proc.hangup()
    assert proc.wait(timeout=10).exit_code == -signal.SIGHUP


def test_kill_ends_a_tree_that_ignores_sigterm(tmp_path: Path) -> None:
    proc, parent, child = _tree(tmp_path)
    proc.kill(grace=0.3)
    assert not proc.running
    assert proc.exit_code == -signal.SIGKILL
    wait_until(lambda: not _alive(child), 10, what=f"grandchild {child} to be killed")
    assert not _alive(parent)


def test_wait_overrun_kills_the_group_and_keeps_the_partial_output(tmp_path: Path) -> None:
    proc, _, child = _tree(tmp_path)
    proc.wait_for_output("tree stderr line", timeout=10)
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as caught:
        proc.wait(timeout=0.5)
    assert time.monotonic() - started < 8
    assert caught.value.result.timed_out
    assert "ready" in caught.value.result.stdout
    assert "tree stderr line" in str(caught.value)
    wait_until(lambda: not _alive(child), 10, what="the grandchild to be killed")


def test_wait_until_returns_the_first_truthy_value() -> None:
    values = iter([None, 0, "", "found"])
    assert wait_until(lambda: next(values), 5, interval=0.01) == "found"


def test_wait_until_names_what_it_waited_for_and_what_it_saw() -> None:
    with pytest.raises(WaitTimeout) as caught:
        wait_until(lambda: None, 0.2, what="the moon", context=lambda: "only clouds")
    message = str(caught.value)
    assert "waiting for the moon" in message and "only clouds" in message


def test_cleanup_of_a_finished_process_reports_nothing() -> None:
    proc = start(["true"], stdin=False)
    proc.wait(timeout=10)
    assert proc.cleanup() is None


def test_cleanup_kills_and_reports_a_tree_left_running(tmp_path: Path) -> None:
    proc, _, child = _tree(tmp_path)
    report = proc.cleanup()
    assert report is not None and "still running" in report and str(TREE) in report
    wait_until(lambda: not _alive(child), 10, what="the grandchild to be killed")


def test_cleanup_reports_descendants_a_finished_leader_left_behind(tmp_path: Path) -> None:
    pidfile = tmp_path / "orphan"
    proc = start(
        [
            "sh",
            "-c",
            f"sh -c 'trap \"\" TERM; sleep 30' & echo $! > {pidfile}; exit 0",
        ],
        stdin=False,
    )
    wait_until(lambda: not proc.running and pidfile.exists(), 10, what="the leader to exit")
    orphan = int(pidfile.read_text())
    report = proc.cleanup()
    assert report is not None and "left processes in its group" in report
    wait_until(lambda: not _alive(orphan), 10, what="the orphan to be killed")


def test_start_in_runs_inside_the_instance_and_its_leftover_is_reported(tmp_path: Path) -> None:
    instance = Instance.create(tmp_path / "case", binary=Path("/nonexistent/contenox"))
    proc = start_in(instance, [sys.executable, "-c", "import os; print(os.getcwd()); input()"])
    proc.wait_for_output(str(instance.work), stream="stdout", timeout=10)
    leftovers = instance.close()
    assert len(leftovers) == 1 and "still running" in leftovers[0]
    assert not proc.running


# A runner that ignores the signals a person stops programs with, as one
# started under `nohup` or as a background job of a non-interactive shell
# does. It starts its children through every spawn path and reports how
# each ended after a hangup (or an interrupt) reached its group.
_IGNORING_RUNNER = """
import json, signal, sys
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.signal(signal.SIGINT, signal.SIG_IGN)
from harness.process import start
from harness.terminal import Terminal
ended = {}
proc = start(["sleep", "30"], stdin=False)
proc.hangup()
ended["process, hangup"] = proc.wait(timeout=10).exit_code
proc = start(["sleep", "30"], stdin=False)
proc.interrupt()
ended["process, interrupt"] = proc.wait(timeout=10).exit_code
term = Terminal.spawn(["sleep", "30"])
term.hangup()
ended["terminal, hangup"] = term.wait_exit(timeout=10)
term.close()
print(json.dumps(ended))
"""


def test_a_hangup_reaches_a_child_of_a_runner_that_ignores_sighup() -> None:
    import json
    import subprocess

    repo = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "-c", _IGNORING_RUNNER],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "process, hangup": -signal.SIGHUP,
        "process, interrupt": -signal.SIGINT,
        "terminal, hangup": -signal.SIGHUP,
    }


# A runner that handles (not ignores) those signals, as pytest does SIGINT: its
# children are spawned without a preexec_fn (harness.process), and exec resets a
# handled signal to its default, so a hangup or interrupt still ends them.
_HANDLING_RUNNER = _IGNORING_RUNNER.replace("signal.SIG_IGN", "lambda *_: None")


def test_a_hangup_reaches_a_child_of_a_runner_that_handles_sighup() -> None:
    import json
    import subprocess

    assert "lambda *_: None" in _HANDLING_RUNNER
    repo = Path(__file__).parent.parent
    done = subprocess.run(
        [sys.executable, "-c", _HANDLING_RUNNER],
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=60,
        start_new_session=True,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "process, hangup": -signal.SIGHUP,
        "process, interrupt": -signal.SIGINT,
        "terminal, hangup": -signal.SIGHUP,
    }


def test_waiting_for_output_from_a_process_that_exited_fails_at_once_naming_it() -> None:
    proc = start([sys.executable, "-c", "import sys; sys.stderr.write('other words\\n')"])
    started = time.monotonic()

    with pytest.raises(ProcessExited, match=r"exited \(0\) without stderr ever showing 'ask'"):
        proc.wait_for_output("ask", stream="stderr", timeout=30)

    assert time.monotonic() - started < 10, "it polled a dead process instead of failing"
    proc.wait(timeout=5)


def test_output_printed_just_before_exit_is_still_found() -> None:
    proc = start([sys.executable, "-c", "print('the last words')"])
    proc.wait(timeout=10)

    assert "the last words" in proc.wait_for_output("last words", stream="stdout", timeout=5)
