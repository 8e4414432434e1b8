"""The units of guide/tutorials/first-agent.md and mission-agent.md no other case asserted.

Each case follows the tutorial's own files (`test_tutorials`): a tool the declaration names
and `agents.toml` connects, asked on every call until a rule lets it run; the trace a fenced
write leaves on the fire's stderr, denied and allowed; the mission toolset under an envelope
that never allows it; and a chain agent's name across a file rename and an `id` change.
"""

from __future__ import annotations

import json
import re

from chains import UNASKED
from test_tutorials import (
    FENCE_SCRIPT,
    FIRE_MISSION,
    FIRED,
    MISSION_FILES,
    MISSION_POLICY,
    NOTE_PATH,
    VAULT_CHAIN,
    VAULT_FILES,
    WITH_POLICY,
    WRITE_NOTE,
    _policy_of,
    _refusals,
    declaration,
    listed,
    listing,
    mission_chain,
)
from test_tutorials_unattended import (
    APPROVE_IN_THE_VAULT,
    REPORT_FAILURE,
    WRITE_DRAFT,
    _vault_files,
    _with_mission,
)

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
    group,
    mission_finish,
    mission_report,
    probe,
    probes,
    remove,
    respond,
    satisfies,
    signal,
    step,
    wait,
    write,
)

# ------------------------------------------------ first-agent.md: connecting a tool

# `native-echo.echo` stands in for the tutorial's `tavily.search` (an MCP server on the
# network): the declaration names `WebSearch` and `[tools]` maps it to a connected tool.
CONNECTED = '[tools]\nWebSearch = "native-echo.echo"\n'
LET_IT_RUN = '\n[[policy.always_allow]]\ntools = "native-echo"\ntool = "echo"\n'
SEARCHER = {".contenox/agents/searcher.md": declaration("searcher", "Read, WebSearch")}
RUN_SEARCHER = ("run", "--policy", "searcher", "--timeout", "120s", "searcher", "search it")

