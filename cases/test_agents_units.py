"""Units of the agents pages (guide/agents.md, guide/agents-md.md) no other file asserted.

Each case is named as the sentence it proves; the ledgers under
cases/promises/guide/ link them. What a declaration became is read from the
chain discovery emitted into the workspace's `.contenox/.generated/` (the page:
"transpiled into `.generated/` … you can read and edit it"); what a run was
offered, from what the model was sent (`state show --raw`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    mission_report,
    probe,
    satisfies,
    step,
    write,
)
from harness.probes import (
    captured_requests,
    captured_units,
    session_records,
    system_prompts,
    transcript,
)
from harness.servers import read_mcp_records, stdio_command
from harness.servers.wiring import offered_roster, open_envelope

# guide/agents-md.md "What to put in it": the page's sample file, byte for byte.
SAMPLE_AGENTS_MD = """\
# Project name

## Setup commands
- Install deps: `make deps`
- Run tests: `make test`
- Build binary: `make build`

## Code style
- Go 1.25, no panics in library code
- All tools take `libdb.DBManager` at construction
- Tests use `t.TempDir()` + `libdb.NewSQLiteDBManager` for SQLite

## Project conventions
- Mutating local_fs operations require a prior `read_file` (read-before-write contract)
- HITL is on by default for write_file, edit_file, sed, and local_shell

