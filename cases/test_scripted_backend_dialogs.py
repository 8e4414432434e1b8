"""The scripted-test backend's dialog promises, one case each.

Source: contenox-docs/development/scripted-test-backend.md ("The script", "Document
fields", "Turn fields", "How turns are consumed", "A worked run", "Running past the end
fails loudly", "Limitations") and the `scripted-test` section of contenox-cli.md.

`chat` logs nothing on stderr; the model-demand check counts the turns a chat Case was
served from the captured state (`state show --raw` names the provider of each model call).
A turn the case expects contenox never to ask for is `optional=True`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from dialogs import WORKED_RUN, WORKED_RUN_REPORT
from harness import (
    Capabilities,
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    Usage,
    acp_turn,
    group,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    prompt,
    route,
    satisfies,
    start_contenox,
    step,
    write,
)
from harness.acp.turn import PromptTurn
from harness.probes import (
    approvals,
    await_approval,
    captured_requests,
    captured_steps,
    captured_units,
    mission_reports,
    missions,
    models,
    the_captured_run,
)

# --------------------------------------------------------------------------- helpers


def _scripted(instance: Instance, script: Script) -> Any:
    instance.init()
    return instance.use_script(script)


def _raw_units(instance: Instance, request_id: str) -> list[Mapping[str, Any]]:
    """`state show <id> --raw` as the JSON contenox prints, every field kept."""
    return [unit.raw for unit in captured_units(instance, request_id)]


def _model_turns(instance: Instance, request_id: str) -> list[Mapping[str, Any]]:
    return [
        u for u in _raw_units(instance, request_id) if u.get("taskHandler") == "chat_completion"
    ]


def _exhausted(path: object, op: str, turn: int) -> str:
    """The documented shape of the exhausted-script error."""
    return (
        f'scripted-test script "{path}" is exhausted: {op} asked for turn {turn} but the '
        f"script holds {turn} turn(s); add the missing turn or shorten the run"
    )


# --------------------------------------------------------------------------- determinism

BYTE_EXACT = 'Ünïcødé — two  spaces, a\ttab, "quotes" & <angle> {braces} $HOME `ticks`'


def _whole(text: str) -> re.Pattern[str]:
    """An expectation that the stream is exactly ``text``, nothing before or after."""
    return re.compile(rf"\A{re.escape(text)}\Z")


THE_SAME_DIALOG_REPLAYS_BYTE_FOR_BYTE = Case(
    name="the same dialog replays the same reply byte for byte every time",
    script=Script(turns=[BYTE_EXACT]),
    steps=[
        step("chat", "say something", stdout_has=[_whole(BYTE_EXACT + "\n")]),
        step("chat", "say something", stdout_has=[_whole(BYTE_EXACT + "\n")]),
    ],
)


# --------------------------------------------------------------------------- the script

A_BARE_ARRAY_IS_A_VALID_SCRIPT = Case(
    name="a bare array of turns is a valid script",
    files={"bare.json": '[{ "text": "hello" }, { "text": "goodbye" }]\n'},
    steps=[
        step("backend", "add", "scripted", "--type", "scripted-test", "--script", "bare.json"),
        step("config", "set", "default-provider", "scripted-test"),
        step("config", "set", "default-model", "scripted-test"),
        step("chat", "hi", stdout_has=["hello"], stdout_lacks=["goodbye"]),
    ],
)


TEXT_AND_A_TOOL_CALL_IN_ONE_TURN = Case(
    name="a turn with text and a tool call shows the text and dispatches the call",
    files={"notes.txt": "the answer is 42\n"},
    script=Script(
        turns=[
            route(),
            Turn(
                text="Reading the notes.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]
            ),
            "Read them.",
        ]
    ),
    steps=[
        prompt(
            "read the notes",
            text_has=[re.compile(r"\AReading the notes\."), re.compile(r"Read them\.\Z")],
            files_read=["notes.txt"],
        )
    ],
)


# --------------------------------------------------------------------------- document fields

THE_MODEL_FIELD_NAMES_THE_EXPOSED_MODEL = Case(
    name="the model field is the model name the backend exposes and a chain can pin",
    script=Script(model="pinned-7b", turns=["served under the pinned name"]),
    steps=[
        step("model", "list", stdout_has=["pinned-7b"], stdout_lacks=["scripted-test"]),
        step("chat", "hi", stdout_has=["served under the pinned name"]),
    ],
    probes=[probe("models", models)],
)

CONTEXT_LENGTH_DEFAULTS_TO_32768 = Case(
    name="context_length defaults to 32768",
    script=Script(turns=[Turn(text="never asked for", optional=True)]),
    steps=[step("model", "list", stdout_has=["32768"])],
    probes=[probe("models", models)],
)


def _refusal(turn: PromptTurn) -> dict[str, object]:
    """Whether the prompt failed with the context-length refusal, and whether text arrived."""
    message = str((turn.error or {}).get("message")) if turn.error is not None else None
    return {
        "refused": message is not None,
        "names the context length": message is not None
        and "exceeds context length" in message
        and "> 50" in message,
        "served the scripted reply": "this must not be served" in turn.text,
    }


ACP_REFUSES_WHAT_EXCEEDS_THE_CONTEXT = Case(
    name="acp refuses a request that needs more than the context length",
    script=Script(context_length=50, turns=[route(), "this must not be served"]),
    steps=[
        prompt("hello " * 50, stop_reason=None),
        acp_turn(
            "the prompt's error",
            _refusal,
            expect={
                "refused": True,
                "names the context length": True,
                "served the scripted reply": False,
            },
        ),
    ],
)


def _steps_and_refusals(instance: Instance) -> list[str]:
    """Each step of the chat's one captured run: its task, and how it ended (the refusal
    named by the context it needed against the 50 the backend provides)."""
    rows = captured_steps(instance, the_captured_run(instance))
    return [
        f"{r.task}: "
        + ("refused, provides only 50" if "provides only 50" in r.status else r.status)
        for r in rows
    ]


# The chat chain's agent and recovery requests carry a system prompt and the
# tool manifest (over 2000 tokens) and are refused before any turn is served;
# the chain's failure route ends in its summariser, whose small request fits in
# 50 and is served the scripted reply. So the reply comes back, and the
# promise — a request needing more is refused — holds for each request.
CHAT_REFUSES_WHAT_EXCEEDS_THE_CONTEXT = Case(
    name="chat refuses each request that needs more than the script's context_length",
    script=Script(context_length=50, turns=["the summariser's reply"]),
    steps=[
        step("model", "list", stdout_has=["50"]),
        step("chat", "hello", stdout_has=["the summariser's reply"]),
        probe(
            "the chat's steps",
            _steps_and_refusals,
            expect=[
                "chat-agent: refused, provides only 50",
                "chat-recovery: refused, provides only 50",
                "chat-summarise: OK",
            ],
        ),
    ],
)

LONG_REPLY = " ".join(f"word{n}" for n in range(300))

MAX_OUTPUT_TOKENS_UNSET_DOES_NOT_CLAMP = Case(
    name="with max_output_tokens unset a long reply comes back whole",
    script=Script(turns=[LONG_REPLY]),
    steps=[step("chat", "talk at length", stdout_has=[LONG_REPLY + "\n"])],
)


EVERY_CAPABILITY_DEFAULTS_TO_TRUE = Case(
    name="every capability defaults to true",
    script=Script(turns=["unused"]),
    probes=[
        probe(
            "models",
            models,
            expect=satisfies(
                lambda ms: (
                    [(m.chat, m.embed, m.prompt, m.think, m.vision) for m in ms]
                    == [(True, True, True, True, True)]
                ),
                "one model with chat, embed, prompt, think and vision",
            ),
        )
    ],
)


A_CAPABILITY_SET_TO_FALSE_IS_REPORTED_MISSING = Case(
    name="a capability set to false is reported missing",
    script=Script(capabilities=Capabilities(think=False, vision=False), turns=["unused"]),
    probes=[
        probe(
            "models",
            models,
            expect=satisfies(
                lambda ms: [(m.chat, m.think, m.vision) for m in ms] == [(True, False, False)],
                "one model: chat yes, think and vision no",
            ),
        )
    ],
)


CHAT_FALSE_IS_REFUSED = Case(
    name="a script with chat set to false is refused by chat",
    script=Script(
        capabilities=Capabilities(chat=False),
        turns=[Turn(text="this must not be served", optional=True)],
    ),
    steps=[
        step(
            "chat",
            "hi",
            exit_code=1,
            stdout_lacks=["this must not be served"],
            notices_has=["contains no chat-capable models for backend(s): scripted"],
        )
    ],
)


# --------------------------------------------------------------------------- turn fields


_LONG_ENOUGH = "Here is a reply long enough to arrive in several pieces."

STREAMED_IN_CHUNKS = Case(
    name="a turns text is streamed in several chunks",
    script=Script(turns=[route(), _LONG_ENOUGH]),
    steps=[
        prompt("hello"),
        acp_turn(
            "the reply",
            lambda turn: {
                "several chunks": len(turn.updates_of("agent_message_chunk")) > 1,
                "text": turn.text,
            },
            expect={"several chunks": True, "text": _LONG_ENOUGH},
        ),
    ],
)

THINKING_ON_ITS_CHANNEL = Case(
    name="thinking arrives on the thinking channel not in the reply",
    script=Script(turns=[route(), Turn(text="The visible answer.", thinking="A private trace.")]),
    steps=[
        prompt("hello"),
        acp_turn(
            "the channels",
            lambda turn: {"thoughts": turn.thoughts, "text": turn.text},
            expect={"thoughts": "A private trace.", "text": "The visible answer."},
        ),
    ],
)


def _model_turns_of_the_run(instance: Instance) -> list[Mapping[str, Any]]:
    """The raw chat_completion units of the one captured run."""
    return _model_turns(instance, the_captured_run(instance))


def _sent_back(instance: Instance) -> list[object]:
    """Messages of the history sent to the second model turn that carry the thinking trace."""
    _, second = _model_turns_of_the_run(instance)
    return [m for m in second["output"]["messages"][:-1] if "A private trace." in json.dumps(m)]


THINKING_IS_NEVER_SENT_BACK = Case(
    name="thinking is never sent back to the model as history",
    files={"notes.txt": "n\n"},
    script=Script(
        turns=[
            route(),
            Turn(
                thinking="A private trace.",
                tool_calls=[ToolCall("read_file", {"path": "notes.txt"})],
            ),
            "Done.",
        ]
    ),
    steps=[prompt("read the notes")],
    probes=[probe("history carrying the thinking trace", _sent_back, expect=[])],
    defect=Defect(
        title="a turn's thinking is sent back to the model as history",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: ACP: agent_thought_chunk 'A ' 'private ' 'trace.', fs/read_text_file"
            " for notes.txt, tool_call completed, 'Done.', stopReason end_turn. state show "
            "cli-d33a…: route → chain-acp-general-agent (tool_call) → chain-acp-general-tools → "
            "chain-acp-general-agent (executed). --raw, 4th unit (second chat_completion) input "
            "messages: system, user 'read the notes', assistant {callTools:[read_file notes.txt], "
            "thinking:'A private trace.'}, tool 'the notes say hi' Note: Reproduces as written: "
            "the second model call's captured input history carries the first turn's thinking. One"
            " caveat: this is the engine's captured task input, not a wire capture (the scripted "
            "backend has no wire), so 'sent back' is read the way the report reads it. No other "
            "page says thinking is kept in history. A grep for 'thinking' finds only "
            "engine-events.md stream fields."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `notes.txt` in the workspace; a scripted-test "
            "default backend whose dialog is `general` (the router's label), a turn with "
            "`thinking: A private trace.` calling `read_file {path: notes.txt}`, then `Done.`; "
            "`contenox acp` prompted 'read the notes' by an ACP client; `contenox state show "
            "<request id> --raw`: the second chat_completion (chain-acp-general-agent) was sent "
            'the first turn\'s assistant message with "thinking": "A private trace." in its '
            "history"
        ),
        promised=(
            'development/scripted-test-backend.md:135 "A reasoning trace, delivered on '
            'the thinking channel and never sent back as history."'
        ),
        observed='the history sent back holds "thinking": "A private trace."',
    ),
)


def _call_statuses(turn: PromptTurn) -> dict[str, object]:
    """How many tool calls the turn carried, whether each has an id, and their final statuses."""
    ids = list(turn.tool_calls)
    return {
        "calls": len(ids),
        "every call has an id": all(ids),
        "statuses": [turn.tool_calls[i].get("status") for i in ids],
    }


GENERATED_CALL_IDS = Case(
    name="a tool call without an id gets a generated one",
    files={"notes.txt": "n\n"},
    script=Script(
        turns=[
            route(),
            Turn(
                tool_calls=[
                    ToolCall("read_file", {"path": "notes.txt"}),
                    ToolCall("read_file", {"path": "notes.txt", "force": True}),
                ]
            ),
            "Done.",
        ]
    ),
    steps=[
        prompt("read twice"),
        acp_turn(
            "the tool calls",
            _call_statuses,
            expect={
                "calls": 2,
                "every call has an id": True,
                "statuses": ["completed", "completed"],
            },
        ),
    ],
)


ARGUMENTS_AS_A_JSON_STRING_ARE_PARSED = Case(
    name="tool arguments given as a json string reach the tool parsed",
    files={"notes.txt": "from a string\n"},
    script=Script(
        turns=[route(), Turn(tool_calls=[ToolCall("read_file", '{"path": "notes.txt"}')]), "ok"]
    ),
    steps=[prompt("read", files_read=["notes.txt"], tool_output_has=["from a string"])],
)


def _malformed(turn: PromptTurn) -> dict[str, object]:
    """The one call's status, the paths read, and whether the error names the unmarshal."""
    message = str((turn.error or {}).get("message"))
    return {
        "statuses": [call.get("status") for call in turn.tool_calls.values()],
        "paths read": turn.paths_read,
        "the error names the unmarshal": (
            "failed to unmarshal tool arguments for local_fs.read_file" in message
        ),
    }


