"""The `/mission` slash command, typed into an editor session over `contenox acp`.

contenox-cli.md `### The /mission slash command`. Each case is a function: it
needs an ACP client. The fired unit is a child of the acp process and replays
the same dialog from its first turn (a new process starts a script at turn 0).
"""

from __future__ import annotations

import json

import pytest

from harness import Instance, Script, Turn, defect, mission_finish, mission_report, open_acp
from harness.probes import missions

LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "slash mission home")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
RUN_ENVELOPE = "hitl-policy-run.json"


def _setup(instance: Instance, **config: str) -> None:
    instance.init()
    instance.use_script(LANDS)
    for key, value in config.items():
        instance.must("config", "set", key.replace("_", "-"), value)


def _rendered(instance: Instance, name: str) -> dict[str, object]:
    """A rendered envelope, read from the workspace or home `.generated/` (first use renders)."""
    instance.must("agent", "list")
    [path, *_] = [
        p
        for base in (instance.work, instance.home)
        for p in (base / ".contenox" / ".generated").glob(name)
    ]
    data: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return data


def test_bare_mission_fires_nothing_and_prints_grammar_defaults_and_every_envelope(
    instance: Instance,
) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission")
    text = turn.text
    for line in (
        "/mission <intent>",
        "/mission <agent-name> <intent>",
        "/mission --policy <envelope> [agent] <intent>",
        "Default agent:",
        "Default envelope:",
    ):
        assert line in text, turn.describe()
    # Every envelope with its character: unmatched calls, ceiling, who answers questions.
    assert f"{RUN_ENVELOPE}  unruled calls stop for approval" in text, turn.describe()
    assert "hitl-policy-strict.json  unruled calls are denied" in text, turn.describe()
    assert "questions always wait for a human" in text, turn.describe()
    assert "an agent may answer 3 questions" in text, turn.describe()
    assert missions(instance) == []


def test_bare_mission_shows_the_defaults_in_force(instance: Instance) -> None:
    # function: needs acp
    _setup(instance, default_mission_agent="run", default_mission_policy=RUN_ENVELOPE)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission")
    lines = [" ".join(line.split()) for line in turn.text.splitlines()]
    assert "Default agent: run" in lines, turn.describe()
    assert f"Default envelope: {RUN_ENVELOPE}" in lines, turn.describe()


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_mission_intent_fires_the_default_agent_under_the_default_envelope(
    instance: Instance,
) -> None:
    # function: needs acp
    _setup(instance, default_mission_agent="run", default_mission_policy=RUN_ENVELOPE)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission summarise the tree")
    text = turn.text
    assert 'agent "run"' in text and f'envelope "{RUN_ENVELOPE}"' in text, turn.describe()
    assert "(default-mission-policy)" in text, turn.describe()
    # The first token missed the registry: the whole line is the intent.
    assert "Intent: summarise the tree" in text, turn.describe()
    [fired] = missions(instance)
    assert (fired.agent, fired.envelope) == ("run", RUN_ENVELOPE)


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_mission_agent_intent_fires_the_named_agent_and_says_so(instance: Instance) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} run report home")
    text = turn.text
    assert f'Mission fired at named agent "run" under envelope "{RUN_ENVELOPE}" (--policy).' in (
        text
    ), turn.describe()
    # The envelope's character is in the transcript, not only in a file.
    assert "Envelope: unruled calls stop for approval" in text, turn.describe()
    assert "Intent: report home" in text, turn.describe()
    [fired] = missions(instance)
    assert (fired.agent, fired.envelope) == ("run", RUN_ENVELOPE)


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_the_fired_units_reports_stream_back_into_the_session(instance: Instance) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} run report home")
    assert "reported (result): slash mission home" in turn.text, turn.describe()
    assert "landed" in turn.text, turn.describe()
    [fired] = missions(instance)
    assert fired.status == "landed"


def test_policy_equals_form_is_accepted(instance: Instance) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy={RUN_ENVELOPE} run report home")
    assert f'under envelope "{RUN_ENVELOPE}" (--policy)' in turn.text, turn.describe()
    assert [m.envelope for m in missions(instance)] == [RUN_ENVELOPE]


@defect(
    "over `contenox acp`, `/mission --policy run run report home` answers '⚠️  unknown mission "
    'envelope "run" (--policy): no such policy file on the search path. Available: …, '
    "hitl-policy-run.json, …' and fires nothing, while `contenox mission fire run … --policy run "
    "--wait` and `contenox run --policy run` accept the same envelope name; contenox-cli.md "
    "The /mission slash command: '`/mission --policy <envelope> [agent-name] <intent>` — bounds "
    "this one mission under a different envelope' and 'Envelopes are discovered the way the "
    "runtime's policy loader resolves them'"
)
def test_policy_takes_the_envelope_name_the_runtime_resolves(instance: Instance) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission --policy run run report home")
    assert "unknown mission envelope" not in turn.text, turn.describe()
    assert [m.envelope for m in missions(instance)], turn.describe()


def test_an_unknown_envelope_is_refused_with_the_available_names_and_nothing_fires(
    instance: Instance,
) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission --policy nosuch run report home")
    assert 'unknown mission envelope "nosuch"' in turn.text, turn.describe()
    assert "Available: hitl-policy-acp.json" in turn.text, turn.describe()
    assert RUN_ENVELOPE in turn.text, turn.describe()
    assert missions(instance) == []


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_a_double_dash_after_the_intent_starts_stays_literal_text(instance: Instance) -> None:
    # function: needs acp
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} run report -- --policy strict")
    assert "Intent: report -- --policy strict" in turn.text, turn.describe()
    assert [m.envelope for m in missions(instance)] == [RUN_ENVELOPE]


