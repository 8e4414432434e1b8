"""Running commands: timeouts kill the whole group, failures explain themselves."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import CommandTimeout, Instance, InstanceError, Result, notices, run

# Ignores SIGTERM, starts a grandchild that ignores it too, prints, then hangs.
STUBBORN_TREE = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"])
with open(sys.argv[1], "w") as f:
    f.write(str(child.pid))
print("started, grandchild", child.pid, flush=True)
print("working on it", file=sys.stderr, flush=True)
time.sleep(600)
"""

PRINT_ENV = """
import json, os
print(json.dumps(dict(os.environ)))
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); look at its state.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_an_overrun_kills_the_whole_group_and_reports_partial_output(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    prog = make_program("stubborn", STUBBORN_TREE)
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    with pytest.raises(CommandTimeout) as err:
        run([prog, pidfile], timeout=2)
    assert time.monotonic() - started < 15
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the grandchild outlived the timeout"
    result = err.value.result
    assert result.timed_out
    assert "started, grandchild" in result.stdout
    assert "working on it" in result.stderr
    message = str(err.value)
    assert "2s timeout" in message
    assert str(prog) in message
    assert "working on it" in message


def test_a_finished_command_returns_a_frozen_result(
    make_program: Callable[[str, str], Path],
) -> None:
    prog = make_program("hello", "import sys\nprint(sys.stdin.read().upper())\nsys.exit(3)\n")
    result = run([prog], stdin="abc", timeout=30)
    assert result.exit_code == 3
    assert result.stdout == "ABC\n"
    assert result.argv == (str(prog),)
    assert result.duration > 0
    with pytest.raises(AttributeError):
        result.exit_code = 0  # type: ignore[misc]


def test_stdin_is_never_the_terminal(make_program: Callable[[str, str], Path]) -> None:
    prog = make_program("reader", "import sys\nprint(repr(sys.stdin.read()))\n")
    assert run([prog], timeout=30).stdout == "''\n"


def test_failed_assertions_print_argv_and_both_streams() -> None:
    result = Result(
        argv=("contenox", "run", "x"),
        exit_code=1,
        stdout="the report\n",
        stderr="time=2026 level=INFO msg=x\nError: boom\n",
        duration=0.5,
    )
    with pytest.raises(AssertionError) as err:
        result.assert_success()
    message = str(err.value)
    for part in ("$ contenox run x", "exit 1", "the report", "Error: boom"):
        assert part in message
    with pytest.raises(AssertionError, match="expected stdout to contain 'missing'"):
        result.assert_stdout_contains("missing")
    with pytest.raises(AssertionError, match="expected notices not to contain 'boom'"):
        result.refute_notices_contain("boom")
    with pytest.raises(AssertionError, match="expected exit code 0, got 1"):
        result.assert_exit(0)
    result.assert_failure().assert_stderr_contains("level=INFO").refute_notices_contain("level=")


def test_notices_drop_structured_log_lines() -> None:
    stderr = (
        'time=2026-11-30T09:02:41.709Z level=INFO msg="Operation started" operation=startup\n'
        'Mission fired at agent "run" under envelope "run".\n'
        "time=2026-11-30T09:02:41.710Z level=WARN msg=x\n"
        "Mission 1 finished: landed\n"
    )
    assert notices(stderr) == (
        'Mission fired at agent "run" under envelope "run".\nMission 1 finished: landed\n'
    )


def test_ambient_credentials_and_contenox_variables_never_reach_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_program: Callable[[str, str], Path]
) -> None:
    import json

    for name in (
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GEMINI_API_KEY",
        "OLLAMA_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "CONTENOX_FOO",
        "CONTENOX_DEFAULT_MODEL",
        "XDG_CONFIG_HOME",
        "SOMEVENDOR_API_KEY",
    ):
        monkeypatch.setenv(name, "leaked")
    monkeypatch.setenv("TERM", "xterm-kitty")
    monkeypatch.setenv("SOME_AMBIENT_SETTING", "yes")
    monkeypatch.setenv("LC_TIME", "C")
    inst = Instance.create(tmp_path / "case", binary=Path(sys.executable))
    child_env = json.loads(inst.run([make_program("env", PRINT_ENV)]).stdout)
    assert "leaked" not in child_env.values(), {k for k, v in child_env.items() if v == "leaked"}
    assert child_env["HOME"] == str(inst.home)
    assert child_env["TMPDIR"] == str(inst.tmp)
    assert child_env["TERM"] == "dumb"
    # An allowlist: what is not named does not pass, whatever it is called.
    assert "SOME_AMBIENT_SETTING" not in child_env
    assert child_env["LC_TIME"] == "C"
    assert child_env["PATH"] == os.environ["PATH"]


def test_a_case_may_set_its_own_contenox_variables(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    import json

    inst = Instance.create(tmp_path / "case", binary=Path(sys.executable))
    out = inst.run([make_program("env", PRINT_ENV)], env={"CONTENOX_OPT_IN_BETA": "1"}).stdout
    assert json.loads(out)["CONTENOX_OPT_IN_BETA"] == "1"


def test_commands_run_in_the_workspace(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path(sys.executable))
    prog = make_program("pwd", "import os\nprint(os.getcwd())\n")
    assert inst.run([prog]).stdout.strip() == str(inst.work)
    assert sorted(p.name for p in inst.root.iterdir()) == ["home", "tmp", "work"]


def test_the_real_home_guard_refuses_a_scratch_home_inside_the_real_contenox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "realhome"))
    (tmp_path / "realhome" / ".contenox").mkdir(parents=True)
    with pytest.raises(InstanceError, match=r"inside the real .*\.contenox"):
        Instance.create(tmp_path / "realhome" / ".contenox" / "cases" / "c1", binary=Path("x"))
    assert not (tmp_path / "realhome" / ".contenox" / "cases").exists()
    # Beside it is fine.
    Instance.create(tmp_path / "realhome" / "elsewhere", binary=Path("x"))


def test_close_runs_cleanups_and_reports_what_was_left(tmp_path: Path) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("x"))
    inst.cleanups.append(lambda: None)
    inst.cleanups.append(lambda: "killed: sleep 600 (pid 1)")
    assert inst.close() == ["killed: sleep 600 (pid 1)"]
    assert inst.close() == []


def test_a_non_positive_timeout_is_refused_before_anything_spawns() -> None:
    with pytest.raises(ValueError, match="timeout must be positive"):
        run(["/nonexistent/never-run"], timeout=0)
