"""The `/mission` slash command, typed into an editor session over `contenox acp`.

contenox-cli.md `### The /mission slash command`. The fired unit is a child of the acp
process and replays the same dialog from its first turn (a new process starts a script at
turn 0).
"""

from __future__ import annotations

import json
import re

import pytest

from harness import (
    Case,
    Defect,
    Instance,
    Probe,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    prompt,
    satisfies,
    step,
    wait_until,
    write,
)
from harness.probes import approve, await_approval, missions

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


def _landed(instance: Instance) -> list[str]:
    """The missions' statuses once none is open: the unit, a child of the acp process, ends."""
    wait_until(
        lambda: [m for m in missions(instance) if m.status != "open"] or None,
        timeout=120,
        interval=0.5,
        what="the mission fired from the editor to finish",
    )
    return [m.status for m in missions(instance)]


# Kept before the editor session closes, so the fired unit is not torn down mid-dialog.
LANDED = probe("the fired mission, once it ends", _landed, expect=["landed"])


def _fired(expect: object) -> Probe:
    """(agent, envelope, status) of every mission, once the editor session has closed."""
    return probe(
        "missions fired",
        lambda i: [(m.agent, m.envelope, m.status) for m in missions(i)],
        expect=expect,
    )


BARE_MISSION_PRINTS_THE_GRAMMAR = Case(
    name="bare mission fires nothing and prints grammar defaults and every envelope",
    script=LANDS,
    steps=[
        prompt(
            "/mission",
            text_has=[
                "/mission <intent>",
                "/mission <agent-name> <intent>",
                "/mission --policy <envelope> [agent] <intent>",
                "Default agent:",
                "Default envelope:",
                # Every envelope with its character: unmatched calls, ceiling, who answers.
                f"{RUN_ENVELOPE}  unruled calls stop for approval",
                "hitl-policy-strict.json  unruled calls are denied",
                "questions always wait for a human",
                "an agent may answer 3 questions",
            ],
        )
    ],
    probes=[_fired([])],
)

BARE_MISSION_SHOWS_THE_DEFAULTS = Case(
    name="bare mission shows the defaults in force",
    script=LANDS,
    steps=[
        step("config", "set", "default-mission-agent", "run"),
        step("config", "set", "default-mission-policy", RUN_ENVELOPE),
        prompt(
            "/mission",
            text_has=[
                re.compile(r"^\s*Default agent:\s+run\s*$", re.M),
                re.compile(rf"^\s*Default envelope:\s+{re.escape(RUN_ENVELOPE)}\s*$", re.M),
            ],
        ),
    ],
)

DEFAULTS = {"default-mission-agent": "run", "default-mission-policy": RUN_ENVELOPE}

# snapshot=False: its transcript differed between two clean runs on 2026-11-30 (a loopback
# port, a racy captured state): redact what is volatile, then drop it.
MISSION_INTENT_FIRES_THE_DEFAULTS = Case(
    name="mission intent fires the default agent under the default envelope",
    script=LANDS,
    steps=[
        *(step("config", "set", key, value) for key, value in DEFAULTS.items()),
        prompt(
            "/mission summarise the tree",
            text_has=[
                'agent "run"',
                f'envelope "{RUN_ENVELOPE}"',
                "(default-mission-policy)",
                # The first token missed the registry: the whole line is the intent.
                "Intent: summarise the tree",
            ],
        ),
        LANDED,
    ],
    probes=[
        probe(
            "missions fired",
            lambda i: [(m.agent, m.envelope) for m in missions(i)],
            expect=[("run", RUN_ENVELOPE)],
        )
    ],
    snapshot=False,
)

# snapshot=False: as above.
MISSION_AGENT_INTENT_FIRES_THE_NAMED_AGENT = Case(
    name="mission agent intent fires the named agent and says so",
    script=LANDS,
    steps=[
        prompt(
            f"/mission --policy {RUN_ENVELOPE} run report home",
            text_has=[
                f'Mission fired at named agent "run" under envelope "{RUN_ENVELOPE}" (--policy).',
                # The envelope's character is in the transcript, not only in a file.
                "Envelope: unruled calls stop for approval",
                "Intent: report home",
            ],
        ),
        LANDED,
    ],
    probes=[
        probe(
            "missions fired",
            lambda i: [(m.agent, m.envelope) for m in missions(i)],
            expect=[("run", RUN_ENVELOPE)],
        )
    ],
    snapshot=False,
)


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
# function: the unit's reports race the end of the firing turn (a Case's prompt() saw them
# in one run and not in the next, in neither the firing turn nor the one after)
def test_the_fired_units_reports_stream_back_into_the_session(instance: Instance) -> None:
    _setup(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} run report home")
    assert "reported (result): slash mission home" in turn.text, turn.describe()
    assert "landed" in turn.text, turn.describe()
    [fired] = missions(instance)
    assert fired.status == "landed"


