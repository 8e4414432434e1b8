"""Finding the contenox binary, or building it once per machine and version.

In this order:

1. ``CONTENOX_BIN=/path`` — used as is.
2. ``CONTENOX_SRC=/path/to/checkout`` — ``CGO_ENABLED=0 go build ./cmd/contenox``
   into the checkout's ``bin/``, skipped while that binary is newer than every
   ``.go``, ``go.mod`` and ``go.sum``.
3. the pinned release, :data:`CONTENOX_VERSION`, built from the Go module
   proxy into a per-version cache (``CONTENOX_E2E_CACHE`` overrides where).

Builds take an exclusive file lock and install by atomic rename, so xdist
workers and parallel tox runs build once and nobody ever executes a
half-written binary.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from .cache import cache_dir
from .command import CommandTimeout, Result, run
from .environment import child_env, go_env
from .process import kill_group, popen

__all__ = [
    "CONTENOX_MODULE",
    "CONTENOX_VERSION",
    "Binary",
    "BinaryError",
    "cache_dir",
    "parse_version",
    "resolve_binary",
    "set_progress",
]

# The one place the pinned release lives.
CONTENOX_VERSION = "v1.0.0"
CONTENOX_MODULE = "github.com/contenox/contenox"
_PACKAGE = f"{CONTENOX_MODULE}/cmd/contenox"

# Building contenox from an empty module cache takes minutes on two cores.
BUILD_TIMEOUT = 1800.0
# Seconds between the "still building" lines while Go works; a first build
# that prints nothing for minutes looks hung. CONTENOX_E2E_HEARTBEAT overrides.
HEARTBEAT = 20.0
# What the first build costs, for the line printed before it starts
# (measured on 2 cores: README, "The first run").
FIRST_BUILD_COST = (
    "the first build downloads ~210 MB of Go modules and takes 3-15 minutes on 2 cores; "
    "Go's caches grow by ~1.8 GB (`go clean -cache -modcache` reclaims them)"
)

# What `contenox version` prints: "contenox version v1.0.0".
_VERSION_LINE = re.compile(r"contenox version (v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)")


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


_progress: Callable[[str], None] = _to_stderr


def set_progress(sink: Callable[[str], None]) -> None:
    """Where build progress lines go (default stderr; the plugin sends them to the terminal)."""
    global _progress
    _progress = sink


class BinaryError(RuntimeError):
    """No usable contenox binary; the message names the ways out."""


@dataclass(frozen=True)
class Binary:
    """A resolved contenox binary and how it was obtained."""

    path: Path
    version: str
    how: str

    @property
    def number(self) -> str | None:
        """The version number ``contenox version`` printed (``v1.0.0``), if it printed one."""
        return parse_version(self.version)

    @property
    def warning(self) -> str | None:
        """A sentence when this is not the pinned release, else None."""
        if self.number == CONTENOX_VERSION:
            return None
        return (
            f"WARNING: contenox {self.number} is not the pinned {CONTENOX_VERSION}: the "
            f"snapshots and recorded fixtures are of {CONTENOX_VERSION}, so a difference may "
            "be the version's, not a defect"
        )

    def header(self) -> str:
        line = f"contenox: {self.path} ({self.version}); {self.how}"
        return f"{line}\n{self.warning}" if self.warning else line


def parse_version(output: str) -> str | None:
    """The version in ``contenox version``'s output, or None if it is not contenox's."""
    match = _VERSION_LINE.fullmatch(output.strip())
    return match.group(1) if match else None


def _ways_out(problem: str, env: Mapping[str, str]) -> str:
    return (
        f"{problem}\n"
        "The suite needs a contenox binary. Any one of these works:\n"
        "  1. CONTENOX_BIN=/path/to/contenox   use a binary you already have\n"
        "  2. CONTENOX_SRC=/path/to/checkout   build a contenox checkout (needs Go)\n"
        f"  3. install Go (https://go.dev/dl) and let the suite build {_PACKAGE}@"
        f"{CONTENOX_VERSION} once into {cache_dir(env)}"
    )


def _version_of(path: Path) -> str:
    # `contenox version` must not touch anyone's ~/.contenox, nor see anything
    # of the parent's environment; it carries the session marker like any child.
    with tempfile.TemporaryDirectory(prefix="contenox-version-") as home:
        try:
            result = run([path, "version"], timeout=60, env=child_env(home, home), cwd=home)
        except (OSError, CommandTimeout) as err:
            raise BinaryError(f"{path} does not run: {err}") from None
    if result.exit_code != 0:
        raise BinaryError(f"`{path} version` failed:\n{result.describe()}")
    printed = result.stdout.strip()
    if parse_version(printed) is None:
        shown = printed if len(printed) <= 200 else printed[:200] + "..."
        raise BinaryError(
            f"{path} does not answer `version` as contenox does: it printed {shown!r} "
            "(contenox prints one line, 'contenox version vX.Y.Z'). Point CONTENOX_BIN at "
            "a contenox binary."
        )
    return printed


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _go_binary() -> str | None:
    return shutil.which("go")


def _go_env(gobin: Path | None = None) -> dict[str, str]:
    return go_env() if gobin is None else go_env(GOBIN=str(gobin))


def _heartbeat() -> float:
    try:
        return float(os.environ.get("CONTENOX_E2E_HEARTBEAT", "")) or HEARTBEAT
    except ValueError:
        return HEARTBEAT


def _progress_of(lines: list[str]) -> str:
    downloaded = sum(1 for line in lines if line.startswith("go: downloading "))
    built = sum(1 for line in lines if line and not line.startswith(("go: ", "#", " ")))
    last = lines[-1].strip() if lines else "nothing yet"
    return f"{downloaded} modules downloaded, {built} packages built; last: {last}"


def _go(argv: Sequence[str | os.PathLike[str]], *, cwd: Path | str, env: dict[str, str]) -> Result:
    """Run a Go command, printing a heartbeat with Go's progress until it ends.

    Go prints "go: downloading <module>" and, with ``-v``, each package it
    builds, on stderr; the heartbeat counts them and names the last one.
    """
    args = tuple(os.fspath(a) for a in argv)
    started = time.monotonic()
    proc = popen(args, env=env, cwd=cwd)
    out: list[bytes] = []
    err_lines: list[str] = []

    def read_out() -> None:
        assert proc.stdout is not None
        out.append(proc.stdout.read())

    def read_err() -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            err_lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    readers = [threading.Thread(target=f, daemon=True) for f in (read_out, read_err)]
    for reader in readers:
        reader.start()
    timed_out = False
    try:
        while True:
            try:
                proc.wait(timeout=_heartbeat())
                break
            except subprocess.TimeoutExpired:
                elapsed = time.monotonic() - started
                if elapsed > BUILD_TIMEOUT:
                    timed_out = True
                    break
                _progress(
                    f"  ... still working ({int(elapsed) // 60}m{int(elapsed) % 60:02d}s): "
                    + _progress_of(err_lines)
                )
    finally:
        kill_group(proc)
        proc.wait()
    for reader in readers:
        reader.join(timeout=10)
    return Result(
        argv=args,
        exit_code=proc.returncode,
        stdout=b"".join(out).decode("utf-8", "replace"),
        stderr="".join(f"{line}\n" for line in err_lines),
        duration=time.monotonic() - started,
        timed_out=timed_out,
    )


def _wait_for_lock(path: Path) -> AbstractContextManager[object]:
    """Take the build lock, saying so while another process holds it (it is building).

    Returns the acquired lock's context manager, which releases it on exit.
    """
    lock = FileLock(str(path))
    waited = 0.0
    while True:
        try:
            return lock.acquire(timeout=_heartbeat())
        except Timeout:
            waited += _heartbeat()
            _progress(
                f"contenox-e2e: waiting {waited:.0f}s for another process building contenox "
                f"(it holds {path})"
            )


def _build_failed(what: str, result: object) -> BinaryError:
    detail = result.describe() if hasattr(result, "describe") else str(result)
    return BinaryError(f"{what} failed:\n{detail}")


def _from_bin(value: str) -> Binary:
    path = Path(value).expanduser()
    if not path.exists():
        raise BinaryError(f"CONTENOX_BIN={value} does not exist; point it at a contenox binary")
    if not _executable(path):
        raise BinaryError(
            f"CONTENOX_BIN={value} is not an executable file; point it at a contenox binary "
            "(chmod +x if it is one)"
        )
    path = path.resolve()
    return Binary(path, _version_of(path), "given by CONTENOX_BIN")


def _newest_source(src: Path) -> float:
    newest = 0.0
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in {"bin", "node_modules"}]
        for name in files:
            if name.endswith(".go") or name in {"go.mod", "go.sum"}:
                newest = max(newest, (Path(root) / name).stat().st_mtime)
    return newest


def _from_src(value: str, env: Mapping[str, str]) -> Binary:
    src = Path(value).expanduser().resolve()
    if not (src / "go.mod").is_file() or not (src / "cmd" / "contenox").is_dir():
        raise BinaryError(
            f"CONTENOX_SRC={value} is not a contenox checkout (no go.mod and cmd/contenox there)"
        )
    go = _go_binary()
    if go is None:
        raise BinaryError(_ways_out(f"CONTENOX_SRC={value} is set but Go is not on PATH.", env))
    target = src / "bin" / "contenox"
    target.parent.mkdir(parents=True, exist_ok=True)
    with _wait_for_lock(target.parent / ".contenox.build.lock"):
        if _executable(target) and target.stat().st_mtime > _newest_source(src):
            how = f"built from CONTENOX_SRC={src} (up to date, not rebuilt)"
        else:
            partial = target.parent / f".contenox.partial.{os.getpid()}"
            _progress(f"contenox-e2e: building contenox from {src} (go build) ...")
            result = _go(
                [go, "build", "-v", "-o", partial, "./cmd/contenox"], cwd=src, env=_go_env()
            )
            if result.exit_code != 0:
                partial.unlink(missing_ok=True)
                raise _build_failed(f"building CONTENOX_SRC={src}", result)
            os.replace(partial, target)
            how = f"built from CONTENOX_SRC={src} just now"
    return Binary(target, _version_of(target), how)


def _install_release(go: str, staging: Path) -> str:
    """Build the pinned release into ``staging``; return how it was done."""
    result = _go(
        [go, "install", "-v", f"{_PACKAGE}@{CONTENOX_VERSION}"], cwd=staging, env=_go_env(staging)
    )
    if result.exit_code == 0:
        return f"go install {_PACKAGE}@{CONTENOX_VERSION}"
    # `go install pkg@version` also reads the module's version list to look up
    # a deprecation notice. A proxy that serves the version but refuses the
    # list fails the install though the module itself is there; build the same
    # checksum-verified module version from the download instead.
    if "loading deprecation" not in result.stderr:
        raise _build_failed(f"go install {_PACKAGE}@{CONTENOX_VERSION}", result)
    download = _go(
        [go, "mod", "download", "-json", f"{CONTENOX_MODULE}@{CONTENOX_VERSION}"],
        cwd=staging,
        env=_go_env(),
    )
    if download.exit_code != 0:
        raise _build_failed(
            f"go install {_PACKAGE}@{CONTENOX_VERSION} was refused "
            f"({result.stderr.strip()}); then go mod download",
            download,
        )
    module_dir = json.loads(download.stdout)["Dir"]
    build = _go(
        [go, "build", "-v", "-trimpath", "-o", staging / "contenox", "./cmd/contenox"],
        cwd=module_dir,
        env=_go_env(),
    )
    if build.exit_code != 0:
        raise _build_failed(f"go build in {module_dir}", build)
    return (
        f"go mod download {CONTENOX_MODULE}@{CONTENOX_VERSION} + go build "
        "(the proxy refused the version list `go install` reads for deprecations)"
    )


def _from_release(env: Mapping[str, str]) -> Binary:
    root = cache_dir(env) / CONTENOX_VERSION
    target = root / "contenox"
    if _executable(target):
        return Binary(target, _version_of(target), f"pinned {CONTENOX_VERSION}, cached")
    go = _go_binary()
    if go is None:
        raise BinaryError(
            _ways_out(f"No cached contenox {CONTENOX_VERSION} and Go is not on PATH.", env)
        )
    root.mkdir(parents=True, exist_ok=True)
    with _wait_for_lock(root.parent / f"{CONTENOX_VERSION}.lock"):
        # Whoever held the lock before us may have built it already.
        if _executable(target):
            return Binary(target, _version_of(target), f"pinned {CONTENOX_VERSION}, cached")
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        started = time.monotonic()
        _progress(
            f"contenox-e2e: building contenox {CONTENOX_VERSION} with Go, once per machine, "
            f"into {root}\n  {FIRST_BUILD_COST}.\n  A line follows every "
            f"{_heartbeat():g}s until it is done; CONTENOX_BIN=/path/to/contenox skips the build."
        )
        try:
            how = _install_release(go, staging)
            _progress(f"contenox-e2e: built in {time.monotonic() - started:.0f}s")
            os.replace(staging / "contenox", target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return Binary(target, _version_of(target), f"pinned {CONTENOX_VERSION}, built now by {how}")


def resolve_binary(environ: Mapping[str, str] | None = None) -> Binary:
    """Find or build contenox: ``CONTENOX_BIN``, then ``CONTENOX_SRC``, then the pinned release."""
    env = os.environ if environ is None else environ
    if env.get("CONTENOX_BIN"):
        return _from_bin(env["CONTENOX_BIN"])
    if env.get("CONTENOX_SRC"):
        return _from_src(env["CONTENOX_SRC"], env)
    return _from_release(env)
