"""The chain pages read unit by unit: what guide/chains/naming.md, routing.md and
development/chains.md promise that no other case asserted.

Naming cases drop chain files in the workspace or the home `.contenox/` and read back what
`contenox agent list`, `mission fire`, `init` and a compaction used; a run's chain is read
back through `contenox state show <run> --raw`.
"""

from __future__ import annotations

import json
import re

from chains import END, UNASKED, branches, chain, ran, task

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    open_acp,
    probe,
    probes,
    prompt,
    remove,
    route,
    satisfies,
    step,
    write,
)


def _named(chain_id: str) -> str:
    return chain(task("t", system_instruction="A hand-written agent."), chain_id=chain_id)


def _listed(name: str, enabled: str = "true") -> re.Pattern[str]:
    """An `agent list` row for a discovered chain agent called ``name``."""
    return re.compile(rf"\s{re.escape(name)}\s+discovered\s+chain\s+{enabled}")


def _last_tool_results(instance: Instance) -> list[str]:
    """The tool results the last chat step of the one captured run was sent."""
    run = probes.the_captured_run(instance)
    chats = [u for u in probes.captured_units(instance, run) if u.handler == "chat_completion"]
    return [m.content for m in chats[-1].sent if m.role == "tool"]


# ------------------------------------------------- guide/chains/naming.md: the id is the name

A_RENAMED_FILE_KEEPS_ITS_AGENT = Case(
    name="a chain agent file renamed on disk keeps its agent name",
    script=UNASKED,
    files={".contenox/chain-agent-first.json": _named("keeper")},
    steps=[
        step("agent", "list", stdout_has=[_listed("keeper")]),
        write(".contenox/chain-agent-second.json", _named("keeper")),
        remove(".contenox/chain-agent-first.json"),
        step("agent", "list", stdout_has=[_listed("keeper")], stdout_lacks=["first", "second"]),
    ],
)

A_CHANGED_ID_RENAMES_THE_AGENT = Case(
    name="changing a chain agent s id renames the agent and the old name stops resolving",
    script=UNASKED,
    files={".contenox/chain-agent-bot.json": _named("oldname")},
    steps=[
        step("agent", "list", stdout_has=[_listed("oldname")]),
        write(".contenox/chain-agent-bot.json", _named("newname")),
        step("agent", "list", stdout_has=[_listed("newname")], stdout_lacks=[_listed("oldname")]),
        step(
            "mission",
            "fire",
            "oldname",
            "do the thing",
            "--policy",
            "run",
            "--wait",
            exit_code=1,
            notices_has=['agent "oldname"'],
            stdout_lacks=["Mission fired"],
        ),
        step("mission", "list", stdout_has=["No missions"]),
    ],
)

A_REMOVED_FILE_IS_NO_LONGER_AN_AGENT = Case(
    name="a chain agent file removed from disk is no longer an enabled agent at the next start",
    script=UNASKED,
    files={".contenox/chain-agent-gone.json": _named("goner")},
    steps=[
        step("agent", "list", stdout_has=[_listed("goner")]),
        remove(".contenox/chain-agent-gone.json"),
        step("agent", "list", stdout_lacks=[_listed("goner")]),
    ],
)

# ----------------------------------------- guide/chains/naming.md: which compact chain wins

HOME_MARKER = "HOME-COMPACT: summarise the conversation in one line."
WORKSPACE_MARKER = "WORKSPACE-COMPACT: summarise the conversation in one line."
LEGACY_MARKER = "LEGACY-COMPACT: summarise the conversation in one line."
_MARKERS = {
    HOME_MARKER: "the home copy",
    WORKSPACE_MARKER: "the workspace copy",
    LEGACY_MARKER: "the legacy-named copy",
    "specialized conversation summarizer": "the shipped system copy",
}


def _compact(marker: str) -> str:
    return chain(
        task("compact_history", system_instruction=marker, transition=END),
        chain_id="chain-compact",
    )


