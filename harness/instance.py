"""A hermetic contenox instance: a scratch root every command of a case runs in.

::

    root/
      home/   HOME of every child (so ~/.contenox is scratch)
      work/   the cwd of every command: the workspace
      tmp/    TMPDIR

The suite's instances (the ``instance`` fixture) live at a path of one fixed
length, ``/tmp/cxe_XXXXXXXX``, whatever pytest's ``--basetemp`` is, linked from
the case's directory under it (:func:`fixed_root`): contenox wraps, cuts and
pads text around the paths it prints (a pty screen, a message cut with "…", a
column), so a root one character longer moved a wrap in beam to another word.

The child's environment is an allowlist (:mod:`harness.environment`): PATH and
the locale from the parent, HOME/TMPDIR/TERM pinned, the session marker, and
what a case sets explicitly. An override that moves HOME, TMPDIR or an
``XDG_*`` directory outside the root is refused (:mod:`harness.guard`), so
nothing ambient reaches contenox and nothing contenox writes lands outside.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .command import DEFAULT_TIMEOUT, Result, run
from .dialog import Script
from .environment import SESSION_VAR, child_env, session_token
from .guard import check_env_override, check_relpath, check_scratch_path
from .recorder import Recorder

__all__ = [
    "FIXED_BASE",
    "SESSION_VAR",
    "Instance",
    "InstanceError",
    "fixed_root",
    "hermetic_env",
    "real_contenox_home",
    "session_token",
]


class InstanceError(RuntimeError):
    """An instance that must not be used (for example, one inside the real ~/.contenox)."""


def real_contenox_home() -> Path:
    """The ``~/.contenox`` of whoever runs the suite: never to be touched."""
    return (Path(os.path.expanduser("~")) / ".contenox").resolve()


def hermetic_env(home: Path, tmp: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The allowlisted child environment with HOME/TMPDIR/TERM pinned (see harness.environment)."""
    return child_env(home, tmp, base=base)


# Where the fixed-length roots are made: the same path on every Linux machine
# (not TMPDIR, whose length varies), so every root is exactly as long.
FIXED_BASE = Path("/tmp")
# No hyphen: a wrapper that breaks words at one (Python's textwrap) would split the name.
_PREFIX = "cxe_"
# No digit and no hex letter: a root's name never reads as an id, a number or a duration.
_LETTERS = "ghjkmnpqrstvwxyz"
_NAME_LENGTH = 8
# Beside each root: a link back to the directory it was made for (under the
# basetemp). Once pytest has removed that directory the root is a leftover.
_ORIGIN = ".origin"
_reaped: set[Path] = set()


def _reap(base: Path) -> None:
    """Remove this user's fixed roots whose origin is gone (a run killed, a basetemp rotated)."""
    if base in _reaped:
        return
    _reaped.add(base)
    try:
        links = [
            p for p in base.iterdir() if p.name.startswith(_PREFIX) and p.name.endswith(_ORIGIN)
        ]
    except OSError:
        return
    for link in links:
        try:
            if link.lstat().st_uid != os.getuid() or link.exists():
                continue
        except OSError:
            continue
        root = link.with_name(link.name[: -len(_ORIGIN)])
        if root.is_dir() and not root.is_symlink():
            shutil.rmtree(root, ignore_errors=True)
        link.unlink(missing_ok=True)


def fixed_root(origin: Path, base: Path = FIXED_BASE) -> Path:
    """A new empty directory ``base/cxe_XXXXXXXX`` (always as long) made for ``origin``.

    ``origin/scratch`` links to it, so a kept root is found from the case's
    directory; ``cxe_XXXXXXXX.origin`` beside it links back, and a root whose
    origin pytest has removed is reaped by the next run.
    """
    _reap(base)
    try:
        mode = base.stat().st_mode
    except OSError as err:
        raise InstanceError(
            f"cannot make a scratch root in {base}: {err}. The suite keeps every case's "
            f"contenox in {base}/{_PREFIX}XXXXXXXX (a path of one length on every machine)."
        ) from err
    if not stat.S_ISDIR(mode) or not os.access(base, os.W_OK | os.X_OK):
        raise InstanceError(
            f"cannot make a scratch root in {base}: not a writable directory. The suite keeps "
            f"every case's contenox in {base}/{_PREFIX}XXXXXXXX (a path of one length on "
            "every machine)."
        )
    while True:
        name = _PREFIX + "".join(secrets.choice(_LETTERS) for _ in range(_NAME_LENGTH))
        root = base / name
        try:
            root.mkdir(mode=0o700)
        except FileExistsError:
            continue
        break
    origin.mkdir(parents=True, exist_ok=True)
    (base / (name + _ORIGIN)).symlink_to(origin.resolve())
    (origin / "scratch").symlink_to(root)
    return root


def _inside(path: Path, parent: Path) -> bool:
    try:
        path.relative_to(parent)
    except ValueError:
        return False
    return True