MALFORMED_ARGUMENTS = Case(
    name="malformed tool arguments reach the engine as raw text",
    script=Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall("read_file", '{"path": "notes.txt"')]),
            # The prompt ends in the unmarshal error: nothing asks for this one.
            Turn(text="x", optional=True),
        ]
    ),
    steps=[
        prompt("read", stop_reason=None),
        acp_turn(
            "the malformed call",
            _malformed,
            expect={
                "statuses": ["failed"],
                "paths read": [],
                "the error names the unmarshal": True,
            },
        ),
    ],
)


READING_THE_NOTES = Script(
    turns=[route(), Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]), "Done."]
)

FINISH_REASON_DEFAULTS = Case(
    name="finish reason defaults to tool calls then stop",
    files={"notes.txt": "n\n"},
    script=READING_THE_NOTES,
    steps=[prompt("read")],
    probes=[
        probe(
            "finish reasons",
            lambda i: [u.get("finishReason") for u in _model_turns_of_the_run(i)],
            expect=["tool_calls", "stop"],
        )
    ],
)

FINISH_REASON_LENGTH_ENDS_THE_TURN_AS_CUT_OFF = Case(
    name="finish reason length ends the turn as cut off",
    script=Script(turns=[route(), Turn(text="cut off mid", finish_reason="length")]),
    steps=[
        prompt(
            "hello",
            stop_reason="max_tokens",
            text_has=[re.compile(r"\Acut off mid"), "cut off rather than finished"],
        )
    ],
)