def _summarizers(instance: Instance) -> list[str]:
    """Which compact chain's prompt was sent, over every captured run (the chats' own
    prompts are none of them and are left out)."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for sent in probes.system_prompts_of(probes.captured_units(instance, run)):
            seen += [who for marker, who in _MARKERS.items() if marker in sent]
    return seen


def _fork_summary_case(name: str, *, expect: str, **placed: dict[str, str]) -> Case:
    return Case(
        name=name,
        # Each command is its own process, so each is served the dialog's one turn from the top.
        script=Script(turns=["Noted."]),
        steps=[
            step("chat", "remember the first thing"),
            step("chat", "remember the second thing"),
            step(
                "session",
                "fork",
                "--summary",
                "--keep",
                "1",
                stdout_has=[re.compile(r"Forked \d+ messages to session .* \(compacted to 2\)")],
            ),
        ],
        probes=[probe("compaction prompts sent", _summarizers, expect=[expect])],
        **placed,
    )


COMPACT_RESOLUTION = [
    _fork_summary_case(
        "a compact chain copied up into the home contenox directory wins over the shipped one",
        expect="the home copy",
        home_files={"chain-compact-default.json": _compact(HOME_MARKER)},
    ),
    _fork_summary_case(
        "a workspace compact chain wins over both the home copy and the shipped one",
        expect="the workspace copy",
        home_files={"chain-compact-default.json": _compact(HOME_MARKER)},
        files={".contenox/chain-compact-default.json": _compact(WORKSPACE_MARKER)},
    ),
    _fork_summary_case(
        "a compact chain under its pre v0 38 name is not looked up",
        expect="the shipped system copy",
        home_files={"chain-compact.json": _compact(LEGACY_MARKER)},
        files={".contenox/chain-compact.json": _compact(LEGACY_MARKER)},
    ),
]

# ------------------------------------------------- guide/chains/naming.md: what init touches


def _triggers(instance: Instance) -> list[str]:
    return sorted(
        p.name
        for where in (instance.home / ".contenox", instance.work / ".contenox")
        for p in where.rglob("trigger-*.json")
    )


INIT_SEEDS_NO_TRIGGER = Case(
    name="init seeds no trigger file",
    init=False,
    steps=[step("init")],
    probes=[probe("trigger-*.json under ~/.contenox and .contenox", _triggers, expect=[])],
)


def _text(rel: str) -> object:
    def read(instance: Instance) -> str | None:
        path = instance.work / ".contenox" / rel
        return path.read_text(encoding="utf-8") if path.exists() else None

    return read


UPDATE_KEEPS_THE_NEW_FILE_AND_THE_LEGACY_ONE = Case(
    name="init update leaves a legacy file beside its new name untouched with a note",
    init=False,
    files={
        ".contenox/chain-compact.json": "legacy\n",
        ".contenox/chain-compact-default.json": "new\n",
    },
    steps=[
        step(
            "init",
            "--update",
            stdout_has=[
                re.compile(
                    r"Kept \S*\.contenox/chain-compact-default\.json; legacy "
                    r"\S*\.contenox/chain-compact\.json left in place"
                )
            ],
        ),
        probe("the new file", _text("chain-compact-default.json"), expect="new\n"),
        probe("the legacy file", _text("chain-compact.json"), expect="legacy\n"),
    ],
)

UPDATE_IS_IDEMPOTENT = Case(
    name="a second init update finds nothing to rename",
    init=False,
    files={".contenox/default-fim-chain.json": "ws\n"},
    steps=[
        step("init", "--update", stdout_has=[re.compile(r"Renamed \S*default-fim-chain\.json")]),
        step("init", "--update", stdout_lacks=["Renamed"]),
        probe("the renamed file", _text("chain-fim-default.json"), expect="ws\n"),
    ],
)

UPDATE_LEAVES_YOUR_OWN_FILES = Case(
    name="init update neither renames nor rewrites a file init did not seed",
    init=False,
    files={".contenox/agent-mybot.json": "mine\n"},
    steps=[step("init", "--update", stdout_lacks=["agent-mybot"])],
    probes=[probe("your own file", _text("agent-mybot.json"), expect="mine\n")],
)

# ------------------------------------------- guide/chains/naming.md: where acp finds its chain

_ONE_TASK = chain(task("answer", transition=END), chain_id="chain-acp")

AN_OPERATOR_COPY_IS_THE_ACP_CHAIN = Case(
    name="an operator copy of the acp chain in the home contenox directory is what acp runs",
    # One plain turn: the compiled `acp` chain is a router and would read it as a label and
    # ask again; the one-task operator copy answers with it.
    script=Script(turns=["answered by the operator copy"]),
    home_files={"chain-agent-acp.json": _ONE_TASK},
    steps=[prompt("hello", text_has=["answered by the operator copy"])],
)

A_WORKSPACE_COPY_IS_NOT_THE_ACP_CHAIN = Case(
    name="a workspace copy of the acp chain is not searched and acp runs the compiled one",
    # The compiled router reads the first turn as its label and answers with the second; a
    # one-task workspace copy would answer with the label and leave the second unserved.
    script=Script(turns=[route(), "answered by the compiled chain"]),
    files={".contenox/chain-agent-acp.json": _ONE_TASK},
    steps=[prompt("hello", text_has=["answered by the compiled chain"])],
)

# -------------------------------------------------- guide/chains/routing.md: the acp router

_WRITE = ToolCall(name="write_file", arguments={"path": "out.txt", "content": "hello\n"})


def _write_after(label: str) -> Script:
    """The router labels the prompt ``label``; that branch's loop then writes out.txt."""
    return Script(turns=[route(label), Turn(text="Writing it.", tool_calls=[_WRITE]), "Done."])


