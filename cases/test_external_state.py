"""State on servers a user runs: reference/config.md, "External backends for state (opt-in)".

Every case here is a function: it starts a real PostgreSQL (harness/servers/postgres.py),
a real Valkey (harness/servers/valkey.py) and a NATS server on loopback, inside the case's
scratch root, and points contenox at them through ``CONTENOX_POSTGRES_URL``,
``CONTENOX_NATS_URL`` and ``CONTENOX_VALKEY_URL``. What lands where is read back through
contenox's own commands (``doctor``, ``session new`` / ``session list``), never from the tables.

The refusals that need no server (a malformed value, ``valkeys://``, Postgres without the
other two, a server nobody runs) are cases in test_config.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness import Instance
from harness.servers.nats import NatsServer, serve_nats
from harness.servers.postgres import Postgres, serve_postgres
from harness.servers.valkey import Valkey, serve_valkey

# The Valkey server's default user has its own password; contenox authenticates as the
# ACL user APP_USER, so a URL that reaches the server proves the user was sent.
DEFAULT_PASSWORD = "default-pw"
APP_USER = "appuser"
APP_PASSWORD = "s3cret-vk"
# NATS's client logs with Go's default logger: a wall-clock stamp per line.
GO_LOG_TIME = r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}"


@dataclass
class Servers:
    pg: Postgres
    nats: NatsServer
    valkey: Valkey

    def env(
        self, *, valkey_db: int | str = 3, namespace: str | None = "contenox"
    ) -> dict[str, str]:
        return {
            "CONTENOX_POSTGRES_URL": self.pg.url(),
            "CONTENOX_NATS_URL": self.nats.url,
            "CONTENOX_VALKEY_URL": self.valkey.url(
                user=APP_USER, password=APP_PASSWORD, db=valkey_db, namespace=namespace
            ),
        }


def _servers(instance: Instance) -> Servers:
    """Postgres, NATS and Valkey for this case, in its scratch root; stopped when it ends."""
    nats = serve_nats(instance)  # stopped by the case's own cleanup
    managers = [
        serve_postgres(instance.tmp / "postgres"),
        serve_valkey(instance.tmp / "valkey", password=DEFAULT_PASSWORD),
    ]
    entered: list[object] = []

    def stop() -> None:
        for manager in reversed(managers[: len(entered)]):
            manager.__exit__(None, None, None)

    instance.cleanups.append(stop)
    for manager in managers:
        entered.append(manager.__enter__())
    pg, valkey = entered
    assert isinstance(pg, Postgres)
    assert isinstance(valkey, Valkey)
    valkey.add_user(APP_USER, APP_PASSWORD)
    recorder = instance.recorder
    recorder.name(f"{pg.host}:{pg.port}", "[POSTGRES]")
    recorder.name(f"port={pg.port}", "port=[PGPORT]")
    recorder.name(f"{nats.host}:{nats.port}", "[NATS]")
    recorder.name(f"{valkey.host}:{valkey.port}", "[VALKEY]")
    # Its connect/disconnect lines interleave in no promised order: not part of a transcript.
    # Case-blind: its close also logs "error unsubscribing from stream …: nats: connection closed".
    recorder.redact(GO_LOG_TIME + r" [^\n]*(?i:nats)[^\n]*\n?", "")
    return Servers(pg=pg, nats=nats, valkey=valkey)


def _state_section(stdout: str) -> str:
    """doctor's State storage section: from its heading to the first blank line."""
    start = stdout.index("State storage:")
    return stdout[start:].split("\n\n", 1)[0]


