"""The last uncovered host rows of issue 13: config keys that reach a run, and two
troubleshooting sentences.

- reference/config.md: `default-max-tokens` reaches a chain through `{{var:max_tokens}}`
  (read in what the model was sent, `state show --raw`);
- reference/contenox-cli.md `contenox config`: `default-mission-policy` is the envelope a
  subagent started by the `mission_start` tool runs under;
- guide/troubleshooting.md: a `vet` WARN line is not a failure, and `approvals respond`
  says plainly when nothing was checkpointed under the ask it answered.
"""

from __future__ import annotations

import hashlib
import json
import re
from signal import SIGINT

import pytest

from dialogs import GATED_ECHO
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    respond,
    signal,
    step,
    wait,
    write,
)
from harness.probes import approvals, captured_requests, missions, system_prompts

LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "capped and done")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)
CAPPER = (
    "---\nname: capper\ndescription: Says what its reply cap is\ntools: Read\n---\n\n"
    "Your replies are capped at {{var:max_tokens}} tokens.\n"
)


def _cap_prompts(instance: Instance) -> list[str]:
    """The sentence of each system prompt that states the cap, as the model received it."""
    lines: list[str] = []
    for rid in captured_requests(instance):
        for prompt in system_prompts(instance, rid):
            for line in prompt.splitlines():
                if line.startswith("Your replies are capped") and line not in lines:
                    lines.append(line)
    return lines


DEFAULT_MAX_TOKENS_REACHES_THE_MODEL = Case(
    name="default-max-tokens reaches the model through the var max_tokens macro",
    script=LANDS,
    files={".contenox/agents/capper.md": CAPPER},
    steps=[
        step("config", "set", "default-max-tokens", "4321"),
        step("run", "--policy", "run", "capper", "say your cap", notices_has=["finished: landed"]),
    ],
    probes=[
        probe(
            "the cap the model was told",
            _cap_prompts,
            expect=["Your replies are capped at 4321 tokens."],
        )
    ],
)

MAX_TOKENS_FLAG_WINS = Case(
    name="the max-tokens flag overrides default-max-tokens for one run",
    script=LANDS,
    files={".contenox/agents/capper.md": CAPPER},
    steps=[
        step("config", "set", "default-max-tokens", "4321"),
        step(
            "run",
            "--policy",
            "run",
            "--max-tokens",
            "999",
            "capper",
            "say your cap",
            notices_has=["finished: landed"],
        ),
    ],
    probes=[
        probe(
            "the cap the model was told",
            _cap_prompts,
            expect=["Your replies are capped at 999 tokens."],
        )
    ],
    defect=Defect(
        title="`run --max-tokens` does not reach the mission unit",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: exit 0, 'Mission … finished: landed'; the raw state of the unit's "
            "request holds 'capped at 4321 tokens.' (9 occurrences) and never 999 Note: Reproduces"
            " as written. No page says a global flag stops at the mission boundary. `run --help` "
            "lists --max-tokens among its Global Flags with the same 'Overrides config "
            "default-max-tokens when set.' I did not re-check the `chat --chain` control in the "
            "text."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# .contenox/agents/capper.md: a declared agent whose body says 'Your "
            "replies are capped at {{var:max_tokens}} tokens.'\n"
            "contenox config set default-max-tokens 4321\n"
            'contenox run --policy run --max-tokens 999 capper "say your cap"\n'
            "contenox state show <request> --raw   # the system message: 'Your "
            "replies are capped at 4321 tokens.'"
        ),
        promised='reference/contenox-cli.md:34 "Overrides `default-max-tokens` config."',
        observed=("the model is sent 4321, not 999 (under `chat --chain` the flag does reach it)"),
    ),
)

# ------------------------------------------------------------------ default-mission-policy

# One dialog serves two processes, each from its first turn: the acp session reads
# turn 0 as its router label (tool calls on that turn are dropped) and calls
# mission_start on turn 1; the subagent it starts is a new process whose turn 0
# files a report and lands.
SUBAGENT = Script(
    turns=[
        Turn(
            text="general",
            tool_calls=[
                mission_report("result", "subagent reporting home"),
                mission_finish("landed"),
            ],
        ),
        Turn(
            text="Starting a subagent.",
            tool_calls=[ToolCall("mission_start", {"agent": "run", "intent": "report home"})],
        ),
        "Started.",
    ],
    runs_past_end=True,
)
ENVELOPE = "hitl-policy-auto_edit.json"