def _tasks_run(instance: Instance) -> list[str]:
    """The tasks the one captured run stepped through, in order (`state show --raw`)."""
    return [u.task for u in probes.captured_units(instance, probes.the_captured_run(instance))]


# The gate is the branch the label picks; the control changes only the label. The editor
# allows every ask, so only the branch's own withholding can keep the file from being written.
BRANCH_WRITES = [
    Case(
        name="the review branch of the acp router cannot write a file the coding branch can",
        defect=Defect(
            second_reading=(
                "2026-12-03, a second reader with only this text and the docs, in a fresh scratch"
                " home: real. Saw: fresh HOME, init, scripted dialog ['review'; write_file {path:"
                " out.txt, content: hello}; 'Done.'], Python ACP client (/tmp/acpc/client.py, "
                "allows every ask, serves fs/*): initialize, session/new {cwd: W}, session/prompt"
                " 'review out.txt'. Agent sent session/request_permission title "
                "'local_fs.write_file: out.txt', policyName hitl-policy-default.json matchedRule "
                "47; after allow, fs/write_text_file {path: W/out.txt, content: hello}; "
                "stopReason end_turn; out.txt = 'hello'. `state show cli-0f3b442555565017`: "
                "chain-acp-route (transition review) -> chain-acp-review-agent tool_call -> "
                "chain-acp-review-tools tools_executed -> chain-acp-review-agent. Compiled chain-"
                'agent-acp.json: review-agent/review-tools tools ["*","mission"], hide_tools '
                "null. Note: guide/chains/routing.md:57-65 says the review loop withholds "
                "local_fs.write_file/edit_file/sed via hide_tools, on the chat task and the "
                "paired execute_tool_calls task. The shipped acp review leaf "
                '(agents/acp/review/agent.md: tools "*", posture read_only, no disallowedTools) '
                "compiles to no hide_tools, and its own prompt even claims 'the write tools are "
                "withheld from this loop'. reference/contenox-cli.md:714 ('acp runs under "
                "default') explains why the session's policy is hitl-policy-default.json and the "
                "write was only asked about, but no page says the review branch may write. So the"
                " leaf's posture does not gate it, and the withholding routing.md describes is "
                "missing."
            ),
            title="the acp router's review branch writes files: nothing withholds the write tools",
            reproduce=(
                'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
                "# dialog.json: the turns below, as scripted-test-backend.md writes a dialog\n"
                "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
                "contenox config set default-provider scripted-test\n"
                "contenox config set default-model scripted-test\n"
                "# turns: 'review' (the router's label); write_file out.txt 'hello'; 'Done.'\n"
                "contenox acp   # an ACP client: initialize, session/new, prompt 'review "
                "out.txt', allowing every ask\n"
                "# session/request_permission for local_fs.write_file (policy "
                "hitl-policy-default.json), then fs/write_text_file: out.txt is written\n"
                "contenox state show <request> --raw   # chain-acp-route, "
                "chain-acp-review-agent, chain-acp-review-tools, chain-acp-review-agent\n"
                "# ~/.contenox/.generated/chain-agent-acp.json: the review tasks carry tools "
                "['*', 'mission'] and no hide_tools"
            ),
            promised=(
                'guide/chains/routing.md:57 "The review loop is the clearest illustration. '
                'It withholds every mutating tool:"'
            ),
            observed=(
                "the review branch runs (state show) and its write_file reaches the editor as "
                "fs/write_text_file; out.txt is written. The compiled review tasks carry no "
                "hide_tools; the leaf's `posture: read_only` does not gate the session"
            ),
            bears_on=(
                'guide/chains/routing.md:65 "the same withholding is repeated on the paired '
                '`execute_tool_calls` task"',
                'guide/agents.md:52 "contenox\'s own name for the envelope this agent runs under"',
            ),
        ),
        script=_write_after("review"),
        steps=[
            prompt("review out.txt", permission="allow"),
            probe(
                "the tasks that ran",
                _tasks_run,
                expect=[
                    "chain-acp-route",
                    "chain-acp-review-agent",
                    "chain-acp-review-tools",
                    "chain-acp-review-agent",
                ],
            ),
            workspace_file("out.txt", expect=None),
        ],
    ),
    Case(
        name="the coding branch of the acp router writes the file the review branch cannot",
        script=_write_after("coding"),
        steps=[
            prompt("write out.txt", permission="allow", files_written=["out.txt"]),
            probe(
                "the tasks that ran",
                _tasks_run,
                expect=[
                    "chain-acp-route",
                    "chain-acp-coding-agent",
                    "chain-acp-coding-tools",
                    "chain-acp-coding-agent",
                ],
            ),
            workspace_file("out.txt", expect="hello\n"),
        ],
    ),
]

