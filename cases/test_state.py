"""Captured execution state, read back through `state list` and `state show [--raw]`."""

from __future__ import annotations

from typing import Any

from harness import (
    Case,
    Instance,
    Script,
    Turn,
    mission_finish,
    mission_report,
    probe,
    satisfies,
    step,
)
from harness.probes import (
    captured_requests,
    captured_steps,
    captured_units,
    system_prompts,
    the_captured_run,
)

WORKED_RUN = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "read the whole tree")]),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Mission finished.", optional=True),
    ]
)


RUN = step("run", "--policy", "run", "report what you know")

_FORCED_STEPS = [
    ("run-agent", "chat_completion", "tool_call", "OK"),
    ("run-tools", "execute_tool_calls", "tools_executed", "OK"),
    ("run-agent", "chat_completion", "tool_call", "OK"),
    ("run-tools", "execute_tool_calls", "tools_executed", "OK"),
]


def _forced_steps(instance: Instance) -> object:
    """The steps the dialog forces: the closing chat call after mission_finish races the
    unit's teardown (OK in one run, CANCELLED in another), so it is not read."""
    steps = captured_steps(instance, the_captured_run(instance))
    return steps[: len(_FORCED_STEPS)]


def _units(instance: Instance) -> object:
    return captured_units(instance, the_captured_run(instance))


def _first_unit_and_prompts(instance: Instance) -> object:
    request = the_captured_run(instance)
    return captured_units(instance, request)[0], system_prompts(instance, request)


def _brief(pair: Any) -> bool:
    first, prompts = pair
    return (
        len(prompts) == 1
        and prompts[0].startswith("You are a task engine.")
        and [m.role for m in first.sent] == ["system", "user"]
        and first.sent[1].content.rstrip().endswith("report what you know")
    )


STATE_LIST_IS_EMPTY = Case(
    name="state list is empty before any run",
    init=False,
    probes=[probe("captured requests", captured_requests, expect=[])],
)

THE_WORKED_RUN_CAPTURES_ITS_STEPS_IN_ORDER = Case(
    name="the worked run captures its model and tool steps in order",
    script=WORKED_RUN,
    steps=[RUN],
    probes=[
        probe(
            "captured steps",
            _forced_steps,
            expect=satisfies(
                lambda steps: (
                    [(s.task, s.handler, s.transition, s.status) for s in steps] == _FORCED_STEPS
                ),
                f"the first four steps are {_FORCED_STEPS}",
            ),
        )
    ],
)

EVERY_MODEL_TURN_WAS_SERVED_BY_THE_SCRIPTED_BACKEND = Case(
    name="every model turn of the worked run was served by the scripted backend",
    script=WORKED_RUN,
    snapshot=False,
    steps=[RUN],
    probes=[
        probe(
            "captured units",
            _units,
            expect=satisfies(
                lambda units: (
                    len(turns := [u for u in units if u.handler == "chat_completion"]) >= 2
                    and {(u.provider_type, u.model_name) for u in turns}
                    == {("scripted-test", "scripted-test")}
                ),
                "at least two chat turns, every one scripted-test/scripted-test",
            ),
        )
    ],
)

THE_RUN_AGENT_IS_SENT_THE_TASK_ENGINE_PROMPT = Case(
    name="the run agent is sent the task engine system prompt and the mission brief",
    script=WORKED_RUN,
    snapshot=False,
    steps=[RUN],
    probes=[
        probe(
            "first unit and system prompts",
            _first_unit_and_prompts,
            expect=satisfies(
                _brief,
                "one system prompt starting 'You are a task engine.'; the first unit sends "
                "system then user, the user message ending with the task",
            ),
        )
    ],
)


def _first_three_steps(instance: Instance) -> list[tuple[str, str]]:
    """The first three steps of the captured run, as (task, status)."""
    return [(st.task, st.status) for st in captured_steps(instance, the_captured_run(instance))[:3]]


def _failed_as_documented(steps: list[tuple[str, str]]) -> bool:
    (task, status) = steps[2]
    return (
        steps[:2] == [("run-agent", "OK"), ("run-tools", "OK")]
        and task == "run-agent"
        and status.startswith("ERROR: ")
        and "is exhausted" in status
    )


# A dialog one turn short: the second model turn finds the script exhausted.
STATE_SHOW_MARKS_THE_FAILED_STEP = Case(
    name="state show marks the step that failed error with its cause",
    script=Script(
        turns=[Turn(text="Filing.", tool_calls=[mission_report("result", "one turn short")])],
        runs_past_end=True,
    ),
    steps=[
        step("run", "--policy", "run", "--timeout", "60s", "report", exit_code=None),
        probe(
            "first three steps",
            _first_three_steps,
            expect=satisfies(
                _failed_as_documented,
                "run-agent OK, run-tools OK, then run-agent 'ERROR: …' saying the script is "
                "exhausted",
            ),
        ),
    ],
)
