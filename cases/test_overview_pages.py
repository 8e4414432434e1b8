"""The overview pages: what-contenox-is, concepts, sovereignty, comparison, build-requirements.

These pages are mostly explanation, but the sentences that state what the
product does are promises like any other. Most are asserted by the area files
(their ledgers link them); the cases here are the ones no other file holds:
the envelope what-contenox-is.md opens with, run verbatim, and the build
claim of development/build-requirements.md read from the binary itself.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from harness import (
    Binary,
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
    probe,
    probes,
    respond,
    satisfies,
    step,
    wait,
)
from harness.case import Action

TASK = "do the task"

# --------------------------------------------------------------- what-contenox-is.md:13-26

# The page's envelope, verbatim: credentials denied, three shell prefixes
# allowed, everything else approve ("stops and asks").
PAGE_ENVELOPE = """\
{
  "default_action": "approve",
  "rules": [
    { "tools": "local_fs", "tool": "*", "action": "deny",
      "when": [{ "key": "path", "op": "glob",
                 "value": "**/{.ssh,.aws,.kube}/**" }] },

    { "tools": "local_shell", "tool": "local_shell", "action": "allow",
      "when": [{ "key": "command", "op": "command_prefix_allowlist",
                 "value": "go test,go build,git status" }] }
  ]
}
"""

KEY = "-----BEGIN OPENSSH PRIVATE KEY----- page-canary\n"


def _tool_results(instance: Instance) -> list[str]:
    """Every tool result the run recorded, in order, as the model was sent it."""
    units = probes.captured_units(instance, probes.the_captured_run(instance))
    seen: list[str] = []
    for unit in units:
        for message in (*unit.input_messages, *unit.output_messages):
            if message.role == "tool" and message.content not in seen:
                seen.append(message.content)
    return seen


def _page_envelope_verdicts(results: list[str]) -> bool:
    """The key read refused with its text withheld; `git status` ran; the write refused."""
    if len(results) < 3:
        return False
    key, shell, write = results[0], results[1], results[2]
    return (
        "denied" in key.lower()
        and "page-canary" not in key
        and "not a git repository" in shell
        and "denied" in write.lower()
    )


# The page's claims, in its order: the key read refused outright (no ask), the
# allowlisted `git status` runs without asking (its own output comes back: the
# work dir is no repository), the write no rule names stops on an ask, which a
# person denies; the mission tools are the runtime's own and the finish lands.
WHAT_CONTENOX_IS_ENVELOPE = Case(
    name="the envelope what contenox is opens with denies secrets runs its three commands "
    "and asks about everything else",
    script=Script(
        turns=[
            Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": ".ssh/id_ed25519"})]),
            Turn(
                text="Checking.",
                tool_calls=[ToolCall("local_shell", {"command": "git", "args": ["status"]})],
            ),
            Turn(
                text="Writing.",
                tool_calls=[ToolCall("write_file", {"path": "out.txt", "content": "x\n"})],
            ),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    ),
    files={".ssh/id_ed25519": KEY},
    home_files={"hitl-policy-page.json": PAGE_ENVELOPE},
    steps=[
        background("run", "run", "--policy", "hitl-policy-page.json", "--timeout", "90s", TASK),
        await_ask("write", tool="local_fs.write_file", kind="permission", timeout=60),
        respond("write", "deny"),
        wait("run", timeout=120),
        probe(
            "tool results",
            _tool_results,
            expect=satisfies(
                _page_envelope_verdicts,
                "the key read denied with its text withheld, `git status` run, the write denied",
            ),
        ),
    ],
)

# ------------------------------------------------------- development/build-requirements.md:21

_PT_INTERP = 3
_PT_DYNAMIC = 2


def _segment_types(path: Path) -> set[int]:
    """The program-header types of an ELF file (a dynamically linked one has PT_INTERP)."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF", f"{path} is not an ELF executable; this case reads Linux builds"
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    if is64:
        (phoff,) = struct.unpack_from(endian + "Q", data, 0x20)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 0x36)
    else:
        (phoff,) = struct.unpack_from(endian + "I", data, 0x1C)
        phentsize, phnum = struct.unpack_from(endian + "HH", data, 0x2A)
    return {struct.unpack_from(endian + "I", data, phoff + i * phentsize)[0] for i in range(phnum)}


