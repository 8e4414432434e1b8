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

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    open_acp,
    route,
    step,
)
from harness.probes import (
    answer,
    approvals,
    await_approval,
    deny,
    mission,
    missions,
    session_records,
    transcript,
)
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


def _shell(
    instance: Instance, policy: str, command: str, *args: str, shell: bool = False
) -> Verdict:
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


# --- the shell tiers


# function: needs background (an ask denied from a second process)
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_under_the_default_envelope_an_allowlisted_ls_runs_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("visible-file.txt", "x")
    verdict = _shell(instance, "default", "ls")
    assert not verdict.asked, verdict
    assert "visible-file.txt" in verdict.result, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_under_the_default_envelope_rm_asks_although_a_shell_may_run_other_verbs(
    instance: Instance,
) -> None:
    instance.init()
    victim = instance.write("keep-me.txt", "x")
    verdict = _shell(instance, "default", "rm", "-f", "keep-me.txt")
    assert verdict.asked, verdict
    assert victim.exists()


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
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
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_redirect_takes_the_prefix_allowlist_off_the_table_and_the_line_asks(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo hi > written.txt", shell=True)
    assert verdict.asked, verdict
    assert not (instance.work / "written.txt").exists()


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_command_substitution_asks_whatever_verb_the_line_starts_with(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo $(pwd)", shell=True)
    assert verdict.asked, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_under_strict_the_shell_has_no_allowlist_tier_and_even_ls_asks(
    instance: Instance,
) -> None:
    instance.init()
    verdict = _shell(instance, "strict", "ls")
    assert verdict.asked, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
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


# --- the credential quarantine


@pytest.mark.parametrize("envelope", ["auto_edit", "default", "strict"])
# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
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
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_the_credential_quarantine_denies_reading_shell_history(instance: Instance) -> None:
    instance.init()
    history = instance.write(".bash_history", "export API_TOKEN=typed-once\n")
    verdict = _verdict(instance, "auto_edit", "read_file", {"path": str(history)})
    assert not verdict.asked, verdict
    assert "typed-once" not in verdict.result, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_reading_a_dot_env_asks_rather_than_proceeding(instance: Instance) -> None:
    instance.init()
    dotenv = instance.write(".env", "STRIPE_SECRET_KEY=sk-live\n")
    verdict = _verdict(instance, "default", "read_file", {"path": str(dotenv)})
    assert verdict.asked, verdict
    assert "sk-live" not in verdict.result, verdict


# --- fail closed


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


# --- what the wall does not cover


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
    # The run ends at its ask (torn down, stopped or refused) by design, so the
    # turns after it are never asked for: model demand cannot be checked here.
    instance.recorder.demand_checked = False
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
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_compound_line_of_allowlisted_verbs_is_read_structurally_and_runs_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    _without_shell_hard_bounds(instance)
    verdict = _shell(instance, "default", "echo first && echo second", shell=True)
    assert not verdict.asked, verdict
    assert "first" in verdict.result and "second" in verdict.result, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
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


# --- envelopes (guardrails.md)


def _envelope(instance: Instance, text: str) -> None:
    """Append envelope tables to the global agents.toml ``init`` wrote; each run renders them."""
    instance.init()
    agents = instance.home / ".contenox" / "agents.toml"
    agents.write_text(agents.read_text() + "\n" + text)


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_axis_left_unset_takes_default_action_deny(instance: Instance) -> None:
    _envelope(
        instance,
        '[envelopes.noshell]\ndefault_action = "deny"\nfiles.read = "allow"\n'
        'missions.fire = "allow"\n',
    )
    verdict = _shell(instance, "noshell", "ls")
    assert not verdict.asked and _refused(verdict), verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_axis_left_unset_takes_default_action_approve(instance: Instance) -> None:
    _envelope(
        instance,
        '[envelopes.askshell]\ndefault_action = "approve"\nfiles.read = "allow"\n'
        'missions.fire = "allow"\n',
    )
    verdict = _shell(instance, "askshell", "ls")
    assert verdict.asked, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_ask_with_a_timeout_nobody_answers_is_denied_and_the_run_moves_on(
    instance: Instance,
) -> None:
    _envelope(
        instance,
        '[envelopes.shortwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
        'shell = { grant = "approve", timeout = "3s", on_timeout = "deny" }\n',
    )
    victim = instance.write("keep-me.txt", "x")
    instance.use_script(_one_call("local_shell", {"command": "rm", "args": ["keep-me.txt"]}))
    # Nobody answers: the ask must resolve itself to a denial and the mission land.
    run = instance.contenox(
        "run", "--policy", "shortwait", "--timeout", "90s", "do the task", timeout=120
    )
    assert run.exit_code == 0, run.describe()
    assert victim.exists()
    assert _refused(Verdict(False, _tool_result(instance), run.exit_code)), _tool_result(instance)


def _pending_expiry(instance: Instance, policy: str) -> str:
    instance.use_script(_one_call("local_shell", {"command": "rm", "args": ["nothing"]}))
    run = start_contenox(instance, "run", "--policy", policy, "--timeout", "90s", "do the task")
    run.wait_for_output(_ASK_OR_END, stream="stderr", timeout=90)
    [ask] = approvals(instance)
    deny(instance, ask.id)
    run.wait(timeout=90)
    return ask.expires_in


# function: needs background
def test_an_ask_with_timeout_never_has_no_deadline(instance: Instance) -> None:
    _envelope(
        instance,
        '[envelopes.forever]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
        'shell = { grant = "approve", timeout = "never" }\n',
    )
    assert _pending_expiry(instance, "forever") == "never"


# function: needs background
def test_an_ask_without_a_timeout_is_bounded_by_the_seven_day_approval_ceiling(
    instance: Instance,
) -> None:
    instance.init()
    assert _pending_expiry(instance, "default") == "6d"  # seven days, less the seconds gone


# function: needs background
def test_an_ask_without_a_timeout_is_bounded_by_the_ceiling_the_host_sets(
    instance: Instance,
) -> None:
    instance.init()
    instance.must("config", "set", "approval-ceiling", "2h")
    assert _pending_expiry(instance, "default") in {"1h", "2h", "1h59m"}


@pytest.mark.parametrize(
    "grant",
    [
        'shell = { grant = "approve", timeout = "30m", on_timeout = "allow" }',
        'shell = { grant = "approve", timeout = "never", on_timeout = "deny" }',
    ],
    ids=["on-timeout-allow", "never-with-on-timeout"],
)
# function: needs capture
def test_an_on_timeout_other_than_deny_or_beside_never_is_refused(
    instance: Instance, grant: str
) -> None:
    _envelope(
        instance,
        f'[envelopes.badwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n{grant}\n',
    )
    instance.use_script(_one_call("local_shell", {"command": "ls"}))
    run = instance.contenox("run", "--policy", "badwait", "--timeout", "30s", "do the task")
    assert run.exit_code != 0, run.describe()
    assert "badwait" in run.stderr, run.describe()


# function: needs capture
def test_a_typo_inside_compute_refuses_to_load_the_policy(instance: Instance) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-typo.json").write_text(
        '{"version": 1, "default_action": "allow", "rules": [], "compute": {"maxToolCals": 3}}\n'
    )
    instance.use_script(_one_call("local_shell", {"command": "ls"}))
    run = instance.contenox("run", "--policy", "typo", "--timeout", "30s", "do the task")
    assert run.exit_code != 0, run.describe()


def _under_model_allowlist(instance: Instance, allowlist: str) -> None:
    _envelope(
        instance,
        '[envelopes.pinnedmodel]\ndefault_action = "allow"\n\n[envelopes.pinnedmodel.compute]\n'
        f'model_allowlist = {allowlist}\non_exhausted = "finish_stuck"\n',
    )
    instance.use_script(_one_call("local_shell", {"command": "ls"}))
    instance.contenox("run", "--policy", "pinnedmodel", "--timeout", "90s", "do the task")


# function: needs capture
def test_a_unit_runs_on_a_model_the_envelope_s_model_allowlist_names(instance: Instance) -> None:
    _under_model_allowlist(instance, '["scripted-test"]')
    assert [m.status for m in missions(instance)] == ["landed"]


# function: needs capture
def test_a_unit_cannot_use_a_model_the_envelope_s_model_allowlist_does_not_name(
    instance: Instance,
) -> None:
    _under_model_allowlist(instance, '["a-model-nobody-named"]')
    [fired] = missions(instance)
    assert fired.status != "landed"
    detail = mission(instance, fired.id)
    assert "modelAllowlist" in detail.status_reason, detail


# function: needs capture
@defect(
    "an envelope whose compute.model_allowlist names only 'a-model-nobody-named' (on_exhausted "
    "= finish_stuck), `contenox run --policy pinnedmodel …` on the scripted-test model: `mission "
    "show` says 'Status: derailed — unit turn failed: … chat failed: compute bound refused: "
    "modelAllowlist …', not stuck. guardrails.md: 'A unit that crosses a bound ends as `stuck` "
    "rather than running on.'; missions.md: 'Crossing an enforced bound is never silent: the "
    "mission is finished `stuck` with a reason led by `compute bound exhausted`'."
)
def test_a_unit_that_crosses_an_enforced_compute_bound_ends_stuck(instance: Instance) -> None:
    _under_model_allowlist(instance, '["a-model-nobody-named"]')
    assert [m.status for m in missions(instance)] == ["stuck"]


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_read_outside_the_workspace_is_refused_by_a_file_tool(instance: Instance) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-open.json").write_text(
        '{"version": 1, "default_action": "allow", "rules": []}\n'
    )
    outside = instance.home / "outside-the-workspace.txt"
    outside.write_text("NOT-FOR-THE-FILE-TOOL\n")
    verdict = _verdict(instance, "open", "read_file", {"path": str(outside)})
    assert "NOT-FOR-THE-FILE-TOOL" not in verdict.result, verdict


