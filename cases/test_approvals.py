"""Approvals: a gated call becomes a durable ask, seen in `approvals list`, released by `respond`.

`echo` is named by no rule of the `run` envelope, so the envelope's
default_action (approve) gates it: the call waits on a durable ask.
"""

from __future__ import annotations

import json
import re

import pytest

from dialogs import GATED_ECHO
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    defect,
    mission_finish,
    mission_report,
    probe,
    respond,
    satisfies,
    step,
    wait,
)
from harness import probes as read
from harness.probes import (
    approvals,
    missions,
    session_records,
    transcript,
)

GATED_RUN = GATED_ECHO
QUESTION_RUN = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {
                        "summary": "which database should I use",
                        "question": "which database should I use",
                    },
                )
            ],
        ),
        Turn(tool_calls=[mission_report("result", "used the answer given")]),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Done.", optional=True),
    ]
)


APPROVING_THE_SAME_ASK_TWICE = Case(
    name="approving the same ask twice is refused and leaves nothing pending",
    script=GATED_RUN,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "60s", "echo hi"),
        await_ask("ask", tool="native-echo.echo", kind="permission"),
        respond("ask", "approve"),
        respond("ask", "approve", exit_code="non-zero", notices_has=["already answered"]),
        wait("run", stdout_has=["echoed after the verdict"]),
        probe("approvals list", read.approvals, expect=[]),
    ],
)


def _setup(instance: Instance, script: Script) -> None:
    instance.init()
    instance.use_script(script)


APPROVALS_LIST_IS_EMPTY = Case(
    name="approvals list is empty when nothing waits",
    init=False,
    probes=[probe("approvals", read.approvals, expect=[])],
)

A_GATED_CALL_WAITS_AND_APPROVING_IT_LETS_THE_RUN_LAND = Case(
    name="a gated call waits in approvals list and approving it lets the run land",
    script=GATED_RUN,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "60s", "echo hi"),
        await_ask("ask", tool="native-echo.echo", kind="permission"),
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"{ask_mission}\s.*\bopen\b")],
        ),
        respond("ask", "approve"),
        wait("run", stdout_has=["echoed after the verdict"]),
        probe("approvals", read.approvals, expect=[]),
        step("mission", "show", "{ask_mission}", stdout_has=[re.compile(r"landed")]),
    ],
)

DENYING_A_GATED_CALL = Case(
    name="denying a gated call clears the ask and the run carries on",
    script=GATED_RUN,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "60s", "echo hi"),
        await_ask("ask", tool="native-echo.echo"),
        respond("ask", "deny"),
        wait("run"),
        probe("approvals", read.approvals, expect=[]),
        probe(
            "missions",
            read.missions,
            expect=satisfies(lambda ms: [m.status for m in ms] == ["landed"], "one landed mission"),
        ),
    ],
)


