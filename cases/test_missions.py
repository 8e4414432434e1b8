"""Missions, read back through `mission list`, `mission show` and `mission reports`."""

from __future__ import annotations

from dialogs import WORKED_RUN, WORKED_RUN_REPORT
from harness import (
    Case,
    Script,
    Step,
    Turn,
    group,
    mission_finish,
    probe,
    satisfies,
    step,
)
from harness.probes import mission, mission_reports, missions

STUCK_RUN = Script(
    turns=[
        Turn(tool_calls=[mission_finish("stuck", reason="no database to read from")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Done.", optional=True),
    ]
)


FIRED = {"mission": group(r"Mission (\S+) finished", stream="notices")}


def _run(script: Script, task: str) -> Step:
    """``contenox run --policy run <task>``, capturing the mission it fired as ``{mission}``."""
    return step("run", "--policy", "run", task, exit_code=None, capture=FIRED)


def _reports(value: object) -> list[tuple[str, str]]:
    return [(r.kind, r.summary) for r in value.reports]  # type: ignore[attr-defined]


MISSION_LIST_IS_EMPTY = Case(
    name="mission list is empty before anything was fired",
    init=False,
    probes=[probe("missions", missions, expect=[])],
)

MISSION_LIST_SHOWS_THE_WORKED_RUN = Case(
    name="mission list shows the worked run landed under the run envelope",
    script=WORKED_RUN,
    steps=[_run(WORKED_RUN, "report what you know")],
    probes=[
        probe(
            "missions",
            missions,
            expect=satisfies(
                lambda ms: (
                    [(m.agent, m.envelope, m.status) for m in ms] == [("run", "run", "landed")]
                ),
                "one mission, agent run, envelope run, landed",
            ),
        )
    ],
)

MISSION_SHOW_REPORTS_THE_LANDED_STATUS = Case(
    name="mission show reports the landed status and the report summary",
    script=WORKED_RUN,
    steps=[_run(WORKED_RUN, "report what you know")],
    probes=[
        probe(
            "mission",
            mission,
            "{mission}",
            expect=satisfies(
                lambda m: (
                    (m.intent, m.status, _reports(m))
                    == ("report what you know", "landed", [("result", WORKED_RUN_REPORT)])
                ),
                "the intent, status landed and the one result report",
            ),
        )
    ],
)

MISSION_SHOW_GIVES_THE_REASON_A_STUCK_MISSION_STOPPED = Case(
    name="mission show gives the reason a stuck mission stopped",
    script=STUCK_RUN,
    steps=[_run(STUCK_RUN, "give up")],
    probes=[
        probe(
            "mission",
            mission,
            "{mission}",
            expect=satisfies(
                lambda m: (
                    (m.status, m.status_reason, m.reports)
                    == ("stuck", "no database to read from", ())
                ),
                "status stuck, the reason given, no reports",
            ),
        )
    ],
)

MISSION_REPORTS_PRINTS_EVERY_REPORT_IN_FULL = Case(
    name="mission reports prints every report in full",
    script=WORKED_RUN,
    steps=[_run(WORKED_RUN, "report what you know")],
    probes=[
        probe(
            "mission reports",
            mission_reports,
            "{mission}",
            expect=satisfies(
                lambda r: (
                    (r.status, r.intent, _reports(r))
                    == ("landed", "report what you know", [("result", WORKED_RUN_REPORT)])
                ),
                "status landed, the intent and the one result report in full",
            ),
        )
    ],
)


MISSION_LIST_NAMES_THE_DECLARED_AGENT = Case(
    name="mission list names the declared agent a run was fired at beside its envelope",
    script=WORKED_RUN,
    # contenox-cli.md, `contenox run [agent] "<task>"`: the first argument names a
    # declared agent; `init` declares `reviewer` among others. The envelope stays `run`.
    steps=[step("run", "reviewer", "--policy", "run", "check the last commit")],
    probes=[
        probe(
            "missions",
            lambda i: [(m.agent, m.envelope, m.status) for m in missions(i)],
            expect=[("reviewer", "run", "landed")],
        )
    ],
)
