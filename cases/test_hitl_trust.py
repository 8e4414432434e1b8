"""`contenox hitl trust`: pin the binaries a policy's allow rules may run, by real path and SHA256.

The binary trusted is a small executable the case writes into the scratch
workspace, so its hash is known; the policy is a hand-written top-level copy
(`.contenox/hitl-policy-mine.json`), the only kind `hitl trust` may write.

Each refusal has a control beside it, where only the gate changes and the call
runs: a top-level copy beside the render, the policy's file name for the bare
envelope name, a run before any hash is declared, the genuine binary on PATH.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    edit,
    mission_finish,
    mission_report,
    probe,
    probes,
    step,
    write,
)
from harness.case import Probe, Step

POLICY = '{"default_action": "approve",\n  "rules": []}\n'
TOOL = "#!/bin/sh\necho trusted tool\n"


def _setup(instance: Instance) -> tuple[Path, Path]:
    """The policy file and an executable ``bin/mytool``; both in the workspace."""
    instance.init()
    policy = instance.write(".contenox/hitl-policy-mine.json", POLICY)
    tool = instance.write("bin/mytool", TOOL)
    tool.chmod(0o755)
    return policy, tool


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hashes(policy: Path) -> dict[str, str]:
    data = json.loads(policy.read_text())
    return dict(data.get("trusted_binaries", {}).get("hashes", {}))


def _trust(instance: Instance, *args: str | os.PathLike[str], **kw: object) -> str:
    return instance.must("hitl", "trust", "--policy", "hitl-policy-mine.json", *args, **kw).stdout


def _policy_hashes(instance: Instance) -> dict[str, str]:
    """The policy's trusted_binaries.hashes, the workspace path read as ``[WORK]``."""
    hashes = _hashes(instance.work / ".contenox" / "hitl-policy-mine.json")
    return {k.replace(str(instance.work), "[WORK]"): v for k, v in hashes.items()}


def _untouched(instance: Instance) -> bool:
    """Whether every byte of the policy after its opening brace is still as written."""
    return (instance.work / ".contenox" / "hitl-policy-mine.json").read_text().endswith(POLICY[1:])


def _text_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_MYTOOL = "{work}/bin/mytool"
# The policy and an executable ``bin/mytool``, both in the workspace.
_SETUP = (
    write(".contenox/hitl-policy-mine.json", POLICY),
    edit("bin/mytool", append=TOOL, executable=True),
)


def _trusts(*args: str, **expect: Any) -> Step:
    return step("hitl", "trust", "--policy", "hitl-policy-mine.json", *args, **expect)


def _hashes_are(expected: dict[str, str]) -> Probe:
    return probe("trusted_binaries.hashes", _policy_hashes, expect=expected)


RECORDS_PATH_AND_HASH = Case(
    name="trust records a binary's real path and sha256 without touching other bytes",
    steps=[
        *_SETUP,
        _trusts(_MYTOOL, stdout_has=[_MYTOOL]),
        _hashes_are({"[WORK]/bin/mytool": _text_sha(TOOL)}),
        # Spliced in: every byte after the opening brace is still there, as written.
        probe("the policy's own bytes untouched", _untouched, expect=True),
    ],
)


# function: puts a symlink on PATH (no step makes one)
def test_trust_resolves_a_bare_name_on_path_through_symlinks_to_the_real_file(
    instance: Instance,
) -> None:
    policy, tool = _setup(instance)
    links = instance.work / "links"
    links.mkdir()
    (links / "mytool").symlink_to(tool)
    path = f"{links}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    _trust(instance, "mytool", env={"PATH": path})
    assert _hashes(policy) == {str(tool.resolve()): _sha(tool)}


# function: compares the policy file with its text before the listing
def test_trust_list_shows_each_declaration_and_changes_nothing(instance: Instance) -> None:
    policy, tool = _setup(instance)
    _trust(instance, tool)
    before = policy.read_text()
    listing = _trust(instance, "--list")
    assert str(tool.resolve()) in listing and _sha(tool) in listing, listing
    assert policy.read_text() == before


_UPGRADED = TOOL + "echo upgraded\n"

