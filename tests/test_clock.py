"""harness/clock.py on a throwaway SQLite file shaped like contenox's kv table (no contenox)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import timedelta
from pathlib import Path

import pytest

from harness.clock import (
    ClockError,
    local_db,
    move_claim_back,
    move_event_log_back,
    move_firing_back,
    move_mission_back,
    span,
)

MISSION = "da028b41-9878-4afb-a91e-093f34230a85"
RECORD = {
    "id": MISSION,
    "status": "open",
    "lastHeartbeat": "2026-12-03T12:55:45.533432594Z",
    "createdAt": "2026-12-03T12:55:45.46592774Z",
    "updatedAt": "2026-12-03T12:55:45.533432594Z",
}


def _store(home: Path, record: dict[str, str] | None = RECORD) -> Path:
    db = local_db(home)
    db.parent.mkdir(parents=True)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TABLE kv (key VARCHAR(255) NOT NULL, workspace_id VARCHAR(255) NOT NULL "
            "DEFAULT '', value TEXT NOT NULL, created_at TIMESTAMP NOT NULL, updated_at "
            "TIMESTAMP NOT NULL, PRIMARY KEY (key, workspace_id))"
        )
        if record is not None:
            conn.execute(
                "INSERT INTO kv VALUES (?, '', ?, 'c', 'u')",
                (f"fleet:mission:{MISSION}", json.dumps(record).encode()),
            )
    return db


def _read(db: Path) -> tuple[dict[str, str], str, str]:
    with closing(sqlite3.connect(db)) as conn:
        raw, created, updated = conn.execute(
            "SELECT value, created_at, updated_at FROM kv"
        ).fetchone()
    assert isinstance(raw, bytes), "the value keeps the type contenox wrote (a BLOB)"
    return json.loads(raw), created, updated


def test_the_heartbeat_and_creation_time_move_back_and_nothing_else_changes(tmp_path: Path) -> None:
    db = _store(tmp_path)

    sentence = move_mission_back(tmp_path, MISSION, timedelta(hours=6, minutes=1))

    record, created, updated = _read(db)
    assert record["lastHeartbeat"] == "2026-12-03T06:54:45.533432Z"
    assert record["createdAt"] == "2026-12-03T06:54:45.465927Z"
    assert {k: v for k, v in record.items() if k not in ("lastHeartbeat", "createdAt")} == {
        k: v for k, v in RECORD.items() if k not in ("lastHeartbeat", "createdAt")
    }
    assert (created, updated) == ("c", "u")
    assert "back 6 hours 1 minute" in sentence and f"fleet:mission:{MISSION}" in sentence


def test_moves_add_up(tmp_path: Path) -> None:
    db = _store(tmp_path)

    move_mission_back(tmp_path, MISSION, timedelta(hours=6, minutes=1))
    move_mission_back(tmp_path, MISSION, timedelta(hours=18))

    assert _read(db)[0]["lastHeartbeat"] == "2026-12-02T12:54:45.533432Z"


def test_a_home_with_no_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ClockError, match=r"no contenox store at .*local\.db"):
        move_mission_back(tmp_path, MISSION, timedelta(hours=1))


def test_a_missing_mission_row_is_refused_naming_the_table_and_key(tmp_path: Path) -> None:
    _store(tmp_path, record=None)

    with pytest.raises(ClockError, match=rf"table kv, key 'fleet:mission:{MISSION}'.*found 0"):
        move_mission_back(tmp_path, MISSION, timedelta(hours=1))


def test_a_record_without_its_heartbeat_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    record = {k: v for k, v in RECORD.items() if k != "lastHeartbeat"}
    db = _store(tmp_path, record=record)

    with pytest.raises(ClockError, match=r"no lastHeartbeat field .*MISSION_CLOCK_FIELDS"):
        move_mission_back(tmp_path, MISSION, timedelta(hours=1))

    assert _read(db)[0] == record


def test_a_time_contenox_no_longer_writes_as_rfc3339_is_refused(tmp_path: Path) -> None:
    db = _store(tmp_path, record={**RECORD, "createdAt": "yesterday"})

    with pytest.raises(ClockError, match=r"'yesterday', not an RFC 3339 UTC time"):
        move_mission_back(tmp_path, MISSION, timedelta(hours=1))

    assert _read(db)[0]["lastHeartbeat"] == RECORD["lastHeartbeat"]


@pytest.mark.parametrize(
    ("by", "words"),
    [
        (timedelta(hours=6, minutes=1), "6 hours 1 minute"),
        (timedelta(hours=5, minutes=59), "5 hours 59 minutes"),
        (timedelta(days=30), "30 days"),
        (timedelta(seconds=5), "5 seconds"),
        (timedelta(minutes=9, seconds=50), "9 minutes 50 seconds"),
    ],
)
def test_a_move_is_named_in_words(by: timedelta, words: str) -> None:
    assert span(by) == words


def _firings(home: Path, rows: list[tuple[str, int, str]]) -> Path:
    db = local_db(home)
    db.parent.mkdir(parents=True)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TABLE event_firings (workspace_id TEXT NOT NULL DEFAULT '', trigger_name TEXT "
            "NOT NULL, nid INTEGER NOT NULL, status TEXT NOT NULL DEFAULT 'running', error TEXT, "
            "request_id TEXT NOT NULL DEFAULT '', created_at TIMESTAMP NOT NULL, updated_at "
            "TIMESTAMP NOT NULL, PRIMARY KEY (workspace_id, trigger_name, nid))"
        )
        for name, nid, stamp in rows:
            conn.execute(
                "INSERT INTO event_firings VALUES ('ws', ?, ?, 'running', '', 'evt-1', ?, ?)",
                (name, nid, stamp, stamp),
            )
    return db


def test_a_firing_claim_s_updated_at_moves_back_and_only_that_row(tmp_path: Path) -> None:
    stamp = "2026-12-03 13:08:19.896570414 +0000 UTC"
    db = _firings(tmp_path, [("on-status", 2, stamp), ("on-status", 3, stamp)])

    sentence = move_firing_back(tmp_path, "on-status", 2, timedelta(hours=2, minutes=1))

    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute("SELECT nid, created_at, updated_at FROM event_firings").fetchall()
    assert sorted(rows) == [
        (2, stamp, "2026-12-03 11:07:19.896570 +0000 UTC"),
        (3, stamp, stamp),
    ]
    assert "running claim of trigger on-status on event nid 2 back 2 hours 1 minute" in sentence


def test_a_missing_firing_claim_is_refused_naming_the_table(tmp_path: Path) -> None:
    _firings(tmp_path, [])

    with pytest.raises(ClockError, match=r"table event_firings, trigger_name 'x', nid 9.*found 0"):
        move_firing_back(tmp_path, "x", 9, timedelta(hours=2))


CLAIMED = "2026-12-04 19:07:01.582955462 +0000 UTC"


def _checkpoints(home: Path, claims: dict[str, str | None]) -> Path:
    db = local_db(home)
    db.parent.mkdir(parents=True)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TABLE chain_checkpoints (id VARCHAR(255) PRIMARY KEY, schema_version INT NOT "
            "NULL, payload TEXT NOT NULL, session_id VARCHAR(255) NOT NULL DEFAULT '', "
            "request_id VARCHAR(255) NOT NULL DEFAULT '', failure TEXT, claimed_at TIMESTAMP, "
            "created_at TIMESTAMP NOT NULL, updated_at TIMESTAMP NOT NULL)"
        )
        for cid, claimed in claims.items():
            conn.execute(
                "INSERT INTO chain_checkpoints VALUES (?, 1, '{}', 's', 'r', NULL, ?, 'c', 'u')",
                (cid, claimed),
            )
    return db


def test_a_resume_claim_s_claimed_at_moves_back_and_only_that_row(tmp_path: Path) -> None:
    db = _checkpoints(tmp_path, {"ask-1": CLAIMED, "ask-2": CLAIMED})

    sentence = move_claim_back(tmp_path, "ask-1", timedelta(minutes=10, seconds=10))

    with closing(sqlite3.connect(db)) as conn:
        rows = conn.execute(
            "SELECT id, claimed_at, updated_at FROM chain_checkpoints ORDER BY id"
        ).fetchall()
    assert rows == [
        ("ask-1", "2026-12-04 18:56:51.582955 +0000 UTC", "u"),
        ("ask-2", CLAIMED, "u"),
    ]
    assert "back 10 minutes 10 seconds" in sentence and "claimed_at" in sentence


def test_a_checkpoint_nobody_claimed_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    db = _checkpoints(tmp_path, {"ask-1": None})

    with pytest.raises(ClockError, match=r"holds no claim \(claimed_at is NULL\)"):
        move_claim_back(tmp_path, "ask-1", timedelta(minutes=10))

    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT claimed_at FROM chain_checkpoints").fetchone() == (None,)


def test_a_missing_checkpoint_is_refused_naming_the_table(tmp_path: Path) -> None:
    _checkpoints(tmp_path, {})

    with pytest.raises(ClockError, match=r"table chain_checkpoints, id 'ask-9'.*found 0"):
        move_claim_back(tmp_path, "ask-9", timedelta(minutes=10))


def _event_log(home: Path, days: dict[str, list[str]]) -> Path:
    db = local_db(home)
    db.parent.mkdir(parents=True)
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute(
            "CREATE TABLE event_partitions (period TEXT PRIMARY KEY, table_name TEXT NOT NULL, "
            "created_at TIMESTAMP NOT NULL)"
        )
        nid = 0
        for period, stamps in days.items():
            table = f"event_log_{period}"
            conn.execute(
                f"CREATE TABLE {table} (nid INTEGER PRIMARY KEY, workspace_id TEXT NOT NULL "
                "DEFAULT '', type TEXT NOT NULL, source TEXT NOT NULL DEFAULT '', subject TEXT "
                "NOT NULL DEFAULT '', time TIMESTAMP NOT NULL, data TEXT NOT NULL DEFAULT '{}', "
                "hop INT NOT NULL DEFAULT 0)"
            )
            conn.execute(f"CREATE INDEX idx_{table}_ws_nid ON {table}(workspace_id, nid)")
            conn.execute(f"CREATE INDEX idx_{table}_ws_type ON {table}(workspace_id, type)")
            conn.execute("INSERT INTO event_partitions VALUES (?, ?, 'c')", (period, table))
            for stamp in stamps:
                nid += 1
                conn.execute(
                    f"INSERT INTO {table} (nid, workspace_id, type, time) VALUES (?, 'ws', 't', ?)",
                    (nid, stamp),
                )
    return db


def test_every_day_of_the_event_log_moves_back_with_its_table_indexes_and_times(
    tmp_path: Path,
) -> None:
    db = _event_log(
        tmp_path,
        {
            "20261203": ["2026-12-03 23:59:00.5 +0000 UTC"],
            "20261204": ["2026-12-04 19:12:14.483109164 +0000 UTC"],
        },
    )

    sentence = move_event_log_back(tmp_path, 1)

    with closing(sqlite3.connect(db)) as conn:
        parts = conn.execute(
            "SELECT period, table_name FROM event_partitions ORDER BY 1"
        ).fetchall()
        old = conn.execute("SELECT nid, time FROM event_log_20261202").fetchall()
        new = conn.execute("SELECT nid, time FROM event_log_20261203").fetchall()
        indexes = sorted(
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            )
        )
    assert parts == [("20261202", "event_log_20261202"), ("20261203", "event_log_20261203")]
    assert old == [(1, "2026-12-02 23:59:00.500000 +0000 UTC")]
    assert new == [(2, "2026-12-03 19:12:14.483109 +0000 UTC")]
    assert indexes == [
        "idx_event_log_20261202_ws_nid",
        "idx_event_log_20261202_ws_type",
        "idx_event_log_20261203_ws_nid",
        "idx_event_log_20261203_ws_type",
    ]
    assert "back 1 day in" in sentence


def test_an_empty_event_log_is_refused(tmp_path: Path) -> None:
    _event_log(tmp_path, {})

    with pytest.raises(ClockError, match=r"lists no partition: append events first"):
        move_event_log_back(tmp_path, 3)


def test_a_partition_named_otherwise_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    db = _event_log(tmp_path, {"20261204": ["2026-12-04 19:12:14.5 +0000 UTC"]})
    with closing(sqlite3.connect(db)) as conn, conn:
        conn.execute("UPDATE event_partitions SET table_name = 'events_20261204'")

    with pytest.raises(ClockError, match=r"not event_log_<YYYYMMDD>"):
        move_event_log_back(tmp_path, 3)

    with closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT period FROM event_partitions").fetchall() == [("20261204",)]
