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
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, opt-in-beta true, scripted backend. A "
            "`contenox run --policy run` mission landed, so the log held status_changed "
            "(nid 2). Workspace .contenox/ then got trigger-on-status.json (listen_for "
            "status_changed, chain chain-on-status.json, policy hitl-policy-s6.json = "
            "{version 1, default_action approve, rules []}) and chain-on-status.json "
            "(chat_completion + execute_tool_calls on local_shell, prompt_template set). "
            "The dialog called local_shell {command: touch, args:[fired.txt]}, then 'done'. "
            "`contenox vet` said ok. (1) `events dispatch --auto`: 'fired on-status ← "
            "…status_changed nid=4 hop=0 status=ok'; fired.txt exists; `approvals list`: "
            "'No pending asks.' (2) Fresh event, `events dispatch` without --auto: "
            "'status=ok'; stderr '[denied: local_shell.local_shell requires approval but no "
            "..."
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
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init, opt-in-beta true, "
            "scripted backend. `run --policy run go` (report+finish) puts status_changed at "
            "nid=2 in `events list`. I then wrote .contenox/hitl-policy-denyall.json "
            "{version:1,default_action:deny,rules:[]}, trigger-on-status.json "
            "(status_changed -> chain-on-status.json, policy hitl-policy-denyall.json; "
            "`vet`: ok) and a chain act(chat_completion, tools [local_shell], "
            "_allowed_commands touch) -> tools -> act, and re-scripted the dialog to "
            "local_shell touch fired.txt, then text. `events dispatch --auto` -> 'fired "
            "on-status ← …status_changed nid=2 hop=0 status=ok'; `ls fired.txt` -> exists. "
            "Control in a second fresh env, same setup, `events dispatch` without --auto: "
            "status=ok, fired.txt NOT created, and state show --raw holds 'Denied by the "
            "active policy hitl-p..."
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


def test_dispatch_auto_runs_the_call_the_trigger_s_policy_allows(instance: Instance) -> None:
    # function: needs dispatch running until its firing line appears
    # The control of the two cases above: the same firing, only its policy's
    # default turned to allow, and the call runs. So the chain does reach the
    # call, and what those cases see is the policy's doing (or its absence).
    _fired_under(instance, "allow")

    dispatch_until(instance, "fired on-status")

    assert (instance.work / "fired.txt").exists(), "a call the policy allows did not run"
    assert probes.approvals(instance) == [], "a call the policy allows raised an ask"


@defect(
    Defect(
        title="a report filed after the firing session ended does not reach the inbox",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init, scripted backend. My own "
            "stdio ACP client drove `contenox acp`: session/new, then prompt '/mission "
            "--policy hitl-policy-run.json run echo hi' -> 'Mission fired at named agent "
            '"run" … if this session has ended when one lands, it waits in the operator '
            "inbox.' The unit's local_shell echo raised permission ask "
            "scripted-test-0-0-a883. I left it unanswered, closed the acp process (exit 0) "
            "and rewrote dialog.json to mission_report result 'echoed after the verdict', "
            "mission_finish, text, because a new process restarts the cursor. `approvals "
            "respond <ask> --approve` -> 'Verdict recorded … resumed in this process', exit "
            "0. `mission reports <id>` -> '(landed) [result] echoed after the verdict'. "
            "`inbox list --all` -> 'Operator inbox is empty.' In an earlier run the "
            "teardow..."
        ),
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
