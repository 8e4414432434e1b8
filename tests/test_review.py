"""Pending transcripts: left beside the snapshot, grouped by change, accepted or rejected.

The end-to-end half runs pytest in a subprocess against the fake contenox
(tests/fakes) behind a launcher that can reword one notice, the way a product
change would; the rest builds pending files by hand and drives
``harness.tools.review`` on them.
"""

from __future__ import annotations

import io
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.pending import find_pending, group, hunks, pending_path, summary_lines
from harness.tools.review import main

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"

CASES = """
from harness import Case, Script, step

THREE = Script(turns=["one", "two", "three"])

RUNS = [
    Case(name=f"run {n} lands", script=THREE, steps=[step("run", "go", stdout_has=["three"])])
    for n in ("a", "b", "c")
]

LISTS = Case(
    name="the list is empty",
    script=THREE,
    steps=[step("mission", "list")],
    serves_all_turns=False,
)
"""


@pytest.fixture
def suite(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    built_once: Callable[[pytest.Pytester, str, Callable[[], None]], None],
) -> pytest.Pytester:
    # The fake, with its launch notice reworded while tmp_path/reword exists.
    launcher = tmp_path / "contenox"
    launcher.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            f"""\
            import os, subprocess, sys
            p = subprocess.run([sys.executable, {str(FAKE)!r}, *sys.argv[1:]],
                               stderr=subprocess.PIPE, text=True)
            err = p.stderr
            if os.path.exists({str(tmp_path / "reword")!r}):
                err = err.replace("Mission fired at agent", "Mission launched at agent")
            sys.stderr.write(err)
            sys.exit(p.returncode)
            """
        )
    )
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef transcripts():\n    return True\n")

    def record() -> None:
        pytester.makepyfile(test_area=CASES)
        result = pytester.runpytest_subprocess("--snapshot-update", "-p", "no:randomly")
        result.assert_outcomes(passed=4)

    # Recorded once per worker; each test gets a copy of the goldens.
    built_once(pytester, "test_review.suite", record)
    return pytester


def _snapshots(suite: pytest.Pytester) -> dict[str, str]:
    snapdir = suite.path / "__snapshots__" / "test_area"
    return {p.name: p.read_text() for p in sorted(snapdir.glob("*.yaml"))}


def _not_passed(result: pytest.RunResult) -> int:
    # A differing transcript fails its test (at teardown or at the call).
    outcomes = result.parseoutcomes()
    return outcomes.get("failed", 0) + outcomes.get("errors", 0)


RUN_TESTS = [f"test_run_{n}_lands" for n in ("a", "b", "c")]


def test_a_reworded_notice_leaves_one_pending_file_per_transcript_and_no_snapshot_changed(
    suite: pytest.Pytester, tmp_path: Path
) -> None:
    before = _snapshots(suite)
    (tmp_path / "reword").touch()
    result = suite.runpytest_subprocess("-p", "no:randomly", "-n", "2")
    assert _not_passed(result) == 3
    assert _snapshots(suite) == before
    snapdir = suite.path / "__snapshots__" / "test_area"
    assert sorted(p.name for p in snapdir.glob("*.new")) == [f"{t}.yaml.new" for t in RUN_TESTS]
    new = (snapdir / "test_run_a_lands.yaml.new").read_text()
    assert new == before["test_run_a_lands.yaml"].replace("fired", "launched")
    # Each failure names its pending file and the review; the run ends with the grouping,
    # read by the xdist controller from the files its workers wrote.
    out = result.stdout.str()
    assert "pending in __snapshots__/test_area/test_run_a_lands.yaml.new" in out
    result.stdout.fnmatch_lines(
        [
            "*= pending transcripts =*",
            "3 transcripts differ by one change:",
            "  change 1 (*): 3 transcripts",
            '    -    Mission fired at agent "run" under envelope "run".',
            '    +    Mission launched at agent "run" under envelope "run".',
            "    in test_area::test_run_a_lands, test_area::test_run_b_lands, "
            "test_area::test_run_c_lands",
            "review them (each change once): tox -e review; accept them all: "
            "python -m harness.tools.review --accept *",
        ]
    )
    assert out.count("= pending transcripts =") == 1


