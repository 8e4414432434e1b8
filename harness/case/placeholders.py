"""Placeholders: ``{name}`` in a step's text, filled with what earlier steps captured.

Values only: the pattern, the names a text holds, the text filled, and how an
expectation (a string is a substring, a regex is searched) reads and shows.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TypeAlias

__all__ = [
    "PLACEHOLDER",
    "Expectation",
    "fill",
    "fill_expectation",
    "found",
    "placeholders",
    "shown",
]

Expectation: TypeAlias = "str | re.Pattern[str]"
# ``${NAME}`` is an environment variable contenox expands (a login body's
# ``${E2E_USER}``), never a capture: the ``$`` keeps it literal.
PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholders(value: object) -> set[str]:
    """The ``{name}`` placeholders in a string or a regex's pattern."""
    if isinstance(value, re.Pattern):
        value = value.pattern
    if isinstance(value, str):
        return set(PLACEHOLDER.findall(value))
    return set()


def fill(value: str, captures: Mapping[str, str]) -> str:
    """``value`` with every ``{name}`` replaced by the captured value."""
    return PLACEHOLDER.sub(lambda m: captures.get(m.group(1), m.group(0)), value)


def fill_expectation(value: Expectation, captures: Mapping[str, str]) -> Expectation:
    """An expectation with its placeholders filled (escaped, inside a regex)."""
    if isinstance(value, re.Pattern):
        pattern = PLACEHOLDER.sub(
            lambda m: re.escape(captures[m.group(1)]) if m.group(1) in captures else m.group(0),
            value.pattern,
        )
        return re.compile(pattern, value.flags)
    return fill(value, captures)


def found(needle: Expectation, text: str) -> bool:
    """A string is a substring; a regex is searched."""
    if isinstance(needle, re.Pattern):
        return needle.search(text) is not None
    return needle in text


def shown(needle: Expectation) -> str:
    return f"/{needle.pattern}/" if isinstance(needle, re.Pattern) else repr(needle)
