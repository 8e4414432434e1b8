"""What decides whether a shell line or a file call runs: shell tiers, hard bounds, the quarantine.

guide/confinement/guardrails.md and sandbox.md: the envelope's ``shell`` axis
reads a line in tiers (blacklist, substitution, prefix_allowlist,
ask_always, then the grant), ``tools_policies.local_shell._allowed_commands``
is a hard outer bound no approval crosses, and the credential quarantine
denies key stores and shell history under every shipped posture.

Each case fires a real ``run`` whose scripted unit makes one call, and reads
the verdict where a person would: an ask in ``approvals list`` (then denied,
so the run ends), or a run that ended without one, with the call's recorded
tool result (``session show``) saying whether it ran or was refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pytest

from harness import (
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    open_acp,
    route,
)
from harness.probes import approvals, deny, session_records, transcript
from harness.process import start_contenox

_ASK_OR_END = re.compile(r'subject="ask raised"|finished: \w+|did not finish within')


@dataclass(frozen=True)
class Verdict:
    """How one scripted call fared: ``asked`` (an ask appeared), and its recorded result."""

    asked: bool
    result: str
    exit_code: int | None


def _one_call(name: str, arguments: dict[str, Any]) -> Script:
    return Script(
        turns=[
            Turn(text="Working.", tool_calls=[ToolCall(name, arguments)]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _tool_result(instance: Instance) -> str:
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    results = [m.content for m in transcript(instance, unit.id).messages if m.role == "tool"]
    assert results, f"the unit recorded no tool result at all: {unit}"
    return results[0]


def _verdict(instance: Instance, policy: str, name: str, arguments: dict[str, Any]) -> Verdict:
    """Fire one mission making one call under ``policy``; deny the call if it asks."""
    instance.use_script(_one_call(name, arguments))
    run = start_contenox(instance, "run", "--policy", policy, "--timeout", "90s", "do the task")
    run.wait_for_output(_ASK_OR_END, stream="stderr", timeout=90)
    pending = [a for a in approvals(instance) if a.tool.endswith(name)]
    for ask in pending:
        deny(instance, ask.id)
    result = run.wait(timeout=90)
    return Verdict(bool(pending), _tool_result(instance), result.exit_code)


def _shell(instance: Instance, policy: str, command: str, *args: str, shell: bool = False) -> Verdict:
    arguments: dict[str, Any] = {"command": command}
    if args:
        arguments["args"] = list(args)
    if shell:
        arguments["shell"] = True
    return _verdict(instance, policy, "local_shell", arguments)


def _ran(verdict: Verdict) -> bool:
    return '"exit_code"' in verdict.result and not _refused(verdict)


def _refused(verdict: Verdict) -> bool:
    return "denied" in verdict.result.lower()


def _without_shell_hard_bounds(instance: Instance) -> None:
    """Clear ``tools_policies.local_shell``'s allow and deny lists in the global agents.toml.

    While either list is set, ``local_shell`` refuses ``shell: true`` outright
    ("strictly forbidden when security policies … are active"), so a line with
    a redirect or a substitution never reaches the envelope's shell tiers.
    """
    agents = instance.home / ".contenox" / "agents.toml"
    text = agents.read_text()
    for key in ("_allowed_commands", "_denied_commands"):
        text, count = re.subn(rf'(?m)^{key} = ".*"$', f'{key} = ""', text)
        assert count == 1, f"{key} not found once in {agents}"
    agents.write_text(text)


# --------------------------------------------------------------------------- the shell tiers


# function: needs background (an ask denied from a second process)
def test_under_the_default_envelope_an_allowlisted_ls_runs_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("visible-file.txt", "x")
    verdict = _shell(instance, "default", "ls")
    assert not verdict.asked, verdict
    assert "visible-file.txt" in verdict.result, verdict


# function: needs background
def test_under_the_default_envelope_rm_asks_although_a_shell_may_run_other_verbs(
    instance: Instance,
) -> None:
    instance.init()
    victim = instance.write("keep-me.txt", "x")
    verdict = _shell(instance, "default", "rm", "-f", "keep-me.txt")
    assert verdict.asked, verdict
    assert victim.exists()


# function: needs background
def test_under_the_default_envelope_a_blacklisted_mkfs_is_refused_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    # Without the hard deny list, which also names mkfs: this is the envelope's blacklist.
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "mkfs", "--version")
    assert not verdict.asked, verdict
    assert _refused(verdict) and not _ran(verdict), verdict


# function: needs background
def test_a_redirect_takes_the_prefix_allowlist_off_the_table_and_the_line_asks(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo hi > written.txt", shell=True)
    assert verdict.asked, verdict
    assert not (instance.work / "written.txt").exists()


# function: needs background
def test_a_command_substitution_asks_whatever_verb_the_line_starts_with(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo $(pwd)", shell=True)
    assert verdict.asked, verdict


# function: needs background
def test_under_strict_the_shell_has_no_allowlist_tier_and_even_ls_asks(
    instance: Instance,
) -> None:
    instance.init()
    verdict = _shell(instance, "strict", "ls")
    assert verdict.asked, verdict


# function: needs background
def test_a_command_off_allowed_commands_is_refused_even_where_the_envelope_allows_everything(
    instance: Instance,
) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-open.json").write_text(
        '{"version": 1, "default_action": "allow", "rules": []}\n'
    )
    verdict = _shell(instance, "open", "id")
    assert not verdict.asked, verdict
    assert not _ran(verdict), verdict
    # The refusal names what is allowed, so nobody asks for an approval that cannot widen it.
    assert "ls" in verdict.result and "git" in verdict.result, verdict


# --------------------------------------------------------------------------- the credential quarantine


@pytest.mark.parametrize("envelope", ["auto_edit", "default", "strict"])
# function: needs background
def test_the_credential_quarantine_denies_reading_an_ssh_key_under_every_posture(
    instance: Instance, envelope: str
) -> None:
    instance.init()
    key = instance.home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("PRIVATE-KEY-MATERIAL\n")
    verdict = _verdict(instance, envelope, "read_file", {"path": str(key)})
    assert not verdict.asked, verdict
    assert _refused(verdict), verdict
    assert "PRIVATE-KEY-MATERIAL" not in verdict.result, verdict


# function: needs background
def test_the_credential_quarantine_denies_reading_shell_history(instance: Instance) -> None:
    instance.init()
    history = instance.write(".bash_history", "export API_TOKEN=typed-once\n")
    verdict = _verdict(instance, "auto_edit", "read_file", {"path": str(history)})
    assert not verdict.asked, verdict
    assert "typed-once" not in verdict.result, verdict


# function: needs background
def test_reading_a_dot_env_asks_rather_than_proceeding(instance: Instance) -> None:
    instance.init()
    dotenv = instance.write(".env", "STRIPE_SECRET_KEY=sk-live\n")
    verdict = _verdict(instance, "default", "read_file", {"path": str(dotenv)})
    assert verdict.asked, verdict
    assert "sk-live" not in verdict.result, verdict


# --------------------------------------------------------------------------- fail closed


# function: needs capture
def test_an_unknown_default_action_refuses_to_load_the_policy(instance: Instance) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-typo.json").write_text(
        '{"version": 1, "default_action": "alow", "rules": []}\n'
    )
    instance.use_script(_one_call("local_shell", {"command": "ls"}))
    run = instance.contenox("run", "--policy", "typo", "--timeout", "30s", "do the task")
    assert run.exit_code != 0, run.describe()
    vetted = instance.contenox("vet", str(instance.home / ".contenox" / "hitl-policy-typo.json"))
    assert vetted.exit_code != 0 and "default_action" in vetted.stdout, vetted.describe()


# --------------------------------------------------------------------------- what the wall does not cover

# function: needs acp
def test_over_acp_local_shell_runs_in_the_editor_s_terminal_outside_any_wall(
    instance: Instance,
) -> None:
    instance.init()
    outside = instance.home / "outside-the-workspace.txt"
    outside.write_text("reachable from the editor shell\n")
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(
                    tool_calls=[ToolCall("local_shell", {"command": "cat", "args": [str(outside)]})]
                ),
                "Read it.",
            ]
        )
    )
    with open_acp(instance, permission="allow") as acp:
        turn = acp.prompt("read the file")
    # The editor ran it: contenox forwarded the line instead of spawning it behind a fence.
    assert turn.terminal_commands == [f"cat {outside}"], turn.describe()
    assert "reachable from the editor shell" in str(turn.tool_outputs), turn.describe()


# function: needs acp
def test_the_hardened_acpx_profile_refuses_local_shell_outright(instance: Instance) -> None:
    instance.init()
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("local_shell", {"command": "ls"})]),
                "Done.",
            ]
        )
    )
    with open_acp(instance, subcommand="acpx", permission="allow") as acp:
        turn = acp.prompt("list the files")
    assert turn.permission_requests == [], turn.describe()
    assert turn.terminal_commands == [], turn.describe()


# function: needs background
def test_a_compound_line_of_allowlisted_verbs_is_read_structurally_and_runs_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo first && echo second", shell=True)
    assert not verdict.asked, verdict
    assert "first" in verdict.result and "second" in verdict.result, verdict


# function: needs background
def test_a_run_unit_s_shell_is_not_walled_off_from_files_outside_the_workspace(
    instance: Instance,
) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-open.json").write_text(
        '{"version": 1, "default_action": "allow", "rules": []}\n'
    )
    outside = instance.home / "outside-the-workspace.txt"
    outside.write_text("reachable from the unit shell\n")
    verdict = _shell(instance, "open", "cat", str(outside))
    assert not verdict.asked, verdict
    assert "reachable from the unit shell" in verdict.result, verdict