# The classifier turn carries the write; the control carries the same write one turn later,
# where the branch's loop serves it.
THE_CLASSIFIER_HOLDS_NO_TOOLS = [
    Case(
        name="a tool call on the classifier s turn is not run",
        script=Script(turns=[Turn(text="general", tool_calls=[_WRITE]), "Done."]),
        steps=[
            prompt("write out.txt", permission="allow", files_written=[]),
            workspace_file("out.txt", expect=None),
        ],
    ),
    Case(
        name="the same tool call on the branch s turn after the classifier runs",
        script=Script(turns=[route(), Turn(tool_calls=[_WRITE]), "Done."]),
        steps=[
            prompt("write out.txt", permission="allow", files_written=["out.txt"]),
            workspace_file("out.txt", expect="hello\n"),
        ],
    ),
]


def _acp_router(instance: Instance) -> dict[str, object]:
    """The opening task of the compiled acp chain, as a reader of `.generated/` finds it."""
    path = instance.home / ".contenox" / ".generated" / "chain-agent-acp.json"
    tasks = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    first = tasks[0]
    transition = first["transition"]
    return {
        "handler": first["handler"],
        "tools": first.get("execute_config", {}).get("tools", []),
        "on_failure": transition.get("on_failure"),
        "branches": [(b["operator"], b.get("when", ""), b["goto"]) for b in transition["branches"]],
    }


THE_ACP_CHAIN_OPENS_WITH_A_ROUTER = Case(
    name="the compiled acp chain opens with a route on no tools that fails and defaults to general",
    script=UNASKED,
    steps=[step("agent", "list")],
    probes=[
        probe(
            "the first task of ~/.contenox/.generated/chain-agent-acp.json",
            _acp_router,
            expect={
                "handler": "route",
                "tools": [],
                "on_failure": "chain-acp-general-agent",
                "branches": [
                    ("equals", "coding", "chain-acp-coding-agent"),
                    ("equals", "general", "chain-acp-general-agent"),
                    ("equals", "review", "chain-acp-review-agent"),
                    ("default", "", "chain-acp-general-agent"),
                ],
            },
        )
    ],
)


# --------------------------------- guide/chains/routing.md: the classifier on a smaller model

SMALL_OR_MAIN = {
    "model": "{{var:alt_model|var:model}}",
    "provider": "{{var:alt_provider|var:provider}}",
}


def _router_on(classifier: dict[str, str]) -> str:
    """A classifier on ``classifier``'s model; its two loops on the main model."""
    return chain(
        task(
            "classify",
            "route",
            system_instruction="Classify: 'billing' for invoices and charges, 'other' otherwise.",
            execute_config={**classifier, "tools": []},
            transition=branches(
                ("equals", "billing", "billing"),
                ("default", "", "general"),
                on_failure="general",
            ),
        ),
        task("billing", system_instruction="You answer billing questions.", transition=END),
        task("general", system_instruction="You answer anything else.", transition=END),
    )


# Each backend's dialog must be served whole: were the label asked of the main model, its
# answer would be read as the label, the general loop would ask again and run past its end.
THE_CLASSIFIER_ON_A_SMALLER_MODEL = [
    Case(
        name="a classifier on the alt model is served by the alt model and its branch by the main",
        backends={
            "main": Script(model="main-model", turns=["answered by the main model"]),
            "small": Script(model="small-model", turns=["billing"]),
        },
        files={"c.json": _router_on(SMALL_OR_MAIN)},
        steps=[
            step("config", "set", "default-alt-model", "small-model"),
            step("config", "set", "default-alt-provider", "scripted-test"),
            step(
                "chat",
                "--chain",
                "c.json",
                "why was I charged twice",
                stdout_has=["answered by the main model"],
            ),
        ],
        probes=[ran("classify: billing", "billing: executed")],
    ),
    Case(
        name="a classifier on the alt model falls back to the main model when no alt is set",
        backends={
            "main": Script(model="main-model", turns=["billing", "answered by the main model"])
        },
        files={"c.json": _router_on(SMALL_OR_MAIN)},
        steps=[
            step(
                "chat",
                "--chain",
                "c.json",
                "why was I charged twice",
                stdout_has=["answered by the main model"],
            ),
        ],
        probes=[ran("classify: billing", "billing: executed")],
    ),
]

# ------------------------------------------- development/chains.md: the chain it prints

