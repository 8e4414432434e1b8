"""The sandbox wall around a foreign ACP agent, probed from inside it.

guide/confinement/sandbox.md and why.md: contenox confines an ``external_acp``
agent — code it did not write — behind a wall: writes only in its workspace,
reads only the workspace plus a few auth/config directories, a scrubbed
environment, the network open unless hosts are named (or
``CONTENOX_SANDBOX_NETWORK_WALL=1``), and carve-outs from
``~/.contenox/sandbox-carveouts.json``.

v1.0.0 has no command that registers such an agent ("external_acp agents are
internal-only"), but it reads its registry from the store, and an editor
reaches a registered agent by name: ``session/new`` with
``_meta: {"contenox.agent": NAME}`` (the name is offered in the session's
``agent`` config option). So each case, after ``contenox init``, writes one
agent row into the scratch home's store (:mod:`harness.agents_store`, the way
:mod:`harness.clock` writes time) — the agent is :mod:`harness.wall_agent`, a
tiny ACP program that runs the probes its prompt lists and replies with what
each saw. Everything asserted comes back over ACP from that reply, or from
the files on disk and contenox's own output.

Every refusal has a control beside it where only the gate changes (a
carve-out hole, the agent's own ``env``, no network entry) and the same
probe succeeds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from harness import Defect, Instance, Script, defect, open_acp, route
from harness.acp import AcpClient
from harness.agents_store import register_external_agent, wall_agent_argv

AGENT = "walled"

# Where the probes reach from the workspace: a sibling of it under the
# scratch root (outside the workspace, outside every grant).
_ELSEWHERE = "elsewhere"


def _walled(
    instance: Instance,
    *,
    carveouts: Mapping[str, Any] | str | None = None,
    env: Mapping[str, str] | None = None,
    agent_env: Mapping[str, str] | None = None,
) -> AcpClient:
    """``contenox acp`` with the probe agent registered and a session on it.

    ``carveouts`` is written to ``~/.contenox/sandbox-carveouts.json`` (text
    as given, a mapping as JSON); ``env`` is set on contenox, ``agent_env``
    in the agent's registered config.
    """
    instance.init()
    # The session needs a default model to open, though the foreign agent,
    # not a chain, answers every prompt: the dialog is never read.
    instance.use_script(Script(turns=[route(), "Unused: the walled agent answers."]))
    instance.recorder.note(
        register_external_agent(instance.home, AGENT, wall_agent_argv(), env=agent_env)
    )
    if carveouts is not None:
        text = carveouts if isinstance(carveouts, str) else json.dumps(carveouts, indent=2)
        (instance.home / ".contenox" / "sandbox-carveouts.json").write_text(text, encoding="utf-8")
        instance.recorder.note(f"~/.contenox/sandbox-carveouts.json:\n{text}")
    acp = open_acp(instance, handshake=False, env=env)
    acp.initialize()
    acp.new_session(meta={"contenox.agent": AGENT})
    return acp


def _probe(acp: AcpClient, *probes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Prompt the walled agent with ``probes``; return what each saw (its reply, parsed)."""
    turn = acp.prompt(json.dumps(list(probes)))
    assert turn.stop_reason == "end_turn", turn
    try:
        results: list[dict[str, Any]] = json.loads(turn.text)
    except ValueError:
        raise AssertionError(
            f"the walled agent's reply is not its probe report: {turn.text!r}"
        ) from None
    assert [r["probe"] for r in results] == [p["probe"] for p in probes], results
    return results


def _outside(instance: Instance, name: str, content: str = "outside the workspace\n") -> Path:
    place = instance.root / _ELSEWHERE
    place.mkdir(exist_ok=True)
    path = place / name
    path.write_text(content, encoding="utf-8")
    return path


def _hole(path: Path | str, mode: str) -> dict[str, Any]:
    return {"filesystem": [{"path": str(path), "mode": mode, "needs": "the case's control"}]}


# -- registration ----------------------------------------------------------------


def test_no_agent_subcommand_registers_a_foreign_agent(instance: Instance) -> None:
    # The page says registration is not exposed; the store row above is the
    # suite's stand-in for it. The day a verb for it ships, this goes red.
    shown = instance.must("agent", "--help").stdout
    verbs = re.findall(r"^  (\w+) {2,}", shown.split("Available Commands:", 1)[1], re.MULTILINE)
    assert verbs == ["disable", "enable", "list", "remove", "show"], shown


