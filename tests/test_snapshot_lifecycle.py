"""Goldens under --snapshot-update: never lost, never shared, never flaky when written.

Each loss issue 25 found is reproduced here against a fake contenox
(tests/fakes): a deselected test (``-k`` by marker name, by a module name in
another case, ``-m``), a test ``-x`` or Ctrl-C never reached or interrupted,
a test that fails at teardown. None may lose a transcript or a dialog; only a
test that ran to a passing verdict loses a snapshot it no longer records.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"

AREA = """
import os, pathlib, time
import pytest
from harness import Case, Script, step

THREE = Script(turns=["one", "two", "three"])

SERVES = Case(name="a run serves every turn", script=THREE, steps=[step("run", "go")])
SHOW = Case(name="show the run", script=THREE, steps=[step("run", "go")])


@pytest.mark.slow_marker
def test_marked(instance):
    instance.contenox("version")


def test_breaks_on_demand(instance):
    instance.contenox("version")
    assert not os.environ.get("BREAK"), "broken on purpose"


def test_blocks_on_demand(instance):
    instance.contenox("version")
    if os.environ.get("BLOCK"):
        pathlib.Path(os.environ["BLOCK"]).write_text("inside")
        time.sleep(60)


def test_leaves_a_process(instance):
    instance.contenox("version")
    if os.environ.get("LEAVE"):
        instance.cleanups.append(lambda: "pid 0: a process left on purpose")
"""

OTHER = """
from harness import Case, step