@pytest.mark.no_transcript(
    reason="the fired unit's report chunks stream into the turn's text before or after its "
    "landing line, as the race goes"
)
def test_a_subagent_started_by_mission_start_runs_under_default_mission_policy(
    instance: Instance,
) -> None:
    # function: needs acp, and a dialog two processes replay from their first turn
    instance.init()
    instance.use_script(SUBAGENT)
    instance.must("config", "set", "default-mission-policy", ENVELOPE)
    with open_acp(instance) as acp:
        turn = acp.prompt("start a subagent that reports home", timeout=120)
    assert "unit run landed" in turn.text, turn.describe()
    assert "subagent reporting home" in turn.text, turn.describe()
    [started] = missions(instance)
    assert (started.agent, started.envelope, started.status) == ("run", ENVELOPE, "landed")
    # Kept off: the subagent replays this dialog from turn 0 and its calls land in the
    # acp session's stderr (5 stream calls seen for 3 turns), so the count is capped,
    # not per process: it cannot say which turns the session itself was served.
    instance.recorder.demand_checked = False


# ------------------------------------------------------------------ troubleshooting

TOOL = "#!/bin/sh\nexit 0\n"
# A digest of other bytes than the tool's: the declaration has drifted.
STALE_DIGEST = hashlib.sha256(b"an earlier build of mytool").hexdigest()
PINNED = json.dumps(
    {
        "version": 1,
        "default_action": "approve",
        "rules": [],
        "trusted_binaries": {
            "dirs": ["{work}/tools"],
            "hashes": {"{work}/tools/mytool": STALE_DIGEST},
        },
    }
)

WARN_IS_NOT_A_FAILURE = Case(
    name="a vet WARN line is not a failure and names what to do instead",
    steps=[
        write("tools/mytool", TOOL),
        write(".contenox/hitl-policy-pinned.json", PINNED),
        step(
            "vet",
            ".contenox/hitl-policy-pinned.json",
            exit_code=0,
            stdout_has=[
                "ok   .contenox/hitl-policy-pinned.json",
                "WARN .contenox/hitl-policy-pinned.json",
                "does not match the declared hash",
                "re-declare after verifying the upgrade",
            ],
            stdout_lacks=["FAIL"],
        ),
    ],
)

NOTHING_CHECKPOINTED = Case(
    name="answering an ask nothing was checkpointed under records the verdict and says so plainly",
    script=GATED_ECHO,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "120s", "echo hi"),
        await_ask("ask", run="run", tool="native-echo.echo", kind="permission"),
        # The run that raised it is still up and watching the row: it holds no checkpoint.
        respond(
            "ask",
            "approve",
            stdout_has=[
                "Verdict recorded for",
                "Nothing was checkpointed under it, so nothing resumed here",
            ],
        ),
        wait("run", stdout_has=["echoed after the verdict"]),
        probe("pending asks", approvals, expect=[]),
    ],
)


# ------------------------------------------------------------------ missions: how a stop reads

QUESTION = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {"question": "Which branch?", "summary": "which branch"},
                )
            ],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)
# The unit ends at its question (stopped, interrupted): the turns after the ask
# are never asked for; the question itself still is.
ENDS_AT_THE_QUESTION = QUESTION.optional_from(1)

STOPPED_BY_OPERATOR = Case(
    name="a mission stopped without a reason reads stopped by operator",
    script=ENDS_AT_THE_QUESTION,
    steps=[
        background(
            "fire", "mission", "fire", "run", "review a branch", "--policy", "run", "--wait"
        ),
        await_ask("ask", run="fire", kind="question"),
        step("mission", "stop", "{ask_mission}", stdout_has=["abandoned"]),
        wait(
            "fire",
            exit_code="non-zero",
            stdout_has=[re.compile(r"finished: abandoned — stopped by operator")],
        ),
        step(
            "mission",
            "show",
            "{ask_mission}",
            stdout_has=[re.compile(r"abandoned"), "stopped by operator"],
            stdout_lacks=["reclaimed"],
        ),
    ],
)

INTERRUPTED_FIRE = Case(
    name="an interrupted mission fire exits non-zero",
    script=ENDS_AT_THE_QUESTION,
    steps=[
        background(
            "fire", "mission", "fire", "run", "review a branch", "--policy", "run", "--wait"
        ),
        await_ask("ask", run="fire", kind="question"),
        signal("fire", SIGINT),
        wait("fire", exit_code="non-zero", stdout_lacks=["finished: landed"]),
    ],
)
