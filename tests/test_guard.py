"""Nothing outside the scratch root is touched: basetemp, file paths, env overrides.

Each test stands a temporary directory in for the real HOME, with a sentinel
``.contenox`` in it, and checks the sentinel is still there after the refusal.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import Instance, InstanceError, run
from harness.guard import check_basetemp, check_env_override, check_relpath


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in real HOME holding a sentinel ~/.contenox/local.db."""
    home = tmp_path / "realhome"
    (home / ".contenox").mkdir(parents=True)
    (home / ".contenox" / "local.db").write_bytes(b"sentinel")
    (home / "notes.txt").write_text("mine")
    monkeypatch.setenv("HOME", str(home))
    return home


def _intact(home: Path) -> None:
    assert (home / ".contenox" / "local.db").read_bytes() == b"sentinel"
    assert (home / "notes.txt").read_text() == "mine"


BASETEMPS: list[tuple[str, Callable[[Path], str], str]] = [
    ("HOME itself", lambda h: str(h), "it is your HOME"),
    ("HOME with a trailing slash", lambda h: f"{h}/", "it is your HOME"),
    ("~/.contenox", lambda h: str(h / ".contenox"), "it is your"),
    ("inside ~/.contenox", lambda h: str(h / ".contenox" / "cases"), "it lies inside your"),
    ("HOME's parent", lambda h: str(h.parent), "it contains your"),
    ("the literal ~/.contenox", lambda h: "~/.contenox", "it is your"),
]


@pytest.mark.parametrize(
    ("given", "problem"), [b[1:] for b in BASETEMPS], ids=[b[0] for b in BASETEMPS]
)
def test_a_basetemp_holding_the_real_home_is_refused_before_pytest_empties_it(
    pytester: pytest.Pytester, home: Path, given: Callable[[Path], str], problem: str
) -> None:
    pytester.makepyfile("def test_a(tmp_path): pass\n")
    # Not runpytest_subprocess: it adds a --basetemp of its own.
    result = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={given(home)}"],
        cwd=pytester.path,
        env=dict(os.environ, HOME=str(home)),
        timeout=120,
    )
    assert result.exit_code == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert "refusing --basetemp=" in result.stderr and problem in result.stderr, result.describe()
    assert "--basetemp=/tmp/contenox-e2e" in result.stderr
    _intact(home)


def test_a_basetemp_beside_the_real_contenox_is_fine(home: Path) -> None:
    check_basetemp(home / "e2e-scratch", ValueError)
    check_basetemp(home.parent / "elsewhere", ValueError)


def test_a_tmpdir_with_a_newline_is_refused_before_anything_runs(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    bad = tmp_path / "tmp\nwith newline"
    bad.mkdir()
    pytester.makepyfile("def test_a(tmp_path): pass\n")
    result = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=pytester.path,
        # pytester points pytest's temp root elsewhere; this run must use TMPDIR.
        env={k: v for k, v in os.environ.items() if k != "PYTEST_DEBUG_TEMPROOT"}
        | {"TMPDIR": str(bad)},
        timeout=120,
    )
    assert result.exit_code == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert "TMPDIR" in result.stderr and "control character" in result.stderr
    assert list(bad.iterdir()) == [], "pytest made its temp dirs before the refusal"


def test_a_scratch_root_with_a_newline_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InstanceError, match="control character"):
        Instance.create(tmp_path / "a\nb", binary=Path("x"))
    assert not (tmp_path / "a\nb").exists()


@pytest.mark.parametrize(
    "relpath", ["/etc/passwd", "../escape", "a/../../escape", "~/.contenox/x", "", "a\0b"]
)
def test_instance_write_refuses_a_path_that_leaves_the_workspace(
    tmp_path: Path, relpath: str
) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("x"))
    with pytest.raises(InstanceError, match=r"Instance\.write"):
        inst.write(relpath, "x")
    assert not (tmp_path / "escape").exists()


