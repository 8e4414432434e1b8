"""Every e2e test leaves a transcript: a snapshot under cases/__snapshots__/, or a reason not to."""

from __future__ import annotations

from pathlib import Path

from harness.catalog import e2e_tests

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "cases"
SNAPSHOTS = CASES / "__snapshots__"


def test_every_e2e_test_has_a_snapshot_or_says_why_not() -> None:
    missing = [
        f"cases/__snapshots__/{name}.yaml"
        for name, why in sorted(e2e_tests(CASES).items())
        if why is None
        and not (SNAPSHOTS / f"{name}.yaml").exists()
        # A parametrized test leaves one transcript per variant: <test>[<id>].yaml.
        and not any((SNAPSHOTS / name).parent.glob(f"{Path(name).name}[[]*].yaml"))
    ]
    assert not missing, (
        "these e2e tests leave no transcript: run `tox -e e2e -- -k <test> --snapshot-update`, "
        "review and commit the file, or mark the test "
        '@pytest.mark.no_transcript(reason="…"):\n  ' + "\n  ".join(missing)
    )


def test_every_committed_dialog_belongs_to_an_e2e_test() -> None:
    # syrupy cannot relate dialogs/<module>/ to a module it does not sit beside,
    # so an orphan would never be reported unused by the e2e run: this is the check.
    tests = e2e_tests(CASES)
    orphans = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "dialogs").rglob("*.json"))
        if f"{p.parent.name}/{p.stem.split('[')[0]}" not in tests
    ]
    assert not orphans, "dialogs that belong to no e2e test (delete them):\n  " + "\n  ".join(
        orphans
    )


def test_every_committed_transcript_belongs_to_an_e2e_test() -> None:
    # --snapshot-update deletes a snapshot only when its own test ran and passed
    # without recording it (harness.plugin); one whose test is gone has no test to
    # run, so it is found here, from the catalog, whatever a run selected.
    tests = e2e_tests(CASES)
    orphans = [
        str(p.relative_to(ROOT))
        for p in sorted(SNAPSHOTS.rglob("*.yaml"))
        if f"{p.parent.name}/{p.stem.split('[')[0]}" not in tests
    ]
    assert not orphans, "transcripts that belong to no e2e test (delete them):\n  " + "\n  ".join(
        orphans
    )


def test_most_transcripts_with_a_dialog_carry_the_model_demand() -> None:
    with_dialog = [p for p in SNAPSHOTS.rglob("*.yaml") if "\n- dialog: " in p.read_text()]
    with_demand = [p for p in with_dialog if "\nmodel_demand:\n" in p.read_text()]
    assert with_dialog, "no transcript registers a dialog: is cases/__snapshots__ there?"
    share = len(with_demand) / len(with_dialog)
    lacking = sorted(str(p.relative_to(ROOT)) for p in set(with_dialog) - set(with_demand))
    assert share >= 0.9, f"{share:.0%} carry model_demand; these do not:\n  " + "\n  ".join(lacking)


def test_the_check_sees_a_test_without_a_snapshot(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "test_area.py").write_text(
        "import pytest\n\n"
        "def test_leaves_one(instance):\n    pass\n\n"
        '@pytest.mark.no_transcript(reason="a race")\n'
        "def test_opts_out(instance):\n    pass\n"
    )
    assert e2e_tests(cases) == {
        "test_area/test_leaves_one": None,
        "test_area/test_opts_out": "a race",
    }
