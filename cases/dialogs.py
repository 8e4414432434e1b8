"""Dialogs several cases replay, declared once.

Not a test module (no ``test_`` prefix): case modules import from it
(``from dialogs import WORKED_RUN``); ``cases/`` is on ``sys.path`` under
pytest's rootdir conftest and under ``harness.catalog``.
"""

from __future__ import annotations

from pathlib import Path

from harness import Probe, Script, ToolCall, Turn, mission_finish, mission_report, probe, route
from harness.instance import Instance

__all__ = ["GATED_ECHO", "WORKED_RUN", "WORKED_RUN_REPORT", "WRITE_GREETING", "workspace_file"]

WORKED_RUN_REPORT = "scripted run reporting home"

# The worked run of contenox-docs/development/scripted-test-backend.md.
WORKED_RUN = Script(
    turns=[
        Turn(text="Filing what I found.", tool_calls=[mission_report("result", WORKED_RUN_REPORT)]),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish the unit is torn down while the chat loop may
        # still be asking for the next turn: in repeated runs this closing turn
        # is served in some and not in others.
        Turn(text="Mission finished.", optional=True),
    ]
)

# `echo` is named by no rule of the `run` envelope, so the envelope's
# default_action (approve) gates it: the call waits on a durable ask.
GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi there"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Done.", optional=True),
    ]
)

# An ACP turn: route, then write_file out.txt ("hello\n"), then a closing text.
WRITE_GREETING = Script(
    turns=[
        route(),
        Turn(
            text="Writing the greeting.",
            tool_calls=[
                ToolCall(name="write_file", arguments={"path": "out.txt", "content": "hello\n"})
            ],
        ),
        "Done.",
    ]
)


def workspace_file(rel: str, *, expect: object) -> Probe:
    """The text of ``work/<rel>`` (None when it does not exist): what the user finds on disk."""

    def read(instance: Instance) -> str | None:
        path: Path = instance.work / rel
        return path.read_text(encoding="utf-8") if path.exists() else None

    return probe(f"workspace file {rel}", read, expect=expect)