# -- filesystem: writes ------------------------------------------------------


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_writes_inside_its_workspace_but_not_outside_it(
    instance: Instance,
) -> None:
    (instance.root / _ELSEWHERE).mkdir()
    escaped = instance.root / _ELSEWHERE / "escaped.txt"
    with _walled(instance) as acp:
        inside, outside = _probe(
            acp,
            {"probe": "write", "path": str(instance.work / "inside.txt")},
            {"probe": "write", "path": str(escaped)},
        )
    assert inside == {"probe": "write", "ok": True, "detail": "written"}
    assert (instance.work / "inside.txt").read_text(encoding="utf-8").startswith("written by")
    assert outside == {"probe": "write", "ok": False, "detail": "EACCES"}
    assert not escaped.exists()


# function: registers the agent in the store and writes the carve-out file
def test_an_rw_carve_out_lets_the_walled_agent_write_outside_its_workspace(
    instance: Instance,
) -> None:
    place = instance.root / _ELSEWHERE
    place.mkdir()
    escaped = place / "escaped.txt"
    # Control of the case above: the same write, with only a rw hole added.
    with _walled(instance, carveouts=_hole(place, "rw")) as acp:
        [outside] = _probe(acp, {"probe": "write", "path": str(escaped)})
    assert outside == {"probe": "write", "ok": True, "detail": "written"}
    assert escaped.read_text(encoding="utf-8").startswith("written by")


# -- filesystem: reads -------------------------------------------------------


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_reads_neither_a_file_outside_its_workspace_nor_ssh_keys(
    instance: Instance,
) -> None:
    secret = _outside(instance, "notes.txt")
    ssh = instance.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n", encoding="utf-8")
    instance.write("readme.txt", "inside the workspace\n")
    with _walled(instance) as acp:
        inside, outside, key = _probe(
            acp,
            {"probe": "read", "path": str(instance.work / "readme.txt")},
            {"probe": "read", "path": str(secret)},
            {"probe": "read", "path": "~/.ssh/id_ed25519"},
        )
    assert inside == {"probe": "read", "ok": True, "detail": "inside the workspace\n"}
    assert outside == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert key == {"probe": "read", "ok": False, "detail": "EACCES"}


# function: registers the agent in the store and writes the carve-out file
def test_an_ro_carve_out_lets_the_walled_agent_read_there_and_still_not_write(
    instance: Instance,
) -> None:
    secret = _outside(instance, "notes.txt")
    # Control of the case above: the same read, with only a ro hole added.
    with _walled(instance, carveouts=_hole(secret.parent, "ro")) as acp:
        read, write = _probe(
            acp,
            {"probe": "read", "path": str(secret)},
            {"probe": "write", "path": str(secret.parent / "new.txt")},
        )
    assert read == {"probe": "read", "ok": True, "detail": "outside the workspace\n"}
    assert write == {"probe": "write", "ok": False, "detail": "EACCES"}
    assert not (secret.parent / "new.txt").exists()


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_reads_its_claude_codex_and_goose_config_but_cannot_write_there(
    instance: Instance,
) -> None:
    dirs = [".claude", ".codex", ".config/goose"]
    for rel in dirs:
        (instance.home / rel).mkdir(parents=True)
        (instance.home / rel / "settings.json").write_text('{"who": "me"}\n', encoding="utf-8")
    probes: list[dict[str, Any]] = []
    for rel in dirs:
        probes.append({"probe": "read", "path": f"~/{rel}/settings.json"})
        probes.append({"probe": "write", "path": f"~/{rel}/planted.json"})
    with _walled(instance) as acp:
        results = _probe(acp, *probes)
    for rel, (read, write) in zip(dirs, zip(results[::2], results[1::2], strict=True), strict=True):
        assert read == {"probe": "read", "ok": True, "detail": '{"who": "me"}\n'}, rel
        assert write == {"probe": "write", "ok": False, "detail": "EACCES"}, rel
        assert not (instance.home / rel / "planted.json").exists()


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_cannot_reach_contenox_s_own_state_nor_its_carve_out_list(
    instance: Instance,
) -> None:
    control = instance.home / ".contenox"
    with _walled(instance, carveouts={"filesystem": [], "network": []}) as acp:
        policy, carveouts, planted = _probe(
            acp,
            {"probe": "read", "path": "~/.contenox/agents.toml"},
            {"probe": "read", "path": "~/.contenox/sandbox-carveouts.json"},
            {
                "probe": "write",
                "path": "~/.contenox/sandbox-carveouts.json",
                "text": '{"filesystem": [{"path": "/", "mode": "rw", "needs": "me"}]}',
            },
        )
    assert policy == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert carveouts == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert planted == {"probe": "write", "ok": False, "detail": "EACCES"}
    assert json.loads((control / "sandbox-carveouts.json").read_text(encoding="utf-8")) == {
        "filesystem": [],
        "network": [],
    }