# Verbatim from the page.
PRINTED_REVIEW = """\
{
  "id": "review",
  "token_limit": 65536,
  "tasks": [
    {
      "id": "review",
      "handler": "chat_completion",
      "system_instruction": "You are a code reviewer. Analyze the diff, run tests if tools are \
available, then give a concise review.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["local_shell", "local_fs"],
        "tools_policies": {
          "local_shell": {
            "_allowed_commands": "go,make,npm,cargo,grep,cat",
            "_denied_commands": "sudo,su,dd,mkfs,fdisk,parted,shred"
          },
          "local_fs": {
            "_allowed_dir": ".",
            "_max_read_bytes": "262144"
          }
        },
        "retry_policy": {
          "max_attempts": 4,
          "initial_backoff": "1s",
          "max_backoff": "30s",
          "jitter": 0.25,
          "rate_limit_min_wait": "10s"
        }
      },
      "transition": {
        "branches": [
          {
            "operator": "edge_traversed_at_least",
            "edge": "review->run_tools",
            "when": "6",
            "goto": "end"
          },
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          { "operator": "default", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "input_var": "review",
      "execute_config": {
        "tools": ["local_shell", "local_fs"]
      },
      "transition": {
        "branches": [
          { "operator": "default", "goto": "review" }
        ]
      }
    }
  ]
}
"""

# The page scopes local_shell with a tools_policies block on the chat task only; the calls run
# in the execute_tool_calls task, which carries none. The same chain with the block copied
# onto the runner too (only where the gate sits changed) refuses the command. Under `chat` the
# runtime serves local_shell itself.
_LS = ToolCall("local_shell", {"command": "ls", "args": ["."]})
_SCOPE = (
    '"execute_config": {\n        "tools": ["local_shell", "local_fs"]\n      }',
    '"execute_config": {\n        "tools": ["local_shell", "local_fs"],\n'
    '        "tools_policies": {"local_shell": {"_allowed_commands": '
    '"go,make,npm,cargo,grep,cat"}}\n      }',
)
assert _SCOPE[0] in PRINTED_REVIEW
SCOPED_ON_BOTH = PRINTED_REVIEW.replace(*_SCOPE)
_NOT_ALLOWED = "command ls is not in this chain's allowed commands"


def _ls_case(name: str, chain_text: str, *, listed: bool, **extra: object) -> Case:
    return Case(
        name=name,
        script=Script(turns=[Turn(text="Listing.", tool_calls=[_LS]), "Reviewed."]),
        files={"review.json": chain_text, "notes.txt": "note-4417\n"},
        steps=[step("chat", "--chain", "review.json", "review it", stdout_has=["Reviewed."])],
        probes=[
            ran("review: tool_call", "run_tools: tools_executed", "review: executed"),
            probe(
                "the tool result the model was sent",
                _last_tool_results,
                expect=satisfies(
                    lambda r: (
                        any("notes.txt" in x for x in r) is listed
                        and any(_NOT_ALLOWED in x for x in r) is not listed
                    ),
                    "the listing" if listed else "the allowlist's refusal, no listing",
                ),
            ),
        ],
        **extra,  # type: ignore[arg-type]
    )


