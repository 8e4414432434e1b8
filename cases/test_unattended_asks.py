"""Asks nobody is attached to: a trigger firing's gated call, a session that ended.

guide/hitl.md ("a trigger firing, which has no attached client at all … records
the ask and suspends immediately"), guide/events.md ("a firing's asks are
detached" and `--auto` "the trigger's policy (or the default) still applies")
and contenox-cli.md `### contenox inbox` ("a mission fired from a session whose
process later ended has none anymore either … its reports land in the inbox").

A firing's chain asks its own scripted backend (model ``firing``) for one
`local_shell` call that touches ``fired.txt``: whether that file exists is
whether the gated call ran.
"""

from __future__ import annotations

import json

from test_events_page import LANDS, dispatch_until, trigger

from dialogs import GATED_ECHO
from harness import Defect, Instance, Script, ToolCall, Turn, defect, open_acp, probes

STATUS = "missionservice.events.status_changed"
FIRING = Script(
    model="firing",
    turns=[
        Turn(
            text="Touching.",
            tool_calls=[ToolCall("local_shell", {"command": "touch", "args": ["fired.txt"]})],
        ),
        "Touched.",
    ],
)


def _shell_chain() -> str:
    """A chain whose model turn may call `local_shell`, which then runs (or is gated)."""
    branches_ask = [
        {"operator": "equals", "when": "tool_call", "goto": "run"},
        {"operator": "default", "when": "", "goto": "end"},
    ]
    return json.dumps(
        {
            "id": "on-event",
            "description": "touch a file when a mission ends",
            "tasks": [
                {
                    "id": "ask",
                    "handler": "chat_completion",
                    # The event envelope is the input; the prompt is fixed.
                    "prompt_template": "A mission ended.",
                    "execute_config": {
                        "provider": "scripted-test",
                        "model": "firing",
                        "tools": ["local_shell"],
                    },
                    "transition": {"branches": branches_ask},
                },
                {
                    "id": "run",
                    "handler": "execute_tool_calls",
                    "input_var": "ask",
                    "execute_config": {"tools": ["local_shell"]},
                    "transition": {
                        "branches": [{"operator": "default", "when": "", "goto": "ask"}]
                    },
                },
            ],
        }
    )


def _fired_under(instance: Instance, default_action: str) -> None:
    """A landed run, then a trigger on its status change under a one-line policy."""
    instance.init()
    instance.use_script(LANDS)
    instance.use_script(FIRING, name="firing", filename="firing.json", make_default=False)
    instance.must("config", "set", "opt-in-beta", "true")
    instance.must("run", "--policy", "run", "report home")
    instance.write(
        ".contenox/hitl-policy-gate.json",
        json.dumps({"version": 1, "default_action": default_action, "rules": []}),
    )
    instance.write(".contenox/chain-on-event.json", _shell_chain())
    instance.write(
        ".contenox/trigger-on-status.json",
        trigger("on-status", STATUS, policy="hitl-policy-gate.json"),
    )


@defect(
    Defect(
        title="a trigger firing's gated call is not detached into a durable ask",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: without --auto: 'fired on-status ← "
            "missionservice.events.status_changed nid=4 hop=0 status=ok', the tool result "
            "'[denied: local_shell.local_shell requires approval but no terminal is attached]', no"
            " fired.txt, approvals list 'No pending asks.'. With --auto (args form): 'fired … "
            "nid=8 … status=ok', fired.txt exists, tool result exit_code 0, 'No pending asks.' "
            "Note: The core of the report holds: without --auto, an approve-tier call in a firing "
            "is denied for lack of a terminal and no ask is recorded. hitl.md:115 also says a "
            "missing client is not a denial. The --auto half is docs disagree on its own: "
            "hitl.md:27-35 and comparison.md:34 say --auto removes the gate (so running is right),"
            " while events.md:124 and cli.md:595 say the trigger's policy still applies...."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "contenox config set opt-in-beta true\n"
            "# a trigger on status_changed with policy "
            '{"version":1,"default_action":"approve","rules":[]};\n'
            "#   its chain's model calls local_shell `touch fired.txt`\n"
            "contenox events dispatch --auto   # fired on-status … status=ok\n"
            "ls fired.txt                      # exists\n"
            "contenox approvals list           # No pending asks.\n"
            "# without --auto: [denied: local_shell.local_shell requires approval "
            "but no terminal is attached], no ask either"
        ),
        promised=(
            'guide/events.md:120 "it records its durable ask, checkpoints, and hands '
            'the process back"'
        ),
        observed="the call runs (or is denied without --auto); no ask is recorded",
        bears_on=('guide/hitl.md:53 "which has no attached client at all"',),
    )
)
def test_a_trigger_firing_that_hits_a_gated_call_records_its_ask_and_suspends(
    instance: Instance,
) -> None:
    # function: needs dispatch running until its firing line appears, then the inbox
    _fired_under(instance, "approve")

    dispatch_until(instance, "fired on-status")

    assert not (instance.work / "fired.txt").exists(), "the gated call ran unasked"
    [ask] = probes.approvals(instance)
    assert ask.tool == "local_shell.local_shell", ask
    probes.approve(instance, ask.id)
    assert (instance.work / "fired.txt").exists(), "answering did not resume the fired run"