# -- exec ----------------------------------------------------------------------

_PROGRAM = "#!/bin/sh\necho ran\n"


def _program(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "tool.sh"
    path.write_text(_PROGRAM, encoding="utf-8")
    path.chmod(0o755)
    return path


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_runs_system_programs_but_not_one_outside_its_reach(
    instance: Instance,
) -> None:
    planted = _program(instance.root / _ELSEWHERE)
    with _walled(instance) as acp:
        system, outside = _probe(
            acp,
            {"probe": "exec", "argv": ["/bin/echo", "ran"]},
            {"probe": "exec", "argv": [str(planted)]},
        )
    assert system == {"probe": "exec", "ok": True, "detail": "ran"}
    assert outside == {"probe": "exec", "ok": False, "detail": "EACCES"}


# function: registers the agent in the store and writes the carve-out file
def test_a_program_under_a_carve_out_runs_in_the_wall(instance: Instance) -> None:
    planted = _program(instance.root / _ELSEWHERE)
    # Control of the case above: the same program, with only a ro hole over it.
    with _walled(instance, carveouts=_hole(planted.parent, "ro")) as acp:
        [outside] = _probe(acp, {"probe": "exec", "argv": [str(planted)]})
    assert outside == {"probe": "exec", "ok": True, "detail": "ran"}


# -- environment ---------------------------------------------------------------

_INHERITED = {
    "MY_API_TOKEN": "tok-inherited",
    "DATABASE_URL": "postgres://me:pw@db/prod",
    "PROJECT_MOOD": "plain, not a secret",
}


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_walled_agent_inherits_no_credential_nor_any_variable_outside_the_minimal_set(
    instance: Instance,
) -> None:
    names = ["HOME", "PATH", *_INHERITED]
    with _walled(instance, env=_INHERITED) as acp:
        [seen] = _probe(acp, {"probe": "env", "names": names})
    values = json.loads(seen["detail"])
    assert {k: values[k] for k in _INHERITED} == dict.fromkeys(_INHERITED), values
    # HOME is set (the operator's, the wall's reads of it limited to the grants above).
    assert values["HOME"] == str(instance.home), values
    assert values["PATH"], values


# function: registers the agent in the store (no step makes a foreign agent)
def test_a_variable_the_agent_s_own_config_sets_does_reach_it(instance: Instance) -> None:
    # Control of the case above: the same names set in the agent's own config.
    with _walled(instance, env=_INHERITED, agent_env=_INHERITED) as acp:
        [seen] = _probe(acp, {"probe": "env", "names": list(_INHERITED)})
    assert json.loads(seen["detail"]) == _INHERITED


# -- network -------------------------------------------------------------------


@contextmanager
def _loopback_server(instance: Instance) -> Iterator[tuple[int, list[str]]]:
    """A TCP server on 127.0.0.1 answering each connection ``hello``; yields (port, peers).

    Its port is ``[PORT]`` in the transcript (the kernel picks it).
    """
    server = socket.create_server(("127.0.0.1", 0))
    instance.recorder.redact(rf"\b{server.getsockname()[1]}\b", "[PORT]")
    server.settimeout(0.2)
    peers: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                peers.append(peer[0])
                conn.settimeout(5)
                conn.sendall(b"hello")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], peers
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