DECLARED_USAGE_IS_THE_TOKEN_ACCOUNTING = Case(
    name="a turns declared usage is reported as its token accounting",
    script=Script(
        turns=[
            route(),
            Turn(
                text="counted reply",
                usage=Usage(prompt_tokens=111, completion_tokens=22, total_tokens=133),
            ),
        ]
    ),
    steps=[prompt("hello")],
    probes=[
        probe(
            "token usage",
            lambda i: [u.get("tokenUsage") for u in _model_turns_of_the_run(i)],
            expect=[{"prompt": 111, "completion": 22, "total": 133}],
        )
    ],
    defect=Defect(
        title="a turn's declared usage is not its token accounting",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init; scripted dialog "
            "[{text:'general'},{text:'counted "
            "reply',usage:{prompt_tokens:111,completion_tokens:22,total_tokens:133}}]. I "
            "drove `contenox acp` with my own small stdio JSON-RPC client (initialize, "
            "session/new, session/prompt 'hello'): streamed 'counted reply', usage_update "
            "used 7149 size 32768, end_turn. `state show <req> --raw`: chain-acp-route, "
            "then chain-acp-general-agent with providerType scripted-test and tokenUsage "
            "{prompt:0, completion:3, total:3}. Control in a fresh env without `usage`: the "
            "same tokenUsage {0,3,3} and the same used 7149. Note: Reproduces. The declared "
            "usage is ignored. scripted-test-backend.md:138 says usage is 'reported as the "
            "turn's token accounting', and :236-237 says counts come from the estimating "
            "tokenizer 'unless a turn declare..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; a scripted-test default backend whose dialog "
            "is `general`, then a turn `counted reply` with `usage: {prompt_tokens: 111, "
            "completion_tokens: 22, total_tokens: 133}`; `contenox acp` prompted 'hello' by an "
            "ACP client; `contenox state show <request id> --raw` records tokenUsage {prompt: "
            "0, completion: 3, total: 3} for that turn — what the same turn without usage "
            "records — and the ACP usage_update says used 8964 either way"
        ),
        promised=(
            'development/scripted-test-backend.md:138 "reported as the turn\'s token accounting."'
        ),
        observed="tokenUsage {prompt: 0, completion: 3, total: 3}",
        bears_on=('development/scripted-test-backend.md:236 "estimating tokenizer"',),
    ),
)


