"""How many xdist workers ``-n auto`` starts: several per core.

A case spends most of its wall time waiting on contenox, not computing: a
``contenox run`` of a two-turn dialog takes about 2.5 s of wall time for 0.3 s
of CPU, because contenox polls (``run``/``mission fire --wait`` every 2 s, the
event bus every 200 ms, approvals every second), and the harness waits on it.
With one worker per core the cores idle much of the run (``tox -e bench``
prints the suite's wall time at one worker per core and at more, side by side).

``CONTENOX_E2E_WORKERS_PER_CORE`` holds the factor: ``tox -e e2e`` sets 3 and
``tox -e py`` 2 (the harness's own tests wait too: ACP lingers, fake builds,
timeouts). Unset, ``-n auto`` keeps xdist's own count, one worker per core.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["WORKERS_PER_CORE_VAR", "WorkersError", "auto_workers", "cores"]

WORKERS_PER_CORE_VAR = "CONTENOX_E2E_WORKERS_PER_CORE"
# More than this many per core only adds contention: the bench saw no gain past 4.
_MOST_PER_CORE = 8


class WorkersError(ValueError):
    """A ``CONTENOX_E2E_WORKERS_PER_CORE`` that is not a whole number from 1 to 8."""


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def auto_workers(environ: Mapping[str, str], ncores: int) -> int | None:
    """``-n auto``'s worker count under ``environ``; None: the variable is unset (xdist decides)."""
    raw = environ.get(WORKERS_PER_CORE_VAR, "").strip()
    if not raw:
        return None
    try:
        factor = int(raw)
    except ValueError:
        factor = 0
    if not 1 <= factor <= _MOST_PER_CORE:
        raise WorkersError(
            f"{WORKERS_PER_CORE_VAR}={raw!r}: expected a whole number of xdist workers per "
            f"core from 1 to {_MOST_PER_CORE} (tox -e e2e sets 3; 1 is one worker per core, "
            "xdist's own -n auto)"
        )
    return factor * ncores
