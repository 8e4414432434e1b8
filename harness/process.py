"""Background processes: start one, talk to it while it runs, then wait for its Result.

A case that needs two processes at once — a ``contenox run`` blocked on an
approval while ``contenox approvals respond`` answers it — starts the first in
the background::

    blocked = start_contenox(instance, "run", "--policy", "run", "check the env")
    wait_until(lambda: "permission" in instance.must("approvals", "list").stdout,
               timeout=30, what="the run's ask to reach the inbox", context=blocked.describe)
    ...
    blocked.wait(timeout=60).assert_success()

This module is the one place a child is spawned, signalled and reaped:
commands run to completion (:func:`harness.command.run`), background steps,
terminals (:func:`spawn_pty`) and the commands an ACP agent runs in the
editor's terminals all start here. Every child leads its own session (so its
own process group): a signal, a kill and the end-of-case cleanup reach the
whole tree, not just the leader. Every child starts with the default
dispositions of the signals a person uses to stop it (SIGINT, SIGHUP, SIGQUIT,
SIGTERM), even when the runner ignores them — under ``nohup`` or as a
background job of a non-interactive shell an ignored signal would otherwise be
inherited, and ``hangup()`` could not end the child. :func:`start_in` and
:func:`start_contenox` register the cleanup on the instance, so whatever a case
leaves running is killed and reported. They take the instance by its shape
(:class:`Host`): this module is below :mod:`harness.instance`, which runs its
commands through it.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol, TypeVar

import pexpect

from .quiet import quiet
from .result import CommandTimeout, Result

__all__ = [
    "STOP_SIGNALS",
    "Host",
    "Process",
    "ProcessExited",
    "WaitTimeout",
    "group_alive",
    "kill_group",
    "popen",
    "signal_group",
    "spawn_pty",
    "start",
    "start_contenox",
    "start_in",
    "wait_until",
]

T = TypeVar("T")

# How long a reader thread may keep a pipe open after the leader exited: a
# descendant that left the group can hold it; nothing waits on it forever.
_DRAIN_TIMEOUT = 5.0


class WaitTimeout(AssertionError):
    """:func:`wait_until` ran out of time; the message says what was awaited and what was seen."""


def _wait_exit(popen: subprocess.Popen[bytes], timeout: float) -> None:
    """``popen.wait(timeout)``, woken by the exit itself instead of by naps.

    subprocess's ``wait(timeout)`` sleeps in a loop, up to 50 ms a nap: a command
    that took 25 ms was seen done 10-30 ms later, and a case runs hundreds. A
    pidfd (Linux 5.3) becomes readable the moment the process exits; where there
    is none, this is ``popen.wait(timeout)``. Raises ``subprocess.TimeoutExpired``.
    """
    if popen.returncode is not None:
        return
    try:
        fd = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):
        popen.wait(timeout=timeout)
        return
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        if not poller.poll(max(timeout, 0.0) * 1000):
            raise subprocess.TimeoutExpired(popen.args, timeout)
    finally:
        os.close(fd)
    popen.wait()


class ProcessExited(AssertionError):
    """A background process ended before it printed what a case was waiting for."""


def wait_until(
    condition: Callable[[], T | None],
    timeout: float,
    *,
    what: str = "the condition",
    interval: float = 0.05,
    context: Callable[[], str] | None = None,
) -> T:
    """Poll ``condition`` until it returns something truthy; return that.

    On timeout raise :class:`WaitTimeout` naming ``what`` and attaching
    ``context()`` (for example a process's output so far), so a red case says
    what it was waiting for and what it saw instead::

        row = wait_until(lambda: find_ask(instance), timeout=30,
                         what="a pending ask in `approvals list`", context=proc.describe)
    """
    __tracebackhide__ = True
    if timeout <= 0:
        raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
    deadline = time.monotonic() + timeout
    while True:
        with quiet():  # a poll's commands are not the transcript: their count varies
            value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            seen = f"\nwhat was seen:\n{context()}" if context is not None else ""
            raise WaitTimeout(
                f"gave up after {timeout:g}s waiting for {what}; raise the timeout if the "
                f"product is merely slow, or look at why it never happened.{seen}"
            )
        time.sleep(interval)


def _decode(data: bytes | bytearray) -> str:
    return bytes(data).decode("utf-8", errors="replace")


# The signals a person stops a program with. A child gets their default
# dispositions back, whatever the runner set for itself.
STOP_SIGNALS = (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTERM)


def _child_setup() -> None:
    """Run in the child between fork and exec: default dispositions for the stop signals.

    An ignored signal survives exec (POSIX), so a runner under ``nohup`` would
    hand its children an ignored SIGHUP; a handled one is reset by exec anyway.
    """
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def _ignoring_a_stop_signal() -> bool:
    """Whether this process ignores a stop signal, which its children would inherit.

    Only then does a child need :func:`_child_setup`: a ``preexec_fn`` makes
    Python fork the whole interpreter and run Python in the child instead of
    using vfork, which cost about 30 ms on every command a case runs (a bare
    ``contenox version`` is 40 ms).
    """
    return any(signal.getsignal(sig) == signal.SIG_IGN for sig in STOP_SIGNALS)


def popen(
    argv: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """Spawn ``argv`` the one way every child is spawned: its own session, default signals.

    The low-level door for a caller that reads the pipes itself (the build's
    heartbeat); a case wants :func:`start_in` or :func:`start_contenox`.
    """
    return subprocess.Popen(
        tuple(os.fspath(a) for a in argv),
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=dict(env) if env is not None else None,
        cwd=Path(cwd) if cwd is not None else None,
        start_new_session=True,
        preexec_fn=_child_setup if _ignoring_a_stop_signal() else None,
    )


def spawn_pty(
    argv: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    rows: int,
    cols: int,
) -> pexpect.spawn[bytes]:
    """Spawn ``argv`` under a fresh pty of ``rows`` x ``cols`` (pexpect), default signals.

    The child leads its own session with the pty as its controlling terminal,
    so the pty's Ctrl-C and :func:`signal_group` reach its whole group.
    """
    args = [os.fspath(a) for a in argv]
    if not args:
        raise ValueError("argv is empty: name the program to run under the terminal")
    return pexpect.spawn(
        args[0],
        args[1:],
        env=dict(env) if env is not None else None,
        cwd=os.fspath(cwd) if cwd is not None else None,
        dimensions=(rows, cols),
        echo=False,
        preexec_fn=_child_setup,
    )


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to the process group ``pgid`` (a child this module spawned leads its own);
    a group that is gone, or that is no longer ours, is not an error."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Signal the child's whole process group (it leads its own session)."""
    signal_group(proc.pid, sig)


def group_alive(pgid: int) -> bool:
    """True while any process of group ``pgid`` is alive (a zombie leader counts)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # Someone else's process now has that id: not ours to report.
        return False
    return True


class Process:
    """A running child: its stdin, its process group, and what it printed so far.

    Build one with :func:`start`, :func:`start_in` or :func:`start_contenox`.

    >>> proc = start(["cat"])
    >>> proc.write("hello\\n"); proc.close_stdin()
    >>> proc.wait(timeout=5).assert_stdout_contains("hello")
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin: bool = True,
        on_stdout_line: Callable[[bytes], None] | None = None,
        merge_stderr: bool = False,
        queue_lines: bool = False,
    ) -> None:
        self.argv = tuple(os.fspath(a) for a in argv)
        # Every stdout line, in order, for a reader that consumes them (the
        # ACP wire); filled from the first byte, so nothing is missed.
        self.lines: queue.Queue[bytes] | None = queue.Queue() if queue_lines else None
        self._lock = threading.Lock()
        self._stdout = bytearray()
        self._stderr = bytearray()
        self._on_stdout_line = on_stdout_line
        self.started = time.monotonic()
        self._result: Result | None = None
        self._stdout_closed = threading.Event()
        # Told the Result once, when the process is finished (waited for or cleaned up).
        self.on_end: Callable[[Result], None] | None = None
        self._popen = popen(
            self.argv,
            env=env,
            cwd=cwd,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        )
        assert self._popen.stdout is not None
        self._readers = [
            threading.Thread(
                target=self._read, args=(self._popen.stdout, self._stdout, True), daemon=True
            )
        ]
        if self._popen.stderr is not None:
            self._readers.append(
                threading.Thread(
                    target=self._read, args=(self._popen.stderr, self._stderr, False), daemon=True
                )
            )
        for reader in self._readers:
            reader.start()

    def _read(self, pipe: IO[bytes], sink: bytearray, lines: bool) -> None:
        # Line by line on stdout so an ACP client sees each message as it
        # lands; stderr only ever needs to be whole.
        fd = pipe.fileno()
        read: Callable[[], bytes] = pipe.readline if lines else (lambda: os.read(fd, 65536))
        while True:
            try:
                chunk = read()
            except (OSError, ValueError):
                break
            if not chunk:
                break
            with self._lock:
                sink.extend(chunk)
            if lines and self.lines is not None:
                self.lines.put(chunk)
            if lines and self._on_stdout_line is not None:
                self._on_stdout_line(chunk)
        # At end of file the pipe is ours to close: left open, it is closed by
        # the garbage collector with a ResourceWarning (an error under -W error).
        with contextlib.suppress(OSError):
            pipe.close()
        if lines:
            self._stdout_closed.set()

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def running(self) -> bool:
        """True while the leader has not exited."""
        return self._popen.poll() is None

    @property
    def exit_code(self) -> int | None:
        """The leader's exit code (``-N`` for signal N), or None while it runs."""
        return self._popen.poll()

    @property
    def stdout_closed(self) -> bool:
        """True once stdout reached end of file and every line of it was delivered."""
        return self._stdout_closed.is_set()

    @property
    def stdout(self) -> str:
        """Everything on stdout so far."""
        with self._lock:
            return _decode(self._stdout)

    @property
    def stderr(self) -> str:
        """Everything on stderr so far (log lines and notices)."""
        with self._lock:
            return _decode(self._stderr)

    def output(self) -> bytes:
        """Every byte on stdout so far (with stderr too, when started with ``merge_stderr``)."""
        with self._lock:
            return bytes(self._stdout)

    def drain(self, timeout: float = _DRAIN_TIMEOUT) -> None:
        """Wait (at most ``timeout``) until what the pipes still hold has been read."""
        for reader in self._readers:
            reader.join(timeout=timeout)

    def write(self, data: str | bytes) -> None:
        """Write to the child's stdin and flush."""
        stdin = self._popen.stdin
        if stdin is None:
            raise ValueError(
                f"{self.argv[0]} was started without a stdin pipe; start it with stdin=True"
            )
        stdin.write(data.encode("utf-8") if isinstance(data, str) else data)
        stdin.flush()

    def close_stdin(self) -> None:
        """Close the child's stdin (EOF), as a pipe writer finishing does."""
        if self._popen.stdin is not None and not self._popen.stdin.closed:
            try:
                self._popen.stdin.close()
            except BrokenPipeError:
                pass

    def signal(self, sig: int) -> None:
        """Send ``sig`` to the child's whole process group."""
        kill_group(self._popen, sig)

    def interrupt(self) -> None:
        """SIGINT to the whole group, as Ctrl-C at a terminal does."""
        self.signal(signal.SIGINT)

    def hangup(self) -> None:
        """SIGHUP to the whole group, as a closing terminal does."""
        self.signal(signal.SIGHUP)

    def kill(self, *, grace: float = 0.0) -> None:
        """Kill the whole group: SIGTERM first when ``grace`` > 0, SIGKILL after it."""
        if grace > 0 and self.running:
            self.signal(signal.SIGTERM)
            try:
                self._popen.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                pass
        self.signal(signal.SIGKILL)
        self._popen.wait()

    def _finish(self, timed_out: bool) -> Result:
        self.drain()
        returncode = self._popen.returncode
        result = Result(
            argv=self.argv,
            exit_code=returncode if returncode is not None else -signal.SIGKILL,
            stdout=self.stdout,
            stderr=self.stderr,
            duration=time.monotonic() - self.started,
            timed_out=timed_out,
        )
        on_end, self.on_end = self.on_end, None
        if on_end is not None:
            on_end(result)
        return result

    def wait(self, timeout: float) -> Result:
        """Wait for the leader to exit; return the same :class:`Result` a finished command has.

        On overrun the whole group is killed and :class:`CommandTimeout`
        carries what it printed. Whatever the leader left behind in its group
        is killed either way: nothing a case starts outlives it.
        """
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout!r}")
        if self._result is not None:
            return self._result
        self.close_stdin()
        try:
            _wait_exit(self._popen, timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            result = self._finish(timed_out=True)
            self._result = result
            raise CommandTimeout(result, timeout) from None
        kill_group(self._popen)
        self._result = self._finish(timed_out=False)
        return self._result

    def describe(self) -> str:
        """argv, state and both streams so far, for a failure message."""
        code = self.exit_code
        state = "still running" if code is None else f"exited {code}"
        snapshot = Result(
            argv=self.argv,
            exit_code=code if code is not None else 0,
            stdout=self.stdout,
            stderr=self.stderr,
            duration=time.monotonic() - self.started,
        )
        lines = snapshot.describe().splitlines(keepends=True)
        lines[1] = f"  {state} after {snapshot.duration:.2f}s (pid {self.pid})\n"
        return "".join(lines)

    def wait_for_output(
        self, needle: str | re.Pattern[str], *, stream: str = "stderr", timeout: float
    ) -> str:
        """Wait until ``stream`` ("stdout" or "stderr") contains ``needle``; return that stream."""
        if stream not in ("stdout", "stderr"):
            raise ValueError(f"stream must be 'stdout' or 'stderr', got {stream!r}")

        shown = needle.pattern if isinstance(needle, re.Pattern) else needle

        def hit() -> str | None:
            text: str = getattr(self, stream)
            seen = needle.search(text) if isinstance(needle, re.Pattern) else needle in text
            return text if seen else None

        def found() -> str | None:
            if (text := hit()) is not None:
                return text
            if self.running:
                return None
            # It exited: once its pipes are drained, nothing more can arrive, so
            # fail now rather than poll a dead process until the timeout.
            for reader in self._readers:
                reader.join(timeout=_DRAIN_TIMEOUT)
            if (text := hit()) is not None:
                return text
            raise ProcessExited(
                f"{self.argv[0]} exited ({self.exit_code}) without {stream} ever showing "
                f"{shown!r}\n{self.describe()}"
            )

        return wait_until(
            found,
            timeout,
            what=f"{stream} of {self.argv[0]} to show {shown!r}",
            context=self.describe,
        )

    def cleanup(self) -> str | None:
        """End-of-case cleanup: None if nothing was left, else a sentence naming what was killed."""
        leader_running = self.running
        group_left = not leader_running and group_alive(self.pid)
        if not leader_running and not group_left:
            self._finish(timed_out=False)
            return None
        self.kill()
        self._finish(timed_out=False)
        command = " ".join(self.argv)
        if leader_running:
            return f"`{command}` (pid {self.pid}) was still running"
        return f"`{command}` (pid {self.pid}) exited but left processes in its group"


def start(
    argv: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: bool = True,
    on_stdout_line: Callable[[bytes], None] | None = None,
    merge_stderr: bool = False,
    queue_lines: bool = False,
) -> Process:
    """Start ``argv`` in the background, in its own session; return its :class:`Process`.

    ``merge_stderr`` sends stderr down stdout (one stream, as a terminal shows
    it); ``queue_lines`` keeps every stdout line in :attr:`Process.lines` for a
    reader that consumes them.

    Nobody cleans this one up for you: call ``wait`` or ``kill``, or prefer
    :func:`start_in` inside a case.

    >>> proc = start(["sleep", "30"])
    >>> proc.interrupt(); proc.wait(timeout=5).exit_code
    -2
    """
    return Process(
        argv,
        env=env,
        cwd=cwd,
        stdin=stdin,
        on_stdout_line=on_stdout_line,
        merge_stderr=merge_stderr,
        queue_lines=queue_lines,
    )


class _Transcript(Protocol):
    def started(self, argv: Sequence[str], env: Mapping[str, str] | None = ...) -> None: ...

    def ended(self, result: Result) -> None: ...


class Host(Protocol):
    """What :func:`start_in` and :func:`start_contenox` need of the instance a child runs in.

    :class:`harness.instance.Instance` is one. Named by shape, not imported: the
    instance runs its commands through this module, so this module stays below it.
    """

    @property
    def binary(self) -> Path: ...

    @property
    def work(self) -> Path: ...

    @property
    def cleanups(self) -> list[Callable[[], str | None]]: ...

    @property
    def recorder(self) -> _Transcript: ...

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]: ...