# function: registers the agent in the store and runs a loopback server
def test_with_no_network_entry_a_walled_agent_reaches_the_network(instance: Instance) -> None:
    with _loopback_server(instance) as (port, peers), _walled(instance) as acp:
        [reached] = _probe(acp, {"probe": "connect", "host": "127.0.0.1", "port": port})
    assert reached == {"probe": "connect", "ok": True, "detail": "hello"}
    assert peers == ["127.0.0.1"]


_OTHER_HOST = {"network": [{"host": "api.anthropic.com", "needs": "the agent's model endpoint"}]}


# function: registers the agent in the store and runs a loopback server
def test_naming_one_host_turns_the_network_wall_on_and_refuses_every_other(
    instance: Instance,
) -> None:
    # The case above is its control: the same connection, no network entry.
    with (
        _loopback_server(instance) as (port, peers),
        _walled(instance, carveouts=_OTHER_HOST) as acp,
    ):
        [refused] = _probe(acp, {"probe": "connect", "host": "127.0.0.1", "port": port})
    assert refused["ok"] is False, refused
    assert peers == []


# function: registers the agent in the store and runs a loopback server
def test_the_network_wall_opt_in_builds_the_wall_with_no_route(instance: Instance) -> None:
    # The no-network-entry case is its control: only the variable differs.
    with (
        _loopback_server(instance) as (port, peers),
        _walled(instance, env={"CONTENOX_SANDBOX_NETWORK_WALL": "1"}) as acp,
    ):
        [refused] = _probe(acp, {"probe": "connect", "host": "127.0.0.1", "port": port})
    assert refused["ok"] is False, refused
    assert peers == []


# -- the carve-out file --------------------------------------------------------


def _refused_session(instance: Instance, carveouts: str) -> tuple[str, list[str]]:
    """The session/new error with ``carveouts`` in place, and the agent processes left."""
    instance.init()
    instance.use_script(Script(turns=[route(), "Unused: the walled agent answers."]))
    instance.recorder.note(register_external_agent(instance.home, AGENT, wall_agent_argv()))
    (instance.home / ".contenox" / "sandbox-carveouts.json").write_text(carveouts, encoding="utf-8")
    instance.recorder.note(f"~/.contenox/sandbox-carveouts.json:\n{carveouts}")
    with open_acp(instance, handshake=False) as acp:
        acp.initialize()
        response = acp.request(
            "session/new",
            {"cwd": str(instance.work), "mcpServers": [], "_meta": {"contenox.agent": AGENT}},
        )
        error = response.get("error")
        assert isinstance(error, Mapping), f"session/new was accepted: {response}"
        message = str(error.get("message"))
        instance.recorder.note(f"session/new refused: {message}")
        children = _probe_children(acp)
    return message, children


def _probe_children(acp: AcpClient) -> list[str]:
    """The command lines of contenox's children still running (the spawned agent, if any)."""
    pid = acp.process.pid
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text(encoding="utf-8").split()
        for child in children:
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            found.append(cmdline.replace(b"\0", b" ").decode("utf-8", "replace")[:60])
    return found


@pytest.mark.parametrize(
    ("carveouts", "says"),
    [
        pytest.param(
            '{"filesystem": [], "network": [], "allow_all": true}',
            'unknown field "allow_all"',
            id="an_unknown_field",
        ),
        pytest.param(
            '{"network": [{"host": "api.anthropic.com"}]}',
            "needs is required",
            id="a_network_hole_without_needs",
        ),
        pytest.param(
            '{"network": [{"needs": "the agent\'s model endpoint"}]}',
            "host is required",
            id="a_network_hole_without_host",
        ),
        pytest.param(
            '{"filesystem": [{"path": "/srv", "mode": "ro"}]}',
            "needs is required",
            id="a_filesystem_hole_without_needs",
        ),
    ],
)
# function: registers the agent in the store and writes the carve-out file
def test_a_carve_out_file_that_does_not_validate_keeps_the_agent_from_starting(
    instance: Instance, carveouts: str, says: str
) -> None:
    # Controls: every case above starts the agent with a valid file (or none).
    message, children = _refused_session(instance, carveouts)
    assert "sandbox-carveouts.json" in message, message
    assert says in message, message
    assert children == [], children