def _envelopes_fired(expect: object) -> Probe:
    return probe("envelopes fired", lambda i: [m.envelope for m in missions(i)], expect=expect)


# snapshot=False: the unit's report chunks stream into the firing turn's text or after it,
# as the race goes, so two clean runs record different agent text.
POLICY_EQUALS_FORM_IS_ACCEPTED = Case(
    name="policy equals form is accepted",
    script=LANDS,
    steps=[
        prompt(
            f"/mission --policy={RUN_ENVELOPE} run report home",
            text_has=[f'under envelope "{RUN_ENVELOPE}" (--policy)'],
        ),
        LANDED,
    ],
    probes=[_envelopes_fired([RUN_ENVELOPE])],
    snapshot=False,
)

POLICY_TAKES_THE_ENVELOPE_NAME = Case(
    name="policy takes the envelope name the runtime resolves",
    script=LANDS,
    steps=[
        prompt("/mission --policy run run report home", text_lacks=["unknown mission envelope"])
    ],
    probes=[_envelopes_fired(satisfies(bool, "a mission fired"))],
    defect=Defect(
        title="/mission --policy refuses the envelope name the runtime resolves",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            'home: real. Saw: ACP: \'⚠️ unknown mission envelope "run" (--policy): no such policy '
            "file on the search path. Available: hitl-policy-acp.json, …, hitl-policy-run.json, "
            "…', stopReason end_turn, no mission. mission fire: 'Mission fired at agent \"run\" "
            "under envelope \"run\".' … 'finished: landed', exit 0. Control: 'Mission fired "
            "at named"
            ' agent "run" under envelope "hitl-policy-run.json" (--policy).\' Note: Reproduces. '
            "/mission takes only the file name (hitl-policy-run.json). mission fire resolves the "
            "bare envelope name 'run', and so does `run --policy run` (used in G2/G4). No page "
            "says /mission needs the file name. The bare-name refusal documented at "
            "contenox-cli.md:304 is for a different command (the trusted-binaries --policy)."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox acp   # ACP client: session/new, prompt '/mission --policy run "
            "run report home'\n"
            '# ⚠️  unknown mission envelope "run" (--policy): no such policy file on '
            "the search path. Available: …, hitl-policy-run.json, …\n"
            'contenox mission fire run "report home" --policy run --wait   # '
            "accepted (so is run --policy run)"
        ),
        promised=(
            'reference/contenox-cli.md:643 "bounds this one mission under a different envelope"'
        ),
        observed="/mission refuses 'run' and fires nothing; mission fire and run accept it",
        bears_on=(
            (
                'reference/contenox-cli.md:645 "Envelopes are discovered the way the '
                "runtime's policy loader resolves them\""
            ),
        ),
    ),
)

AN_UNKNOWN_ENVELOPE_IS_REFUSED = Case(
    name="an unknown envelope is refused with the available names and nothing fires",
    script=LANDS,
    steps=[
        prompt(
            "/mission --policy nosuch run report home",
            text_has=[
                'unknown mission envelope "nosuch"',
                "Available: hitl-policy-acp.json",
                RUN_ENVELOPE,
            ],
        )
    ],
    probes=[_fired([])],
)

# snapshot=False: as above.
A_DOUBLE_DASH_STAYS_LITERAL = Case(
    name="a double dash after the intent starts stays literal text",
    script=LANDS,
    steps=[
        prompt(
            f"/mission --policy {RUN_ENVELOPE} run report -- --policy strict",
            text_has=["Intent: report -- --policy strict"],
        ),
        LANDED,
    ],
    probes=[_envelopes_fired([RUN_ENVELOPE])],
    snapshot=False,
)

A_MISSION_WITH_NO_AGENT_IS_REFUSED = Case(
    name="a mission with no agent is refused",
    script=LANDS,
    steps=[
        step("config", "set", "default-mission-policy", RUN_ENVELOPE),
        prompt("/mission report home", text_has=["no mission agent"]),
    ],
    probes=[_fired([])],
)

A_MISSION_WITH_NO_ENVELOPE_IS_REFUSED = Case(
    name="a mission with no envelope is refused",
    script=LANDS,
    steps=[
        step("config", "set", "default-mission-agent", "run"),
        prompt("/mission report home", text_has=["envelope"], text_lacks=["Mission fired"]),
    ],
    probes=[_fired([])],
)


