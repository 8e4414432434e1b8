"""The latency forwarder without contenox: bytes intact and in order, late from the server only.

Driven by a throwaway echo server on loopback and raw sockets, and by a real NATS
server through it (the use the cases make of it).
"""

from __future__ import annotations

import asyncio
import select
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.servers import NotLoopback
from harness.servers.latency import start_forwarder
from harness.servers.nats import start_nats_server


@pytest.fixture
def echo_port() -> Iterator[int]:
    """A loopback server that sends back what it receives, upper-cased."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                while data := conn.recv(4096):
                    conn.sendall(data.upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    listener.shutdown(socket.SHUT_RDWR)  # wakes the accept
    listener.close()
    thread.join(timeout=5)


def _readable(sock: socket.socket, timeout: float) -> bool:
    return bool(select.select([sock], [], [], timeout)[0])


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    sock.settimeout(20)
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        assert chunk, f"the connection closed after {data!r}"
        data += chunk
    return data


def test_what_the_server_sends_arrives_intact_in_order_and_not_before_the_delay(
    echo_port: int,
) -> None:
    forwarder = start_forwarder("127.0.0.1", echo_port, delay=2.0)
    try:
        with socket.create_connection((forwarder.host, forwarder.port), timeout=10) as client:
            client.sendall(b"one ")
            client.sendall(b"two")
            # The server answered at once; the forwarder holds the answer for its delay.
            assert not _readable(client, 0.5), "the answer came through before the delay"
            assert _read_exactly(client, 7) == b"ONE TWO"
    finally:
        forwarder.stop()


def test_without_delay_it_is_a_plain_forwarder(echo_port: int) -> None:
    forwarder = start_forwarder("127.0.0.1", echo_port, delay=0)
    try:
        with socket.create_connection((forwarder.host, forwarder.port), timeout=10) as client:
            payload = bytes(range(256)) * 600  # larger than one chunk
            client.sendall(payload)
            assert _read_exactly(client, len(payload)) == payload.upper()
    finally:
        forwarder.stop()


def test_stop_closes_the_listener_and_every_forwarded_connection(echo_port: int) -> None:
    forwarder = start_forwarder("127.0.0.1", echo_port, delay=0)
    client = socket.create_connection((forwarder.host, forwarder.port), timeout=10)
    client.sendall(b"x")
    assert _read_exactly(client, 1) == b"X"
    forwarder.stop()
    client.settimeout(10)
    assert client.recv(10) == b"", "the forwarded connection stayed open"
    client.close()
    with pytest.raises(OSError):
        socket.create_connection((forwarder.host, forwarder.port), timeout=2).close()


def test_a_non_loopback_target_or_a_negative_delay_is_refused_before_listening() -> None:
    with pytest.raises(NotLoopback):
        start_forwarder("192.0.2.1", 4222, delay=0.1)
    with pytest.raises(ValueError, match="delay must be zero or more seconds"):
        start_forwarder("127.0.0.1", 4222, delay=-1)


def test_a_nats_client_through_it_gets_its_messages(tmp_path: Path) -> None:
    import nats

    server = start_nats_server(tmp_path / "bus")
    host, port = server.url.removeprefix("nats://").rsplit(":", 1)
    forwarder = start_forwarder(host, int(port), delay=0.2)

    async def main() -> bytes:
        url = f"nats://{forwarder.host}:{forwarder.port}"
        client = await nats.connect(url, connect_timeout=10, allow_reconnect=False)
        try:
            sub = await client.subscribe("e2e.slow")
            await client.publish("e2e.slow", b"late but whole")
            message = await sub.next_msg(timeout=10)
            return bytes(message.data)
        finally:
            await client.close()

    try:
        assert asyncio.run(asyncio.wait_for(main(), 30)) == b"late but whole"
    finally:
        forwarder.stop()
        server.stop()
