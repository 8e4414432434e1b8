"""What every probe shares: running its command, and reading numbers and JSON with a
clear error."""

from __future__ import annotations

import inspect
import json
from collections.abc import MutableMapping, Sequence
from typing import Any

from ..instance import Instance
from ..recorder import recorded_probe
from ..result import Result
from ..table import TableError


class ProbeError(AssertionError):
    """A probe's command failed, or printed something the probe cannot read.

    An ``AssertionError`` so pytest reports it as the case failing, with the
    command and both streams in the message.
    """


def _probe(instance: Instance, *args: str) -> Result:
    """Run ``contenox <args>``; raise with the whole story unless it exits 0."""
    result = instance.contenox(*args)
    if result.exit_code != 0:
        raise ProbeError(
            f"probe `contenox {' '.join(args)}` failed, so the state it reads is unknown.\n"
            "Fix the instance setup (init, backend, defaults) or the arguments; "
            "the command said:\n" + result.describe(logs=False)
        )
    return result


def _source(*args: str) -> str:
    return "contenox " + " ".join(args)


def _int(value: str, what: str, source: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise TableError(f"{source}: {what} should be a whole number, got {value!r}") from None


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ProbeError(
            f"{source} did not print JSON ({err}); whole output:\n{text or '(empty)'}"
        ) from None


def record_probes(namespace: MutableMapping[str, Any], names: Sequence[str]) -> None:
    """Wrap every probe named in ``names`` (a function whose first parameter is ``instance``)
    so its typed value lands in the instance's transcript, by name; its own commands do
    not (polling and parsing are the probe's business). Callers within the module go
    through the wrapped function too, as they did when probes were one module."""
    for name in names:
        fn = namespace[name]
        if (
            inspect.isfunction(fn)
            and next(iter(inspect.signature(fn).parameters), "") == "instance"
        ):
            namespace[name] = recorded_probe(fn)
