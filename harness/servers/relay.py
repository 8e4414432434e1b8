"""A contenox relay on loopback: pairing, the handshake, and ACP carried through it.

It implements the relay's side of ``specification/relay-protocol.md`` closely
enough for a real contenox runtime to pair with it and dial it, and it records
everything that crosses it::

    relay = serve_relay(instance)                     # stopped when the case ends
    instance.must("pair", relay.mint_key(), relay.url, env=relay.env)
    acp = instance.contenox_background("acp", env=relay.env)   # any paired session dials
    link = relay.wait_link()                          # the runtime dialled and said hello
    assert link.bearer == relay.token_of(link.instance)
    att = link.attach()                               # one editor/browser behind the relay
    att.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})

What it speaks (the runtime side's contract):

- **Pairing.** ``POST /v1/pair/redeem`` with ``{"key", "instance_name"}`` answers
  ``{"instance_token", "instance_id", "account_id", "relay_public_key"}`` for a key
  minted with :meth:`Relay.mint_key` (each key once), else 403 with
  ``{"error": {"message": …}}``. Every request is a :class:`Redemption` record.
- **The connection.** ``GET /v1/connect`` with ``Upgrade: contenox-relay/1`` and
  ``Authorization: Bearer <token>`` answers ``101``; an unknown token gets 401. After
  the upgrade the stream is NDJSON frames (:class:`Frame`), one JSON object a line.
- **The handshake.** The first frame must be ``relay.hello`` (a request); the relay
  answers ``relay.welcome`` with ``protocol_version = min(peer, ours)`` and an
  Ed25519 signature over :func:`signing_input` (nonce, the version it selected,
  the instance). A peer that sends no hello within ``handshake_timeout`` is dropped.
- **After it.** ``relay.heartbeat`` requests are answered with ``relay.ack``; an
  unknown control request with ``relay.error`` ``unsupported_type``; every other
  frame is recorded and, if it is ``acp.message`` for an attachment, delivered to it.
  The relay never parses cargo: it only reads the envelope, and an
  :class:`Attachment` (the editor or browser behind the relay) reads the ACP payload.

The runtime dials ``https`` only and verifies the certificate, so the relay serves
TLS with a certificate from a throwaway CA made per relay; :attr:`Relay.env`
(``SSL_CERT_FILE``) makes the child trust that CA and nothing else changes.

Built on ``cryptography`` for Ed25519 and the certificates (not hand-written
curve arithmetic, nor an ``openssl`` subprocess whose flags vary by version) and on
the standard library's ``http.server`` + ``ssl``: the connection is a plain HTTP/1.1
upgrade to a raw byte stream, which ``http.server`` hands over as-is. Not
WebSocket: contenox's runtime side does not speak it (see the README).
"""

from __future__ import annotations

import base64
import json
import queue
import re
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .certs import ThrowawayCA
from .loopback import require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "CONNECT_PATH",
    "PROTOCOL_VERSION",
    "REDEEM_PATH",
    "SIGNING_DOMAIN",
    "UPGRADE_PROTOCOL",
    "Attachment",
    "Frame",
    "Link",
    "Redemption",
    "Relay",
    "RelayError",
    "public_key_text",
    "serve_relay",
    "sign_welcome",
    "signing_input",
    "start_relay",
    "verify_welcome",
]

# The wire constants, as the spec and the runtime define them.
SIGNING_DOMAIN = b"contenox-relay/welcome/v1"
PROTOCOL_VERSION = 1
UPGRADE_PROTOCOL = "contenox-relay/1"
CONNECT_PATH = "/v1/connect"
REDEEM_PATH = "/v1/pair/redeem"
MAX_NONCE_BYTES = 64
# A line longer than this is not a frame (the spec's MaxFrameBytes).
MAX_FRAME_BYTES = 16 << 20

JSON = Any


class RelayError(AssertionError):
    """Something a case waited for never crossed the relay, or a frame was not one."""


# ---------------------------------------------------------------- the signature


