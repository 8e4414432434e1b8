"""No secret or ambient setting of the parent reaches any child the harness starts.

Each kind of child — a command, a background process, a program under a
terminal, an ACP agent and the terminal it asks its client to run, the
``contenox version`` probe, a Go build — is a program here that records the
environment it got. The parent carries every variable the issue saw leak
(provider keys, tokens, an SSH agent socket, a netrc, a kubeconfig, a
database URL, an editor, a tmux socket, XDG relocations, CONTENOX_*).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import Instance, open_acp, open_terminal, resolve_binary, start_contenox
from harness.environment import SESSION_VAR, child_env, go_env, session_token

# Every name observed reaching contenox (issue 12), and contenox's own overrides.
LEAKED = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "SSH_AUTH_SOCK",
    "GH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "NETRC",
    "KUBECONFIG",
    "DATABASE_URL",
    "EDITOR",
    "TMUX",
    "CONTENOX_DEFAULT_MODEL",
)

FAKE_AGENT = Path(__file__).parent / "peers" / "fake_agent.py"


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in LEAKED:
        monkeypatch.setenv(name, f"secret-value-of-{name}")


@pytest.fixture
def recorder(tmp_path: Path, make_program: Callable[[str, str], Path]) -> Callable[[str], Path]:
    """A program that appends {"argv", "env"} to envs.jsonl; it answers `version` like contenox."""

    def make(name: str, then: str = "") -> Path:
        log = tmp_path / "envs.jsonl"
        return make_program(
            name,
            f"""
            import json, os, sys
            with open({str(log)!r}, "a") as f:
                f.write(json.dumps({{"argv": sys.argv, "env": dict(os.environ)}}) + "\\n")
            if sys.argv[1:] == ["version"]:
                print("contenox version v1.0.0")
            {then}
            """,
        )

    return make


def _recorded(tmp_path: Path) -> list[dict[str, object]]:
    log = tmp_path / "envs.jsonl"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def _leaks(env: object) -> list[str]:
    assert isinstance(env, dict)
    return sorted(name for name in env if name in LEAKED or str(env[name]).startswith("secret-"))


@pytest.mark.usefixtures("secrets")
def test_no_named_secret_reaches_a_command_a_background_process_or_a_terminal(
    tmp_path: Path, recorder: Callable[..., Path]
) -> None:
    inst = Instance.create(tmp_path / "case", binary=recorder("contenox"))
    inst.must("version")
    start_contenox(inst, "background").wait(timeout=30).assert_success()
    term = open_terminal(inst, "terminal")
    term.wait_exit(timeout=30)
    assert inst.close() == []
    seen = _recorded(tmp_path)
    assert [r["argv"][1:] for r in seen] == [["version"], ["background"], ["terminal"]]  # type: ignore[index]
    for record in seen:
        env = record["env"]
        assert _leaks(env) == [], record["argv"]
        assert isinstance(env, dict)
        assert env[SESSION_VAR] == session_token()
        assert env["HOME"] == str(inst.home)


def test_no_child_learns_who_runs_the_suite_where_or_in_what_time_zone(
    tmp_path: Path, recorder: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every kind of child started under an instance: none gets the user, host or zone.
    for name, value in {
        "USER": "alice",
        "LOGNAME": "alice",
        "USERNAME": "alice",
        "HOSTNAME": "alices-laptop",
        "TZ": "Pacific/Chatham",
    }.items():
        monkeypatch.setenv(name, value)
    inst = Instance.create(tmp_path / "case", binary=recorder("contenox"))
    inst.must("version")
    start_contenox(inst, "background").wait(timeout=30).assert_success()
    open_terminal(inst, "terminal").wait_exit(timeout=30)
    assert inst.close() == []
    seen = _recorded(tmp_path)
    assert len(seen) == 3
    for record in seen:
        env = record["env"]
        assert isinstance(env, dict)
        assert env["TZ"] == "UTC", record["argv"]
        assert not {"USER", "LOGNAME", "USERNAME", "HOSTNAME"} & set(env), record["argv"]
        assert "alice" not in json.dumps(env), record["argv"]


@pytest.mark.usefixtures("secrets")
def test_no_named_secret_reaches_an_acp_agent_or_the_terminal_it_asks_for(
    tmp_path: Path, recorder: Callable[..., Path], make_program: Callable[[str, str], Path]
) -> None:
    # The "contenox" records its environment, then is the fake ACP agent.
    agent = recorder(
        "contenox",
        then=f"os.execv(sys.executable, [sys.executable, {str(FAKE_AGENT)!r}])",
    )
    dumper = recorder("terminal-child")
    inst = Instance.create(tmp_path / "case", binary=agent)
    with open_acp(inst) as acp:
        turn = acp.prompt(f"run {json.dumps([str(dumper)])}")
    assert turn.stop_reason == "end_turn", turn
    inst.close()
    seen = _recorded(tmp_path)
    assert [Path(str(r["argv"][0])).name for r in seen] == ["contenox", "terminal-child"]  # type: ignore[index]
    for record in seen:
        assert _leaks(record["env"]) == [], record["argv"]


@pytest.mark.usefixtures("secrets")
def test_the_version_probe_gets_no_secret_and_carries_the_session_marker(
    tmp_path: Path, recorder: Callable[..., Path]
) -> None:
    binary = resolve_binary({"CONTENOX_BIN": str(recorder("contenox"))})
    assert binary.version == "contenox version v1.0.0"
    [record] = _recorded(tmp_path)
    env = record["env"]
    assert _leaks(env) == []
    assert isinstance(env, dict)
    assert env[SESSION_VAR] == session_token()


@pytest.mark.usefixtures("secrets")
def test_a_go_build_gets_what_go_reads_and_no_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOPROXY", "https://proxy.example")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "secret-gcp")
    env = go_env()
    assert env["GOPROXY"] == "https://proxy.example"
    assert env["CGO_ENABLED"] == "0"
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in env
    # Go keeps its caches under XDG_CACHE_HOME when set; the rest stays out.
    assert _leaks({k: v for k, v in env.items() if k != "XDG_CONFIG_HOME"}) == []


def test_a_case_adds_what_it_names_and_nothing_else(tmp_path: Path) -> None:
    base = {
        "PATH": "/bin",
        "LANG": "de_DE.UTF-8",
        "LC_ALL": "C",
        "TZ": "Pacific/Chatham",
        "EDITOR": "vi",
        "USER": "alice",
        "LOGNAME": "alice",
        "HOSTNAME": "alices-laptop",
    }
    env = child_env(tmp_path / "h", tmp_path / "t", base=base, extra={"CONTENOX_OPT": "1"})
    assert env == {
        "PATH": "/bin",
        "LANG": "de_DE.UTF-8",
        "LC_ALL": "C",
        "HOME": str(tmp_path / "h"),
        "TMPDIR": str(tmp_path / "t"),
        "TERM": "dumb",
        # The machine's zone never: a date printed local would differ by machine.
        "TZ": "UTC",
        SESSION_VAR: session_token(),
        "CONTENOX_OPT": "1",
    }


def test_the_session_token_names_this_process_and_its_start(tmp_path: Path) -> None:
    import os

    from harness.environment import process_start

    pid, start, _ = session_token().split(".")
    assert int(pid) == os.getpid()
    assert start == process_start(os.getpid())


def test_only_the_locale_variables_posix_names_reach_contenox_not_an_lc_prefix(
    tmp_path: Path, recorder: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.environment import LOCALE_VARS

    for name in LOCALE_VARS:
        monkeypatch.setenv(name, "C.UTF-8")
    for name in ("LC_ADV_API_KEY", "LC_ANYTHING_API_KEY", "LC_", "LCX_ALL"):
        monkeypatch.setenv(name, f"secret-value-of-{name}")
    inst = Instance.create(tmp_path / "case", binary=recorder("contenox"))
    inst.must("version")
    [record] = _recorded(tmp_path)
    env = record["env"]
    assert isinstance(env, dict)
    assert _leaks(env) == []
    assert {k for k in env if k.startswith("LC")} == LOCALE_VARS - {"LANG"}
    assert env["LANG"] == "C.UTF-8" and env["LC_TELEPHONE"] == "C.UTF-8"
