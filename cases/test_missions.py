"""Missions, read back through `mission list`, `mission show` and `mission reports`."""

from __future__ import annotations

from harness import Instance, Script, Turn, mission_finish, mission_report
from harness.probes import mission, mission_reports, missions

WORKED_RUN = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "read the whole tree")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
STUCK_RUN = Script(
    turns=[
        Turn(tool_calls=[mission_finish("stuck", reason="no database to read from")]),
        "Done.",
    ]
)


def _run(instance: Instance, script: Script, task: str) -> None:
    instance.init()
    instance.use_script(script)
    instance.contenox("run", "--policy", "run", task)


def test_mission_list_is_empty_before_anything_was_fired(instance: Instance) -> None:
    assert missions(instance) == []


def test_mission_list_shows_the_worked_run_landed_under_the_run_envelope(
    instance: Instance,
) -> None:
    _run(instance, WORKED_RUN, "report what you know")

    [only] = missions(instance)

    assert (only.agent, only.envelope, only.status) == ("run", "run", "landed")


def test_mission_show_reports_the_landed_status_and_the_report_summary(
    instance: Instance,
) -> None:
    _run(instance, WORKED_RUN, "report what you know")
    [fired] = missions(instance)

    shown = mission(instance, fired.id)

    assert shown.id == fired.id
    assert shown.intent == "report what you know"
    assert shown.status == "landed"
    assert [(r.kind, r.summary) for r in shown.reports] == [("result", "read the whole tree")]


def test_mission_show_gives_the_reason_a_stuck_mission_stopped(instance: Instance) -> None:
    _run(instance, STUCK_RUN, "give up")
    [fired] = missions(instance)

    shown = mission(instance, fired.id)

    assert (shown.status, shown.status_reason) == ("stuck", "no database to read from")
    assert shown.reports == ()


def test_mission_reports_prints_every_report_in_full(instance: Instance) -> None:
    _run(instance, WORKED_RUN, "report what you know")
    [fired] = missions(instance)

    full = mission_reports(instance, fired.id)

    assert (full.id, full.status, full.intent) == (fired.id, "landed", "report what you know")
    assert [(r.kind, r.summary) for r in full.reports] == [("result", "read the whole tree")]


def test_mission_list_names_the_declared_agent_a_run_was_fired_at_beside_its_envelope(
    instance: Instance,
) -> None:
    # contenox-cli.md, `contenox run [agent] "<task>"`: the first argument names a
    # declared agent; `init` declares `reviewer` among others. The envelope stays `run`.
    instance.init()
    instance.use_script(WORKED_RUN)
    instance.must("run", "reviewer", "--policy", "run", "check the last commit")

    [only] = missions(instance)

    assert (only.agent, only.envelope, only.status) == ("reviewer", "run", "landed")