# function: reads the binary file itself before driving it
def test_the_cli_is_pure_go_a_static_binary_with_no_c_runtime_that_opens_its_store(
    instance: Instance, contenox_binary: Binary
) -> None:
    # "Pure Go, CGO_ENABLED=0. No C toolchain needed." A cgo build links the C
    # runtime and names an ELF interpreter; a pure-Go one is static. The store
    # (SQLite) is what a cgo dependency would be for: it must open without one.
    types = _segment_types(contenox_binary.path)
    assert _PT_INTERP not in types and _PT_DYNAMIC not in types, (
        f"{contenox_binary.path} is dynamically linked (program headers {sorted(types)}): "
        "not a pure-Go CGO_ENABLED=0 build"
    )
    instance.init()
    instance.must("session", "list")


# ------------------------------------------------------------------- concepts.md:151-158

ONE = Script(model="m1", turns=["reply from m1"])
TWO = Script(model="m2", turns=["reply from m2"])
BOTH = {"one": ONE, "two": TWO}
_END = {"branches": [{"operator": "default", "goto": "end"}]}


def _chain(model: str) -> str:
    """A one-task chain whose model is ``model`` (a macro) on the configured provider."""
    task = {
        "id": "a",
        "handler": "chat_completion",
        "execute_config": {"model": model, "provider": "{{var:provider}}"},
        "transition": _END,
    }
    return json.dumps({"id": "fallback", "tasks": [task]})


# The page's own example: no alt model configured, so the primary answers;
# once one is configured, it answers instead.
MACRO_FALLS_BACK_TO_ANOTHER_VARIABLE = Case(
    name="a var macro falls back to another variable while the first is unset",
    backends=BOTH,
    files={"fb.json": _chain("{{var:alt_model|var:model}}")},
    steps=[
        step("chat", "--chain", "fb.json", "hi", stdout_has=["reply from m1"]),
        step("config", "set", "default-alt-model", "m2"),
        step("chat", "--chain", "fb.json", "hi", stdout_has=["reply from m2"]),
    ],
)

MACRO_FALLS_BACK_TO_A_LITERAL = Case(
    name="a var macro falls back to literal text while the variable is unset",
    backends=BOTH,
    files={"fb.json": _chain("{{var:alt_model|m2}}")},
    steps=[step("chat", "--chain", "fb.json", "hi", stdout_has=["reply from m2"])],
)


# ------------------------------------------------------------- sovereignty.md:36-60

# The page's envelope with compute and attention blocks, verbatim.
SOVEREIGN_ENVELOPE = {
    "default_action": "approve",
    "rules": [],
    "compute": {
        "maxTurns": 40,
        "maxToolCalls": 200,
        "maxTokens": 2000000,
        "modelAllowlist": ["qwen3:8b"],
        "backendAllowlist": ["ollama"],
        "onExhausted": "finish_stuck",
    },
    "attention": {"allowAgentAnswers": False},
}


def _with_compute(**compute: object) -> str:
    envelope = json.loads(json.dumps(SOVEREIGN_ENVELOPE))
    envelope["compute"].update(compute)
    return json.dumps(envelope, indent=2) + "\n"


