"""Trusted binaries: an allowlisted shell name runs unattended only while it is the binary declared.

guide/confinement/trusted-binaries.md: a ``command_prefix_allowlist`` allow
pins a name; ``trusted_binaries.dirs`` and ``.hashes`` withdraw that allow
when the name resolves outside the declared directories or to bytes that do
not hash as declared, so the call stops for a person instead.

Every case fires a real ``run`` whose scripted unit calls ``local_shell`` with
``echo``, under a hand-written policy that allowlists ``echo`` and asks about
every other shell line. The verdict is read where a person sees it: a run
that lands with no ask (the allow held), or an ask in ``approvals list`` that
is then denied (the allow was withdrawn). A "planted" ``echo`` — a script
earlier on ``PATH`` that leaves a marker file when it runs — shows which
binary a call actually ran.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from harness import Instance, Script, ToolCall, Turn, defect, mission_finish, open_acp, route
from harness.probes import approvals, await_approval, deny, missions
from harness.process import start_contenox

POLICY = "hitl-policy-pinned.json"

ECHO = Script(
    turns=[
        Turn(
            text="Greeting.",
            tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["pinned hello"]})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

PLANTED = '#!/bin/sh\necho planted > "$PLANT_MARKER"\necho planted\n'


def _real_echo() -> Path:
    found = shutil.which("echo")
    assert found, "this host has no echo on PATH"
    return Path(os.path.realpath(found))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _policy(trusted: Mapping[str, Any] | None) -> dict[str, Any]:
    policy: dict[str, Any] = {
        "version": 1,
        "default_action": "approve",
        "rules": [
            {"tools": "mission", "tool": "*", "action": "allow"},
            {
                "tools": "local_shell",
                "tool": "local_shell",
                "action": "allow",
                "when": [{"key": "command", "op": "command_prefix_allowlist", "value": "echo"}],
            },
            {"tools": "local_shell", "tool": "local_shell", "action": "approve"},
        ],
    }
    if trusted is not None:
        policy["trusted_binaries"] = dict(trusted)
    return policy


def _setup(instance: Instance, trusted: Mapping[str, Any] | None) -> Path:
    instance.init()
    path = instance.home / ".contenox" / POLICY
    path.write_text(json.dumps(_policy(trusted), indent=2) + "\n")
    instance.use_script(ECHO)
    return path


def _plant(instance: Instance) -> dict[str, str]:
    """Put a fake ``echo`` first on PATH; returns the env that makes it win."""
    planted = instance.write("planted/echo", PLANTED)
    planted.chmod(0o755)
    return {
        "PATH": f"{planted.parent}:{os.environ['PATH']}",
        "PLANT_MARKER": str(instance.work / "planted-ran"),
    }


def _run_lands_unattended(instance: Instance, env: Mapping[str, str] | None = None) -> None:
    instance.must(
        "run", "--policy", "pinned", "--timeout", "90s", "say hello", env=env, timeout=120
    )
    assert approvals(instance) == []
    assert [m.status for m in missions(instance)] == ["landed"]


def _run_stops_for_approval(instance: Instance, env: Mapping[str, str] | None = None) -> None:
    run = start_contenox(
        instance, "run", "--policy", "pinned", "--timeout", "90s", "say hello", env=env
    )
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)
    assert "echo" in ask.summary, ask
    deny(instance, ask.id)
    run.wait(timeout=90).assert_success()


# function: needs background (an ask answered from a second process)
def test_without_trusted_binaries_a_planted_echo_on_path_runs_unattended(
    instance: Instance,
) -> None:
    # The gap the page describes: the allow rule blesses the name, whatever it resolves to.
    _setup(instance, None)
    env = _plant(instance)
    _run_lands_unattended(instance, env)
    assert (instance.work / "planted-ran").exists()


# function: needs background
def test_a_name_resolving_outside_every_trusted_dir_stops_for_approval_and_does_not_run(
    instance: Instance,
) -> None:
    _setup(instance, {"dirs": [str(_real_echo().parent)]})
    env = _plant(instance)
    _run_stops_for_approval(instance, env)
    assert not (instance.work / "planted-ran").exists()


# function: needs capture (approvals list and mission list after the run)
def test_a_name_resolving_inside_a_trusted_dir_runs_unattended(instance: Instance) -> None:
    _setup(instance, {"dirs": [str(_real_echo().parent)]})
    _run_lands_unattended(instance)


# function: needs capture
def test_a_trusted_dir_matches_at_any_depth(instance: Instance) -> None:
    _setup(instance, {"dirs": [str(_real_echo().parent.parent)]})
    _run_lands_unattended(instance)


# function: needs capture
def test_a_trusted_dir_given_through_a_symlink_matches_its_real_directory(
    instance: Instance,
) -> None:
    link = instance.work / "bin-link"
    link.symlink_to(_real_echo().parent)
    _setup(instance, {"dirs": [str(link)]})
    _run_lands_unattended(instance)


# function: needs capture
def test_a_binary_matching_its_declared_hash_runs_unattended(instance: Instance) -> None:
    echo = _real_echo()
    _setup(instance, {"hashes": {str(echo): _sha256(echo)}})
    _run_lands_unattended(instance)


# function: needs capture
def test_a_declared_hash_is_compared_case_insensitively(instance: Instance) -> None:
    echo = _real_echo()
    _setup(instance, {"hashes": {str(echo): _sha256(echo).upper()}})
    _run_lands_unattended(instance)


# function: needs background
def test_a_binary_that_no_longer_matches_its_declared_hash_stops_for_approval(
    instance: Instance,
) -> None:
    _setup(instance, {"hashes": {str(_real_echo()): "0" * 64}})
    _run_stops_for_approval(instance)


# function: needs background
def test_declaring_any_hash_makes_the_pin_strict_for_an_undeclared_binary(
    instance: Instance,
) -> None:
    other = Path(os.path.realpath(shutil.which("ls") or "/bin/ls"))
    _setup(instance, {"hashes": {str(other): _sha256(other)}})
    _run_stops_for_approval(instance)


# function: needs background
def test_declaring_only_hashes_still_stops_a_planted_binary(instance: Instance) -> None:
    echo = _real_echo()
    _setup(instance, {"hashes": {str(echo): _sha256(echo)}})
    env = _plant(instance)
    _run_stops_for_approval(instance, env)
    assert not (instance.work / "planted-ran").exists()


# function: needs background
def test_a_hash_declared_under_a_symlink_path_is_not_the_real_path_and_stops_the_call(
    instance: Instance,
) -> None:
    echo = _real_echo()
    links = instance.work / "links"
    links.mkdir()
    (links / "echo").symlink_to(echo)
    # Declared under the symlink, not the real file: the evaluator looks up the real path.
    _setup(instance, {"hashes": {str(links / "echo"): _sha256(echo)}})
    _run_stops_for_approval(instance, {"PATH": f"{links}:{os.environ['PATH']}"})


# function: needs capture (a refused policy and the files a run did not touch)
@pytest.mark.parametrize(
    ("block", "complaint"),
    [
        ({"dirs": ["usr/bin"]}, "must be an absolute path"),
        ({"hashes": {"/usr/bin/echo": "abc123"}}, "trusted_binaries"),
        ({"hashes": {"bin/echo": "0" * 64}}, "trusted_binaries"),
        ({"dirs": ["/usr/bin"], "pins": {}}, "trusted_binaries"),
    ],
    ids=["relative-dir", "short-digest", "relative-hash-key", "unknown-key"],
)
def test_a_malformed_trusted_binaries_block_fails_the_policy_and_vet_names_it(
    instance: Instance, block: dict[str, Any], complaint: str
) -> None:
    path = _setup(instance, block)
    env = _plant(instance)
    vetted = instance.contenox("vet", str(path))
    assert vetted.exit_code != 0, vetted.describe()
    assert complaint in vetted.stdout + vetted.stderr, vetted.describe()
    # Fail closed: the allowlisted name does not run unattended under a broken pin.
    run = instance.contenox(
        "run", "--policy", "pinned", "--timeout", "10s", "say hello", env=env, timeout=60
    )
    assert run.exit_code != 0, run.describe()
    assert not (instance.work / "planted-ran").exists()


# --- declaring with hitl trust


def _declare(instance: Instance, *names: str, env: Mapping[str, str] | None = None) -> str:
    result = instance.must("hitl", "trust", "--policy", POLICY, *names, env=env)
    return result.stdout + result.stderr


# function: needs capture
def test_hitl_trust_declares_a_name_as_its_real_path_and_hash_and_the_call_runs_unattended(
    instance: Instance,
) -> None:
    echo = _real_echo()
    links = instance.work / "links"
    links.mkdir()
    (links / "echo").symlink_to(echo)
    env = {"PATH": f"{links}:{os.environ['PATH']}"}
    policy = _setup(instance, None)
    said = _declare(instance, "echo", env=env)
    assert str(echo) in said and _sha256(echo) in said, said
    assert json.loads(policy.read_text())["trusted_binaries"]["hashes"] == {
        str(echo): _sha256(echo)
    }
    _run_lands_unattended(instance, env)


# function: needs capture
@defect(
    "`contenox hitl trust --policy hitl-policy-pinned.json echo` writes only "
    '"trusted_binaries": {"hashes": {"/usr/bin/echo": "<sha256>"}} — no "dirs" — and '
    "`hitl trust --list` then says 'dirs: (none declared — any directory a name resolves "
    "from is accepted…)'. trusted-binaries.md, Declaring path and hash: `contenox hitl trust "
    "go git grep` 'resolves each name exactly as the evaluator will, and splices the result "
    'into the policy\' — shown as "dirs": ["/usr/bin", "/usr/lib/go-1.22/bin"] beside the hashes.'
)
def test_hitl_trust_splices_the_binary_s_directory_into_dirs_beside_its_hash(
    instance: Instance,
) -> None:
    policy = _setup(instance, None)
    _declare(instance, "echo")
    block = json.loads(policy.read_text())["trusted_binaries"]
    assert block.get("dirs") == [str(_real_echo().parent)], block


# function: needs capture
def test_hitl_trust_refuses_to_write_into_a_rendered_envelope(instance: Instance) -> None:
    instance.init()
    rendered = instance.home / ".contenox" / ".generated" / "hitl-policy-default.json"
    before = rendered.read_bytes()
    result = instance.contenox("hitl", "trust", "--policy", "hitl-policy-default.json", "echo")
    assert result.exit_code != 0, result.describe()
    for words in ("is rendered from [envelopes.default]", "silently discarded", "--policy"):
        assert words in result.stderr, result.describe()
    assert rendered.read_bytes() == before


# function: needs capture
def test_hitl_trust_refresh_rewrites_a_changed_digest_and_reports_it(instance: Instance) -> None:
    tool = instance.write("tools/mytool", b"#!/bin/sh\nexit 0\n")
    policy = _setup(instance, None)
    _declare(instance, str(tool))
    tool.write_bytes(b"#!/bin/sh\nexit 0\n# upgraded\n")
    # An explicit file path works as well as a name on the search path.
    result = instance.must("hitl", "trust", "--policy", str(policy), "--refresh")
    assert str(tool) in result.stdout and _sha256(tool) in result.stdout, result.describe()
    assert json.loads(policy.read_text())["trusted_binaries"]["hashes"] == {
        str(tool): _sha256(tool)
    }


# function: needs capture
def test_hitl_trust_remove_drops_a_declaration(instance: Instance) -> None:
    tool = instance.write("tools/mytool", b"#!/bin/sh\nexit 0\n")
    policy = _setup(instance, None)
    _declare(instance, "echo", str(tool))
    instance.must("hitl", "trust", "--policy", POLICY, "--remove", "echo")
    assert json.loads(policy.read_text())["trusted_binaries"]["hashes"] == {
        str(tool): _sha256(tool)
    }


# function: needs capture
def test_hitl_trust_list_reports_missing_mismatch_unreadable_and_outside_dirs(
    instance: Instance,
) -> None:
    tools = instance.work / "tools"
    names = ["gone", "changed", "unreadable", "elsewhere"]
    for name in names:
        instance.write(f"tools/{name}", f"#!/bin/sh\necho {name}\n")
    policy = _setup(instance, None)
    _declare(instance, *(str(tools / n) for n in names))
    (tools / "gone").unlink()
    (tools / "changed").write_text("#!/bin/sh\necho tampered\n")
    (tools / "unreadable").unlink()
    (tools / "unreadable").mkdir()  # present, but it cannot be read as a file (even by root)
    data = json.loads(policy.read_text())
    # Only "elsewhere" is moved out of the declared dirs: the others keep theirs.
    data["trusted_binaries"]["dirs"] = [str(tools / "sub")]
    data["trusted_binaries"]["hashes"] = {
        str(tools / "elsewhere"): data["trusted_binaries"]["hashes"][str(tools / "elsewhere")]
    }
    listing = instance.must("hitl", "trust", "--policy", POLICY, "--list").stdout
    assert "outside every trusted_binaries.dirs entry" not in listing
    policy.write_text(json.dumps(data))
    outside = instance.must("hitl", "trust", "--policy", POLICY, "--list").stdout
    assert f"{tools / 'elsewhere'}: declared outside every trusted_binaries.dirs entry" in outside
    for line, state in [
        (f"{tools / 'gone'}: declared but not present", "missing"),
        (f"{tools / 'changed'}: does not match the declared hash", "mismatch"),
        (f"{tools / 'unreadable'}: declared but unreadable", "unreadable"),
    ]:
        assert line in listing, f"{state}: {listing}"


# function: needs capture
def test_vet_warns_on_a_drifted_declaration_but_still_passes_the_policy(
    instance: Instance,
) -> None:
    tool = instance.write("tools/mytool", b"#!/bin/sh\nexit 0\n")
    policy = _setup(instance, None)
    _declare(instance, str(tool))
    tool.write_bytes(b"#!/bin/sh\nexit 1\n")
    vetted = instance.contenox("vet", str(policy))
    assert vetted.exit_code == 0, vetted.describe()
    assert f"WARN {policy}" in vetted.stdout, vetted.describe()
    assert f"{tool}: does not match the declared hash (on disk" in vetted.stdout, vetted.describe()


# function: needs capture
def test_doctor_reports_drift_of_the_active_policy_and_names_hitl_trust_refresh(
    instance: Instance,
) -> None:
    instance.init()
    # The intended home for digests: a top-level copy that shadows the rendered envelope.
    contenox_dir = instance.home / ".contenox"
    shutil.copy(contenox_dir / ".generated" / "hitl-policy-default.json", contenox_dir)
    tool = instance.write("tools/mytool", b"#!/bin/sh\nexit 0\n")
    instance.must("hitl", "trust", str(tool))
    tool.write_bytes(b"#!/bin/sh\nexit 1\n")
    report = instance.contenox("doctor").stdout
    assert f"{contenox_dir / 'hitl-policy-default.json'}: {tool}: does not match" in report, report
    assert "contenox hitl trust --refresh" in report, report
    categories = {
        issue.get("category")
        for issue in json.loads(instance.must("doctor", "--json").stdout)["issues"]
        if "trusted-binary" in str(issue.get("message"))
    }
    assert categories == {"policy"}, categories


# --- in an envelope

ENVELOPES = """
[envelopes.pinparent]
description = "echo allowlisted, pinned to a directory that does not exist"
default_action = "approve"
missions.fire = "allow"

