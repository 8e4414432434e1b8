"""The unattended parts of guide/tutorials/: what a mission unit does with nobody watching.

The vault and mission-agent tutorials' chain and envelopes (from `test_tutorials`), fired with
`contenox mission fire … --wait`: the nudge and blocker of a unit that never reports, the
`on_failure` recipe, an `approve` asked into an empty room, the compute ceiling, the fenced
vault mission's verdict and the oracle; plus the recurring-work per-agent policy and
first-agent's `agents.toml` defaults. A wait that must run out is contenox's own `--timeout`
(the documented behaviour is "stays open"), never a sleep of the harness.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chains import UNASKED
from test_tutorials import (
    MISSION_POLICY,
    UNATTENDED,
    VAULT_CHAIN,
    VAULT_FILES,
    declaration,
    listing,
)

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    group,
    mission_finish,
    mission_report,
    probe,
    probes,
    respond,
    satisfies,
    signal,
    step,
    wait,
)

FIRED_AT = re.compile(r"Mission (\S+) \(instance")
# contenox's own wait: long enough for a scripted unit's few turns under load, and the
# documented outcome is that the mission does not end.
NOT_FINISHED = "did not finish within"


def _vault_files(*, chain: str = VAULT_CHAIN, policy: str = MISSION_POLICY) -> dict[str, str]:
    """The vault tutorial's workspace with its chain and envelope replaced."""
    return {
        **VAULT_FILES,
        ".contenox/chain-agent-vaultfiler.json": chain,
        ".contenox/hitl-policy-vault.json": policy,
    }


def _with_mission(chain_text: str) -> str:
    """A chain with the mission toolset granted and the unattended instruction appended."""
    chain = json.loads(chain_text)
    task = chain["tasks"][0]
    task["execute_config"]["tools"] = [*task["execute_config"]["tools"], "mission"]
    task["system_instruction"] += UNATTENDED
    return json.dumps(chain, indent=2)


def _policy(**changes: Any) -> str:
    """The mission envelope of mission-agent.md step 5 with ``rules``/``compute`` changed."""
    policy = json.loads(MISSION_POLICY)
    policy.update(changes)
    return json.dumps(policy, indent=2)


def _fire(intent: str, *, timeout: str = "60s", **expect: Any) -> Any:
    """`mission fire vaultfiler <intent> --policy hitl-policy-vault.json --wait`."""
    return step(
        "mission",
        "fire",
        "vaultfiler",
        intent,
        "--policy",
        "hitl-policy-vault.json",
        "--wait",
        "--timeout",
        timeout,
        **expect,
    )


def _nudges(instance: Instance) -> list[str]:
    """The first sentence of each distinct nudge (a user message the runtime injects)."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            for message in unit.sent:
                text = message.content.strip()
                if message.role == "user" and text.startswith("Your last turn ended"):
                    first = text.split(". ")[0] + "."
                    if first not in seen:
                        seen.append(first)
    return seen


# ------------------------------------------------- mission-agent.md step 2: the mission toolset

WITHOUT_THE_MISSION_TOOLSET = Case(
    name=(
        "mission agent without the mission toolset is nudged once then files the blocker "
        "and stays open"
    ),
    # Two prose turns: the first ends the unit's turn, the nudge asks again, the second ends it
    # too. A third turn is never asked for: the runtime gives up and files the blocker.
    script=Script(turns=["I filed the notes.", "I said it already: the notes are filed."]),
    files=_vault_files(chain=VAULT_CHAIN),
    steps=[
        _fire(
            "File every file in inbox/ into the vault as a note",
            timeout="20s",
            exit_code="non-zero",
            stdout_has=[NOT_FINISHED],
            capture={"mission": group(FIRED_AT, stream="stdout")},
        ),
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"vaultfiler\s+hitl-policy-vault\.json\s+open")],
        ),
        step(
            "mission", "reports", "{mission}", stdout_has=["unit ended two turns without reporting"]
        ),
        probe(
            "the nudges the unit was sent",
            _nudges,
            expect=[
                "Your last turn ended without reaching outside this session, and no human is "
                "reading this chat."
            ],
        ),
    ],
)

# ------------------------------------------------- mission-agent.md step 4: on_failure reports

REPORT_FAILURE = {
    "id": "report_failure",
    "handler": "chat_completion",
    "system_instruction": (
        "The previous step failed. Call mission.mission_report with a `blocker` describing "
        "what failed and what you had completed before it, then call mission.mission_finish "
        "with `stuck`. Do not retry the work."
    ),
    "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["mission"],
    },
    "transition": {"branches": [{"operator": "default", "when": "", "goto": "end"}]},
}


def _failing_chain() -> str:
    """The mission chain whose work step errors (its model is served by no backend), with the
    tutorial's `on_failure` pointing at its `report_failure` task, verbatim."""
    chain = json.loads(_with_mission(VAULT_CHAIN))
    work = chain["tasks"][0]
    work["execute_config"]["model"] = "no-such-model"
    work["execute_config"]["provider"] = "scripted-test"
    work["transition"]["on_failure"] = "report_failure"
    chain["tasks"].append(REPORT_FAILURE)
    return json.dumps(chain, indent=2)


