"""The one address rule every harness server follows: loopback or nothing.

And the HTTP server the stand-ins build on, which stops promptly.
"""

from __future__ import annotations

import ipaddress

from pytest_httpserver import HTTPServer

__all__ = ["NotLoopback", "QuickStopServer", "require_loopback"]


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


class QuickStopServer(HTTPServer):
    """pytest-httpserver's server, polling for its stop every 50 ms, not every 0.5 s.

    ``stop()`` waits for the serving thread to notice; at the default poll interval
    every case that serves one paid up to half a second at its end.
    """

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=0.05)