def _completion_counts(instance: Instance) -> list[int]:
    """The completion token count of the one model turn of each captured request, in order."""
    counts = []
    for request in captured_requests(instance):
        [turn] = _model_turns(instance, request)
        counts.append(int(turn["tokenUsage"]["completion"]))
    return counts


LONG_ESTIMATED = " ".join(f"word{n}" for n in range(60))

UNDECLARED_USAGE_IS_ESTIMATED = Case(
    name="without declared usage token counts are estimated from the text",
    script=Script(turns=[route(), "short", route(), LONG_ESTIMATED]),
    steps=[prompt("one"), prompt("two")],
    probes=[
        probe(
            "completion tokens of the short and the long reply",
            _completion_counts,
            expect=satisfies(
                lambda c: len(c) == 2 and 0 < c[0] < c[1], "two counts, 0 < short < long"
            ),
        )
    ],
)


EMPTY_TURN_DIALOG = "an_empty_turn_is_rejected_when_the_script_loads.json"

AN_EMPTY_TURN_IS_REJECTED = Case(
    name="an empty turn is rejected when the script loads",
    script=Script(turns=[Turn(text="fine at add time", optional=True)]),
    steps=[
        # No Script can express an empty turn: the file is rewritten by hand after `backend add`.
        write(EMPTY_TURN_DIALOG, '{"turns": [{"text": "ok"}, {}]}\n'),
        step(
            "chat",
            "hi",
            exit_code="non-zero",
            stdout_lacks=["fine at add time"],
            notices_has=['scripted-test script "{dialog}" turn 1 is empty'],
        ),
    ],
)