BLOCKER = "the file_notes step failed: its model is not served; nothing was filed"

# docs disagree: mission-agent.md:152 points on_failure at its report_failure task (a
# chat_completion that goes straight to `end`); handlers.md:26/:110 and agentic-loop.md
# say a chat_completion only emits tool calls, an execute_tool_calls task runs them.
# v1.0.0 does as the specification says: the calls are never executed, nothing is
# reported, and the mission stays open with the runtime's own blocker.
ON_FAILURE_TO_THE_TUTORIAL_TASK_EXECUTES_NOTHING = Case(
    name=(
        "mission agent a step error routed by on_failure to the tutorial s reporting task "
        "executes none of its mission calls and stays open"
    ),
    defect=Defect(
        title="mission-agent.md's report_failure task, as on_failure, cannot execute its "
        "mission calls",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: file_notes fails: 'chat: client resolution failed: no model"
            " matched the requirements'; report_failure runs (FinishReason:tool_calls served) and "
            "no execute_tool_calls task follows; fire rc=1 'did not finish within 1m0s'; mission "
            "show: Status open; the only report is '[blocker] unit ended two turns without "
            "reporting — last said: Reporting.Reporting.' Note: Reproduces (the blocker text "
            "repeats the scripted 'Reporting.' twice because the runtime's nudge turn drew a "
            "second text turn). The binary does what the handler specification describes. The "
            "tutorial's report_failure task is missing its execute_tool_calls step (and the "
            "tool_call branch to it), so this is a finding against mission-agent.md, not the "
            "binary."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; the mission vault chain whose work step's "
            "model no backend serves and whose `on_failure` is mission-agent.md step 4's "
            "`report_failure` task verbatim (a chat_completion with tools [mission], "
            "transition straight to `end`); a scripted-test backend serving report_failure's "
            "mission_report and mission_finish calls; `contenox mission fire vaultfiler … "
            "--policy hitl-policy-vault.json --wait`: the step error routes to report_failure, "
            "its calls are served but nothing executes them (no execute_tool_calls task "
            "follows); the mission stays `open`, the fire times out, the only report is "
            "'[blocker] unit ended two turns without reporting — last said: Reporting.'"
        ),
        promised=(
            'guide/tutorials/mission-agent.md:152 "Point `on_failure` at a task that reports"'
        ),
        observed="the mission stays open; no report of the failure is filed",
        bears_on=(
            'specification/handlers.md:26 "If the model calls a tool, the transition evaluates '
            'to `"tool_call"`."',
            'specification/handlers.md:110 "Executes the tool calls emitted by the previous '
            '`chat_completion` task"',
            'guide/chains/agentic-loop.md:20 "An `equals` branch on `"tool_call"` routes to '
            'the execute task; the `default` branch routes to `end`."',
        ),
        docs_disagree=True,
    ),
    script=Script(
        turns=[
            Turn(text="Reporting.", tool_calls=[mission_report("blocker", BLOCKER)]),
            Turn(tool_calls=[mission_finish("stuck")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files=_vault_files(chain=_failing_chain()),
    steps=[
        _fire(
            "File every file in inbox/ into the vault as a note",
            timeout="20s",
            exit_code="non-zero",
            stdout_has=[NOT_FINISHED],
            stdout_lacks=["finished: stuck"],
            capture={"mission": group(FIRED_AT, stream="stdout")},
        ),
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"vaultfiler\s+hitl-policy-vault\.json\s+open")],
        ),
        step(
            "mission",
            "reports",
            "{mission}",
            stdout_has=["unit ended two turns without reporting"],
            stdout_lacks=[BLOCKER],
        ),
    ],
)