def test_doctor_names_postgres_nats_and_valkey_as_reachable_with_credentials_masked(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    doctor = instance.must("doctor", env=servers.env())
    pg, nats, vk = servers.pg, servers.nats, servers.valkey
    assert _state_section(doctor.stdout) == (
        "State storage:\n"
        f"  • store: Postgres (postgres://contenox:xxxxx@{pg.host}:{pg.port}/contenox"
        "?sslmode=disable, from CONTENOX_POSTGRES_URL)\n"
        "    Status: reachable\n"
        f"  • message bus: NATS (nats://{nats.host}:{nats.port}, from CONTENOX_NATS_URL)\n"
        "    Status: reachable\n"
        f"  • key-value cache: Valkey (valkey://appuser:xxxxx@{vk.host}:{vk.port}/3"
        "?namespace=contenox, from CONTENOX_VALKEY_URL)\n"
        "    Status: reachable"
    ), doctor.describe()
    for secret in (servers.pg.url().split(":")[2].split("@")[0], APP_PASSWORD):
        assert secret not in doctor.stdout + doctor.stderr, doctor.describe()


def test_doctor_masks_the_password_of_a_keyword_connection_string(instance: Instance) -> None:
    # function: drives the servers
    servers = _servers(instance)
    pg = servers.pg
    keyword = (
        f"host={pg.host} port={pg.port} user=contenox password=s3cret-pg dbname=contenox "
        "sslmode=disable"
    )
    doctor = instance.must("doctor", env={**servers.env(), "CONTENOX_POSTGRES_URL": keyword})
    assert (
        f"  • store: Postgres (host={pg.host} port={pg.port} user=contenox password=xxxxx "
        "dbname=contenox sslmode=disable, from CONTENOX_POSTGRES_URL)\n    Status: reachable"
    ) in doctor.stdout, doctor.describe()
    assert "s3cret-pg" not in doctor.stdout + doctor.stderr, doctor.describe()


def test_doctor_drops_the_whole_userinfo_of_a_postgres_url_without_a_password(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    pg = servers.pg
    bare = pg.url(password=None)
    doctor = instance.must("doctor", env={**servers.env(), "CONTENOX_POSTGRES_URL": bare})
    assert (
        f"  • store: Postgres (postgres://xxxxx@{pg.host}:{pg.port}/contenox?sslmode=disable, "
        "from CONTENOX_POSTGRES_URL)\n    Status: reachable"
    ) in doctor.stdout, doctor.describe()
    assert "contenox@" not in _state_section(doctor.stdout), doctor.describe()


def test_a_session_made_against_postgres_is_listed_from_a_second_home_on_the_same_database(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    env = servers.env()
    instance.must("session", "new", "on-postgres", env=env)
    second = instance.root / "second-home"
    second.mkdir()
    listed = instance.must("session", "list", env={**env, "HOME": str(second)})
    assert "on-postgres" in listed.stdout, listed.describe()
    # Control: the same home without the variables reads its own SQLite file, which
    # the session never reached.
    local = instance.must("session", "list")
    assert "on-postgres" not in local.stdout, local.describe()
    assert "No sessions yet" in local.stdout, local.describe()


def test_selecting_postgres_is_not_a_migration_an_empty_database_comes_up_empty(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    instance.must("session", "new", "in-sqlite")
    assert "in-sqlite" in instance.must("session", "list").stdout
    # The schema is applied on connect: the empty database is enough to start against.
    on_postgres = instance.must("session", "list", env=servers.env())
    assert "in-sqlite" not in on_postgres.stdout, on_postgres.describe()
    assert "No sessions yet" in on_postgres.stdout, on_postgres.describe()


def test_a_valkey_user_is_sent_and_a_wrong_password_for_it_stops_doctor_naming_the_variable(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    vk = servers.valkey
    # The default user's password is another one: reaching the server proves the user was sent.
    instance.must("doctor", env=servers.env())
    wrong = vk.url(user=APP_USER, password="not-the-password", db=3)
    refused = instance.contenox("doctor", env={**servers.env(), "CONTENOX_VALKEY_URL": wrong})
    assert refused.exit_code == 1, refused.describe()
    assert "CONTENOX_VALKEY_URL: cannot reach the Valkey server it names" in refused.stderr, (
        refused.describe()
    )
    assert "not-the-password" not in refused.stdout + refused.stderr, refused.describe()


def test_a_database_index_the_server_does_not_have_stops_doctor_naming_the_variable(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    # The server has 16 databases (0-15): /3 is honoured (control), /20 cannot be SELECTed.
    instance.must("doctor", env=servers.env(valkey_db=15, namespace=None))
    refused = instance.contenox("doctor", env=servers.env(valkey_db=20, namespace=None))
    assert refused.exit_code == 1, refused.describe()
    vk = servers.valkey
    assert (
        f"  • key-value cache: Valkey (valkey://appuser:xxxxx@{vk.host}:{vk.port}/20, "
        "from CONTENOX_VALKEY_URL)\n    Status: unreachable"
    ) in refused.stdout, refused.describe()
    assert "CONTENOX_VALKEY_URL: cannot reach the Valkey server it names" in refused.stderr, (
        refused.describe()
    )


def test_a_valkey_url_with_only_a_password_authenticates_as_the_default_user(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    vk = servers.valkey
    only_password = vk.url(password=DEFAULT_PASSWORD, db=3)
    doctor = instance.must("doctor", env={**servers.env(), "CONTENOX_VALKEY_URL": only_password})
    assert (
        f"  • key-value cache: Valkey (valkey://:xxxxx@{vk.host}:{vk.port}/3, "
        "from CONTENOX_VALKEY_URL)\n    Status: reachable"
    ) in doctor.stdout, doctor.describe()
    # Control: the application user's password is not the default user's.
    wrong = vk.url(password=APP_PASSWORD, db=3)
    refused = instance.contenox("doctor", env={**servers.env(), "CONTENOX_VALKEY_URL": wrong})
    assert refused.exit_code == 1, refused.describe()
    assert "CONTENOX_VALKEY_URL: cannot reach the Valkey server it names" in refused.stderr, (
        refused.describe()
    )
