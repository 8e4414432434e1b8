"""The one address rule every harness server follows: loopback or nothing."""

from __future__ import annotations

import ipaddress

__all__ = ["NotLoopback", "require_loopback"]


class NotLoopback(ValueError):
    """A server was asked to bind an address that is not loopback; nothing was started."""


def require_loopback(host: str) -> str:
    """Return ``host`` if it is a loopback address (127.0.0.0/8, ::1, ``localhost``), else raise.

    >>> require_loopback("127.0.0.1")
    '127.0.0.1'
    >>> require_loopback("0.0.0.0")
    Traceback (most recent call last):
    NotLoopback: ...
    """
    if host == "localhost":
        return host
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise NotLoopback(
            f"refusing to bind {host!r}: the harness's servers listen on loopback only; "
            "give an address in 127.0.0.0/8 or ::1 (e.g. '127.0.0.1')"
        ) from None
    if not address.is_loopback:
        raise NotLoopback(
            f"refusing to bind {host!r}: it is not a loopback address, and the suite sends "
            "no traffic off this machine; use '127.0.0.1'"
        )
    return host
