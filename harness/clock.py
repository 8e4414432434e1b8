"""Let hours pass in contenox's own store: the one seam that moves a recorded time back.

Some promises wait on contenox's wall clock for hours (a mission is reclaimed after
six hours of heartbeat silence). The binary is static Go, so no faketime reaches
it, and the system clock is not ours to move. What the sweep measures is the
distance between *now* and a time contenox recorded; moving that recorded time back
by the bound is what the hours would have done to it, and nothing else changes.
Every contenox process of the instance must be gone first (the seam writes the
SQLite file directly), and the result is read back only through contenox's own
commands.

The seam writes, never reads state for a case to assert on, and refuses — naming
the table, the key and the field, and what to do — when the row it expects is not
there, before it touches anything::

    sentence = move_mission_back(instance.home, mission_id, timedelta(hours=6, minutes=1))
    instance.recorder.note(sentence)
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

__all__ = [
    "MISSION_CLOCK_FIELDS",
    "ClockError",
    "local_db",
    "move_claim_back",
    "move_event_log_back",
    "move_firing_back",
    "move_mission_back",
    "span",
]

# The fields of a mission record whose distance from now the reclaim sweep
# measures: its last heartbeat and its creation (a mission never heard from is
# silent since it was created). Moving only the heartbeat leaves it "created a
# second ago" and nothing is reclaimed; both are what six hours would age.
MISSION_CLOCK_FIELDS = ("lastHeartbeat", "createdAt")


class ClockError(Exception):
    """The store does not hold the row or field the seam was asked to move."""


def local_db(home: Path) -> Path:
    """contenox's store under a scratch ``home`` (``home/.contenox/local.db``)."""
    return home / ".contenox" / "local.db"


def span(by: timedelta) -> str:
    """``timedelta(hours=6, minutes=1)`` → ``"6 hours 1 minute"`` (how a transcript names a move).

    Words, not ``6h1m``: the transcript redacts Go-style durations, and the move is
    the one duration a reader must see.
    """
    minutes, secs = divmod(int(by.total_seconds()), 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    units = ((days, "day"), (hours, "hour"), (mins, "minute"), (secs, "second"))
    words = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in units if n]
    return " ".join(words) or "0 seconds"


def _parse(stamp: str, where: str) -> datetime:
    """An RFC 3339 time as Go writes it (nanoseconds, ``Z``), to a UTC datetime."""
    head, _, frac = stamp.rstrip("Z").partition(".")
    try:
        moment = datetime.fromisoformat(head).replace(tzinfo=UTC)
    except ValueError as exc:
        raise ClockError(
            f"{where} holds {stamp!r}, not an RFC 3339 UTC time; contenox changed how it "
            "writes it — read the row and teach harness/clock.py the new shape"
        ) from exc
    micros = int((frac + "000000")[:6]) if frac else 0
    return moment + timedelta(microseconds=micros)


