"""Cases as data: a frozen dataclass a maintainer fills in, run as its own pytest item.

::

    APPROVED_TWICE = Case(
        name="approving the same ask twice is refused",
        script=GATED_RUN,
        steps=[
            background("run", "run", "--policy", "run", "echo hi"),
            await_ask("ask", tool="native-echo.echo"),
            respond("ask", "approve"),
            respond("ask", "approve", exit_code="non-zero", notices_has=["already answered"]),
            wait("run", stdout_has=["echoed after the verdict"]),
        ],
        probes=[probe("pending asks", probes.approvals, expect=[])],
    )

Any module-level ``Case`` (or list of them, for variants) in ``cases/`` is
collected as a pytest item named after it. The package has three layers:
``steps`` (the closed set of step types and what they expect), ``model``
(the Case dataclass and its build-time checks) and ``runner`` (running one
against an instance).
"""

from .model import DEFECT_PREFIX, Case, defect
from .runner import Run, Transcript, check_demand, run_case, served_in_state, transcript_head
from .steps import (
    Action,
    AwaitAsk,
    Background,
    CaseError,
    Column,
    EditDialog,
    Expect,
    Group,
    JsonPath,
    Keys,
    Predicate,
    Probe,
    Prompt,
    Respond,
    Screen,
    Signal,
    Step,
    Wait,
    Write,
    await_ask,
    background,
    column,
    edit_dialog,
    group,
    json_path,
    keys,
    output_of,
    probe,
    prompt,
    respond,
    satisfies,
    screen,
    signal,
    step,
    wait,
    write,
)

__all__ = [
    "DEFECT_PREFIX",
    "Action",
    "AwaitAsk",
    "Background",
    "Case",
    "CaseError",
    "Column",
    "EditDialog",
    "Expect",
    "Group",
    "JsonPath",
    "Keys",
    "Predicate",
    "Probe",
    "Prompt",
    "Respond",
    "Run",
    "Screen",
    "Signal",
    "Step",
    "Transcript",
    "Wait",
    "Write",
    "await_ask",
    "background",
    "check_demand",
    "column",
    "defect",
    "edit_dialog",
    "group",
    "json_path",
    "keys",
    "output_of",
    "probe",
    "prompt",
    "respond",
    "run_case",
    "satisfies",
    "screen",
    "served_in_state",
    "signal",
    "step",
    "transcript_head",
    "wait",
    "write",
]