# ------------------------------------------- mission-agent.md step 5: an approve in the envelope

APPROVE_IN_THE_VAULT = _policy(
    rules=[
        {"tools": "mission", "tool": "*", "action": "allow"},
        {"tools": "local_fs", "tool": "write_file", "action": "approve"},
    ]
)
WRITE_DRAFT = ToolCall("write_file", {"path": "vault/Draft.md", "content": "draft\n"})

AN_APPROVE_ASKS_AN_EMPTY_ROOM = Case(
    name=(
        "mission agent an approve in the mission envelope "
        "is a question nobody answers and the write waits"
    ),
    script=Script(
        turns=[
            Turn(text="Filing it.", tool_calls=[WRITE_DRAFT]),
            # Never asked for: nobody answers, so the write never comes back.
            Turn(tool_calls=[mission_finish("landed")], optional=True),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files=_vault_files(chain=_with_mission(VAULT_CHAIN), policy=APPROVE_IN_THE_VAULT),
    steps=[
        background(
            "fire",
            "mission",
            "fire",
            "vaultfiler",
            "File every file in inbox/ into the vault as a note",
            "--policy",
            "hitl-policy-vault.json",
            "--wait",
            "--timeout",
            "120s",
            ready="Mission fired",
            ready_stream="stdout",
        ),
        await_ask("ask", tool="local_fs.write_file", kind="permission", run="fire"),
        probe("the vault while the ask waits", listing("vault"), expect=[]),
        # Read while the ask waits: once the fire is interrupted the unit is torn down,
        # and its status then is `open` or `derailed` as the teardown races it.
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"vaultfiler\s+hitl-policy-vault\.json\s+open")],
        ),
        signal("fire"),
        wait("fire", exit_code="non-zero"),
    ],
    probes=[probe("the vault after the fire ended", listing("vault"), expect=[])],
)

# ------------------------------------------------------------- the compute ceiling, crossed

READ_MEETING = ToolCall("read_file", {"path": "inbox/meeting-notes.txt"})
ONE_CALL_CEILING = _policy(
    compute={"maxToolCalls": 1, "maxTokens": 400000, "onExhausted": "finish_stuck"}
)

