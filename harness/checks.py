"""The type and value checks a Step and a Case pass when they are built.

Without them a wrong type is accepted when the case is written and fails at
run time with Python's own words — ``step('mission', 5)`` as "expected str,
bytes or os.PathLike object, not int" from inside ``subprocess``, and
``exit_code="0"`` as "expected exit code 0, got 0". Here each is refused
when the module is imported, before anything spawns, naming the step (by
its command and where it was written) or the case, and the field.

The checks live apart from :mod:`harness.case` so the dataclasses stay
readable; ``Step.__post_init__`` and ``Case.__post_init__`` call them first.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .guard import check_names, check_relpath, check_step_env

__all__ = ["check_case", "check_step", "written_at"]

_HARNESS = str(Path(__file__).resolve().parent)


def written_at() -> str:
    """``file:line`` of the first frame outside the harness: where the case was written."""
    frame = sys._getframe(1)
    while frame is not None:
        filename = frame.f_code.co_filename
        if (
            not filename.startswith(_HARNESS)
            and not filename.startswith("<")
            and not filename.endswith(os.sep + "dataclasses.py")
        ):
            try:
                shown = os.path.relpath(filename)
            except ValueError:
                shown = filename
            return f"{shown}:{frame.f_lineno}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _plain_text(value: object) -> bool:
    return isinstance(value, str) and "\0" not in value


def _step_label(args: object) -> str:
    if isinstance(args, (list, tuple)):
        shown = ", ".join(repr(a) for a in args)
        label = f"step({shown})"
    else:
        label = f"step(args={args!r})"
    if len(label) > 80:
        label = label[:77] + "...)"
    return f"{label} at {written_at()}"


def _strings(value: object, where: str, error: type[Exception]) -> None:
    if isinstance(value, str):
        return  # the dataclass's own check names the fix for one string
    if not isinstance(value, (list, tuple)):
        raise error(f"{where} must be a list of strings, got {value!r}")
    for index, item in enumerate(value):
        if isinstance(item, re.Pattern):
            continue  # an expectation may be a compiled regex
        if not _plain_text(item):
            raise error(f"{where}[{index}] must be a string without NUL, got {item!r}")


def check_step(step: Any, error: type[Exception]) -> None:
    """Refuse a Step whose fields have the wrong type or an impossible value."""
    label = _step_label(step.args)
    args = step.args
    if not isinstance(args, str):
        if not isinstance(args, (list, tuple)):
            raise error(f"{label}: args must be a list of strings, got {args!r}")
        for index, arg in enumerate(args):
            if not isinstance(arg, str):
                raise error(
                    f"{label}: args[{index}] must be a string, got {arg!r} "
                    f"({type(arg).__name__}); write it as {str(arg)!r}"
                )
            if "\0" in arg:
                raise error(
                    f"{label}: args[{index}] {arg!r} contains a NUL byte, which no "
                    "command line can carry"
                )
    if step.stdin is not None and not isinstance(step.stdin, (str, bytes)):
        raise error(f"{label}: stdin must be a string, got {step.stdin!r}")
    env = step.env
    if not isinstance(env, Mapping):
        raise error(f"{label}: env must be a mapping of names to strings, got {env!r}")
    check_names(env, f"{label}", error)
    for name, value in env.items():
        if not _plain_text(value):
            raise error(
                f"{label}: env[{name!r}] must be a string without NUL, got {value!r} "
                f"({type(value).__name__}); environment values are text"
            )
    check_step_env(env, label, error)
    timeout = step.timeout
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, (int, float))
        or not math.isfinite(timeout)
    ):
        raise error(f"{label}: timeout must be a number of seconds, got {timeout!r}")
    code = step.exit_code
    if (
        code is not None
        and code != "non-zero"
        and (isinstance(code, bool) or not isinstance(code, int))
    ):
        raise error(
            f"{label}: exit_code must be a whole number or None (any exit code), "
            f'or "non-zero", got {code!r}'
        )
    for name in (
        "stdout_has",
        "stdout_lacks",
        "stderr_has",
        "stderr_lacks",
        "notices_has",
        "notices_lacks",
    ):
        _strings(getattr(step, name), f"{label}: {name}", error)
    if not isinstance(step.full_stderr, bool):
        raise error(f"{label}: full_stderr must be True or False, got {step.full_stderr!r}")


def _files(value: object, where: str, error: type[Exception]) -> None:
    if not isinstance(value, Mapping):
        raise error(f"{where} must be a mapping of relative paths to text, got {value!r}")
    for rel, text in value.items():
        check_relpath(rel, f"{where}[{rel!r}]", error)
        if not isinstance(text, str):
            raise error(f"{where}[{rel!r}] must be the file's text (a string), got {text!r}")


def check_case(case: Any, error: type[Exception], defect: type = str) -> None:
    """Refuse a Case whose fields have the wrong type, or whose files leave the scratch root.

    ``defect`` is the quarantine type a ``defect=`` may hold besides a string
    (:class:`harness.case.Defect`, passed in by the Case: this module is below it).
    """
    name = case.name
    if not isinstance(name, str):
        raise error(f"a Case needs a name that states the promise, got {name!r}")
    where = f"case {name!r} ({written_at()})"
    steps = case.steps
    if isinstance(steps, (str, bytes)) or not isinstance(steps, (list, tuple)):
        raise error(f"{where}: steps must be a list of step(...), got {steps!r}")
    _files(case.files, f"{where}: files", error)
    _files(case.home_files, f"{where}: home_files", error)
    backends = case.backends
    if not isinstance(backends, Mapping):
        raise error(f"{where}: backends must map backend names to Scripts, got {backends!r}")
    for backend in backends:
        if not isinstance(backend, str) or not re.fullmatch(r"[\w.-]+", backend):
            raise error(
                f"{where}: backends key {backend!r} must be a backend name "
                "(letters, digits, '_', '.', '-')"
            )
    probes = case.probes
    if isinstance(probes, (str, bytes)) or not isinstance(probes, (list, tuple)):
        raise error(f"{where}: probes must be a list of probe(...)/output_of(...), got {probes!r}")
    for index, p in enumerate(probes):
        if not isinstance(getattr(p, "name", None), str) or not callable(getattr(p, "read", None)):
            raise error(
                f"{where}: probes[{index}] must be a probe(...) or output_of(...), got {p!r}"
            )
    redact = case.redact
    if not isinstance(redact, Mapping):
        raise error(f"{where}: redact must map regexes to placeholders, got {redact!r}")
    for pattern, placeholder in redact.items():
        if not isinstance(pattern, str) or not isinstance(placeholder, str):
            raise error(f"{where}: redact[{pattern!r}] must map a regex string to a string")
        try:
            re.compile(pattern)
        except re.error as err:
            raise error(f"{where}: redact[{pattern!r}] is not a regex: {err}") from None
    for flag in ("init", "serves_all_turns", "snapshot"):
        if not isinstance(getattr(case, flag), bool):
            raise error(f"{where}: {flag} must be True or False, got {getattr(case, flag)!r}")
    if case.defect is not None and not isinstance(case.defect, (str, defect)):
        raise error(
            f"{where}: defect must say what was observed (a Defect(...)), got {case.defect!r}"
        )
    if case.default_backend is not None and not isinstance(case.default_backend, str):
        raise error(
            f"{where}: default_backend must be a backend name, got {case.default_backend!r}"
        )
