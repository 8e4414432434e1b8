"""harness/agents_store.py and harness/wall_agent.py, without contenox.

The store is a throwaway SQLite file shaped like v1.0.0's agents table; the
probe agent is driven over its stdio the way contenox drives it, unconfined
(the wall is contenox's; here the probes simply succeed or fail as the OS says).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from harness.agents_store import (
    AgentsStoreError,
    register_external_agent,
    wall_agent_argv,
)

SCHEMA = (
    "CREATE TABLE agents (id VARCHAR(255) PRIMARY KEY, name VARCHAR(255) NOT NULL UNIQUE, "
    "kind VARCHAR(50) NOT NULL, enabled BOOLEAN NOT NULL DEFAULT 1, config_json TEXT NOT NULL "
    "DEFAULT '{}', harness_id VARCHAR(255), workspace_id VARCHAR(255), source VARCHAR(50), "
    "registry_id VARCHAR(255), registry_version VARCHAR(50), created_at TIMESTAMP NOT NULL, "
    "updated_at TIMESTAMP NOT NULL)"
)


def _home(tmp_path: Path, schema: str | None = SCHEMA) -> Path:
    home = tmp_path / "home"
    (home / ".contenox").mkdir(parents=True)
    with closing(sqlite3.connect(home / ".contenox" / "local.db")) as db, db:
        db.execute("CREATE TABLE kv (key TEXT)")
        if schema is not None:
            db.execute(schema)
    return home


def _rows(home: Path) -> list[tuple[Any, ...]]:
    with closing(sqlite3.connect(home / ".contenox" / "local.db")) as db:
        return db.execute(
            "SELECT name, kind, enabled, config_json, source, created_at, updated_at FROM agents"
        ).fetchall()


def test_the_row_is_an_enabled_external_acp_stdio_agent_with_its_argv(tmp_path: Path) -> None:
    home = _home(tmp_path)
    said = register_external_agent(
        home, "walled", ["/usr/bin/prog", "--flag"], env={"A": "1"}, cwd=Path("/w")
    )
    assert said == "registered external_acp agent 'walled' (/usr/bin/prog --flag) in the store"
    [(name, kind, enabled, config, source, created, updated)] = _rows(home)
    assert (name, kind, enabled, source) == ("walled", "external_acp", 1, "manual")
    assert json.loads(config) == {
        "transport": "stdio",
        "command": "/usr/bin/prog",
        "args": ["--flag"],
        "cwd": "/w",
        "env": {"A": "1"},
    }
    # Go's time.Time.String(), which contenox's driver reads back.
    assert created == updated and created.endswith(" +0000 UTC"), created


def test_an_agent_without_cwd_leaves_it_to_contenox(tmp_path: Path) -> None:
    home = _home(tmp_path)
    register_external_agent(home, "walled", ["/usr/bin/prog"])
    [row] = _rows(home)
    assert json.loads(row[3]) == {"transport": "stdio", "command": "/usr/bin/prog"}


def test_an_inline_program_is_named_not_quoted(tmp_path: Path) -> None:
    said = register_external_agent(_home(tmp_path), "walled", ["/usr/bin/python3", "-c", "x=1"])
    assert (
        said == "registered external_acp agent 'walled' (python3 -c <inline program>) in the store"
    )


def test_a_home_without_a_store_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentsStoreError, match="run `contenox init`"):
        register_external_agent(tmp_path, "walled", ["/usr/bin/prog"])


def test_a_store_without_the_agents_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentsStoreError, match="has no agents table"):
        register_external_agent(_home(tmp_path, schema=None), "walled", ["/usr/bin/prog"])


def test_an_agents_table_of_another_shape_is_refused_before_writing(tmp_path: Path) -> None:
    home = _home(tmp_path, schema="CREATE TABLE agents (id TEXT, name TEXT, spec TEXT)")
    with pytest.raises(AgentsStoreError, match="lacks kind, enabled, config_json"):
        register_external_agent(home, "walled", ["/usr/bin/prog"])


def test_a_taken_name_is_refused(tmp_path: Path) -> None:
    home = _home(tmp_path)
    register_external_agent(home, "walled", ["/usr/bin/prog"])
    with pytest.raises(AgentsStoreError, match="already holds an agent named 'walled'"):
        register_external_agent(home, "walled", ["/usr/bin/other"])
    assert len(_rows(home)) == 1


def test_an_empty_argv_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AgentsStoreError, match="argv is empty"):
        register_external_agent(_home(tmp_path), "walled", [])


def test_a_missing_interpreter_is_named(tmp_path: Path) -> None:
    with pytest.raises(AgentsStoreError, match="is missing"):
        wall_agent_argv(tmp_path / "python3")


# -- the probe agent, over its stdio -------------------------------------------


def _converse(requests: list[dict[str, Any]], cwd: Path) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run(
        list(wall_agent_argv()),
        input=lines,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=cwd,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines()]


def _prompt(probes: list[dict[str, Any]], cwd: Path) -> list[dict[str, Any]]:
    messages = _converse(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
            {"jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {"cwd": str(cwd)}},
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": "wall-probe-1",
                    "prompt": [{"type": "text", "text": json.dumps(probes)}],
                },
            },
        ],
        cwd,
    )
    init, new, update, end = messages
    assert init["result"]["protocolVersion"] == 1
    assert new["result"] == {"sessionId": "wall-probe-1"}
    assert update["method"] == "session/update"
    assert end == {"jsonrpc": "2.0", "id": 3, "result": {"stopReason": "end_turn"}}
    chunk = update["params"]["update"]
    assert chunk["sessionUpdate"] == "agent_message_chunk"
    results: list[dict[str, Any]] = json.loads(chunk["content"]["text"])
    return results


def test_the_probe_agent_reports_what_each_probe_saw(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("hi\n", encoding="utf-8")
    results = _prompt(
        [
            {"probe": "read", "path": str(tmp_path / "in.txt")},
            {"probe": "read", "path": str(tmp_path / "missing.txt")},
            {"probe": "write", "path": str(tmp_path / "out.txt")},
            {"probe": "list", "path": str(tmp_path)},
            {"probe": "exec", "argv": ["/bin/echo", "ran"]},
            {"probe": "env", "names": ["PATH", "SURELY_UNSET_VAR"]},
            {"probe": "connect", "host": "127.0.0.1", "port": 1},
            {"probe": "teleport"},
        ],
        tmp_path,
    )
    read, missing, write, listing, ran, env, connect, unknown = results
    assert read == {"probe": "read", "ok": True, "detail": "hi\n"}
    assert missing == {"probe": "read", "ok": False, "detail": "ENOENT"}
    assert write == {"probe": "write", "ok": True, "detail": "written"}
    assert (tmp_path / "out.txt").exists()
    assert listing == {"probe": "list", "ok": True, "detail": "in.txt out.txt"}
    assert ran == {"probe": "exec", "ok": True, "detail": "ran"}
    seen = json.loads(env["detail"])
    assert seen["SURELY_UNSET_VAR"] is None and seen["PATH"]
    assert connect == {"probe": "connect", "ok": False, "detail": "ECONNREFUSED"}
    assert unknown == {"probe": "teleport", "ok": False, "detail": "unknown probe 'teleport'"}


def test_a_prompt_that_is_not_a_probe_list_is_answered_with_the_error(tmp_path: Path) -> None:
    messages = _converse(
        [
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {"sessionId": "s", "prompt": [{"type": "text", "text": "hello"}]},
            },
            {"jsonrpc": "2.0", "id": 4, "method": "session/load", "params": {}},
        ],
        tmp_path,
    )
    update, end, unknown = messages
    reply = json.loads(update["params"]["update"]["content"]["text"])
    assert "not a JSON list of probes" in reply["error"]
    assert end["result"] == {"stopReason": "end_turn"}
    assert unknown["error"]["code"] == -32601


def test_the_probe_agent_tells_present_from_absent_and_its_uid(tmp_path: Path) -> None:
    results = _prompt(
        [
            {"probe": "exists", "path": str(tmp_path)},
            {"probe": "exists", "path": str(tmp_path / "nothing")},
            {"probe": "uid", "expect": os.getuid()},
            {"probe": "uid", "expect": os.getuid() + 1},
        ],
        tmp_path,
    )
    assert [r["detail"] for r in results] == ["present", "absent", "same", "differs"]


def test_tool_read_asks_the_client_and_waits_for_its_answer(tmp_path: Path) -> None:
    probes = [{"probe": "tool_read", "path": "/x"}, {"probe": "tool_read", "path": "/y"}]
    messages = _converse(
        [
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "session/prompt",
                "params": {
                    "sessionId": "wall-probe-1",
                    "prompt": [{"type": "text", "text": json.dumps(probes)}],
                },
            },
            # The client's answers, in the order the agent asks.
            {"jsonrpc": "2.0", "id": "probe-1", "result": {"content": "x's text"}},
            {"jsonrpc": "2.0", "id": "probe-2", "error": {"code": -32002, "message": "no"}},
        ],
        tmp_path,
    )
    ask_x, ask_y, update, end = messages
    assert ask_x == {
        "jsonrpc": "2.0",
        "id": "probe-1",
        "method": "fs/read_text_file",
        "params": {"sessionId": "wall-probe-1", "path": "/x"},
    }
    assert ask_y["params"]["path"] == "/y"
    x, y = json.loads(update["params"]["update"]["content"]["text"])
    assert x == {"probe": "tool_read", "ok": True, "detail": "x's text"}
    assert y["ok"] is False and "'message': 'no'" in y["detail"]
    assert end["result"] == {"stopReason": "end_turn"}
