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
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from .binary import Binary, BinaryError, resolve_binary
from .case import DEFECT_PREFIX, Case, check_demand, run_case, transcript_head
from .case.model import quarantine_mark
from .catalog import cases_of
from .instance import SESSION_VAR, Instance, session_token
from .pending import discard_pending, failure_message, write_pending
from .snapshot import DialogExtension, TranscriptExtension

__all__ = ["binary_for_session", "kill_leftovers", "marked_processes", "report_binary"]

# The guards (basetemp, scratch paths), the reaping of orphans of runs killed
# hard, build progress and the list of kept scratch roots live in their own plugin;
# the grouping of pending transcripts at the end of a run in harness.pending.
pytest_plugins = ["harness.hardening", "harness.pending"]

_resolved: Binary | None = None
_failed: BinaryError | None = None

_INSTANCE = pytest.StashKey[Instance]()
_FAILED = pytest.StashKey[bool]()
_PASSED = pytest.StashKey[bool]()

NO_TRANSCRIPT = "no_transcript"


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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{NO_TRANSCRIPT}(reason): this e2e test leaves no transcript snapshot, and why "
        "(a deliberately nondeterministic test: a race tried many times)",
    )
    config.addinivalue_line(
        "markers",
        "docs_disagree(reason, defect): two doc pages contradict each other; the case asserts "
        "what the binary does and what the reference pages say (a finding for the docs)",
    )


def _opt_out(item: pytest.Item) -> str | None:
    """The reason an item gives for leaving no transcript; a clear error without one."""
    marker = item.get_closest_marker(NO_TRANSCRIPT)
    if marker is None:
        return None
    reason = marker.kwargs.get("reason", marker.args[0] if marker.args else "")
    if not isinstance(reason, str) or not reason.strip():
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.{NO_TRANSCRIPT} needs a reason, e.g. "
            f'@pytest.mark.{NO_TRANSCRIPT}(reason="a race tried twelve times: the order '
            'of events differs per run")'
        )
    return reason.strip()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        _opt_out(item)


@pytest.fixture
def transcripts() -> bool:
    """Whether ``instance`` snapshots its transcript at teardown.

    Off by default (the harness's own tests use fake binaries); ``cases/conftest.py``
    turns it on for every e2e test. A test module can override it.
    """
    return False


def _snapshot_path(snapshot: SnapshotAssertion, index: str | int) -> Path:
    return Path(snapshot.extension.get_location(test_location=snapshot.test_location, index=index))


def _missing(path: Path, item: pytest.Item) -> str:
    try:
        shown = path.relative_to(item.config.rootpath)
    except ValueError:
        shown = path
    return (
        f"no snapshot {shown} yet: create it with\n"
        f"    tox -e e2e -- -k {item.name} --snapshot-update\n"
        f"then review {shown} (and any dialogs/ file it wrote) and commit it"
    )


def _snapshot_transcript(
    inst: Instance, item: pytest.Item, snapshot: SnapshotAssertion, *, transcript: bool = True
) -> None:
    """Check model demand, then compare the transcript and each dialog with its snapshot."""
    __tracebackhide__ = True
    if inst.recorder.title is None:
        doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
        inst.recorder.title = doc.strip().split("\n")[0].strip() or item.name
    try:
        check_demand(inst, serves_all_turns=inst.recorder.demand_checked)
    except AssertionError as err:
        pytest.fail(str(err), pytrace=False)
    update = bool(item.config.getoption("update_snapshots", False))
    if transcript:
        data = inst.recorder.transcript(transcript_head(inst))
        recorded = snapshot.use_extension(TranscriptExtension)
        path = _snapshot_path(recorded, 0)
        if not update and not path.exists():
            pytest.fail(_missing(path, item), pytrace=False)
        _compare(recorded, data, path, item)
    dialogs = inst.recorder.dialogs
    golden = snapshot.use_extension(DialogExtension)
    for dialog in dialogs:
        # One dialog: dialogs/<area>/<test>.json; several: <test>[<backend>].json.
        index: str | int = dialog.key if len(dialogs) > 1 else 0
        path = _snapshot_path(golden, index)
        if not update and not path.exists():
            pytest.fail(_missing(path, item), pytrace=False)
        _compare(
            golden(name=index) if isinstance(index, str) else golden,
            # Scratch and machine paths a case put in a dialog would differ on every machine.
            inst.recorder.redactor().only_paths(dialog.script.dumps()),
            path,
            item,
        )


def _compare(snapshot: SnapshotAssertion, data: object, path: Path, item: pytest.Item) -> None:
    """Compare with the snapshot; on a difference, leave the recording pending beside it."""
    __tracebackhide__ = True
    if snapshot == data:
        # Equal (or just rewritten by --snapshot-update): an older pending file is stale.
        discard_pending(path)
        return
    recorded = str(snapshot.extension.serialize(data))
    write_pending(path, recorded)
    try:
        shown: Path = path.relative_to(item.config.rootpath)
    except ValueError:
        shown = path
    pytest.fail(failure_message(path, recorded, shown, item.name), pytrace=False)