# As the page writes it, `maxTurns: 40` is refused: the binary holds missions.md's
# "only `1` is accepted", not the page's example (nor hard-parts.md's "accepts
# any number").
SOVEREIGN_ENVELOPE_AS_WRITTEN = Case(
    name="the sovereignty page's envelope as written is refused by vet for its maxturns of 40",
    init=False,
    files={"hitl-policy-page.json": _with_compute()},
    steps=[
        step(
            "vet",
            "hitl-policy-page.json",
            exit_code=1,
            stdout_has=["FAIL hitl-policy-page.json", "maxTurns is 40", "only 1 has an effect"],
        )
    ],
    defect=Defect(
        title="sovereignty.md's example envelope sets compute.maxTurns 40, which vet refuses "
        "(missions.md accepts only 1)",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: vet of sovereignty.md:39-51 "
            "verbatim -> 'FAIL … compute: maxTurns is 40, but a mission runs at "
            "most two prompt turns … Remove maxTurns or set it to 1', exit 1; "
            "with \"maxTurns\": 1 -> 'ok', exit 0 Note: Saved the JSON block's "
            "lines 39-51 (without the fences). Binary keeps guide/missions.md:167"
            ' "Any other non-zero value is refused at validation"; '
            'sovereignty.md:43 ("maxTurns": 40) and development/hard-parts.md:120'
            ' ("accepts any number") disagree.'
        ),
        reproduce=(
            "in a scratch HOME and work dir, save the envelope of guide/sovereignty.md:38-52 "
            "verbatim as hitl-policy-page.json; `contenox vet hitl-policy-page.json` exits 1: "
            "'FAIL hitl-policy-page.json … compute: maxTurns is 40, but a mission runs at most "
            "two prompt turns (its own, plus one runtime nudge when it reports nothing): only 1 "
            "has an effect — it drops the nudge — and omitting the field keeps it. Remove "
            "maxTurns or set it to 1'; with `\"maxTurns\": 1` it prints 'ok'"
        ),
        promised=(
            'guide/missions.md:167 "`maxTurns` | Enforced, and only `1` is accepted | … Any other '
            'non-zero value is refused at validation"'
        ),
        observed="vet exit 1, 'compute: maxTurns is 40, … only 1 has an effect …'",
        bears_on=(
            'guide/sovereignty.md:43 ""maxTurns": 40,"',
            'guide/sovereignty.md:55 "`maxTurns` is enforced host-side."',
            'development/hard-parts.md:120 "`compute.maxTurns` accepts any number and only the '
            'value `1` has an effect."',
            'reference/agents-config.md:161-164 "only two values mean anything … Anything larger '
            'is already above the ceiling and is **not emitted**"',
        ),
        docs_disagree=True,
    ),
)

# The control: only maxTurns changed, to the one value that has an effect.
SOVEREIGN_ENVELOPE_VETS = Case(
    name="the sovereignty page's envelope with maxturns 1 passes vet",
    init=False,
    files={"hitl-policy-page.json": _with_compute(maxTurns=1)},
    steps=[step("vet", "hitl-policy-page.json", stdout_has=["ok   hitl-policy-page.json"])],
)

SOVEREIGN_ENVELOPE_REFUSED = [
    Case(
        name=f"vet fails an envelope whose compute block {what}",
        init=False,
        files={"hitl-policy-page.json": _with_compute(maxTurns=1, **compute)},
        steps=[
            step(
                "vet",
                "hitl-policy-page.json",
                exit_code=1,
                stdout_has=["FAIL hitl-policy-page.json", says],
            )
        ],
    )
    for what, compute, says in [
        (
            "sets on exhausted pause ask",
            {"onExhausted": "pause_ask"},
            "pause_ask is not implemented; use finish_stuck",
        ),
        ("has an unknown field", {"maxWallClock": 60}, 'unknown field "maxWallClock"'),
    ]
]


# ----------------------------------------------------------------- concepts.md:146-147

PLAIN = "You answer in one line. No macros here."