@defect(
    Defect(
        title="`events dispatch --auto` ignores the trigger's policy",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: deny: 'Loaded 1 trigger(s): on-status → "
            "missionservice.events.status_changed → chain-fire.json (policy "
            "hitl-policy-denyall.json)'; 'fired on-status ← …status_changed nid=24 hop=0 "
            "status=ok'; fired.txt exists (0 bytes); tool result "
            '\'{"exit_code":0,…,"success":true,"command":"touch",…}\'. Allow control: the same '
            "(nid=22, fired.txt created). vet: 'ok …/hitl-policy-denyall.json', 'ok "
            "…/trigger-on-status.json'; approvals list: 'No pending asks.' Note: Reproduces once "
            "the chain can run local_shell at all. Pitfalls that hid it at first: without a chain "
            "token_limit every tool result is masked as tool_result_too_large max_bytes 0; `touch`"
            " must be in the chain's _allowed_commands; local_shell takes {command, args}, not one"
            " command string; chat_completion needs a prompt_template to turn the event envelope "
            "into chat input. With all that in place, a..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "contenox config set opt-in-beta true\n"
            "# a trigger on status_changed with policy "
            '{"version":1,"default_action":"deny","rules":[]};\n'
            "#   its chain's model calls local_shell `touch fired.txt`\n"
            "contenox events dispatch --auto   # fired on-status … status=ok\n"
            "ls fired.txt                      # exists"
        ),
        promised=('guide/events.md:120 "the trigger\'s policy (or the default) still applies"'),
        observed="the denied call runs",
        bears_on=(
            (
                "reference/contenox-cli.md:595 \"fired chains route through the trigger's "
                'policy (or the default) without a terminal ask"'
            ),
        ),
    )
)
def test_dispatch_auto_still_applies_the_trigger_s_policy(instance: Instance) -> None:
    # function: needs dispatch running until its firing line appears
    _fired_under(instance, "deny")

    dispatch_until(instance, "fired on-status")

    assert not (instance.work / "fired.txt").exists(), "a call the policy denies ran"


@defect(
    Defect(
        title="a report filed after the firing session ended does not reach the inbox",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: an echo call the editor never answers, then a mission_report "
            "result 'echoed after the verdict'\n"
            "contenox acp   # session/new, prompt '/mission --policy "
            "hitl-policy-run.json run echo hi'; leave the ask; close the process\n"
            "contenox approvals respond <ask> --approve\n"
            "contenox mission reports <id>   # [blocker] unit turn failed: "
            "agentinstance: … instance not found (or [result] echoed after the "
            "verdict)\n"
            "contenox inbox list --all       # Operator inbox is empty."
        ),
        promised=(
            'reference/contenox-cli.md:577 "its reports land in the inbox instead of vanishing"'
        ),
        observed="the reports stay on the mission; the inbox is empty",
    )
)
def test_a_report_filed_after_the_firing_session_ended_lands_in_the_inbox(
    instance: Instance,
) -> None:
    # function: needs an ACP session that ends while its mission waits on an ask
    instance.init()
    # The run ends at its ask on purpose; whether the answer resumes it is a race
    # quarantined in test_asks.py, so the turns after the ask may never be asked for.
    instance.use_script(GATED_ECHO.optional_from(1))
    acp = open_acp(instance, permission="defer")
    acp.start_prompt("/mission --policy hitl-policy-run.json run echo hi")
    ask = probes.await_approval(instance, 60, tool="native-echo.echo")
    acp.close()  # the session's process ends with the mission waiting on its ask

    # Resumed or not (the race), the mission files what happened after the session
    # ended: a blocker for the torn-down turn, and the result when it resumes.
    instance.contenox("approvals", "respond", ask.id, "--approve")

    reports = probes.mission_reports(instance, ask.mission).reports
    assert reports, "the mission filed no report at all"
    inbox = instance.must("inbox", "list", "--all").stdout
    missing = [r.summary for r in reports if r.summary[:24] not in inbox]
    assert not missing, f"reports not in the inbox: {missing}\n{inbox}"