def _second_session_cwd(instance: Instance, asked: Path) -> list[object] | None:
    """Open a second ACP session asking for ``asked``: its shell cwds, or None if refused."""
    instance.init()
    instance.use_script(
        Script(
            turns=[route(), Turn(tool_calls=[ToolCall("local_shell", {"command": "pwd"})]), "Ok."]
        )
    )
    with open_acp(instance, permission="allow") as acp:
        answer = acp.request("session/new", {"cwd": str(asked), "mcpServers": []})
        if "error" in answer:
            return None
        result = answer["result"]
        assert isinstance(result, dict), answer
        turn = acp.prompt("where am I", session_id=str(result["sessionId"]))
    return [r.params.get("cwd") for r in turn.requests_of("terminal/create")]


# function: needs acp
@defect(
    "`contenox acp` started in the workspace, a first session opened there, then a second "
    "`session/new` with cwd <tmp>/elsewhere: accepted, and a scripted local_shell `pwd` in it "
    "went out as terminal/create with cwd <tmp>/elsewhere and printed that path. guardrails.md: "
    "'Its sessions run there and nowhere else — never in a directory a client asked for'; "
    "contenox-cli.md, Workspace authority: 'One instance serves exactly one workspace, fixed at "
    "launch … Serving a second workspace means starting a second instance'."
)
def test_a_second_session_never_runs_in_another_directory_the_client_asked_for(
    instance: Instance,
) -> None:
    elsewhere = instance.tmp / "elsewhere"
    elsewhere.mkdir()
    cwds = _second_session_cwd(instance, elsewhere)
    assert cwds is None or cwds == [str(instance.work)], cwds


