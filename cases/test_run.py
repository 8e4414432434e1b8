"""`contenox run`: one task, the report on stdout, an exit code to branch on."""

from __future__ import annotations

from harness import Case, Script, Turn, mission_finish, mission_report, probe, step
from harness.probes import backends, missions

# The worked run of contenox-docs/development/scripted-test-backend.md.
WORKED_RUN_DIALOG = Script(
    turns=[
        Turn(
            text="Filing what I found.",
            tool_calls=[mission_report("result", "scripted run reporting home")],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish the unit is torn down while the chat loop may
        # still be asking for the next turn: in repeated runs this closing turn
        # is served in some and not in others.
        Turn(text="Mission finished.", optional=True),
    ]
)

WORKED_RUN = Case(
    name="the worked run lands and prints its report",
    script=WORKED_RUN_DIALOG,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            stdout_has=["scripted run reporting home"],
            # The announcement and the verdict belong on stderr, not in the report.
            stdout_lacks=["Mission fired", "finished: landed"],
            notices_has=['Mission fired at agent "run" under envelope "run".', "finished: landed"],
        ),
        step("mission", "list", stdout_has=["landed"]),
    ],
    probes=[probe("missions", missions), probe("backends", backends)],
)

WORKED_RUN_AS_DOCUMENTED = Case(
    name="the worked run exactly as documented lands on a fresh home",
    script=WORKED_RUN_DIALOG,
    init=False,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            stdout_has=["scripted run reporting home"],
            notices_has=["finished: landed"],
        ),
    ],
    defect=(
        "the worked run of contenox-docs/development/scripted-test-backend.md (backend add, "
        "two config sets, `contenox run --policy run …`) fails on a fresh home with exit 1: "
        '\'Error: invalid parameter value: hitlPolicyName: hitl policy "run" could not be '
        "loaded: it must name an existing policy'. The `run` envelope only exists after "
        "`contenox init`, which the page never mentions, and the error does not name it."
    ),
)
