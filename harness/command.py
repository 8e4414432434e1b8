"""Running a command to completion, and asserting on what it printed.

Every child starts in its own session (so its own process group) and has a
timeout; on overrun the whole group is killed and :class:`CommandTimeout`
carries the partial output. Every failed assertion prints the argv and both
streams, so a red case explains itself without a rerun::

    result = run(["contenox", "version"], env=env, cwd=work)
    result.assert_success().assert_stdout_contains("v1.0.0")
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "DEFAULT_TIMEOUT",
    "CommandTimeout",
    "Result",
    "kill_group",
    "notices",
    "run",
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


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Signal the child's whole process group (it leads its own session)."""
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", errors="replace")


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
    """
    if timeout <= 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    args = tuple(os.fspath(a) for a in argv)
    data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    started = time.monotonic()
    proc = subprocess.Popen(
        args,
        stdin=subprocess.PIPE if data is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env) if env is not None else None,
        cwd=Path(cwd) if cwd is not None else None,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(input=data, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        # The group is dead, so every pipe writer is gone and this returns.
        # A descendant that left the group could hold a pipe open; bound it.
        try:
            out, err = proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = b"", b""
        result = Result(
            argv=args,
            exit_code=proc.returncode if proc.returncode is not None else -signal.SIGKILL,
            stdout=_decode(out),
            stderr=_decode(err),
            duration=time.monotonic() - started,
            timed_out=True,
        )
        raise CommandTimeout(result, timeout) from None
    except BaseException:
        kill_group(proc)
        proc.wait()
        raise
    finally:
        # A child that exited normally may have left background descendants
        # in its group; nothing a case starts may outlive it.
        kill_group(proc)
    return Result(
        argv=args,
        exit_code=proc.returncode,
        stdout=_decode(out),
        stderr=_decode(err),
        duration=time.monotonic() - started,
    )
