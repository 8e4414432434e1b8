"""Running a command to completion, and asserting on what it printed.

Every child is spawned by :mod:`harness.process` (its own session, so its own
process group, with default signal dispositions) and has a timeout; on
overrun the whole group is killed and :class:`CommandTimeout` carries the
partial output. Every failed assertion prints the argv and both streams, so a
red case explains itself without a rerun::

    result = run(["contenox", "version"], env=env, cwd=work)
    result.assert_success().assert_stdout_contains("v1.0.0")
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping, Sequence

from .process import Process, kill_group
from .result import DEFAULT_TIMEOUT, CommandTimeout, Result, notices

__all__ = [
    "DEFAULT_TIMEOUT",
    "CommandTimeout",
    "Result",
    "kill_group",
    "notices",
    "run",
]


def _feed(proc: Process, data: bytes) -> None:
    # In its own thread: a child that never reads its stdin must not block
    # the caller past the timeout (the group is killed then, and this write
    # fails with a broken pipe).
    try:
        proc.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass
    proc.close_stdin()


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    stdin: str | bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> Result:
    """Run ``argv`` to completion and return its :class:`Result`.

    ``stdin`` is written then closed (no stdin means ``/dev/null``, never the
    terminal pytest runs in). On overrun the child's whole process group is
    killed and :class:`CommandTimeout` is raised with the partial output.
    Whatever the child left running in its group is killed either way.
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    deadline = time.monotonic() + timeout
    proc = Process(argv, env=env, cwd=cwd, stdin=data is not None)
    try:
        if data is not None:
            feeder = threading.Thread(target=_feed, args=(proc, data), daemon=True)
            feeder.start()
            feeder.join(timeout=timeout)
        # The child may have used the whole timeout reading its stdin; a
        # sliver left still lets wait() report the timeout with the output.
        return proc.wait(timeout=max(deadline - time.monotonic(), 1e-3))
    except CommandTimeout as overrun:
        # Report the timeout the caller gave, not the remainder waited.
        raise CommandTimeout(overrun.result, timeout) from None
    except BaseException:
        proc.kill()
        raise