# function: registers the agent in the store and writes the carve-out file
def test_an_empty_carve_out_file_means_the_fence_only_with_the_network_open(
    instance: Instance,
) -> None:
    secret = _outside(instance, "notes.txt")
    with _loopback_server(instance) as (port, peers), _walled(instance, carveouts="") as acp:
        read, reached = _probe(
            acp,
            {"probe": "read", "path": str(secret)},
            {"probe": "connect", "host": "127.0.0.1", "port": port},
        )
    assert read == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert reached == {"probe": "connect", "ok": True, "detail": "hello"}
    assert peers == ["127.0.0.1"]


# -- what the wall keeps for itself --------------------------------------------


# function: registers the agent in the store and writes the carve-out file
@defect(
    Defect(
        title="a carve-out naming ~/.contenox lets the walled agent read the policy governing it",
        second_reading=(
            "2026-12-04, a second reader with only this text and the docs, in fresh scratch "
            "homes (its own sqlite3 script for the agents row): real. Saw: with the ro carve-out "
            "the agent read sandbox-carveouts.json, listed ~/.contenox (.generated agents "
            "agents.toml local.db … sandbox-carveouts.json system) and ran head on agents.toml; "
            "its write was EACCES. With mode rw it rewrote its own carve-out file to "
            '{"path": "/", "mode": "rw"} and, on the next session in that home, read '
            "~/.ssh/id_ed25519 and wrote outside the workspace. Without the carve-out both reads "
            "are EACCES. Note: sandbox.md:60 allows holes in general but no page lets one cover "
            '~/.contenox; why.md:60 "the agent can never punch its own hole" is broken too.'
        ),
        reproduce=(
            "H=$(mktemp -d); mkdir $H/home $H/work; cd $H/work; HOME=$H/home contenox init; "
            "a scripted-test default backend (`backend add s --type scripted-test --script "
            "d.json`, `config set default-provider scripted-test`, `config set default-model "
            "<its model>`); insert into $H/home/.contenox/local.db: INSERT INTO agents (id, name, "
            "kind, enabled, config_json, source, created_at, updated_at) VALUES (<uuid>, 'walled', "
            "'external_acp', "
            '1, \'{"transport":"stdio","command":"/usr/bin/python3","args":["-c", '
            "<harness/wall_agent.py>]}', 'manual', <now>, <now>); write "
            '$H/home/.contenox/sandbox-carveouts.json = {"filesystem": [{"path": "~/.contenox", '
            '"mode": "ro", "needs": "..."}]}; `contenox acp` in $H/work, an ACP client: '
            'initialize, session/new {cwd: $H/work, _meta: {"contenox.agent": "walled"}}, '
            'session/prompt [{"probe": "read", "path": "~/.contenox/agents.toml"}, '
            '{"probe": "list", "path": "~/.contenox"}]: the agent replies with agents.toml\'s '
            "text and the listing '.generated agents agents.toml local.db … sandbox-carveouts.json'"
        ),
        promised=(
            'guide/confinement/sandbox.md:30 "`~/.contenox` is never carved out, so an agent can '
            'never reach the policy that governs it"'
        ),
        observed=(
            "the carve-out is applied as written: the walled agent reads ~/.contenox/agents.toml "
            "and lists ~/.contenox (local.db, sandbox-carveouts.json); with mode rw it could "
            "rewrite its own carve-out list. Without the carve-out both reads are EACCES "
            "(test_a_walled_agent_cannot_reach_contenox_s_own_state_nor_its_carve_out_list)"
        ),
        bears_on=(
            'guide/confinement/sandbox.md:20 "Everything else — `~/.ssh`, `~/.aws`, `~/.npmrc`, '
            '`~/.contenox`, the rest of the disk — is unreachable."',
            'guide/confinement/why.md:60 "the carve-out list itself lives where the agent cannot '
            'reach it, so the agent can never punch its own hole."',
            'guide/confinement/sandbox.md:60 "`filesystem` works the same way: add read '
            '(`"mode":"ro"`) or write (`"mode":"rw"`) holes beyond the defaults"',
        ),
    )
)
def test_a_carve_out_naming_contenox_s_own_state_does_not_open_it_to_the_agent(
    instance: Instance,
) -> None:
    hole = {"filesystem": [{"path": "~/.contenox", "mode": "ro", "needs": "the case's probe"}]}
    with _walled(instance, carveouts=hole) as acp:
        policy, listing = _probe(
            acp,
            {"probe": "read", "path": "~/.contenox/agents.toml"},
            {"probe": "list", "path": "~/.contenox"},
        )
    assert policy == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert listing == {"probe": "list", "ok": False, "detail": "EACCES"}