[envelopes.pinparent.shell]
grant = "approve"
prefix_allowlist = ["echo"]

[envelopes.pinparent.trusted_binaries]
dirs = ["{dirs}"]
"""


def _envelopes(instance: Instance, dirs: str, child_hash: bool) -> None:
    text = ENVELOPES.replace("{dirs}", dirs)
    if child_hash:
        echo = _real_echo()
        text += (
            '\n[envelopes.pinchild]\nextends = "pinparent"\n'
            "\n[envelopes.pinchild.trusted_binaries.hashes]\n"
            f'"{echo}" = "{_sha256(echo)}"\n'
        )
    instance.init()
    # Appended to the global agents.toml `init` wrote; every run renders it afresh.
    agents = instance.home / ".contenox" / "agents.toml"
    agents.write_text(agents.read_text() + text)
    instance.use_script(ECHO)


# function: needs capture
def test_an_envelope_s_trusted_binaries_block_lets_a_trusted_name_run_unattended(
    instance: Instance,
) -> None:
    _envelopes(instance, str(_real_echo().parent), child_hash=False)
    instance.must("run", "--policy", "pinparent", "--timeout", "90s", "say hello", timeout=120)
    assert approvals(instance) == []


# function: needs background
def test_an_envelope_s_trusted_binaries_block_withdraws_the_allow_outside_its_dirs(
    instance: Instance,
) -> None:
    _envelopes(instance, "/nonexistent-trusted-dir", child_hash=False)
    run = start_contenox(instance, "run", "--policy", "pinparent", "--timeout", "90s", "say hello")
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)
    deny(instance, ask.id)
    run.wait(timeout=90).assert_success()


# function: needs capture
def test_under_extends_a_child_adding_a_hash_keeps_the_parent_s_dirs(instance: Instance) -> None:
    _envelopes(instance, "/nonexistent-trusted-dir", child_hash=True)
    instance.must("init")  # renders the envelopes appended above
    vetted = instance.contenox("vet", "--all").stdout
    # The child's hash sits outside the parent's dirs: vet can only say so if the dirs survived.
    child = instance.home / ".contenox" / ".generated" / "hitl-policy-pinchild.json"
    assert f"WARN {child}" in vetted, vetted
    assert f"{_real_echo()}: declared outside every trusted_binaries.dirs entry" in vetted, vetted


# function: needs background
@defect(
    "with [envelopes.pinparent] (echo on its shell prefix_allowlist, trusted_binaries.dirs = "
    '["/nonexistent-trusted-dir"]) in the WORKSPACE .contenox/agents.toml, `contenox init` '
    "renders work/.contenox/.generated/hitl-policy-pinparent.json, and `contenox run --policy "
    "pinparent` prints 'Mission fired … under envelope \"pinparent\"' — but its unit logs "
    '\'hitl: policy "pinparent" unreadable, gating on default "hitl-policy-default.json" '
    "instead: … open ~/.contenox/.generated/hitl-policy-pinparent.json: no such file', and echo "
    "runs unattended under the default envelope's allowlist with no ask. agents.toml header: "
    "'3. .contenox/agents.toml (workspace wins)'; trusted-binaries.md: 'An envelope carries it "
    "verbatim into the rendered policy'."
)
def test_an_envelope_declared_in_the_workspace_agents_toml_governs_the_run(
    instance: Instance,
) -> None:
    instance.write(".contenox/agents.toml", ENVELOPES.replace("{dirs}", "/nonexistent-dir"))
    instance.init()
    instance.use_script(ECHO)
    run = start_contenox(instance, "run", "--policy", "pinparent", "--timeout", "90s", "say hello")
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)
    deny(instance, ask.id)
    run.wait(timeout=90).assert_success()


# --- the reason on the card


def _acp_ask_detail(instance: Instance, trusted: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The reason an editor is shown when the pinned ``echo`` stops for approval over ACP.

    An ACP session gates on the default policy, so the pinned policy is written
    as the top-level copy that shadows the rendered ``default`` envelope.
    """
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-default.json").write_text(
        json.dumps(_policy(trusted))
    )
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["hi"]})]),
                "Done.",
            ]
        )
    )
    with open_acp(instance, permission="deny", env=env) as acp:
        turn = acp.prompt("say hello")
    [ask] = turn.permission_requests
    assert turn.terminal_commands == [], turn.describe()
    return str(ask.meta.get("detail", ""))


