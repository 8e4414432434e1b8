"""Processes of a run killed hard are found by the next run, killed, and named in its header."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import wait_until
from harness.environment import SESSION_VAR, child_env, process_start, session_token
from harness.orphans import find_orphans, owner_alive, reap_orphans


def _alive(pid: int) -> bool:
    """True while ``pid`` is a running process (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[bytes]]]:
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        proc.kill()
        proc.wait(timeout=10)


def _dead_token() -> str:
    """A token in the current format whose owner has exited."""
    gone = subprocess.Popen(["sleep", "30"])
    start = process_start(gone.pid)
    gone.kill()
    gone.wait(timeout=10)
    assert start is not None
    return f"{gone.pid}.{start}.deadbeef0000"


def _sleep(token: str, seconds: int) -> subprocess.Popen[bytes]:
    env = {"PATH": os.environ["PATH"], SESSION_VAR: token}
    return subprocess.Popen(["sleep", str(seconds)], env=env, start_new_session=True)


def _what_a_reaper_sees(pid: int) -> dict[str, object]:
    """What find_orphans reads of ``pid``: its start time and its session marker."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
        marker = [e for e in environ.split(b"\0") if e.startswith(SESSION_VAR.encode())]
    except OSError as e:
        marker = [repr(e).encode()]
    return {"pid": pid, "alive": _alive(pid), "start": process_start(pid), "marker": marker}


def _registered(directory: Path, *tokens: str) -> Path:
    directory.mkdir(exist_ok=True)
    for token in tokens:
        (directory / token).touch()
    return directory


def test_a_process_whose_pytest_is_gone_is_an_orphan_and_others_are_not(
    spawned: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    dead = _dead_token()
    live = f"{os.getppid()}.{process_start(os.getppid())}.cafe"  # pytest's parent: alive
    legacy = "0123456789abcdef"  # a token of an older harness: its owner cannot be told
    assert owner_alive(dead) is False
    assert owner_alive(session_token()) is True
    assert owner_alive(live) is True
    assert owner_alive(legacy) is None
    registry = _registered(tmp_path / "sessions", dead, live, legacy, session_token())
    orphan = _sleep(dead, 311)
    others = [_sleep(session_token(), 312), _sleep(legacy, 313), _sleep(live, 314)]
    # A dead run that never registered here belongs to another cache: not ours to judge.
    unregistered = _sleep(_dead_token(), 315)
    spawned.extend([orphan, *others, unregistered])
    assert [(o.pid, o.argv) for o in find_orphans(registry)] == [(orphan.pid, "sleep 311")]
    [reaped] = reap_orphans(registry)
    assert reaped.pid == orphan.pid
    assert orphan.wait(timeout=10) == -signal.SIGKILL
    for proc in (*others, unregistered):
        assert proc.poll() is None, f"{proc.args} was killed, but it is not an orphan here"
    # The dead run is struck off; the others stay registered.
    assert sorted(p.name for p in registry.iterdir()) == sorted([live, legacy, session_token()])


def test_a_recycled_owner_pid_does_not_keep_an_orphan_alive(
    spawned: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    # Our own pid, but another start time: the pid was reused by someone else.
    token = f"{os.getpid()}.1.feedface0000"
    assert owner_alive(token) is False
    orphan = _sleep(token, 316)
    spawned.append(orphan)
    registry = _registered(tmp_path / "s", token)
    seen = _what_a_reaper_sees(orphan.pid)  # before the reap: explains a miss (seen once in CI)
    reaped = reap_orphans(registry)
    assert orphan.pid in [o.pid for o in reaped], (reaped, seen, _what_a_reaper_sees(orphan.pid))


def test_a_run_registers_its_token_before_its_first_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONTENOX_E2E_CACHE", str(tmp_path / "cache"))
    child_env(tmp_path, tmp_path)
    assert (tmp_path / "cache" / "sessions" / session_token()).exists()


def test_nothing_registered_gone_means_no_scan(tmp_path: Path) -> None:
    # A /proc that cannot be listed would fail a scan; none happens.
    registry = _registered(tmp_path / "sessions", session_token())
    assert reap_orphans(registry, proc=str(tmp_path / "no-proc")) == []


# The first run: its case starts a child that ignores its stdin and runs
# long, then the test blocks until the run is killed from outside.
HOLDS = """
import os, threading
from harness import start_in

def test_holds_a_child_until_killed(instance):
    child = start_in(instance, ["sleep", "321"])
    with open(os.environ["READY_FILE"], "w") as f:
        f.write(str(child.pid))
    threading.Event().wait(300)
"""


def test_a_run_killed_hard_leaves_a_child_the_next_run_kills_and_names(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    launcher = tmp_path / "contenox"
    launcher.write_text("#!/bin/sh\necho 'contenox version v1.0.0'\n", encoding="utf-8")
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    # Both runs share a registry of their own, so no other run reaps this child first.
    monkeypatch.setenv("CONTENOX_E2E_CACHE", str(tmp_path / "cache"))
    ready = tmp_path / "ready"
    pytester.makepyfile(test_holds=HOLDS)
    first = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "1", "test_holds.py"],
        cwd=pytester.path,
        env=dict(os.environ, READY_FILE=str(ready)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_until(lambda: ready.exists() and ready.read_text(), 120, what="the child to start")
        child = int(ready.read_text())
        # SIGKILL the controller and its worker, as a CI cancel does; the
        # child leads its own session and survives, reparented.
        for line in subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(first.pid)], capture_output=True, text=True
        ).stdout.split():
            os.kill(int(line), signal.SIGKILL)
        first.kill()
    finally:
        first.wait(timeout=30)
    try:
        wait_until(lambda: owner_alive_of(child) is False, 30, what="the worker to be gone")
        assert _alive(child), "the child did not outlive its run; nothing to reap"

        pytester.makepyfile(test_next="def test_next(): pass\n")
        second = pytester.runpytest_subprocess("-p", "no:cacheprovider", "test_next.py")
        out = second.stdout.str()
        second.assert_outcomes(passed=1)
        assert "killed 1 process(es) left running by earlier runs whose pytest is gone" in out, out
        assert re.search(rf"pid {child}: sleep 321 \(started by pytest pid \d+, gone\)", out), out
        wait_until(lambda: not _alive(child), 10, what=f"pid {child} to die")
    finally:
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def owner_alive_of(pid: int) -> bool | None:
    """Whether the pytest that started ``pid`` still runs, read from its marker."""
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            entries = f.read().split(b"\0")
    except OSError:
        return None
    prefix = f"{SESSION_VAR}=".encode()
    token = next((e[len(prefix) :].decode() for e in entries if e.startswith(prefix)), "")
    return owner_alive(token)