def _contenox_as_agent(instance: Instance, command: Path) -> Mapping[str, Any]:
    """session/new on an external_acp agent that is ``command acp``; the whole response."""
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello from the chain."]))
    instance.recorder.note(register_external_agent(instance.home, AGENT, [str(command), "acp"]))
    acp = open_acp(instance, handshake=False)
    acp.initialize()
    response = acp.request(
        "session/new",
        {"cwd": str(instance.work), "mcpServers": [], "_meta": {"contenox.agent": AGENT}},
    )
    if isinstance(response.get("error"), Mapping):
        instance.recorder.note(f"session/new refused: {response['error']['message']}")  # type: ignore[index]
    if isinstance(response.get("result"), Mapping):
        acp.session_id = str(response["result"]["sessionId"])  # type: ignore[index]
        turn = acp.prompt("hello")
        assert turn.text == "Hello from the chain.", turn
    acp.close()
    return response


# function: registers contenox itself as the agent (no step makes a foreign agent)
def test_contenox_s_own_binary_as_an_agent_runs_outside_the_wall(instance: Instance) -> None:
    # Control of the copy below: the running executable itself, spawned outside
    # the wall, opens the shared store and answers from the chain.
    response = _contenox_as_agent(instance, instance.binary)
    assert "result" in response, response


# function: registers a copy of contenox as the agent
def test_a_copy_of_contenox_is_a_foreign_agent_and_is_walled_off_from_the_runtime_state(
    instance: Instance,
) -> None:
    copy = instance.work / "contenox-copy"
    shutil.copy2(instance.binary, copy)
    response = _contenox_as_agent(instance, copy)
    error = response.get("error")
    # Walled, the copy cannot open ~/.contenox and dies before the handshake.
    assert isinstance(error, Mapping), response
    said = error.get("message")
    assert said == f'agent "{AGENT}" failed its handshake: libacp: connection closed', said


# function: registers the agent in the store (no step makes a foreign agent)
@defect(
    Defect(
        title="a walled agent's refused reads leave no line in contenox's log",
        second_reading=(
            "2026-12-04, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: both reads EACCES; contenox's stderr, 45 level=INFO lines (startup, "
            "acp_session new external_agent:walled, prompt, relay, stop_all), matches none of "
            "refus|denied|sandbox|landlock|notes|ssh; no telemetry.log; in local.db the paths "
            "appear only in the prompt and the agent's reply. No log-level setting in `contenox "
            '--help` or reference/config.md. Note: why.md:53 "every other destination is '
            'refused and logged" bears on the network half (not tried).'
        ),
        reproduce=(
            "as for the ~/.contenox carve-out defect, without the carve-out file: an agent row "
            "'walled' (external_acp, /usr/bin/python3 -c <harness/wall_agent.py>) in "
            "$H/home/.contenox/local.db, `contenox acp` in $H/work, session/new with _meta "
            '{"contenox.agent": "walled"}, session/prompt [{"probe": "read", "path": '
            '"$H/elsewhere/notes.txt"}, {"probe": "read", "path": "~/.ssh/id_ed25519"}]: the agent '
            "replies EACCES for both; contenox's stderr (every level=INFO line and notice) names "
            "neither path nor any refusal, denial or sandbox event"
        ),
        promised=(
            'guide/confinement/why.md:54 "Every refused attempt — an out-of-workspace read, a raw '
            'socket, a reach for `~/.ssh` — is logged rather than swallowed silently."'
        ),
        observed=(
            "both reads refused (EACCES in the agent's reply); contenox's stderr has only its "
            "startup, session and prompt lines: no path, no 'refus'/'denied'/'sandbox'"
        ),
        bears_on=(
            'guide/confinement/sandbox.md:59 "Every host not listed is refused and logged."',
        ),
    )
)
def test_a_walled_agent_s_refused_reads_are_logged_by_contenox(instance: Instance) -> None:
    secret = _outside(instance, "notes.txt")
    ssh = instance.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n", encoding="utf-8")
    with _walled(instance) as acp:
        outside, key = _probe(
            acp,
            {"probe": "read", "path": str(secret)},
            {"probe": "read", "path": str(ssh / "id_ed25519")},
        )
        log = acp.stderr
    assert outside["detail"] == key["detail"] == "EACCES", (outside, key)
    # Any trace counts: the path, or a refusal / sandbox / Landlock event at all.
    for path in (secret, ssh / "id_ed25519"):
        trace = rf"{re.escape(str(path))}|refus|denied|EACCES|landlock|sandbox"
        assert re.search(trace, log, re.IGNORECASE), f"no trace of the refused {path}:\n{log}"


