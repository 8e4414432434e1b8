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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.location import PyTestLocation

from . import pending
from .binary import Binary, BinaryError, resolve_binary
from .case import DEFECT_PREFIX, Case, check_demand, run_case, transcript_head
from .case.model import quarantine_mark
from .catalog import cases_of
from .instance import SESSION_VAR, Instance, session_token
from .pending import discard_pending, failure_message, write_pending
from .snapshot import DialogExtension, TranscriptExtension, first_difference, owned_by
from .workers import WorkersError, auto_workers, cores

__all__ = ["binary_for_session", "kill_leftovers", "marked_processes", "report_binary"]

# The guards (basetemp, scratch paths), the reaping of orphans of runs killed
# hard, build progress and the list of kept scratch roots live in their own plugin;
# the grouping of pending transcripts at the end of a run in harness.pending, which
# this module imports (so it is registered in pytest_configure, not listed here:
# pytest would warn that an imported module cannot be rewritten, an error under -W error).
pytest_plugins = ["harness.hardening"]

_resolved: Binary | None = None
_failed: BinaryError | None = None

_INSTANCE = pytest.StashKey[Instance]()
_FAILED = pytest.StashKey[bool]()
_PASSED = pytest.StashKey[bool]()
# Any phase of the test failed: it loses no snapshot.
_VERDICT_FAILED = pytest.StashKey[bool]()
# Snapshot files of the test it ran without recording, deleted once it passed its teardown.
_DELETE = pytest.StashKey[list[Path]]()
# Why an update of the test's snapshots was refused: it recorded differently twice.
_UNSTABLE = pytest.StashKey[str]()
# How a Case item was declared ("Case(name='…') (NAME[1] in test_area.py)").
_DECLARED = pytest.StashKey[str]()
# (module path, snapshot name) of every item collected: whose a snapshot file is.
_SNAPSHOT_NAMES = pytest.StashKey[set[tuple[str, str]]]()
_UNSTABLE_PROPERTY = "contenox_e2e_unstable"
_DELETED_PROPERTY = "contenox_e2e_deleted"

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


# tox -e e2e names no path of its own: it sets this variable, and a run whose
# arguments name no path runs the paths it holds. So `tox -e e2e` runs cases/,
# and `tox -e e2e -- cases/test_x.py -k y` runs that file only (with `cases` fixed
# before the posargs it ran the whole suite as well).
DEFAULT_PATHS_VAR = "CONTENOX_E2E_DEFAULT_PATHS"


def names_a_path(arg: str, root: Path) -> bool:
    """Whether a command-line argument is a test path under ``root`` (``x.py``, ``dir``,
    ``x.py::test``), not an option or an option's value such as ``--basetemp /tmp/x``."""
    if arg.startswith("-"):
        return False
    where = Path(arg.split("::", 1)[0])
    resolved = (root / where).resolve() if not where.is_absolute() else where.resolve()
    return resolved.exists() and resolved.is_relative_to(root.resolve())


# pytest options (and the plugins' the suite uses) whose value is the next argument:
# that value is never a path to run, even where it names one (--ignore cases/x.py).
_TAKES_VALUE = frozenset(
    "-k -m -n -p -o -c -W -r --basetemp --rootdir --ignore --ignore-glob --deselect "
    "--maxfail --durations --tb --junitxml --splits --group --dist --randomly-seed "
    "--confcutdir --log-level --store-durations-path".split()
)


def default_paths(args: list[str], root: Path, environ: dict[str, str]) -> list[str]:
    """The paths to add to ``args``: the variable's, unless ``args`` names one already."""
    paths = environ.get(DEFAULT_PATHS_VAR, "").split()
    if not paths:
        return []
    for before, arg in zip(["", *args], args, strict=False):
        if before not in _TAKES_VALUE and names_a_path(arg, root):
            return []
    return paths