def test_a_mission_with_no_agent_is_refused(instance: Instance) -> None:
    # function: needs acp
    _setup(instance, default_mission_policy=RUN_ENVELOPE)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission report home")
    assert "no mission agent" in turn.text, turn.describe()
    assert missions(instance) == []


def test_a_mission_with_no_envelope_is_refused(instance: Instance) -> None:
    # function: needs acp
    _setup(instance, default_mission_agent="run")
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission report home")
    assert "Mission fired" not in turn.text, turn.describe()
    assert "envelope" in turn.text, turn.describe()
    assert missions(instance) == []


def test_an_envelope_added_mid_session_is_offered_on_the_next_mission(instance: Instance) -> None:
    # function: needs acp and a file written between two prompts
    _setup(instance)
    policy = _rendered(instance, RUN_ENVELOPE)
    with open_acp(instance) as acp:
        before = acp.prompt("/mission")
        assert "hitl-policy-mine.json" not in before.text, before.describe()
        (instance.home / ".contenox" / "hitl-policy-mine.json").write_text(json.dumps(policy))
        after = acp.prompt("/mission")
    assert "hitl-policy-mine.json  unruled calls stop for approval" in after.text, after.describe()


def test_a_top_level_envelope_shadows_the_rendered_one_of_the_same_name(
    instance: Instance,
) -> None:
    # function: needs a policy derived from what init rendered
    _setup(instance)
    policy = _rendered(instance, RUN_ENVELOPE)
    policy["default_action"] = "deny"
    (instance.home / ".contenox" / RUN_ENVELOPE).write_text(json.dumps(policy))
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission")
    listed = [line for line in turn.text.splitlines() if line.strip().startswith(RUN_ENVELOPE)]
    assert len(listed) == 1, turn.describe()
    assert "unruled calls are denied" in listed[0], turn.describe()


@defect(
    "over `contenox acp` (session cwd = the workspace, after `contenox init`), a "
    "`hitl-policy-workone.json` written to the workspace `.contenox/` is not among the "
    "envelopes bare `/mission` lists, while the same file in `~/.contenox/` is listed "
    "('hitl-policy-homeone.json  unruled calls stop for approval · …'); contenox-cli.md The "
    "/mission slash command: 'Envelopes are discovered the way the runtime's policy loader "
    "resolves them — the workspace `.contenox/`, then `~/.contenox/`, then each of their "
    "`.generated/` directories, first match wins'"
)
def test_an_envelope_in_the_workspace_contenox_dir_is_offered(instance: Instance) -> None:
    # function: needs a policy derived from what init rendered
    _setup(instance)
    policy = _rendered(instance, RUN_ENVELOPE)
    instance.write(".contenox/hitl-policy-workone.json", json.dumps(policy))
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission")
    assert "hitl-policy-workone.json  unruled calls stop for approval" in turn.text, turn.describe()


def test_acpx_never_offers_mission(instance: Instance) -> None:
    # function: needs acp
    instance.init()
    instance.use_script(Script(turns=["No mission here."]))
    with open_acp(instance, subcommand="acpx") as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} run report home")
    offered = [
        c.get("name")
        for u in turn.updates_of("available_commands_update")
        for c in u.get("availableCommands") or []  # type: ignore[union-attr]
        if isinstance(c, dict)
    ]
    assert offered and "mission" not in offered, turn.describe()
    assert "Mission fired" not in turn.text, turn.describe()
    assert missions(instance) == []


def _user_chain_agent(instance: Instance) -> None:
    chain = _rendered(instance, "chain-agent-run.json")
    chain["id"] = "mine"
    # In ~/.contenox/: the ACP session does not read the workspace .contenox/ (see above).
    (instance.home / ".contenox" / "chain-agent-mine.json").write_text(json.dumps(chain))


@defect(
    "with `opt-in-beta` unset, over `contenox acp`, `/mission --policy hitl-policy-run.json mine "
    "report home` (mine = a user-authored `~/.contenox/chain-agent-mine.json`, a copy of the "
    "rendered run chain) fires it ('Mission fired at named agent \"mine\"') and it lands; "
    "contenox-cli.md The /mission slash command: 'naming a user-authored agent (a custom "
    "`chain-agent-*` chain) requires `contenox config set opt-in-beta true`'"
)
def test_naming_a_user_authored_chain_agent_needs_opt_in_beta(instance: Instance) -> None:
    # function: needs acp and a chain derived from what init rendered
    _setup(instance)
    _user_chain_agent(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} mine report home")
    assert 'named agent "mine"' not in turn.text, turn.describe()
    assert [m.agent for m in missions(instance)] != ["mine"], turn.describe()


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_naming_a_user_authored_chain_agent_fires_it_with_opt_in_beta(instance: Instance) -> None:
    # function: needs acp and a chain derived from what init rendered
    _setup(instance, opt_in_beta="true")
    _user_chain_agent(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} mine report home")
    assert 'Mission fired at named agent "mine"' in turn.text, turn.describe()
    assert [m.agent for m in missions(instance)] == ["mine"], turn.describe()
