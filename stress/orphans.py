"""A run killed hard leaves contenox running; the next run kills it and says so.

    python stress/orphans.py

The first run's case starts ``contenox run --policy run`` in the background
on a dialog whose ``echo`` the ``run`` envelope gates, waits until the run
has raised its ask (so contenox is mid-mission, waiting on nobody), records
its pid, and blocks. Then pytest's controller and its xdist worker are
killed with SIGKILL, as a CI cancel or the OOM killer does: no cleanup runs,
and contenox, which leads its own session, survives them. The check expects
it alive, then runs pytest again and expects the header to name the pid as
killed, and the process gone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from common import pytest_run

from harness import wait_until

SUITE = """
import os, threading

from harness import Script, ToolCall, Turn, mission_finish, probes, start_contenox


def test_holds_a_mission_until_killed(instance):
    instance.init()
    instance.use_script(Script(turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"message": "hi"})]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]))
    run = start_contenox(instance, "run", "--policy", "run", "echo hi")
    probes.await_approval(instance, 120, tool="native-echo.echo", run=run)
    with open(os.environ["ORPHAN_READY"], "w") as f:
        f.write(str(run.pid))
    threading.Event().wait(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="utf-8") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def main() -> int:
    problems: list[str] = []
    orphan = 0
    with tempfile.TemporaryDirectory(prefix="contenox-orphans-") as scratch:
        root = Path(scratch)
        ready = root / "ready"
        (root / "test_holds.py").write_text(textwrap.dedent(SUITE), encoding="utf-8")
        first = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "1"],
            cwd=root,
            env=dict(os.environ, ORPHAN_READY=str(ready)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: ready.exists() and ready.read_text(), 240, what="the mission's ask")
            orphan = int(ready.read_text())
            # The worker first, then the controller: nothing gets to clean up.
            for worker in _children(first.pid):
                os.kill(worker, signal.SIGKILL)
            first.kill()
        finally:
            first.kill()
            first.wait(timeout=60)
        try:
            if not _alive(orphan):
                problems.append(f"contenox (pid {orphan}) died with its run; nothing to reap")
            else:
                print(f"after SIGKILL of pytest and its worker, contenox pid {orphan} still runs")
                (root / "test_next.py").write_text("def test_next():\n    pass\n")
                outcome = pytest_run(["-p", "no:cacheprovider", "test_next.py"], cwd=root)
                out = outcome.result.stdout
                header = [
                    line for line in out.splitlines() if "earlier runs" in line or "pid " in line
                ]
                print("the next run's header:\n  " + "\n  ".join(header))
                if f"pid {orphan}: " not in out or "whose pytest is gone" not in out:
                    problems.append(f"the next run's header does not name pid {orphan}:\n{out}")
                if _alive(orphan):
                    problems.append(f"pid {orphan} is still running after the next run")
        finally:
            if orphan and _alive(orphan):
                os.kill(orphan, signal.SIGKILL)
    for problem in problems:
        print(f"FAIL: {problem}")
    print("orphan check: " + ("FAILED" if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
