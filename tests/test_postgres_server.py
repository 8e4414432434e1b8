"""harness.servers.postgres without contenox: start, a query, stop kills the group."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.process import group_alive
from harness.servers.loopback import NotLoopback
from harness.servers.postgres import serve_postgres, start_postgres


def test_postgres_answers_a_query_in_its_database_and_is_gone_with_its_data(
    tmp_path: Path,
) -> None:
    data = tmp_path / "pg"
    with serve_postgres(data) as pg:
        assert pg.host == "127.0.0.1"
        pg.query("create table t (v text); insert into t values ('hello')")
        assert pg.query("select v from t").strip() == "hello"
        assert pg.url().startswith(f"postgres://contenox:s3cret-pg@127.0.0.1:{pg.port}/")
        pid = pg.process.pid
    assert not pg.process.running
    assert not group_alive(pid)
    assert not data.exists()


def test_postgres_refuses_a_non_loopback_bind(tmp_path: Path) -> None:
    with pytest.raises(NotLoopback):
        start_postgres(tmp_path / "pg", host="0.0.0.0")
    assert not (tmp_path / "pg").exists()