def test_instance_write_accepts_a_nested_path_inside(tmp_path: Path) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("x"))
    assert inst.write("a/./b/../c.txt", "x") == inst.work / "a/./b/../c.txt"
    assert (inst.work / "a" / "c.txt").read_text() == "x"


@pytest.mark.parametrize("name", ["HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_DATA_HOME"])
def test_a_command_env_that_moves_a_dir_out_of_the_root_is_refused_before_it_runs(
    tmp_path: Path, home: Path, name: str, make_program: Callable[[str, str], Path]
) -> None:
    ran = tmp_path / "ran"
    prog = make_program("contenox", f"open({str(ran)!r}, 'w').write('ran')\n")
    inst = Instance.create(tmp_path / "case", binary=prog)
    for call in (
        lambda: inst.must("init", env={name: str(home)}),
        lambda: inst.contenox("init", env={name: str(home / ".contenox")}),
        lambda: inst.run([prog], env={name: "relative/dir"}),
    ):
        with pytest.raises(InstanceError, match=rf"env\['{name}'\].*outside the scratch root"):
            call()
    assert not ran.exists(), "the command ran before the refusal"
    _intact(home)
    # Inside the root is the case's own business.
    inst.must("init", env={name: str(inst.root / "elsewhere")})
    assert ran.exists()


def test_an_env_value_exec_cannot_carry_is_refused_naming_it(tmp_path: Path) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("/nonexistent"))
    with pytest.raises(InstanceError, match=r"env\['N'\] must be a string"):
        inst.contenox("version", env={"N": 5})  # type: ignore[dict-item]
    with pytest.raises(InstanceError, match="env name 'A=B'"):
        inst.contenox("version", env={"A=B": "1"})


def test_the_checks_name_the_field_and_stay_quiet_inside(tmp_path: Path) -> None:
    assert check_relpath("notes/todo.md", "files", ValueError) == "notes/todo.md"
    check_env_override({"HOME": str(tmp_path / "h"), "OTHER": "/"}, tmp_path, "x", ValueError)
    with pytest.raises(ValueError, match=r"^files\['x'\]: "):
        check_relpath("/abs", "files['x']", ValueError)


CACHES: list[tuple[str, Callable[[Path], str], str]] = [
    ("the cache itself", lambda c: str(c), "it is the harness's own cache"),
    ("the cache with a trailing slash", lambda c: f"{c}/", "it is the harness's own cache"),
    ("inside the cache", lambda c: str(c / "v1.0.0"), "it lies inside the harness's own cache"),
    ("the cache's parent", lambda c: str(c.parent), "it contains the harness's own cache"),
]


@pytest.mark.parametrize("how", ["default", "CONTENOX_E2E_CACHE"])
@pytest.mark.parametrize(("given", "problem"), [c[1:] for c in CACHES], ids=[c[0] for c in CACHES])
def test_a_basetemp_at_the_harness_cache_is_refused_before_pytest_empties_it(
    pytester: pytest.Pytester,
    home: Path,
    tmp_path: Path,
    how: str,
    given: Callable[[Path], str],
    problem: str,
) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("CONTENOX_E2E_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    if how == "default":
        cache = home / ".cache" / "contenox-e2e"
    else:
        cache = tmp_path / "elsewhere" / "e2e-cache"
        env["CONTENOX_E2E_CACHE"] = str(cache)
    (cache / "v1.0.0").mkdir(parents=True)
    (cache / "v1.0.0" / "contenox").write_bytes(b"the built binary")
    pytester.makepyfile("def test_a(tmp_path): pass\n")
    result = run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--basetemp={given(cache)}"],
        cwd=pytester.path,
        env=env,
        timeout=120,
    )
    assert result.exit_code == pytest.ExitCode.USAGE_ERROR, result.describe()
    assert "refusing --basetemp=" in result.stderr and problem in result.stderr, result.describe()
    assert (cache / "v1.0.0" / "contenox").read_bytes() == b"the built binary"
    _intact(home)