@pytest.fixture
def instance(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    contenox_binary: Binary,
    snapshot: SnapshotAssertion,
    transcripts: bool,
) -> Iterator[Instance]:
    """A fresh scratch contenox: ``home/`` (HOME), ``work/`` (cwd), ``tmp/`` (TMPDIR).

    At teardown, for an e2e test that passed, the model demand is checked and
    the recorded transcript (and every dialog registered) is compared with
    its snapshot, unless the test says ``@pytest.mark.no_transcript(reason=…)``.
    """
    __tracebackhide__ = True
    name = request.node.name[:40]
    # A root of one length whatever --basetemp is: a pty screen wraps around its paths.
    inst = Instance.create(
        tmp_path_factory.mktemp(name, numbered=True),
        binary=contenox_binary.path,
        fixed_length=True,
    )
    request.node.stash[_INSTANCE] = inst
    yield inst
    leftovers = inst.close()
    try:
        if leftovers:
            pytest.fail(
                "the case left processes running; they were killed with their process "
                "groups:\n  " + "\n  ".join(leftovers) + f"\nscratch root kept at {inst.root}",
                pytrace=False,
            )
        if transcripts:
            if request.node.stash.get(_PASSED, False):
                # Demand may read the captured state: before the root is removed.
                # An opted-out test still keeps its dialogs and its demand checked.
                opted_out = _opt_out(request.node) is not None
                _snapshot_transcript(inst, request.node, snapshot, transcript=not opted_out)
            else:
                # A failed, skipped or quarantined test tells its own story: its
                # snapshots are neither compared nor, to syrupy, unused. syrupy
                # has no public call for this; mark the item skipped in its session.
                snapshot.session.ran_item(request.node.nodeid, "skipped")
    except BaseException:
        request.node.stash[_FAILED] = True
        raise
    finally:
        if not request.node.stash.get(_FAILED, False) and not _keep_requested():
            inst.remove()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.when == "call":
        item.stash[_PASSED] = report.passed
        reason = _opt_out(item)
        if reason is not None and "transcripts" in getattr(item, "fixturenames", ()):
            report.user_properties.append((NO_TRANSCRIPT, reason))
    inst = item.stash.get(_INSTANCE, None)
    if inst is None:
        return
    if report.failed:
        item.stash[_FAILED] = True
    if report.failed or (report.when == "teardown" and _keep_requested()):
        report.sections.append(("contenox scratch root", f"kept at {inst.root}"))


def _case_function(case: Case) -> Callable[[Instance], None]:
    def run(instance: Instance) -> None:
        __tracebackhide__ = True
        run_case(case, instance)

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
            item.add_marker(quarantine_mark(case.defect))
        if not case.snapshot:
            item.add_marker(pytest.mark.no_transcript(reason="Case(snapshot=False)"))
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
        _seen[report.nodeid] = reason.removeprefix(DEFECT_PREFIX)
    if report.when == "call":
        for key, value in report.user_properties:
            if key == NO_TRANSCRIPT:
                _opted_out[report.nodeid] = str(value)


# By node id: under xdist a report reaches this hook once per process that
# sees it, and the list is printed once, by the process that has a terminal.
_seen: dict[str, str] = {}
_opted_out: dict[str, str] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _seen:
        terminalreporter.section("quarantined confirmed defects")
        for nodeid, reason in sorted(_seen.items()):
            terminalreporter.write_line(f"{nodeid}\n    {reason}")
    if _opted_out:
        terminalreporter.section("e2e tests that leave no transcript")
        for nodeid, reason in sorted(_opted_out.items()):
            terminalreporter.write_line(f"{nodeid}\n    {reason}")


# ---------------------------------------------------------------------------
# Leftovers at the end of the session. Instance cleanups kill what a case
# registered; this catches what slipped past them (a daemon that called
# setsid, a grandchild that left its group): every child carries
# SESSION_VAR=<this process's token>, so whatever still does at the end was
# started by this session and outlived it.

_LEFTOVERS_KEY = "contenox_e2e_leftovers"
_worker_leftovers: list[str] = []
_TOKEN_KEY = "contenox_e2e_token"
_worker_tokens: list[str] = []


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
    output = getattr(node, "workeroutput", {})
    _worker_leftovers.extend(output.get(_LEFTOVERS_KEY, []))
    token = output.get(_TOKEN_KEY)
    if token and token not in _worker_tokens:
        _worker_tokens.append(token)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Kill what the session left running, and fail the run naming each process."""
    config = session.config
    workeroutput = getattr(config, "workeroutput", None)
    if workeroutput is not None:
        # An xdist worker: every worker's children carry the run's one token, so a
        # worker that finished first would kill the processes of a case another
        # worker is still running. The controller sweeps once every worker is down.
        workeroutput[_LEFTOVERS_KEY] = []
        workeroutput[_TOKEN_KEY] = session_token()
        return
    leftovers = kill_leftovers() + _worker_leftovers
    for token in _worker_tokens:
        if token != session_token():
            leftovers += kill_leftovers(token)
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