def start_in(
    instance: Host,
    argv: Sequence[str | os.PathLike[str]],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: bool = True,
    on_stdout_line: Callable[[bytes], None] | None = None,
    queue_lines: bool = False,
) -> Process:
    """Start any program inside ``instance`` (hermetic env, cwd ``work/``), cleaned up at the end.

    >>> proc = start_in(instance, ["sh", "-c", "sleep 30"])
    """
    proc = start(
        argv,
        env=instance.env(env),
        cwd=cwd if cwd is not None else instance.work,
        stdin=stdin,
        on_stdout_line=on_stdout_line,
        queue_lines=queue_lines,
    )
    instance.cleanups.append(proc.cleanup)
    return proc


def start_contenox(
    instance: Host,
    *args: str | os.PathLike[str],
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: bool = False,
) -> Process:
    """Start ``contenox <args>`` in the background inside ``instance``.

    Its stdin is ``/dev/null`` unless ``stdin=True`` asks for a pipe, as
    :meth:`Instance.contenox` does for a command given no input.

    >>> run = start_contenox(instance, "run", "--policy", "run", "task")
    >>> run.wait(timeout=60).assert_success()
    """
    proc = start_in(instance, [instance.binary, *args], env=env, cwd=cwd, stdin=stdin)
    instance.recorder.started(proc.argv, env)
    proc.on_end = instance.recorder.ended
    return proc
