"""`contenox run` and the global flags that choose its model.

A run's work happens in a mission unit, a child process of the run; a flag given to
`run` must reach that unit for the run to honour it. Two scripted backends answer with
different verdicts, so the verdict printed says which model the unit was served by.
"""

from __future__ import annotations

from harness import Case, Defect, Script, Turn, mission_finish, step


def _finishing(model: str, verdict: str, reason: str) -> Script:
    """A unit served by ``model`` ends the mission with ``verdict``, naming the model."""
    return Script(
        model=model,
        turns=[
            Turn(text=f"From {model}.", tool_calls=[mission_finish(verdict, reason=reason)]),
            # The closing call after mission_finish: asked for or not as the unit ends.
            Turn(text="Done.", optional=True),
        ],
    )


# Served by the default model, the mission ends stuck; by the one named, it lands.
DEFAULT_AND_NAMED = {
    "default": _finishing("house-model", "stuck", "served by the default model"),
    "named": _finishing("named-model", "landed", "served by the named model"),
}

MODEL_PICKS_ANOTHER_MODEL_FOR_A_RUNS_MISSION_UNIT = Case(
    name="model picks another model for the mission unit of a run",
    backends=DEFAULT_AND_NAMED,
    default_backend="default",
    steps=[
        step(
            "run",
            "--model",
            "named-model",
            "--policy",
            "run",
            "--timeout",
            "60s",
            "report",
            timeout=120,
            notices_has=["finished: landed — served by the named model"],
        ),
    ],
    defect=Defect(
        title="`run --model` does not reach the mission unit",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME; two scripted-test backends: house "
            "(script model house-model, report 'served by the default model') and named "
            "(model named-model, report 'served by named-model'); default-provider "
            "scripted-test, default-model house-model. `contenox run --model named-model "
            "--policy run --timeout 60s report` printed 'served by the default model', exit "
            "0, and stderr logged model=house-model 4 times. "
            "`CONTENOX_DEFAULT_MODEL=named-model contenox run --policy run report` printed "
            "'served by named-model'. With default-model set to \"\", `run --model "
            "named-model …` exited 1: 'agentinstance: session/new: … contenox is not "
            "configured yet: no default-model is set'. Note: contenox-cli.md:21 documents "
            "--model as the model override for this invocation. It does not reach the "
            "mission unit (the child acp), and n..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# a second scripted backend serving named-model; the dialog of "
            "house-model says 'served by the default model'\n"
            "contenox config set default-model house-model\n"
            "contenox run --model named-model --policy run report\n"
            "# finished: stuck — served by the default model\n"
            "CONTENOX_DEFAULT_MODEL=named-model contenox run --policy run report   # "
            "reaches named-model"
        ),
        promised='reference/contenox-cli.md:21 "Model override for this invocation"',
        observed=(
            "the unit (a child `contenox acp`) is served by config's default-model; "
            "with none set it fails 'no default-model is set'"
        ),
    ),
)

# The environment variable does reach the unit: the control for the case above, and the
# way a case that needs a second model for one run gives it one.
DEFAULT_MODEL_VARIABLE_PICKS_THE_MODEL_OF_A_RUNS_MISSION_UNIT = Case(
    name="CONTENOX_DEFAULT_MODEL picks the model of the mission unit of a run",
    backends=DEFAULT_AND_NAMED,
    default_backend="default",
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "--timeout",
            "60s",
            "report",
            env={"CONTENOX_DEFAULT_MODEL": "named-model"},
            timeout=120,
            notices_has=["finished: landed — served by the named model"],
        ),
    ],
)
