"""A loopback TCP forwarder that delays what a server sends: a slow network before a server.

A real bus, database or API sits across a network; on loopback every reply arrives at
once, which hides whatever a client does with a reply that comes late. The forwarder
listens on 127.0.0.1, connects each accepted client to the real server, passes what the
client sends through unchanged, and hands each chunk the server sends to the client
``delay`` seconds after it arrived, in order, unaltered::

    slow = forward_with_latency(instance, "127.0.0.1", bus_port, delay=0.15)
    instance.must("chat", "hi", env={"CONTENOX_NATS_URL": f"nats://{slow.host}:{slow.port}"})

Only the server-to-client direction is delayed: a request reaches the server at once and
its answer (or a message a subscriber is sent) comes back late, as across a real link.
Every socket and thread ends with :meth:`Forwarder.stop` (the case's cleanup).
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from .loopback import require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = ["Forwarder", "forward_with_latency", "start_forwarder"]

_CHUNK = 65536
_CONNECT_TIMEOUT = 10.0


class Forwarder:
    """A listening forwarder: its address, and :meth:`stop`."""

    def __init__(self, listener: socket.socket, target: tuple[str, int], delay: float) -> None:
        self._listener = listener
        self._target = target
        self.delay = delay
        self.host, self.port = listener.getsockname()[:2]
        self._sockets: list[socket.socket] = [listener]
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._accepter = threading.Thread(target=self._accept, name="latency-accept", daemon=True)
        self._accepter.start()

    def _track(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._stopped.is_set():
                sock.close()
                return False
            self._sockets.append(sock)
            return True

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._track(client):
                return
            try:
                upstream = socket.create_connection(self._target, timeout=_CONNECT_TIMEOUT)
                upstream.settimeout(None)
            except OSError:
                client.close()
                continue
            if not self._track(upstream):
                return
            self._start(_pump, client, upstream)
            self._start(_delayed_pump, upstream, client, self.delay)

    def _start(self, target: Callable[..., None], *args: object) -> None:
        threading.Thread(target=target, args=args, name="latency-pump", daemon=True).start()

    def stop(self) -> None:
        """Close the listener and every forwarded connection; the pumps end with them."""
        with self._lock:
            self._stopped.set()
            sockets, self._sockets = self._sockets, []
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self._accepter.join(timeout=5)


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy ``source`` to ``sink`` as it arrives; close ``sink``'s write side at the end."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    _half_close(sink)


def _delayed_pump(source: socket.socket, sink: socket.socket, delay: float) -> None:
    """Copy ``source`` to ``sink``, each chunk ``delay`` seconds after it arrived, in order."""
    pending: queue.Queue[tuple[float, bytes]] = queue.Queue()

    def deliver() -> None:
        while True:
            due, data = pending.get()
            if not data:
                break
            # The chunk's due time is the latency this stand-in exists to add.
            time.sleep(max(0.0, due - time.monotonic()))
            try:
                sink.sendall(data)
            except OSError:
                return
        _half_close(sink)

    writer = threading.Thread(target=deliver, name="latency-deliver", daemon=True)
    writer.start()
    try:
        while data := source.recv(_CHUNK):
            pending.put((time.monotonic() + delay, data))
    except OSError:
        pass
    pending.put((time.monotonic() + delay, b""))


def _half_close(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def start_forwarder(target_host: str, target_port: int, *, delay: float) -> Forwarder:
    """Listen on 127.0.0.1 at a free port and forward to ``target_host:target_port``.

    Refuses a non-loopback target or a negative delay before listening.
    """
    require_loopback(target_host)
    if delay < 0:
        raise ValueError(f"delay must be zero or more seconds, not {delay!r}")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    return Forwarder(listener, (target_host, target_port), delay)


def forward_with_latency(
    instance: Instance, target_host: str, target_port: int, *, delay: float
) -> Forwarder:
    """:func:`start_forwarder`, stopped when the case ends."""
    forwarder = start_forwarder(target_host, target_port, delay=delay)
    instance.cleanups.append(forwarder.stop)
    return forwarder
