"""What the stress scripts share: run pytest in a child with a timeout, read its JUnit XML."""

from __future__ import annotations

import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness import CommandTimeout, Result, run

ROOT = Path(__file__).resolve().parent.parent
# A full e2e run takes about 10 min on two cores at 3 workers per core (27 min at one
# per core); a stuck one must not hang CI or a stress run.
RUN_TIMEOUT = 2700.0


@dataclass(frozen=True)
class Outcome:
    """One pytest run: counts per outcome, the ids that failed, its output and wall time."""

    counts: Mapping[str, int]
    failed: Sequence[str]
    result: Result
    seconds: float
    failures: Mapping[str, str] = field(default_factory=dict)

    def line(self) -> str:
        shown = ", ".join(f"{v} {k}" for k, v in self.counts.items() if v) or "nothing ran"
        return f"{shown} in {self.seconds:.1f}s (exit {self.result.exit_code})"


def _read_junit(path: Path) -> tuple[dict[str, int], list[str], dict[str, str]]:
    counts = {"passed": 0, "failed": 0, "error": 0, "skipped": 0, "xfailed": 0}
    failed: list[str] = []
    messages: dict[str, str] = {}
    if not path.exists():
        return counts, failed, messages
    for case in ET.parse(path).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = {child.tag: child for child in case}
        skipped = kinds.get("skipped")
        if "failure" in kinds or "error" in kinds:
            tag = "failure" if "failure" in kinds else "error"
            counts["failed" if tag == "failure" else "error"] += 1
            failed.append(name)
            node = kinds[tag]
            messages[name] = (node.get("message") or "") + "\n" + (node.text or "")
        elif skipped is not None and skipped.get("type") == "pytest.xfail":
            counts["xfailed"] += 1
        elif skipped is not None:
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    return counts, failed, messages


def pytest_run(
    args: Sequence[str],
    *,
    cwd: Path = ROOT,
    env: Mapping[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
) -> Outcome:
    """``python -m pytest <args>`` in ``cwd``; counts come from its JUnit XML."""
    with tempfile.TemporaryDirectory(prefix="contenox-stress-") as scratch:
        junit = Path(scratch) / "junit.xml"
        argv = [sys.executable, "-m", "pytest", *args, f"--junitxml={junit}"]
        started = time.monotonic()
        try:
            result = run(argv, cwd=cwd, env=env if env is not None else os.environ, timeout=timeout)
        except CommandTimeout as err:
            result = err.result
        counts, failed, messages = _read_junit(junit)
    return Outcome(counts, failed, result, time.monotonic() - started, messages)
