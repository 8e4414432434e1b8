"""The mutant runner's mechanics: reading diffs, applying them, caching builds, judging runs.

No Go and no contenox: a fake ``go`` records its argv and writes a stand-in
binary, and the pytest runs are replaced by canned junit XML.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.tools.mutants import (
    CRASH,
    FLAKY,
    KILLED,
    SURVIVED,
    TIMEOUT,
    UNBUILDABLE,
    Mutant,
    MutantError,
    Outcome,
    apply_patch,
    build_mutant,
    classify,
    judge,
    load_catalog,
    markdown,
    matrix,
    parse_mutant,
    select,
    summary,
)

REPO = Path(__file__).resolve().parents[1]

SOURCE = "package main\n\nfunc verdict(ok bool) bool {\n\treturn ok\n}\n\nfunc main() {}\n"

DIFF = """\
# breaks: the verdict is what was asked for
# doc: contenox-cli.md, nowhere
# area: run missions
# by hand: contenox run "x"
#   real: exit 0; mutant: exit 1
--- a/main.go
+++ b/main.go
@@ -1,5 +1,5 @@
 package main
<SP>
 func verdict(ok bool) bool {
-\treturn ok
+\treturn !ok
 }
""".replace("<SP>", " ")  # a diff's blank context line is one space


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / f"{name}.diff"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_mutant_header_and_diff_are_read(tmp_path: Path) -> None:
    m = parse_mutant(_write(tmp_path, "verdict_inverted", DIFF))

    assert m.name == "verdict_inverted"
    assert m.breaks == "the verdict is what was asked for"
    assert m.areas == ("run", "missions")
    assert m.by_hand == 'contenox run "x"\nreal: exit 0; mutant: exit 1'
    [patch] = m.patches
    assert patch.path == "main.go"
    assert patch.hunks[0].old == [
        "package main",
        "",
        "func verdict(ok bool) bool {",
        "\treturn ok",
        "}",
    ]


def test_the_digest_covers_the_diff_not_the_header(tmp_path: Path) -> None:
    one = parse_mutant(_write(tmp_path, "a", DIFF))
    reworded = parse_mutant(_write(tmp_path, "b", DIFF.replace("nowhere", "somewhere")))
    changed = parse_mutant(_write(tmp_path, "c", DIFF.replace("return !ok", "return false")))

    assert one.digest == reworded.digest
    assert one.digest != changed.digest


def test_applying_a_hunk_changes_exactly_its_lines() -> None:
    m = parse_mutant_text(DIFF)

    assert apply_patch(SOURCE, m.patches[0]) == SOURCE.replace("return ok", "return !ok")


def test_a_hunk_is_found_when_the_file_moved_by_a_few_lines() -> None:
    m = parse_mutant_text(DIFF)
    shifted = "// a header comment\n// another\n" + SOURCE

    assert apply_patch(shifted, m.patches[0]) == shifted.replace("return ok", "return !ok")


def test_a_hunk_whose_context_is_not_there_names_the_file() -> None:
    m = parse_mutant_text(DIFF)

    with pytest.raises(MutantError, match=r"main\.go: hunk @@ -1,5 does not match"):
        apply_patch(SOURCE.replace("return ok", "return ok && true"), m.patches[0])


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (DIFF.replace("# area: run missions\n", ""), r"lacks 'area'"),
        (
            DIFF.replace("@@ -1,5 +1,5 @@", "@@ -1,9 +1,5 @@"),
            r"promises -9 \+5 lines but holds -5 \+5",
        ),
        (DIFF.replace("+++ b/main.go\n", ""), r"'\+\+\+ b/<file>' must follow"),
        (DIFF.split("--- a/")[0], r"no unified diff after the header"),
        ("stray words\n" + DIFF, r"line 1 is neither a '# field:' header nor the diff"),
    ],
)
def test_a_malformed_mutant_is_refused_naming_the_file_and_the_fix(
    tmp_path: Path, broken: str, message: str
) -> None:
    with pytest.raises(MutantError, match=message) as err:
        parse_mutant(_write(tmp_path, "bad", broken))
    assert "bad.diff" in str(err.value)


def parse_mutant_text(text: str) -> Mutant:
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        return parse_mutant(_write(Path(scratch), "m", text))


def test_every_catalog_mutant_parses_and_names_known_areas() -> None:
    catalog = load_catalog(REPO / "mutants")
    areas = {p.stem.removeprefix("test_") for p in (REPO / "cases").glob("test_*.py")}

    assert len(catalog) >= 40
    for m in catalog:
        assert set(m.areas) <= areas, f"{m.name}: unknown area in {m.areas}; known {areas}"
        assert "TODO" not in m.by_hand, f"{m.name}: its by-hand line was never filled in"


def test_selecting_by_name_and_sharding_round_robin(tmp_path: Path) -> None:
    ms = [parse_mutant(_write(tmp_path, f"m{i}", DIFF)) for i in range(5)]

    assert [m.name for m in select(ms, ["m3", "m1.diff"])] == ["m3", "m1"]
    assert [m.name for m in select(ms, [], splits=2, group=1)] == ["m0", "m2", "m4"]
    assert [m.name for m in select(ms, [], splits=2, group=2)] == ["m1", "m3"]
    with pytest.raises(MutantError, match="no mutant named nope"):
        select(ms, ["nope"])
    with pytest.raises(MutantError, match=r"--group 3 is outside 1\.\.2"):
        select(ms, [], splits=2, group=3)


# --- building, with a fake go ------------------------------------------------------------

FAKE_GO = """
import json, os, sys
from pathlib import Path
with open(os.environ["FAKE_GO_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
overlay = json.loads(Path(sys.argv[sys.argv.index("-overlay") + 1]).read_text())
patched = "".join(Path(p).read_text() for p in overlay["Replace"].values())
if "syntax error" in patched:
    sys.exit("main.go:4:2: syntax error: unexpected newline")
out = Path(sys.argv[sys.argv.index("-o") + 1])
out.write_text("#!/bin/sh\\necho mutant\\n")
out.chmod(0o755)
"""


@pytest.fixture
def fake_go(make_program, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FAKE_GO_LOG", str(tmp_path / "go.log"))
    return make_program("go", FAKE_GO)  # type: ignore[no-any-return]


def _source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.go").write_text(SOURCE)
    return src


def test_a_mutant_is_built_once_through_an_overlay_and_then_cached(
    tmp_path: Path, fake_go: Path
) -> None:
    src = _source(tmp_path)
    m = parse_mutant(_write(tmp_path, "verdict_inverted", DIFF))

    first = build_mutant(m, src, tmp_path / "cache", go=str(fake_go))
    second = build_mutant(m, src, tmp_path / "cache", go=str(fake_go))

    assert first.path == second.path == tmp_path / "cache" / m.digest / "contenox"
    assert (first.cached, second.cached) == (False, True)
    [argv] = [json.loads(line) for line in (tmp_path / "go.log").read_text().splitlines()]
    assert argv[:2] == ["build", "-trimpath"] and argv[-1] == "./cmd/contenox"
    # The module tree itself is never written to.
    assert (src / "main.go").read_text() == SOURCE
    patched = tmp_path / "cache" / m.digest / "src" / "main.go"
    assert "return !ok" in patched.read_text()


def test_a_mutant_that_does_not_compile_is_reported_with_the_compiler_error(
    tmp_path: Path, fake_go: Path
) -> None:
    src = _source(tmp_path)
    m = parse_mutant(_write(tmp_path, "broken", DIFF.replace("return !ok", "syntax error")))

    built = build_mutant(m, src, tmp_path / "cache", go=str(fake_go))

    assert built.path is None
    assert "syntax error: unexpected newline" in built.error
    assert not (tmp_path / "cache" / m.digest).exists(), "a failed build must not be cached"


def test_a_diff_against_other_source_is_reported_not_built(tmp_path: Path, fake_go: Path) -> None:
    src = _source(tmp_path)
    (src / "main.go").write_text(SOURCE.replace("return ok", "return ok || false"))
    m = parse_mutant(_write(tmp_path, "stale", DIFF))

    built = build_mutant(m, src, tmp_path / "cache", go=str(fake_go))

    assert built.path is None and "does not match" in built.error
    assert not (tmp_path / "go.log").exists(), "go must not run for a diff that does not apply"


# --- judging runs ------------------------------------------------------------------------


def _junit(*cases: tuple[str, str, str, str]) -> str:
    """(classname, name, tag, message) → a junit document; tag "" is a pass."""
    body = []
    for classname, name, tag, message in cases:
        inner = f'<{tag} message="{message}">trace</{tag}>' if tag else ""
        body.append(f'<testcase classname="{classname}" name="{name}">{inner}</testcase>')
    return f"<testsuites><testsuite>{''.join(body)}</testsuite></testsuites>"


def test_an_assertion_failure_is_a_kill_naming_the_case_and_message() -> None:
    xml = _junit(
        ("cases.test_run", "test_ok", "", ""),
        ("cases.test_run", "test_lands", "failure", "AssertionError: exit 1 != 0"),
    )

    failure = classify(xml, 1)

    assert failure is not None
    assert (failure.nodeid, failure.kind) == ("cases/test_run.py::test_lands", KILLED)
    assert failure.message == "AssertionError: exit 1 != 0"


@pytest.mark.parametrize(
    ("tag", "message", "kind"),
    [
        ("failure", "harness.command.CommandTimeout: command overran its 120s timeout", TIMEOUT),
        ("failure", "harness.process.WaitTimeout: gave up after 30s waiting for x", TIMEOUT),
        ("failure", "harness.terminal.TerminalTimeout: gave up", TIMEOUT),
        ("failure", "TypeError: 'NoneType' object is not subscriptable", CRASH),
        ("failure", "harness.dialog.DialogError: turns[0] is empty", CRASH),
        ("error", "failed on setup with 'fixture instance not found'", CRASH),
        ("error", "the case left processes running; they were killed", KILLED),
        ("failure", "harness.probes.ProbeError: `mission list` exited 1", KILLED),
        ("failure", "ValueError: not enough values to unpack (expected 1, got 0)", KILLED),
    ],
)
def test_timeouts_and_harness_crashes_are_told_apart_from_kills(
    tag: str, message: str, kind: str
) -> None:
    failure = classify(_junit(("cases.test_x", "test_y", tag, message)), 1)

    assert failure is not None and failure.kind == kind


def test_a_real_kill_is_preferred_over_a_timeout_in_the_same_run() -> None:
    xml = _junit(
        ("cases.test_a", "test_slow", "failure", "harness.command.CommandTimeout: overran"),
        ("cases.test_b", "test_wrong", "failure", "AssertionError: wrong"),
    )

    failure = classify(xml, 1)

    assert failure is not None and failure.nodeid == "cases/test_b.py::test_wrong"


def test_a_broken_pytest_run_is_a_crash_and_a_clean_one_is_none() -> None:
    assert classify(_junit(("cases.test_a", "test_ok", "", "")), 0) is None
    assert classify("", 5) is None
    broken = classify("", 3)
    assert broken is not None and broken.kind == CRASH and "exited 3" in broken.message
    no_case = classify(_junit(("cases.test_a", "test_ok", "", "")), 1)
    assert no_case is not None and no_case.kind == CRASH


class FakeRuns:
    """Stands in for pytest: answers each run from a script keyed by (binary, stage)."""

    def __init__(self, answers: dict[tuple[str, str], list[tuple[int, str]]]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []

    def __call__(
        self, binary: Path, targets: Sequence[str], extra: Sequence[str]
    ) -> tuple[int, str]:
        self.calls.append((binary.name, tuple(targets), tuple(extra)))
        stage = "suite" if targets == ["cases"] else "area"
        if binary.name == "real":
            stage = "real"
        queue = self.answers.get((binary.name, stage), [])
        return queue.pop(0) if queue else (0, _junit(("cases.test_a", "test_ok", "", "")))


def _mutant(tmp_path: Path) -> Mutant:
    return parse_mutant(_write(tmp_path, "verdict_inverted", DIFF))


def _cases(tmp_path: Path) -> Path:
    cases = tmp_path / "cases"
    cases.mkdir()
    for area in ("run", "missions", "other"):
        (cases / f"test_{area}.py").write_text("")
    return cases


KILL = (1, _junit(("cases.test_run", "test_lands", "failure", "AssertionError: exit 1")))
HANG = (1, _junit(("cases.test_run", "test_hangs", "failure", "harness.command.CommandTimeout: x")))


def test_a_mutant_killed_in_its_area_never_meets_the_whole_suite(tmp_path: Path) -> None:
    runs = FakeRuns({("mutant", "area"): [KILL]})

    o = judge(
        _mutant(tmp_path),
        Path("mutant"),
        Path("real"),
        cases=_cases(tmp_path),
        workers="2",
        runner=runs,
    )

    assert (o.verdict, o.case, o.stage) == (KILLED, "cases/test_run.py::test_lands", "area")
    assert [c[0] for c in runs.calls] == ["mutant", "real"]
    assert runs.calls[0][1] == ("cases/test_run.py", "cases/test_missions.py")
    assert "-x" in runs.calls[0][2]


def test_a_survivor_of_its_area_meets_the_rest_of_the_suite(tmp_path: Path) -> None:
    runs = FakeRuns({("mutant", "suite"): [KILL]})

    o = judge(
        _mutant(tmp_path),
        Path("mutant"),
        Path("real"),
        cases=_cases(tmp_path),
        workers="2",
        runner=runs,
    )

    assert (o.verdict, o.stage) == (KILLED, "suite")
    suite = runs.calls[1]
    assert suite[1] == ("cases",)
    assert "--ignore=cases/test_run.py" in suite[2]


def test_a_mutant_nothing_fails_survives(tmp_path: Path) -> None:
    o = judge(
        _mutant(tmp_path),
        Path("mutant"),
        None,
        cases=_cases(tmp_path),
        workers="2",
        runner=FakeRuns({}),
    )

    assert o.verdict == SURVIVED


def test_a_timeout_is_stepped_over_and_the_search_goes_on(tmp_path: Path) -> None:
    runs = FakeRuns({("mutant", "area"): [HANG, KILL]})

    o = judge(
        _mutant(tmp_path),
        Path("mutant"),
        Path("real"),
        cases=_cases(tmp_path),
        workers="2",
        runner=runs,
    )

    assert o.verdict == KILLED and [f.kind for f in o.stepped_over] == [TIMEOUT]
    assert "--deselect=cases/test_run.py::test_hangs" in runs.calls[1][2]


def test_a_mutant_caught_only_by_timeouts_is_reported_as_timeout(tmp_path: Path) -> None:
    runs = FakeRuns({("mutant", "area"): [HANG], ("mutant", "suite"): []})

    o = judge(
        _mutant(tmp_path), Path("mutant"), None, cases=_cases(tmp_path), workers="2", runner=runs
    )

    assert (o.verdict, o.case) == (TIMEOUT, "cases/test_run.py::test_hangs")


def test_a_case_that_fails_on_the_real_binary_too_is_not_a_kill(tmp_path: Path) -> None:
    runs = FakeRuns({("mutant", "area"): [KILL], ("real", "real"): [KILL]})

    o = judge(
        _mutant(tmp_path),
        Path("mutant"),
        Path("real"),
        cases=_cases(tmp_path),
        workers="2",
        runner=runs,
    )

    assert o.verdict == FLAKY and o.case == "cases/test_run.py::test_lands"


def test_an_unknown_area_is_refused_naming_the_choices(tmp_path: Path) -> None:
    m = parse_mutant(_write(tmp_path, "m", DIFF.replace("area: run missions", "area: nowhere")))

    with pytest.raises(MutantError, match=r"area 'nowhere' has no cases/test_nowhere.py"):
        judge(m, Path("mutant"), None, cases=_cases(tmp_path), workers="2", runner=FakeRuns({}))


def test_the_matrix_and_report_name_every_mutant_and_count_the_kills(tmp_path: Path) -> None:
    m = _mutant(tmp_path)
    outcomes = [
        Outcome(m, KILLED, "cases/test_run.py::test_lands", "AssertionError: exit 1", "area"),
        Outcome(m, SURVIVED),
        Outcome(m, UNBUILDABLE, message="syntax error"),
    ]

    text = matrix(outcomes)
    md = markdown(outcomes, "a machine")

    assert "test_run.py::test_lands — AssertionError: exit 1" in text
    assert summary(outcomes) == "killed 1/2 (50.0%); does not build 1; survived 1"
    assert md.startswith("Machine: a machine\n") and "| `verdict_inverted` | run missions |" in md


def test_the_runner_module_runs_as_a_script_and_explains_a_bad_name() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, "-m", "harness.tools.mutants", "no_such_mutant", "--build-only"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env=dict(os.environ, PATH=os.environ.get("PATH", "")),
        timeout=60,
    )

    assert done.returncode == 2
    assert "no mutant named no_such_mutant" in done.stderr