# --------------------------------------------------------------------------- consumption


TURNS_ARE_SERVED_ONE_PER_MODEL_TURN_IN_FILE_ORDER = Case(
    name="turns are served one per model turn in file order",
    script=Script(turns=[route(), "one", route(), "two", route(), "three"]),
    steps=[
        prompt(p, text_has=[re.compile(rf"\A{reply}\Z")])
        for p, reply in (("a", "one"), ("b", "two"), ("c", "three"))
    ],
)


# function: it interleaves ACP prompts with a chat call while one session stays open.
def test_chat_and_streaming_calls_draw_from_one_cursor(instance: Instance) -> None:
    _scripted(
        instance,
        Script(turns=[route(), "streamed one", "completed by chat", route(), "streamed two"]),
    )
    instance.must("config", "set", "default-autocomplete-model", "scripted-test")
    instance.must("config", "set", "default-autocomplete-provider", "scripted-test")
    with open_acp(instance) as acp:
        first = acp.prompt("hello")
        completion = acp.call(
            "_contenox/autocomplete",
            {
                "sessionId": acp.session_id,
                "path": "main.go",
                "language": "go",
                "prefix": "func main() {\n\t",
                "suffix": "\n}",
            },
        )
        second = acp.prompt("again")

    assert first.text == "streamed one", first.describe()
    assert completion == {"completion": "completed by chat"}, completion
    assert second.text == "streamed two", second.describe()


