"""The NATS server harness without contenox: it starts, records, stops its group, fails loudly.

Driven by nats-py (the same client library the recorder uses, on a separate
connection) and by raw sockets.
"""

from __future__ import annotations

import asyncio
import os
import socket
from pathlib import Path

import pytest

from harness.servers import NotLoopback
from harness.servers.nats import NatsServerError, start_nats_server


def _publish_from_another_client(url: str, subject: str, data: bytes) -> None:
    import nats

    async def main() -> None:
        client = await nats.connect(url, connect_timeout=5, allow_reconnect=False)
        try:
            await client.publish(subject, data)
            await client.flush(timeout=5)
        finally:
            await client.close()

    asyncio.run(asyncio.wait_for(main(), 20))


def _request_reply(url: str) -> bytes:
    """A round trip through the server: one client subscribes and answers, another asks."""
    import nats

    async def main() -> bytes:
        answerer = await nats.connect(url, connect_timeout=5, allow_reconnect=False)
        asker = await nats.connect(url, connect_timeout=5, allow_reconnect=False)
        try:

            async def answer(msg: object) -> None:
                await msg.respond(b"pong:" + msg.data)  # type: ignore[attr-defined]

            await answerer.subscribe("e2e.ping", cb=answer)
            await answerer.flush(timeout=5)
            reply = await asker.request("e2e.ping", b"hi", timeout=5)
            return bytes(reply.data)
        finally:
            await asker.close()
            await answerer.close()

    return asyncio.run(asyncio.wait_for(main(), 20))


def test_it_starts_on_loopback_answers_with_info_and_keeps_its_store_under_the_root(
    tmp_path: Path,
) -> None:
    server = start_nats_server(tmp_path / "bus")
    try:
        assert server.url.startswith("nats://127.0.0.1:")
        port = int(server.url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.settimeout(5)
            assert conn.recv(4096).startswith(b"INFO ")
        assert (tmp_path / "bus" / "store").is_dir()
        assert "Server is ready" in server.output()
    finally:
        server.stop()


def test_a_publish_subscribe_round_trip_goes_through_the_server(tmp_path: Path) -> None:
    server = start_nats_server(tmp_path / "bus")
    try:
        assert _request_reply(server.url) == b"pong:hi"
    finally:
        server.stop()


def test_every_message_another_client_publishes_is_recorded_in_order(tmp_path: Path) -> None:
    server = start_nats_server(tmp_path / "bus")
    try:
        _publish_from_another_client(server.url, "taskengine.events", b'{"kind":"a"}')
        _publish_from_another_client(server.url, "taskengine.events.request.r1", b'{"kind":"b"}')
        seen = server.wait_for(lambda ms: len(ms) >= 2, timeout=10)
        assert [(m.subject, m.json()) for m in seen] == [
            ("taskengine.events", {"kind": "a"}),
            ("taskengine.events.request.r1", {"kind": "b"}),
        ]
        assert [m.subject for m in server.messages("taskengine.events")] == ["taskengine.events"]
        server.publish("own", b"x")
        server.wait_for(lambda ms: any(m.subject == "own" for m in ms), timeout=10)
    finally:
        server.stop()


def test_waiting_for_a_message_that_never_comes_fails_with_what_was_recorded(
    tmp_path: Path,
) -> None:
    server = start_nats_server(tmp_path / "bus")
    try:
        server.publish("only.this", b"1")
        with pytest.raises(AssertionError, match=r"only\.this"):
            server.wait_for(lambda ms: any(m.subject == "never" for m in ms), timeout=1)
    finally:
        server.stop()


def test_stop_kills_the_server_s_process_group(tmp_path: Path) -> None:
    server = start_nats_server(tmp_path / "bus")
    group = os.getpgid(server.pid)
    assert group == server.pid  # its own group, not the test runner's
    server.stop()
    with pytest.raises(ProcessLookupError):
        os.killpg(group, 0)
    port = int(server.url.rsplit(":", 1)[1])
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    server.stop()  # idempotent


def test_a_bad_option_fails_with_the_server_s_own_output(tmp_path: Path) -> None:
    with pytest.raises(NatsServerError, match=r"(?s)exited with .*no-such-flag"):
        start_nats_server(tmp_path / "bus", options=["--no-such-flag"])


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com"])
def test_a_non_loopback_bind_is_refused_before_anything_starts(tmp_path: Path, host: str) -> None:
    with pytest.raises(NotLoopback):
        start_nats_server(tmp_path / "bus", host=host)
    assert not (tmp_path / "bus").exists()
