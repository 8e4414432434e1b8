"""`contenox run` and the global flags that choose its model.

A run's work happens in a mission unit, a child process of the run; a flag given to
`run` must reach that unit for the run to honour it. Two scripted backends answer with
different verdicts, so the verdict printed says which model the unit was served by.
"""

from __future__ import annotations

from harness import Case, Script, Turn, mission_finish, step


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
    defect=(
        "`contenox config set default-model house-model`, then `contenox run --model "
        "named-model --policy run report` prints 'finished: stuck — served by the default "
        "model': the flag does not reach the mission unit (a child `contenox acp`), which "
        "is served by config's default-model; with no default-model set the unit fails "
        "'contenox is not configured yet: no default-model is set'. "
        "`CONTENOX_DEFAULT_MODEL=named-model contenox run …` does reach it. Contradicts "
        "contenox-cli.md, Global Flags: '`--model <name>` | Model override for this invocation'."
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