def signing_input(nonce: bytes, version: int, instance: str) -> bytes:
    """The bytes a welcome signature covers (the spec's ``SigningInput``).

    ``domain ‖ 0x00 ‖ base64rawurl(nonce) ‖ 0x00 ‖ decimal(version) ‖ 0x00 ‖ instance``.
    Refuses an empty or oversized nonce and a NUL in ``instance``, as the verifier does.
    """
    if not nonce or len(nonce) > MAX_NONCE_BYTES:
        raise ValueError(f"nonce must be 1..{MAX_NONCE_BYTES} bytes, got {len(nonce)}")
    if "\0" in instance:
        raise ValueError("instance contains a NUL byte, which would move the separators")
    encoded = base64.urlsafe_b64encode(nonce).rstrip(b"=")
    return b"\0".join([SIGNING_DOMAIN, encoded, str(version).encode(), instance.encode()])


def sign_welcome(key: Ed25519PrivateKey, nonce: bytes, version: int, instance: str) -> bytes:
    """The Ed25519 signature a relay answers hello with, over :func:`signing_input`."""
    return key.sign(signing_input(nonce, version, instance))


def verify_welcome(
    public: Ed25519PublicKey, nonce: bytes, version: int, instance: str, sig: bytes
) -> bool:
    """Whether ``sig`` is the relay's signature over this nonce, version and instance."""
    from cryptography.exceptions import InvalidSignature

    try:
        public.verify(sig, signing_input(nonce, version, instance))
    except InvalidSignature:
        return False
    return True