TWO_TASK_CHAIN = {
    "id": "two-tasks",
    "tasks": [
        {
            "id": "first",
            "handler": "chat_completion",
            "system_instruction": "You speak first.",
            "execute_config": {"model": "scripted-test", "provider": "scripted-test"},
            "transition": {"branches": [{"operator": "default", "goto": "second"}]},
        },
        {
            "id": "second",
            "handler": "chat_completion",
            "system_instruction": "You speak second.",
            "execute_config": {"model": "scripted-test", "provider": "scripted-test"},
            "transition": {"branches": [{"operator": "default", "goto": "end"}]},
        },
    ],
}

TWO_CHAIN_TASKS_CONTINUE_ONE_DIALOG = Case(
    name="two chain tasks in one run continue the same dialog",
    files={"two-tasks.json": json.dumps(TWO_TASK_CHAIN, indent=2) + "\n"},
    script=Script(turns=["said by the first task", "said by the second task"]),
    steps=[
        step(
            "chat",
            "--chain",
            "two-tasks.json",
            "go",
            stdout_has=["said by the second task"],
            stdout_lacks=["said by the first task"],
        ),
    ],
    probes=[
        probe(
            "what each task said",
            lambda i: [
                (u.task, u.output_messages[-1].content)
                for u in captured_units(i, captured_requests(i)[-1])
            ],
        )
    ],
)

A_SECOND_PROCESS_STARTS_AT_TURN_ONE = Case(
    name="a second process starts the script at turn one again",
    # Each process is served turn one only: turn two is there to be never served.
    script=Script(turns=["turn one", Turn(text="turn two", optional=True)]),
    steps=[
        step("chat", "first process", stdout_has=["turn one"], stdout_lacks=["turn two"]),
        step("chat", "second process", stdout_has=["turn one"], stdout_lacks=["turn two"]),
    ],
)


# function: it rewrites the dialog while one ACP session stays open between two prompts.
def test_editing_the_script_file_rewinds_it_to_turn_one(instance: Instance) -> None:
    path = _scripted(instance, Script(turns=[route(), "before the edit", route(), "unused"]))
    with open_acp(instance) as acp:
        before = acp.prompt("one")
        # A different size as well as a later mtime, so the change is unmistakable;
        # the mtime is set forward rather than waited for.
        mtime = path.stat().st_mtime
        Script(turns=[route(), "after the edit, from turn one"]).write(path)
        os.utime(path, (mtime + 2, mtime + 2))
        after = acp.prompt("two")

    assert before.text == "before the edit", before.describe()
    assert after.text == "after the edit, from turn one", after.describe()


# --------------------------------------------------------------------------- the worked run


THE_WORKED_RUN_KEEPS_ITS_REPORT = Case(
    name="the worked run prints its report lands and keeps the report",
    script=WORKED_RUN,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            stdout_has=[_whole(WORKED_RUN_REPORT + "\n")],
            notices_has=[re.compile(r"Mission \S+ finished: landed")],
            capture={"mission": group(r"Mission (\S+) finished", stream="notices")},
        ),
        probe(
            "the reports kept",
            lambda i, m: [(r.kind, r.summary) for r in mission_reports(i, m).reports],
            "{mission}",
            expect=[("result", WORKED_RUN_REPORT)],
        ),
    ],
)