REFRESH = Case(
    name="trust refresh rewrites the hash of an upgraded binary",
    steps=[
        *_SETUP,
        _trusts(_MYTOOL),
        edit("bin/mytool", append="echo upgraded\n"),
        _hashes_are({"[WORK]/bin/mytool": _text_sha(TOOL)}),
        _trusts("--refresh"),
        _hashes_are({"[WORK]/bin/mytool": _text_sha(_UPGRADED)}),
    ],
)

REMOVE = Case(
    name="trust remove drops a declaration",
    steps=[*_SETUP, _trusts(_MYTOOL), _trusts("--remove", _MYTOOL), _hashes_are({})],
)


_LS_PATH = os.path.realpath(shutil.which("ls") or "/bin/ls")


def _home_copy_hashes(instance: Instance) -> list[str]:
    """The paths ~/.contenox/hitl-policy-default.json declares under trusted_binaries.hashes."""
    copy = instance.home / ".contenox" / "hitl-policy-default.json"
    return sorted(json.loads(copy.read_text(encoding="utf-8"))["trusted_binaries"]["hashes"])


# The render is global (~/.contenox/.generated/), and trusted-binaries.md names
# its top-level copy in ~/.contenox; v1.0.0 names the workspace's .contenox/.
COPY_TARGET = Defect(
    title="hitl trust on a rendered global envelope names a workspace copy, not ~/.contenox",
    second_reading=(
        "2026-12-01, a second reader with only this text and the docs, in a fresh "
        "scratch home: real. Saw: exit 1; 'Error: "
        "<HOME>/.contenox/.generated/hitl-policy-default.json is rendered from "
        "[envelopes.default] in agents.toml and is rewritten on every run — a "
        "hash declared there would be silently discarded.' / 'Copy it to "
        "<workspace>/.contenox/hitl-policy-default.json first (a top-level copy "
        "shadows the rendered one), then re-run; or pass --policy with an "
        "explicit path' Note: The message names the workspace copy, not "
        "~/.contenox. The reference line does not say which directory, and no "
        "page says the workspace copy is the one to name; the guide says "
        "~/.contenox and calls it a per-host file. `ls` here is read as a binary "
        "name, not a subcommand (the listing flag is --list), but the refusal "
        "comes either way. I did not test the report's aside that "
        "trusted_binaries are not..."
    ),
    reproduce=(
        "in a scratch HOME (an empty workspace), `contenox init`; `contenox hitl trust ls` "
        "exits 1 with 'Error: ~/.contenox/.generated/hitl-policy-default.json is rendered "
        "from [envelopes.default] in agents.toml and is rewritten on every run — a hash "
        "declared there would be silently discarded.' and 'Copy it to "
        "<workspace>/.contenox/hitl-policy-default.json first (a top-level copy shadows the "
        "rendered one), then re-run; or pass --policy with an explicit path' — the "
        "workspace's .contenox/, where (test_hitl_trust.py quarantines it) a policy's "
        "trusted_binaries are not enforced"
    ),
    promised=(
        'guide/confinement/trusted-binaries.md:178 "Copy it to '
        '~/.contenox/hitl-policy-default.json first (a top-level copy shadows"'
    ),
    observed="'Copy it to <workspace>/.contenox/hitl-policy-default.json first …'",
    bears_on=(
        'guide/confinement/trusted-binaries.md:182 "That copy is the intended home: '
        'a per-host file, owned by whoever runs that host,"',
        'reference/contenox-cli.md:311 "The message names the top-level copy to make '
        'instead, which shadows the render"',
    ),
)


TRUST_REFUSES_A_RENDER = Case(
    name="trust refuses to write a rendered envelope and names the top level copy to make",
    steps=[
        step(
            "hitl",
            "trust",
            "ls",
            exit_code=1,
            notices_has=[
                "rendered from [envelopes.default]",
                "Copy it to {home}/.contenox/hitl-policy-default.json first",
            ],
        )
    ],
    defect=COPY_TARGET,
)

