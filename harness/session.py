"""The session marker every child carries, and the registry of the runs that minted one.

Every child the harness starts carries ``E2E_HARNESS_SESSION=<token>``
(:data:`SESSION_VAR`, set by :mod:`harness.environment`). The token names the
process that started it: ``<pid>.<start time>.<random>``. Before its first
child, a process registers its token as an empty file in
``<cache dir>/sessions/`` (:func:`register`), so a later run can tell whether
the pytest that started a process still lives and reap what it left
(:mod:`harness.orphans`).

This module is the floor both stand on: the environment puts the marker in,
the reaper reads it back, and neither imports the other.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

from .cache import cache_dir

__all__ = ["SESSION_VAR", "process_start", "register", "registry", "session_token"]

# Every child carries this variable, so the plugin can find what the suite
# started and left running (even a process that left its group) by reading
# /proc/*/environ. Not CONTENOX_*: contenox reads those.
SESSION_VAR = "E2E_HARNESS_SESSION"


def process_start(pid: int, proc: str = "/proc") -> str | None:
    """The start time of ``pid`` in clock ticks since boot, or None if it is gone.

    With the pid it names a process uniquely: a recycled pid has a later start.
    A zombie is gone (it has exited; only its parent has not reaped it yet).
    """
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    # fields[0] is field 3 of stat(5), the state; field 22 is the start time.
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _new_token() -> str:
    pid = os.getpid()
    return f"{pid}.{process_start(pid) or '0'}.{uuid.uuid4().hex[:12]}"


# One token per pytest process (each xdist worker has its own), so a worker
# that finishes early never mistakes a busy neighbour's children for leftovers.
_SESSION_TOKEN = _new_token()


def session_token() -> str:
    """This process's marker value: what :data:`SESSION_VAR` holds in every child it starts."""
    return _SESSION_TOKEN


_registered: set[Path] = set()


def registry(environ: Mapping[str, str] | None = None) -> Path:
    """The directory of registered session tokens: ``<cache dir>/sessions``."""
    return cache_dir(environ) / "sessions"


def register(directory: Path | None = None) -> None:
    """Register this process's token (once per registry); a read-only cache is no error."""
    where = registry() if directory is None else directory
    if where in _registered:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        (where / session_token()).touch()
    except OSError:
        return  # no registry, no reaping of this run's orphans; the run itself goes on
    _registered.add(where)
