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
import signal
from collections.abc import Callable, Generator, Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from .binary import Binary, BinaryError, resolve_binary
from .case import DEFECT_PREFIX, Case, run_case
from .catalog import cases_of
from .instance import SESSION_VAR, Instance, session_token
from .snapshot import TranscriptExtension

__all__ = ["binary_for_session", "kill_leftovers", "marked_processes", "report_binary"]

# The guards (basetemp, scratch paths), the reaping of orphans of runs killed
# hard, build progress and the list of kept scratch roots live in their own plugin.
pytest_plugins = ["harness.hardening"]

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
    cases = list(cases_of(obj))
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


# ---------------------------------------------------------------------------
# Leftovers at the end of the session. Instance cleanups kill what a case
# registered; this catches what slipped past them (a daemon that called
# setsid, a grandchild that left its group): every child carries
# SESSION_VAR=<this process's token>, so whatever still does at the end was
# started by this session and outlived it.

_LEFTOVERS_KEY = "contenox_e2e_leftovers"
_worker_leftovers: list[str] = []


def _proc_argv(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return "?"
    return " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a) or "?"


def marked_processes(token: str | None = None, proc: str = "/proc") -> list[tuple[int, str]]:
    """Live processes whose environment holds ``SESSION_VAR=token``: (pid, argv)."""
    needle = f"\0{SESSION_VAR}={token or session_token()}\0".encode()
    found = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"{proc}/{name}/environ", "rb") as f:
                environ = f.read()
        except OSError:
            # Gone already, or not ours to read: neither is our leftover.
            continue
        if needle in b"\0" + environ:
            found.append((int(name), _proc_argv(int(name))))
    return found


def kill_leftovers(token: str | None = None) -> list[str]:
    """Kill every process marked with ``token``; return "pid N: argv" for each one killed."""
    killed: dict[int, str] = {}
    # A leftover may fork while we look; a few rounds catch its children too.
    for _ in range(5):
        found = [(pid, argv) for pid, argv in marked_processes(token) if pid not in killed]
        if not found:
            break
        for pid, argv in found:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed[pid] = argv
    return [f"pid {pid}: {argv}" for pid, argv in sorted(killed.items())]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """xdist controller: gather what each worker found left running at its end."""
    _worker_leftovers.extend(getattr(node, "workeroutput", {}).get(_LEFTOVERS_KEY, []))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Kill what the session left running, and fail the run naming each process."""
    leftovers = kill_leftovers()
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # An xdist worker: its exit status is not the run's; the controller reports.
        workeroutput[_LEFTOVERS_KEY] = leftovers
        return
    leftovers += _worker_leftovers
    if not leftovers:
        return
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    message = (
        "processes the suite started were still running at the end of the session; "
        "they were killed. A case (or the harness) left them behind: stop them in the "
        "case, or register a cleanup on the instance.\n  " + "\n  ".join(leftovers)
    )
    if reporter is not None:
        reporter.write_sep("=", "processes left running after the session", red=True)
        reporter.write_line(message)
    else:
        print(message)