THE_PRINTED_CHAIN = [
    Case(
        name="the review chain development chains prints passes vet",
        script=UNASKED,
        files={"review.json": PRINTED_REVIEW},
        steps=[step("vet", "review.json", stdout_has=[re.compile(r"ok\s+\S*review\.json")])],
    ),
    _ls_case(
        "the printed review chain s command policy does not reach the task that runs the calls",
        PRINTED_REVIEW,
        listed=True,
        defect=Defect(
            second_reading=(
                "2026-12-03, a second reader with only this text and the docs, in a fresh scratch"
                " home: docs disagree. Saw: fresh HOME, init, scripted backend (turns: "
                "local_shell {command: ls, args: [.]}; 'Reviewed.'), review.json = "
                "development/chains.md:43-101 verbatim. `contenox chat --chain review.json "
                "'review it'` -> 'Reviewed.' rc=0; `state show cli-13a23f6e9c017b08`: "
                "review/run_tools/review OK; --raw holds ls's listing "
                "('dialog.json\\nerr.txt\\nout.txt\\nreview.json\\nzz-marker.txt', success:true) "
                "although ls is not in _allowed_commands. Same chain with the chat task's "
                "tools_policies copied onto run_tools: tool result 'local_shell: command ls is "
                "not in this chain's allowed commands (go, make, npm, cargo, grep, cat); no "
                "approval can ...'. Note: development/chains.md:21/43-101 presents the chat-task-"
                "only block as answering 'Which commands or API operations are allowed?', but "
                "other pages say the policy is carried by the task that runs the tool: "
                "specification/handlers.md:37 'Injected before the tool runs, so the provider can"
                " enforce them'; integrations/tools/local.md:135-137 '`tools_policies` is per-"
                "task ... it is a `tools_policies` block on `execute_config`, per task'; "
                "guide/chains/agentic-loop.md:92 'Keep the chat task's grant and the execute "
                "task's grant identical', and its example (agentic-loop.md:133-146) repeats the "
                "block on the execute_tool_calls task; guide/chains/routing.md:65 'a tool "
                "withheld only where the model is asked would still run where calls are "
                "executed'. The binary does what those pages describe; the fault is "
                "development/chains.md's example, which leaves run_tools unpoliced."
            ),
            title=(
                "development/chains.md scopes local_shell on the chat task only; the runner "
                "task, which runs the calls, is unrestricted"
            ),
            reproduce=(
                'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
                "# dialog.json: the turns below, as scripted-test-backend.md writes a dialog\n"
                "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
                "contenox config set default-provider scripted-test\n"
                "contenox config set default-model scripted-test\n"
                "# review.json: the chain development/chains.md prints, verbatim\n"
                "# turns: local_shell {command: ls, args: [.]}; 'Reviewed.'\n"
                "contenox chat --chain review.json 'review it'\n"
                "contenox state show <request> --raw   # the tool result is ls's listing: "
                "ls is not in _allowed_commands (go,make,npm,cargo,grep,cat), yet it ran\n"
                "# the same chain with the tools_policies block also on run_tools: "
                "'command ls is not in this chain's allowed commands'"
            ),
            promised=('development/chains.md:21 "Which commands or API operations are allowed?"'),
            observed=(
                "the command policy on the chat task does not bind the execute_tool_calls "
                "task: ls runs and its listing reaches the model; copied onto the runner, "
                "the same block refuses it"
            ),
            bears_on=(
                'integrations/tools/local.md:135 "`tools_policies` is per-task and travels in '
                'the chain"',
                'specification/handlers.md:37 "Injected before the tool runs, so the provider '
                'can enforce them"',
                "guide/chains/agentic-loop.md:92 \"Keep the chat task's grant and the execute "
                "task's grant identical\"",
            ),
            docs_disagree=True,
        ),
    ),
    _ls_case(
        "the printed review chain refuses a command off its allowlist once the runner carries it",
        SCOPED_ON_BOTH,
        listed=False,
    ),
]


# ------------------------------- guide/chains/routing.md: each stage after a failure has less


def _stage_tools(instance: Instance) -> dict[str, object]:
    """Per loop of the compiled acp chain: does its recovery stage hold fewer tools than the
    loop, and its final summariser fewer than the recovery stage?"""
    path = instance.home / ".contenox" / ".generated" / "chain-agent-acp.json"
    tasks = {t["id"]: t for t in json.loads(path.read_text(encoding="utf-8"))["tasks"]}

    def tools(task_id: str) -> set[str]:
        return set(tasks[task_id].get("execute_config", {}).get("tools") or [])

    summary = tools("chain-acp-summarise")
    return {
        loop: {
            "loop": sorted(tools(f"chain-acp-{loop}-agent")),
            "recovery": sorted(tools(f"chain-acp-{loop}-recovery")),
            "recovery holds fewer": tools(f"chain-acp-{loop}-recovery")
            < tools(f"chain-acp-{loop}-agent"),
            "summariser holds fewer": summary < tools(f"chain-acp-{loop}-recovery"),
        }
        for loop in ("coding", "general")
    }


