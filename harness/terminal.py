"""A real terminal: a command under a pty, and the screen a person would see.

The child gets a pseudo-terminal (pexpect), 40 rows by 120 columns unless
asked otherwise. Everything it writes is fed through a terminal emulator
(pyte), so redraws, cursor moves and erased lines come out as the final
screen rather than as a byte soup::

    term = open_terminal(instance, "beam", "--plain")
    term.wait_for("type / for commands", timeout=30)
    term.send_line("say hello")
    term.wait_for("Hello from the script.", timeout=30)

:meth:`Terminal.raw` keeps the bytes for the cases that are about them (colour,
redraw sequences). Every wait has a timeout, and a timeout fails with the
whole screen attached.
"""

from __future__ import annotations

import os
import re
import select
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import pexpect
import pyte

from .process import WaitTimeout, signal_group, spawn_pty, wait_until

if TYPE_CHECKING:
    from .instance import Instance

__all__ = [
    "DEFAULT_COLUMNS",
    "DEFAULT_ROWS",
    "PERSON_TERM",
    "PtyChild",
    "Screen",
    "Terminal",
    "TerminalTimeout",
    "open_terminal",
]

DEFAULT_ROWS = 40
DEFAULT_COLUMNS = 120

# What a person's terminal says it is. The instance pins TERM=dumb for
# captured commands; under a real pty that would misdescribe the terminal.
PERSON_TERM = "xterm-256color"


class TerminalTimeout(WaitTimeout):
    """A terminal wait ran out of time; the message carries the whole screen."""


class _AnsweringScreen(pyte.Screen):
    """A screen that answers what a program asks of its terminal (cursor
    position, device attributes): a program waiting for that reply would hang."""

    def __init__(self, cols: int, rows: int, answer: Callable[[str], None]) -> None:
        super().__init__(cols, rows)
        self._answer = answer

    def write_process_input(self, data: str) -> None:
        self._answer(data)


class PtyChild:
    """Process control of one command under a pty: its pid, its exit, signals, keystrokes.

    Spawned through :func:`harness.process.spawn_pty` like every child: it
    leads its own session with the pty as its controlling terminal. Knows
    nothing of what the screen shows (that is :class:`Screen`'s).
    """

    def __init__(self, child: pexpect.spawn[bytes], argv: tuple[str, ...]) -> None:
        self.argv = argv
        self._child = child
        self._exit_code: int | None = None

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        rows: int = DEFAULT_ROWS,
        cols: int = DEFAULT_COLUMNS,
    ) -> PtyChild:
        """Start ``argv`` under a fresh pty of ``rows`` x ``cols``."""
        args = tuple(os.fspath(a) for a in argv)
        return cls(spawn_pty(args, env=env, cwd=cwd, rows=rows, cols=cols), args)

    @property
    def pid(self) -> int:
        pid = self._child.pid
        assert pid is not None, "pexpect.spawn always has a pid once started"
        return pid

    @property
    def fd(self) -> int:
        """The pty's controller side: read what the program writes, write what it reads."""
        return int(self._child.child_fd)

    def alive(self) -> bool:
        """True while the leader has not exited (reaps it once it has)."""
        return bool(self._child.isalive())

    def poll(self) -> int | None:
        """The leader's exit code (``-N`` for signal N), or None while it runs."""
        if self._exit_code is not None:
            return self._exit_code
        if self._child.isalive():
            return None
        status, sig = self._child.exitstatus, self._child.signalstatus
        self._exit_code = -int(sig) if sig is not None else int(status or 0)
        return self._exit_code

    def write(self, data: bytes) -> None:
        """Bytes to the program as if typed (an answer to a terminal query, say)."""
        try:
            os.write(self.fd, data)
        except OSError:
            pass

    def send(self, text: str) -> None:
        """Type ``text``."""
        self._child.send(text)

    def send_ctrl(self, char: str) -> None:
        """Press Ctrl+``char``."""
        self._child.sendcontrol(char)

    def interrupt(self) -> None:
        """The pty's interrupt character: SIGINT to the foreground group."""
        self._child.sendintr()

    def signal(self, sig: int) -> None:
        """``sig`` to the whole group."""
        signal_group(self.pid, sig)

    def set_size(self, rows: int, cols: int) -> None:
        """Resize the pty (the program gets SIGWINCH)."""
        self._child.setwinsize(rows, cols)

    def close(self) -> None:
        """Kill the whole group and release the pty."""
        self.signal(signal.SIGKILL)
        self._child.close(force=True)