# function: reads the available_commands_update, which prompt() does not expose
def test_acpx_never_offers_mission(instance: Instance) -> None:
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
    Defect(
        title="/mission fires a user-authored chain agent without opt-in-beta",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            'home: docs disagree. Saw: \'Mission fired at named agent "mine" under envelope '
            "\"hitl-policy-run.json\" (--policy).' … 'unit mine reported (result): mine reporting "
            "home', 'unit mine landed'; mission list: 'mine hitl-policy-run.json landed' Note: "
            "Reproduces exactly. This is the same contradiction as F1 inside the reference (:258 "
            "against :530/:649); the report lists no bears_on, but :258 describes the opt-in as "
            "covering only the event tier and the doctor line, which is what the binary does. Same"
            " root as F1."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# ~/.contenox/chain-agent-mine.json: a copy of the rendered run chain "
            "with id 'mine'; opt-in-beta unset\n"
            "contenox acp   # ACP client: session/new, prompt '/mission --policy "
            "hitl-policy-run.json mine report home'\n"
            '# Mission fired at named agent "mine"; it lands'
        ),
        promised=(
            'reference/contenox-cli.md:649 "naming a user-authored agent (a custom '
            '`chain-agent-*` chain) requires `contenox config set opt-in-beta true`"'
        ),
        observed="the mission is fired and lands",
        bears_on=(
            'reference/contenox-cli.md:258 "What `contenox config set opt-in-beta true` (or '
            "`CONTENOX_OPT_IN_BETA=1`) does turn on is the … event-trigger tier … and the "
            'beta line `contenox doctor` prints."',
        ),
        docs_disagree=True,
    )
)
# docs disagree: contenox-cli.md:649 gates naming a user-authored chain agent on
# opt-in-beta; contenox-cli.md:258 says the opt-in turns on only the event tier and the
# doctor line. v1.0.0 does as :258 says: with the beta unset /mission fires it.
# function: derives its chain from the one init rendered
def test_naming_a_user_authored_chain_agent_fires_it_without_opt_in_beta(
    instance: Instance,
) -> None:
    instance.init()
    # No mission_report turn: a report and the landing reach the session in either order.
    instance.use_script(Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Done."]))
    _user_chain_agent(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} mine report home")
    assert 'Mission fired at named agent "mine"' in turn.text, turn.describe()
    assert [m.agent for m in missions(instance)] == ["mine"], turn.describe()


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
# function: derives its chain from the one init rendered
def test_naming_a_user_authored_chain_agent_fires_it_with_opt_in_beta(instance: Instance) -> None:
    _setup(instance, opt_in_beta="true")
    _user_chain_agent(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt(f"/mission --policy {RUN_ENVELOPE} mine report home")
    assert 'Mission fired at named agent "mine"' in turn.text, turn.describe()
    assert [m.agent for m in missions(instance)] == ["mine"], turn.describe()


# ------------------------------------------------------------- w44: recurring-work.md

# The tutorial's declaration without its `tools:` line, which v1.0.0 refuses on its own
# (guide/tutorials/recurring-work.md's first row, quarantined in test_tutorials.py).
TIMESHEET = """---
name: timesheet
description: Files this week's tracked hours to the timesheet system
---

You file weekly timesheets.
"""

# docs disagree: recurring-work.md:164 (and agents.md:146) say bare `/mission` lists a
# declared agent; the contract, contenox-cli.md:640, says it prints the grammar, the
# defaults in force and every envelope. v1.0.0 prints exactly that and names no agent.
BARE_MISSION_LISTS_ENVELOPES_BUT_NO_DECLARED_AGENT = Case(
    name="bare mission lists envelopes but not a declared agent like the tutorial s timesheet",
    script=LANDS,
    serves_all_turns=False,
    files={".contenox/agents/timesheet.md": TIMESHEET},
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"timesheet\s+discovered\s+chain\s+true")]),
        prompt(
            "/mission",
            text_has=[
                "Fire a mission from this session:",
                "Default agent:",
                "Envelopes (--policy <name>):",
                RUN_ENVELOPE,
            ],
            text_lacks=["timesheet"],
        ),
    ],
    probes=[_fired([])],
    defect=Defect(
        title="bare /mission lists no declared agent",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: agent list: 'timesheet discovered chain true'; /mission "
            "reply: grammar, 'Default agent: (none — …)', 'Default envelope: (none — …)', "
            "'Envelopes (--policy <name>):' + 15 hitl-policy-*.json lines; no agent named (neither"
            " timesheet nor any other) Note: Reproduces. Text gaps: the report's reproduce "
            "configures no backend, and session/new refuses without a default-model, so I added "
            "the scripted backend; the tutorial's own timesheet.md (tools: read_file, write_file) "
            "is refused by agent list ('none of this declaration's tools resolve'), so I dropped "
            "the tools: line to get 'discovered'. Neither affects the listing. The binary matches "
            "the reference ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# .contenox/agents/timesheet.md: a declared agent (`contenox agent "
            "list`: 'timesheet  discovered  chain  true')\n"
            "contenox acp   # ACP client: initialize, session/new {cwd: "
            "<workspace>}, prompt '/mission'\n"
            "# prints the grammar, 'Default agent: (none …)', 'Default envelope: "
            "(none …)', 'Envelopes (--policy <name>):' — no agent"
        ),
        promised=(
            'guide/tutorials/recurring-work.md:164 "From an editor over ACP, `/mission` lists it."'
        ),
        observed=(
            "the listing names every envelope and no agent; its own hint is "
            "'[--policy <envelope>] [agent-name] <intent>'"
        ),
        bears_on=(
            (
                'reference/contenox-cli.md:640 "`/mission` — fires nothing. Prints the grammar, '
                "the defaults in force, and every envelope on the policy search path with its "
                'character"'
            ),
            (
                'reference/contenox-cli.md:645 "Envelopes are discovered the way the '
                "runtime's policy loader resolves them\""
            ),
        ),
        docs_disagree=True,
    ),
)