def _format(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def move_mission_back(home: Path, mission_id: str, by: timedelta) -> str:
    """Move mission ``mission_id``'s heartbeat and creation time back ``by``.

    The record is the JSON value of row ``fleet:mission:<id>`` in table ``kv`` of
    ``home/.contenox/local.db``; its :data:`MISSION_CLOCK_FIELDS` each move back by
    ``by`` and nothing else in the row or the file changes. Returns the sentence a
    transcript carries. Raises :class:`ClockError` before writing anything when the
    file, the row or a field is missing.
    """
    db = local_db(home)
    key = f"fleet:mission:{mission_id}"
    where = f"table kv, key {key!r} in {db}"
    if not db.is_file():
        raise ClockError(
            f"no contenox store at {db}: run the case's contenox commands (init, mission fire) "
            "in this home before moving its clock"
        )
    with closing(sqlite3.connect(db)) as conn, conn:
        rows = conn.execute("SELECT workspace_id, value FROM kv WHERE key = ?", (key,)).fetchall()
        if len(rows) != 1:
            raise ClockError(
                f"{where}: expected one mission record, found {len(rows)}; fire the mission "
                "first and pass the id `contenox mission list` prints (or contenox no longer "
                "keeps missions there — read the store and update harness/clock.py)"
            )
        [(workspace, raw)] = rows
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        record = json.loads(text)
        missing = [f for f in MISSION_CLOCK_FIELDS if not isinstance(record.get(f), str)]
        if missing:
            raise ClockError(
                f"{where}: the record has no {', '.join(missing)} field (fields: "
                f"{', '.join(sorted(record))}); contenox renamed where it keeps the heartbeat "
                "— update MISSION_CLOCK_FIELDS in harness/clock.py"
            )
        for field in MISSION_CLOCK_FIELDS:
            record[field] = _format(_parse(record[field], f"{where}, field {field}") - by)
        value = json.dumps(record, separators=(",", ":"))
        conn.execute(
            "UPDATE kv SET value = ? WHERE key = ? AND workspace_id = ?",
            (value.encode() if isinstance(raw, bytes) else value, key, workspace),
        )
    return (
        f"moved mission {mission_id}'s heartbeat and creation time back {span(by)} in "
        f"~/.contenox/local.db (kv {key}: {', '.join(MISSION_CLOCK_FIELDS)}) — the hours a "
        "clock would pass; every contenox process of this home is gone"
    )


# The claim of a firing is its event_firings row; "untouched for two hours" is
# its updated_at, which contenox writes as Go's time.Time.String().
_GO_STAMP = "%Y-%m-%d %H:%M:%S.%f +0000 UTC"


def _parse_go(stamp: str, where: str) -> datetime:
    head, _, rest = stamp.partition(".")
    frac, _, zone = rest.partition(" ")
    if zone != "+0000 UTC":
        raise ClockError(
            f"{where} holds {stamp!r}, not a UTC time as Go prints it; contenox changed how it "
            "writes it — read the row and teach harness/clock.py the new shape"
        )
    try:
        moment = datetime.fromisoformat(head).replace(tzinfo=UTC)
    except ValueError as exc:
        raise ClockError(f"{where} holds {stamp!r}, not a time harness/clock.py can read") from exc
    return moment + timedelta(microseconds=int((frac + "000000")[:6]))


def move_firing_back(home: Path, trigger: str, nid: int, by: timedelta) -> str:
    """Move the claim of trigger ``trigger`` on event ``nid`` back ``by`` (its ``updated_at``).

    The claim is the row of table ``event_firings`` (any workspace) with that
    trigger name and nid; only its ``updated_at`` moves. Returns the transcript's
    sentence; raises :class:`ClockError` before writing when the row is missing.
    """
    db = local_db(home)
    where = f"table event_firings, trigger_name {trigger!r}, nid {nid} in {db}"
    if not db.is_file():
        raise ClockError(
            f"no contenox store at {db}: let the case's dispatcher claim the firing in this "
            "home before moving its clock"
        )
    with closing(sqlite3.connect(db)) as conn, conn:
        rows = conn.execute(
            "SELECT workspace_id, status, updated_at FROM event_firings "
            "WHERE trigger_name = ? AND nid = ?",
            (trigger, nid),
        ).fetchall()
        if len(rows) != 1:
            raise ClockError(
                f"{where}: expected one firing claim, found {len(rows)}; check `contenox events "
                "firings` for the trigger and nid (or contenox no longer keeps claims there — "
                "read the store and update harness/clock.py)"
            )
        [(workspace, status, updated)] = rows
        moved = _parse_go(str(updated), f"{where}, field updated_at") - by
        conn.execute(
            "UPDATE event_firings SET updated_at = ? "
            "WHERE workspace_id = ? AND trigger_name = ? AND nid = ?",
            (moved.strftime(_GO_STAMP), workspace, trigger, nid),
        )
    return (
        f"moved the {status} claim of trigger {trigger} on event nid {nid} back {span(by)} in "
        "~/.contenox/local.db (event_firings.updated_at) — the hours a clock would pass; every "
        "contenox process of this home is gone"
    )


def move_claim_back(home: Path, checkpoint: str, by: timedelta) -> str:
    """Move the resume claim on checkpoint ``checkpoint`` back ``by`` (its ``claimed_at``).

    A run suspended on an ask is checkpointed under the ask's id: the row of table
    ``chain_checkpoints`` with that id. A resumer claims it by stamping
    ``claimed_at`` (Go's ``time.Time.String()``); "a claim older than ten minutes" is
    that stamp's distance from now, so only it moves. Returns the transcript's
    sentence; raises :class:`ClockError` before writing when the row is missing or
    holds no claim.
    """
    db = local_db(home)
    where = f"table chain_checkpoints, id {checkpoint!r} in {db}"
    if not db.is_file():
        raise ClockError(
            f"no contenox store at {db}: let a resumer claim the checkpoint in this home "
            "before moving its clock"
        )
    with closing(sqlite3.connect(db)) as conn, conn:
        rows = conn.execute(
            "SELECT claimed_at FROM chain_checkpoints WHERE id = ?", (checkpoint,)
        ).fetchall()
        if len(rows) != 1:
            raise ClockError(
                f"{where}: expected one checkpoint, found {len(rows)}; pass the id of the ask "
                "the run was suspended on (or contenox no longer keeps checkpoints there — read "
                "the store and update harness/clock.py)"
            )
        [(claimed,)] = rows
        if claimed is None:
            raise ClockError(
                f"{where}: the checkpoint holds no claim (claimed_at is NULL); a resumer must "
                "have claimed it (`approvals respond` killed mid-resume) before its claim can age"
            )
        moved = _parse_go(str(claimed), f"{where}, field claimed_at") - by
        conn.execute(
            "UPDATE chain_checkpoints SET claimed_at = ? WHERE id = ?",
            (moved.strftime(_GO_STAMP), checkpoint),
        )
    return (
        f"moved the resume claim on checkpoint {checkpoint} back {span(by)} in "
        "~/.contenox/local.db (chain_checkpoints.claimed_at) — the minutes a clock would pass; "
        "every contenox process of this home is gone"
    )


_PARTITION = "event_log_"


def move_event_log_back(home: Path, days: int) -> str:
    """Move every day-partition of the event log back ``days`` whole days.

    The log is one table per UTC day (``event_log_YYYYMMDD``), registered in
    ``event_partitions``; prune compares a partition's day with the window, and
    ``events list`` shows each event's ``time``. Days passing would leave the events
    where they are and move *now*; moving each partition's day, its table's name
    (and its two indexes'), and its events' times back instead is the same distance.
    Every partition moves the same distance, oldest first, so a day is vacated before
    a later partition moves onto it. Returns the transcript's sentence; raises
    :class:`ClockError` before writing when there is no partition or one is malformed.
    """
    if isinstance(days, bool) or not isinstance(days, int) or days < 1:
        raise ClockError(f"move the event log back a whole number of days (1, 2, …), got {days!r}")
    db = local_db(home)
    if not db.is_file():
        raise ClockError(
            f"no contenox store at {db}: let the case append events (a mission run with "
            "opt-in-beta) in this home before moving the log's clock"
        )
    with closing(sqlite3.connect(db)) as conn, conn:
        parts = conn.execute(
            "SELECT period, table_name FROM event_partitions ORDER BY period"
        ).fetchall()
        if not parts:
            raise ClockError(
                f"table event_partitions in {db} lists no partition: append events first "
                "(`contenox events list` shows them)"
            )
        moves: list[tuple[str, str, str]] = []
        for period, table in parts:
            if table != _PARTITION + str(period) or not str(period).isdigit():
                raise ClockError(
                    f"event_partitions in {db} registers {period!r} as {table!r}, not "
                    f"{_PARTITION}<YYYYMMDD>; contenox changed how it names partitions — read "
                    "the store and update harness/clock.py"
                )
            to = (datetime.strptime(str(period), "%Y%m%d") - timedelta(days=days)).strftime(
                "%Y%m%d"
            )
            moves.append((str(period), to, str(table)))
        for period, to, table in moves:  # oldest first: a day is vacated before it is reused
            new = _PARTITION + to
            rows = conn.execute(f"SELECT nid, time FROM {table}").fetchall()
            for nid, stamp in rows:
                moved = _parse_go(str(stamp), f"table {table}, nid {nid}, field time")
                conn.execute(
                    f"UPDATE {table} SET time = ? WHERE nid = ?",
                    ((moved - timedelta(days=days)).strftime(_GO_STAMP), nid),
                )
            for suffix in ("ws_nid", "ws_type"):
                conn.execute(f"DROP INDEX IF EXISTS idx_{table}_{suffix}")
            conn.execute(f"ALTER TABLE {table} RENAME TO {new}")
            conn.execute(f"CREATE INDEX idx_{new}_ws_nid ON {new}(workspace_id, nid)")
            conn.execute(f"CREATE INDEX idx_{new}_ws_type ON {new}(workspace_id, type)")
            conn.execute(
                "UPDATE event_partitions SET period = ?, table_name = ? WHERE period = ?",
                (to, new, period),
            )
    word = "day" if days == 1 else "days"
    return (
        f"moved the event log back {days} {word} in ~/.contenox/local.db (event_partitions, "
        f"each {_PARTITION}<day> table and its events' time) — the days a clock would pass; "
        "every contenox process of this home is gone"
    )