# function: needs acp
@defect(
    "over `contenox acp`, a `session/new` with cwd ~/.contenox (the control plane: config, "
    "local.db, policies) is accepted, and a scripted local_shell `pwd` in it goes out as "
    "terminal/create with cwd ~/.contenox. guardrails.md: 'never in the runtime's own config, "
    "database or policies'; contenox-cli.md, Workspace authority: 'The runtime's own control "
    "plane (`~/.contenox` …) is never a workspace, on any shape. There is no setting that turns "
    "this off.'"
)
def test_the_runtime_s_own_control_plane_is_never_a_session_s_workspace(
    instance: Instance,
) -> None:
    control_plane = instance.home / ".contenox"
    control_plane.mkdir(exist_ok=True)
    cwds = _second_session_cwd(instance, control_plane)
    assert cwds is None or str(control_plane) not in [str(c) for c in cwds], cwds


# function: needs acp
def test_a_policy_file_that_cannot_be_read_falls_back_to_asking_even_about_reads(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("notes.txt", "plain project notes\n")
    # The session's policy exists by name but cannot be read as a file.
    (instance.home / ".contenox" / "hitl-policy-default.json").mkdir()
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
                "Read.",
            ]
        )
    )
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("read the notes")
    assert len(turn.permission_requests) == 1, turn.describe()
    assert turn.paths_read == [], turn.describe()


# --- which tools exist


