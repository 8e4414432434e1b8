"""Cases as dataclasses: collection, expectations, model demand, snapshots, quarantine.

These run pytest in a subprocess against a fake contenox (tests/fakes), so
they check the harness's mechanics, never contenox itself.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import Case, CaseError, Script, Step, Turn, step

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"
THREE_JSON = Script(turns=["one", "two", "three"]).dumps()


@pytest.fixture
def suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> pytest.Pytester:
    launcher = tmp_path / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    # As cases/conftest.py does: every test's instance snapshots its transcript.
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef transcripts():\n    return True\n")
    return pytester


CASES = """
from harness import Case, Script, Turn, step

THREE = Script(turns=["one", "two", "three"])

SERVES_ALL = Case(
    name="a run that serves every turn passes",
    script=THREE,
    steps=[step("run", "go", stdout_has=["three"], notices_has=["finished: landed"])],
)

LEAVES_ONE = Case(
    name="a run that leaves a turn unserved fails",
    script=THREE,
    steps=[step("run", "go", env={"FAKE_SERVED": "2"})],
)

LEAVES_ONE_ON_PURPOSE = Case(
    name="a case may accept unserved turns",
    script=THREE,
    steps=[step("run", "go", env={"FAKE_SERVED": "1"})],
    serves_all_turns=False,
)

RUNS_PAST_END = Case(
    name="a run past the end is reported with the turn",
    script=THREE,
    steps=[step("run", "go", env={"FAKE_SERVED": "4"})],
)

WRONG_OUTPUT = Case(
    name="an unmet expectation names itself and shows both streams",
    script=THREE,
    steps=[step("run", "go", stdout_has=["four"], notices_lacks=["Mission fired"])],
)

VARIANTS = [
    Case(
        name=f"variant {n} runs",
        script=THREE,
        steps=[step("mission", "list")],
        serves_all_turns=False,
    )
    for n in ("a", "b")
]

FIXED_DEFECT = Case(
    name="a quarantined case that passes fails the run",
    script=THREE,
    steps=[step("run", "go")],
    defect="the fake used to print nothing (fake contenox, run)",
)