class Screen:
    """What a pty shows: every byte the program writes, rendered through pyte.

    A reader thread feeds the emulator until the pty reaches end of file;
    queries the program makes of its terminal are answered through ``pty``.
    """

    def __init__(self, pty: PtyChild, rows: int, cols: int) -> None:
        self._pty = pty
        self._lock = threading.Lock()
        self._raw = bytearray()
        self._screen = _AnsweringScreen(cols, rows, lambda data: pty.write(data.encode("utf-8")))
        self._stream = pyte.ByteStream(self._screen)
        self.eof = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        fd = self._pty.fd
        while True:
            try:
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    if not self._pty.alive():
                        # The leader is gone; drain what is left, then stop.
                        ready = [fd]
                    else:
                        continue
                chunk = os.read(fd, 65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            with self._lock:
                self._raw.extend(chunk)
                self._stream.feed(chunk)
        self.eof.set()

    @property
    def rows(self) -> int:
        return int(self._screen.lines)

    @property
    def cols(self) -> int:
        return int(self._screen.columns)

    def text(self) -> str:
        """The screen now: one line per row, trailing blanks trimmed."""
        with self._lock:
            lines = [line.rstrip() for line in self._screen.display]
        while lines and not lines[-1]:
            lines.pop()
        return "\n".join(lines)

    def raw(self) -> bytes:
        """Every byte read from the pty."""
        with self._lock:
            return bytes(self._raw)

    def resize(self, rows: int, cols: int) -> None:
        """Resize the emulated screen (the pty is :class:`PtyChild`'s)."""
        with self._lock:
            self._screen.resize(rows, cols)

    def join(self, timeout: float) -> None:
        """Wait (at most ``timeout``) for the reader to reach end of file."""
        self._reader.join(timeout=timeout)


class Terminal:
    """One command running under a pty, rendered through a terminal emulator.

    Composed of its :class:`PtyChild` (process control) and its
    :class:`Screen` (what a person sees); the waits and the recorder hook
    live here.

    >>> term = Terminal.spawn(["sh", "-c", "read x; echo got $x"], rows=10, cols=40)
    >>> term.send_line("hi")
    >>> term.wait_for("got hi", timeout=5)
    >>> term.wait_exit(timeout=5)
    0
    """

    def __init__(self, pty: PtyChild, rows: int, cols: int) -> None:
        self.argv = pty.argv
        self.pty = pty
        self.view = Screen(pty, rows, cols)
        # Told (checkpoint, screen) at each wait_for that succeeds and at exit.
        self.on_screen: Callable[[str, str], None] | None = None
        self.started = time.monotonic()

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        rows: int = DEFAULT_ROWS,
        cols: int = DEFAULT_COLUMNS,
    ) -> Terminal:
        """Start ``argv`` under a fresh pty of ``rows`` x ``cols``.

        The child leads its own session with the pty as its controlling
        terminal, so :meth:`interrupt` and :meth:`hangup` reach its whole
        process group, as they would from a real terminal.
        """
        return cls(PtyChild.spawn(argv, env=env, cwd=cwd, rows=rows, cols=cols), rows, cols)

    @property
    def pid(self) -> int:
        return self.pty.pid

    @property
    def rows(self) -> int:
        return self.view.rows

    @property
    def cols(self) -> int:
        return self.view.cols

    def screen(self) -> str:
        """The screen as a person sees it now: one line per row, trailing blanks trimmed."""
        return self.view.text()

    def raw(self) -> bytes:
        """Every byte the child wrote to the terminal, escape sequences and all."""
        return self.view.raw()

    def describe(self) -> str:
        """argv, state and the current screen framed, for a failure message."""
        code = self._poll()
        state = "still running" if code is None else f"exited {code}"
        elapsed = time.monotonic() - self.started
        border = "+" + "-" * self.cols + "+"
        body = "\n".join(f"|{line.ljust(self.cols)}|" for line in self.screen().split("\n"))
        return (
            f"$ {' '.join(self.argv)}  ({self.rows}x{self.cols} pty)\n"
            f"  {state} after {elapsed:.2f}s (pid {self.pid}); screen:\n"
            f"{border}\n{body}\n{border}"
        )

    def wait_for(self, needle: str | re.Pattern[str], timeout: float) -> str:
        """Wait until the screen shows ``needle`` (text or regex); return the screen.

        On timeout raise :class:`TerminalTimeout` with the whole screen.
        """
        shown = needle.pattern if isinstance(needle, re.Pattern) else needle

        def visible() -> str | None:
            text = self.screen()
            hit = needle.search(text) if isinstance(needle, re.Pattern) else needle in text
            return text if hit else None

        __tracebackhide__ = True
        try:
            screen = wait_until(visible, timeout, what=f"the screen to show {shown!r}")
            if self.on_screen is not None:
                self.on_screen(f"showing {shown!r}", screen)
            return screen
        except WaitTimeout:
            raise TerminalTimeout(
                f"the screen never showed {shown!r} within {timeout:g}s; check the text "
                f"the program really draws (below) or raise the timeout.\n{self.describe()}"
            ) from None

    def send(self, text: str) -> None:
        """Type ``text`` as is (no Enter)."""
        self.pty.send(text)

    def send_line(self, text: str = "") -> None:
        """Type ``text`` and press Enter (a carriage return, as a keyboard sends)."""
        self.pty.send(text + "\r")

    def send_ctrl(self, char: str) -> None:
        """Press Ctrl+``char``, e.g. ``send_ctrl("d")``."""
        if len(char) != 1:
            raise ValueError(f"send_ctrl takes one character, e.g. 'c' or 'd'; got {char!r}")
        self.pty.send_ctrl(char)

    def interrupt(self) -> None:
        """Ctrl-C: the terminal's line discipline turns it into SIGINT for the foreground group."""
        self.pty.interrupt()

    def hangup(self) -> None:
        """SIGHUP to the whole group, as closing the terminal window does."""
        self.pty.signal(signal.SIGHUP)

    def resize(self, rows: int, cols: int) -> None:
        """Resize the terminal (the child gets SIGWINCH) and the emulated screen."""
        self.view.resize(rows, cols)
        self.pty.set_size(rows, cols)

    def _poll(self) -> int | None:
        return self.pty.poll()

    @property
    def running(self) -> bool:
        return self._poll() is None

    def wait_exit(self, timeout: float) -> int:
        """Wait for the program to exit; return its exit code (``-N`` for signal N).

        On timeout raise :class:`TerminalTimeout` with the screen; the
        program is left running for the case (or its cleanup) to deal with.
        """
        try:
            code = wait_until(
                lambda: (self._poll(),) if self._poll() is not None else None,
                timeout,
                what=f"{self.argv[0]} to exit",
            )[0]
        except WaitTimeout:
            raise TerminalTimeout(
                f"{' '.join(self.argv)} did not exit within {timeout:g}s.\n{self.describe()}"
            ) from None
        self.view.eof.wait(timeout=2)
        assert code is not None
        if self.on_screen is not None:
            self.on_screen(f"exit {code}", self.screen())
            self.on_screen = None
        return code

    def close(self) -> None:
        """Kill the whole group and release the pty."""
        self.pty.close()
        self.view.join(timeout=2)

    def cleanup(self) -> str | None:
        """End-of-case cleanup: None if the program had exited, else what was killed."""
        still_running = self.running
        if still_running and self.on_screen is not None:
            self.on_screen("still running at the end of the case (killed)", self.screen())
        self.close()
        if still_running:
            return f"`{' '.join(self.argv)}` (pid {self.pid}, under a pty) was still running"
        return None


def open_terminal(
    instance: Instance,
    *args: str | os.PathLike[str],
    program: Sequence[str | os.PathLike[str]] | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    rows: int = DEFAULT_ROWS,
    cols: int = DEFAULT_COLUMNS,
) -> Terminal:
    """``contenox <args>`` (or ``program``) under a pty inside ``instance``, cleaned up at the end.

    TERM is a person's (``xterm-256color``) unless ``env`` says otherwise.

    >>> term = open_terminal(instance, "beam", "--plain")
    >>> term.wait_for("type / for commands", timeout=30)
    """
    argv = [*program] if program is not None else [instance.binary, *args]
    term = Terminal.spawn(
        argv,
        env=instance.env({"TERM": PERSON_TERM, **(env or {})}),
        cwd=cwd if cwd is not None else instance.work,
        rows=rows,
        cols=cols,
    )
    instance.cleanups.append(term.cleanup)
    term.on_screen = lambda at, screen: instance.recorder.screen(term.argv, at, screen)
    return term