def _unit_tool_results(instance: Instance) -> list[str]:
    """The tool results the run's unit recorded (``session list --all``, ``session show``)."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    return [m.content for m in transcript(instance, unit.id).messages if m.role == "tool"]


# The control of the cases above: only the gate changed. A top-level copy of the `run`
# render (~/.contenox/hitl-policy-run.json, which shadows it) whose default_action is
# allow instead of approve: the same run echoes with no ask and lands.
# function: copies the rendered run envelope with one field changed (no step edits JSON)
def test_the_same_gated_call_runs_with_no_ask_once_the_default_action_is_allow(
    instance: Instance,
) -> None:
    _setup(instance, GATED_RUN)
    render = instance.home / ".contenox" / ".generated" / "hitl-policy-run.json"
    policy = json.loads(render.read_text(encoding="utf-8"))
    assert policy["default_action"] == "approve", policy["default_action"]
    policy["default_action"] = "allow"
    copy = instance.home / ".contenox" / "hitl-policy-run.json"
    copy.write_text(json.dumps(policy, indent=2) + "\n", encoding="utf-8")
    instance.recorder.note(
        "~/.contenox/hitl-policy-run.json: the run render, default_action approve -> allow"
    )

    run = instance.must("run", "--policy", "run", "--timeout", "60s", "echo hi", timeout=120)

    assert "echoed after the verdict" in run.stdout, run.describe()
    assert approvals(instance) == []
    assert [m.status for m in missions(instance)] == ["landed"]
    assert "hi there" in _unit_tool_results(instance)[0]


A_QUESTION_WAITS_AND_THE_UNIT_RECEIVES_THE_ANSWER = Case(
    name="a question waits with its summary and the unit receives the answer",
    script=QUESTION_RUN,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "60s", "pick a db"),
        await_ask("ask", kind="question"),
        probe(
            "pending asks",
            read.approvals,
            expect=satisfies(
                lambda asks: (
                    [(a.tool, a.summary) for a in asks]
                    == [("mission.mission_ask_attention", "which database should I use")]
                ),
                "one question from mission_ask_attention, 'which database should I use'",
            ),
        ),
        respond("ask", answer="use the staging database"),
        wait("run"),
        probe(
            "the unit's tool results",
            _unit_tool_results,
            expect=satisfies(
                lambda results: any("use the staging database" in r for r in results),
                "the answer among them",
            ),
        ),
    ],
)


# function: a race, so up to twenty runs time out on their asks one after another
@pytest.mark.no_transcript(
    reason="a race: how many runs time out before one derails differs run to run"
)
@defect(
    Defect(
        title=(
            "an answer after `run --timeout` ended often fails: the mission was raced to derailed"
        ),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: (a) rc=1 'did not finish within 3s: it is torn down'; mission show "
            "Status: open; respond rc=0 'Verdict recorded … and the suspended run was resumed in "
            "this process.' (b) all six timed out; mission list already showed one 'derailed' "
            "before any answer; 5 responds rc=0, 1 rc=1: 'verdict for approval "
            "scripted-test-0-0-df4d recorded, but resuming its suspended run failed: agentservice:"
            " the mission behind this checkpoint already finished; the suspended run is not "
            'resumable (mission 37182c4a… is "de... Note: Reproduces, but intermittently: 1 of 6 '
            "in my one concurrent trial, 0 of 1 single run (the report says 9 of 12). It is a "
            "race, so the rate depends on machine load. The blocker 'instance not found' matches "
            "the report. Side effect of the scripted backend, unrelated: a resume in a new process"
            " starts the dialog at turn 1 again, so the resumed run of the single-run mission "
            "raised the same local_shell..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a local_shell `echo <n>` call the default envelope gates, "
            "then a reply\n"
            'for n in 1 2 3 4 5 6; do contenox run --policy run --timeout 3s "echo '
            '$n" & done; wait\n'
            "contenox approvals list               # six pending asks\n"
            "contenox approvals respond <id> --approve   # for each id\n"
            "# often exit 1: verdict for approval <id> recorded, but resuming its "
            "suspended run failed: agentservice:\n"
            "#   the mission behind this checkpoint already finished; the suspended "
            'run is not resumable (mission <id> is "derailed")\n'
            "# (9 of 12 trials by hand; the unit logged 'unit turn failed: "
            "agentinstance: ...: instance not found'; one run at a time races the "
            "same way: its mission is already open or derailed when the run exits)"
        ),
        promised=(
            'reference/contenox-cli.md:92 "the same answer resumes its checkpoint exactly once"'
        ),
        observed=(
            "`approvals respond --approve` exits 1: the torn-down unit raced to mark "
            "the mission derailed"
        ),
    )
)
def test_answering_after_run_timed_out_resumes_the_checkpoint_of_every_waiting_run(
    instance: Instance,
) -> None:
    # The defect is a race decided inside each timed-out run, so one attempt
    # proves little either way, and many runs at once can all win it (eight did
    # on a CI machine, in test_asks.py): up to twenty runs time out on their own
    # ask one after another, and every one must resume when answered; the first
    # that does not is the failure.
    instance.recorder.demand_checked = False
    _setup(instance, GATED_RUN)
    for attempt in range(1, 21):
        run = instance.contenox("run", "--policy", "run", "--timeout", "3s", f"echo {attempt}")
        run.assert_failure()
        (ask,) = approvals(instance)

        answer = instance.contenox("approvals", "respond", ask.id, "--approve", timeout=60)

        assert answer.exit_code == 0, (
            f"timed-out run {attempt} of 20 did not resume:\n{answer.describe(logs=False)}"
        )
        assert [m.status for m in missions(instance)] == ["landed"] * attempt, attempt


ECHO_RUN = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi there"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


# The unit's own transcript is where a verdict shows: approved, `echo` ran and
# its result is the echo; denied, it never ran and the unit is told so.
THE_VERDICT_DECIDES = [
    Case(
        name=f"the verdict decides whether the gated call runs ({verdict})",
        script=ECHO_RUN,
        steps=[
            background("run", "run", "--policy", "run", "--timeout", "60s", "echo hi"),
            await_ask("ask", tool="native-echo.echo"),
            respond("ask", verdict),
            wait("run"),
            probe(
                "the unit's tool results",
                _unit_tool_results,
                expect=satisfies(
                    lambda results, seen=seen, unseen=unseen: (
                        seen in results[0] and unseen not in results[0]
                    ),
                    f"the first says {seen!r}, not {unseen!r}",
                ),
            ),
        ],
    )
    for verdict, seen, unseen in (("approve", "hi there", "denied"), ("deny", "denied", "hi there"))
]