OTHER = Case(name="the other area runs", steps=[step("version")])
"""

TESTS = [
    "test_a_run_serves_every_turn",
    "test_show_the_run",
    "test_marked",
    "test_breaks_on_demand",
    "test_blocks_on_demand",
    "test_leaves_a_process",
]


@pytest.fixture
def suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> pytest.Pytester:
    launcher = tmp_path / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    for name in ("CONTENOX_E2E_KEEP", "BREAK", "BLOCK", "LEAVE", "ROLL"):
        monkeypatch.delenv(name, raising=False)
    # As cases/conftest.py does: every test's instance snapshots its transcript.
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef transcripts():\n    return True\n")
    pytester.makeini("[pytest]\nmarkers =\n    slow_marker: a marker -k and -m can match\n")
    return pytester


def goldens(root: Path) -> dict[str, str]:
    """Every transcript and dialog under ``root``, by relative path."""
    return {
        str(p.relative_to(root)): p.read_text()
        for base in ("__snapshots__", "dialogs")
        for p in sorted((root / base).rglob("*"))
        if p.is_file()
    }


def run(suite: pytest.Pytester, *args: str) -> pytest.RunResult:
    return suite.runpytest_subprocess("-p", "no:randomly", "-p", "no:cacheprovider", *args)


def record(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=AREA, test_other=OTHER)
    result = run(suite, "--snapshot-update")
    result.assert_outcomes(passed=len(TESTS) + 1)
    written = goldens(suite.path)
    for test in TESTS:
        assert f"__snapshots__/test_area/{test}.yaml" in written
    assert "dialogs/test_area/test_a_run_serves_every_turn.json" in written


@pytest.fixture
def recorded(
    suite: pytest.Pytester, built_once: Callable[[pytest.Pytester, str, Callable[[], None]], None]
) -> dict[str, str]:
    """Both areas with their goldens written, and one stale dialog per test beside them.

    A stale ``<test>[gone].json`` is what --snapshot-update deletes once its test
    passes without recording it; every other golden must outlive any run below.
    The recording runs once per worker (:func:`record`); each test gets a copy.
    """
    built_once(suite, "test_snapshot_lifecycle.recorded", lambda: record(suite))
    for test in TESTS:
        (suite.path / "dialogs" / "test_area" / f"{test}[gone].json").write_text("{}\n")
    return goldens(suite.path)


def test_the_goldens_are_stable_and_a_stale_one_fails_a_run_without_update(
    suite: pytest.Pytester, recorded: dict[str, str]
) -> None:
    result = run(suite)
    result.assert_outcomes(passed=1, failed=len(TESTS))
    result.stdout.fnmatch_lines(
        ["*snapshots of this test that it no longer records:", "*test_marked[[]gone].json"]
    )
    assert goldens(suite.path) == recorded


@pytest.mark.parametrize(
    "selection",
    [
        ["-k", "not SHOW and not MARKER"],  # a Case's name and a marker, in another case
        ["-k", "not Other and not slow_marker"],  # a module name, case-insensitively
        ["-m", "not slow_marker"],
    ],
    ids=["k-case-and-marker", "k-module", "m-marker"],
)
def test_a_deselected_test_keeps_every_golden(
    suite: pytest.Pytester, recorded: dict[str, str], selection: list[str]
) -> None:
    result = run(suite, "--snapshot-update", *selection)
    assert result.ret == 0, result.stdout.str()
    left = goldens(suite.path)
    deselected = {"test_marked"} | ({"test_show_the_run"} if "SHOW" in selection[1] else set())
    for test in TESTS:
        stale = f"dialogs/test_area/{test}[gone].json"
        # The tests that ran and passed lose the stale dialog they no longer record ...
        assert (stale in left) is (test in deselected), (test, result.stdout.str())
    # ... and nothing else is touched: the deselected tests' goldens are all there.
    assert {k: v for k, v in recorded.items() if "[gone]" not in k}.items() <= left.items()
    result.stdout.fnmatch_lines(["*snapshots deleted: their test passed without recording them*"])


def test_x_keeps_the_goldens_of_every_test_it_never_reached(
    suite: pytest.Pytester, recorded: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BREAK", "1")
    result = run(suite, "--snapshot-update", "-x", "test_area.py")
    result.assert_outcomes(passed=3, failed=1)
    left = goldens(suite.path)
    for test in ("test_breaks_on_demand", "test_blocks_on_demand", "test_leaves_a_process"):
        assert f"dialogs/test_area/{test}[gone].json" in left
    assert {k: v for k, v in recorded.items() if "[gone]" not in k}.items() <= left.items()
    assert "dialogs/test_area/test_marked[gone].json" not in left


def test_a_teardown_failure_loses_nothing(
    suite: pytest.Pytester, recorded: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEAVE", "1")
    result = run(suite, "--snapshot-update", "-k", "leaves_a_process")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*the case left processes running*"])
    assert goldens(suite.path) == recorded


@pytest.mark.parametrize("workers", ["0", "2"])
def test_ctrl_c_loses_nothing(
    suite: pytest.Pytester, recorded: dict[str, str], tmp_path: Path, workers: str
) -> None:
    inside = tmp_path / "inside"
    env = {**os.environ, "BLOCK": str(inside), "PYTHONPATH": os.pathsep.join(sys.path)}
    argv = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider"]
    proc = subprocess.Popen(
        [*argv, "-n", workers, "--snapshot-update", "test_area.py"],
        cwd=suite.path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not inside.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert inside.exists(), "the blocking test never started"
        # Ctrl-C at a terminal: SIGINT to the whole foreground group.
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    text = out.decode(errors="replace")
    assert "KeyboardInterrupt" in text or "Interrupted" in text, text
    left = goldens(suite.path)
    # The interrupted test, and (serially) the one after it that never started.
    kept = ["test_blocks_on_demand"] + (["test_leaves_a_process"] if workers == "0" else [])
    for test in kept:
        assert f"dialogs/test_area/{test}[gone].json" in left, text
    assert {k: v for k, v in recorded.items() if "[gone]" not in k}.items() <= left.items()


def test_a_changed_transcript_is_a_failed_test_and_x_stops_at_it(
    suite: pytest.Pytester, recorded: dict[str, str]
) -> None:
    for test in TESTS:
        (suite.path / "dialogs" / "test_area" / f"{test}[gone].json").unlink()
    snap = suite.path / "__snapshots__" / "test_area" / "test_a_run_serves_every_turn.yaml"
    snap.write_text(snap.read_text().replace("three", "four"))
    result = run(suite, "-x", "test_area.py")
    # A failure of the test in its call phase, not an error at teardown; -x stops there.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*test_a_run_serves_every_turn*differs from what this run*"])


def test_new_only_writes_the_missing_goldens_and_no_other(
    suite: pytest.Pytester, recorded: dict[str, str]
) -> None:
    snap = suite.path / "__snapshots__" / "test_area" / "test_marked.yaml"
    snap.write_text(snap.read_text().replace("contenox version", "contenox changed"))
    suite.makepyfile(test_other=OTHER + 'NEW = Case(name="a new case", steps=[step("version")])\n')
    result = run(suite, "--snapshot-update-new-only", "test_other.py", "-k", "not marked")
    result.assert_outcomes(passed=2)
    assert (suite.path / "__snapshots__" / "test_other" / "test_a_new_case.yaml").exists()
    result = run(suite, "--snapshot-update-new-only", "-k", "marked")
    # An existing golden is not rewritten: it still fails against this run.
    result.assert_outcomes(failed=1)
    assert "changed" in snap.read_text()
    assert (
        goldens(suite.path).items()
        >= {k: v for k, v in recorded.items() if "test_marked.yaml" not in k}.items()
    )


SHARED = """
from harness import Case, step

