"""``-n auto`` under tox -e e2e: several xdist workers per core (harness.workers)."""

from __future__ import annotations

import pytest

from harness.workers import WORKERS_PER_CORE_VAR, WorkersError, auto_workers, cores


def test_unset_leaves_the_count_to_xdist() -> None:
    assert auto_workers({}, 2) is None
    assert auto_workers({WORKERS_PER_CORE_VAR: " "}, 2) is None


@pytest.mark.parametrize(("factor", "ncores", "expected"), [("1", 2, 2), ("3", 2, 6), ("3", 1, 3)])
def test_the_factor_multiplies_the_cores(factor: str, ncores: int, expected: int) -> None:
    assert auto_workers({WORKERS_PER_CORE_VAR: factor}, ncores) == expected


@pytest.mark.parametrize("bad", ["0", "9", "-1", "2.5", "three"])
def test_a_bad_factor_is_refused_naming_the_variable_and_the_range(bad: str) -> None:
    with pytest.raises(WorkersError) as err:
        auto_workers({WORKERS_PER_CORE_VAR: bad}, 2)
    assert WORKERS_PER_CORE_VAR in str(err.value)
    assert "from 1 to 8" in str(err.value)


def test_cores_counts_at_least_one() -> None:
    assert cores() >= 1


def test_n_auto_starts_the_factor_times_the_cores(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n")
    monkeypatch.setenv(WORKERS_PER_CORE_VAR, "2")
    result = pytester.runpytest("-n", "auto", "-p", "no:randomly")
    result.stdout.re_match_lines([rf".*created: {2 * cores()}/{2 * cores()} workers.*"])
    assert result.ret == 0


def test_n_auto_with_a_bad_factor_stops_before_any_worker_starts(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_one():\n    assert True\n")
    monkeypatch.setenv(WORKERS_PER_CORE_VAR, "zero")
    result = pytester.runpytest("-n", "auto", "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{WORKERS_PER_CORE_VAR}='zero'*"])