def public_key_text(key: Ed25519PrivateKey | Ed25519PublicKey) -> str:
    """The public key as the runtime stores it: standard base64 of the 32 raw bytes."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return base64.b64encode(raw).decode()


# ---------------------------------------------------------------- records


@dataclass(frozen=True)
class Frame:
    """One envelope that crossed the relay, as decoded from its NDJSON line.

    ``payload`` is the raw JSON text of the payload (``""`` when absent): the relay
    does not parse cargo; :meth:`body` does, for a case that wants to look inside.
    """

    type: str
    instance: str = ""
    session: str = ""
    id: str = ""
    re: str = ""
    seq: int = 0
    payload: str = ""
    line: str = ""

    @classmethod
    def parse(cls, line: str) -> Frame:
        """Decode one NDJSON line (raises :class:`RelayError` naming the line if it is not one)."""
        try:
            raw = json.loads(line)
        except ValueError as err:
            raise RelayError(f"not a JSON frame ({err}): {line[:200]!r}") from err
        if not isinstance(raw, dict) or not isinstance(raw.get("type"), str) or not raw["type"]:
            raise RelayError(f"a frame needs a non-empty string 'type': {line[:200]!r}")
        payload = raw.get("payload")
        return cls(
            type=raw["type"],
            instance=str(raw.get("instance") or ""),
            session=str(raw.get("session") or ""),
            id=str(raw.get("id") or ""),
            re=str(raw.get("re") or ""),
            seq=int(raw.get("seq") or 0),
            payload="" if payload is None else json.dumps(payload, separators=(",", ":")),
            line=line,
        )

    def body(self) -> JSON:
        """The payload parsed as JSON (None when absent)."""
        return json.loads(self.payload) if self.payload else None


def encode(frame: Mapping[str, JSON]) -> bytes:
    """One frame as an NDJSON line: compact JSON, empty fields left out, then a newline."""
    kept = {k: v for k, v in frame.items() if v not in (None, "", 0)}
    return json.dumps(kept, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@dataclass(frozen=True)
class Redemption:
    """One ``POST /v1/pair/redeem`` the relay received: what the machine sent."""

    headers: Mapping[str, str]
    body: str
    status: int

    def json(self) -> JSON:
        """The request body parsed as JSON (fails with the body if it is not)."""
        try:
            return json.loads(self.body)
        except ValueError as err:
            raise RelayError(f"redeem body is not JSON ({err}): {self.body!r}") from err


@dataclass
class _Pairing:
    key: str
    instance_id: str
    token: str
    account_id: str
    redeemed: bool = False


# ---------------------------------------------------------------- one runtime connection


class Link:
    """One connection a runtime dialled: its upgrade request, its hello, and every frame after.

    ``state`` is ``"handshaking"``, ``"connected"``, or ``"closed: <why>"``.
    """

    def __init__(self, relay: Relay, sock: socket.socket, headers: Mapping[str, str]) -> None:
        self._relay = relay
        self._sock = sock
        self._write_lock = threading.Lock()
        self._cond = threading.Condition()
        self.headers = dict(headers)
        self.hello: Frame | None = None
        self.welcome: Frame | None = None
        self.state = "handshaking"
        self._frames: list[Frame] = []
        self._attachments: dict[str, Attachment] = {}

    @property
    def bearer(self) -> str:
        """The credential on the upgrade request (``Authorization: Bearer …``), or ``""``."""
        value = self.headers.get("authorization", "")
        return value[len("Bearer ") :] if value.startswith("Bearer ") else ""

    @property
    def instance(self) -> str:
        """The instance the hello named (``""`` before it)."""
        return self.hello.instance if self.hello is not None else ""

    def hello_payload(self) -> dict[str, JSON]:
        """The hello's payload (``protocol_version``, ``instance``, ``agent``, ``nonce``)."""
        if self.hello is None:
            raise RelayError("no hello received on this link")
        body = self.hello.body()
        return body if isinstance(body, dict) else {}

    def frames(self) -> list[Frame]:
        """Every frame the runtime sent after the hello, oldest first."""
        with self._cond:
            return list(self._frames)

    def describe(self) -> str:
        """This link's state and frames, for a failure message."""
        rows = [f"  {f.line}" for f in self.frames()]
        hello = self.hello.line if self.hello else "(none)"
        return f"link {self.state}; hello {hello}; frames:\n" + ("\n".join(rows) or "  (none)")

    def wait_for(
        self, test: Callable[[Frame], bool], what: str, timeout: float | None = None
    ) -> Frame:
        """The first frame (since the hello) ``test`` accepts, waiting up to ``timeout``."""
        deadline = time.monotonic() + (self._relay.timeout if timeout is None else timeout)
        with self._cond:
            while True:
                for frame in self._frames:
                    if test(frame):
                        return frame
                left = deadline - time.monotonic()
                if left <= 0 or self.state.startswith("closed"):
                    break
                self._cond.wait(min(left, 0.5))
        raise RelayError(f"no frame {what} crossed the relay\n{self.describe()}")

    def wait_closed(self, timeout: float | None = None) -> str:
        """Wait until the runtime (or the relay) ends this link; return why."""
        deadline = time.monotonic() + (self._relay.timeout if timeout is None else timeout)
        with self._cond:
            while not self.state.startswith("closed"):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RelayError(f"the link stayed open\n{self.describe()}")
                self._cond.wait(min(left, 0.5))
            return self.state

    def send(self, **frame: JSON) -> None:
        """Write one frame to the runtime (fields as keyword arguments; ``payload`` is JSON)."""
        self.send_line(encode(frame))

    def send_line(self, line: bytes) -> None:
        """Write raw bytes to the runtime: a frame line, or anything a case wants to try."""
        with self._write_lock:
            self._sock.sendall(line)

    def request(self, type: str, *, payload: JSON = None, timeout: float | None = None) -> Frame:
        """Send a request frame (with a fresh ``id``) and wait for the one frame answering it."""
        rid = f"e2e-{secrets.token_hex(4)}"
        self.send(type=type, instance=self.instance, id=rid, payload=payload)
        return self.wait_for(lambda f: f.re == rid, f"answering {type} id={rid}", timeout)

    def attach(self, session: str | None = None) -> Attachment:
        """A client behind the relay, on a fresh attachment id (the frames' ``session``)."""
        session = session or f"att-{secrets.token_hex(4)}"
        attachment = Attachment(self, session)
        with self._cond:
            self._attachments[session] = attachment
        return attachment

    def close(self) -> None:
        """Drop the connection from the relay's end."""
        self._end("closed: by the relay")

    # -------------------------------------------------------------- the read side

    def _end(self, why: str) -> None:
        with self._cond:
            if not self.state.startswith("closed"):
                self.state = why
            self._cond.notify_all()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _serve(self, reader: Any) -> None:
        """Run the handshake, then read frames until EOF (the handler thread)."""
        self._sock.settimeout(self._relay.handshake_timeout)
        try:
            line = reader.readline(MAX_FRAME_BYTES)
        except (TimeoutError, OSError):
            line = b""
            self._end(
                f"closed: no hello within the handshake timeout "
                f"({self._relay.handshake_timeout:g}s)"
            )
            return
        if not line.strip():
            self._end("closed: the peer sent no hello")
            return
        try:
            hello = Frame.parse(line.decode("utf-8", "replace").rstrip("\r\n"))
        except RelayError as err:
            self._end(f"closed: bad hello: {err}")
            return
        self.hello = hello
        if hello.type != "relay.hello":
            self._end(f"closed: first frame was {hello.type!r}, not relay.hello")
            return
        self.welcome = self._relay._welcome(self, hello)
        self.send_line(encode(self._relay._welcome_fields(self.welcome)))
        with self._cond:
            self.state = "connected"
            self._cond.notify_all()
        self._sock.settimeout(None)
        while True:
            try:
                line = reader.readline(MAX_FRAME_BYTES)
            except (OSError, ValueError):
                line = b""
            if not line:
                self._end("closed: the runtime hung up")
                return
            text = line.decode("utf-8", "replace").rstrip("\r\n")
            if not text.strip():
                continue
            try:
                frame = Frame.parse(text)
            except RelayError:
                # Malformed lines are recorded as such and skipped, not fatal.
                frame = Frame(type="(malformed)", line=text)
            self._receive(frame)

    def _receive(self, frame: Frame) -> None:
        with self._cond:
            self._frames.append(frame)
            attachment = self._attachments.get(frame.session)
            self._cond.notify_all()
        if frame.type == "relay.heartbeat" and frame.id:
            if self._relay.answer_heartbeats:
                self.send(type="relay.ack", instance=frame.instance, re=frame.id)
        elif frame.type.startswith("relay.") and frame.id and frame.type not in _KNOWN_CONTROL:
            self.send(
                type="relay.error",
                instance=frame.instance,
                session=frame.session,
                re=frame.id,
                payload={"code": "unsupported_type", "message": f"unsupported {frame.type}"},
            )
        elif attachment is not None and frame.type == "acp.message":
            attachment._deliver(frame)