## Don't do
- Never run `git push --force` unprompted
- Never edit files under `vendor/`
"""


def _sample_in_head(instance: Instance) -> dict[str, object]:
    shown = transcript(instance, head=1)
    head = shown.messages[0] if shown.messages else None
    return {
        "role": head.role if head else None,
        "carries the sample verbatim": bool(head) and SAMPLE_AGENTS_MD.strip() in head.content,
    }


THE_PAGE_S_SAMPLE_LOADS_VERBATIM = Case(
    name="the page's sample AGENTS.md loads verbatim into the session",
    script=Script(turns=["Hello there, friend."]),
    files={"AGENTS.md": SAMPLE_AGENTS_MD},
    steps=[step("chat", "hello", stdout_has=["Hello there, friend."])],
    probes=[
        probe(
            "the session's first message",
            _sample_in_head,
            expect={"role": "system", "carries the sample verbatim": True},
        )
    ],
)


# ------------------------------------------------------------------ guide/agents.md

# A mission the declared agent files and lands; the closing text after
# mission_finish is asked for only sometimes.
LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "reviewed it")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)

# guide/agents.md:11-20, byte for byte.
REVIEWER_BODY = (
    "You are a code reviewer. Read the file you are asked about, then list the\n"
    "problems you can point at in what you actually read."
)
REVIEWER = (
    "---\nname: reviewer\ndescription: Reviews a file for correctness problems\n"
    f"tools: Read, Glob, Grep\n---\n\n{REVIEWER_BODY}\n"
)


def _decl(name: str, frontmatter: str = "tools: Read", body: str = "You check one thing.") -> str:
    head = f"name: {name}\ndescription: Checks one thing for {name}\n"
    return f"---\n{head}{frontmatter}\n---\n\n{body}\n"


def _prompts(instance: Instance) -> list[str]:
    return [p for rid in captured_requests(instance) for p in system_prompts(instance, rid)]


THE_REVIEWER_EXAMPLE_IS_ONE_FILE = Case(
    name=(
        "the page's reviewer example is one file that is listed"
        " and runs with its body as the prompt"
    ),
    script=LANDS,
    files={".contenox/agents/reviewer.md": REVIEWER},
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"\breviewer\s+discovered\s+chain\s+true")]),
        step(
            "run",
            "--policy",
            "run",
            "reviewer",
            "review the payment retry change",
            notices_has=["finished: landed"],
        ),
    ],
    probes=[
        probe(
            "a system prompt the run was sent carries the file's body",
            lambda i: any(REVIEWER_BODY in p for p in _prompts(i)),
            expect=True,
        )
    ],
)


def _emitted(instance: Instance, agent: str) -> dict[str, Any]:
    path = instance.work / ".contenox" / ".generated" / f"chain-agent-{agent}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _token_limits(*agents: str) -> Any:
    return lambda i: {a: _emitted(i, a).get("token_limit") for a in agents}


# The page's root value, 131072, is also the shipped default, so the root layer
# here says 100000: a value only agents.toml can have put there.
LAYERED_TOML = "[chain]\ntoken_limit = 100000\n\n[agents.reviewer.chain]\ntoken_limit = 32768\n"
TWO_AGENTS = {
    ".contenox/agents/reviewer.md": _decl("reviewer"),
    ".contenox/agents/triager.md": _decl("triager"),
}

A_CHAIN_VALUE_APPLIES_TO_EVERY_AGENT = Case(
    name=(
        "a chain value in agents.toml applies to every agent and an agents section to that one only"
    ),
    files={**TWO_AGENTS, ".contenox/agents.toml": LAYERED_TOML},
    steps=[
        step(
            "agent",
            "list",
            stdout_has=["reviewer", "triager"],
            notices_lacks=["no declaration by that name"],
        )
    ],
    probes=[
        probe(
            "token_limit of the emitted chains",
            _token_limits("reviewer", "triager"),
            expect={"reviewer": 32768, "triager": 100000},
        )
    ],
)

AN_EDITED_AGENTS_TOML_IS_PICKED_UP = Case(
    name="an edited agents.toml is what the next pass emits without touching the declaration",
    files={**TWO_AGENTS, ".contenox/agents.toml": LAYERED_TOML},
    steps=[
        step("agent", "list", stdout_has=["reviewer"]),
        probe("before the edit", _token_limits("reviewer"), expect={"reviewer": 32768}),
        write(".contenox/agents.toml", LAYERED_TOML.replace("32768", "40000")),
        step("agent", "list", stdout_has=["reviewer"]),
        probe("after the edit", _token_limits("reviewer"), expect={"reviewer": 40000}),
        probe(
            "the declaration",
            lambda i: (i.work / ".contenox/agents/reviewer.md").read_text(encoding="utf-8"),
            expect=_decl("reviewer"),
        ),
    ],
)

OFFICE = _decl("office", body="You handle recurring work.\n\n{{skills}}")
TIMESHEET = (
    "---\nname: timesheet\ndescription: File this week's hours to the timesheet system\n---\n\n"
    "Read the tracked hours, present the week, submit the approved rows.\n"
)
INDEX_LINE = (
    "- timesheet: File this week's hours to the timesheet system"
    " — read .contenox/skills/timesheet.md"
)


def _office_prompt(instance: Instance) -> dict[str, bool]:
    prompt = _emitted(instance, "office")["tasks"][0].get("system_instruction", "")
    return {
        "the index line is in the emitted prompt": INDEX_LINE in prompt,
        "{{skills}} is left": "{{skills}}" in prompt,
        # The per-request macro, for contrast: still a macro in the emitted chain.
        "{{tools}} is left": "{{tools}}" in prompt,
    }


THE_SKILLS_MACRO_IS_EXPANDED_AT_GENERATION = Case(
    name="the skills macro is expanded when the chain is generated not per request",
    files={".contenox/agents/office.md": OFFICE, ".contenox/skills/timesheet.md": TIMESHEET},
    steps=[step("agent", "list", stdout_has=["office"], notices_lacks=["office"])],
    probes=[
        probe(
            "the office agent's emitted prompt",
            _office_prompt,
            expect={
                "the index line is in the emitted prompt": True,
                "{{skills}} is left": False,
                "{{tools}} is left": True,
            },
        )
    ],
)


def _branch(label: str) -> str:
    return _decl(label, body=f"BRANCH-{label.upper()}: do it.")


def _stages(instance: Instance) -> dict[str, object]:
    """Per emitted chain: its task ids by handler, sorted (contenox promises no order)."""
    out: dict[str, object] = {}
    for agent in ("solo", "sorter"):
        tasks = _emitted(instance, agent)["tasks"]
        out[agent] = sorted(f"{t['id']} ({t['handler']})" for t in tasks)
    recovery = [t for t in _emitted(instance, "solo")["tasks"] if t["id"] == "solo-recovery"]
    out["solo-recovery is a bounded second attempt"] = bool(recovery) and (
        "Bounded second attempt" in recovery[0].get("description", "")
    )
    return out


ONE_DECLARATION_IS_ONE_LOOP = Case(
    name="one declaration is one loop of a turn its tools and a bounded second attempt",
    files={
        ".contenox/agents/solo.md": _decl("solo"),
        ".contenox/agents/sorter/agent.md": (
            "---\nname: sorter\ndescription: Send a request to its branch\ndefault: docs\n---\n\n"
            "Answer with one label.\n"
        ),
        ".contenox/agents/sorter/code/agent.md": _branch("code"),
        ".contenox/agents/sorter/code/recovery.md": (
            "---\nname: code-recovery\ndescription: A second attempt\n---\n\nTry once more.\n"
        ),
        ".contenox/agents/sorter/docs/agent.md": _branch("docs"),
    },
    steps=[step("agent", "list", stdout_has=["solo", "sorter"], notices_lacks=["solo", "sorter"])],
    probes=[
        probe(
            "the stages each declaration became",
            _stages,
            expect={
                "solo": [
                    "solo-agent (chat_completion)",
                    "solo-recovery (chat_completion)",
                    "solo-recovery-tools (execute_tool_calls)",
                    "solo-summarise (chat_completion)",
                    "solo-tools (execute_tool_calls)",
                ],
                # The router, then each branch's loop; only code has a recovery.md.
                "sorter": [
                    "sorter-code-agent (chat_completion)",
                    "sorter-code-recovery (chat_completion)",
                    "sorter-code-recovery-tools (execute_tool_calls)",
                    "sorter-code-tools (execute_tool_calls)",
                    "sorter-docs-agent (chat_completion)",
                    "sorter-docs-tools (execute_tool_calls)",
                    "sorter-route (route)",
                    "sorter-summarise (chat_completion)",
                ],
                "solo-recovery is a bounded second attempt": True,
            },
        )
    ],
)


# --- reach through MCP servers (functions: a server's command line is known only
# once the scratch root exists)

NOTE_THEN_FINISH = Script(
    turns=[
        Turn(text="Noting.", tool_calls=[ToolCall("note", {"text": "reached"})]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _register(instance: Instance, name: str) -> Path:
    record = instance.tmp / f"{name}.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", name, "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    return record


def _declare(instance: Instance, name: str, frontmatter: str) -> None:
    path = instance.work / ".contenox" / "agents" / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_decl(name, frontmatter), encoding="utf-8")


def _note_calls(record: Path) -> list[dict[str, Any]]:
    return [c.arguments for c in read_mcp_records(record) if c.method == "tools/call"]


def _run_noting(instance: Instance, agent: str) -> dict[str, list[str]]:
    """Run ``agent`` on a dialog that calls `note`, under an envelope where every
    tool runs unasked (reach, not permission, is what is checked); the roster it
    was offered. A tool it cannot reach comes back "not found" and no server records it.
    """
    policy = open_envelope(instance)
    instance.use_script(NOTE_THEN_FINISH)
    ran = instance.contenox("run", "--policy", policy, "--timeout", "120s", agent, "note it")
    assert "finished: landed" in ran.stderr, ran.describe()
    roster = offered_roster(instance)
    instance.recorder.probe("toolsets offered", (), sorted(roster))
    return roster


def test_a_list_under_mcpservers_grants_the_servers_it_names_and_no_other_registered_server(
    instance: Instance,
) -> None:
    instance.init()
    named = _register(instance, "rec")
    other = _register(instance, "other")
    _declare(instance, "granted", "tools: Read\nmcpServers: [rec]")
    roster = _run_noting(instance, "granted")
    assert {"local_fs", "rec"} <= set(roster), roster
    assert "other" not in roster, roster
    assert _note_calls(named) == [{"text": "reached"}]
    assert _note_calls(other) == []


def test_an_agent_inheriting_every_tool_reaches_every_server_you_registered(
    instance: Instance,
) -> None:
    instance.init()
    _register(instance, "rec")
    _register(instance, "other")
    _declare(instance, "heir", 'tools: "*"')
    roster = _run_noting(instance, "heir")
    # Only the offer is checked: both servers serve a `note`, and v1.0.0 answers a
    # bare `note` held by two toolsets with "tool note not found".
    assert {"local_fs", "rec", "other"} <= set(roster), roster


# The control is cases/test_agents_page.py's
# test_an_agent_inheriting_every_tool_reaches_a_server_another_agent_brought:
# the same two declarations, the second with `tools: "*"`, and the call lands.
def test_an_agent_naming_its_toolsets_does_not_reach_a_server_another_agent_brought(
    instance: Instance,
) -> None:
    instance.init()
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    _declare(
        instance,
        "bringer",
        f"tools: Read\nmcpServers:\n  rec:\n    command: {json.dumps(command)}\n"
        f"    args: {json.dumps(args)}",
    )
    _declare(instance, "namer", "tools: Read")
    roster = _run_noting(instance, "namer")
    assert not any(toolset.startswith("decl-") for toolset in roster), roster
    assert _note_calls(record) == []


# --- the credential quarantine cannot be overridden

# The widest grant the format can spell for the file tool, in the workspace
# agents.toml (where cases/test_agents_page.py's always_allow case shows such a
# rule is honoured).
ALWAYS_ALLOW_LOCAL_FS = '[[policy.always_allow]]\ntools = "local_fs"\ntool = "*"\n'
GRANT = {"tools": "local_fs", "tool": "*", "action": "allow"}


def _read_result(instance: Instance) -> str:
    """The tool result the run's unit recorded for its one call (`session show`)."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    results = [m.content for m in transcript(instance, unit.id).messages if m.role == "tool"]
    assert results, f"the unit recorded no tool result: {unit}"
    return results[0]


