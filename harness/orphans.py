"""Processes of earlier runs whose pytest is gone: found, killed, and reported.

A run killed hard — SIGKILL to tox, pytest and its xdist workers, as a CI
cancel or the OOM killer does — never reaches its session-end cleanup, so
``contenox run … --timeout 60s`` and its ``contenox acp`` child were left
reparented to pid 1, and the next run neither saw nor reaped them.

Every child the harness starts carries ``E2E_HARNESS_SESSION=<token>``
(:mod:`harness.environment`), and the token names the process that started
it: ``<pid>.<start time>.<random>``. Before its first child, a process
registers its token as an empty file in ``<cache dir>/sessions/``. At the
start of a run, :func:`reap_orphans` reads the registry: a token whose owner
pid no longer runs with that start time (gone, a zombie, or a recycled pid)
belongs to a run that cannot clean up after itself any more, so every
process still marked with it is killed (the plugin names each in the header)
and the token is struck off.

The registry scopes the reaping: a run only judges runs that used the same
cache directory (the same machine's suite, not a test's scratch copy), and
when no registered owner is gone it does not even scan ``/proc``.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from .session import SESSION_VAR, process_start, register, registry, session_token

__all__ = ["Orphan", "find_orphans", "owner_alive", "reap_orphans", "register", "registry"]


@dataclass(frozen=True)
class Orphan:
    """A marked process whose starting pytest is gone."""

    pid: int
    argv: str
    token: str

    def describe(self) -> str:
        owner = self.token.split(".", 1)[0]
        return f"pid {self.pid}: {self.argv} (started by pytest pid {owner}, gone)"


def _argv(pid: int, proc: str) -> str:
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return "?"
    return " ".join(a.decode("utf-8", "replace") for a in raw.split(b"\0") if a) or "?"


def owner_alive(token: str, proc: str = "/proc") -> bool | None:
    """Whether the process that minted ``token`` still runs; None if the token does not say."""
    parts = token.split(".")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return process_start(int(parts[0]), proc) == parts[1]


def _marker(environ: bytes) -> str | None:
    prefix = f"{SESSION_VAR}=".encode()
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode("ascii", "replace")
    return None


def _gone(directory: Path, proc: str) -> set[str]:
    """Registered tokens whose owner is gone (never this process's own)."""
    try:
        tokens = [p.name for p in directory.iterdir()]
    except OSError:
        return set()
    ours = session_token()
    return {t for t in tokens if t != ours and owner_alive(t, proc) is False}


def find_orphans(directory: Path | None = None, proc: str = "/proc") -> list[Orphan]:
    """Every live process marked with a registered token whose pytest is gone."""
    gone = _gone(registry() if directory is None else directory, proc)
    if not gone:
        return []
    found: list[Orphan] = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"{proc}/{name}/environ", "rb") as f:
                token = _marker(f.read())
        except OSError:
            continue  # gone already, or not ours to read
        if token in gone and process_start(int(name), proc) is not None:
            found.append(Orphan(int(name), _argv(int(name), proc), token))
    return found


def reap_orphans(directory: Path | None = None, proc: str = "/proc") -> list[Orphan]:
    """Kill every orphan (SIGKILL; their runs are gone), strike off their tokens; return them."""
    where = registry() if directory is None else directory
    gone = _gone(where, proc)
    killed: dict[int, Orphan] = {}
    # An orphan may fork while we look; a few rounds catch its children too.
    for _ in range(5 if gone else 0):
        found = [o for o in find_orphans(where, proc) if o.pid not in killed]
        if not found:
            break
        for orphan in found:
            try:
                os.kill(orphan.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed[orphan.pid] = orphan
    for token in gone:
        (where / token).unlink(missing_ok=True)
    return sorted(killed.values(), key=lambda o: o.pid)