# ---------------------------------------------------- w44: the oracle covers /mission subagents

# A declared agent whose unit makes one gated call: `echo` is named by no rule of the envelope
# below, so it stops for approval (a permission ask the oracle may rule on).
ECHOER = """---
name: echoer
description: Echoes once, then reports
---

You echo once, then report.
"""
ECHO_ONCE = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi there"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the ruling")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Done.", optional=True),
    ]
)
ORACLE_MODEL = "oracle-model"
# The oracle's side. Its verdict must quote the durable ask id, `<call id>-<4 hex>` with a
# suffix that differs run to run (q1-4995, q1-811d, q1-d4e1 for one scripted call id `q1`), so
# no scripted verdict can name it: this one is refused, and the chain ends without a ruling.
ORACLE = Script(
    model=ORACLE_MODEL,
    turns=[
        Turn(tool_calls=[ToolCall("submit_verdict", {"verdict": "wait", "askId": "unknowable"})])
    ],
    # What the chain asks after the refusal varied from run to run (its correction and recovery
    # rounds); an exhausted dialog ends it the same way each time: no verdict, the ask stays.
    runs_past_end=True,
)


def _oracle_on_its_own_model(instance: Instance) -> None:
    """`chain-oracle-pinned.json`: the shipped oracle chain, served by the oracle's dialog.

    The shipped chain runs on the default model, which the fired unit uses too; each process
    replays a dialog from its first turn, so the two would read the same turns.
    """
    shipped = instance.home / ".contenox" / "system" / "chain-oracle-default.json"
    pinned = (
        shipped.read_text(encoding="utf-8")
        .replace("{{var:model}}", ORACLE_MODEL)
        .replace("{{var:provider}}", "scripted-test")
    )
    (instance.home / ".contenox" / "chain-oracle-pinned.json").write_text(pinned)


# function: reads the acp host's own stderr (the oracle's notices) while the fired unit waits,
# answers the ask from a second process, and derives its envelope and chain from rendered files
def test_the_oracle_from_default_oracle_chain_reviews_the_asks_of_a_mission_fired_subagent(
    instance: Instance,
) -> None:
    instance.init()
    (instance.home / ".contenox" / "agents" / "echoer.md").write_text(ECHOER)
    instance.use_script(ECHO_ONCE)
    instance.use_script(ORACLE, name="oracle", filename="oracle.json", make_default=False)
    _oracle_on_its_own_model(instance)
    instance.must("config", "set", "default-oracle-chain", "chain-oracle-pinned.json")
    instance.must("config", "set", "oracle-approves-tool-calls", "true")
    # The default envelope, granting the oracle the unit's gated calls (attention bounds).
    policy = _rendered(instance, "hitl-policy-default.json")
    policy["attention"] = {
        "allowAgentAnswers": True,
        "maxAgentAnswers": 3,
        "allowAgentApprovals": True,
    }
    (instance.home / ".contenox" / "hitl-policy-oracled.json").write_text(json.dumps(policy))

    with open_acp(instance, permission="defer") as acp:
        fired = acp.prompt("/mission --policy hitl-policy-oracled.json echoer echo it")
        assert 'Mission fired at named agent "echoer"' in fired.text, fired.describe()
        ask = await_approval(instance, 60, tool="native-echo.echo")
        [mission] = missions(instance)
        instance.recorder.name(ask.id, "[ASK]")
        instance.recorder.name(mission.id, "[MISSION]")
        # The host the session runs on handed the subagent's ask to its oracle.
        acp.process.wait_for_output(
            f"oracle: reviewing permission ask {ask.id} (subagent {mission.id})", timeout=60
        )
        # Its scripted verdict could not name the ask (see ORACLE): the ask stays with a human.
        notices = acp.process.wait_for_output(f"oracle: no verdict for ask {ask.id}", timeout=60)
        instance.recorder.note(
            "acp notices: "
            + " | ".join(
                re.sub(r"\(\d+(?:\.\d+)?[mµn]?s\)", "([DURATION])", line.strip())
                for line in notices.splitlines()
                if line.startswith("oracle:") or line.startswith("Oracle mounted")
            )
        )
        approve(instance, ask.id)
        statuses = _landed(instance)
    assert statuses == ["landed"], statuses


