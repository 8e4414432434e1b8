"""A case that hangs is killed at its timeout with its output, and the rest of the run goes on.

    python stress/hang.py

Writes a two-case suite into a scratch directory and runs it against the real
binary: one case's ``contenox run`` calls ``echo``, which the ``run``
envelope gates (its default_action is approve), so the run waits on an ask
nobody answers; its step has an 8-second timeout. The other case is ordinary.
Expected: the hanging case fails with CommandTimeout's partial output, the
other passes, nothing is left running, and the run ends (serially and under
``-n 2``).
"""

from __future__ import annotations

import sys
import tempfile
import textwrap
from pathlib import Path

from common import pytest_run

STEP_TIMEOUT = 8

SUITE = f"""
from harness import Case, Script, ToolCall, Turn, mission_finish, mission_report, step

HANGS = Case(
    name="a run waiting on an approval nobody answers",
    script=Script(turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {{"message": "hi"}})]),
        Turn(tool_calls=[mission_report("result", "echoed")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]),
    steps=[step("run", "--policy", "run", "echo hi", timeout={STEP_TIMEOUT})],
    snapshot=False,
)

NEIGHBOUR = Case(
    name="a neighbour lists its backend",
    script=Script(turns=["unused"]),
    steps=[step("backend", "list", stdout_has=["scripted"])],
    serves_all_turns=False,
    snapshot=False,
)
"""


def check(workers: list[str]) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="contenox-hang-") as scratch:
        Path(scratch, "test_hang.py").write_text(textwrap.dedent(SUITE), encoding="utf-8")
        outcome = pytest_run(
            ["-q", "-p", "no:cacheprovider", "-p", "no:randomly", "-rA", *workers],
            cwd=Path(scratch),
            timeout=300,
        )
    label = " ".join(workers) or "serial"
    print(f"[{label}] {outcome.line()}")
    out = outcome.result.stdout
    problems = []
    if outcome.result.timed_out:
        problems.append("the run itself did not finish within 300s")
    if outcome.counts["passed"] != 1 or outcome.counts["failed"] != 1:
        problems.append(f"expected 1 passed and 1 failed, got {dict(outcome.counts)}")
    hung = next((m for n, m in outcome.failures.items() if "approval" in n), "")
    if f"command overran its {STEP_TIMEOUT}s timeout" not in hung:
        problems.append("the hanging case did not fail with CommandTimeout")
    if "Partial output" not in hung or "stderr:\n    (empty)" in hung:
        problems.append("the timeout carried no partial output from contenox")
    if "processes left running" in out:
        problems.append("the timeout kill left processes running")
    for problem in problems:
        print(f"  PROBLEM: {problem}")
    if problems:
        print(out[-6000:])
    else:
        partial = hung[hung.find("Partial output") :][:600]
        print("  the hanging case failed with:\n    " + partial.replace("\n", "\n    "))
    return problems


def main() -> int:
    problems = check([]) + check(["-n", "2"])
    print("hang check: " + ("FAILED" if problems else "ok"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