_KNOWN_CONTROL = frozenset({"relay.hello", "relay.welcome", "relay.heartbeat", "relay.ack"})


class Attachment:
    """An editor or browser behind the relay, speaking ACP to the runtime on one attachment id.

    Each JSON-RPC message travels as the payload of an ``acp.message`` frame with
    ``session`` = this attachment's id; what comes back on that id is read here.
    """

    def __init__(self, link: Link, session: str) -> None:
        self.link = link
        self.session = session
        self._inbox: queue.Queue[Frame] = queue.Queue()
        self._messages: list[dict[str, JSON]] = []
        self._next_id = 0

    def _deliver(self, frame: Frame) -> None:
        self._inbox.put(frame)

    def send(self, message: Mapping[str, JSON]) -> None:
        """Put one JSON-RPC message on the wire as an ``acp.message`` frame."""
        self.link.send(
            type="acp.message", instance=self.link.instance, session=self.session, payload=message
        )

    def messages(self) -> list[dict[str, JSON]]:
        """Every ACP message the runtime sent this attachment so far (read by :meth:`request`)."""
        return list(self._messages)

    def request(
        self,
        method: str,
        params: Mapping[str, JSON],
        timeout: float | None = None,
        *,
        answer: Callable[[dict[str, JSON]], JSON] | None = None,
    ) -> dict[str, JSON]:
        """Send a JSON-RPC request and return its response (``result`` or ``error``).

        Requests the runtime makes of the client meanwhile (permission, fs) are answered
        with a JSON-RPC error: this client offers no capabilities. With ``answer``, each
        such request is answered with ``answer(request)`` as its ``result`` instead, and
        when ``answer`` returns None the request is left unanswered and returned — an app
        that sees an ask and walks away (:meth:`wait` picks the response up later)::

            ask = client.request("session/prompt", params, answer=lambda req: None)
            # ask["method"] == "session/request_permission"
        """
        self._next_id += 1
        rid = self._next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": dict(params)})
        return self.wait(rid, method, timeout, answer=answer)

    def wait(
        self,
        rid: int,
        method: str = "the request",
        timeout: float | None = None,
        *,
        answer: Callable[[dict[str, JSON]], JSON] | None = None,
    ) -> dict[str, JSON]:
        """Wait for the response to request ``rid`` (see :meth:`request` for ``answer``)."""
        deadline = time.monotonic() + (self.link._relay.timeout if timeout is None else timeout)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RelayError(
                    f"no ACP answer to {method} (id {rid}) on attachment {self.session}\n"
                    + self.link.describe()
                )
            try:
                frame = self._inbox.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            message = frame.body()
            if not isinstance(message, dict):
                continue
            self._messages.append(message)
            if message.get("id") == rid and "method" not in message:
                return message
            if "method" in message and "id" in message:
                if answer is not None:
                    result = answer(message)
                    if result is None:
                        return message
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                    continue
                self.send(
                    {
                        "jsonrpc": "2.0",
                        "id": message["id"],
                        "error": {"code": -32601, "message": "the e2e relay client offers none"},
                    }
                )

    def detach(self) -> None:
        """Tell the runtime this client is gone (``acp.detach``)."""
        self.link.send(type="acp.detach", instance=self.link.instance, session=self.session)