# The gate: the connected tool matches no rule of the agent's policy, so it falls to
# `default_action` (approve) and each call waits on an ask until a person answers it: the
# second call asks again after the first was approved.
SEARCHES_TWICE = Script(
    turns=[
        Turn(text="Searching.", tool_calls=[ToolCall("echo", {"input": "first search"})]),
        Turn(text="Searching again.", tool_calls=[ToolCall("echo", {"input": "second search"})]),
        Turn(tool_calls=[mission_report("result", "echoed after both verdicts")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Done.", optional=True),
    ]
)
ONE_ECHO_WAITS = satisfies(
    lambda asks: [a.tool for a in asks] == ["native-echo.echo"],
    "one call of the connected tool, and nothing else, waits",
)

A_CONNECTED_TOOL_ASKS = Case(
    name="first agent a tool connected under tools matches no rule and asks before it runs",
    script=SEARCHES_TWICE,
    files={**SEARCHER, ".contenox/agents.toml": CONNECTED},
    steps=[
        background("run", *RUN_SEARCHER, ready="Mission fired"),
        await_ask("first", run="run", tool="native-echo.echo", kind="permission"),
        probe("pending asks while the first call waits", probes.approvals, expect=ONE_ECHO_WAITS),
        respond("first", "approve"),
        await_ask("second", run="run", tool="native-echo.echo", kind="permission"),
        probe("pending asks while the second call waits", probes.approvals, expect=ONE_ECHO_WAITS),
        respond("second", "approve"),
        wait("run", notices_has=["finished: landed"], stdout_has=["echoed after both verdicts"]),
    ],
)

# The control: only `[[policy.always_allow]]` for the tool is added; the call runs unasked.
AN_ALWAYS_ALLOW_LETS_IT_RUN = Case(
    name="first agent a policy always_allow for the connected tool lets it run unattended",
    script=GATED_ECHO,
    files={**SEARCHER, ".contenox/agents.toml": CONNECTED + LET_IT_RUN},
    steps=[
        step(
            *RUN_SEARCHER,
            notices_has=["finished: landed"],
            stdout_has=["echoed after the verdict"],
        ),
    ],
    probes=[probe("pending asks", probes.approvals, expect=[])],
)

# ------------------------------------------------ mission-agent.md step 7: the trace

# The tutorial's workspace envelope: the unit gates on its own envelope first, which says
# `approve` for a write; the permission request it raises is answered by the mission
# envelope. The fire's stderr carries the unit's trace: the ask (its tool and the policy
# that raised it), the answer's option and the verdict.
ASK_RAISED = re.compile(r'subject="ask raised" .*\btool=write_file\b.*\bpolicy=hitl-policy-\S+')


def _trace(option: str, approved: str) -> list[re.Pattern[str]]:
    return [
        ASK_RAISED,
        re.compile(rf"subject=acp_permission .*change_id=option_id change_data={option}\b"),
        re.compile(rf'subject="verdict entered" .*\btool=write_file\b.*\bapproved={approved}\b'),
    ]


INSIDE = "vault/Inside.md"
# Step 7's intent, verbatim; and the same shape for a write the envelope allows.
OUTSIDE_INTENT = (
    "Write a file named escape.md in the workspace root, NOT inside vault/. Attempt the write."
)
INSIDE_INTENT = "Write a file named Inside.md inside vault/. Attempt the write."
THE_TRACE = [
    Case(
        name=f"mission agent a write {where} is asked of the mission envelope and the trace "
        f"reads {option}",
        script=Script(
            turns=[
                Turn(
                    text="Attempting the write.",
                    tool_calls=[ToolCall("write_file", {"path": path, "content": "out\n"})],
                ),
                Turn(tool_calls=[mission_finish(verdict)]),
                Turn(text="Mission finished.", optional=True),
            ]
        ),
        files=MISSION_FILES,
        steps=[
            step(
                *FIRE_MISSION,
                intent,
                *WITH_POLICY,
                exit_code=None,
                stdout_has=[FIRED, f"finished: {verdict}"],
                stderr_has=_trace(option, approved),
            ),
        ],
        probes=[probe(f"{path} written", lambda i, p=path: (i.work / p).exists(), expect=written)],
    )
    for where, intent, path, option, approved, verdict, written in (
        ("outside the vault", OUTSIDE_INTENT, "escape.md", "deny", "false", "stuck", False),
        ("inside the vault", INSIDE_INTENT, INSIDE, "allow", "true", "landed", True),
    )
]

# ------------------------------------------------ mission-agent.md step 5: the mission rule


def _without_the_mission_rule() -> str:
    policy = json.loads(MISSION_POLICY)
    policy["rules"] = [r for r in policy["rules"] if r["tools"] != "mission"]
    return json.dumps(policy, indent=2)


# docs disagree: mission-agent.md:209-211 says the envelope must allow the mission toolset
# for its calls to run; agents-config.md:313-314 (the contract) says the mission toolset is
# exempt from approval. v1.0.0 does as the reference says. The envelope sits in ~/.contenox,
# where the unit loads it (its write deny, rule 3 here, is what the write gets).
THE_MISSION_TOOLSET_IS_EXEMPT = Case(
    name="mission agent an envelope that never allows the mission toolset still lets the unit "
    "report and land",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: fresh HOME; vault workspace, chain with tools [local_fs, "
            "local_shell, mission]; ~/.contenox/hitl-policy-vault.json = mission-agent.md's "
            "step-5 envelope minus its first rule (rules left: local_fs read_file allow; "
            "local_shell ls allow; write_file **/vault/** allow; write_file deny; default_action "
            "deny); dialog [write_file escape.md; mission_report result 'filed nothing outside "
            "the vault'; mission_finish landed; 'Done.']. `contenox mission fire vaultfiler 'File"
            " it' --policy hitl-policy-vault.json --wait --timeout 60s` rc=0: 'Denied by the "
            "active policy hitl-policy-vault.json (rule 3)' for the write, escape.md not created,"
            " then 'Mission ... finished: landed', '[result] filed nothing outside the vault'. "
            "The trace has a hitl 'subject=evaluate' only for toolName=write_file, none for the "
            "mission calls. Note: guide/tutorials/mission-agent.md:209-211 ('the mission toolset "
            "needs allowing too ... the envelope decides whether the calls run') and :336 say an "
            "envelope that doesn't allow `mission` keeps the unit from reporting. "
            "reference/agents-config.md:313-314 and guide/hitl.md:277 say the binary is right: "
            "'the mission toolset is exempt from approval'. The binary treats mission calls as "
            "outside the envelope: they run even under default_action deny with no rule. So the "
            "tutorial's 'first rule' is unnecessary, and its troubleshooting row's 'not allowed "
            "in the envelope' cause can't happen."
        ),
        title="mission-agent.md says the envelope must allow the mission toolset; "
        "agents-config.md says it is exempt from approval",
        reproduce=(
            "in a scratch HOME, `contenox init`; `~/.contenox/hitl-policy-vault.json` holding "
            "mission-agent.md's step 5 envelope without its first rule (`mission` `*` allow; "
            'default_action "deny"); the tutorial\'s `.contenox/chain-agent-vaultfiler.json` '
            "with the mission toolset; a scripted-test default backend whose dialog calls "
            "`write_file escape.md`, then `mission_report result`, then `mission_finish "
            'landed`; `contenox mission fire vaultfiler "File it" --policy '
            "hitl-policy-vault.json --wait --timeout 60s`: the write is refused ('Denied by "
            "the active policy hitl-policy-vault.json (rule 3)'), escape.md is not created, "
            "and the report and the verdict run: 'finished: landed', '[result] filed nothing "
            "outside the vault', exit 0"
        ),
        promised=(
            'reference/agents-config.md:313-314 "`missions.answer` is the one axis whose '
            'carrier is not a rule: the mission toolset is exempt from approval"'
        ),
        observed="the report and the verdict run under an envelope whose default denies "
        "every unruled call; the mission lands",
        bears_on=(
            'guide/tutorials/mission-agent.md:209-211 "Note the first rule: **the mission '
            "toolset needs allowing too.** Granting it in the chain lets the agent see the "
            'tools; the envelope decides whether the calls run."',
            'guide/tutorials/mission-agent.md:336 "Either the `mission` toolset is not granted '
            "in the chain, not allowed in the envelope, or the system instruction never told "
            'it to report."',
            'guide/hitl.md:277 "the mission toolset is exempt from approval"',
        ),
        docs_disagree=True,
    ),
    script=Script(
        turns=[
            Turn(
                text="Attempting the write.",
                tool_calls=[ToolCall("write_file", {"path": "escape.md", "content": "out\n"})],
            ),
            Turn(
                text="Reporting.",
                tool_calls=[mission_report("result", "filed nothing outside the vault")],
            ),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    files={k: v for k, v in MISSION_FILES.items() if "hitl-policy" not in k},
    home_files={"hitl-policy-vault.json": _without_the_mission_rule()},
    steps=[
        step(
            *FIRE_MISSION,
            "File every file in inbox/ into the vault as a note",
            *WITH_POLICY,
            stdout_has=[FIRED, "finished: landed", "filed nothing outside the vault"],
        ),
    ],
    probes=[
        # The envelope in force is the one fired: its write deny is what the write got.
        probe(
            "the refusal the model was sent",
            _refusals,
            expect=satisfies(
                lambda rs: (
                    len(rs) == 1
                    and rs[0].startswith(
                        "Denied by the active policy hitl-policy-vault.json (rule 3)"
                    )
                ),
                "one refusal: the envelope's write deny, rule 3",
            ),
        ),
        probe("escape.md written", lambda i: (i.work / "escape.md").exists(), expect=False),
    ],
)

# ------------------------------------------------ mission-agent.md step 1: the agent's name

CHAIN = ".contenox/chain-agent-vaultfiler.json"
RENAMED = ".contenox/chain-agent-notes.json"

THE_NAME_IS_THE_ID = Case(
    name="mission agent a renamed chain agent file keeps its name and a changed id renames it",
    script=UNASKED,
    files=VAULT_FILES,
    steps=[
        step("agent", "list", stdout_has=[listed("vaultfiler")]),
        remove(CHAIN),
        write(RENAMED, VAULT_CHAIN),
        step("agent", "list", stdout_has=[listed("vaultfiler")], stdout_lacks=["notes"]),
        write(RENAMED, VAULT_CHAIN.replace('"id": "vaultfiler"', '"id": "notefiler"')),
        step(
            "agent",
            "list",
            stdout_has=[listed("notefiler")],
            stdout_lacks=[listed("vaultfiler")],
        ),
    ],
)

# ------------------------------------------------ mission-agent.md step 4: a denial is no failure


# The tutorial's mission chain with its step 4 `on_failure` recipe wired into both tasks. A
# denied write is a tool result, not a step error: the unit's next turn is its own
# (`mission_finish stuck`). Had `on_failure` fired, `report_failure` would have taken that
# turn and gone to `end` without executing it, and the mission would not end `stuck`.
def _chain_with_on_failure() -> str:
    chain = json.loads(mission_chain())
    # On both tasks: the denial comes back in `run_tools`, the chat task reads it.
    for task in chain["tasks"]:
        task["transition"]["on_failure"] = "report_failure"
    chain["tasks"].append(REPORT_FAILURE)
    return json.dumps(chain, indent=2)


A_DENIAL_DOES_NOT_FIRE_ON_FAILURE = Case(
    name="mission agent a denied call raises no step error and on_failure never fires",
    script=FENCE_SCRIPT,
    files={**MISSION_FILES, ".contenox/chain-agent-vaultfiler.json": _chain_with_on_failure()},
    steps=[
        step(
            *FIRE_MISSION,
            OUTSIDE_INTENT,
            *WITH_POLICY,
            exit_code=None,
            stdout_has=[FIRED, "finished: stuck"],
        ),
    ],
    probes=[probe("escape.md written", lambda i: (i.work / "escape.md").exists(), expect=False)],
)

# ------------------------------------------------ mission-agent.md: when a mission goes wrong

# An `approve` in the mission envelope with nobody to ask: the write waits on its ask; when
# the fire is interrupted the wait is cancelled, and the unit's trace says so. v1.0.0 logs the
# cancelled permission request (`ctx_err … "context canceled"`) but never the error line the
# table names.
NOBODY_TO_ASK = Case(
    name="mission agent an approve with nobody to ask ends in approval error context canceled",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME; vault workspace (vault-agent.md chain with tools "
            "local_fs, local_shell, mission, plus the step-3 UNATTENDED text); envelope "
            "{default deny; mission * allow; local_fs write_file approve}; dialog [write_file "
            "vault/Draft.md 'draft'; 'waiting'; 'waiting']. `contenox mission fire vaultfiler "
            "'File it' --policy hitl-policy-vault.json --wait --timeout 8s` rc=1. With the "
            'envelope at ~/.contenox/hitl-policy-vault.json: stderr \'subject="ask raised" ... '
            "tool=write_file ... policy=hitl-policy-vault.json', then 8 s later "
            "'subject=acp_permission ... change_id=rpc_error change_data=\"libacp: connection "
            "closed\"', '... change_id=ctx_err change_data=\"context canceled\"'; grep -c "
            "'approval error' = 0; vault/ empty; mission show: 'Status: open'. With the "
            "envelope at workspace .contenox/hitl-policy-vault.json (where the tutorials save "
            "it) it's the same, except the ask says policy=hitl-policy-default.json, because "
            'the unit logs \'hitl: policy "hitl-policy-vault.json" unreadable, gating on default'
            ' "hitl-policy-default.json" instead: ... open <HOME>/.contenox/.generated/hitl-'
            "policy-vault.json: no such file', and the mission ends 'derailed — ... instance "
            "not found'. Still no 'approval error' line. Note: guide/tutorials/mission-"
            "agent.md:339 tells the operator to look for `hitl: approval error: context "
            "canceled`. The binary never prints that line; the cancellation shows up only as "
            'acp_permission change_id=ctx_err change_data="context canceled" (plus \'libacp: '
            "connection closed'). The diagnosis (an approve with nobody to ask, which hangs "
            "until --timeout) is right, but the string the table tells you to grep for doesn't "
            "exist. No other page gives the real shape. Side finding, outside this entry: a "
            "mission unit doesn't resolve an envelope saved in the workspace's .contenox/ "
            "(vault-agent.md step 4 saves it there) and silently gates on hitl-policy-"
            "default.json."
        ),
        title="an approve with nobody to ask never logs 'hitl: approval error: context "
        "canceled', the line mission-agent.md's table tells you to look for",
        reproduce=(
            "in a scratch HOME, `contenox init`; the tutorial's vault workspace with the "
            "mission toolset and `.contenox/hitl-policy-vault.json` holding "
            '`{"default_action": "deny", "rules": [{"tools": "mission", "tool": "*", '
            '"action": "allow"}, {"tools": "local_fs", "tool": "write_file", "action": '
            '"approve"}]}`; a scripted-test default backend whose dialog calls `write_file '
            'vault/Draft.md`; `contenox mission fire vaultfiler "File it" --policy '
            "hitl-policy-vault.json --wait --timeout 8s` (or Ctrl-C while it waits): stderr "
            "has 'subject=\"ask raised\" … policy=hitl-policy-default.json' and "
            "'subject=acp_permission … change_id=ctx_err change_data=\"context canceled\"', "
            "and no line holds 'approval error'; `mission show` reads Status open"
        ),
        promised=(
            'guide/tutorials/mission-agent.md:339 "| `hitl: approval error: context canceled` '
            '| Something evaluated to `approve` with nobody to ask."'
        ),
        observed="'subject=acp_permission … change_id=ctx_err change_data=\"context "
        "canceled\"' and 'libacp: connection closed'; no 'hitl: approval error' line",
        bears_on=(
            'guide/tutorials/mission-agent.md:188-189 "So an `approve` in the mission envelope '
            'is not a pause. It is a question asked into an empty room."',
        ),
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
            *FIRE_MISSION,
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
        signal("fire"),
        wait(
            "fire",
            exit_code="non-zero",
            stderr_has=[re.compile(r"hitl: approval error: context canceled")],
        ),
    ],
    probes=[probe("vault/ after the fire", listing("vault"), expect=[])],
)

# ------------------------------------------------ mission-agent.md step 4: the shipped acp agent


def _acp_tree(instance: Instance) -> list[str]:
    """The recovery and failure prompts of the shipped `acp` agent under ~/.contenox/agents/."""
    root = instance.home / ".contenox" / "agents" / "acp"
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.md") if p.name != "agent.md")


THE_ACP_AGENT_RECOVERS = Case(
    name="mission agent the shipped acp agent has a recovery md per retrying branch and a "
    "root failure md",
    script=UNASKED,
    steps=[step("agent", "list", stdout_has=[listed("chain-acp")])],
    probes=[
        probe(
            "the acp agent's recovery and failure prompts",
            _acp_tree,
            expect=["coding/recovery.md", "failure.md", "general/recovery.md"],
        )
    ],
)

# ------------------------------------------------ mission-agent.md step 1: a declared agent's name

# The file is named apart from its frontmatter: the agent is the frontmatter's `name:`.
THE_FRONTMATTER_NAMES_IT = Case(
    name="mission agent a declared agent is named by its frontmatter not its file name",
    script=UNASKED,
    files={".contenox/agents/notes-file.md": declaration("frontname", "Read")},
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[listed("frontname")],
            stdout_lacks=["notes-file"],
            notices_lacks=["refused"],
        )
    ],
)

