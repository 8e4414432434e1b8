"""The pytest plugin (entry point ``pytest11``): the binary, and an instance per test.

Fixtures:

``contenox_binary``
    The resolved :class:`~harness.binary.Binary`, once per session (per xdist
    worker; the build itself happens once per machine under a file lock).
``instance``
    A fresh :class:`~harness.instance.Instance`. Deleted after a passing test;
    kept after a failing one (or with ``CONTENOX_E2E_KEEP=1``), and its path is
    printed in the failure report.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from .binary import Binary, BinaryError, resolve_binary
from .case import DEFECT_PREFIX, Case, run_case
from .catalog import _cases_of
from .instance import Instance
from .snapshot import TranscriptExtension

__all__ = ["binary_for_session", "report_binary"]

_resolved: Binary | None = None
_failed: BinaryError | None = None

_INSTANCE = pytest.StashKey[Instance]()
_FAILED = pytest.StashKey[bool]()


def binary_for_session() -> Binary:
    """Resolve the binary once per process; a failure is remembered, not retried."""
    global _resolved, _failed
    if _resolved is None and _failed is None:
        try:
            _resolved = resolve_binary()
        except BinaryError as err:
            _failed = err
    if _failed is not None:
        raise _failed
    assert _resolved is not None
    return _resolved


def report_binary() -> str:
    """The header line naming the binary, its version and how it was obtained.

    Stops the whole run with one message when there is no binary to be had.
    """
    try:
        return binary_for_session().header()
    except BinaryError as err:
        pytest.exit(f"no contenox binary: {err}", returncode=4)


def _keep_requested() -> bool:
    return os.environ.get("CONTENOX_E2E_KEEP", "") not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def contenox_binary() -> Binary:
    """The contenox binary every instance runs."""
    try:
        return binary_for_session()
    except BinaryError as err:
        pytest.exit(f"no contenox binary: {err}", returncode=4)


@pytest.fixture
def instance(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    contenox_binary: Binary,
) -> Iterator[Instance]:
    """A fresh scratch contenox: ``home/`` (HOME), ``work/`` (cwd), ``tmp/`` (TMPDIR)."""
    name = request.node.name[:40]
    inst = Instance.create(
        tmp_path_factory.mktemp(name, numbered=True), binary=contenox_binary.path
    )
    request.node.stash[_INSTANCE] = inst
    yield inst
    leftovers = inst.close()
    if not request.node.stash.get(_FAILED, False) and not _keep_requested() and not leftovers:
        inst.remove()
    if leftovers:
        pytest.fail(
            "the case left processes running; they were killed with their process groups:\n  "
            + "\n  ".join(leftovers)
            + f"\nscratch root kept at {inst.root}",
            pytrace=False,
        )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    inst = item.stash.get(_INSTANCE, None)
    if inst is None:
        return
    if report.failed:
        item.stash[_FAILED] = True
    if report.failed or (report.when == "teardown" and _keep_requested()):
        report.sections.append(("contenox scratch root", f"kept at {inst.root}"))


def _case_function(case: Case) -> Callable[[Instance, SnapshotAssertion], None]:
    def run(instance: Instance, snapshot: SnapshotAssertion) -> None:
        transcript = run_case(case, instance)
        if case.snapshot and case.defect is None:
            assert snapshot(extension_class=TranscriptExtension) == dict(transcript.data)

    run.__name__ = case.test_name
    run.__doc__ = case.name
    return run


def pytest_pycollect_makeitem(
    collector: pytest.Module | pytest.Class, name: str, obj: object
) -> list[pytest.Function] | None:
    """Collect every module-level Case (or list of Cases) as its own test item."""
    cases = list(_cases_of(obj))
    if not cases:
        return None
    items = []
    for case in cases:
        item = pytest.Function.from_parent(
            collector, name=case.test_name, callobj=_case_function(case)
        )
        if case.defect is not None:
            item.add_marker(pytest.mark.xfail(strict=True, reason=DEFECT_PREFIX + case.defect))
        items.append(item)
    return items


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    reason = getattr(report, "wasxfail", "")
    longrepr: Any = report.longrepr
    if report.failed and isinstance(longrepr, str) and longrepr.startswith("[XPASS(strict)]"):
        text = longrepr.removeprefix("[XPASS(strict)]").strip()
        if text.startswith(DEFECT_PREFIX):
            report.longrepr = (
                "[XPASS(strict)] defect fixed? remove the quarantine. It said: "
                + text.removeprefix(DEFECT_PREFIX)
            )
    elif reason.startswith(DEFECT_PREFIX) and report.when == "call":
        _seen.append((report.nodeid, reason.removeprefix(DEFECT_PREFIX)))


_seen: list[tuple[str, str]] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _seen:
        return
    terminalreporter.section("quarantined confirmed defects")
    for nodeid, reason in _seen:
        terminalreporter.write_line(f"{nodeid}\n    {reason}")