# The control: the same call once ~/.contenox holds the top-level copy that shadows the
# render; it writes the hash there.
TRUST_WRITES_A_TOP_LEVEL_COPY = Case(
    name="trust writes the hash into the top level copy that shadows the render",
    steps=[
        # A top-level copy by that file name (its rules do not matter to hitl trust).
        write("hitl-policy-default.json", POLICY, home=True),
        step("hitl", "trust", "ls", stdout_has=[_LS_PATH]),
        probe("the copy's trusted_binaries.hashes", _home_copy_hashes, expect=[_LS_PATH]),
    ],
)

# Its control is TRUST_FINDS_THE_POLICY_FILE_NAME below.
TRUST_REFUSES_A_BARE_ENVELOPE_NAME = Case(
    name="trust policy strict is refused as not found",
    steps=[
        step(
            "hitl",
            "trust",
            "--policy",
            "strict",
            "ls",
            exit_code=1,
            notices_has=['policy "strict" not found on the search path'],
        )
    ],
)

# The control: the same envelope by its file name is found (and refused for what it is,
# a render: where that refusal says to copy it is TRUST_REFUSES_A_RENDER's promise).
TRUST_FINDS_THE_POLICY_FILE_NAME = Case(
    name="trust policy hitl policy strict json is found on the search path",
    redact={r"Copy it to \S+ first": "Copy it to [COPY TARGET] first"},
    steps=[
        step(
            "hitl",
            "trust",
            "--policy",
            "hitl-policy-strict.json",
            "ls",
            exit_code=1,
            notices_has=["rendered from [envelopes.strict]"],
            notices_lacks=["not found"],
        )
    ],
)


def _shell_result(instance: Instance, before: set[str]) -> str:
    """The local_shell tool result of the one run captured since ``before``."""
    [rid] = set(probes.captured_requests(instance)) - before
    for unit in probes.captured_units(instance, rid):
        for message in unit.output_messages:
            if message.role == "tool":
                return message.content
    raise AssertionError(f"run {rid} recorded no tool result")


