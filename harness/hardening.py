"""Pytest hooks that keep a run safe and say what it is doing (loaded by harness.plugin).

- ``pytest_configure``: refuse a ``--basetemp`` pytest would empty that holds
  the real HOME or its ``.contenox``, and a scratch path with a control
  character, before pytest touches anything (:mod:`harness.guard`); on the
  controller, kill the processes of earlier runs whose pytest is gone
  (:mod:`harness.orphans`); send build progress to the terminal.
- ``pytest_report_header``: name each orphan that was killed.
- ``pytest_terminal_summary``: list every scratch root kept, passing tests'
  included, when ``CONTENOX_E2E_KEEP=1`` (the failure report alone shows
  only failing ones).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from . import binary
from .guard import check_basetemp, check_scratch_path
from .orphans import Orphan, reap_orphans

__all__ = ["KEPT_SECTION", "keep_requested"]

# The report section harness.plugin adds for a kept scratch root.
KEPT_SECTION = "contenox scratch root"

_REAPED = pytest.StashKey[list[Orphan]]()
_kept: list[str] = []


def keep_requested() -> bool:
    """Whether ``CONTENOX_E2E_KEEP`` asks to keep every scratch root."""
    return os.environ.get("CONTENOX_E2E_KEEP", "") not in ("", "0", "false", "no")


def pytest_configure(config: pytest.Config) -> None:
    basetemp = config.option.basetemp
    # pytest empties --basetemp on first use (a fixture asking for a tmp path,
    # or xdist starting its workers), both after configure: refuse before.
    check_basetemp(basetemp, pytest.UsageError)
    if basetemp is None:
        check_scratch_path(
            Path(os.environ.get("PYTEST_DEBUG_TEMPROOT") or tempfile.gettempdir()),
            "TMPDIR",
            pytest.UsageError,
        )
    if hasattr(config, "workerinput"):
        return  # an xdist worker: the controller reaped before starting it
    config.stash[_REAPED] = reap_orphans()
    binary.set_progress(lambda text: _write(config, text))


def _write(config: pytest.Config, text: str) -> None:
    """A progress line on the terminal as it happens (the binary is resolved in the header)."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        print(text, file=sys.stderr, flush=True)
        return
    for line in text.splitlines():
        reporter.write_line(line)
    reporter.flush()


def pytest_report_header(config: pytest.Config) -> list[str]:
    reaped = config.stash.get(_REAPED, [])
    if not reaped:
        return []
    return [
        f"killed {len(reaped)} process(es) left running by earlier runs whose pytest is gone "
        "(killed hard: a CI cancel, an OOM kill):",
        *(f"  {orphan.describe()}" for orphan in reaped),
    ]


@pytest.hookimpl(trylast=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    for title, content in report.sections:
        if title == KEPT_SECTION:
            path = content.removeprefix("kept at ").strip()
            if path not in _kept:
                _kept.append(path)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _kept or not keep_requested():
        return
    terminalreporter.section("contenox scratch roots kept (CONTENOX_E2E_KEEP)")
    for path in _kept:
        terminalreporter.write_line(path)