def _declared_echo(instance: Instance, tools: str | None) -> str:
    """Run a declared agent ``narrow`` whose unit calls ``echo``; return that call's result."""
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-open.json").write_text(
        '{"version": 1, "default_action": "allow", "rules": []}\n'
    )
    front = "---\nname: narrow\ndescription: a narrowed test agent\n"
    if tools is not None:
        front += f"tools: {tools}\n"
    (instance.home / ".contenox" / "agents" / "narrow.md").write_text(front + "---\nDo it.\n")
    instance.use_script(_one_call("echo", {"input": "echoed-ok"}))
    instance.must("run", "narrow", "--policy", "open", "--timeout", "60s", "echo", timeout=120)
    return _tool_result(instance)


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_declaration_that_omits_tools_inherits_every_tool(instance: Instance) -> None:
    assert _declared_echo(instance, None) == "echoed-ok"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_star_grant_admits_the_native_toolsets(instance: Instance) -> None:
    assert _declared_echo(instance, '"*"') == "echoed-ok"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_tool_the_declaration_never_granted_cannot_be_called(instance: Instance) -> None:
    result = _declared_echo(instance, '"native-git"')
    assert "tool echo not found" in result, result


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_empty_tools_list_grants_nothing(instance: Instance) -> None:
    result = _declared_echo(instance, "[]")
    assert "tool echo not found" in result, result


@pytest.mark.parametrize(
    "tools",
    ['["*", "!native-echo"]', '["!native-echo", "*"]'],
    ids=["exclusion-last", "exclusion-first"],
)
# function: needs capture
@defect(
    'a declaration `~/.contenox/agents/narrow.md` with `tools: ["*", "!native-echo"]` (or '
    'the exclusion first, or the string "*, !native-echo"): `contenox run narrow …` whose unit '
    "calls echo gets 'echoed-ok' — the compiled .generated/chain-agent-narrow.json carries "
    "execute_config.tools ['*', 'mission'], the exclusion dropped. guardrails.md: '\"!name\" | "
    "removes that one toolset; an exclusion beats `*`, whatever order they appear in' and "
    "'`\"!native-git\"` is how you drop one'; `run --help`: 'Tool grants read the same "
    'everywhere: … "!name" removes one\'.'
)
def test_an_exclusion_removes_a_toolset_whatever_order_it_appears_in(
    instance: Instance, tools: str
) -> None:
    result = _declared_echo(instance, tools)
    assert "tool echo not found" in result, result


UNNAMED_AND_NAMED = (
    '[envelopes.unnamed]\ndefault_action = "approve"\nmissions.fire = "allow"\n\n'
    '[envelopes.named]\ndefault_action = "approve"\nmissions.fire = "allow"\n\n'
    '[envelopes.named.tools]\n"native-echo.*" = "allow"\n'
)


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_tool_no_rule_names_falls_to_default_action_and_asks(instance: Instance) -> None:
    _envelope(instance, UNNAMED_AND_NAMED)
    verdict = _verdict(instance, "unnamed", "echo", {"input": "echoed-ok"})
    assert verdict.asked, verdict


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_tool_the_envelope_names_under_tools_runs_without_asking(instance: Instance) -> None:
    _envelope(instance, UNNAMED_AND_NAMED)
    verdict = _verdict(instance, "named", "echo", {"input": "echoed-ok"})
    assert not verdict.asked and verdict.result == "echoed-ok", verdict


# --- what content gets through: a route task as a moderation gate


def _moderated_chain() -> str:
    def task(task_id: str, handler: str, model: str, goto: str) -> dict[str, object]:
        return {
            "id": task_id,
            "handler": handler,
            "system_instruction": f"The {task_id} step.",
            "execute_config": {"model": model, "provider": "scripted-test", "tools": []},
            "transition": {"branches": [{"operator": "default", "when": "", "goto": goto}]},
        }

    moderate = task("moderate", "route", "classifier", "simple-chat")
    moderate["transition"] = {
        "branches": [
            {"operator": "equals", "when": "safe", "goto": "simple-chat"},
            {"operator": "equals", "when": "unsafe", "goto": "reject_request"},
            {"operator": "default", "when": "", "goto": "simple-chat"},
        ]
    }
    reject = {"id": "reject_request", "handler": "raise_error"}
    chain = {
        "id": "moderated",
        "description": "a moderation gate in front of the real chat",
        "tasks": [moderate, task("simple-chat", "chat_completion", "expensive", "end"), reject],
    }
    return json.dumps(chain, indent=2) + "\n"