def test_accept_all_makes_the_next_run_green_with_the_snapshots_rewritten(
    suite: pytest.Pytester, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _snapshots(suite)
    (tmp_path / "reword").touch()
    suite.runpytest_subprocess("-p", "no:randomly")
    assert main(["--root", str(suite.path), "--accept-all"]) == 0
    assert "accepted 3" in capsys.readouterr().out
    after = _snapshots(suite)
    assert not find_pending(suite.path)
    assert after["test_run_b_lands.yaml"] == before["test_run_b_lands.yaml"].replace(
        "fired", "launched"
    )
    assert after["test_the_list_is_empty.yaml"] == before["test_the_list_is_empty.yaml"]
    again = suite.runpytest_subprocess("-p", "no:randomly")
    again.assert_outcomes(passed=4)
    assert "pending transcripts" not in again.stdout.str()


def test_a_run_that_passes_again_removes_its_stale_pending_files(
    suite: pytest.Pytester, tmp_path: Path
) -> None:
    (tmp_path / "reword").touch()
    assert _not_passed(suite.runpytest_subprocess("-p", "no:randomly")) == 3
    assert len(find_pending(suite.path)) == 3
    (tmp_path / "reword").unlink()
    result = suite.runpytest_subprocess("-p", "no:randomly", "-k", "run_a or run_b")
    result.assert_outcomes(passed=2)
    assert [p.name for p in find_pending(suite.path)] == ["test_run_c_lands"]
    # An old pending file is not this run's: the summary leaves it out.
    assert "pending transcripts" not in result.stdout.str()


# ---------------------------------------------------------------------------
# harness.tools.review on pending files made by hand.

MODULE = "def test_one(): pass\ndef test_two(): pass\ndef test_three(): pass\n"


def _transcript(notice: str, n: int = 1, indent: str = "    ") -> str:
    return (
        "test: t\ntranscript:\n- run: contenox run go\n  exit: 0\n  notices: |\n"
        + "".join(f"{indent}{notice} [UUID{n}]\n" for _ in range(1))
        + f"{indent}Mission [UUID{n}] finished: landed\n"
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """cases/test_area.py with three tests, their snapshots, and a dialog."""
    cases = tmp_path / "cases"
    (cases / "__snapshots__" / "test_area").mkdir(parents=True)
    (cases / "test_area.py").write_text(MODULE)
    (tmp_path / "dialogs" / "test_area").mkdir(parents=True)
    for test, n in (("test_one", 1), ("test_two", 2), ("test_three", 3)):
        _snap(tmp_path, test).write_text(_transcript("Mission fired", n))
    _dialog(tmp_path, "test_one").write_text('{"turns": ["hello"]}\n')
    return tmp_path


def _snap(root: Path, test: str) -> Path:
    return root / "cases" / "__snapshots__" / "test_area" / f"{test}.yaml"


def _dialog(root: Path, test: str) -> Path:
    return root / "dialogs" / "test_area" / f"{test}.json"


def _pend(snapshot: Path, text: str) -> Path:
    path = pending_path(snapshot)
    path.write_text(text)
    return path


def _two_changes(repo: Path) -> None:
    """test_one and test_two reword the notice (ids numbered differently); test_three
    and the dialog of test_one each change something else."""
    _pend(_snap(repo, "test_one"), _transcript("Mission launched", 1))
    _pend(_snap(repo, "test_two"), _transcript("Mission launched", 2))
    _pend(_snap(repo, "test_three"), _transcript("Mission fired", 3).replace("landed", "lost"))
    _pend(_dialog(repo, "test_one"), '{"turns": ["hello!"]}\n')


def test_hunks_are_the_changed_lines_without_their_positions() -> None:
    old = "a\nb\nc\nd\ne\n"
    new = "a\nB\nc\nd\ne\nf\n"
    found = hunks(old, new)
    assert [(h.removed, h.added) for h in found] == [(("b",), ("B",)), ((), ("f",))]


def test_the_same_change_in_many_transcripts_is_one_group(repo: Path) -> None:
    _two_changes(repo)
    groups = group(find_pending(repo))
    assert [[m.test_id for m in g.members] for g in groups] == [
        ["test_area::test_one", "test_area::test_two"],
        ["test_area::test_one (dialog)"],
        ["test_area::test_three"],
    ]
    assert [g.number for g in groups] == [1, 2, 3]
    assert len({g.id for g in groups}) == 3
    assert groups[0].hunks[0].lines() == [
        "-    Mission fired [UUID1]",
        "+    Mission launched [UUID1]",
    ]
    lines = summary_lines(groups)
    assert lines[0] == "3 transcripts and 1 dialog differ by 3 changes:"
    assert lines[1] == f"  change 1 ({groups[0].id}): 2 transcripts"


def test_a_notice_at_another_indentation_or_printed_twice_is_the_same_change(
    repo: Path,
) -> None:
    _pend(_snap(repo, "test_one"), _transcript("Mission launched", 1))
    twice = _transcript("Mission fired", 2, indent="      ")
    _snap(repo, "test_two").write_text(twice + twice)
    _pend(_snap(repo, "test_two"), (twice + twice).replace("fired", "launched"))
    groups = group(find_pending(repo))
    assert len(groups) == 1 and len(groups[0].members) == 2


def test_accept_moves_a_group_over_its_snapshots_and_leaves_the_others(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_changes(repo)
    first = group(find_pending(repo))[0]
    third = _snap(repo, "test_three").read_text()
    assert main(["--root", str(repo), "--accept", first.id]) == 0
    assert _snap(repo, "test_one").read_text() == _transcript("Mission launched", 1)
    assert _snap(repo, "test_two").read_text() == _transcript("Mission launched", 2)
    assert _snap(repo, "test_three").read_text() == third
    assert sorted(p.test_id for p in find_pending(repo)) == [
        "test_area::test_one (dialog)",
        "test_area::test_three",
    ]
    assert "accepted 2" in capsys.readouterr().out


def test_reject_deletes_a_group_by_number_and_one_transcript_by_test(repo: Path) -> None:
    _two_changes(repo)
    dialog = _dialog(repo, "test_one").read_text()
    assert main(["--root", str(repo), "--reject", "1", "test_area::test_one (dialog)"]) == 0
    assert _snap(repo, "test_one").read_text() == _transcript("Mission fired", 1)
    assert _dialog(repo, "test_one").read_text() == dialog
    assert [p.test_id for p in find_pending(repo)] == ["test_area::test_three"]


def test_accept_takes_one_transcript_out_of_its_group(repo: Path) -> None:
    _two_changes(repo)
    assert main(["--root", str(repo), "--accept", "test_area::test_two"]) == 0
    assert _snap(repo, "test_two").read_text() == _transcript("Mission launched", 2)
    assert _snap(repo, "test_one").read_text() == _transcript("Mission fired", 1)
    assert len(find_pending(repo)) == 3


def test_accept_all_and_reject_all(repo: Path) -> None:
    _two_changes(repo)
    assert main(["--root", str(repo), "--reject-all"]) == 0
    assert not find_pending(repo)
    assert _snap(repo, "test_three").read_text() == _transcript("Mission fired", 3)
    _two_changes(repo)
    assert main(["--root", str(repo), "--accept-all"]) == 0
    assert not find_pending(repo)
    assert _dialog(repo, "test_one").read_text() == '{"turns": ["hello!"]}\n'


def test_an_unknown_group_changes_nothing_and_names_the_groups(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_changes(repo)
    assert main(["--root", str(repo), "--accept", "nosuch"]) == 2
    err = capsys.readouterr().err
    assert "'nosuch' names no change" in err and "(change 1)" in err
    assert len(find_pending(repo)) == 4


def test_without_a_terminal_and_a_decision_it_lists_and_changes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _two_changes(repo)
    assert main(["--root", str(repo)], stdin=io.StringIO("a\n")) == 0
    out = capsys.readouterr().out
    assert "3 transcripts and 1 dialog differ by 3 changes:" in out
    assert "--accept-all" in out
    assert len(find_pending(repo)) == 4


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_a_terminal_it_asks_per_group_and_then_per_transcript(repo: Path) -> None:
    _two_changes(repo)
    out = io.StringIO()
    # Change 1: one by one (accept test_one, reject test_two); change 2: accept; 3: skip.
    answers = _Terminal("o\na\nr\na\ns\n")
    assert main(["--root", str(repo)], out=out, stdin=answers) == 0
    assert _snap(repo, "test_one").read_text() == _transcript("Mission launched", 1)
    assert _snap(repo, "test_two").read_text() == _transcript("Mission fired", 2)
    assert _dialog(repo, "test_one").read_text() == '{"turns": ["hello!"]}\n'
    assert [p.test_id for p in find_pending(repo)] == ["test_area::test_three"]
    shown = out.getvalue()
    assert "change 1/3: [a]ccept all 2" in shown
    assert "  test_area::test_two: [a]ccept, [r]eject, [s]kip? " in shown


def test_markdown_writes_each_change_once_with_its_count_and_tests(
    repo: Path, tmp_path: Path
) -> None:
    _two_changes(repo)
    report = tmp_path / "x.md"
    assert main(["--root", str(repo), "--markdown", str(report)]) == 0
    text = report.read_text()
    first = group(find_pending(repo))[0]
    assert text.startswith("## Pending transcripts\n\n**3 transcripts and 1 dialog differ by 3")
    assert f"### Change 1 (`{first.id}`): 2 files" in text
    assert "```diff\n-    Mission fired [UUID1]\n+    Mission launched [UUID1]\n```" in text
    assert "- `test_area::test_two` — `cases/__snapshots__/test_area/test_two.yaml`" in text
    assert f"--accept {first.id}" in text
    # Writing the summary decides nothing.
    assert len(find_pending(repo)) == 4


def test_stale_pending_files_are_reported_and_removed(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Equal to its snapshot already; of a test that is gone; of a module that is gone.
    _pend(_snap(repo, "test_one"), _snap(repo, "test_one").read_text())
    gone_test = _pend(_snap(repo, "test_four"), _transcript("Mission fired"))
    other = repo / "cases" / "__snapshots__" / "test_gone"
    other.mkdir()
    gone_module = _pend(other / "test_one.yaml", _transcript("Mission fired"))
    live = _pend(_snap(repo, "test_two"), _transcript("Mission launched", 2))
    assert main(["--root", str(repo), "--markdown", str(repo / "x.md")]) == 0
    out = capsys.readouterr().out
    assert "removed stale cases/__snapshots__/test_area/test_one.yaml.new: its snapshot " in out
    assert "test_area no longer has a test test_four" in out
    assert "its test module test_gone.py no longer exists" in out
    assert not gone_test.exists() and not gone_module.exists()
    assert [p.path for p in find_pending(repo)] == [live]
    assert "1 transcript differs by one change" in (repo / "x.md").read_text()


def test_nothing_pending_is_said_so(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(repo), "--markdown", str(repo / "x.md")]) == 0
    assert "no pending transcripts" in capsys.readouterr().out
    assert "No transcript differs" in (repo / "x.md").read_text()
