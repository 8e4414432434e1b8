"""The loopback relay (harness/servers/relay.py) on its own: signature, handshake, timeouts, loopback.

No contenox here: a small TLS client below plays the runtime's side of the handshake.
The signature fixture (seed 0..31, nonce 100..131, version 1, instance ``inst-e2e``)
was computed by contenox's own ``librelay.SignWelcome`` (v1.0.0), so the relay signs
what the reference implementation signs, byte for byte.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from harness.servers import NotLoopback
from harness.servers.relay import (
    Frame,
    Relay,
    RelayError,
    public_key_text,
    sign_welcome,
    signing_input,
    start_relay,
    verify_welcome,
)

SEED = bytes(range(32))
NONCE = bytes(range(100, 132))
INSTANCE = "inst-e2e"
# librelay.FormatPublicKey and librelay.SignWelcome of the fixture, from Go.
PUBLIC = "A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="
SIGNATURE = bytes.fromhex(
    "bd90042665f28b0d9a64c739ec5f6a941734e29af2d7f80259c880544dd2e8f5"
    "ffaf29e880231e4b9fc15a11eb06254d7d3c4e5a6fda4aa85076932007a54a09"
)
KEY = Ed25519PrivateKey.from_private_bytes(SEED)


# ------------------------------------------------------------------ the signature


def test_signing_input_is_the_specified_byte_layout() -> None:
    # base64rawurl: no padding, '-' and '_' (the nonce's 0x7e 0x7f make a '-').
    assert signing_input(NONCE, 1, INSTANCE) == (
        b"contenox-relay/welcome/v1\x00ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM\x001\x00inst-e2e"
    )


def test_fixed_key_and_nonce_give_the_reference_signature() -> None:
    assert public_key_text(KEY) == PUBLIC
    assert sign_welcome(KEY, NONCE, 1, INSTANCE) == SIGNATURE
    assert verify_welcome(KEY.public_key(), NONCE, 1, INSTANCE, SIGNATURE)


@pytest.mark.parametrize(
    ("what", "nonce", "version", "instance", "sig"),
    [
        ("a flipped bit", NONCE, 1, INSTANCE, bytes([SIGNATURE[0] ^ 1]) + SIGNATURE[1:]),
        ("another nonce", bytes(32), 1, INSTANCE, SIGNATURE),
        ("the offered version, not the selected one", NONCE, 2, INSTANCE, SIGNATURE),
        ("another instance", NONCE, 1, "inst-other", SIGNATURE),
    ],
)
def test_a_signature_that_does_not_match_is_refused(
    what: str, nonce: bytes, version: int, instance: str, sig: bytes
) -> None:
    assert not verify_welcome(KEY.public_key(), nonce, version, instance, sig), what


def test_a_signature_by_another_key_is_refused() -> None:
    other = Ed25519PrivateKey.generate()
    assert not verify_welcome(
        KEY.public_key(), NONCE, 1, INSTANCE, sign_welcome(other, NONCE, 1, INSTANCE)
    )


@pytest.mark.parametrize(
    ("nonce", "instance", "match"),
    [(b"", INSTANCE, "nonce"), (bytes(65), INSTANCE, "nonce"), (NONCE, "a\0b", "NUL")],
)
def test_the_signing_input_refuses_what_the_verifier_refuses(
    nonce: bytes, instance: str, match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        signing_input(nonce, 1, instance)


# ------------------------------------------------------------------ a runtime's side, by hand


def _connect(relay: Relay) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(relay.ca_file))
    raw = socket.create_connection((relay.host, int(relay.url.rsplit(":", 1)[1])), timeout=10)
    return context.wrap_socket(raw, server_hostname=relay.host)


def _http(relay: Relay, request: str) -> tuple[str, ssl.SSLSocket, bytes]:
    sock = _connect(relay)
    sock.sendall(request.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head.decode(), sock, rest


def _redeem(relay: Relay, key: str) -> tuple[int, dict[str, object]]:
    body = json.dumps({"key": key, "instance_name": "box"})
    head, sock, rest = _http(
        relay,
        f"POST /v1/pair/redeem HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}",
    )
    while True:
        chunk = sock.recv(4096)
        if not chunk:
            break
        rest += chunk
    sock.close()
    return int(head.split()[1]), json.loads(rest)


@contextmanager
def _upgraded(relay: Relay, token: str) -> Iterator[tuple[ssl.SSLSocket, bytes]]:
    head, sock, rest = _http(
        relay,
        f"GET /v1/connect HTTP/1.1\r\nHost: x\r\nUpgrade: contenox-relay/1\r\n"
        f"Connection: Upgrade\r\nAuthorization: Bearer {token}\r\n\r\n",
    )
    assert head.startswith("HTTP/1.1 101"), head
    try:
        yield sock, rest
    finally:
        sock.close()


def _read_line(sock: ssl.SSLSocket, pending: bytes) -> bytes:
    while b"\n" not in pending:
        chunk = sock.recv(4096)
        if not chunk:
            raise AssertionError(f"connection closed before a full line: {pending!r}")
        pending += chunk
    return pending.split(b"\n", 1)[0]


def _hello(nonce: bytes, version: int = 1) -> bytes:
    payload = {
        "protocol_version": version,
        "instance": INSTANCE,
        "agent": "tests",
        "nonce": base64.b64encode(nonce).decode(),
    }
    frame = {"type": "relay.hello", "instance": INSTANCE, "id": "hello", "payload": payload}
    return json.dumps(frame).encode() + b"\n"


@pytest.fixture
def relay(tmp_path: Path) -> Iterator[Relay]:
    with start_relay(tmp_path, signing_key=KEY, handshake_timeout=1.0, timeout=10) as r:
        yield r


def test_a_minted_key_redeems_once_for_the_credential_and_the_relay_key(relay: Relay) -> None:
    key = relay.mint_key(instance_id=INSTANCE, account_id="acct-1")
    status, body = _redeem(relay, key)
    assert status == 200
    assert body["instance_id"] == INSTANCE and body["account_id"] == "acct-1"
    assert body["relay_public_key"] == PUBLIC
    assert body["instance_token"] == relay.token_of(INSTANCE)
    again, refused = _redeem(relay, key)
    assert again == 403 and "already used" in str(refused)
    assert [r.json()["key"] for r in relay.redemptions()] == [key, key]


def test_the_welcome_carries_the_reference_signature_over_the_hello_nonce(relay: Relay) -> None:
    _redeem(relay, relay.mint_key(instance_id=INSTANCE))
    with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, rest):
        sock.sendall(_hello(NONCE))
        welcome = Frame.parse(_read_line(sock, rest).decode())
    assert welcome.type == "relay.welcome" and welcome.re == "hello"
    body = welcome.body()
    assert body["protocol_version"] == 1
    assert base64.b64decode(body["sig"]) == SIGNATURE
    link = relay.wait_link()
    assert link.bearer == relay.token_of(INSTANCE)
    assert link.hello_payload()["agent"] == "tests"


def test_the_welcome_signs_the_version_the_relay_selected(tmp_path: Path) -> None:
    with start_relay(tmp_path, signing_key=KEY, timeout=10) as relay:
        _redeem(relay, relay.mint_key(instance_id=INSTANCE))
        with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, rest):
            sock.sendall(_hello(NONCE, version=7))
            body = Frame.parse(_read_line(sock, rest).decode()).body()
    assert body["protocol_version"] == 1
    assert verify_welcome(KEY.public_key(), NONCE, 1, INSTANCE, base64.b64decode(body["sig"]))


def test_an_impostor_relay_signs_with_a_key_the_pairing_did_not_hand_out(tmp_path: Path) -> None:
    impostor = Ed25519PrivateKey.generate()
    with start_relay(tmp_path, signing_key=KEY, welcome_key=impostor, timeout=10) as relay:
        _, body = _redeem(relay, relay.mint_key(instance_id=INSTANCE))
        assert body["relay_public_key"] == PUBLIC
        with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, rest):
            sock.sendall(_hello(NONCE))
            sig = base64.b64decode(Frame.parse(_read_line(sock, rest).decode()).body()["sig"])
    assert not verify_welcome(KEY.public_key(), NONCE, 1, INSTANCE, sig)


def test_an_unknown_bearer_credential_is_refused_with_401(relay: Relay) -> None:
    head, sock, _ = _http(
        relay,
        "GET /v1/connect HTTP/1.1\r\nHost: x\r\nUpgrade: contenox-relay/1\r\n"
        "Connection: Upgrade\r\nAuthorization: Bearer nope\r\n\r\n",
    )
    sock.close()
    assert head.startswith("HTTP/1.1 401"), head


def test_heartbeats_are_acked_and_unknown_control_requests_get_unsupported(relay: Relay) -> None:
    _redeem(relay, relay.mint_key(instance_id=INSTANCE))
    with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, rest):
        sock.sendall(_hello(NONCE))
        pending = rest + b""
        first = _read_line(sock, pending)
        sock.sendall(b'{"type":"relay.heartbeat","instance":"inst-e2e","id":"hb1"}\n')
        sock.sendall(b'{"type":"relay.future","instance":"inst-e2e","id":"f1"}\n')
        lines: list[Frame] = []
        buffer = b""
        while len(lines) < 2:
            chunk = sock.recv(4096)
            assert chunk, "relay closed the link"
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            lines += [Frame.parse(line.decode()) for line in complete if line.strip()]
    assert Frame.parse(first.decode()).type == "relay.welcome"
    assert (lines[0].type, lines[0].re) == ("relay.ack", "hb1")
    assert (lines[1].type, lines[1].re) == ("relay.error", "f1")
    assert lines[1].body()["code"] == "unsupported_type"


# ------------------------------------------------------------------ timeouts and loopback


def test_a_client_that_never_says_hello_is_dropped_at_the_handshake_timeout(relay: Relay) -> None:
    _redeem(relay, relay.mint_key(instance_id=INSTANCE))
    with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, _):
        started = time.monotonic()
        sock.settimeout(10)
        assert sock.recv(4096) == b""  # the relay hung up on us
        waited = time.monotonic() - started
    assert waited < 5, f"dropped only after {waited:.1f}s (handshake timeout 1s)"
    link = relay.wait_link(state="closed")
    assert "no hello within the handshake timeout" in link.state


def test_a_client_that_never_finishes_tls_is_dropped(relay: Relay) -> None:
    raw = socket.create_connection((relay.host, int(relay.url.rsplit(":", 1)[1])), timeout=10)
    started = time.monotonic()
    assert raw.recv(4096) == b""
    raw.close()
    assert time.monotonic() - started < 5


def test_the_relay_shuts_down_within_its_timeout_while_a_runtime_holds_a_link(
    tmp_path: Path,
) -> None:
    with start_relay(tmp_path, signing_key=KEY, timeout=10) as relay:
        _redeem(relay, relay.mint_key(instance_id=INSTANCE))
        with _upgraded(relay, relay.token_of(INSTANCE)) as (sock, rest):
            sock.sendall(_hello(NONCE))
            _read_line(sock, rest)
            link = relay.wait_link()
            started = time.monotonic()
            relay.close(timeout=5)
            assert time.monotonic() - started < 5
            sock.settimeout(5)
            assert sock.recv(4096) == b""
    assert link.state == "closed: the relay shut down"


def test_waiting_for_a_dial_that_never_comes_fails_naming_the_relay(tmp_path: Path) -> None:
    with start_relay(tmp_path, timeout=0.5) as relay:
        with pytest.raises(RelayError, match=r"never dialled the relay at https://127\.0\.0\.1:"):
            relay.wait_link()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "example.com"])
def test_binding_anything_but_loopback_is_refused_before_anything_binds(
    tmp_path: Path, host: str
) -> None:
    with pytest.raises(NotLoopback, match="loopback"):
        with start_relay(tmp_path, host=host):
            pass  # pragma: no cover - never reached
    assert not (tmp_path / "relay-ca.pem").exists()
