"""Resolving the binary: CONTENOX_BIN, CONTENOX_SRC, the pinned release, once per machine."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import CONTENOX_VERSION, BinaryError, resolve_binary

# A stand-in for `go`: counts its invocations (in go-calls.txt beside its bin/:
# the allowlisted build environment carries no test variable) and "installs"
# a contenox that prints a version. It sleeps so two concurrent resolvers overlap.
FAKE_GO = """
import os, sys, time
from pathlib import Path
with open(Path(__file__).resolve().parent.parent / "go-calls.txt", "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
time.sleep(1.0)
if sys.argv[1] == "install":
    out = Path(os.environ["GOBIN"]) / "contenox"
elif sys.argv[1] == "build":
    out = Path(sys.argv[sys.argv.index("-o") + 1])
else:
    sys.exit("fake go: unexpected " + " ".join(sys.argv[1:]))
out.write_text("#!/bin/sh\\necho 'contenox version v1.0.0'\\n")
out.chmod(0o755)
"""

FAKE_CONTENOX = """
import sys
print("contenox version v9.9.9-test")
"""


def _env(tmp_path: Path, bindir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENOX_")}
    # Only the fake go (or nothing) on PATH, plus what python and sh need.
    env["PATH"] = os.pathsep.join([str(bindir)] if bindir else []) + os.pathsep + "/usr/bin:/bin"
    env["CONTENOX_E2E_CACHE"] = str(tmp_path / "cache")
    return env


RESOLVE = "from harness import resolve_binary; print(resolve_binary().header())"


def test_contenox_bin_is_used_as_is(make_program: Callable[[str, str], Path]) -> None:
    fake = make_program("contenox", FAKE_CONTENOX)
    binary = resolve_binary({"CONTENOX_BIN": str(fake)})
    assert binary.path == fake
    assert binary.version == "contenox version v9.9.9-test"
    assert "CONTENOX_BIN" in binary.how


def test_contenox_bin_that_is_not_executable_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "contenox"
    plain.write_text("not a program")
    with pytest.raises(BinaryError, match="is not an executable file"):
        resolve_binary({"CONTENOX_BIN": str(plain)})
    with pytest.raises(BinaryError, match="does not exist"):
        resolve_binary({"CONTENOX_BIN": str(tmp_path / "missing")})


def test_no_go_and_no_binary_fails_once_naming_the_three_ways_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(BinaryError) as err:
        resolve_binary({"CONTENOX_E2E_CACHE": str(tmp_path / "cache")})
    message = str(err.value)
    assert "Go is not on PATH" in message
    for way in ("CONTENOX_BIN=", "CONTENOX_SRC=", "install Go"):
        assert way in message


def test_a_cached_release_is_used_without_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_program: Callable[[str, str], Path]
) -> None:
    cached = tmp_path / "cache" / CONTENOX_VERSION / "contenox"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(make_program("contenox", FAKE_CONTENOX).read_bytes())
    cached.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    binary = resolve_binary({"CONTENOX_E2E_CACHE": str(tmp_path / "cache")})
    assert binary.path == cached
    assert "cached" in binary.how


def test_two_processes_resolving_at_once_build_once(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    go = make_program("go", FAKE_GO)
    env = _env(tmp_path, go.parent)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RESOLVE], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    outputs = [p.communicate(timeout=60)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs), outputs
    calls = (tmp_path / "go-calls.txt").read_text().splitlines()
    assert calls == [f"install -v github.com/contenox/contenox/cmd/contenox@{CONTENOX_VERSION}"]
    target = tmp_path / "cache" / CONTENOX_VERSION / "contenox"
    assert all(str(target) in out for out in outputs), outputs
    assert sum("built now" in out for out in outputs) == 1, outputs
    # Nothing half-written is left beside the binary.
    assert sorted(p.name for p in target.parent.iterdir()) == ["contenox"]


def test_a_failed_build_leaves_no_binary_and_shows_the_output(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    go = make_program(
        "go", "import sys\nprint('compile error: boom', file=sys.stderr)\nsys.exit(1)\n"
    )
    env = _env(tmp_path, go.parent)
    proc = subprocess.run(
        [sys.executable, "-c", RESOLVE], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0
    assert "compile error: boom" in proc.stderr
    assert not (tmp_path / "cache" / CONTENOX_VERSION / "contenox").exists()


def _checkout(tmp_path: Path) -> Path:
    src = tmp_path / "contenox-src"
    (src / "cmd" / "contenox").mkdir(parents=True)
    (src / "go.mod").write_text("module github.com/contenox/contenox\n")
    (src / "cmd" / "contenox" / "main.go").write_text("package main\n")
    return src


def test_contenox_src_is_built_then_reused_until_a_source_changes(
    tmp_path: Path, make_program: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    go = make_program("go", FAKE_GO)
    src = _checkout(tmp_path)
    for key, value in _env(tmp_path, go.parent).items():
        monkeypatch.setenv(key, value)

    first = resolve_binary({"CONTENOX_SRC": str(src)})
    assert first.path == src / "bin" / "contenox"
    assert "just now" in first.how
    second = resolve_binary({"CONTENOX_SRC": str(src)})
    assert "up to date" in second.how

    later = time.time() + 5
    os.utime(src / "cmd" / "contenox" / "main.go", (later, later))
    third = resolve_binary({"CONTENOX_SRC": str(src)})
    assert "just now" in third.how
    assert len((tmp_path / "go-calls.txt").read_text().splitlines()) == 2


def test_contenox_src_that_is_no_checkout_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BinaryError, match="is not a contenox checkout"):
        resolve_binary({"CONTENOX_SRC": str(tmp_path)})


def test_the_pinned_version_carries_no_warning_and_another_does(
    make_program: Callable[[str, str], Path],
) -> None:
    pinned = resolve_binary(
        {
            "CONTENOX_BIN": str(
                make_program("pinned", f"print('contenox version {CONTENOX_VERSION}')")
            )
        }
    )
    assert pinned.number == CONTENOX_VERSION and pinned.warning is None
    assert "\n" not in pinned.header()
    other = resolve_binary({"CONTENOX_BIN": str(make_program("other", FAKE_CONTENOX))})
    assert other.number == "v9.9.9-test"
    assert (
        other.header()
        .splitlines()[1]
        .startswith(f"WARNING: contenox v9.9.9-test is not the pinned {CONTENOX_VERSION}")
    )


# A `go` that works like the real one, slowly: it says what it downloads and
# builds on stderr, as `go install -v` does, over a second or so.
CHATTY_GO = """
import sys, time
from pathlib import Path
for i in range(3):
    print(f"go: downloading example.com/mod{i} v1.0.{i}", file=sys.stderr, flush=True)
    time.sleep(0.4)
for pkg in ("example.com/mod0/a", "github.com/contenox/contenox/cmd/contenox"):
    print(pkg, file=sys.stderr, flush=True)
    time.sleep(0.4)
out = Path(__import__("os").environ["GOBIN"]) / "contenox"
out.write_text("#!/bin/sh\\necho 'contenox version v1.0.0'\\n")
out.chmod(0o755)
"""


def test_the_first_build_says_what_where_how_long_and_shows_a_heartbeat(
    tmp_path: Path, make_program: Callable[[str, str], Path]
) -> None:
    go = make_program("go", CHATTY_GO)
    env = _env(tmp_path, go.parent)
    env["CONTENOX_E2E_HEARTBEAT"] = "0.3"
    proc = subprocess.run(
        [sys.executable, "-c", RESOLVE], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    cache = tmp_path / "cache" / CONTENOX_VERSION
    lines = proc.stderr.splitlines()
    assert lines[0] == (
        f"contenox-e2e: building contenox {CONTENOX_VERSION} with Go, once per machine, "
        f"into {cache}"
    ), proc.stderr
    assert "takes 3-15 minutes" in lines[1] and "GB" in lines[1], proc.stderr
    beats = [line for line in lines if "still working" in line]
    assert len(beats) >= 2, proc.stderr
    assert re.search(r"[1-3] modules downloaded, [0-2] packages built; last: ", beats[-1]), beats
    assert re.fullmatch(r"contenox-e2e: built in \d+s", lines[-1]), proc.stderr


def test_the_build_progress_reaches_the_terminal_of_a_pytest_run(
    pytester: pytest.Pytester,
    tmp_path: Path,
    make_program: Callable[[str, str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    go = make_program("go", CHATTY_GO)
    for key, value in _env(tmp_path, go.parent).items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("CONTENOX_BIN", raising=False)
    monkeypatch.delenv("CONTENOX_SRC", raising=False)
    monkeypatch.setenv("CONTENOX_E2E_HEARTBEAT", "0.3")
    pytester.makeconftest(
        """
        from harness.plugin import report_binary

        def pytest_report_header(config):
            return report_binary()
        """
    )
    pytester.makepyfile("def test_a(instance): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    # On stdout, in order, before the first test: what, where, how long, the beats, done.
    result.stdout.fnmatch_lines(
        [
            f"contenox-e2e: building contenox {CONTENOX_VERSION} with Go, once per machine, into*",
            "*takes 3-15 minutes*",
            "*still working*modules downloaded*",
            "contenox-e2e: built in *s",
            f"contenox: {tmp_path / 'cache' / CONTENOX_VERSION / 'contenox'}*built now*",
            "*1 passed*",
        ]
    )