ONE_TURN_SHORT = Case(
    name="a dialog ending on a tool call is one turn short",
    script=Script(
        turns=[Turn(text="Filing.", tool_calls=[mission_report("result", "one turn short")])],
        runs_past_end=True,
    ),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "--timeout",
            "60s",
            "report",
            exit_code="non-zero",
            # The terminal tool call landed.
            stdout_has=["one turn short"],
            # The structured log line quotes the error, so its quotes are escaped there.
            stderr_has=[_exhausted("{dialog}", "stream", 1).replace('"', '\\"')],
        ),
        probe(
            "missions",
            lambda i: [m.status for m in missions(i)],
            expect=["derailed"],
        ),
    ],
)


# function: it checks the ask id's prefix and that the run is still running meanwhile.
def test_a_gated_call_waits_on_an_ask_raised_against_the_scripted_call_id(
    instance: Instance,
) -> None:
    _scripted(
        instance,
        Script(
            turns=[
                Turn(
                    text="Echoing.",
                    tool_calls=[ToolCall("echo", {"message": "hi"}, id="call-scripted-42")],
                ),
                Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
                Turn(tool_calls=[mission_finish("landed")]),
                # After mission_finish contenox asks for this turn only sometimes.
                Turn(text="Done.", optional=True),
            ]
        ),
    )
    run = start_contenox(instance, "run", "--policy", "run", "--timeout", "60s", "echo hi")

    ask = await_approval(instance, 30, tool="native-echo.echo", run=run)
    assert ask.id.startswith("call-scripted-42"), ask
    assert run.running, run.describe()
    instance.must("approvals", "respond", ask.id, "--approve")

    run.wait(timeout=90).assert_success().assert_stdout_contains("echoed after the verdict")
    assert approvals(instance) == []


# --------------------------------------------------------------------------- past the end


ONE_ECHO_PAST_THE_END = Script(
    turns=[Turn(tool_calls=[ToolCall("echo", {"message": "x"})])], runs_past_end=True
)

RUNNING_PAST_THE_END_NAMES_SCRIPT_AND_TURN = Case(
    name="running past the end fails naming the script and the turn",
    script=ONE_ECHO_PAST_THE_END,
    steps=[step("chat", "hi", exit_code=1, notices_has=[_exhausted("{dialog}", "chat", 1)])],
)

RUNNING_PAST_THE_END_INVENTS_NO_REPLY = Case(
    name="running past the end prints no fallback reply",
    script=ONE_ECHO_PAST_THE_END,
    # stdout is exactly empty: it holds no character at all.
    steps=[step("chat", "hi", exit_code="non-zero", stdout_lacks=[re.compile(r"[\s\S]")])],
)


# --------------------------------------------------------------------------- limitations


# function: it opens a second session in the same agent process.
def test_two_sessions_in_one_process_share_the_cursor(instance: Instance) -> None:
    _scripted(instance, Script(turns=[route(), "first session's turn", route(), "second's turn"]))
    with open_acp(instance) as acp:
        one = acp.session_id
        two = acp.new_session()
        first = acp.prompt("hi", session_id=one)
        second = acp.prompt("hi", session_id=two)

    assert first.text == "first session's turn", first.describe()
    assert second.text == "second's turn", second.describe()


def _failed_call(turn: PromptTurn) -> dict[str, object]:
    calls = list(turn.tool_calls.values())
    return {
        "statuses": [call.get("status") for call in calls],
        "says not found": any("tool no_such_tool not found" in json.dumps(c) for c in calls),
        "the reply ends with": turn.text[-len("served anyway") :],
    }


A_DIFFERENT_BRANCH = Case(
    name="a different branch still gets the next turn",
    script=Script(
        turns=[
            route(),
            Turn(text="Trying. ", tool_calls=[ToolCall("no_such_tool", {})]),
            "served anyway",
        ]
    ),
    steps=[
        prompt("anything"),
        acp_turn(
            "the failed call",
            _failed_call,
            expect={
                "statuses": ["failed"],
                "says not found": True,
                "the reply ends with": "served anyway",
            },
        ),
    ],
)
