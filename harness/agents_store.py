"""Register a foreign (``external_acp``) agent in a scratch home's store.

contenox v1.0.0 confines a foreign ACP agent behind its sandbox wall
(guide/confinement/sandbox.md), but no command registers one: "external_acp
agents are internal-only". Its registry is the ``agents`` table of
``~/.contenox/local.db``, and an editor reaches a registered agent by name
(``session/new`` with ``_meta: {"contenox.agent": NAME}``). Like
:mod:`harness.clock`, this module writes state no command can make, straight
into that table — the one place the suite touches contenox's store, and only
to stand in for the registration path the docs say is missing. Everything a
case then asserts comes back over ACP, from the agent's own reply.

>>> register_external_agent(home, "walled", wall_agent_argv())
"registered external_acp agent 'walled' (python3 -c <inline program>) in the store"
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Mapping, Sequence
from contextlib import closing
from datetime import UTC, datetime
from pathlib import Path

__all__ = [
    "AGENT_COLUMNS",
    "AgentsStoreError",
    "register_external_agent",
    "wall_agent_argv",
]

# The columns of v1.0.0's agents table the row fills
# (internal/store/runtimetypes/schema_sqlite.sql, CREATE TABLE agents).
AGENT_COLUMNS = (
    "id",
    "name",
    "kind",
    "enabled",
    "config_json",
    "source",
    "created_at",
    "updated_at",
)

# contenox's SQLite driver writes a time.Time as Go's Time.String(); see harness/clock.py.
_GO_STAMP = "%Y-%m-%d %H:%M:%S.%f +0000 UTC"

# The wall grants read and exec on /usr, so the system interpreter runs inside
# it; the suite's own venv python lives outside every grant.
_PYTHON = Path("/usr/bin/python3")


class AgentsStoreError(RuntimeError):
    """The store is not the one this module knows how to write; nothing was written."""


def wall_agent_argv(python: Path = _PYTHON) -> tuple[str, ...]:
    """The argv of :mod:`harness.wall_agent`, its source passed inline (``python3 -c``).

    Inline, so the walled agent needs no read grant on the suite's tree.
    """
    if not python.is_file():
        raise AgentsStoreError(
            f"{python} is missing: the walled probe agent runs under the system python, "
            "which the wall lets it read and exec (/usr); install python3 or pass another "
            "interpreter under /usr"
        )
    source = Path(__file__).with_name("wall_agent.py").read_text(encoding="utf-8")
    return (str(python), "-c", source)


def _check_schema(db: sqlite3.Connection, path: Path) -> None:
    columns = {row[1] for row in db.execute("PRAGMA table_info(agents)")}
    if not columns:
        raise AgentsStoreError(
            f"{path} has no agents table: run `contenox init` (and a command that opens the "
            "store) in this home first, or contenox renamed its registry — read "
            "internal/store/runtimetypes/schema_sqlite.sql and update harness/agents_store.py"
        )
    missing = [c for c in AGENT_COLUMNS if c not in columns]
    if missing:
        raise AgentsStoreError(
            f"{path}'s agents table lacks {', '.join(missing)} "
            f"(it has {', '.join(sorted(columns))}): contenox changed the registry's shape; "
            "update harness/agents_store.py to it"
        )


def register_external_agent(
    home: Path,
    name: str,
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    enabled: bool = True,
) -> str:
    """Insert an enabled ``external_acp`` stdio agent ``name`` running ``argv``; return a sentence.

    ``cwd`` empty (the default) lets contenox give it the session's cwd, the
    workspace the wall is built around; ``env`` is the config's own
    variables, set on the agent on top of the scrubbed environment.
    Raises :class:`AgentsStoreError` before writing when ``home`` has no
    store, the table's shape differs, or ``name`` is taken.
    """
    if not argv:
        raise AgentsStoreError("register_external_agent needs a command: argv is empty")
    path = home / ".contenox" / "local.db"
    if not path.is_file():
        raise AgentsStoreError(
            f"{path} does not exist: run `contenox init` in this home before registering an agent"
        )
    config: dict[str, object] = {"transport": "stdio", "command": argv[0]}
    if argv[1:]:
        config["args"] = list(argv[1:])
    if cwd is not None:
        config["cwd"] = str(cwd)
    if env:
        config["env"] = dict(env)
    now = datetime.now(UTC).strftime(_GO_STAMP)
    with closing(sqlite3.connect(path, timeout=30)) as db:
        _check_schema(db, path)
        if db.execute("SELECT 1 FROM agents WHERE name = ?", (name,)).fetchone():
            raise AgentsStoreError(f"{path} already holds an agent named {name!r}; pick another")
        with db:
            db.execute(
                f"INSERT INTO agents ({', '.join(AGENT_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    str(uuid.uuid4()),
                    name,
                    "external_acp",
                    1 if enabled else 0,
                    json.dumps(config),
                    "manual",
                    now,
                    now,
                ),
            )
    # An inline program (-c) would flood the transcript; the sentence names it.
    if len(argv) > 1 and argv[1] == "-c":
        shown = f"{Path(argv[0]).name} -c <inline program>"
    else:
        shown = " ".join(argv)
    return f"registered external_acp agent {name!r} ({shown}) in the store"
