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
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from .command import CommandTimeout, run

__all__ = [
    "CONTENOX_MODULE",
    "CONTENOX_VERSION",
    "Binary",
    "BinaryError",
    "cache_dir",
    "resolve_binary",
]

# The one place the pinned release lives.
CONTENOX_VERSION = "v1.0.0"
CONTENOX_MODULE = "github.com/contenox/contenox"
_PACKAGE = f"{CONTENOX_MODULE}/cmd/contenox"

# Building contenox from an empty module cache takes minutes on two cores.
BUILD_TIMEOUT = 1800.0


class BinaryError(RuntimeError):
    """No usable contenox binary; the message names the ways out."""


@dataclass(frozen=True)
class Binary:
    """A resolved contenox binary and how it was obtained."""

    path: Path
    version: str
    how: str

    def header(self) -> str:
        return f"contenox: {self.path} ({self.version}); {self.how}"


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where pinned releases are cached: ``CONTENOX_E2E_CACHE`` or the user cache dir."""
    env = os.environ if environ is None else environ
    if env.get("CONTENOX_E2E_CACHE"):
        return Path(env["CONTENOX_E2E_CACHE"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "contenox-e2e"


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
    # `contenox version` must not touch anyone's ~/.contenox, even here.
    with tempfile.TemporaryDirectory(prefix="contenox-version-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENOX_")}
        env["HOME"] = home
        try:
            result = run([path, "version"], timeout=60, env=env, cwd=home)
        except (OSError, CommandTimeout) as err:
            raise BinaryError(f"{path} does not run: {err}") from None
    if result.exit_code != 0:
        raise BinaryError(f"`{path} version` failed:\n{result.describe()}")
    return result.stdout.strip() or result.stderr.strip()


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _go() -> str | None:
    return shutil.which("go")


def _go_env(gobin: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["CGO_ENABLED"] = "0"
    if gobin is not None:
        env["GOBIN"] = str(gobin)
    return env


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
    go = _go()
    if go is None:
        raise BinaryError(_ways_out(f"CONTENOX_SRC={value} is set but Go is not on PATH.", env))
    target = src / "bin" / "contenox"
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / ".contenox.build.lock")):
        if _executable(target) and target.stat().st_mtime > _newest_source(src):
            how = f"built from CONTENOX_SRC={src} (up to date, not rebuilt)"
        else:
            partial = target.parent / f".contenox.partial.{os.getpid()}"
            result = run(
                [go, "build", "-o", partial, "./cmd/contenox"],
                cwd=src,
                env=_go_env(),
                timeout=BUILD_TIMEOUT,
            )
            if result.exit_code != 0:
                partial.unlink(missing_ok=True)
                raise _build_failed(f"building CONTENOX_SRC={src}", result)
            os.replace(partial, target)
            how = f"built from CONTENOX_SRC={src} just now"
    return Binary(target, _version_of(target), how)


def _install_release(go: str, staging: Path) -> str:
    """Build the pinned release into ``staging``; return how it was done."""
    result = run(
        [go, "install", f"{_PACKAGE}@{CONTENOX_VERSION}"],
        cwd=staging,
        env=_go_env(staging),
        timeout=BUILD_TIMEOUT,
    )
    if result.exit_code == 0:
        return f"go install {_PACKAGE}@{CONTENOX_VERSION}"
    # `go install pkg@version` also reads the module's version list to look up
    # a deprecation notice. A proxy that serves the version but refuses the
    # list fails the install though the module itself is there; build the same
    # checksum-verified module version from the download instead.
    if "loading deprecation" not in result.stderr:
        raise _build_failed(f"go install {_PACKAGE}@{CONTENOX_VERSION}", result)
    download = run(
        [go, "mod", "download", "-json", f"{CONTENOX_MODULE}@{CONTENOX_VERSION}"],
        cwd=staging,
        env=_go_env(),
        timeout=BUILD_TIMEOUT,
    )
    if download.exit_code != 0:
        raise _build_failed(
            f"go install {_PACKAGE}@{CONTENOX_VERSION} was refused "
            f"({result.stderr.strip()}); then go mod download",
            download,
        )
    module_dir = json.loads(download.stdout)["Dir"]
    build = run(
        [go, "build", "-trimpath", "-o", staging / "contenox", "./cmd/contenox"],
        cwd=module_dir,
        env=_go_env(),
        timeout=BUILD_TIMEOUT,
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
    go = _go()
    if go is None:
        raise BinaryError(
            _ways_out(f"No cached contenox {CONTENOX_VERSION} and Go is not on PATH.", env)
        )
    root.mkdir(parents=True, exist_ok=True)
    with FileLock(str(root.parent / f"{CONTENOX_VERSION}.lock")):
        # Whoever held the lock before us may have built it already.
        if _executable(target):
            return Binary(target, _version_of(target), f"pinned {CONTENOX_VERSION}, cached")
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=root))
        try:
            how = _install_release(go, staging)
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
