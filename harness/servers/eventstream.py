"""AWS event-stream framing (``application/vnd.amazon.eventstream``), both ways.

Bedrock's ConverseStream answers in binary frames, not SSE: each message is a
prelude (total length, headers length, both big-endian u32, and their CRC32),
typed headers (``:event-type``, ``:content-type``, ``:message-type``), the JSON
payload, and a CRC32 of everything before it. No maintained Python package
*writes* this framing (botocore only reads it, and is a large dependency for
one function), so the stand-in frames it here; :func:`decode` reads frames back
and checks both CRCs, so ``tests/`` can see a frame the stand-in wrote is one
the AWS SDK would accept::

    frame = encode_event("messageStart", {"role": "assistant"})
    [(headers, payload)] = decode(frame)
    assert headers[":event-type"] == "messageStart"
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = ["EventStreamError", "decode", "encode", "encode_event", "encode_exception"]

_STRING = 7  # the header value type for a UTF-8 string


class EventStreamError(ValueError):
    """A frame that is not AWS event-stream framing (a length or CRC that does not hold)."""


def _crc(data: bytes) -> int:
    return zlib.crc32(data) & 0xFFFFFFFF


def encode(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One event-stream message with string ``headers`` and ``payload``."""
    block = b""
    for name, value in headers.items():
        raw_name, raw_value = name.encode(), value.encode()
        block += struct.pack("!B", len(raw_name)) + raw_name
        block += struct.pack("!BH", _STRING, len(raw_value)) + raw_value
    total = 12 + len(block) + len(payload) + 4
    prelude = struct.pack("!II", total, len(block))
    message = prelude + struct.pack("!I", _crc(prelude)) + block + payload
    return message + struct.pack("!I", _crc(message))


def encode_event(event: str, data: Any) -> bytes:
    """An ``event`` message of type ``event`` carrying ``data`` as JSON."""
    return encode(
        {":event-type": event, ":content-type": "application/json", ":message-type": "event"},
        json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode(),
    )


def encode_exception(kind: str, message: str) -> bytes:
    """A modelled exception mid-stream (``ThrottlingException``, …)."""
    return encode(
        {
            ":exception-type": kind,
            ":content-type": "application/json",
            ":message-type": "exception",
        },
        json.dumps({"message": message}).encode(),
    )


def decode(data: bytes) -> list[tuple[dict[str, str], bytes]]:
    """Every message in ``data``: its string headers and payload (CRCs checked)."""
    out: list[tuple[dict[str, str], bytes]] = []
    at = 0
    while at < len(data):
        if len(data) - at < 16:
            raise EventStreamError(f"{len(data) - at} trailing byte(s) at {at}: not a frame")
        total, head_len = struct.unpack_from("!II", data, at)
        (prelude_crc,) = struct.unpack_from("!I", data, at + 8)
        if _crc(data[at : at + 8]) != prelude_crc:
            raise EventStreamError(f"prelude CRC mismatch in the frame at byte {at}")
        if total < 16 or at + total > len(data):
            raise EventStreamError(f"frame at byte {at} claims {total} bytes")
        frame = data[at : at + total]
        (message_crc,) = struct.unpack_from("!I", frame, total - 4)
        if _crc(frame[:-4]) != message_crc:
            raise EventStreamError(f"message CRC mismatch in the frame at byte {at}")
        headers: dict[str, str] = {}
        pos, end = 12, 12 + head_len
        while pos < end:
            (name_len,) = struct.unpack_from("!B", frame, pos)
            name = frame[pos + 1 : pos + 1 + name_len].decode()
            pos += 1 + name_len
            kind, value_len = struct.unpack_from("!BH", frame, pos)
            if kind != _STRING:
                raise EventStreamError(f"header {name!r} has type {kind}; only strings are read")
            headers[name] = frame[pos + 3 : pos + 3 + value_len].decode()
            pos += 3 + value_len
        out.append((headers, frame[end:-4]))
        at += total
    return out