# ---------------------------------------------------------------- the server


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the records are the log that counts."""

    def do_POST(self) -> None:
        relay = self.server.relay
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(min(length, 1 << 20)).decode("utf-8", "replace")
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path.rstrip("/") != REDEEM_PATH:
            status, answer = 404, {"error": {"message": f"no route POST {self.path}"}}
        else:
            status, answer = relay._redeem(body)
        relay._record(Redemption(headers=headers, body=body, status=status))
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        relay = self.server.relay
        headers = {k.lower(): v for k, v in self.headers.items()}
        if self.path.rstrip("/") != CONNECT_PATH:
            self._refuse(404, f"no route GET {self.path}")
            return
        if headers.get("upgrade", "").strip().lower() != UPGRADE_PROTOCOL:
            self._refuse(426, f"upgrade to {UPGRADE_PROTOCOL} required")
            return
        token = headers.get("authorization", "").removeprefix("Bearer ")
        link = Link(relay, self.connection, headers)
        relay._add_link(link)
        if not relay._token_known(token):
            link.state = "closed: unknown bearer credential (401)"
            self._refuse(401, "unknown instance credential")
            return
        self.send_response(101)
        self.send_header("Upgrade", UPGRADE_PROTOCOL)
        self.send_header("Connection", "Upgrade")
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        link._serve(self.rfile)

    def _refuse(self, status: int, message: str) -> None:
        data = json.dumps({"error": {"message": message}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    relay: Relay

    def __init__(self, address: tuple[str, int], context: ssl.SSLContext) -> None:
        super().__init__(address, _Handler)
        self._context = context

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, address = super().get_request()
        # The TLS handshake is bounded too: a peer that opens TCP and says nothing
        # must not pin a thread.
        sock.settimeout(self.relay.handshake_timeout)
        return self._context.wrap_socket(sock, server_side=True), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A peer that breaks its connection is not the relay's failure: stay quiet."""


