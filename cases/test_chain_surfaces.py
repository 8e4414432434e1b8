"""Chains reached through a surface rather than `chat --chain`: the agentic-loop page's
derived review loop fired as a mission, the ACP surface's per-launch chain override, and a
declared router whose classifier fails (guide/agents.md).
"""

from __future__ import annotations

import json
import re

from chains import END, chain, task
from test_agents_page import _prompt_has, _prompt_lacks, _run, _tree
from test_chains import DIFFREVIEW
from test_events_page import LANDS, REPORT, dispatch_until, trigger

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    probes,
    prompt,
    step,
)
from harness.case import Step, model_saw, open_envelope_step
from harness.servers.wiring import OPEN_ENVELOPE

# ------------------------------------------------------------ guide/chains/agentic-loop.md

# The page's fire carries no --policy; the reference pages say such a fire is refused. The
# control is the same fire with only the envelope changed (--policy naming an allow-all one):
# it runs, and the chain's own local_shell runs git. `git diff --no-index` over two files the
# case writes, so the diff the model is sent is the case's own, not the scratch tree's.
_DIFF = ToolCall(
    "local_shell",
    {"command": "git", "args": ["diff", "--no-index", "before.txt", "after.txt"]},
)


def _fire(*policy: str, **expect: object) -> Step:
    return step(
        "mission",
        "fire",
        "chain-agent-diffreview",
        "review the current diff",
        *policy,
        "--wait",
        "--timeout",
        "60s",
        **expect,
    )


THE_DERIVED_LOOP_FIRES_AS_PRINTED = Case(
    name="the derived review loop fired as the page prints it is refused without a policy",
    defect=Defect(
        title=(
            "agentic-loop.md fires the review loop without --policy; contenox-cli.md and "
            "missions.md say such a fire is refused"
        ),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: fire chain-agent-diffreview "
            '"review the current diff" --wait (no default-mission-policy) -> '
            "'Error: no mission envelope: pass --policy <policy>, or set a "
            "default …', exit 1; with --policy e2e_open: 'Mission fired at agent "
            '"chain-agent-diffreview" under envelope "e2e_open".\' Note: Chain '
            "copied verbatim from agentic-loop.md:100-152; control envelope "
            '[envelopes.e2e_open] default_action="allow". In my control the '
            'scripted local_shell {command:"git diff"} was refused by the chain\'s'
            " allowlist ('not in this chain's allowed commands (git, go)') — my "
            "dialog's argument form, not the point. The binary follows contenox-"
            "cli.md:523 and missions.md:44; agentic-loop.md:157 omits --policy."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# the page's chain-agent-diffreview.json in .contenox/\n"
            'contenox mission fire chain-agent-diffreview "review the current diff" '
            '--wait; echo "exit $?"\n'
            "# Error: no mission envelope: pass --policy <policy>, or set a default "
            "with\n"
            "#   `contenox config set default-mission-policy <policy>`\n"
            "# exit 1, nothing runs\n"
            "# control: an allow-all [envelopes.e2e_open] in ~/.contenox/agents.toml, then\n"
            'contenox mission fire chain-agent-diffreview "review the current diff" '
            "--policy e2e_open --wait\n"
            "# Mission fired; the unit's local_shell runs git and the model is sent its diff"
        ),
        promised=(
            'guide/chains/agentic-loop.md:155 "fire it, and let its own '
            '`local_shell` run the `git diff`"'
        ),
        observed=(
            "exit 1 'no mission envelope: pass --policy <policy>…', as "
            "contenox-cli.md and missions.md document; with --policy the same fire runs "
            "its git diff"
        ),
        bears_on=(
            ('reference/contenox-cli.md:523 "(default: `default-mission-policy` config)"'),
            ('guide/missions.md:44 "If neither is set, the fire is refused rather than guessing."'),
        ),
        docs_disagree=True,
    ),
    script=Script(
        turns=[
            Turn(text="Reading the diff.", tool_calls=[_DIFF]),
            "No changes to review.",
        ],
        runs_past_end=True,
    ),
    files={
        ".contenox/chain-agent-diffreview.json": DIFFREVIEW,
        "before.txt": "unchanged\n",
        "after.txt": "unchanged\nreviewed-line-7731\n",
    },
    steps=[
        # As the page prints it: no --policy, no default-mission-policy.
        _fire(exit_code=1, stderr_has=["no mission envelope"], stdout_lacks=["Mission fired"]),
        # The control: only the envelope changed.
        open_envelope_step(),
        _fire("--policy", OPEN_ENVELOPE, exit_code=None, notices_lacks=["no mission envelope"]),
    ],
    probes=[model_saw("+reviewed-line-7731")],
)

