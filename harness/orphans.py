"""Processes of earlier runs whose pytest is gone: found, killed, and reported.

A run killed hard — SIGKILL to tox, pytest and its xdist workers, as a CI
cancel or the OOM killer does — never reaches its session-end cleanup, so
``contenox run … --timeout 60s`` and its ``contenox acp`` child were left
reparented to pid 1, and the next run neither saw nor reaped them.

Every child the harness starts carries ``E2E_HARNESS_SESSION=<token>``
(:mod:`harness.environment`), and the token names the process that started
it: ``<pid>.<start time>.<random>``. That makes the processes themselves the
registry: a marked process whose owner pid no longer runs with that start
time (so is gone, or was recycled) belongs to a run that cannot clean up
after itself any more. :func:`reap_orphans` kills every such process at the
start of a run, and the plugin names each one in the header. A token in
another format (from a harness before this one) is left alone: its owner
cannot be told.
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass

from .environment import SESSION_VAR, process_start, session_token

__all__ = ["Orphan", "find_orphans", "owner_alive", "reap_orphans"]


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


def find_orphans(proc: str = "/proc") -> list[Orphan]:
    """Every live process marked by a run whose pytest is gone (never this run's)."""
    ours = session_token()
    found: list[Orphan] = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    alive: dict[str, bool | None] = {}
    for name in entries:
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"{proc}/{name}/environ", "rb") as f:
                token = _marker(f.read())
        except OSError:
            continue  # gone already, or not ours to read
        if token is None or token == ours:
            continue
        if token not in alive:
            alive[token] = owner_alive(token, proc)
        if alive[token] is False:
            found.append(Orphan(int(name), _argv(int(name), proc), token))
    return found


def reap_orphans(proc: str = "/proc") -> list[Orphan]:
    """Kill every orphan (SIGKILL; their runs are gone); return those killed."""
    killed: dict[int, Orphan] = {}
    # An orphan may fork while we look; a few rounds catch its children too.
    for _ in range(5):
        found = [o for o in find_orphans(proc) if o.pid not in killed]
        if not found:
            break
        for orphan in found:
            try:
                os.kill(orphan.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed[orphan.pid] = orphan
    return sorted(killed.values(), key=lambda o: o.pid)