class Relay:
    """A running relay: its URL, its keys, what crossed it, and :meth:`close`.

    Use :func:`start_relay` (as a context manager) or :func:`serve_relay` (for a case).
    """

    def __init__(
        self,
        *,
        host: str,
        directory: Path,
        signing_key: Ed25519PrivateKey,
        welcome_key: Ed25519PrivateKey | None,
        protocol_version: int,
        handshake_timeout: float,
        timeout: float,
        answer_heartbeats: bool = True,
    ) -> None:
        require_loopback(host)
        self.answer_heartbeats = answer_heartbeats
        self.host = host
        self.signing_key = signing_key
        # The key the welcome is signed with: the paired key unless a case wants an impostor.
        self.welcome_key = welcome_key or signing_key
        self.protocol_version = protocol_version
        self.handshake_timeout = handshake_timeout
        self.timeout = timeout
        self._lock = threading.Condition()
        self._pairings: list[_Pairing] = []
        self._redemptions: list[Redemption] = []
        self._links: list[Link] = []
        # Told (n, token) for each minted key: serve_relay names tokens in the transcript.
        self.on_mint: Callable[[int, str], None] | None = None
        self._ca, context = _tls(directory, host)
        self.ca_file = self._ca.file
        self._server = _Server((host, 0), context)
        self._server.relay = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()
        port = self._server.server_address[1]
        self.url = f"https://{host}:{port}"

    # -------------------------------------------------------------- what a case reads

    @property
    def public_key(self) -> str:
        """The relay's identity key, as it hands it out at redemption (base64)."""
        return public_key_text(self.signing_key)

    @property
    def env(self) -> dict[str, str]:
        """What a contenox child needs to trust this relay's TLS certificate."""
        return {"SSL_CERT_FILE": str(self.ca_file)}

    def mint_key(self, *, instance_id: str = "inst-e2e", account_id: str = "acct-e2e") -> str:
        """A fresh pairing key, redeemable once, for the given instance and account."""
        with self._lock:
            n = len(self._pairings) + 1
            pairing = _Pairing(
                key=f"K7M-{n:03d}",
                instance_id=instance_id,
                token=f"tok-{secrets.token_hex(12)}",
                account_id=account_id,
            )
            self._pairings.append(pairing)
        if self.on_mint is not None:
            self.on_mint(n, pairing.token)
        return pairing.key

    def token_of(self, instance_id: str) -> str:
        """The instance credential handed out for ``instance_id`` (fails if never redeemed)."""
        with self._lock:
            for p in self._pairings:
                if p.instance_id == instance_id and p.redeemed:
                    return p.token
        raise RelayError(f"no redeemed pairing for instance {instance_id!r}")

    def redemptions(self) -> list[Redemption]:
        """Every redeem request received, oldest first."""
        with self._lock:
            return list(self._redemptions)

    def links(self) -> list[Link]:
        """Every connection a runtime opened on ``/v1/connect``, oldest first."""
        with self._lock:
            return list(self._links)

    def wait_link(self, index: int = 0, *, state: str = "connected") -> Link:
        """The ``index``-th connection once it is past the handshake (or in ``state``)."""
        deadline = time.monotonic() + self.timeout
        with self._lock:
            while len(self._links) <= index:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RelayError(
                        f"the runtime never dialled the relay at {self.url} "
                        f"({len(self._links)} connection(s) so far)"
                    )
                self._lock.wait(min(left, 0.5))
            link = self._links[index]
        with link._cond:
            while not link.state.startswith(state) and not (
                state == "connected" and link.state.startswith("closed")
            ):
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                link._cond.wait(min(left, 0.5))
            # A runtime that refuses the welcome hangs up at once: "connected"
            # was passed through, so a closed link is what the caller waits on.
            passed = state == "connected" and link.state.startswith("closed")
        if not link.state.startswith(state) and not passed:
            raise RelayError(f"connection {index} is not {state}\n{link.describe()}")
        return link

    def rotate_leaf(self) -> None:
        """Serve a fresh leaf from the same CA at the same address, as an ACME renewal would.

        Connections already open keep theirs; every handshake after this sees the new one."""
        cert, key = self._ca.leaf(
            self.host, cert_name="relay-cert-2.pem", key_name="relay-key-2.pem"
        )
        self._server._context.load_cert_chain(cert, key)

    def describe(self) -> str:
        """Every redemption and connection, for a failure message."""
        rows = [f"  redeem {r.status} {r.body}" for r in self.redemptions()]
        rows += [f"  {link.describe()}" for link in self.links()]
        return f"relay {self.url}:\n" + ("\n".join(rows) or "  (nothing received)")

    def close(self, timeout: float = 10.0) -> None:
        """Stop accepting, drop every connection, and join the server thread (idempotent).

        Raises :class:`RelayError` if the server has not stopped within ``timeout``.
        """
        for link in self.links():
            link._end("closed: the relay shut down")
        if self._thread.is_alive():
            stopper = threading.Thread(target=self._server.shutdown, daemon=True)
            stopper.start()
            stopper.join(timeout)
            self._thread.join(max(0.0, timeout))
        self._server.server_close()
        if self._thread.is_alive():
            raise RelayError(f"the relay at {self.url} did not stop within {timeout:g}s")

    def __enter__(self) -> Relay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -------------------------------------------------------------- server internals

    def _record(self, redemption: Redemption) -> None:
        with self._lock:
            self._redemptions.append(redemption)

    def _redeem(self, body: str) -> tuple[int, JSON]:
        try:
            request = json.loads(body)
            key = request["key"]
        except (ValueError, KeyError, TypeError):
            return 400, {"error": {"message": "the body must be JSON with a 'key'"}}
        with self._lock:
            for p in self._pairings:
                if p.key == key and not p.redeemed:
                    p.redeemed = True
                    return 200, {
                        "instance_token": p.token,
                        "instance_id": p.instance_id,
                        "account_id": p.account_id,
                        "relay_public_key": self.public_key,
                    }
        return 403, {"error": {"message": "this pairing key is unknown, expired or already used"}}

    def _token_known(self, token: str) -> bool:
        with self._lock:
            return any(p.redeemed and p.token == token for p in self._pairings)

    def _add_link(self, link: Link) -> None:
        with self._lock:
            self._links.append(link)
            self._lock.notify_all()

    def _welcome(self, link: Link, hello: Frame) -> Frame:
        body = hello.body() if hello.payload else {}
        peer = int(body.get("protocol_version") or 0) if isinstance(body, dict) else 0
        version = min(peer, self.protocol_version) if peer else self.protocol_version
        nonce = base64.b64decode(str(body.get("nonce") or "")) if isinstance(body, dict) else b""
        try:
            sig = sign_welcome(self.welcome_key, nonce, version, hello.instance)
        except ValueError:
            sig = b""
        payload = {
            "protocol_version": version,
            "relay": "contenox-e2e-relay",
            "sig": base64.b64encode(sig).decode(),
        }
        line = encode(
            {
                "type": "relay.welcome",
                "instance": hello.instance,
                "re": hello.id,
                "payload": payload,
            }
        )
        return Frame.parse(line.decode().rstrip("\n"))

    @staticmethod
    def _welcome_fields(welcome: Frame) -> dict[str, JSON]:
        return {
            "type": welcome.type,
            "instance": welcome.instance,
            "re": welcome.re,
            "payload": welcome.body(),
        }