# -- what the wall is made of ----------------------------------------------------


# function: registers the agent in the store (no step makes a foreign agent)
@defect(
    Defect(
        title=(
            "a path the wall blocks is present to the walled agent and denied (Landlock), where "
            "why.md says absent, not mounted"
        ),
        second_reading=(
            "2026-12-04, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: exists -> present, present; read -> EACCES, EACCES. Note: "
            "why.md:51 and environment.md:112 promise absence, but sandbox.md (the mechanism "
            "page, why.md:63) says at :79 the default fence uses no namespaces, so nothing can "
            "be unmounted, and trusted-binaries.md:235 names Landlock, which denies a path that "
            "stays visible: those two describe what the binary does."
        ),
        reproduce=(
            "as for the ~/.contenox carve-out defect, without the carve-out file: an agent row "
            "'walled' (external_acp, /usr/bin/python3 -c <harness/wall_agent.py>) in "
            "$H/home/.contenox/local.db, a file $H/elsewhere/notes.txt and ~/.ssh/id_ed25519, "
            '`contenox acp` in $H/work, session/new with _meta {"contenox.agent": "walled"}, '
            'session/prompt [{"probe": "exists", "path": "$H/elsewhere/notes.txt"}, {"probe": '
            '"exists", "path": "~/.ssh/id_ed25519"}, {"probe": "read", "path": '
            '"$H/elsewhere/notes.txt"}]: the agent replies present, present, EACCES'
        ),
        promised=(
            'guide/confinement/why.md:51 "Blocked paths are absent by construction, not denied '
            'by policy: the rest of the filesystem is not mounted"'
        ),
        observed=(
            "both blocked paths are present to the agent (lstat succeeds) and opening one fails "
            "EACCES: the filesystem is all there and the wall denies access (Landlock), as "
            "sandbox.md:79 and trusted-binaries.md:235 describe"
        ),
        bears_on=(
            'guide/confinement/sandbox.md:79 "The default filesystem/exec/environment fence uses '
            "no namespaces and no kernel-namespace privilege, so it runs on stock Ubuntu "
            'unchanged."',
            'guide/confinement/trusted-binaries.md:235 "| **Kernel-enforced sandbox** (see '
            '[Agent sandbox](/docs/guide/confinement/sandbox/)) | yes (Landlock)"',
            'guide/confinement/environment.md:112 "the filesystem and exec surface of a spawned '
            'foreign agent, made absent by construction"',
            'guide/confinement/sandbox.md:20 "Everything else — `~/.ssh`, `~/.aws`, `~/.npmrc`, '
            '`~/.contenox`, the rest of the disk — is unreachable."',
        ),
        docs_disagree=True,
    )
)
def test_a_path_the_wall_blocks_is_present_to_the_walled_agent_and_denied(
    instance: Instance,
) -> None:
    # What the binary does and the mechanism pages say: the path stays visible
    # (stat succeeds) and every open of it is refused. why.md:51 says absent.
    secret = _outside(instance, "notes.txt")
    ssh = instance.home / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY\n", encoding="utf-8")
    with _walled(instance) as acp:
        outside, key, read = _probe(
            acp,
            {"probe": "exists", "path": str(secret)},
            {"probe": "exists", "path": "~/.ssh/id_ed25519"},
            {"probe": "read", "path": str(secret)},
        )
    assert read == {"probe": "read", "ok": False, "detail": "EACCES"}
    assert outside == {"probe": "exists", "ok": True, "detail": "present"}
    assert key == {"probe": "exists", "ok": True, "detail": "present"}