# ------------------------------------------------ guide/chains/naming.md: the ACP override

ONE_TASK = chain(task("answer", transition=END), chain_id="my-acp")


def test_contenox_acp_chain_path_makes_acp_run_that_chain_instead_of_the_home_one(
    instance: Instance,
) -> None:
    # function: the ACP agent is launched with an environment variable, which a Case's
    # prompt step does not set
    instance.init()
    path = instance.tmp / "elsewhere" / "my-acp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ONE_TASK, encoding="utf-8")
    # One plain turn: the shipped `acp` chain is a router and would read it as a label, then
    # run past the end of the dialog; a one-task chain answers with it.
    instance.use_script(Script(turns=["answered by my chain"]))
    with open_acp(instance, env={"CONTENOX_ACP_CHAIN_PATH": str(path)}) as acp:
        turn = acp.prompt("hello")
        assert turn.stop_reason == "end_turn", turn.describe()
        assert "answered by my chain" in turn.text, turn.describe()


# ------------------------------------------------------- guide/agents.md: a failing classifier

# The classifier is a prompt execution, which needs a turn with text: a tool-call-only turn is
# refused by the backend naming the turn (scripted-test-backend.md), so the classifier fails.
FAILING_CLASSIFIER_TAKES_DEFAULT = Case(
    name="a classifier that fails takes the default branch",
    script=Script(
        turns=[
            Turn(tool_calls=[ToolCall("echo", {"input": "not a label"})]),
            Turn(text="Filing.", tool_calls=[mission_report("result", "went to the default")]),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files=_tree("default: docs\n"),
    steps=[_run("sorter")],
    probes=[_prompt_has("BRANCH-DOCS"), _prompt_lacks("BRANCH-CODE")],
)


# ------------------------------------- guide/chains/naming.md: the compact chain, by name

COMPACT_MARKER = "WORKSPACE-COMPACT: summarise the conversation in one line."
WORKSPACE_COMPACT = chain(
    task("compact_history", system_instruction=COMPACT_MARKER, transition=END),
    chain_id="chain-compact",
)


def _summarizers(instance: Instance) -> list[str]:
    """Which compact chain's prompt was sent, over every captured run (the chats' prompts
    are neither and are left out)."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for sent in probes.system_prompts_of(probes.captured_units(instance, run)):
            if COMPACT_MARKER in sent:
                seen.append("the workspace compact chain")
            elif "specialized conversation summarizer" in sent:
                seen.append("the shipped compact chain")
    return seen


THE_WORKSPACE_COMPACT_CHAIN_WINS = Case(
    name="session fork summary compacts with the workspace copy of the compact chain",
    # Each command is its own process, so each is served the dialog's one turn from the top.
    script=Script(turns=["Noted."]),
    files={".contenox/chain-compact-default.json": WORKSPACE_COMPACT},
    steps=[
        step("chat", "remember the first thing"),
        step("chat", "remember the second thing"),
        step(
            "session",
            "fork",
            "--summary",
            "--keep",
            "1",
            stdout_has=[re.compile(r"Forked \d+ messages to session .* \(compacted to 2\)")],
        ),
    ],
    probes=[probe("compaction prompts sent", _summarizers, expect=["the workspace compact chain"])],
)


# ------------------------------------ guide/chains/routing.md: reading which branch ran

TWO_STEPS = json.dumps(
    {
        "id": "on-event",
        "description": "two steps a reader should see",
        "tasks": [
            {
                "id": "sort_the_event",
                "handler": "noop",
                "transition": {
                    "branches": [{"operator": "default", "when": "", "goto": "file_the_event"}]
                },
            },
            {
                "id": "file_the_event",
                "handler": "noop",
                "transition": {"branches": [{"operator": "default", "when": "", "goto": "end"}]},
            },
        ],
    }
)


@defect(
    Defect(
        title="`contenox events` does not show which tasks a dispatched run took",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: events firings: '1  on-report  ok  "
            "evt-82faaf666a06f3e5  2026-12-02T12:44:27Z' (no task); events list: "
            "only report_added / status_changed domain events; 'state show "
            "evt-82faaf666a06f3e5' is the only place listing sort_the_event and "
            "file_the_event Note: I added opt-in-beta true, ~/.contenox/trigger-"
            "on-report.json and chain-on-report.json (two noop tasks), and filed "
            "the report_added event with a scripted run (mission_report / "
            "mission_finish / text). The firing showed as ok, probably fired live"
            " by the run. guide/events.md:145 documents the firings columns (nid,"
            " trigger, status, request id, time, error) with no task, so only "
            "routing.md:89 claims events shows the journey."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# a trigger on report_added firing a two-task chain: noop "
            "sort_the_event -> noop file_the_event\n"
            "contenox events dispatch --auto     # prints: fired on-report … "
            "status=ok\n"
            "contenox events firings             # NID TRIGGER STATUS REQUEST TIME "
            "ERROR: the request id, no task\n"
            "contenox events list                # domain events only\n"
            "contenox state show <request>       # the only place sort_the_event and "
            "file_the_event appear"
        ),
        promised=(
            'guide/chains/routing.md:89 "`contenox events` shows the same journey '
            'for a dispatched run"'
        ),
        observed=(
            "neither `events firings` nor `events list` names a task of the run; "
            "only `state show` does"
        ),
    )
)
def test_contenox_events_shows_which_tasks_a_dispatched_run_took(instance: Instance) -> None:
    # function: needs dispatch running until its firing line appears
    instance.init()
    instance.use_script(LANDS)
    instance.must("config", "set", "opt-in-beta", "true")
    instance.must("run", "--policy", "run", "report home")
    instance.write(".contenox/chain-on-event.json", TWO_STEPS)
    instance.write(".contenox/trigger-on-report.json", trigger("on-report", REPORT))
    dispatch_until(instance, "fired on-report")
    shown = "\n".join(instance.must("events", *args).stdout for args in (("firings",), ("list",)))
    assert "sort_the_event" in shown and "file_the_event" in shown, shown


# ---------------------------------- guide/agents.md: the skills of an agent compiled from home


def _skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nDo it.\n"


def _skills_sent(instance: Instance) -> list[str]:
    """The skill entries (`- name: …`) of every skills index the model was sent."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for sent in probes.system_prompts_of(probes.captured_units(instance, run)):
            if "Skills are procedures" not in sent:
                continue
            tail = sent[sent.index("Skills are procedures") :].splitlines()
            for line in tail[1:]:
                if line.startswith("- ") and line not in seen:
                    seen.append(line)
                elif line.strip() and not line.startswith("- "):
                    break
    return seen


# A placeholder-free way to give acpx a `{{skills}}` macro: the whole declaration is placed
# before `init`, which seeds `agents/acpx.md` only where it is absent.
ACPX = """\
---
name: chain-acpx
description: "One-shot run: do the work and report."
---

You are acpx.

{{skills}}
"""

THE_HOME_COMPILE_LISTS_HOME_SKILLS = Case(
    name="acpx compiled from the home directory lists the home skills and not the workspace's",
    script=Script(turns=["Done."]),
    files={".contenox/skills/workspace-skill.md": _skill("workspace-skill", "A workspace skill")},
    home_files={
        "agents/acpx.md": ACPX,
        "skills/home-skill.md": _skill("home-skill", "A home skill"),
    },
    steps=[
        # The home pass runs when a command runs in the home directory: after a workspace
        # `init` alone the acpx session is sent no skills index at all, home or workspace.
        step("agent", "list", cwd="home"),
        prompt("hello", acp_command="acpx", stop_reason="end_turn"),
        probe(
            "the skills index acpx was sent",
            _skills_sent,
            expect=["- home-skill: A home skill — read .contenox/skills/home-skill.md"],
        ),
    ],
)