# ---------------------------------------------------------------- TLS


def _tls(directory: Path, host: str) -> tuple[ThrowawayCA, ssl.SSLContext]:
    """A throwaway CA and a leaf for ``host`` signed by it; return (the CA, server context)."""
    ca = ThrowawayCA(directory, label="contenox-e2e relay CA", file_name="relay-ca.pem")
    context = ca.server_context(
        host,
        cert_name="relay-cert.pem",
        key_name="relay-key.pem",
        minimum_version=ssl.TLSVersion.TLSv1_3,
    )
    return ca, context


# ---------------------------------------------------------------- entry points


@contextmanager
def start_relay(
    directory: Path,
    *,
    host: str = "127.0.0.1",
    signing_key: Ed25519PrivateKey | None = None,
    welcome_key: Ed25519PrivateKey | None = None,
    protocol_version: int = PROTOCOL_VERSION,
    handshake_timeout: float = 10.0,
    timeout: float = 30.0,
    answer_heartbeats: bool = True,
) -> Iterator[Relay]:
    """Run a relay on ``host`` (loopback only) at an OS-picked port; closed on exit.

    ``signing_key`` is the relay's identity (fresh if not given); ``welcome_key``, when
    given, signs welcomes instead — an impostor the runtime must refuse.
    ``protocol_version`` is the highest version this relay claims to speak (its welcome
    selects ``min(peer, this)``); ``answer_heartbeats=False`` makes a relay that stops
    answering the runtime's liveness probes.
    ``handshake_timeout`` bounds TLS + hello; ``timeout`` bounds every wait of a case.
    A non-loopback ``host`` raises :class:`~harness.servers.loopback.NotLoopback`
    before anything binds.
    """
    require_loopback(host)
    relay = Relay(
        host=host,
        directory=directory,
        signing_key=signing_key or Ed25519PrivateKey.generate(),
        welcome_key=welcome_key,
        protocol_version=protocol_version,
        handshake_timeout=handshake_timeout,
        timeout=timeout,
        answer_heartbeats=answer_heartbeats,
    )
    try:
        yield relay
    finally:
        relay.close()


def serve_relay(instance: Instance, **options: Any) -> Relay:
    """Start a relay for this case (see :func:`start_relay`); closed when the case ends."""
    manager = start_relay(instance.tmp / "relay", **options)
    relay = manager.__enter__()
    # What differs from run to run reads as a name in the transcript: the port,
    # the relay's fresh identity key, each token, and this machine's hostname.
    recorder = instance.recorder
    recorder.name(relay.url, "[RELAY]")
    recorder.name(relay.public_key, "[RELAY_KEY]")
    recorder.redact(re.escape(f'"{socket.gethostname()}"'), '"[HOSTNAME]"')
    relay.on_mint = lambda n, token: recorder.name(token, f"[TOKEN{n}]")

    def stop() -> None:
        manager.__exit__(None, None, None)

    instance.cleanups.append(stop)
    return relay
