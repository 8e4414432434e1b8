"""The annotated chains of specification/examples.md, run as the page prints them.

Each example is kept here verbatim (a long line continues with a backslash, which Python
joins back). The two printed as `jsonc` carry `//` comments; they are run with the comment
lines stripped, and once as printed. An example that needs a hosted provider is vetted only.
"""

from __future__ import annotations

import re

from chains import UNASKED, ran

from harness import Case, Defect, Instance, Script, ToolCall, Turn, probe, probes, step

DEFAULT_CHAIN = """\
{
  "id": "default-chain",
  "description": "Standard interactive chat loop supporting tool calls.",
  "token_limit": 8192,
  "tasks": [
    {
      "id": "chat",
      "handler": "chat_completion",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["local_shell", "local_fs"]
      },
      "transition": {
        "branches": [
          // If the model decides a tool is needed, loop to run_tools
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          // Otherwise, end the chain and wait for next user input
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      // input_var ensures it reads the tool calls from the 'chat' task output
      "input_var": "chat",
      "transition": {
        "branches": [
          // Once tools finish, loop back to the chat task to feed results in
          { "operator": "default", "when": "", "goto": "chat" }
        ]
      }
    }
  ]
}
"""

NWS_CHAIN = """\
{
  "id": "chain-nws",
  "description": "Query the US National Weather Service via natural language.",
  "token_limit": 32768,
  "tasks": [
    {
      "id": "nws_chat",
      "handler": "chat_completion",
      "system_instruction": "You are a weather assistant with access to the US National \
Weather Service API. Use the tools to answer weather questions. Summarise results \
concisely — do NOT dump raw JSON or lists of hundreds of items. For forecasts you may \
need two calls: first the 'point' tool with latitude and longitude, then \
'gridpoint_forecast' with the returned grid reference. For alerts, use \
'alerts_active_area' with the two-letter state code. Today is {{now:2006-01-02}}.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["nws"]
      },
      "transition": {
        "branches": [
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "input_var": "nws_chat",
      "transition": {
        "branches": [
          { "operator": "default", "when": "", "goto": "nws_chat" }
        ]
      }
    }
  ]
}
"""

RESILIENT_CHAIN = """\
{
  "id": "resilient-chain",
  "description": "Chat loop with retry on transient errors and a fallback model.",
  "token_limit": 16384,
  "tasks": [
    {
      "id": "chat",
      "handler": "chat_completion",
      "execute_config": {
        "model": "gpt-4.1",
        "provider": "openai",
        "tools": ["nws"],
        "retry_policy": {
          "max_attempts": 3,
          "initial_backoff": "1s",
          "max_backoff": "30s",
          "jitter": 0.2,
          "fallback_model_id": "gpt-4.1-nano",
          "fallback_after": 2
        }
      },
      "transition": {
        "branches": [
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "input_var": "chat",
      "transition": {
        "branches": [
          { "operator": "default", "when": "", "goto": "chat" }
        ]
      }
    }
  ]
}
"""

SELF_PACED_CHAIN = """\
{
  "id": "self-paced-chain",
  "description": "Single agent that sees its own remaining budget on every turn.",
  "token_limit": 131072,
  "tasks": [
    {
      "id": "chat",
      "handler": "chat_completion",
      // The {{edge_count:...}} expands per step to the live traversal count of
      // the named edge. The model reads the budget growing on every turn and
      // paces itself instead of guessing.
      "system_instruction": "You are a coding assistant.\\n\\nBUDGET: You have used \
{{edge_count:chat->run_tools}} of 20 tool-call rounds on this turn. Pace yourself — once \
the budget is spent you will be forced into a tool-less summary and cannot run any more \
tools. Prefer producing an answer once you have enough information; address root causes \
rather than retrying the same thing.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["*"]
      },
      "transition": {
        "on_failure": "summarise_failure",
        "branches": [
          // Hard ceiling: 20 rounds in, force a tool-less wrap-up.
          { "operator": "edge_traversed_at_least", "edge": "chat->run_tools", "when": \
"20", "goto": "summarise_failure" },
          // Otherwise loop while the model still wants tools.
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          // Model finished its reply — end the turn.
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "input_var": "chat",
      "transition": {
        "branches": [
          { "operator": "default", "when": "", "goto": "chat" }
        ]
      }
    },
    {
      "id": "summarise_failure",
      "handler": "chat_completion",
      "input_var": "chat",
      // No tools — the model is forced to wrap up rather than start a new sub-quest.
      "system_instruction": "You've exhausted the tool-call budget for this turn. Tell \
the user what was attempted, what concrete steps were taken, where things got stuck, and \
what would unblock the work. Do not pretend the work is complete.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": [],
        "max_tokens": 16384
      },
      "transition": {
        "branches": [
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    }
  ]
}
"""