def pytest_load_initial_conftests(
    early_config: pytest.Config, parser: pytest.Parser, args: list[str]
) -> None:
    args.extend(default_paths(args, Path.cwd(), dict(os.environ)))


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` under ``tox -e e2e``: several workers per core (see harness.workers)."""
    try:
        return auto_workers(os.environ, cores())
    except WorkersError as err:
        raise pytest.UsageError(str(err)) from err


def pytest_configure(config: pytest.Config) -> None:
    if not config.pluginmanager.is_registered(pending):
        config.pluginmanager.register(pending, "harness.pending")
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
    # syrupy's unused-snapshot check deletes goldens of tests that never ran (a
    # -k it re-reads case-sensitively against snapshot names, a test -x or Ctrl-C
    # never reached, one that failed at teardown). The harness decides per test
    # instead (see _snapshot_transcript and pytest_runtest_makereport).
    option = config.option
    for name in ("disable_unused_snapshots", "no_cleanup", "warn_unused_snapshots"):
        setattr(option, name, True)


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


def _described(item: pytest.Function) -> str:
    """An item as its author wrote it: the Case and where it sits, or the function and its line."""
    shown = item.stash.get(_DECLARED, None)
    if shown is not None:
        return shown
    path, line, _ = item.location
    return f"def {getattr(item, 'originalname', item.name)} ({path}:{(line or 0) + 1})"


def _shared_snapshots(items: list[Any]) -> str | None:
    """Two items of one module whose transcript (and dialogs) would be one file, named."""
    owners: dict[str, list[pytest.Function]] = {}
    for item in items:
        if not isinstance(item, pytest.Function) or "instance" not in item.fixturenames:
            continue
        location = PyTestLocation(item)
        where = TranscriptExtension.get_location(test_location=location, index=0)
        # A case-insensitive filesystem (macOS, Windows) would make these one file too.
        owners.setdefault(where.casefold(), []).append(item)
    clashes = [group for group in owners.values() if len(group) > 1]
    if not clashes:
        return None
    lines = []
    for group in clashes:
        location = PyTestLocation(group[0])
        path = Path(TranscriptExtension.get_location(test_location=location, index=0))
        try:
            shown = path.relative_to(group[0].config.rootpath)
        except ValueError:
            shown = path
        lines.append(
            f"{len(group)} tests would share the snapshot {shown} (and their dialogs/ files):\n"
            + "\n".join(f"    {_described(item)}: {item.nodeid}" for item in group)
        )
    return (
        "\n".join(lines) + "\nthe last writer would win under --snapshot-update and the next run "
        "fail the others: give each its own name (a Case's name is its test name, as a slug)"
    )


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Generator[None, Any, Any]:
    """Stop collection of a module in which two tests would share one snapshot file."""
    report = yield
    if isinstance(collector, pytest.Module) and report.passed:
        names = collector.config.stash.setdefault(_SNAPSHOT_NAMES, set())
        for item in report.result:
            if isinstance(item, pytest.Function):
                names.add((str(item.path), PyTestLocation(item).snapshot_name))
        problem = _shared_snapshots(list(report.result))
        if problem is not None:
            report.outcome = "failed"
            report.longrepr = problem
            report.result = []
    return report


@pytest.fixture
def transcripts() -> bool:
    """Whether ``instance`` snapshots its transcript after the test body.

    Off by default (the harness's own tests use fake binaries); ``cases/conftest.py``
    turns it on for every e2e test. A test module can override it.
    """
    return False


def _snapshot_path(snapshot: SnapshotAssertion, index: str | int) -> Path:
    return Path(snapshot.extension.get_location(test_location=snapshot.test_location, index=index))


def _shown(path: Path, item: pytest.Item) -> Path:
    try:
        return path.relative_to(item.config.rootpath)
    except ValueError:
        return path


def _missing(path: Path, item: pytest.Item) -> str:
    shown = _shown(path, item)
    return (
        f"no snapshot {shown} yet: create it with\n"
        f"    tox -e e2e -- -k {item.name} --snapshot-update-new-only\n"
        f"then review {shown} (and any dialogs/ file it wrote) and commit it"
    )


@dataclass(frozen=True)
class _Recording:
    """One snapshot a test recorded: the assertion to compare with, the data, its text and file."""

    snapshot: SnapshotAssertion
    data: object
    text: str
    path: Path

    def on_disk(self) -> str | None:
        try:
            return self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None


def _recordings(
    inst: Instance, item: pytest.Item, snapshot: SnapshotAssertion, *, transcript: bool
) -> list[_Recording]:
    """Check model demand, then what this run recorded: the transcript and each dialog."""
    __tracebackhide__ = True
    if inst.recorder.title is None:
        doc = getattr(getattr(item, "obj", None), "__doc__", None) or ""
        inst.recorder.title = doc.strip().split("\n")[0].strip() or item.name
    try:
        check_demand(inst, serves_all_turns=inst.recorder.demand_checked)
    except AssertionError as err:
        pytest.fail(str(err), pytrace=False)
    found = []
    if transcript:
        data = inst.recorder.transcript(transcript_head(inst))
        recorded = snapshot.use_extension(TranscriptExtension)
        text = str(recorded.extension.serialize(data))
        found.append(_Recording(recorded, data, text, _snapshot_path(recorded, 0)))
    dialogs = inst.recorder.dialogs
    golden = snapshot.use_extension(DialogExtension)
    for dialog in dialogs:
        # One dialog: dialogs/<area>/<test>.json; several: <test>[<backend>].json.
        index: str | int = dialog.key if len(dialogs) > 1 else 0
        # Scratch and machine paths a case put in a dialog would differ on every machine.
        text = inst.recorder.redactor().only_paths(dialog.script.dumps())
        # One assertion each: syrupy's ``snapshot(name=…)`` renames the assertion it is
        # called on, so a shared one would compare every dialog with the last name.
        own = snapshot.use_extension(DialogExtension)
        found.append(
            _Recording(
                own(name=index) if isinstance(index, str) else own,
                text,
                text,
                _snapshot_path(golden, index),
            )
        )
    return found


def _stale(item: pytest.Item, snapshot: SnapshotAssertion, used: list[_Recording]) -> list[Path]:
    """Snapshot files of this test that this run did not record (a dialog it no longer
    registers, the transcript of a test that now opts out)."""
    taken = {r.path for r in used}
    names = item.config.stash.get(_SNAPSHOT_NAMES, set())
    stale = []
    for extension, indexed in ((TranscriptExtension, False), (DialogExtension, True)):
        assertion = snapshot.use_extension(extension)
        directory = Path(extension.dirname(test_location=assertion.test_location))
        name = extension.get_snapshot_name(test_location=assertion.test_location, index=0)
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob(f"*.{extension.file_extension}")):
            stem = path.name.removesuffix(f".{extension.file_extension}")
            if path in taken or not owned_by(name, stem, indexed=indexed):
                continue
            # <test>[x].json is the only dialog of a parametrized test_x[x], not test_x's.
            if stem != name and (str(item.path), stem) in names:
                continue
            stale.append(path)
    return stale


def _rerun(item: pytest.Function, inst: Instance, first: list[_Recording]) -> str | None:
    """Run the test again in a fresh scratch root of another length; what differs, or None."""
    factory, binary, snapshot = (
        item.funcargs[name] for name in ("tmp_path_factory", "contenox_binary", "snapshot")
    )
    assert isinstance(factory, pytest.TempPathFactory) and isinstance(binary, Binary)
    assert isinstance(snapshot, SnapshotAssertion)
    # Another name length: a root of another length wraps a pty screen elsewhere.
    again = Instance.create(
        factory.mktemp(item.name[:40] + "-second-run", numbered=True), binary=binary.path
    )
    again.recorder.title = inst.recorder.title
    item.funcargs["instance"] = again
    try:
        item.runtest()
        second = _recordings(again, item, snapshot, transcript=_opt_out(item) is None)
    except (Exception, pytest.fail.Exception) as err:
        return f"the second run failed: {str(err).strip().splitlines()[0] if str(err) else err!r}"
    finally:
        item.funcargs["instance"] = inst
        leftovers = again.close()
        again.remove()
    if leftovers:
        return "the second run left processes running:\n  " + "\n  ".join(leftovers)
    seconds = {r.path: r for r in second}
    for recording in first:
        other = seconds.get(recording.path)
        if other is None:
            return f"the second run did not record {_shown(recording.path, item)}"
        if other.text != recording.text:
            return f"{_shown(recording.path, item)} differs at " + first_difference(
                recording.text, other.text
            )
    extra = sorted(set(seconds) - {r.path for r in first})
    if extra:
        return f"the second run also recorded {_shown(extra[0], item)}"
    return None


def _snapshot_transcript(
    inst: Instance, item: pytest.Function, snapshot: SnapshotAssertion, *, transcript: bool = True
) -> None:
    """Compare what the test recorded with its snapshots; under an update, write it if stable."""
    __tracebackhide__ = True
    config = item.config
    update = bool(config.getoption("update_snapshots", False))
    new_only = bool(config.getoption("update_new_snapshots_only", False)) and not update
    recordings = _recordings(inst, item, snapshot, transcript=transcript)
    if not update and not new_only:
        for recording in recordings:
            if not recording.path.exists():
                pytest.fail(_missing(recording.path, item), pytrace=False)
    # What an update would write: missing goldens, and under --snapshot-update changed ones.
    writes = [
        r for r in recordings if (on_disk := r.on_disk()) is None or (update and on_disk != r.text)
    ]
    if writes and (update or new_only):
        difference = _rerun(item, inst, recordings)
        if difference is not None:
            item.stash[_UNSTABLE] = difference
            pytest.fail(
                f"unstable: {item.nodeid} recorded something else when run a second time, "
                f"so its snapshots were not updated: {difference}\n"
                "a golden must depend on nothing but contenox's behaviour: make the case wait "
                "for the state it snapshots, or redact what differs",
                pytrace=False,
            )
    for recording in recordings:
        _compare(recording.snapshot, recording.data, recording.path, item)
    if new_only:
        return
    stale = _stale(item, snapshot, recordings)
    if not stale:
        return
    if update:
        # Deleted once the test has passed its teardown too (pytest_runtest_makereport).
        item.stash[_DELETE] = stale
        return
    listed = "\n  ".join(str(_shown(p, item)) for p in stale)
    pytest.fail(
        f"snapshots of this test that it no longer records:\n  {listed}\n"
        f"delete them with tox -e e2e -- -k {item.name} --snapshot-update (they go once "
        "the test passes), then commit the deletion",
        pytrace=False,
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


def _quarantined(item: pytest.Item) -> bool:
    # A quarantined (xfail) test tells its own story: its snapshots are neither
    # compared nor written, so a fixed defect still reports XPASS(strict).
    return item.get_closest_marker("xfail") is not None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After a passing body: the transcript's check, a part of the test's own verdict.

    A transcript that differs fails the test (the call phase), so ``-x``,
    ``--lf`` and a CI summary count it as a failed test, not a teardown error.
    """
    __tracebackhide__ = True
    result = yield
    inst = item.stash.get(_INSTANCE, None)
    if inst is None or not isinstance(item, pytest.Function) or _quarantined(item):
        return result
    if not item.funcargs.get("transcripts", False):
        return result
    snapshot = item.funcargs["snapshot"]
    assert isinstance(snapshot, SnapshotAssertion)
    # Demand may read the captured state: before the root is removed.
    # An opted-out test still keeps its dialogs and its demand checked.
    _snapshot_transcript(inst, item, snapshot, transcript=_opt_out(item) is None)
    return result


@pytest.fixture
def instance(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    contenox_binary: Binary,
    snapshot: SnapshotAssertion,
    transcripts: bool,
) -> Iterator[Instance]:
    """A fresh scratch contenox: ``home/`` (HOME), ``work/`` (cwd), ``tmp/`` (TMPDIR).

    After the body of an e2e test that passed, the model demand is checked and
    the recorded transcript (and every dialog registered) is compared with its
    snapshot, as part of the test's call, unless the test says
    ``@pytest.mark.no_transcript(reason=…)``. At teardown, processes left running
    fail the test.
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
    if report.failed:
        item.stash[_VERDICT_FAILED] = True
    if report.when == "call":
        item.stash[_PASSED] = report.passed
        reason = _opt_out(item)
        if reason is not None and "transcripts" in getattr(item, "fixturenames", ()):
            report.user_properties.append((NO_TRANSCRIPT, reason))
        unstable = item.stash.get(_UNSTABLE, None)
        if unstable is not None:
            report.user_properties.append((_UNSTABLE_PROPERTY, unstable))
    if report.when == "teardown":
        doomed = item.stash.get(_DELETE, [])
        # Only a test that ran to a passing verdict, in every phase, loses a snapshot.
        passed = item.stash.get(_PASSED, False) and not item.stash.get(_VERDICT_FAILED, False)
        if passed:
            for path in doomed:
                path.unlink(missing_ok=True)
                report.user_properties.append((_DELETED_PROPERTY, str(_shown(path, item))))
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
    where = Path(str(collector.path)).name
    for n, case in enumerate(cases):
        item = pytest.Function.from_parent(
            collector, name=case.test_name, callobj=_case_function(case)
        )
        held = f"{name}[{n}]" if len(cases) > 1 or obj is not case else name
        item.stash[_DECLARED] = f"Case(name={case.name!r}) ({held} in {where})"
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
    for key, value in report.user_properties:
        if key == NO_TRANSCRIPT and report.when == "call":
            _opted_out[report.nodeid] = str(value)
        elif key == _UNSTABLE_PROPERTY:
            _unstable[report.nodeid] = str(value)
        elif key == _DELETED_PROPERTY:
            _deleted.setdefault(report.nodeid, []).append(str(value))


# By node id: under xdist a report reaches this hook once per process that
# sees it, and the list is printed once, by the process that has a terminal.
_seen: dict[str, str] = {}
_opted_out: dict[str, str] = {}
_unstable: dict[str, str] = {}
_deleted: dict[str, list[str]] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _seen:
        terminalreporter.section("quarantined confirmed defects")
        for nodeid, reason in sorted(_seen.items()):
            terminalreporter.write_line(f"{nodeid}\n    {reason}")
    if _opted_out:
        terminalreporter.section("e2e tests that leave no transcript")
        for nodeid, reason in sorted(_opted_out.items()):
            terminalreporter.write_line(f"{nodeid}\n    {reason}")
    if _unstable:
        terminalreporter.section("unstable transcripts: recorded differently twice, not updated")
        for nodeid, what in sorted(_unstable.items()):
            terminalreporter.write_line(
                nodeid + "".join(f"\n    {line}" for line in what.splitlines())
            )
    if _deleted:
        terminalreporter.section("snapshots deleted: their test passed without recording them")
        for nodeid, paths in sorted(_deleted.items()):
            terminalreporter.write_line(nodeid + "".join(f"\n    {p}" for p in sorted(set(paths))))


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