EACH_STAGE_HOLDS_FEWER = Case(
    name="each stage of the compiled acp chain after a failure holds fewer tools than the last",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, `contenox init`; jq over ~/.contenox/.generated/chain-"
            'agent-acp.json: chain-acp-coding-agent tools ["*"], chain-acp-coding-recovery ["*"],'
            ' chain-acp-coding-recovery-tools ["*"], general-agent/general-recovery both ["*"]; '
            "none carry hide_tools; coding-agent and coding-recovery tools_policies are identical"
            " (jq equality: true). Only difference: budget (edge_traversed_at_least 60 on main vs"
            " 10 on recovery). chain-acp-summarise has tools null. Note: "
            "guide/chains/routing.md:55 'Each stage after a failure gets fewer capabilities and a"
            " narrower mandate' and guide/chains/agentic-loop.md:9 'Each stage that follows a "
            "failure gets fewer powers and a clearer mandate'. The recovery stage holds exactly "
            "the tools and policies of its loop; only the budget shrinks. No page says a recovery"
            " stage keeps its loop's tools (guide/agents.md:435-439 and agentic-loop.md:75 speak "
            "only of a fresh instruction and own budget). The terminal summariser being tool-less"
            " does not make the recovery stage hold fewer capabilities."
        ),
        title="the shipped acp chain's recovery stages hold the tools of the loop they recover",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "contenox agent list\n"
            "jq -c '.tasks[] | [.id, .execute_config.tools]' "
            "~/.contenox/.generated/chain-agent-acp.json\n"
            '# ["chain-acp-coding-agent",["*"]] … ["chain-acp-coding-recovery",["*"]] … '
            '["chain-acp-general-agent",["*"]] … ["chain-acp-general-recovery",["*"]] … '
            '["chain-acp-summarise",null]'
        ),
        promised=(
            'guide/chains/routing.md:55 "Each stage after a failure gets fewer capabilities '
            'and a narrower mandate."'
        ),
        observed=(
            'each recovery stage carries tools ["*"], as its loop does; only the final '
            "summariser holds none"
        ),
    ),
    script=UNASKED,
    steps=[step("agent", "list")],
    probes=[
        probe(
            "tools of each stage of ~/.contenox/.generated/chain-agent-acp.json",
            _stage_tools,
            expect=satisfies(
                lambda s: all(
                    v["recovery holds fewer"] and v["summariser holds fewer"] for v in s.values()
                ),
                "every recovery stage holds fewer tools than its loop, the summariser fewer still",
            ),
        )
    ],
)


# ------------------------------------- guide/chains/naming.md: the per-launch ACP overrides

ACPX_MARKER = "MY-ACPX-CHAIN: answer in one line."
FIM_MARKER = "MY-FIM-CHAIN: complete the code."