SAFE_CHAIN = """\
{
  "id": "safe-chain",
  "description": "File-editing chain with explicit error handling.",
  "token_limit": 8192,
  "tasks": [
    {
      "id": "edit",
      "handler": "chat_completion",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["local_fs"]
      },
      "transition": {
        "on_failure": "bail",
        "branches": [
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "input_var": "edit",
      "transition": {
        "on_failure": "bail",
        "branches": [
          { "operator": "default", "when": "", "goto": "edit" }
        ]
      }
    },
    {
      "id": "bail",
      "handler": "raise_error"
    }
  ]
}
"""


def uncommented(jsonc: str) -> str:
    """The chain without its whole-line `//` comments: what a reader pastes after reading them."""
    return "".join(
        line for line in jsonc.splitlines(keepends=True) if not line.lstrip().startswith("//")
    )


READ_NOTES = Script(
    turns=[
        Turn(text="Reading it.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        "The notes say hello.",
    ]
)

THE_DEFAULT_CHAIN_LOOPS_THROUGH_A_TOOL = Case(
    name="example 1 the default chain runs a tool call and loops back to chat",
    script=READ_NOTES,
    files={"notes.txt": "hello\n", "default-chain.json": uncommented(DEFAULT_CHAIN)},
    steps=[
        step("vet", "default-chain.json", stdout_has=["ok"]),
        step(
            "chat",
            "--chain",
            "default-chain.json",
            "read notes.txt",
            stdout_has=["The notes say hello."],
        ),
    ],
    probes=[ran("chat: tool_call", "run_tools: tools_executed", "chat: executed")],
)

# docs disagree: examples.md promises "full working task chains", but prints them
# as ```jsonc blocks whose // comments are the commentary; agents-config.md:13
# says "JSON cannot carry the comments". The binary sides with the contract page:
# the chain as printed is refused for its first comment, and the same chain without
# its comments runs (THE_DEFAULT_CHAIN_LOOPS_THROUGH_A_TOOL above).
EXAMPLES_AS_PRINTED_LOAD = [
    Case(
        name=f"example {number} as printed is refused for its comments",
        defect=Defect(
            title=f"example {number} of examples.md does not run as printed",
            reproduce=(
                'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
                "# dialog.json: one turn 'hello back' (scripted-test-backend.md)\n"
                "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
                "contenox config set default-provider scripted-test\n"
                "contenox config set default-model scripted-test\n"
                f"# {name}.json: example {number} pasted as printed (a ```jsonc block with // "
                "comments)\n"
                f"contenox chat --chain {name}.json hi\n"
                "# Error: failed to parse chain JSON \"…\": invalid character '/' looking for "
                "beginning of value\n"
                f"contenox vet {name}.json   # skip {name}.json (not a chain or hitl-policy file)\n"
                "# the same file with its whole-line // comments removed runs"
            ),
            promised='specification/examples.md:3 "Full working task chains with commentary"',
            observed=(
                "the chain does not parse: the page's // comments are not JSON, as "
                "agents-config.md says of JSON; without them it runs"
            ),
            bears_on=(
                'reference/agents-config.md:13 "JSON cannot carry the comments that make a '
                'value arguable."',
                'specification/examples.md:13 "The example below is simplified for clarity."',
            ),
            second_reading=(
                "2026-12-02, a second reader with only this text and the docs, in a fresh "
                "scratch home: docs disagree. Saw (example 1): chat 'Error: failed to parse "
                "chain JSON \"…/default-chain.json\": invalid character '/' looking for "
                "beginning of value' rc=1; vet 'skip default-chain.json (not a chain or "
                "hitl-policy file)' rc=0; with the // lines removed: 'hello back' rc=0. Note: "
                "the page fences the block as jsonc and agents-config.md:13 says JSON cannot "
                "carry comments: a finding for the examples page, not the binary."
            ),
            docs_disagree=True,
        ),
        script=Script(turns=["hello back"]),
        serves_all_turns=False,
        files={f"{name}.json": text},
        steps=[
            step(
                "chat",
                "--chain",
                f"{name}.json",
                "hi",
                exit_code="non-zero",
                stderr_has=["failed to parse chain JSON", "invalid character '/'"],
            )
        ],
    )
    for number, name, text in [
        (1, "default-chain", DEFAULT_CHAIN),
        (4, "self-paced-chain", SELF_PACED_CHAIN),
    ]
]


def _dated_system_prompt(instance: Instance) -> list[str]:
    """The system prompt the NWS task was sent, today's date written as [DATE]."""
    run = probes.the_captured_run(instance)
    return [
        re.sub(r"\d{4}-\d{2}-\d{2}", "[DATE]", m.content).rpartition(" Today is ")[2]
        for u in probes.captured_units(instance, run)
        for m in u.sent
        if m.role == "system"
    ]


THE_NWS_CHAIN_RENDERS_TODAY = Case(
    name="example 2 the NWS chain answers and renders today into its instruction",
    script=Script(turns=["It is sunny in Boulder."]),
    files={"chain-nws.json": NWS_CHAIN},
    steps=[
        step("vet", "chain-nws.json", stdout_has=["ok"]),
        step(
            "chat",
            "--chain",
            "chain-nws.json",
            "weather in Boulder?",
            stdout_has=["It is sunny in Boulder."],
        ),
    ],
    probes=[
        ran("nws_chat: executed"),
        probe(
            "the end of the instruction the model was sent",
            _dated_system_prompt,
            expect=["[DATE]."],
        ),
    ],
)

THE_RESILIENT_CHAIN_VETS = Case(
    name="example 3 the retry and fallback chain passes vet",
    script=UNASKED,
    files={"resilient-chain.json": RESILIENT_CHAIN},
    steps=[step("vet", "resilient-chain.json", stdout_has=["ok"])],
)


def _budget_lines(instance: Instance) -> list[str]:
    run = probes.the_captured_run(instance)
    return [
        line
        for u in probes.captured_units(instance, run)
        if u.handler == "chat_completion"
        for line in u.sent[0].content.splitlines()
        if line.startswith("BUDGET:")
    ][:2]


THE_SELF_PACED_CHAIN_SHOWS_ITS_BUDGET = Case(
    name="example 4 the self paced chain shows the live budget on every turn",
    script=READ_NOTES,
    files={"notes.txt": "hello\n", "self-paced-chain.json": uncommented(SELF_PACED_CHAIN)},
    steps=[
        step("vet", "self-paced-chain.json", stdout_has=["ok"]),
        step(
            "chat",
            "--chain",
            "self-paced-chain.json",
            "read notes.txt",
            stdout_has=["The notes say hello."],
        ),
    ],
    probes=[
        ran("chat: tool_call", "run_tools: tools_executed", "chat: executed"),
        probe(
            "the budget line of each chat turn",
            lambda i: [line[:39] for line in _budget_lines(i)],
            expect=[
                "BUDGET: You have used 0 of 20 tool-call",
                "BUDGET: You have used 1 of 20 tool-call",
            ],
        ),
    ],
)

THE_SAFE_CHAIN_EDITS = Case(
    name="example 5 the safe chain runs its file tools and ends",
    script=READ_NOTES,
    files={"notes.txt": "hello\n", "safe-chain.json": SAFE_CHAIN},
    steps=[
        step("vet", "safe-chain.json", stdout_has=["ok"]),
        step(
            "chat",
            "--chain",
            "safe-chain.json",
            "read notes.txt",
            stdout_has=["The notes say hello."],
        ),
    ],
    probes=[ran("edit: tool_call", "run_tools: tools_executed", "edit: executed")],
)
