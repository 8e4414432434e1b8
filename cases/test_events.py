"""Events and triggers (beta): the durable log, `events dispatch`, firings and prune.

contenox-docs/guide/events.md and contenox-cli.md `### contenox events`. A
mission run (`run --policy run`) appends `report_added` and `status_changed`;
a trigger file binds them to a one-task chain served by the same dialog.
"""

from __future__ import annotations

import json
import re
from typing import Any

from harness import (
    Case,
    Script,
    Turn,
    background,
    group,
    mission_finish,
    mission_report,
    signal,
    step,
    wait,
    write,
)
from harness.case import Action

LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "events home")]),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Summary of the event.", optional=True),
    ]
)
REPORT = "missionservice.events.report_added"
STATUS = "missionservice.events.status_changed"
BETA = step("config", "set", "opt-in-beta", "true")
RUN = step("run", "--policy", "run", "report home", stdout_has=["events home"])


def _chain(*, broken: bool = False) -> str:
    """A one-task chain that ends (a `broken` one goes to a task that is not there)."""
    goto = "no-such-task" if broken else "end"
    return json.dumps(
        {
            "id": "on-report",
            "description": "summarise the event",
            "tasks": [
                {
                    # noop passes the event through: a firing that needs no model.
                    "id": "summarise",
                    "handler": "noop",
                    "transition": {"branches": [{"operator": "default", "when": "", "goto": goto}]},
                }
            ],
        }
    )


def _trigger(listen_for: str, name: str = "on-report") -> str:
    return json.dumps(
        {
            "name": name,
            "description": "summarise every mission report",
            "listen_for": {"type": listen_for},
            "type": "fire_chain",
            "chain": "chain-on-report.json",
            "policy": "hitl-policy-default.json",
        }
    )


HIDDEN_WITHOUT_BETA = Case(
    name="events is hidden from help without opt in beta and listed with it",
    steps=[
        step("--help", stdout_lacks=["events       Tail the durable event log"]),
        BETA,
        step("--help", stdout_has=["events       Tail the durable event log"]),
    ],
)

LIST_SHOWS_MISSION_EVENTS = Case(
    name="events list shows a mission's report and status events in nid order",
    script=LANDS,
    steps=[
        BETA,
        RUN,
        step(
            "events",
            "list",
            stdout_has=[
                "NID  TYPE",
                "SOURCE",
                "SUBJECT",
                "HOP",
                "TIME",
                "DATA",
                f"1    {REPORT}",
                f"2    {STATUS}",
                "missionservice",
            ],
        ),
    ],
)

LIST_SINCE = Case(
    name="events list since a cursor shows only the events after it",
    script=LANDS,
    steps=[
        BETA,
        RUN,
        step("events", "list", "--since", "1", stdout_has=[STATUS], stdout_lacks=[REPORT]),
    ],
)

LIST_LIMIT = Case(
    name="events list limit caps the page",
    script=LANDS,
    steps=[
        BETA,
        RUN,
        step("events", "list", "--limit", "1", stdout_has=[REPORT], stdout_lacks=[STATUS]),
    ],
)

NO_FIRINGS = Case(
    name="events firings with nothing fired prints no firings and exits 0",
    steps=[BETA, step("events", "firings", stdout_has=["(no firings)"])],
)

VET_TRIGGER = Case(
    name="vet validates a trigger file whose chain and policy resolve",
    files={
        ".contenox/chain-on-report.json": _chain(),
        ".contenox/trigger-on-report.json": _trigger(REPORT),
    },
    steps=[BETA, step("vet", ".contenox/trigger-on-report.json", stdout_has=["ok"])],
)


def _setup(listen_for: str = REPORT, *, broken: bool = False) -> list[Action]:
    """A landed run, then a trigger and its chain written: the events wait in the log."""
    return [
        BETA,
        RUN,
        # Written after the run: the events wait in the log for the catch-up dispatcher.
        write(".contenox/chain-on-report.json", _chain(broken=broken)),
        write(".contenox/trigger-on-report.json", _trigger(listen_for)),
    ]


def _dispatch_once(needle: str, **expect: Any) -> list[Action]:
    """`events dispatch --auto` until ``needle`` is on stdout, then Ctrl-C; ``expect`` of it.

    The firing lines go to stdout; the loaded triggers and the banner to stderr.
    """
    return [
        background(
            "dispatch",
            "events",
            "dispatch",
            "--auto",
            ready=needle,
            ready_stream="stdout",
            timeout=120,
        ),
        signal("dispatch"),
        wait("dispatch", exit_code=None, timeout=60, **expect),
    ]