# Every toolset granted, yet the instruction declares no {{tools}}: the model
# is sent the instruction exactly as written, with no tool manifest appended.
SYSTEM_INSTRUCTION_AS_WRITTEN = Case(
    name="a system instruction without the tools macro is sent as written with no tool manifest",
    script=Script(model="m1", turns=["one line"]),
    files={
        "plain.json": json.dumps(
            {
                "id": "plain",
                "tasks": [
                    {
                        "id": "a",
                        "handler": "chat_completion",
                        "system_instruction": PLAIN,
                        "execute_config": {
                            "model": "{{var:model}}",
                            "provider": "{{var:provider}}",
                            "tools": ["*"],
                        },
                        "transition": _END,
                    }
                ],
            }
        )
    },
    steps=[
        step("chat", "--chain", "plain.json", "hi", stdout_has=["one line"]),
        probe("the system prompts the model was sent", probes.system_prompts, expect=[PLAIN]),
    ],
)


# ------------------------------------------------------------------- concepts.md:27


def _lands(summary: str) -> Script:
    """A mission that files and lands; the closing text is asked for only sometimes."""
    return Script(
        turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", summary)]),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    )


def _declaration(body: str) -> str:
    return f"---\nname: checker\ndescription: Checks one thing\ntools: Read\n---\n\n{body}\n"


def _prompts_of(instance: Instance, rid: str) -> list[str]:
    return probes.system_prompts(instance, rid)


# function: the declaration and the dialog are rewritten between two runs
def test_editing_a_declaration_changes_the_prompt_of_the_next_run_with_no_build_step(
    instance: Instance,
) -> None:
    # "You do not maintain it — edit the declaration and it follows."
    instance.init()
    decl = instance.write(".contenox/agents/checker.md", _declaration("FIRST-BODY: you check."))
    dialog = instance.use_script(_lands("first run"))
    run = ("run", "--policy", "run", "checker", "check it")
    assert "finished: landed" in instance.must(*run).stderr
    decl.write_text(_declaration("SECOND-BODY: you check again."), encoding="utf-8")
    second_dialog = _lands("second run")
    second_dialog.write(dialog)
    instance.recorder.dialog("rewritten", dialog, second_dialog)
    assert "finished: landed" in instance.must(*run).stderr
    first, second = probes.captured_requests(instance)[-2:]
    assert any("FIRST-BODY" in p for p in _prompts_of(instance, first))
    after = _prompts_of(instance, second)
    assert any("SECOND-BODY" in p for p in after), after
    assert not any("FIRST-BODY" in p for p in after), after


# ------------------------------------------------------------- comparison.md:73-81

_QUESTION = ToolCall(
    "mission_ask_attention", {"summary": "which branch", "question": "which branch?"}
)


def _attention_policy(max_answers: int) -> str:
    return json.dumps(
        {
            "default_action": "approve",
            "rules": [],
            "attention": {"allowAgentAnswers": True, "maxAgentAnswers": max_answers},
        }
    )


def _agent_answer(name: str, max_answers: int, *after: Action) -> Case:
    """A unit's question under the page's attention block with ``maxAgentAnswers``."""
    return Case(
        name=name,
        script=Script(
            turns=[
                Turn(text="Asking.", tool_calls=[_QUESTION]),
                Turn(tool_calls=[mission_report("result", "the unit is done")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
        home_files={"hitl-policy-att.json": _attention_policy(max_answers)},
        steps=[
            step("config", "set", "opt-in-beta", "true"),
            background("run", "run", "--policy", "hitl-policy-att.json", "--timeout", "90s", TASK),
            await_ask("ask", kind="question", timeout=60),
            *after,
            wait("run", timeout=120),
        ],
    )


_AS_AGENT = ("approvals", "respond", "{ask}", "--answer", "use main", "--as-agent", "planner")

# The page's block as written (2): the agent's answer is taken. (`0` is not
# tried as "no agent answers": hitl.md:272 leaves open whether it means none or
# the default of 3, and a first agent answer under 0 is accepted.)
ATTENTION_BOUND = _agent_answer(
    "with the page's attention block an agent may answer the unit's question",
    2,
    step(*_AS_AGENT, stdout_has=['Answered as agent "planner"']),
)