STILL_BROKEN = Case(
    name="a quarantined case that still fails is listed",
    script=THREE,
    steps=[step("run", "go", stdout_has=["never printed"])],
    defect="run never prints it (fake contenox, run)",
)
"""


def test_cases_are_collected_as_items_named_after_their_promise(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=CASES)
    result = suite.runpytest_subprocess("--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "test_area.py::test_a_run_that_serves_every_turn_passes",
            "test_area.py::test_a_run_that_leaves_a_turn_unserved_fails",
            "*test_variant_a_runs",
            "*test_variant_b_runs",
        ]
    )


def test_outcomes_demand_and_quarantine(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=CASES)
    result = suite.runpytest_subprocess("--snapshot-update", "-rA")
    out = result.stdout.str()
    result.assert_outcomes(passed=4, failed=4, xfailed=1)
    # The defect list is printed once.
    assert out.count("run never prints it (fake contenox, run)") == 2  # summary + -rA line
    # Unserved turns fail by default, naming how many and where.
    assert "the run took another branch: 1 of 3 turns was never served (turns[2] onward" in out
    # Running past the end names the turn asked for.
    assert "it asked for turns[3] but the dialog holds 3 turn(s)" in out
    # An unmet expectation names each one and prints argv and both streams.
    assert "expected stdout to contain 'four'" in out
    assert "expected notices not to contain 'Mission fired'" in out
    assert "$ " in out and "stdout:" in out and "stderr:" in out
    # A quarantined case that passes fails the run, saying so.
    assert "defect fixed? remove the quarantine" in out
    # The terminal summary lists every quarantined defect that still holds.
    assert "quarantined confirmed defects" in out
    assert "run never prints it (fake contenox, run)" in out


def test_snapshots_are_one_yaml_file_per_case_and_stable(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=CASES)
    suite.runpytest_subprocess("--snapshot-update", "-k", "serves_every_turn or variant")
    snapdir = suite.path / "__snapshots__" / "test_area"
    files = sorted(p.name for p in snapdir.iterdir())
    assert files == [
        "test_a_run_that_serves_every_turn_passes.yaml",
        "test_variant_a_runs.yaml",
        "test_variant_b_runs.yaml",
    ]
    text = (snapdir / "test_a_run_that_serves_every_turn_passes.yaml").read_text()
    assert text == textwrap.dedent(
        """\
        test: a run that serves every turn passes
        model_demand:
          scripted: 3 of 3 turns served
        transcript:
        - run: contenox init
          exit: 0
        - dialog: scripted
          turns:
          - one
          - two
          - three
        - run: contenox backend add scripted --type scripted-test --script [WORK]/a_run_that_serves_every_turn_passes.json
          exit: 0
        - run: contenox config set default-provider scripted-test
          exit: 0
        - run: contenox config set default-model scripted-test
          exit: 0
        - run: contenox run go
          exit: 0
          stdout: |
            three
          notices: |
            Mission fired at agent "run" under envelope "run".
            Mission [UUID1] finished: landed
        """
    )
    dialogs = suite.path / "dialogs" / "test_area"
    assert sorted(p.name for p in dialogs.iterdir()) == [
        "test_a_run_that_serves_every_turn_passes.json",
        "test_variant_a_runs.json",
        "test_variant_b_runs.json",
    ]
    assert (dialogs / "test_variant_a_runs.json").read_text() == THREE_JSON
    again = suite.runpytest_subprocess("-k", "serves_every_turn or variant", "-W", "error")
    again.assert_outcomes(passed=3)


def record_serves_every_turn(
    suite: pytest.Pytester, built_once: Callable[[pytest.Pytester, str, Callable[[], None]], None]
) -> None:
    """The area with the one golden of the case that serves every turn (recorded once per worker)."""

    def record() -> None:
        suite.makepyfile(test_area=CASES)
        suite.runpytest_subprocess("--snapshot-update", "-k", "serves_every_turn")

    built_once(suite, "test_case.serves_every_turn", record)


def test_a_changed_transcript_fails_against_its_snapshot(
    suite: pytest.Pytester, built_once: Callable[[pytest.Pytester, str, Callable[[], None]], None]
) -> None:
    record_serves_every_turn(suite, built_once)
    snap = next((suite.path / "__snapshots__" / "test_area").iterdir())
    snap.write_text(snap.read_text().replace("three", "THREE"))
    result = suite.runpytest_subprocess("-k", "serves_every_turn")
    # Its transcript did not match: a failure of the test itself, with the diff.
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*__snapshots__/test_area/test_a_run_that_serves_every_turn_passes.yaml differs "
            "from what this run recorded*",
            "*THREE*",
            "*tox -e e2e -- -k test_a_run_that_serves_every_turn_passes --snapshot-update*",
        ]
    )


def test_an_unused_snapshot_fails_the_run(
    suite: pytest.Pytester, built_once: Callable[[pytest.Pytester, str, Callable[[], None]], None]
) -> None:
    record_serves_every_turn(suite, built_once)
    # A dialog the test no longer registers (it used to register two).
    stale = (
        suite.path / "dialogs" / "test_area" / "test_a_run_that_serves_every_turn_passes[b].json"
    )
    stale.write_text("{}\n")
    result = suite.runpytest_subprocess("-k", "serves_every_turn")
    result.assert_outcomes(failed=1)
    assert "snapshots of this test that it no longer records" in result.stdout.str()
    assert stale.exists()
    suite.runpytest_subprocess("-k", "serves_every_turn", "--snapshot-update").assert_outcomes(
        passed=1
    )
    assert not stale.exists()


def test_a_missing_snapshot_names_the_command_and_the_file(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=CASES)
    result = suite.runpytest_subprocess("-k", "serves_every_turn")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*no snapshot __snapshots__/test_area/test_a_run_that_serves_every_turn_passes.yaml*",
            "*tox -e e2e -- -k test_a_run_that_serves_every_turn_passes --snapshot-update*",
        ]
    )


def test_a_failing_case_reports_its_failure_and_no_snapshot(suite: pytest.Pytester) -> None:
    suite.makepyfile(test_area=CASES)
    result = suite.runpytest_subprocess("-k", "unmet_expectation", "--snapshot-update")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "no snapshot" not in out and "differs from what this run recorded" not in out
    assert not (suite.path / "__snapshots__").exists()
    # Ten lines: the failure's own story, not the harness's frames or the instance repr.
    assert "Instance(" not in out
    assert "harness/case.py" not in out


def test_plain_functions_can_be_quarantined_too(suite: pytest.Pytester) -> None:
    suite.makepyfile(
        test_plain="""
        from harness import defect

        @defect("two plus two printed five (calculator, line 1)")
        def test_two_plus_two_is_four():
            assert 2 + 2 == 4
        """
    )
    result = suite.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*defect fixed? remove the quarantine*two plus two printed five*"])


def test_bad_cases_are_refused_before_anything_spawns() -> None:
    three = Script(turns=["x"])
    with pytest.raises(CaseError, match="has no steps"):
        Case(name="nothing", script=three, steps=[])
    with pytest.raises(CaseError, match="not one string"):
        Step(args="run go")
    with pytest.raises(CaseError, match="must be a list of strings"):
        step("run", stdout_has="oops")
    with pytest.raises(CaseError, match="give script or backends"):
        Case(name="x", script=three, backends={"b": three}, steps=[step("run")])
    with pytest.raises(CaseError, match="default_backend 'c'"):
        Case(name="x", backends={"b": three}, default_backend="c", steps=[step("run")])
    with pytest.raises(CaseError, match="a defect needs"):
        Case(name="x", script=three, steps=[step("run")], defect=" ")
    with pytest.raises(CaseError, match="states the promise"):
        Case(name="!!", script=three, steps=[step("run")])


def test_several_backends_write_one_dialog_each() -> None:
    a, b = Script(turns=["a"], model="ma"), Script(turns=[Turn(text="b")], model="mb")
    case = Case(name="two backends", backends={"alpha": a, "beta": b}, steps=[step("run")])
    assert case.dialog_filename("alpha") == "two_backends.alpha.json"
    single = Case(name="one backend", script=a, steps=[step("run")])
    assert single.dialog_filename("scripted") == "one_backend.json"
