"""Captured execution state, read back through `state list` and `state show [--raw]`."""

from __future__ import annotations

from harness import Instance, Script, Turn, mission_finish, mission_report
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
        "Mission finished.",
    ]
)


def _worked_run(instance: Instance) -> str:
    instance.init()
    instance.use_script(WORKED_RUN)
    instance.must("run", "--policy", "run", "report what you know")
    return the_captured_run(instance)


def test_state_list_is_empty_before_any_run(instance: Instance) -> None:
    assert captured_requests(instance) == []


def test_the_worked_run_captures_its_model_and_tool_steps_in_order(instance: Instance) -> None:
    steps = captured_steps(instance, _worked_run(instance))

    # The closing text turn races with mission_finish tearing the unit down:
    # it is absent, OK or CANCELLED. Only the four steps the dialog forces are fixed.
    assert [(s.task, s.handler, s.transition, s.status) for s in steps[:4]] == [
        ("run-agent", "chat_completion", "tool_call", "OK"),
        ("run-tools", "execute_tool_calls", "tools_executed", "OK"),
        ("run-agent", "chat_completion", "tool_call", "OK"),
        ("run-tools", "execute_tool_calls", "tools_executed", "OK"),
    ]


def test_every_model_turn_of_the_worked_run_was_served_by_the_scripted_backend(
    instance: Instance,
) -> None:
    units = captured_units(instance, _worked_run(instance))

    turns = [u for u in units if u.handler == "chat_completion"]
    assert len(turns) >= 2
    assert {(u.provider_type, u.model_name) for u in turns} == {("scripted-test", "scripted-test")}


def test_the_run_agent_is_sent_the_task_engine_system_prompt_and_the_mission_brief(
    instance: Instance,
) -> None:
    request = _worked_run(instance)

    [prompt] = system_prompts(instance, request)

    assert prompt.startswith("You are a task engine.")
    first = captured_units(instance, request)[0]
    assert [m.role for m in first.sent] == ["system", "user"]
    assert first.sent[1].content.rstrip().endswith("report what you know")


def test_state_show_marks_the_step_that_failed_error_with_its_cause(instance: Instance) -> None:
    # A dialog one turn short: the second model turn finds the script exhausted.
    instance.init()
    instance.use_script(
        Script(
            turns=[Turn(text="Filing.", tool_calls=[mission_report("result", "one turn short")])],
            runs_past_end=True,
        )
    )
    instance.contenox("run", "--policy", "run", "--timeout", "60s", "report")

    steps = captured_steps(instance, the_captured_run(instance))

    assert [(s.task, s.status) for s in steps[:2]] == [("run-agent", "OK"), ("run-tools", "OK")]
    failed = steps[2]
    assert failed.task == "run-agent", steps
    assert failed.status.startswith("ERROR: "), failed
    assert "is exhausted" in failed.status, failed