def _grant_in_the_emitted_policy(instance: Instance) -> dict[str, bool]:
    """Whether the run envelope's emitted policy carries the grant, behind the .ssh deny."""
    path = instance.work / ".contenox" / ".generated" / "hitl-policy-run.json"
    rules = json.loads(path.read_text(encoding="utf-8"))["rules"]
    grants = [k for k, r in enumerate(rules) if r == GRANT]
    denies = [
        k
        for k, r in enumerate(rules)
        if r.get("action") == "deny" and r.get("tools") == "local_fs" and ".ssh" in json.dumps(r)
    ]
    return {
        "the grant is emitted": bool(grants),
        "a .ssh deny comes first": bool(grants and denies) and min(denies) < min(grants),
    }


def _reading(name: str, path: str, check: Any, what: str) -> Case:
    """One `read_file` of ``path`` under the `run` envelope, with the grant in agents.toml."""
    return Case(
        name=name,
        script=Script(
            turns=[
                Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": path})]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
        files={".contenox/agents.toml": ALWAYS_ALLOW_LOCAL_FS, path: "PRIVATE-KEY-MATERIAL\n"},
        steps=[
            step(
                "run",
                "--policy",
                "run",
                "--timeout",
                "90s",
                "do the task",
                exit_code=None,
                stderr_lacks=['subject="ask raised"'],
                timeout=120,
            )
        ],
        probes=[
            probe(
                "the grant in the emitted run policy",
                _grant_in_the_emitted_policy,
                expect={"the grant is emitted": True, "a .ssh deny comes first": True},
            ),
            probe("the call's tool result", _read_result, expect=satisfies(check, what)),
        ],
    )


ALWAYS_ALLOW_CANNOT_OPEN_THE_QUARANTINE = _reading(
    "an always_allow rule for the file tool does not open the credential quarantine",
    ".ssh/deploy-key",
    lambda r: "Denied by the active policy" in r and "PRIVATE-KEY-MATERIAL" not in r,
    "the envelope's refusal, the key withheld",
)

# The control: the same grant, the same text one dot away from .ssh, is read.
ALWAYS_ALLOW_READS_ELSEWHERE = _reading(
    "the same always_allow rule reads the same text outside the quarantine",
    "ssh/deploy-key",
    lambda r: "PRIVATE-KEY-MATERIAL" in r,
    "the file's content",
)


# --- the classifier's model

SORTER_TREE = {
    ".contenox/agents/sorter/agent.md": (
        "---\nname: sorter\ndescription: Send a request to its branch\ndefault: code\n---\n\n"
        "Answer with one label.\n"
    ),
    ".contenox/agents/sorter/code/agent.md": _branch("code"),
    ".contenox/agents/sorter/docs/agent.md": _branch("docs"),
}
BRANCH_TURNS = [
    Turn(text="Filing.", tool_calls=[mission_report("result", "routed")]),
    Turn(tool_calls=[mission_finish("landed")]),
    Turn(text="Mission finished.", optional=True),
]


def _models_by_task(instance: Instance) -> dict[str, list[str]]:
    """Task → the models its model calls ran on, over every captured run (`state show --raw`).

    A tool step calls no model (its provider type is empty) and is left out.
    """
    out: dict[str, list[str]] = {}
    for rid in captured_requests(instance):
        for unit in captured_units(instance, rid):
            if unit.provider_type and unit.model_name not in out.setdefault(unit.task, []):
                out[unit.task].append(unit.model_name)
    return {task: models for task, models in sorted(out.items()) if models}


ROUTER_MODEL_MOVES_THE_CLASSIFIER = Case(
    name="router_model moves the classifier to another model and the branch stays on the default",
    backends={
        "main": Script(turns=BRANCH_TURNS),
        "router": Script(model="router-model", turns=[Turn(text="docs")]),
    },
    default_backend="main",
    files={**SORTER_TREE, ".contenox/agents.toml": '[routing]\nrouter_model = "router-model"\n'},
    steps=[step("run", "--policy", "run", "sorter", "sort it", notices_has=["finished: landed"])],
    # The control is cases/test_agents_page.py's
    # test_the_router_s_answer_picks_the_branch_of_that_directory_name: the same
    # tree without the table, its route turn served by the default backend.
    probes=[
        probe(
            "models by task",
            _models_by_task,
            expect={"sorter-docs-agent": ["scripted-test"], "sorter-route": ["router-model"]},
        )
    ],
)
