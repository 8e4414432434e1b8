"""What a finished child did, and asserting on it: :class:`Result`, :class:`CommandTimeout`.

The floor under :mod:`harness.process` (which spawns every child) and
:mod:`harness.command` (which runs one to completion): both hand back a
:class:`Result`, so a background process that was waited for reads like a
command that ran in the foreground.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_TIMEOUT",
    "CommandTimeout",
    "Result",
    "notices",
]

DEFAULT_TIMEOUT = 120.0

# contenox's structured log lines (slog text handler): "time=… level=… msg=…".
_LOG_LINE = re.compile(r"^time=\S+ level=[A-Z]+ ")


def notices(stderr: str) -> str:
    """stderr without the structured ``time=… level=…`` log lines: what a person reads."""
    return "".join(line for line in stderr.splitlines(keepends=True) if not _LOG_LINE.match(line))


def _indent(text: str) -> str:
    if not text:
        return "    (empty)\n"
    body = "".join(f"    {line}\n" for line in text.splitlines())
    return body


@dataclass(frozen=True)
class Result:
    """What one finished command did: argv, exit code, both streams, duration."""

    argv: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False

    @property
    def notices(self) -> str:
        """stderr minus structured log lines."""
        return notices(self.stderr)

    def describe(self, *, logs: bool = True) -> str:
        """argv, exit code and both streams, for a failure message."""
        status = "timed out" if self.timed_out else f"exit {self.exit_code}"
        stderr = self.stderr if logs else self.notices
        return (
            f"$ {' '.join(self.argv)}\n"
            f"  {status} after {self.duration:.2f}s\n"
            f"  stdout:\n{_indent(self.stdout)}"
            f"  stderr{'' if logs else ' (notices)'}:\n{_indent(stderr)}"
        )

    def _fail(self, what: str) -> AssertionError:
        return AssertionError(f"{what}\n{self.describe()}")

    def assert_exit(self, code: int) -> Result:
        if self.exit_code != code:
            raise self._fail(f"expected exit code {code}, got {self.exit_code}")
        return self

    def assert_success(self) -> Result:
        if self.exit_code != 0:
            raise self._fail(f"expected success (exit 0), got exit {self.exit_code}")
        return self

    def assert_failure(self) -> Result:
        if self.exit_code == 0:
            raise self._fail("expected a failure (non-zero exit), got exit 0")
        return self

    def _contains(self, stream: str, needle: str | re.Pattern[str], want: bool) -> Result:
        text = self.notices if stream == "notices" else getattr(self, stream)
        found = (
            needle.search(text) is not None if isinstance(needle, re.Pattern) else needle in text
        )
        if found != want:
            shown = needle.pattern if isinstance(needle, re.Pattern) else needle
            verb = "to contain" if want else "not to contain"
            raise self._fail(f"expected {stream} {verb} {shown!r}")
        return self

    def assert_stdout_contains(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("stdout", needle, True)

    def refute_stdout_contains(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("stdout", needle, False)

    def assert_stderr_contains(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("stderr", needle, True)

    def refute_stderr_contains(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("stderr", needle, False)

    def assert_notices_contain(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("notices", needle, True)

    def refute_notices_contain(self, needle: str | re.Pattern[str]) -> Result:
        return self._contains("notices", needle, False)


class CommandTimeout(AssertionError):
    """A command overran its timeout; its process group was killed.

    ``result`` holds what it printed before it was killed.
    """

    def __init__(self, result: Result, timeout: float) -> None:
        self.result = result
        self.timeout = timeout
        super().__init__(
            f"command overran its {timeout:g}s timeout; its process group was killed. "
            f"Partial output:\n{result.describe()}"
        )
