"""Every path a step touches, resolved when the step runs and refused outside the scratch root.

A path is checked when the Case is built (relative, no ``..``), but that
check sees the path as written: a ``{placeholder}`` is filled only when the
step runs (a captured absolute path, a backend's URL), and a ``link`` step
may have made a directory of the workspace point anywhere. So each file
step resolves its path again when it runs, after the placeholders are
filled and following every symbolic link (:func:`resolve`), and refuses it
unless it lies inside the case's scratch root.

The file operations then work relative to a directory descriptor of the
resolved parent, checked again once open, and never follow a link in the
last component (``O_NOFOLLOW``): a link made inside the workspace after the
check, by contenox or anyone, is not written through either.

:class:`Escape` is what a refusal raises; the runner turns it into the case's
failure, naming the case, the step, the field, the filled value and where
it led.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Literal

__all__ = [
    "Escape",
    "check_text",
    "inside",
    "make_dirs",
    "read_text",
    "resolve",
    "symlink",
    "unlink",
    "write",
]

Kind = Literal["file", "entry", "dir"]


class Escape(Exception):
    """A path a step may not touch: ``reason`` says why, ``resolved`` where it led."""

    def __init__(self, reason: str, resolved: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.resolved = resolved


def inside(path: str, root: str) -> bool:
    """Whether ``path`` (already resolved) is ``root`` or lies under it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_text(value: str) -> None:
    """Refuse a value no path (or link target) can be: empty, NUL, not encodable as UTF-8."""
    if not value:
        raise Escape("is empty: it names no file")
    if "\0" in value:
        raise Escape("holds a NUL byte, which no path can carry")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise Escape(f"is not valid text ({err.reason} at index {err.start})") from None


def resolve(root: Path, base: Path, value: str, kind: Kind) -> Path:
    """Where ``value`` (relative to ``base``, or absolute) really is; refused unless in ``root``.

    ``kind`` ``"file"``: a file to write, edit or read; every link is followed,
    and it must not be a directory. ``"entry"``: a directory entry made or
    removed as itself (a link's own path, a file to delete); the links of its
    parent are followed, the last component is not. ``"dir"``: a directory
    (a command's cwd); every link is followed.
    """
    check_text(value)
    real_root = os.path.realpath(root)
    candidate = os.path.join(base, value)
    if kind != "dir" and candidate.endswith((os.sep, os.sep + ".", os.sep + "..")):
        raise Escape("names a directory, not a file", os.path.realpath(candidate))
    if kind == "entry":
        head, name = os.path.split(candidate)
        if name in ("", ".", ".."):
            raise Escape("names a directory, not a file", os.path.realpath(candidate))
        resolved = os.path.join(os.path.realpath(head), name)
    else:
        resolved = os.path.realpath(candidate)
    if not inside(resolved, real_root):
        raise Escape("lies outside the scratch root", resolved)
    if kind != "dir":
        if resolved == real_root or (kind == "file" and os.path.isdir(resolved)):
            raise Escape("is a directory, not a file", resolved)
    return Path(resolved)


def _parent(path: Path, root: Path, *, make: bool) -> int:
    """A descriptor of ``path``'s directory, checked to be in ``root`` once it is open."""
    if make:
        make_dirs(path.parent, root)
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = os.path.realpath(path.parent)
    if not inside(real, os.path.realpath(root)):
        os.close(fd)
        raise Escape("lies outside the scratch root (its directory moved there once open)", real)
    return fd


def make_dirs(path: Path, root: Path) -> None:
    """``mkdir -p`` of a resolved ``path``, refusing a directory that resolves outside ``root``."""
    real_root = os.path.realpath(root)
    missing: list[Path] = []
    probe = path
    while not probe.exists():
        missing.append(probe)
        probe = probe.parent
    for directory in reversed(missing):
        if not inside(os.path.realpath(directory.parent), real_root):
            raise Escape("lies outside the scratch root", os.path.realpath(directory))
        os.mkdir(directory)


def read_text(path: Path, root: Path) -> str | None:
    """The text of a resolved file, or None when there is none (no link is followed)."""
    fd = _parent(path, root, make=False) if path.parent.exists() else None
    if fd is None:
        return None
    try:
        try:
            f = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
        except FileNotFoundError:
            return None
        with os.fdopen(f, "rb") as file:
            return file.read().decode("utf-8")
    finally:
        os.close(fd)


def write(path: Path, root: Path, text: str, *, executable: bool = False) -> None:
    """Write ``text`` to a resolved file, making its directories (no link is followed)."""
    data = text.encode("utf-8")
    fd = _parent(path, root, make=True)
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
        f = os.open(path.name, flags, 0o666, dir_fd=fd)
        with os.fdopen(f, "wb") as file:
            file.write(data)
            if executable:
                os.fchmod(file.fileno(), 0o755)
    finally:
        os.close(fd)


def unlink(path: Path, root: Path) -> bool:
    """Delete a file (a link itself, never what it points at); False when there is none."""
    if not path.parent.is_dir():
        return False
    fd = _parent(path, root, make=False)
    try:
        try:
            info = os.lstat(path.name, dir_fd=fd)
        except FileNotFoundError:
            return False
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            return False
        os.unlink(path.name, dir_fd=fd)
        return True
    finally:
        os.close(fd)


def symlink(path: Path, root: Path, target: str) -> None:
    """Make the resolved entry ``path`` a link to ``target`` (which may point anywhere)."""
    fd = _parent(path, root, make=True)
    try:
        os.symlink(target, path.name, dir_fd=fd)
    finally:
        os.close(fd)