def _fired(nid: int, status: str, event: str = REPORT) -> re.Pattern[str]:
    """The firing line of event ``nid``, as dispatch prints it."""
    return re.compile(
        rf"^fired on-report ← {re.escape(event)} nid={nid} hop=0 status={status} "
        r"request=evt-\S+",
        re.M,
    )


TWO_FIRING_LINES = re.compile(r"^fired on-report[\s\S]*^fired on-report", re.M)

DISPATCH_PRINTS_TRIGGERS_AND_FIRINGS = Case(
    name="dispatch prints its triggers and one line per firing",
    script=LANDS,
    steps=[
        *_setup(),
        *_dispatch_once(
            "fired on-report",
            stderr_has=[f"on-report → {REPORT} → chain-on-report.json"],
            stdout_has=[_fired(1, "ok")],
            stdout_lacks=[TWO_FIRING_LINES],
        ),
    ],
)

A_FIRING_IS_AN_ORDINARY_CAPTURED_RUN = Case(
    name="a firing is recorded and its run is an ordinary captured run",
    script=LANDS,
    steps=[
        *_setup(),
        *_dispatch_once("fired on-report", capture={"request": group(r"request=(\S+)")}),
        step(
            "events",
            "firings",
            stdout_has=[
                re.compile(r"\ANID +TRIGGER +STATUS +REQUEST +TIME +ERROR *\n"),
                "1    on-report  ok      {request}",
            ],
        ),
        step("state", "list", stdout_has=["{request}"]),
        step("state", "show", "{request}", stdout_has=["summarise"]),
    ],
)

BROKEN_FIRINGS = [
    *_setup("missionservice.events.*", broken=True),
    # The prefix pattern caught both types; the first failure did not stop the second.
    *_dispatch_once(
        "nid=2",
        stdout_has=[
            re.compile(
                _fired(1, "error").pattern + r".*\n" + _fired(2, "error", STATUS).pattern[1:], re.M
            )
        ],
        stdout_lacks=[
            re.compile(r"^fired on-report(?!.*status=error)", re.M),
            re.compile(r"^fired on-report[\s\S]*^fired on-report[\s\S]*^fired on-report", re.M),
        ],
    ),
]

A_FAILING_CHAIN_IS_RECORDED_AS_ERROR = Case(
    name="a failing chain is recorded as error and the loop goes on",
    script=LANDS,
    steps=[
        *BROKEN_FIRINGS,
        step("events", "firings", "--status", "error", stdout_has=["on-report  error"]),
        step("events", "firings", "--status", "ok", stdout_has=["(no firings)"]),
    ],
)

FIRINGS_BY_TRIGGER = Case(
    name="firings filtered by trigger show only that triggers history",
    script=LANDS,
    steps=[
        *_setup(),
        *_dispatch_once("fired on-report"),
        step("events", "firings", "--trigger", "on-report", stdout_has=["on-report"]),
        step("events", "firings", "--trigger", "no-such-trigger", stdout_has=["(no firings)"]),
    ],
)

PRUNE_KEEPS_TODAYS_EVENTS = Case(
    name="prune keeps todays events",
    script=LANDS,
    steps=[
        BETA,
        RUN,
        step("events", "prune", "--keep-days", "30", "--yes"),
        step("events", "list", stdout_has=[REPORT, STATUS]),
    ],
)

FIRINGS_SINCE_A_CURSOR = Case(
    name="firings since a cursor shows only firings of later events",
    script=LANDS,
    steps=[
        *BROKEN_FIRINGS,
        step(
            "events",
            "firings",
            "--since",
            "1",
            # Only the second firing: one row after the header.
            stdout_has=[re.compile(r"\A[^\n]*\n2 +on-report +error\b[^\n]*\n?\Z")],
        ),
    ],
)

FIRINGS_LIMIT_NEWEST_FIRST = Case(
    name="firings limit caps the rows newest first",
    script=LANDS,
    steps=[
        *BROKEN_FIRINGS,
        step(
            "events",
            "firings",
            stdout_has=[re.compile(r"\A[^\n]*\n2 +on-report[^\n]*\n1 +on-report[^\n]*\n?\Z")],
        ),
        step(
            "events",
            "firings",
            "--limit",
            "1",
            stdout_has=[re.compile(r"\A[^\n]*\n2 +on-report +error\b[^\n]*\n?\Z")],
        ),
    ],
)