# The tutorials say crossing compute.maxToolCalls ends the unit stuck; the
# reference (agents-config.md) and missions.md say it is validated but not
# enforced. The binary does what the reference says: three reads under a
# ceiling of one all run and the mission lands. The envelope is placed in
# ~/.contenox, where a unit loads a policy file.
THE_CEILING_ENDS_IT_STUCK = Case(
    name="mission agent a unit that crosses compute maxToolCalls runs on and lands",
    script=Script(
        turns=[
            *[Turn(text="Reading.", tool_calls=[READ_MEETING]) for _ in range(3)],
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files={
        k: v
        for k, v in _vault_files(chain=_with_mission(VAULT_CHAIN)).items()
        if "hitl-policy" not in k
    },
    home_files={"hitl-policy-vault.json": ONE_CALL_CEILING},
    steps=[
        _fire(
            "File every file in inbox/ into the vault as a note",
            stdout_has=["finished: landed"],
            stdout_lacks=["finished: stuck"],
        )
    ],
    defect=Defect(
        title="the tutorials say crossing compute.maxToolCalls ends a unit stuck; the reference "
        "says it is not enforced",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: envelope of mission-"
            "agent.md:192-206 with maxToolCalls 1; three read_file calls of "
            "inbox/meeting-notes.txt ran, no denial/exhaustion logged -> 'Mission"
            " … finished: landed', exit 0 Note: I fired the preseeded 'run' "
            "agent, not the vault tutorial's chain (time); opt-in-beta true. "
            "Binary matches reference/agents-config.md:168, guide/missions.md:243"
            " '**`maxToolCalls` does not bound anything today.**' and "
            "sovereignty.md:55; mission-agent.md:214-215 and vault-agent.md:204 "
            "disagree."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `~/.contenox/hitl-policy-vault.json` holding "
            'mission-agent.md\'s envelope with `"compute": {"maxToolCalls": 1, "maxTokens": '
            '400000, "onExhausted": "finish_stuck"}`; the tutorial\'s vault chain with the '
            "mission toolset as `.contenox/chain-agent-vaultfiler.json`; a scripted-test "
            "default backend whose dialog reads inbox/meeting-notes.txt three times, then "
            '`mission_finish landed`; `contenox mission fire vaultfiler "File every file in '
            'inbox/ into the vault as a note" --policy hitl-policy-vault.json --wait --timeout '
            "60s`: all three reads return the file and it prints 'Mission … finished: landed', "
            "exit 0"
        ),
        promised=(
            'reference/agents-config.md:168 "`max_tool_calls` is validated but not enforced by '
            'the shipped hosts."'
        ),
        observed="three tool calls under a ceiling of one, and the mission lands",
        bears_on=(
            'guide/tutorials/mission-agent.md:214-215 "`maxToolCalls` is counted here and a '
            'unit that crosses it ends `stuck` instead of grinding on unattended."',
            'guide/tutorials/vault-agent.md:204 "`compute` is the spend ceiling: 40 tool calls '
            'and 400k tokens. Crossing it ends"',
            'guide/missions.md:243 "**`maxToolCalls` does not bound anything today.**"',
            'guide/sovereignty.md:55 "`maxToolCalls` is validated but not yet enforced by the '
            'shipped hosts."',
        ),
        docs_disagree=True,
    ),
)

# ------------------------------------------------------- vault-agent.md: the fence's verdict

THE_FENCED_VAULT_MISSION_ENDS_STUCK = Case(
    name="vault agent the fenced mission without a mission toolset stays open with a blocker",
    defect=Defect(
        title="the fenced vault mission (no mission toolset) cannot end stuck with a blocker",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: rc=1, 'mission … did not finish within 30s: it is torn down"
            " …'; mission show: 'Status: open', one report '[blocker] unit ended two turns without"
            " reporting — last said: The write was denied; I cannot complete this.Still cannot.'; "
            'inbox/ holds only meeting-notes.txt. stderr: \'hitl: policy "hitl-policy-vault.json" '
            'unreadable, gating on default "hitl-policy-default.json" instead: … open '
            "~/.contenox/.generated/hitl-policy-vault.json: no such file or directory', and the "
            "write was refused through an... Note: The open/blocker outcome reproduces exactly, "
            "and mission-agent.md:62-80,105 says that is what a chain without the mission toolset "
            "does. So the vault tutorial's 'Status: stuck' transcript is what is wrong (a finding "
            "for the docs). There is a second, real problem underneath, and it is a binary defect:"
            " the tutorial's workspace .contenox/hitl-policy-vault.json is never loaded by the "
            "unit ('unreadab..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; the vault tutorial's files (chain with tools "
            "local_fs, local_shell, no mission toolset; .contenox/hitl-policy-vault.json); a "
            "scripted-test default backend whose dialog calls `write_file {path: "
            "inbox/draft.md, content: hello}` and then replies in text; `contenox mission fire "
            'vaultfiler "Write a file named draft.md directly inside the inbox folder with the '
            'text hello." --policy hitl-policy-vault.json --wait --timeout …`: the write is '
            "denied, then the unit cannot report or finish; the mission stays `open`, the only "
            "report is '[blocker] unit ended two turns without reporting', `--wait` runs out"
        ),
        promised=('guide/tutorials/vault-agent.md:297 "Status: stuck  (6s)"'),
        observed=(
            "status open; '[blocker] unit ended two turns without reporting', as "
            "mission-agent.md says of a chain without the mission toolset (and the workspace "
            "hitl-policy-vault.json is never loaded: 'unreadable, gating on default', the "
            "defect test_envelopes.py quarantines)"
        ),
        bears_on=(
            'guide/tutorials/mission-agent.md:105 "**A mission with no `mission_finish` never '
            'ends.**"',
            'guide/tutorials/mission-agent.md:79 "[blocker] unit ended two turns without '
            'reporting"',
        ),
        docs_disagree=True,
    ),
    script=Script(
        turns=[
            Turn(
                text="Writing it.",
                tool_calls=[ToolCall("write_file", {"path": "inbox/draft.md", "content": "hello"})],
            ),
            "The write_file call for inbox/draft.md was denied by the active policy.",
            Turn(text="Still denied.", optional=True),
        ]
    ),
    files=VAULT_FILES,
    steps=[
        step(
            "mission",
            "fire",
            "vaultfiler",
            "Write a file named draft.md directly inside the inbox folder with the text hello.",
            "--policy",
            "hitl-policy-vault.json",
            "--wait",
            "--timeout",
            "20s",
            exit_code="non-zero",
            stdout_has=["Mission fired at agent"],
            capture={"mission": group(FIRED_AT, stream="stdout")},
        ),
        # What the binary does, as mission-agent.md says: the mission stays open and the
        # runtime files the blocker; vault-agent.md's transcript prints "Status: stuck".
        step("mission", "show", "{mission}", stdout_has=["open"]),
        step(
            "mission",
            "reports",
            "{mission}",
            stdout_has=["unit ended two turns without reporting"],
        ),
    ],
)