# ------------------------------------------------------------- w44: envelopes as written files

MINE = '{"default_action": "approve", "rules": []}\n'
DENYING = '{"default_action": "deny", "rules": []}\n'

AN_ENVELOPE_ADDED_MID_SESSION_IS_OFFERED_ON_THE_NEXT_MISSION = Case(
    name="an envelope added mid session is offered on the next mission",
    script=LANDS,
    steps=[
        prompt("/mission", text_lacks=["hitl-policy-mine.json"]),
        write("hitl-policy-mine.json", MINE, home=True),
        prompt("/mission", text_has=["hitl-policy-mine.json  unruled calls stop for approval"]),
    ],
)

A_TOP_LEVEL_ENVELOPE_SHADOWS_THE_RENDERED_ONE_OF_THE_SAME_NAME = Case(
    name="a top level envelope shadows the rendered one of the same name",
    script=LANDS,
    steps=[
        # ~/.contenox/hitl-policy-run.json beside the rendered .generated/ one of that name.
        write(RUN_ENVELOPE, DENYING, home=True),
        prompt(
            "/mission",
            text_has=[f"{RUN_ENVELOPE}  unruled calls are denied"],
            text_lacks=[f"{RUN_ENVELOPE}  unruled calls stop for approval"],
        ),
    ],
)

AN_ENVELOPE_IN_THE_WORKSPACE_CONTENOX_DIR_IS_OFFERED = Case(
    name="an envelope in the workspace contenox dir is offered",
    script=LANDS,
    steps=[
        write(".contenox/hitl-policy-workone.json", MINE),
        prompt("/mission", text_has=["hitl-policy-workone.json  unruled calls stop for approval"]),
    ],
    defect=Defect(
        title="bare /mission does not offer an envelope in the workspace .contenox/",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, scripted default. Workspace "
            ".contenox/hitl-policy-workone.json and ~/.contenox/hitl-policy-homeone.json, "
            "both {version 1, default_action approve, rules []}. I drove `contenox acp` "
            "with my own Python client: initialize, session/new {cwd: workspace}, "
            "session/prompt '/mission'. The reply (stopReason end_turn) listed 'Envelopes "
            "(--policy <name>):' with 'hitl-policy-homeone.json  unruled calls stop for "
            "approval · questions always wait for a human' first, then the 15 rendered "
            "envelopes (acp, acpx, …, triage). hitl-policy-workone.json was not in the "
            "list. Note: contenox-cli.md:645 says /mission discovers envelopes the way the "
            "policy loader resolves them, workspace .contenox/ first; hitl.md:379 says the "
            "same. The workspace copy is left out. This fits S4 and S9, where the unit also "
            "i..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            'echo \'{"version":1,"default_action":"approve","rules":[]}\' > '
            ".contenox/hitl-policy-workone.json\n"
            "cp .contenox/hitl-policy-workone.json "
            "~/.contenox/hitl-policy-homeone.json\n"
            "contenox acp   # ACP client: initialize, session/new {cwd: "
            "<workspace>}, prompt '/mission'\n"
            "# the list has 'hitl-policy-homeone.json  unruled calls stop for "
            "approval · …', no hitl-policy-workone.json"
        ),
        promised=(
            'reference/contenox-cli.md:645 "Envelopes are discovered the way the '
            "runtime's policy loader resolves them\""
        ),
        observed="the workspace's envelope is missing from the list; the home's is there",
    ),
)
