"""What a chain does, as a person running one sees it: transitions, handlers, loops, naming.

Most cases run a chain file of their own with `contenox chat --chain <file>` and read back
which tasks ran and what each evaluated to through `contenox state show <run> --raw`
(task id, handler, transition, error). The naming cases drop chain files in the workspace
or the home `.contenox/` and read `contenox agent list`, `doctor` and what a run used.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chains import END, MODEL, NO_MODEL, UNASKED, branches, chain, ran, task

from harness import Case, Defect, Instance, Script, ToolCall, Turn, probe, probes, step, write


def _sent_system(instance: Instance) -> list[list[str]]:
    """Per chat step of the one captured run, the system messages the model was sent."""
    run = probes.the_captured_run(instance)
    return [
        [m.content for m in u.sent if m.role == "system"]
        for u in probes.captured_units(instance, run)
        if u.handler == "chat_completion"
    ]


def _tool_results(instance: Instance) -> list[str]:
    """The tool results the last chat step of the one captured run was sent."""
    run = probes.the_captured_run(instance)
    chats = [u for u in probes.captured_units(instance, run) if u.handler == "chat_completion"]
    return [m.content for m in chats[-1].sent if m.role == "tool"]


def _chat(*args: str, **expect: Any) -> Any:
    """``contenox chat --chain c.json <input>``: the chain file every case here writes."""
    return step("chat", "--chain", "c.json", *args, **expect)


# --------------------------------------------------------------- transitions: the operators
# A chat_completion task evaluates to "executed" when the model replies with text, so each
# operator is given a `when` that matches "executed" its way; a miss would fall to `default`.

OPERATORS = [
    Case(
        name=f"the {op} operator matches the task's eval and routes to its goto",
        script=Script(turns=["plain reply"]),
        files={
            "c.json": chain(
                task("ask", transition=branches((op, when, "hit"), ("default", "", "miss"))),
                task("hit", "noop"),
                task("miss", "noop"),
            )
        },
        steps=[_chat("hi", stdout_has=["plain reply"])],
        probes=[ran("ask: executed", "hit: noop")],
    )
    for op, when in [
        ("equals", "executed"),
        ("contains", "xecut"),
        ("starts_with", "exec"),
        ("ends_with", "uted"),
    ]
]

NO_MATCH_FALLS_TO_DEFAULT = Case(
    name="a branch that does not match is passed over and default takes the run",
    script=Script(turns=["plain reply"]),
    files={
        "c.json": chain(
            task(
                "ask",
                transition=branches(
                    ("equals", "tool_call", "hit"),
                    ("starts_with", "tool", "hit"),
                    ("default", "", "miss"),
                ),
            ),
            task("hit", "noop"),
            task("miss", "noop"),
        )
    },
    steps=[_chat("hi")],
    probes=[ran("ask: executed", "miss: noop")],
)

FIRST_MATCH_WINS = Case(
    name="branches are checked top to bottom and the first that matches decides",
    script=Script(turns=["plain reply"]),
    files={
        "c.json": chain(
            task(
                "ask",
                transition=branches(
                    ("contains", "exec", "first"),
                    ("equals", "executed", "second"),
                    ("default", "", "second"),
                ),
            ),
            task("first", "noop"),
            task("second", "noop"),
        )
    },
    steps=[_chat("hi")],
    probes=[ran("ask: executed", "first: noop")],
)

GOTO_END = [
    Case(
        name=f"a goto of {label} ends the chain successfully and runs nothing after it",
        script=Script(turns=["the last word"]),
        files={
            "c.json": chain(
                task("ask", transition=branches(("default", "", goto))),
                task("after", "noop"),
            )
        },
        steps=[_chat("hi", stdout_has=["the last word"])],
        probes=[ran("ask: executed")],
    )
    for label, goto in [("end", "end"), ("empty", "")]
]

A_LEAF_ENDS_CLEANLY = Case(
    name="a task with no branches is a leaf and the chain ends with its output",
    script=Script(turns=["said by the leaf"]),
    files={"c.json": chain(task("only"))},
    steps=[_chat("hi", stdout_has=["said by the leaf"])],
    probes=[ran("only: executed")],
)

# ------------------------------------------------------------------------------- on_failure
# raise_error fails with its input as the message: the one failing task whose error is a
# single line, so `state show` stays readable.

ON_FAILURE_BEFORE_BRANCHES = Case(
    name="on failure routes a failing task to the named task before any branch is evaluated",
    script=Script(turns=["rescued"]),
    files={
        "c.json": chain(
            task(
                "boom",
                "raise_error",
                transition=branches(("default", "", "after"), on_failure="rescue"),
            ),
            task("after", "noop"),
            task("rescue"),
        )
    },
    steps=[_chat("it broke", stdout_has=["rescued"])],
    probes=[ran("boom: ERROR", "rescue: executed")],
)

NO_ON_FAILURE_TERMINATES = Case(
    name="a failing task with no on failure terminates the chain with an error",
    script=UNASKED,
    files={
        "c.json": chain(
            task("first", "noop", transition=branches(("default", "", "bail"))),
            task("bail", "raise_error", transition=branches(("default", "", "after"))),
            task("after", "noop"),
        )
    },
    steps=[
        _chat(
            "the reason it stopped",
            exit_code="non-zero",
            notices_has=["chain execution failed", "task bail", "the reason it stopped"],
        )
    ],
    probes=[ran("first: noop", "bail: ERROR")],
)

NO_BRANCH_ON_FAILED = Case(
    name="a branch on failed never fires and the failing task ends the run with its error",
    files={
        "c.json": chain(
            task(
                "ask",
                execute_config=NO_MODEL,
                transition=branches(("equals", "failed", "handle"), ("default", "", "end")),
            ),
            task("handle", "noop"),
        )
    },
    # the model is never asked: no model of that name exists
    script=Script(turns=[Turn(text="never served", optional=True)]),
    steps=[
        _chat("hi", exit_code="non-zero", notices_has=["task ask failed"]),
        step(
            "vet",
            "c.json",
            exit_code="non-zero",
            stdout_has=['branch (equals "failed") can never fire'],
        ),
    ],
    probes=[ran("ask: ERROR")],
)

RETRY_ON_FAILURE = Case(
    name="retry on failure attempts a failing task that many more times before on failure",
    script=Script(turns=[Turn(text="never served", optional=True)]),
    files={
        "c.json": chain(
            task(
                "ask",
                retry_on_failure=2,
                execute_config=NO_MODEL,
                transition=branches(("default", "", "end"), on_failure="rescue"),
            ),
            task("rescue", "noop"),
        )
    },
    steps=[_chat("hi")],
    probes=[ran("ask: ERROR", "ask: ERROR", "ask: ERROR", "rescue: noop")],
)

# ------------------------------------------------------------------- what each handler returns

CHAT_TOOL_CALL_THEN_TOOLS_EXECUTED = Case(
    name="chat completion evaluates to tool call and execute tool calls to tools executed",
    script=Script(
        turns=[
            Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
            "It says hello.",
        ]
    ),
    files={
        "notes.txt": "hello from the file\n",
        "c.json": chain(
            task(
                "chat",
                execute_config={**MODEL, "tools": ["local_fs"]},
                transition=branches(("equals", "tool_call", "run_tools"), ("default", "", "end")),
            ),
            task(
                "run_tools",
                "execute_tool_calls",
                input_var="chat",
                execute_config={"tools": ["local_fs"]},
                transition=branches(("default", "", "chat")),
            ),
        ),
    },
    steps=[_chat("read notes.txt", stdout_has=["It says hello."])],
    probes=[
        ran("chat: tool_call", "run_tools: tools_executed", "chat: executed"),
        probe("tool results sent back", _tool_results, expect=["hello from the file\n"]),
    ],
)

NO_CALLS_FOUND = Case(
    name="execute tool calls after a text reply evaluates to no calls found",
    script=Script(turns=["no tools for this one"]),
    files={
        "c.json": chain(
            task("chat", transition=branches(("default", "", "run_tools"))),
            task("run_tools", "execute_tool_calls", input_var="chat", transition=END),
        )
    },
    steps=[_chat("hi")],
    probes=[ran("chat: executed", "run_tools: no_calls_found")],
)

NOOP_PASSES_THROUGH = Case(
    name="a noop task passes its input through and evaluates to noop",
    script=UNASKED,
    files={"c.json": chain(task("only", "noop"))},
    steps=[_chat("pass me through", stdout_has=['"content": "pass me through"'])],
    probes=[ran("only: noop")],
)

# ---------------------------------------------------------------------------------- route


def router(classifier_model: dict[str, str] = MODEL) -> str:
    """A classifier with no tools, two labels, a default and an on_failure that name real loops."""
    return chain(
        task(
            "classify",
            "route",
            system_instruction="Classify: 'billing' for invoices and charges, 'other' otherwise.",
            execute_config={**classifier_model, "tools": []},
            transition=branches(
                ("equals", "billing", "billing"),
                ("equals", "other", "general"),
                ("default", "", "general"),
                on_failure="general",
            ),
        ),
        task("billing", system_instruction="You answer billing questions.", transition=END),
        task("general", system_instruction="You answer anything else.", transition=END),
    )


ROUTER = router()

ROUTE_LABELS = [
    Case(
        name=f"route matches {how} and runs that label's branch",
        script=Script(turns=[label, "answered"]),
        files={"c.json": ROUTER},
        steps=[_chat("why was I charged twice", stdout_has=["answered"])],
        probes=[ran(f"classify: {eval_}", f"{target}: executed")],
    )
    for how, label, eval_, target in [
        ("a label exactly", "billing", "billing", "billing"),
        ("a label in another case", "BILLING", "billing", "billing"),
        (
            "a label inside a longer answer",
            "I would file this under Billing.",
            "billing",
            "billing",
        ),
        ("no label and falls to default", "weather", "weather", "general"),
    ]
]


def _user_input_of_the_branch(instance: Instance) -> list[str]:
    run = probes.the_captured_run(instance)
    units = probes.captured_units(instance, run)
    return [m.content for m in units[-1].sent if m.role == "user"]


ROUTE_PASSES_INPUT = Case(
    name="route passes the input through unchanged to the branch it picks",
    script=Script(turns=["billing", "answered"]),
    files={"c.json": ROUTER},
    steps=[_chat("why was I charged twice")],
    probes=[
        probe(
            "what the billing branch was sent as the user's message",
            _user_input_of_the_branch,
            expect=["why was I charged twice"],
        )
    ],
)

ROUTE_ON_FAILURE = Case(
    name="a route that fails sends the request to its on failure loop instead of an error",
    script=Script(turns=["the general answer"]),
    files={"c.json": router(NO_MODEL)},
    steps=[_chat("why was I charged twice", stdout_has=["the general answer"])],
    probes=[ran("classify: ERROR", "general: executed")],
)

# ---------------------------------------------------------------- the loop and its budget


def budget(edge: str, rounds: int, goto: str) -> dict[str, str]:
    """An edge_traversed_at_least branch: fires once ``edge`` ran ``rounds`` times this run."""
    return {"operator": "edge_traversed_at_least", "edge": edge, "when": str(rounds), "goto": goto}


def loop(system: str, ceiling: int, wrap: str = "wrap") -> str:
    """Chat → tools → back-edge, bounded by an edge_traversed_at_least branch ahead of it."""
    return chain(
        task(
            "chat",
            system_instruction=system,
            execute_config={**MODEL, "tools": ["local_fs"]},
            transition=branches(
                budget("chat->run_tools", ceiling, wrap),
                ("equals", "tool_call", "run_tools"),
                ("default", "", "end"),
            ),
        ),
        task(
            "run_tools",
            "execute_tool_calls",
            input_var="chat",
            execute_config={"tools": ["local_fs"]},
            transition=branches(("default", "", "chat")),
        ),
        task(
            "wrap",
            system_instruction="The budget is spent: say what was done.",
            execute_config={**MODEL, "tools": []},
            transition=END,
        ),
    )


THREE_READS = Script(
    turns=[
        Turn(text="round one", tool_calls=[ToolCall("read_file", {"path": "a.txt"})]),
        Turn(text="round two", tool_calls=[ToolCall("read_file", {"path": "b.txt"})]),
        Turn(text="round three", tool_calls=[ToolCall("read_file", {"path": "c.txt"})]),
        "wrapped up after the budget",
    ]
)
NOTES = {"a.txt": "note a\n", "b.txt": "note b\n", "c.txt": "note c\n"}

THE_CEILING_BOUNDS_THE_LOOP = Case(
    name="an edge traversed at least branch ends the loop once the edge ran that many times",
    script=THREE_READS,
    files={**NOTES, "c.json": loop("Work.", 2)},
    steps=[_chat("keep reading", stdout_has=["wrapped up after the budget"])],
    probes=[
        ran(
            "chat: tool_call",
            "run_tools: tools_executed",
            "chat: tool_call",
            "run_tools: tools_executed",
            "chat: tool_call",
            "wrap: executed",
        )
    ],
)

THE_DANGLING_CALL_RUNS_INLINE = Case(
    name="a call left pending when the ceiling fires is answered before the next step",
    script=THREE_READS,
    files={**NOTES, "c.json": loop("Work.", 2)},
    steps=[_chat("keep reading")],
    # Three calls, three results: the third, left pending by the ceiling, is answered inline
    # under the next task's tool scope (the wrap-up has none), so no call dangles.
    probes=[
        probe(
            "tool results the wrap-up was sent",
            _tool_results,
            expect=[
                "note a\n",
                "note b\n",
                '{"error":"tool local_fs.read_file from tools \\"local_fs\\" is not allowed '
                'for task wrap"}',
            ],
        )
    ],
)


def _budget_lines(instance: Instance) -> list[str]:
    """The newest system message of each chat step: where the live budget is printed."""
    return [sent[0] for sent in _sent_system(instance) if sent]


THE_EDGE_COUNT_MACRO_IS_LIVE = Case(
    name="the edge count macro expands each step to the live count and to 0 for an unknown edge",
    script=THREE_READS,
    files={
        **NOTES,
        "c.json": loop("USED={{edge_count:chat->run_tools}} TYPO={{edge_count:nope->never}}", 2),
    },
    steps=[_chat("keep reading")],
    probes=[
        probe(
            "the budget line each chat step was sent",
            _budget_lines,
            expect=[
                "USED=0 TYPO=0",
                "USED=1 TYPO=0",
                "USED=2 TYPO=0",
                "The budget is spent: say what was done.",
            ],
        )
    ],
)

NO_STALE_BUDGET_LINE = Case(
    name="a chat step is sent only the current budget line and no stale one",
    defect=Defect(
        title="a chat loop's earlier budget lines stay in the history",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: reply 'all done' rc=0; steps chat/run_tools/chat/run_tools/chat. The"
            " third chat step's output history (--raw unit 4) starts: system 'USED=2 of 20 "
            "rounds.', system 'USED=1 of 20 rounds.', system 'USED=0 of 20 rounds.', user 'hi', … "
            "; the second chat step held 'USED=1…','USED=0…' Note: Reproduces as written. The "
            "macro does re-evaluate, but each rendering is appended as a new system message, so "
            "stale budget lines pile up in the history. No page says earlier renderings are kept. "
            'Incidental: in my chain the scripted `echo` calls came back \'{"error":"tool echo not '
            'found"}\' and run_tools reported no_calls_found (tools ["native-echo"] under `chat`). '
            "The system-message pile-up does ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# c.json: a chat -> run_tools loop whose system_instruction is "
            "'USED={{edge_count:chat->run_tools}} …'\n"
            "# dialog: two tool-call turns, then a reply\n"
            "contenox chat --chain c.json hi\n"
            "contenox state show <request> --raw\n"
            "# the third chat step is sent three system messages: 'USED=2 …', "
            "'USED=1 …', 'USED=0 …'"
        ),
        promised='specification/examples.md:208 "There is no stale"',
        observed=(
            "every earlier rendering of the system instruction stays in the history "
            "sent to the model"
        ),
        bears_on=(
            ('specification/examples.md:208 "The macro is re-evaluated at every task step"'),
        ),
    ),
    script=THREE_READS,
    files={**NOTES, "c.json": loop("USED={{edge_count:chat->run_tools}}", 2)},
    steps=[
        _chat("keep reading"),
        probe(
            "the system messages of each chat step",
            _sent_system,
            expect=[
                ["USED=0"],
                ["USED=1"],
                ["USED=2"],
                ["The budget is spent: say what was done."],
            ],
        ),
    ],
)

# ------------------------------------------------------------ naming, roles and resolution


def _named(chain_id: str) -> str:
    return chain(task("t", system_instruction="A hand-written agent."), chain_id=chain_id)


def listed(name: str) -> re.Pattern[str]:
    """An `agent list` row for a discovered chain agent called ``name``."""
    return re.compile(rf"\s{re.escape(name)}\s+discovered\s+chain\s+true")


A_WORKSPACE_CHAIN_AGENT_IS_NAMED_BY_ITS_ID = Case(
    name="a chain agent file in the workspace is listed under its id not its filename",
    script=UNASKED,
    files={".contenox/chain-agent-vault-file.json": _named("vaultfiler")},
    steps=[step("agent", "list", stdout_has=[listed("vaultfiler")], stdout_lacks=["vault-file"])],
)

A_HOME_CHAIN_AGENT_IS_DISCOVERED = Case(
    name="a chain agent file in the home contenox directory is discovered too",
    script=UNASKED,
    home_files={"chain-agent-homebot.json": _named("homebot")},
    steps=[step("agent", "list", stdout_has=[listed("homebot")])],
)

AN_OLD_NAME_IS_NOT_DISCOVERED = Case(
    name="an agent chain under the old agent name is not discovered until renamed chain agent",
    script=UNASKED,
    files={".contenox/agent-mybot.json": _named("mybot")},
    steps=[
        step("agent", "list", stdout_lacks=["mybot"]),
        write(".contenox/chain-agent-mybot.json", _named("mybot")),
        step("agent", "list", stdout_has=[listed("mybot")]),
    ],
)

THE_SEEDED_PLANNER_IS_AGENT_PLANNER = Case(
    name="the seeded planner chain is the agent named agent planner",
    script=UNASKED,
    steps=[step("agent", "list", stdout_has=[listed("agent-planner")])],
)

DEFAULT_CHAIN_IS_USED = Case(
    name="chat without a chain flag runs the default chain set for the workspace",
    defect=Defect(
        title="`chat` ignores the workspace's default-chain setting",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init, scripted backend (text "
            "turns). .contenox/chain-mine.json = copy of .generated/chain-agent-chat.json "
            "with id 'mine' and every system_instruction 'WORKSPACE COPY'. `config set "
            "default-chain chain-mine.json` -> '✓ default-chain = chain-mine.json "
            "(workspace)'; `chat hi` -> 'hello back', exit 0; `state show <req> --raw`: "
            "task chat-agent, system prompt 'Current date: 2026-12-03.\\n\\nSomeone is at a "
            "terminal…', no 'WORKSPACE COPY'. Same with `default-chain "
            ".contenox/chain-mine.json`. Note: Reproduces. config.md:120 and naming.md:70 "
            "say default-chain names the workspace's chain, writing-a-chain.md:61 says a "
            "session falls back to the configured default-chain, and the global --chain "
            "help says 'Falls back to default-chain in config'. No doc page says `chat` "
            "always runs the..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# .contenox/chain-mine.json: a chat chain with system_instruction "
            "'WORKSPACE COPY'\n"
            "contenox config set default-chain chain-mine.json   # also tried "
            ".contenox/chain-mine.json\n"
            "contenox chat hi\n"
            "contenox state show <request> --raw\n"
            "# task 'chat-agent' with the shipped chat prompt ('Current date: …'), "
            "no 'WORKSPACE COPY'"
        ),
        promised='reference/config.md:120 "Chain file used in this workspace"',
        observed="the shipped chat chain runs; the setting is ignored",
        bears_on=('guide/chains/naming.md:70 "resolution is workspace-first"',),
    ),
    script=Script(turns=["answered"]),
    home_files={
        "chain-mine.json": chain(task("t", system_instruction="HOME COPY")),
    },
    files={".contenox/chain-mine.json": chain(task("t", system_instruction="WORKSPACE COPY"))},
    steps=[
        step("config", "set", "default-chain", "chain-mine.json"),
        step("chat", "hi", stdout_has=["answered"]),
        probe("system messages the model was sent", _sent_system, expect=[["WORKSPACE COPY"]]),
    ],
)

DOCTOR_LISTS_A_SHADOWING_COPY = Case(
    name="doctor lists a workspace chain file that shadows the home copy",
    script=UNASKED,
    home_files={"chain-compact-default.json": chain(task("t"))},
    files={".contenox/chain-compact-default.json": chain(task("t"))},
    steps=[
        step(
            "doctor",
            stdout_has=[
                "Workspace overrides (workspace copy wins):",
                re.compile(
                    r"chain-compact-default\.json \(\S*/work/\.contenox/chain-compact-default\.json"
                    r" over \S*/home/\.contenox/chain-compact-default\.json\)"
                ),
            ],
        )
    ],
)

INIT_LEAVES_A_COPIED_UP_CHAIN = Case(
    name="init puts no shipped copy under a chain copied up out of system",
    script=UNASKED,
    init=False,
    home_files={"chain-compact-default.json": chain(task("t"), chain_id="my-compact")},
    steps=[
        step(
            "init",
            stdout_has=[
                re.compile(
                    r"chain-compact-default\.json is yours and still wins; \S*"
                    r"system/chain-compact-default\.json not written"
                )
            ],
        ),
        step("vet", "--all", stdout_lacks=["system/chain-compact-default.json"]),
    ],
)


# ------------------------------------------------------------ the agentic loop, as shipped

# The minimal review loop guide/chains/agentic-loop.md derives from the shipped planner,
# verbatim from the page.
DIFFREVIEW = """\
{
  "id": "chain-agent-diffreview",
  "description": "Bounded single-tool review loop derived from chain-planner-default.json: \
run read-only git commands via local_shell, answer once.",
  "tasks": [
    {
      "id": "review",
      "handler": "chat_completion",
      "system_instruction": "You are a code reviewer. The input is a diff. Inspect the \
repository with git when needed, then give one concise review: correctness first, style \
second. State facts about the code only from tool output in this turn.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "shift": true,
        "tools": ["local_shell"],
        "tools_policies": {
          "local_shell": {
            "_allowed_commands": "git,go",
            "_denied_commands": "sudo,su,dd,mkfs,fdisk,parted,shred"
          }
        }
      },
      "transition": {
        "branches": [
          {
            "operator": "edge_traversed_at_least",
            "edge": "review->review_tools",
            "when": "6",
            "goto": "end"
          },
          { "operator": "equals", "when": "tool_call", "goto": "review_tools" },
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "review_tools",
      "handler": "execute_tool_calls",
      "input_var": "review",
      "execute_config": {
        "tools": ["local_shell"],
        "tools_policies": {
          "local_shell": {
            "_allowed_commands": "git,go",
            "_denied_commands": "sudo,su,dd,mkfs,fdisk,parted,shred"
          }
        }
      },
      "transition": {
        "branches": [{ "operator": "default", "when": "", "goto": "review" }]
      }
    }
  ],
  "token_limit": 65536
}
"""

THE_DERIVED_LOOP_PASSES_VET = Case(
    name="the minimal review loop derived on the agentic loop page passes vet",
    script=UNASKED,
    files={".contenox/chain-agent-diffreview.json": DIFFREVIEW},
    steps=[step("vet", ".contenox/chain-agent-diffreview.json", stdout_has=["ok"])],
)

A_RENAMED_TASK_LEAVES_A_DANGLING_EDGE = Case(
    name="vet catches a budget edge that still names a task after it was renamed",
    script=UNASKED,
    files={
        "renamed.json": DIFFREVIEW.replace('"id": "review_tools"', '"id": "check_tools"').replace(
            '"goto": "review_tools"', '"goto": "check_tools"'
        )
    },
    steps=[
        step(
            "vet",
            "renamed.json",
            exit_code="non-zero",
            stdout_has=['branch edge "review->review_tools" references unknown target task'],
        )
    ],
)

THE_DERIVED_LOOP_IS_AN_AGENT = Case(
    name="the derived review loop dropped in the workspace is discovered as an agent by its id",
    script=UNASKED,
    files={".contenox/chain-agent-diffreview.json": DIFFREVIEW},
    steps=[step("agent", "list", stdout_has=[listed("chain-agent-diffreview")])],
)


def _planner(instance: Instance) -> dict[str, Any]:
    """The shipped planner as `contenox init` seeded it, the file the page tells you to copy."""
    path = instance.home / ".contenox" / "system" / "chain-planner-default.json"
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _shape(instance: Instance) -> dict[str, Any]:
    planner = _planner(instance)
    tasks = {t["id"]: t for t in planner["tasks"]}
    return {
        "tasks": [(t["id"], t["handler"]) for t in planner["tasks"]],
        "token_limit": planner.get("token_limit"),
        "plan_loop": tasks["plan_loop"]["transition"],
        "plan_tools back-edge": tasks["plan_tools"]["transition"]["branches"],
        "recovery budget": tasks["plan_recovery"]["transition"]["branches"][0],
        "shift": tasks["plan_loop"]["execute_config"].get("shift"),
        "retry_policy": tasks["plan_loop"]["execute_config"].get("retry_policy"),
    }


def _branch(op: str, when: str, goto: str, **extra: str) -> dict[str, str]:
    return {"operator": op, **extra, "when": when, "goto": goto}


THE_SHIPPED_PLANNER_HAS_THE_DOCUMENTED_SHAPE = Case(
    name="the seeded planner is the four task loop the agentic loop page maps",
    script=UNASKED,
    probes=[
        probe(
            "the shipped planner's shape",
            _shape,
            expect={
                "tasks": [
                    ("plan_loop", "chat_completion"),
                    ("plan_tools", "execute_tool_calls"),
                    ("plan_recovery", "chat_completion"),
                    ("plan_recovery_tools", "execute_tool_calls"),
                ],
                "token_limit": 131072,
                "plan_loop": {
                    "on_failure": "plan_recovery",
                    "branches": [
                        _branch(
                            "edge_traversed_at_least",
                            "16",
                            "plan_recovery",
                            edge="plan_loop->plan_tools",
                        ),
                        _branch("equals", "tool_call", "plan_tools"),
                        _branch("default", "", "end"),
                    ],
                },
                "plan_tools back-edge": [_branch("default", "", "plan_loop")],
                "recovery budget": _branch(
                    "edge_traversed_at_least",
                    "6",
                    "end",
                    edge="plan_recovery->plan_recovery_tools",
                ),
                "shift": True,
                "retry_policy": {
                    "max_attempts": 4,
                    "initial_backoff": "1s",
                    "max_backoff": "30s",
                    "jitter": 0.25,
                    "rate_limit_min_wait": "10s",
                },
            },
        )
    ],
)