# function: needs acp
def test_the_approval_card_names_the_real_path_a_name_resolved_outside_the_trusted_dirs(
    instance: Instance,
) -> None:
    echo = _real_echo()
    links = instance.work / "links"
    links.mkdir()
    (links / "echo").symlink_to(echo)
    detail = _acp_ask_detail(
        instance,
        {"dirs": ["/nonexistent-trusted-dir"]},
        {"PATH": f"{links}:{os.environ['PATH']}"},
    )
    assert f"binary at {echo} is not under any trusted_binaries.dirs entry" in detail, detail
    assert "allow refused" in detail, detail


# function: needs acp
def test_the_approval_card_says_a_changed_binary_does_not_match_its_declared_hash(
    instance: Instance,
) -> None:
    echo = _real_echo()
    detail = _acp_ask_detail(instance, {"hashes": {str(echo): "0" * 64}}, {})
    assert f"binary at {echo} does not match the declared hash" in detail, detail
    assert "re-declare after verifying the upgrade, or investigate" in detail, detail


# function: needs capture
def test_the_shipped_envelopes_declare_no_trusted_binaries(instance: Instance) -> None:
    instance.init()
    listing = instance.must("hitl", "trust", "--list", "--policy", "hitl-policy-default.json")
    assert "hashes: (none declared" in listing.stdout, listing.describe()
    assert "dirs: (none declared" in listing.stdout, listing.describe()
