"""Reliability of the harness under faults, without contenox.

A fake contenox (a few lines of Python) stands in for the binary; pytest runs
in a subprocess (pytester), serially and under xdist, so these check what a
real run sees at its end: processes left behind are found, killed and named;
a hanging command is killed at its timeout with its output while the rest of
the run goes on. stress/ checks the same promises against the real binary.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.instance import SESSION_VAR, hermetic_env, session_token
from harness.plugin import kill_leftovers, marked_processes

# Answers every command at once, except `run`, which says it is waiting and
# then waits (like a run blocked on an approval nobody answers).
FAKE = """\
import os, sys, time
args = sys.argv[1:]
if args[:1] == ["run"]:
    print("Mission fired at agent \\"run\\" under envelope \\"run\\".", file=sys.stderr, flush=True)
    print("waiting for approval of native-echo.echo", flush=True)
    time.sleep(float(os.environ.get("FAKE_HANG", "300")))
    print("never printed")
elif args == ["version"]:
    print("contenox version v1.0.0")
else:
    print("ok " + " ".join(args))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    fake = pytester.path / "fake_contenox.py"
    fake.write_text(FAKE, encoding="utf-8")
    launcher = pytester.path / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {fake} "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    return pytester


def _alive(pid: int) -> bool:
    """True while ``pid`` is a running process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture
def reaper() -> Iterator[list[int]]:
    """pids a test expects to be dead; any that survived are killed afterwards."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


# A case that leaks a daemon the instance does not know about: `setsid -f`
# forks it into a new session, so the end-of-case group kill cannot reach it.
# (Its streams go to /dev/null: a daemon holding the command's pipes would
# keep `run` waiting until its timeout instead.)
LEAKS = """
import os, time

def _sleeping(pidfile):
    try:
        pid = open(pidfile).read().split()[0]
        return b"sleep" in open(f"/proc/{pid}/cmdline", "rb").read()
    except (OSError, IndexError):
        return False

def test_leaks_a_daemon(instance):
    pidfile = os.path.join(os.getcwd(), "daemons.pid")
    daemon = f"echo $$ >> {pidfile}; exec sleep 301 </dev/null >/dev/null 2>&1"
    # The command returns only once the daemon wrote its pid, that is after its
    # setsid(): a bare `setsid -f` returns at the fork, and the end-of-command
    # group kill could reach the child before it left the group.
    wait = f'setsid -f sh -c "$1"; while [ ! -s {pidfile} ]; do sleep 0.02; done'
    instance.run(["sh", "-c", wait, "sh", daemon], timeout=30).assert_success()
    # setsid -f returns once it has forked: wait until the daemon is the sleep,
    # or the end-of-session sweep can kill it before it wrote its pid.
    deadline = time.monotonic() + 30
    while not _sleeping(pidfile):
        assert time.monotonic() < deadline, "the daemon never started"
        time.sleep(0.02)

def test_minds_its_business(instance):
    instance.must("version")
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_process_that_outlives_the_session_is_killed_and_fails_the_run_by_name(
    suite: pytest.Pytester, reaper: list[int], xdist: list[str]
) -> None:
    suite.makepyfile(LEAKS)
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", *xdist, timeout=120)
    out = result.stdout.str()
    [daemon] = [int(p) for p in (suite.path / "daemons.pid").read_text().split()]
    reaper.append(daemon)
    pids = [int(p) for p in re.findall(r"pid (\d+): sleep 301", out)]
    # Every case passed on its own terms; the leak fails the run.
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED, out
    assert "processes left running after the session" in out, out
    assert pids == [daemon], out
    assert not _alive(daemon), f"pid {daemon} was reported but is still running"


def test_a_session_that_leaves_nothing_behind_passes(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        """
        def test_runs(instance):
            instance.must("version")
            instance.run(["sleep", "0.1"]).assert_success()
        """
    )
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2", timeout=120)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "processes left running" not in result.stdout.str()


def test_only_processes_marked_with_this_sessions_token_are_found(
    tmp_path: Path, reaper: list[int]
) -> None:
    env = hermetic_env(tmp_path, tmp_path)
    assert env[SESSION_VAR] == session_token()
    other = dict(env, **{SESSION_VAR: "another-session"})
    ours = subprocess.Popen(["sleep", "302"], env=env, start_new_session=True)
    theirs = subprocess.Popen(["sleep", "303"], env=other, start_new_session=True)
    reaper.extend([ours.pid, theirs.pid])
    try:
        assert (ours.pid, "sleep 302") in marked_processes()
        assert theirs.pid not in [pid for pid, _ in marked_processes()]
        assert kill_leftovers() == [f"pid {ours.pid}: sleep 302"]
        assert ours.wait(timeout=10) == -signal.SIGKILL
        assert theirs.poll() is None, "a process of another session was killed"
    finally:
        for proc in (ours, theirs):
            proc.kill()
            proc.wait(timeout=10)


HANGS = """
from harness import Case, Script, step

HANGS = Case(
    name="a run blocked on an approval nobody answers",
    script=Script(turns=["done"]),
    steps=[step("run", "--policy", "run", "echo hi", timeout=2)],
    snapshot=False,
)

PASSES = Case(
    name="a neighbour that just lists backends",
    steps=[step("backend", "list", stdout_has=["ok backend list"])],
    snapshot=False,
)
"""


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_hanging_case_is_killed_at_its_timeout_with_its_output_and_the_run_goes_on(
    suite: pytest.Pytester, xdist: list[str]
) -> None:
    suite.makepyfile(test_cases=HANGS)
    result = suite.runpytest_subprocess("-p", "no:cacheprovider", *xdist, timeout=120)
    out = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    assert "command overran its 2s timeout; its process group was killed" in out, out
    # The partial output: what the hung run printed before it was killed.
    assert "waiting for approval of native-echo.echo" in out, out
    assert 'Mission fired at agent "run"' in out, out
    assert "never printed" not in out
    assert "processes left running" not in out, "the timeout kill missed part of the group"
