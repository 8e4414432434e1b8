"""The switch that keeps a poll's commands out of the transcript: :func:`quiet`.

Polling is not a transcript: the commands a ``wait_until`` runs until its
condition holds vary in number from run to run. :mod:`harness.process` (whose
``wait_until`` polls) turns the switch on; :mod:`harness.recorder` reads it.
Neither imports the other for it: the switch lives here, below both.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["is_quiet", "quiet"]

_depth = 0


@contextmanager
def quiet() -> Iterator[None]:
    """Record nothing inside: a poll's repeated commands are noise, and their count varies."""
    global _depth
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1


def is_quiet() -> bool:
    """True inside a :func:`quiet` block (of any thread of this process)."""
    return _depth > 0
