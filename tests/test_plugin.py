"""The pytest plugin: an instance per test, kept on failure, removed on success."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

FAKE_CONTENOX = 'print("contenox version v0.0.0-fake")\n'


@pytest.fixture
def fake_bin(make_program: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch) -> Path:
    path = make_program("contenox", FAKE_CONTENOX)
    monkeypatch.setenv("CONTENOX_BIN", str(path))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    return path


def test_a_passing_case_leaves_nothing_and_a_failing_one_keeps_its_root(
    pytester: pytest.Pytester, fake_bin: Path
) -> None:
    pytester.makepyfile(
        """
        def test_passes(instance):
            (instance.work / "f").write_text("x")
            open("roots.txt", "a").write(str(instance.root) + "\\n")

        def test_fails(instance):
            open("roots.txt", "a").write(str(instance.root) + "\\n")
            assert False, "boom"
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*contenox scratch root*", "*kept at *"])
    passed, failed = (Path(p) for p in (pytester.path / "roots.txt").read_text().split())
    assert not passed.exists()
    assert (failed / "home").is_dir()


def test_keep_keeps_every_root(
    pytester: pytest.Pytester, fake_bin: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        """
        def test_passes(instance):
            open("roots.txt", "a").write(str(instance.root) + "\\n")
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rP")
    result.assert_outcomes(passed=1)
    assert Path((pytester.path / "roots.txt").read_text().strip()).exists() is False

    monkeypatch.setenv("CONTENOX_E2E_KEEP", "1")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-rP")
    result.assert_outcomes(passed=1)
    kept = (pytester.path / "roots.txt").read_text().split()[-1]
    assert Path(kept).exists()


def test_a_missing_binary_stops_the_run_once_with_the_ways_out(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("CONTENOX_BIN", str(tmp_path / "nope"))
    pytester.makeconftest(
        """
        from harness.plugin import report_binary

        def pytest_report_header(config):
            return report_binary()
        """
    )
    pytester.makepyfile("def test_a(instance): pass\ndef test_b(instance): pass\n")
    result = pytester.runpytest_subprocess()
    assert result.ret == 4
    result.stderr.fnmatch_lines(["*no contenox binary*does not exist*"])


def test_the_header_names_the_binary_its_version_and_how(
    pytester: pytest.Pytester, fake_bin: Path
) -> None:
    pytester.makeconftest(
        """
        from harness.plugin import report_binary

        def pytest_report_header(config):
            return report_binary()
        """
    )
    pytester.makepyfile("def test_a(instance): pass\n")
    result = pytester.runpytest_subprocess()
    result.stdout.fnmatch_lines(
        [f"contenox: {fake_bin} (contenox version v0.0.0-fake); given by CONTENOX_BIN"]
    )


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_keep_prints_the_kept_path_of_a_passing_test_too(
    pytester: pytest.Pytester, fake_bin: Path, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    monkeypatch.setenv("CONTENOX_E2E_KEEP", "1")
    pytester.makepyfile(
        """
        def test_passes(instance):
            open("roots.txt", "a").write(str(instance.root) + "\\n")
        """
    )
    # No -rP: a person who sets CONTENOX_E2E_KEEP=1 reads the path at the end.
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", *xdist)
    result.assert_outcomes(passed=1)
    kept = (pytester.path / "roots.txt").read_text().strip()
    assert Path(kept).is_dir()
    result.stdout.fnmatch_lines(["*contenox scratch roots kept (CONTENOX_E2E_KEEP)*", kept])


def test_a_binary_that_is_not_the_pinned_release_is_a_warning_in_the_header(
    pytester: pytest.Pytester, fake_bin: Path
) -> None:
    pytester.makeconftest(
        """
        from harness.plugin import report_binary

        def pytest_report_header(config):
            return report_binary()
        """
    )
    pytester.makepyfile("def test_a(instance): pass\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["WARNING: contenox v0.0.0-fake is not the pinned v1.0.0: the snapshots*"]
    )