def _moderation_case(label: str, reaches: bool) -> Case:
    verdict = "reaches the real chain" if reaches else "is rejected before the real chain"
    answer = "The expensive model's answer."
    return Case(
        name=f"a request the route task labels {label} {verdict}",
        backends={
            "classifier": Script(turns=[label], model="classifier"),
            "expensive": Script(turns=[answer], model="expensive"),
        },
        files={"moderated-chain.json": _moderated_chain()},
        steps=[
            step(
                "chat",
                "--chain",
                "moderated-chain.json",
                "tell me something",
                exit_code=0 if reaches else 1,
                **({"stdout_has": [answer]} if reaches else {"stdout_lacks": [answer]}),
            )
        ],
        # `chat` logs the model calls it serves only under --trace (a defect quarantined in
        # test_scripted_backend_identity), so demand cannot be counted here: the exit code
        # and stdout say which branch ran, since only the unsafe branch raises.
        serves_all_turns=False,
    )


MODERATION = [_moderation_case("safe", True), _moderation_case("unsafe", False)]


# --- an authored chain's execute_config.tools


def _authored_shell(instance: Instance, execute_config: dict[str, Any]) -> str:
    """Chat once (``--shell``) through an authored chain whose model calls local_shell ``pwd``."""
    instance.init()
    config = {"model": "{{var:model}}", "provider": "{{var:provider}}", **execute_config}
    back = {"branches": [{"operator": "default", "when": "", "goto": "agent"}]}
    chain = {
        "id": "authored",
        "description": "an authored chain: one model task, one tool task",
        # Without a context budget every tool result reads as too large.
        "token_limit": 131072,
        "tasks": [
            {
                "id": "agent",
                "handler": "chat_completion",
                "system_instruction": "Do the task.",
                "execute_config": config,
                "transition": {
                    "branches": [
                        {"operator": "equals", "when": "tool_call", "goto": "tools"},
                        {"operator": "default", "when": "", "goto": "end"},
                    ]
                },
            },
            {
                "id": "tools",
                "handler": "execute_tool_calls",
                "input_var": "agent",
                "execute_config": config,
                "transition": back,
            },
        ],
    }
    path = instance.write("authored-chain.json", json.dumps(chain, indent=2))
    instance.use_script(
        Script(turns=[Turn(tool_calls=[ToolCall("local_shell", {"command": "pwd"})]), "Done."])
    )
    instance.must("chat", "--shell", "--chain", str(path), "where am I", timeout=120)
    results = [m.content for m in transcript(instance).messages if m.role == "tool"]
    assert len(results) == 1, results
    return results[0]


# function: needs capture
@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_an_authored_task_granting_star_reaches_local_shell(instance: Instance) -> None:
    result = _authored_shell(instance, {"tools": ["*"]})
    assert str(instance.work) in result, result


@pytest.mark.parametrize("tools", ["absent", None], ids=["absent", "null"])
# function: needs capture
def test_an_authored_task_without_a_tools_grant_has_no_tools(
    instance: Instance, tools: str | None
) -> None:
    result = _authored_shell(instance, {} if tools == "absent" else {"tools": tools})
    assert "tool local_shell not found" in result, result


@pytest.mark.parametrize(
    "tools",
    [["*", "!local_shell"], ["!local_shell", "*"]],
    ids=["exclusion-last", "exclusion-first"],
)
# function: needs capture
def test_an_authored_task_s_exclusion_beats_star_in_either_order(
    instance: Instance, tools: list[str]
) -> None:
    result = _authored_shell(instance, {"tools": tools})
    assert "tool local_shell not found" in result, result


# function: needs capture
def test_hide_tools_withholds_a_tool_a_star_grant_admits(instance: Instance) -> None:
    result = _authored_shell(instance, {"tools": ["*"], "hide_tools": ["local_shell.local_shell"]})
    assert "hidden" in result and str(instance.work) not in result, result


# --- who may answer a unit's question

QUESTION = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {"summary": "which database", "question": "which database should I use"},
                )
            ],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


# function: needs background
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_with_missions_answer_denied_a_unit_s_question_waits_for_a_human(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(QUESTION)
    run = start_contenox(instance, "run", "--policy", "strict", "--timeout", "90s", "pick a db")
    ask = await_approval(instance, 60, kind="question", run=run)
    assert ask.summary == "which database", ask
    answer(instance, ask.id, "use the staging database")
    run.wait(timeout=90).assert_success()
    tool_results = [m.content for m in transcript(instance, _unit(instance)).messages]
    assert any("use the staging database" in text for text in tool_results), tool_results


def _unit(instance: Instance) -> str:
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    return unit.id
