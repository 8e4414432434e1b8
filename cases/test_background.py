"""A `contenox run` blocked on an approval, answered from another process while it waits."""

from __future__ import annotations

import re

from harness import (
    Case,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    mission_finish,
    mission_report,
    respond,
    step,
    wait,
)
from harness.case import Action

# Under the `run` envelope `stat_file` is allowed, except on secret-looking
# paths (`**/{*.pem,*.key,.env,.env.*}`), where the grant is `approve`: the
# call becomes a durable ask and the run waits on it.
GATED_RUN = Script(
    turns=[
        Turn(
            text="Checking the env file.",
            tool_calls=[ToolCall(name="stat_file", arguments={"path": ".env"})],
        ),
        Turn(
            text="Filing.", tool_calls=[mission_report("result", "env file checked after approval")]
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Mission finished.", optional=True),
    ]
)


FILES = {".env": "API_URL=http://localhost\n"}


def _blocked_run() -> list[Action]:
    """The gated run in the background, and the ask it waits on captured as ``{ask}``."""
    return [
        background("run", "run", "--policy", "run", "check the env file"),
        # await_ask reads the inbox only once the run logged "ask raised": a second
        # process opening the store while `run` starts can make that start fail
        # with SQLITE_BUSY (seen under load), a finding of its own.
        await_ask("ask", tool="native-fs-browse.stat_file", timeout=60),
    ]


A_RUN_THAT_STOPS_AT_AN_APPROVAL = Case(
    name="a run that stops at an approval waits and another process sees the ask",
    script=GATED_RUN,
    files=FILES,
    steps=[
        *_blocked_run(),
        step(
            "approvals",
            "list",
            stdout_has=[re.compile(r"{ask}\s+permission\s+native-fs-browse\.stat_file")],
        ),
        respond("ask", "deny"),
        wait("run", exit_code=None, timeout=60),
    ],
)

RESPOND_RELEASES_A_WAITING_RUN = Case(
    name="approvals respond releases a waiting run and it lands",
    script=GATED_RUN,
    files=FILES,
    steps=[
        *_blocked_run(),
        respond("ask", "approve"),
        wait(
            "run",
            timeout=120,
            stdout_has=["env file checked after approval"],
            notices_has=["finished: landed"],
        ),
        step("approvals", "list", stdout_lacks=["{ask}"]),
    ],
)