# function: two runs around a `hitl trust`, each read for its own tool result
@pytest.mark.parametrize(
    "where",
    [
        "home",
        pytest.param(
            "workspace",
            marks=defect(
                Defect(
                    title=(
                        "a run never loads a workspace policy file, so the hashes `hitl trust` "
                        "declared in it do not apply"
                    ),
                    second_reading=(
                        "2026-12-03, a second reader with only this text and the docs, in a fresh "
                        "scratch home: real. Saw: Scratch HOME, init, scripted default. Dialog: "
                        "local_shell{command: ls}, mission_report, mission_finish landed, text. "
                        "Executable bin/mytool in the workspace. Policy {default deny, "
                        "local_shell allow when command_prefix_allowlist ls}. (a) Policy at "
                        "workspace .contenox/hitl-policy-mine.json. `hitl trust --policy "
                        "hitl-policy-mine.json $W/bin/mytool` wrote the hash into that workspace "
                        "file: 'updated …/.contenox/hitl-policy-mine.json (1 declared binaries)'. "
                        "`run --policy mine --timeout 90s list` exited 0. Its log said 'hitl: "
                        'policy "mine" unreadable, gating on default '
                        '"hitl-policy-default.json" instead … open '
                        "$HOME/.contenox/.generated/hitl-policy-mine.json'. The ls result (state "
                        "show --raw) listed the workspace: "
                        "'bin\\ndialog.json\\ne\\nmarker-file\\no'. (b) The same policy at "
                        "~/.contenox/hitl-poli..."
                    ),
                    reproduce=(
                        "in a scratch HOME, `contenox init`; an executable `bin/mytool` in the "
                        'workspace; `.contenox/hitl-policy-mine.json` holding `{"default_action'
                        '": "deny", "rules": [{"tools": "local_shell", "tool": '
                        '"local_shell", "when": [{"key": "command", "op": '
                        '"command_prefix_allowlist", "value": "ls"}], "action": '
                        '"allow"}]}`; a scripted-test default backend whose dialog calls '
                        "`local_shell {command: ls}`, then `mission_report`, `mission_finish "
                        "landed`, a text turn; `contenox hitl trust --policy "
                        "hitl-policy-mine.json bin/mytool` declares one hash; `contenox run "
                        '--policy mine --timeout 90s "list"` still runs `ls` (its tool result '
                        "lists the workspace). The same file as ~/.contenox/hitl-policy-mine.json: "
                        "'Denied by the active policy …'"
                    ),
                    promised=(
                        'guide/hitl.md:379-380 "A top-level hitl-policy-<name>.json in the '
                        'workspace .contenox/, then ~/.contenox/, wins if it is there."'
                    ),
                    observed=(
                        "`ls`, declared nowhere, runs under the workspace copy: the unit logs "
                        '\'hitl: policy "mine" unreadable, gating on default '
                        '"hitl-policy-default.json" instead: … open '
                        "~/.contenox/.generated/hitl-policy-mine.json: no such file or "
                        "directory' (the pin itself works: the home copy refuses `ls`)"
                    ),
                    bears_on=(
                        'reference/contenox-cli.md:309 "Declaring any hash makes the pin strict '
                        'for that policy: a command with no declared hash is refused."',
                    ),
                )
            ),
        ),
    ],
)
def test_declaring_any_hash_makes_the_pin_strict_and_an_undeclared_command_is_refused(
    instance: Instance, where: str
) -> None:
    # The policy allows `ls` by prefix. Unpinned, `ls` runs; once any binary
    # (here bin/mytool) is declared, `ls` — declared nowhere — is refused.
    _, tool = _setup(instance)
    (instance.work / ".contenox" / "hitl-policy-mine.json").unlink()
    base = instance.home if where == "home" else instance.work
    policy = base / ".contenox" / "hitl-policy-mine.json"
    rule = {
        "tools": "local_shell",
        "tool": "local_shell",
        "when": [{"key": "command", "op": "command_prefix_allowlist", "value": "ls"}],
        "action": "allow",
    }
    policy.write_text(json.dumps({"default_action": "deny", "rules": [rule]}) + "\n")
    instance.use_script(
        Script(
            turns=[
                Turn(text="Listing.", tool_calls=[ToolCall("local_shell", {"command": "ls"})]),
                Turn(tool_calls=[mission_report("result", "listed")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )

    def run() -> str:
        before = set(probes.captured_requests(instance))
        instance.must("run", "--policy", "mine", "--timeout", "90s", "list", timeout=150)
        return _shell_result(instance, before)

    unpinned = run()
    assert "bin" in unpinned and "denied" not in unpinned.lower(), unpinned
    _trust(instance, tool)
    pinned = run()
    assert "denied" in pinned.lower(), pinned


# function: two runs with different PATHs, each read for its own tool result
def test_a_substituted_binary_is_refused_instead_of_inheriting_the_allow(
    instance: Instance,
) -> None:
    # `ls` is allowed by prefix and pinned to the real ls. A run whose PATH
    # puts a planted `ls` first must be refused; the control run is not.
    instance.init()
    policy = instance.home / ".contenox" / "hitl-policy-mine.json"
    rule = {
        "tools": "local_shell",
        "tool": "local_shell",
        "when": [{"key": "command", "op": "command_prefix_allowlist", "value": "ls"}],
        "action": "allow",
    }
    policy.write_text(json.dumps({"default_action": "deny", "rules": [rule]}) + "\n")
    instance.must("hitl", "trust", "--policy", "hitl-policy-mine.json", "ls")
    planted = instance.write("planted/ls", "#!/bin/sh\necho planted ls ran\n")
    planted.chmod(0o755)
    instance.use_script(
        Script(
            turns=[
                Turn(text="Listing.", tool_calls=[ToolCall("local_shell", {"command": "ls"})]),
                Turn(tool_calls=[mission_report("result", "listed")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )

    def run(env: dict[str, str]) -> str:
        before = set(probes.captured_requests(instance))
        instance.must("run", "--policy", "mine", "--timeout", "90s", "list", env=env, timeout=150)
        return _shell_result(instance, before)

    path = os.environ.get("PATH", "/usr/bin:/bin")
    genuine = run({"PATH": path})
    assert "denied" not in genuine.lower() and "planted ls ran" not in genuine, genuine
    substituted = run({"PATH": f"{planted.parent}:{path}"})
    assert "planted ls ran" not in substituted, substituted
    assert "denied" in substituted.lower(), substituted
