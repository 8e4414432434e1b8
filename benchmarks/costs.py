"""pytest plugin: where each case's time goes. ``bench.py --costs`` loads it with ``-p costs``.

For every test it records, into the JSON-lines file named by ``COSTS_OUT``:

- ``wall``: setup + call + teardown, as pytest ran them;
- ``init``, ``registration`` (``backend add``, ``config set``) and ``commands``
  (every other contenox command run to completion): wall time inside
  ``Instance.run``, with the number of commands of each kind;
- ``background``: how many contenox processes were started in the background
  (``start_contenox``, ``open_acp``, ``open_terminal``); the time spent waiting
  on them is part of ``rest``;
- ``sleep``: time the harness spent in ``time.sleep`` (polling);
- ``harness_cpu``: this process's own CPU (user + system) over the test: the
  harness's cost, with every contenox child left out.

``rest`` is what remains of ``wall``: waiting on background processes (an ACP
turn, a pty screen, a run blocked on an ask) plus the harness's Python.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from typing import Any

import pytest

import harness.process as process
from harness.instance import Instance

_current: dict[str, Any] | None = None
_real_run = Instance.run
_real_sleep = time.sleep
_real_process_init = process.Process.__init__


def _kind(argv: list[str]) -> str:
    words = [os.path.basename(argv[0]), *argv[1:3]]
    if words[1:2] == ["init"]:
        return "init"
    if words[1:3] in (["backend", "add"], ["config", "set"]):
        return "registration"
    return "commands"


def _timed_run(self: Instance, argv: Any, *args: Any, **kwargs: Any) -> Any:
    started = time.perf_counter()
    try:
        return _real_run(self, argv, *args, **kwargs)
    finally:
        if _current is not None:
            kind = _kind([str(a) for a in argv])
            _current[kind] += time.perf_counter() - started
            _current[f"{kind}_n"] += 1


def _timed_sleep(seconds: float) -> None:
    started = time.perf_counter()
    try:
        _real_sleep(seconds)
    finally:
        if _current is not None:
            _current["sleep"] += time.perf_counter() - started


def _counted_init(self: process.Process, *args: Any, **kwargs: Any) -> None:
    if _current is not None:
        _current["background"] += 1
    _real_process_init(self, *args, **kwargs)


Instance.run = _timed_run  # type: ignore[method-assign]
time.sleep = _timed_sleep
process.Process.__init__ = _counted_init  # type: ignore[method-assign]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    global _current
    parts = ("init", "registration", "commands", "sleep", "background")
    _current = dict.fromkeys((*parts, "init_n", "registration_n", "commands_n"), 0.0)
    started, cpu = time.perf_counter(), _cpu()
    yield
    record = dict(_current, test=item.nodeid)
    record["wall"] = time.perf_counter() - started
    record["harness_cpu"] = _cpu() - cpu
    _current = None
    out = os.environ.get("COSTS_OUT")
    if out:
        with open(out, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
