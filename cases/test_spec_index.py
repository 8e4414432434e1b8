"""specification/index.md's chain fields that only a running chain shows: `timeout`, `debug`.

Each chain here is dropped in `.contenox/` as a `chain-agent-*.json` and fired as a mission
under an envelope that allows everything, so the unit serves `local_shell` itself and nothing
waits on an ask.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chains import MODEL

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    probe,
    probes,
    step,
)

OPEN = json.dumps({"default_action": "allow", "rules": []})


def _agent(chain_id: str, *, run_tools: dict[str, Any] | None = None, **top: Any) -> str:
    """A chat + execute_tool_calls loop granting `local_shell` (only `sh`) and `mission`."""
    ask = {
        "id": "ask",
        "handler": "chat_completion",
        "execute_config": {
            **MODEL,
            "tools": ["local_shell", "mission"],
            "tools_policies": {"local_shell": {"_allowed_commands": "sh"}},
        },
        "transition": {
            "branches": [
                {"operator": "equals", "when": "tool_call", "goto": "run_tools"},
                {"operator": "default", "when": "", "goto": "end"},
            ]
        },
    }
    tools = {
        "id": "run_tools",
        "handler": "execute_tool_calls",
        **(run_tools or {}),
        "transition": {"branches": [{"operator": "default", "when": "", "goto": "ask"}]},
    }
    return json.dumps({"id": chain_id, "token_limit": 8192, **top, "tasks": [ask, tools]}, indent=2)


def _fire(agent: str, **expect: Any) -> Any:
    return step(
        "mission",
        "fire",
        agent,
        "go",
        "--policy",
        "hitl-policy-open.json",
        "--wait",
        "--timeout",
        "90s",
        **expect,
    )


# A command that waits for a file the case never writes: only the task's timeout ends it.
WAIT_FOREVER = ToolCall(
    "local_shell",
    {"command": "sh", "args": ["-c", "until [ -f never-written ]; do sleep 0.2; done"]},
)


def _shell_results(instance: Instance) -> list[str]:
    """The `stdout` of each local_shell result the model was sent, over every run."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            for message in unit.sent:
                if message.role == "tool" and '"command":"sh"' in message.content:
                    out = json.loads(message.content).get("stdout", "").strip()
                    if out not in seen:
                        seen.append(out)
    return seen


TIMEOUT_BOUNDS_A_TASK = Case(
    name="a task timeout ends a tool step that would otherwise never return",
    script=Script(
        turns=[
            Turn(text="Waiting.", tool_calls=[WAIT_FOREVER]),
            "The command was cut off.",
            Turn(tool_calls=[mission_finish("stuck")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files={
        ".contenox/chain-agent-slow.json": _agent("slow", run_tools={"timeout": "2s"}),
        ".contenox/hitl-policy-open.json": OPEN,
    },
    steps=[_fire("slow", exit_code=None, stdout_has=["finished: stuck"])],
    probes=[
        probe(
            "what the waiting command's result said",
            _shell_results,
            expect=["[command killed: timeout exceeded]"],
        )
    ],
)

DEBUG_LOGS_MORE = Case(
    name="a chain with debug true logs task level detail at debug level",
    defect=Defect(
        title="a chain's `debug: true` logs nothing more",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Two fresh HOME+workspace pairs, identical except for "
            "the chain's top-level debug flag. Each had .contenox/chain-agent-dbg.json (id "
            "dbg, token_limit 32768, act[tools mission] -> tools -> act), an allow-all "
            "envelope .contenox/hitl-policy-allowall.json, and a scripted dialog "
            "mission_finish landed, then text. `mission fire dbg go --policy "
            "hitl-policy-allowall.json --wait 2> debug.log` -> 'finished: landed', exit 0, "
            "in both. debug:true gave 116 level= lines, all level=INFO; debug:false gave "
            "the same 116 all-INFO lines. The sorted (msg, operation, subject) sets are "
            "identical. Neither run wrote a *.log under ~/.contenox or .contenox. Note: "
            "Reproduces. specification/index.md:39 says debug 'Enable verbose task-level "
            "logging'. No other page qualifies it. I did not test the `chat --chain` part "
            "of th..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            '# .contenox/chain-agent-dbg.json: a chain agent with top-level "debug": '
            "true; dialog: a mission_finish turn\n"
            "contenox mission fire dbg go --policy <an allow-all envelope> --wait 2> "
            "debug.log\n"
            "grep -c level= debug.log; grep -vc level=INFO debug.log   # 110 lines, "
            'every one level=INFO, as with "debug": false'
        ),
        promised='specification/index.md:39 "Enable verbose task-level logging"',
        observed=(
            "the same INFO lines as without debug; `chat --chain` prints only "
            "'Thinking...' either way"
        ),
    ),
    script=Script(
        turns=[Turn(tool_calls=[mission_finish("landed")]), Turn(text="Done.", optional=True)]
    ),
    files={
        ".contenox/chain-agent-dbg.json": _agent("dbg", debug=True),
        ".contenox/hitl-policy-open.json": OPEN,
    },
    steps=[_fire("dbg", stdout_has=["finished: landed"], stderr_has=[re.compile(r"level=DEBUG")])],
)