# ------------------------------------------------ first-agent.md: the generated files follow


def _write_action(instance: Instance) -> dict[str, str | None]:
    """The unconditional `write_file` action of the policy generated for `mine`."""
    return {"write_file": _policy_of("mine")(instance)["write_file"]}


EDIT_THE_DECLARATION = Case(
    name="first agent an edited declaration is what its generated policy says next",
    script=UNASKED,
    files={".contenox/agents/mine.md": declaration("mine", "Read, Write")},
    steps=[
        step("agent", "list", stdout_has=[listed("mine")]),
        probe("the generated policy's write rule", _write_action, expect={"write_file": "approve"}),
        write(
            ".contenox/agents/mine.md",
            declaration("mine", "Read, Write", "permissionMode: acceptEdits"),
        ),
        step("agent", "list", stdout_has=[listed("mine")]),
        probe(
            "the generated policy's write rule, after the edit",
            _write_action,
            expect={"write_file": "allow"},
        ),
    ],
)

# ------------------------------------------------ mission-agent.md step 6: reading the record

FIRED_AT = re.compile(r"Mission (\S+) \(instance")
LANDS_WITH_A_NOTE = Script(
    turns=[
        Turn(text="Filing it.", tool_calls=[WRITE_NOTE]),
        Turn(text="Reporting.", tool_calls=[mission_report("result", f"wrote {NOTE_PATH}")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)

THE_RECORD_IS_READ_BACK = Case(
    name="mission agent mission show reports and inbox list read the landed mission's record",
    script=LANDS_WITH_A_NOTE,
    files=MISSION_FILES,
    steps=[
        step(
            *FIRE_MISSION,
            "File every file in inbox/ into the vault as a note",
            *WITH_POLICY,
            stdout_has=["finished: landed"],
            capture={"mission": group(FIRED_AT, stream="stdout")},
        ),
        step(
            "mission",
            "show",
            "{mission}",
            stdout_has=[
                re.compile(r"(?m)^Status:\s+landed$"),
                re.compile(r"(?m)^Envelope:\s+hitl-policy-vault\.json$"),
                re.compile(r"(?m)^Session:\s+contenoxruntime-\S+$"),
                f"wrote {NOTE_PATH}",
            ],
        ),
        step("mission", "reports", "{mission}", stdout_has=["[result]", f"wrote {NOTE_PATH}"]),
        step("inbox", "list", stdout_has=[f"wrote {NOTE_PATH}"]),
    ],
)

# ------------------------------------------------ first-agent.md: a read runs without asking

READS_PAYMENTS = Script(
    turns=[
        Turn(text="Reading it.", tool_calls=[ToolCall("read_file", {"path": "payments.go"})]),
        Turn(tool_calls=[mission_report("result", "read payments.go")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Done.", optional=True),
    ]
)


def _read_results(instance: Instance) -> list[str]:
    """The tool results the model was sent that hold payments.go's text, over every run."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            for message in unit.sent:
                if message.role == "tool" and "package payments" in message.content:
                    if message.content not in seen:
                        seen.append(message.content)
    return seen


A_READ_RUNS_UNASKED = Case(
    name="first agent a declared agent's read runs without asking under its own policy",
    script=READS_PAYMENTS,
    files={
        ".contenox/agents/mine.md": declaration("mine", "Read, Write"),
        "payments.go": "package payments\n",
    },
    steps=[
        step(
            "run",
            "--policy",
            "mine",
            "--timeout",
            "60s",
            "mine",
            "review payments.go",
            notices_has=["finished: landed"],
            stdout_has=["read payments.go"],
            stderr_lacks=['subject="ask raised"'],
        )
    ],
    probes=[
        probe("pending asks", probes.approvals, expect=[]),
        probe(
            "the read's result the model was sent",
            _read_results,
            expect=satisfies(lambda results: len(results) == 1, "the file's text, once"),
        ),
    ],
)