# function: registers the agent in the store (no step makes a foreign agent)
def test_the_walled_agent_runs_as_the_user_who_runs_contenox(instance: Instance) -> None:
    # The uid is the machine's; the transcript does not keep it.
    instance.recorder.redact(r'"expect": \d+', '"expect": [UID]')
    with _walled(instance) as acp:
        [uid] = _probe(acp, {"probe": "uid", "expect": os.getuid()})
    assert uid == {"probe": "uid", "ok": True, "detail": "same"}


# function: registers the agent in the store (no step makes a foreign agent)
def test_an_agent_that_uses_its_client_s_file_tool_reads_what_the_wall_denies_it(
    instance: Instance,
) -> None:
    # The file lies outside the wall but inside the editor's roots (the
    # scratch root): the tool call goes through contenox to the editor, which
    # reads it; the agent's own open of the same file is refused.
    secret = _outside(instance, "notes.txt")
    with _walled(instance) as acp:
        tool, own = _probe(
            acp,
            {"probe": "tool_read", "path": str(secret)},
            {"probe": "read", "path": str(secret)},
        )
    assert tool == {"probe": "tool_read", "ok": True, "detail": "outside the workspace\n"}
    assert own == {"probe": "read", "ok": False, "detail": "EACCES"}
    asked = [m.method for m in acp.messages if m.direction == "received" and m.is_request]
    assert asked == ["fs/read_text_file"], asked


def _agent_pid(acp: AcpClient) -> int:
    """The pid of the probe agent (``python3 -c …``) among contenox's descendants."""
    todo, seen = [acp.process.pid], []
    while todo:
        pid = todo.pop()
        for task in Path(f"/proc/{pid}/task").glob("*"):
            try:
                todo.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
        seen.append(pid)
    for pid in seen:
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"/usr/bin/python3", b"-c"]:
            return pid
    raise AssertionError(f"no probe agent among contenox's descendants {seen}")


def _confinement(pid: int) -> dict[str, str]:
    """What the kernel says of a process: its user and network namespaces, NoNewPrivs."""
    status = dict(
        line.split(":\t", 1)
        for line in Path(f"/proc/{pid}/status").read_text().splitlines()
        if ":\t" in line
    )
    return {
        "net": os.readlink(f"/proc/{pid}/ns/net"),
        "user": os.readlink(f"/proc/{pid}/ns/user"),
        "no_new_privs": status["NoNewPrivs"].strip(),
    }


@pytest.mark.parametrize(
    ("env", "walled_net"),
    [
        pytest.param(None, False, id="the_default_fence"),
        pytest.param({"CONTENOX_SANDBOX_NETWORK_WALL": "1"}, True, id="the_network_wall"),
    ],
)
# function: registers the agent in the store and reads the agent's /proc entry
def test_only_the_network_wall_puts_the_agent_in_its_own_user_and_network_namespace(
    instance: Instance, env: dict[str, str] | None, walled_net: bool
) -> None:
    # Each parameter is the other's control: only the opt-in differs.
    with _walled(instance, env=env) as acp:
        _probe(acp, {"probe": "exists", "path": "."})
        agent = _confinement(_agent_pid(acp))
        runtime = _confinement(acp.process.pid)
    own = {ns: "its own" if agent[ns] != runtime[ns] else "contenox's" for ns in ("net", "user")}
    instance.recorder.note(
        f"the agent's namespaces: net {own['net']}, user {own['user']}; "
        f"NoNewPrivs {agent['no_new_privs']}"
    )
    # Landlock's precondition. contenox's own is the machine's (a container may set it).
    assert agent["no_new_privs"] == "1", (agent, runtime)
    assert (agent["net"] != runtime["net"]) is walled_net, (agent, runtime)
    assert (agent["user"] != runtime["user"]) is walled_net, (agent, runtime)