@dataclass(repr=False)
class Instance:
    """One case's scratch contenox: its dirs, its environment, its commands.

    >>> inst = Instance.create(tmp_path / "case", binary=Path("/opt/contenox"))
    >>> inst.contenox("version").assert_success()
    """

    root: Path
    binary: Path
    timeout: float = DEFAULT_TIMEOUT
    # The directory a fixed-length root was made for (None: the root is the one given).
    origin: Path | None = None
    history: list[Result] = field(default_factory=list)
    # Called at the end of the case, newest first. Each returns None when it
    # had nothing to clean, or a sentence saying what it had to kill.
    cleanups: list[Callable[[], str | None]] = field(default_factory=list)
    # What every layer did, in order: the case's transcript (see harness.recorder).
    recorder: Recorder = field(init=False)

    def __post_init__(self) -> None:
        self.recorder = Recorder(
            paths={
                "[WORK]": self.work,
                "[HOME]": self.home,
                "[TMP]": self.tmp,
                "[ROOT]": self.root,
                "[BIN]": self.binary,
            },
            binary=self.binary,
        )

    def __repr__(self) -> str:
        # Short: pytest prints fixture values in failure headers.
        return f"<Instance {self.root.name}>"

    @classmethod
    def create(
        cls,
        root: Path,
        *,
        binary: Path,
        timeout: float = DEFAULT_TIMEOUT,
        fixed_length: bool = False,
    ) -> Instance:
        """An instance rooted at ``root`` (``fixed_length``: at a :func:`fixed_root` for it)."""
        origin: Path | None = None
        if fixed_length:
            origin = root.resolve()
            check_scratch_path(origin, "the scratch root", InstanceError)
            root = fixed_root(origin)
        root = root.resolve()
        check_scratch_path(root, "the scratch root", InstanceError)
        guard = real_contenox_home()
        home = root / "home"
        if _inside(home, guard):
            raise InstanceError(
                f"refusing to use {home} as a scratch home: it lies inside the real "
                f"{guard}, which the suite must never touch. Put the scratch root "
                "elsewhere (pytest --basetemp=DIR, or TMPDIR)."
            )
        for name in ("home", "work", "tmp"):
            (root / name).mkdir(parents=True, exist_ok=True)
        return cls(root=root, binary=binary, timeout=timeout, origin=origin)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def tmp(self) -> Path:
        return self.root / "tmp"

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The child environment; ``extra`` is applied last (a case may set CONTENOX_* itself)."""
        check_env_override(extra, self.root, "instance command", InstanceError)
        return child_env(self.home, self.tmp, extra=extra)

    def run(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        full_stderr: bool = False,
    ) -> Result:
        """Run any program inside the instance (cwd ``work/``, hermetic env).

        It lands in the transcript: argv, the ``env`` overrides, exit code, stdout
        and notices (the whole stderr with ``full_stderr``).
        """
        __tracebackhide__ = True
        result = run(
            argv,
            stdin=stdin,
            env=self.env(env),
            cwd=cwd if cwd is not None else self.work,
            timeout=timeout if timeout is not None else self.timeout,
        )
        self.history.append(result)
        self.recorder.command(result, stdin=stdin, full_stderr=full_stderr, env=env)
        return result

    def contenox(
        self,
        *args: str | os.PathLike[str],
        stdin: str | bytes | None = None,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float | None = None,
        full_stderr: bool = False,
    ) -> Result:
        """Run ``contenox <args>``; returns the :class:`Result` whatever the exit code."""
        __tracebackhide__ = True
        return self.run(
            [self.binary, *args],
            stdin=stdin,
            env=env,
            cwd=cwd,
            timeout=timeout,
            full_stderr=full_stderr,
        )

    def must(self, *args: str | os.PathLike[str], **kwargs: object) -> Result:
        """Run ``contenox <args>`` and fail right here, with its output, unless it exits 0."""
        __tracebackhide__ = True
        return self.contenox(*args, **kwargs).assert_success()  # type: ignore[arg-type]

    def write(self, relpath: str, content: str | bytes) -> Path:
        """Place a file in the workspace (``work/relpath``); a path that leaves it is refused."""
        check_relpath(relpath, "Instance.write", InstanceError)
        path = self.work / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        return path

    def init(self) -> Result:
        """``contenox init``: the workspace marker, shipped chains and rendered envelopes.

        Setup: the transcript shows its argv and exit code, not its output.
        """
        __tracebackhide__ = True
        with self.recorder.setup():
            return self.must("init")

    def use_script(
        self,
        script: Script,
        *,
        name: str = "scripted",
        filename: str = "dialog.json",
        make_default: bool = True,
    ) -> Path:
        """Write ``script`` into ``work/`` and register it as a scripted-test backend.

        Runs ``backend add <name> --type scripted-test --script <path>`` and,
        unless ``make_default`` is false, points ``default-provider`` and
        ``default-model`` at it. Each command must succeed or the case fails
        right there with its output. Returns the dialog's path.
        """
        __tracebackhide__ = True
        path = script.write(self.work / filename)
        self.recorder.dialog(name, path, script)
        with self.recorder.setup():
            self.must("backend", "add", name, "--type", "scripted-test", "--script", path)
            if make_default:
                self.must("config", "set", "default-provider", "scripted-test")
                self.must("config", "set", "default-model", script.model_name)
        return path

    def close(self) -> list[str]:
        """Run every cleanup; return what was left running and had to be killed."""
        leftovers: list[str] = []
        while self.cleanups:
            report = self.cleanups.pop()()
            if report:
                leftovers.append(report)
        return leftovers

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if self.origin is not None:
            self.root.with_name(self.root.name + _ORIGIN).unlink(missing_ok=True)
            (self.origin / "scratch").unlink(missing_ok=True)
