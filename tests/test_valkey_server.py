"""harness.servers.valkey without contenox: start, SET/GET, an ACL user, stop kills the group."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.process import group_alive
from harness.servers.loopback import NotLoopback
from harness.servers.valkey import ValkeyError, serve_valkey, start_valkey


def test_valkey_round_trips_a_key_and_is_gone_with_its_data(tmp_path: Path) -> None:
    data = tmp_path / "vk"
    with serve_valkey(data, password="pw") as vk:
        assert vk.cli("-n", "3", "SET", "k", "v").strip() == "OK"
        assert vk.cli("-n", "3", "GET", "k").strip() == "v"
        assert vk.cli("-n", "0", "EXISTS", "k").strip() == "0"
        vk.add_user("appuser", "secret")
        assert vk.url(user="appuser", password="secret", db=3, namespace="ns") == (
            f"valkey://appuser:secret@127.0.0.1:{vk.port}/3?namespace=ns"
        )
        vk.password = "wrong"
        with pytest.raises(ValkeyError):
            vk.cli("GET", "k")
        pid = vk.process.pid
    assert not group_alive(pid)
    assert not data.exists()


def test_valkey_refuses_a_non_loopback_bind(tmp_path: Path) -> None:
    with pytest.raises(NotLoopback):
        start_valkey(tmp_path / "vk", host="0.0.0.0")
