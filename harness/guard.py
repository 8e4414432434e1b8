"""Nothing outside a case's scratch root is touched: the checks that keep it so.

Three ways the real home was reached before these checks existed:

- ``--basetemp=$HOME`` (or ``~/.contenox``): pytest empties the basetemp
  before the first test, so the real home was deleted before any guard ran.
  :func:`check_basetemp` refuses it in ``pytest_configure``, before pytest
  touches the directory.
- a case's ``files``/``home_files`` path that is absolute or climbs out with
  ``..``: :func:`check_relpath` refuses it when the case is built.
- an env override that moves HOME, TMPDIR or an ``XDG_*`` directory outside
  the root: refused when a step is built (:func:`check_step_env`, a step
  cannot know its root) and when a command runs (:func:`check_env_override`).

Each check raises the error type its caller passes in, so a case gets a
``CaseError`` and an instance an ``InstanceError``, each naming the field and
the fix.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath

from .cache import cache_dir

__all__ = [
    "ROOT_VARS",
    "check_basetemp",
    "check_env_override",
    "check_relpath",
    "check_scratch_path",
    "check_step_env",
    "moves_a_root_dir",
    "real_homes",
]

# The variables that say where a program keeps its files. Pointing one of
# them elsewhere moves contenox's state out of the scratch root.
ROOT_VARS = frozenset({"HOME", "TMPDIR"})
_ROOT_PREFIX = "XDG_"


def moves_a_root_dir(name: str) -> bool:
    """Whether setting ``name`` relocates where files are kept (HOME, TMPDIR, XDG_*)."""
    return name in ROOT_VARS or name.startswith(_ROOT_PREFIX)


def real_homes(environ: Mapping[str, str] | None = None) -> list[Path]:
    """The homes of whoever runs the suite: ``$HOME`` and the password database's, resolved."""
    env = os.environ if environ is None else environ
    homes: list[Path] = []
    candidates = [env.get("HOME", "")]
    try:
        candidates.append(pwd.getpwuid(os.getuid()).pw_dir)
    except KeyError:
        pass
    for raw in candidates:
        if raw:
            path = Path(raw).expanduser().resolve()
            if path not in homes:
                homes.append(path)
    return homes


def _inside(path: Path, parent: Path) -> bool:
    return path == parent or parent in path.parents