def _prompts_sent(instance: Instance) -> list[str]:
    """Which of this file's marker prompts the model was sent, over every captured run."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for sent in probes.system_prompts_of(probes.captured_units(instance, run)):
            seen += [m.split(":")[0] for m in (ACPX_MARKER, FIM_MARKER) if m in sent]
    return seen


# The compiled acpx chain answers a plain turn too, so what shows the override took is the
# prompt the model was sent: the override's own instruction.
ACPX_CHAIN_PATH = Case(
    name="contenox acpx chain path makes acpx run that chain instead of the compiled one",
    script=Script(turns=["answered by my chain"]),
    files={
        "elsewhere/my-acpx.json": chain(
            task("answer", system_instruction=ACPX_MARKER, transition=END), chain_id="my-acpx"
        )
    },
    steps=[
        prompt(
            "hello",
            acp_command="acpx",
            acp_env={"CONTENOX_ACPX_CHAIN_PATH": "{work}/elsewhere/my-acpx.json"},
            text_has=["answered by my chain"],
        ),
    ],
    probes=[probe("marker prompts sent", _prompts_sent, expect=["MY-ACPX-CHAIN"])],
)


# function: `_contenox/autocomplete` is an extension request a Case's prompt step cannot send
def test_contenox_acp_fim_chain_path_makes_autocomplete_run_that_chain(
    instance: Instance,
) -> None:
    instance.init()
    path = instance.tmp / "elsewhere" / "my-fim.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        chain(task("complete", system_instruction=FIM_MARKER, transition=END), chain_id="my-fim"),
        encoding="utf-8",
    )
    instance.use_script(Script(turns=["return 42"]))
    instance.must("config", "set", "default-autocomplete-model", "scripted-test")
    instance.must("config", "set", "default-autocomplete-provider", "scripted-test")
    with open_acp(instance, env={"CONTENOX_ACP_FIM_CHAIN_PATH": str(path)}) as acp:
        completion = acp.call(
            "_contenox/autocomplete",
            {
                "sessionId": acp.session_id,
                "path": "main.go",
                "language": "go",
                "prefix": "func answer() int {\n\t",
                "suffix": "\n}",
            },
        )
    assert completion == {"completion": "return 42"}, completion
    assert _prompts_sent(instance) == ["MY-FIM-CHAIN"], _prompts_sent(instance)


# ---------------------------------- guide/chains/naming.md: init relocates an unmodified copy


def _planner(where: str) -> object:
    def read(instance: Instance) -> str | None:
        path = instance.home / ".contenox" / where / "chain-planner-default.json"
        return path.read_text(encoding="utf-8") if path.exists() else None

    return read


# This build's own bytes stand in for "an older build's": init knows both as unmodified.
INIT_RELOCATES_AN_UNMODIFIED_TOP_LEVEL_CHAIN = Case(
    name="init moves an unmodified shipped chain left at the top level into system",
    init=False,
    steps=[
        step("init"),
        probe("the shipped planner chain", _planner("system"), capture="shipped"),
        write("chain-planner-default.json", "{shipped}", home=True),
        step(
            "init", stdout_has=[re.compile(r"Moved 1 unmodified chain file\(s\) into \S*system/")]
        ),
        probe("~/.contenox/chain-planner-default.json", _planner("."), expect=None),
    ],
)


# The editor's /compact over a session of two turns; the home copy of the compact chain is
# the one a home-anchored ACP session resolves first.
ACP_COMPACT = Case(
    name="compact in an acp session summarises with the compact chain copied up into the home",
    script=Script(turns=[route(), "first answer", route(), "second answer", "Summary."]),
    home_files={"chain-compact-default.json": _compact(HOME_MARKER)},
    steps=[
        prompt("remember the first thing", text_has=["first answer"]),
        prompt("remember the second thing", text_has=["second answer"]),
        # /compact keeps 8 messages by default; these two turns are 4, so keep 1.
        prompt("/compact 1", text_has=["Compacted 4 messages to 2 (kept last 1)."]),
    ],
    probes=[probe("compaction prompts sent", _summarizers, expect=["the home copy"])],
)


# ------------------------------- guide/chains/routing.md: which branch ran, in telemetry.log


def _task_attempts(instance: Instance) -> list[str]:
    """The `task_attempt` subjects ~/.contenox/telemetry.log records, in order."""
    log = instance.home / ".contenox" / "telemetry.log"
    text = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
    return re.findall(r"operation=task_attempt subject=(\S+)", text)


TELEMETRY_NAMES_THE_BRANCH = Case(
    name="with telemetry enabled telemetry log records the router s and its branch s task attempts",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, init, scripted dialog ['billing','answered'], c.json = "
            "route task 'classify' (billing->billing, default->general) + two chat tasks. `config"
            " set telemetry-enabled true` -> '✓ telemetry-enabled = true (global)'. `contenox "
            "chat --chain c.json 'why was I charged twice'` -> 'answered' rc=0; `ls "
            "~/.contenox/telemetry.log` -> No such file or directory; no telemetry.log under HOME"
            " or the workspace. With --trace, stderr has 'operation=task_attempt "
            "subject=classify' and '... subject=billing'. Also tried an ACP session "
            "(initialize/session/new/prompt, dialog ['general','Hello.']): "
            "~/.contenox/telemetry.log is created but stays 0 bytes after the process exits, "
            "while the agent's stderr holds 6 task_attempt lines (chain-acp-route, chain-acp-"
            "general-agent). Note: guide/chains/routing.md:89 says '~/.contenox/telemetry.log "
            "records operation=task_attempt subject=...'; integrations/editors/zed.md:121 and "
            "jetbrains.md:90 say that with telemetry-enabled, 'Subsequent ACP sessions write "
            "structured operation traces to ~/.contenox/telemetry.log (chain steps, tool calls, "
            "...)'; reference/config.md:111 'Enable local telemetry logs'. No page says the "
            "traces go only to stderr (guide/sovereignty.md:27 and reference/contenox-cli.md:29 "
            "describe --trace on stderr as well, not instead). The file is missing after chat and"
            " empty after an ACP session."
        ),
        title="with telemetry enabled, a chain run writes no task_attempt line to telemetry.log",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a dialog\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox config set telemetry-enabled true\n"
            "# c.json: a route task 'classify' (billing -> billing, default -> general); "
            "turns: 'billing', 'answered'\n"
            "contenox chat --chain c.json 'why was I charged twice'   # answered, exit 0\n"
            "ls ~/.contenox/telemetry.log   # No such file or directory\n"
            "contenox chat --chain c.json --trace '…'   # stderr: operation=task_attempt "
            "subject=classify, … subject=billing"
        ),
        promised=(
            'guide/chains/routing.md:89 "`~/.contenox/telemetry.log` records '
            '`operation=task_attempt subject=review_chat`"'
        ),
        observed=(
            "no ~/.contenox/telemetry.log is written; the task_attempt operations appear "
            "only on stderr, with --trace"
        ),
        bears_on=(
            'reference/config.md:111 "Enable local telemetry logs (`true` / `false`)"',
            'integrations/editors/zed.md:121 "Subsequent ACP sessions write structured '
            'operation traces to `~/.contenox/telemetry.log`"',
        ),
    ),
    script=Script(turns=["billing", "answered"]),
    files={"c.json": _router_on(SMALL_OR_MAIN)},
    steps=[
        step("config", "set", "telemetry-enabled", "true"),
        step("chat", "--chain", "c.json", "why was I charged twice", stdout_has=["answered"]),
        probe(
            "task_attempt subjects in ~/.contenox/telemetry.log",
            _task_attempts,
            expect=satisfies(
                lambda s: {"classify", "billing"} <= set(s) and "general" not in s,
                "classify and billing, never general",
            ),
        ),
    ],
)
