"""`contenox inbox`: the reports an operator-fired mission left with no session to read them.

`contenox run` fires its mission from no chat session, so the reports it
files land in the inbox; the cases read them back with `inbox list`,
`inbox show` and `inbox ack`.
"""

from __future__ import annotations

import re

from harness import Case, Script, Turn, column, mission_finish, mission_report, step

REPORTED = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "the inbox report")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
RUN = step("run", "--policy", "run", "report 0", timeout=150)
LISTED = {"item": column("ID"), "mission": column("MISSION")}


def _rows(n: int) -> re.Pattern[str]:
    """The listing's header then exactly ``n`` rows, then the blank line before its hint."""
    return re.compile(r"\AID [^\n]*\n" + r"[^\n]+\n" * n + r"\n")


A_RUNS_REPORT_LANDS_IN_THE_INBOX = Case(
    name="a run's report lands in the inbox and show prints it",
    script=REPORTED,
    steps=[
        RUN,
        step(
            "inbox",
            "list",
            stdout_has=[_rows(1), re.compile(r"result\s+the inbox report\s+\S+\s+no\b")],
            capture=LISTED,
        ),
        step("inbox", "show", "{item}", stdout_has=["the inbox report", "{mission}"]),
    ],
)

ACK_MARKS_AN_ITEM_READ_WITHOUT_DELETING_IT = Case(
    name="ack marks an item read without deleting it",
    script=REPORTED,
    steps=[
        RUN,
        step("inbox", "list", capture=LISTED),
        step("inbox", "ack", "{item}"),
        step("inbox", "list", stdout_has=[re.compile(r"\ANo ")], stdout_lacks=["{item}"]),
        step("inbox", "list", "--all", stdout_has=[_rows(1), re.compile(r"{item}\s.*\byes\b")]),
    ],
)

INBOX_LIST_LIMIT_CAPS_THE_ITEMS_LISTED = Case(
    name="inbox list limit caps the items listed",
    # Each `run` is a new process, and a new process starts the script at turn one again.
    script=REPORTED,
    steps=[
        RUN,
        step("run", "--policy", "run", "report 1", timeout=150),
        step("inbox", "list", stdout_has=[_rows(2)]),
        step("inbox", "list", "--limit", "1", stdout_has=[_rows(1)]),
    ],
)