def check_scratch_path(path: Path, what: str, error: type[Exception]) -> None:
    """Refuse a scratch path holding a control character (a newline breaks every table read)."""
    text = os.fspath(path)
    bad = next((c for c in text if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise error(
            f"{what} {text!r} contains the control character {bad!r}: contenox prints "
            "paths in its tables, and such a path breaks every one the suite reads. "
            "Use a directory whose path has none (check TMPDIR and --basetemp)."
        )


def check_basetemp(
    basetemp: str | os.PathLike[str] | None,
    error: type[Exception],
    environ: Mapping[str, str] | None = None,
) -> None:
    """Refuse a ``--basetemp`` pytest would empty that holds the real home or its .contenox.

    Refused: a HOME itself, any directory that contains a ``~/.contenox``
    (``/``, ``/home``, HOME's ancestors), and ``~/.contenox`` or anything in
    it; the harness's own cache (``CONTENOX_E2E_CACHE`` or
    ``~/.cache/contenox-e2e``: the binary, the orphan registry), anything in
    it and anything holding it. A directory inside HOME that is not one of these is fine. Both the
    literal value and its ``~``-expansion are checked.
    """
    if basetemp is None:
        return
    raw = os.fspath(basetemp)
    given = {Path(os.path.abspath(raw)).resolve(), Path(raw).expanduser().resolve()}
    cache = cache_dir(environ).expanduser().resolve()
    for path in given:
        check_scratch_path(path, "--basetemp", error)
        for home in real_homes(environ):
            dot = home / ".contenox"
            if path == home:
                problem = f"it is your HOME ({home})"
            elif path == dot:
                problem = f"it is your {dot}"
            elif _inside(path, dot):
                problem = f"it lies inside your {dot}"
            elif _inside(dot, path):
                problem = f"it contains your {dot}"
            else:
                continue
            raise error(
                f"refusing --basetemp={raw}: {problem}, and pytest deletes everything in "
                "its basetemp before the first test. Give a directory of its own that "
                "holds nothing you keep, e.g. --basetemp=/tmp/contenox-e2e (or leave "
                "--basetemp out: pytest then uses a numbered directory under TMPDIR)."
            )
        if path == cache or _inside(path, cache) or _inside(cache, path):
            where = "is" if path == cache else "lies inside" if _inside(path, cache) else "contains"
            raise error(
                f"refusing --basetemp={raw}: it {where} the harness's own cache ({cache}: the "
                "contenox binary and the registry of runs whose leftovers are reaped), and "
                "pytest deletes everything in its basetemp before the first test. Give a "
                "directory of its own, e.g. --basetemp=/tmp/contenox-e2e."
            )


def check_relpath(relpath: object, where: str, error: type[Exception]) -> str:
    """A path relative to a scratch dir that stays inside it; returns it unchanged.

    Refused: not a string, empty, NUL, absolute, ``~``, or climbing out with ``..``.
    """
    if not isinstance(relpath, str) or not relpath.strip():
        raise error(f"{where}: a file path must be a non-empty string, got {relpath!r}")
    if "\0" in relpath:
        raise error(f"{where}: the file path {relpath!r} contains a NUL byte")
    pure = PurePosixPath(relpath)
    if pure.is_absolute() or relpath.startswith("~"):
        raise error(
            f"{where}: the file path {relpath!r} is absolute; it would be written outside "
            "the case's scratch root. Give a path relative to the scratch dir, e.g. 'notes.md'."
        )
    depth = 0
    for part in pure.parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            raise error(
                f"{where}: the file path {relpath!r} climbs out of the scratch dir with '..'; "
                "give a path that stays inside it."
            )
    return relpath


def check_step_env(env: Mapping[object, object], where: str, error: type[Exception]) -> None:
    """Refuse, when a step is built, an env override that relocates HOME, TMPDIR or XDG_*.

    The harness pins HOME and TMPDIR to the case's scratch root, which a step
    does not know when it is written: any value it gives points elsewhere.
    """
    for name in env:
        if isinstance(name, str) and moves_a_root_dir(name):
            raise error(
                f"{where}: env[{name!r}] would move contenox's files out of the case's scratch "
                "root (the harness pins HOME and TMPDIR there, and XDG_* relocate config, data "
                "and cache). Leave it out; a plain test can set it inside the root with "
                "instance.contenox(..., env={'" + name + "': str(instance.root / 'elsewhere')})."
            )


def check_env_override(
    env: Mapping[str, str] | None, root: Path, where: str, error: type[Exception]
) -> None:
    """Refuse an override of HOME, TMPDIR or XDG_* that points outside ``root``.

    Names and values that ``exec`` cannot carry are refused too, here rather
    than as a TypeError from inside ``subprocess``.
    """
    check_names(env or {}, where, error)
    for name, value in (env or {}).items():
        if not isinstance(value, str) or "\0" in value:
            raise error(f"{where}: env[{name!r}] must be a string without NUL, got {value!r}")
        if not moves_a_root_dir(name):
            continue
        path = Path(os.fspath(value)).expanduser()
        if not path.is_absolute() or not _inside(path.resolve(), root.resolve()):
            raise error(
                f"{where}: env[{name!r}]={value!r} lies outside the scratch root {root}; "
                f"contenox would read and write there. Point it inside the root, e.g. "
                f"str(instance.root / 'elsewhere')."
            )


def check_names(env: Iterable[object], where: str, error: type[Exception]) -> None:
    """Every env name a string without ``=`` or NUL (exec refuses the rest)."""
    for name in env:
        if not isinstance(name, str) or not name or "=" in name or "\0" in name:
            raise error(f"{where}: env name {name!r} must be a non-empty string without '=' or NUL")