# ----------------------------------------------------------- mission-agent.md step 8: the oracle

ASK_ID = "ask-filename-convention"
ORACLE_ANSWER = "Use kebab-case for all note filenames."

THE_ORACLE_ANSWERS = Case(
    name=(
        "mission agent with default oracle chain set "
        "the oracle answers a question the intent answers"
    ),
    defect=Defect(
        title="with default-oracle-chain set, the oracle never answers a unit's question",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init; inbox/raw1.txt, vault/; "
            ".contenox/chain-agent-vaultfiler.json = vault-agent.md's chain with tools "
            "[local_fs, local_shell, mission] (agent list: vaultfiler discovered true); "
            "~/.contenox/hitl-policy-vault.json = mission-agent.md step-5 envelope "
            "(attention.allowAgentAnswers true, maxAgentAnswers 3); `config set "
            "default-oracle-chain chain-oracle-default.json` ✓; scripted dialog: "
            "mission_ask_attention(id ask-1, summary 'Confirm filename convention'), then "
            "oracle submit_verdict answer, 'DONE', mission_finish, text. `mission fire "
            'vaultfiler "File every file … Use kebab-case for all note filenames." '
            "--policy hitl-policy-vault.json --wait --timeout 30s` -> exit 1 after 30s 'did "
            "not finish within 30s'; stderr has no 'oracle' line at all (grep -i oracle: 0 "
            "hits); only one..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `~/.contenox/hitl-policy-vault.json` holding "
            "mission-agent.md's envelope (attention.allowAgentAnswers true); the mission vault "
            "chain; `contenox config set default-oracle-chain chain-oracle-default.json`; a "
            "scripted-test default backend whose unit turn calls mission_ask_attention "
            "'Confirm filename convention', then the oracle's submit_verdict turn; `contenox "
            'mission fire vaultfiler "File every file in inbox/ into the vault as a note. Use '
            'kebab-case for all note filenames." --policy hitl-policy-vault.json --wait '
            "--timeout 30s`: no oracle line on stderr, the oracle's turn is never served, the "
            "question waits in `contenox approvals list` (KIND question), the fire runs out "
            "its --timeout"
        ),
        promised=('guide/tutorials/mission-agent.md:311 "oracle: answered ask c5dfb1ae in 8.922s"'),
        observed="no oracle line; the question stays pending",
    ),
    script=Script(
        turns=[
            Turn(
                text="Asking.",
                tool_calls=[
                    ToolCall(
                        "mission_ask_attention",
                        {"summary": "Confirm filename convention", "detail": "Which case?"},
                        id=ASK_ID,
                    )
                ],
            ),
            # The oracle's verdict, then the unit carries on with the answer.
            Turn(
                tool_calls=[
                    ToolCall(
                        "submit_verdict",
                        {"verdict": "answer", "answer": ORACLE_ANSWER, "askId": ASK_ID},
                    )
                ]
            ),
            Turn(text="Verdict submitted."),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    # The envelope in ~/.contenox, where a unit loads a policy file (in the
    # workspace's .contenox/ it gates on the default envelope).
    files={
        k: v for k, v in _vault_files(chain=_with_mission(VAULT_CHAIN)).items() if "hitl" not in k
    },
    home_files={"hitl-policy-vault.json": MISSION_POLICY},
    steps=[
        step("config", "set", "default-oracle-chain", "chain-oracle-default.json"),
        _fire(
            "File every file in inbox/ into the vault as a note. Use kebab-case for all note "
            "filenames.",
            timeout="30s",
            exit_code=None,
            notices_has=["oracle: answered ask"],
            stdout_has=["finished: landed"],
        ),
    ],
)

# ------------------------------------------ recurring-work.md: the per-agent policy's grant

TIMESHEET_TOML = """\
[[agents.timesheet.policy.always_allow]]
tools = "native-echo"
tool = "echo"
"""

READ_THEN_SUBMIT = Script(
    turns=[
        Turn(text="Reading the hours.", tool_calls=[ToolCall("echo", {"input": "40 hours"})]),
        Turn(text="Submitting.", tool_calls=[ToolCall("jq_query", {"query": ".", "input": "{}"})]),
        Turn(tool_calls=[mission_finish("stuck")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _echoed(instance: Instance) -> list[str]:
    """The echo results the model was sent, over every run: the read ran, and its output."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            for message in unit.sent:
                if message.role == "tool" and "40 hours" in message.content:
                    if message.content not in seen:
                        seen.append(message.content)
    return seen


THE_PER_AGENT_GRANT = Case(
    name=(
        "recurring job a per agent always_allow runs that tool unattended and anything else "
        "stops and waits"
    ),
    # `echo` stands for `get_hours`, `jq_query` for the submit the policy never granted. The
    # rule is emitted into the agent's own policy (.generated/hitl-policy-timesheet.json),
    # which is the envelope here: under the `run` envelope the per-agent rule is not consulted.
    script=READ_THEN_SUBMIT,
    files={
        ".contenox/agents/timesheet.md": declaration("timesheet", '"*"'),
        ".contenox/agents.toml": TIMESHEET_TOML,
    },
    steps=[
        background(
            "fire",
            "run",
            "--policy",
            "hitl-policy-timesheet.json",
            "--timeout",
            "120s",
            "timesheet",
            "file this week",
            ready="Mission fired",
        ),
        await_ask("submit", tool="native-jq.jq_query", kind="permission", run="fire"),
        probe(
            "pending asks while the submit waits",
            probes.approvals,
            expect=satisfies(
                lambda asks: [a.tool for a in asks] == ["native-jq.jq_query"],
                "only the submit waits; the read ran unasked",
            ),
        ),
        respond("submit", "deny"),
        wait("fire", exit_code="non-zero", notices_has=["finished: stuck"]),
    ],
    probes=[
        probe(
            "the read's result the model was sent",
            _echoed,
            expect=satisfies(lambda results: len(results) == 1, "the echo ran once, unasked"),
        )
    ],
)

# ------------------------------------------------ first-agent.md: agents.toml for every agent

EVERY_AGENT_TOML = """\
[chain]
token_limit = 48000

[tools_policies.local_shell]
_allowed_commands = "git,ls"
"""


def _emitted(instance: Instance) -> dict[str, tuple[int, str]]:
    """Per declared agent, its emitted chain's token_limit and local_shell allowlist."""
    out: dict[str, tuple[int, str]] = {}
    for agent in ("alpha", "beta"):
        path = instance.work / ".contenox" / ".generated" / f"chain-agent-{agent}.json"
        chain = json.loads(path.read_text(encoding="utf-8"))
        shell = chain["tasks"][0]["execute_config"]["tools_policies"]["local_shell"]
        out[agent] = (chain["token_limit"], shell["_allowed_commands"])
    return out


AGENTS_TOML_APPLIES_TO_EVERY_AGENT = Case(
    name="first agent chain and tools_policies in agents toml apply to every agent",
    script=UNASKED,
    files={
        ".contenox/agents/alpha.md": declaration("alpha", "Read, Bash"),
        ".contenox/agents/beta.md": declaration("beta", "Read, Bash"),
        ".contenox/agents.toml": EVERY_AGENT_TOML,
    },
    steps=[step("agent", "list", stdout_has=["alpha", "beta"], notices_lacks=["refused"])],
    probes=[
        probe(
            "each emitted chain's token_limit and shell allowlist (.generated/)",
            _emitted,
            expect={"alpha": (48000, "git,ls"), "beta": (48000, "git,ls")},
        )
    ],
)