FIRST = Case(name="it works", steps=[step("version")])
SECOND = Case(name="It works!", steps=[step("version")])
AGAIN = [FIRST, Case(name="something else", steps=[step("version")])]


def test_it_works(instance):
    instance.contenox("version")
"""


@pytest.mark.parametrize("workers", ["0", "2"])
def test_two_tests_that_would_share_a_snapshot_stop_collection(
    suite: pytest.Pytester, workers: str
) -> None:
    suite.makepyfile(test_shared=SHARED)
    result = run(suite, "-n", workers, "--snapshot-update")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*4 tests would share the snapshot __snapshots__/test_shared/test_it_works.yaml*",
            "*Case(name='it works') (FIRST in test_shared.py): test_shared.py::test_it_works",
            "*Case(name='It works!') (SECOND in test_shared.py)*",
            "*Case(name='it works') (AGAIN[[]0] in test_shared.py)*",
            "*def test_it_works (test_shared.py:*): test_shared.py::test_it_works",
        ]
    )
    assert not (suite.path / "__snapshots__").exists()


UNSTEADY = """
import os, random
from harness import Case, step

STEADY = Case(name="a steady case", steps=[step("version")])


def test_rolls_a_die(instance):
    roll = str(random.random()) if os.environ.get("ROLL") else "the same"
    instance.write("roll", "line one\\n" + roll + "\\n")
    instance.contenox("show-file", "roll")
"""


def test_an_update_that_records_differently_twice_is_refused(
    suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite.makepyfile(test_unsteady=UNSTEADY)
    monkeypatch.setenv("ROLL", "1")
    result = run(suite, "--snapshot-update")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*unstable: test_unsteady.py::test_rolls_a_die recorded something else when run "
            "a second time, so its snapshots were not updated: "
            "__snapshots__/test_unsteady/test_rolls_a_die.yaml differs at line *",
            "*first run:  *0.*",
            "*second run: *0.*",
            "*unstable transcripts: recorded differently twice, not updated*",
        ]
    )
    snapdir = suite.path / "__snapshots__" / "test_unsteady"
    assert sorted(p.name for p in snapdir.iterdir()) == ["test_a_steady_case.yaml"]

    # Steady, it is written; changed but steady, it is rewritten; a nondeterministic
    # change to an existing golden is refused as well, and leaves the golden alone.
    monkeypatch.delenv("ROLL")
    run(suite, "--snapshot-update").assert_outcomes(passed=2)
    golden = (snapdir / "test_rolls_a_die.yaml").read_text()
    assert "the same" in golden
    monkeypatch.setenv("ROLL", "1")
    run(suite, "--snapshot-update").assert_outcomes(passed=1, failed=1)
    assert (snapdir / "test_rolls_a_die.yaml").read_text() == golden
