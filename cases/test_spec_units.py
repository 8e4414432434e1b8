"""The specification pages' units no other file asserts, read line by line.

specification/index.md (a declaration's chain kept in step with the file; task ids unique),
transitions.md, examples.md, handlers.md and relay-protocol.md each link the rest of their
promises to cases elsewhere; the ones here are those no case asserted yet. What a run was
given is read from what the model was sent (`state show --raw`), what a chain is allowed to
be from `contenox vet`.
"""

from __future__ import annotations

import base64
import json

from chains import END, MODEL, UNASKED, branches, chain, ran, task

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    Turn,
    edit_dialog,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    probes,
    received,
    route,
    satisfies,
    step,
    write,
)
from harness.probes import captured_requests, system_prompts
from harness.process import start_contenox
from harness.servers.nats import CLIENT_CLOSED, CLIENT_CLOSING, serve_nats
from harness.servers.providers import ProviderStandIn
from harness.servers.relay import serve_relay


def _decl(name: str, body: str) -> str:
    """A declaration with a name, a description and ``body`` as its prompt."""
    return f"---\nname: {name}\ndescription: Checks one thing\ntools: Read\n---\n\n{body}\n"


# A mission the agent files and lands; the closing text after mission_finish is asked for
# only sometimes.
LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "checked the one thing")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _run(agent: str) -> object:
    return step("run", "--policy", "run", agent, "check it", notices_has=["finished: landed"])


def _bodies_per_run(*markers: str):
    """Which of ``markers`` each captured run's system prompts hold, sorted over the runs."""

    def read(instance: Instance) -> list[list[str]]:
        seen = []
        for rid in captured_requests(instance):
            prompts = system_prompts(instance, rid)
            seen.append(sorted(m for m in markers if any(m in p for p in prompts)))
        return sorted(seen)

    return read


AN_EDITED_DECLARATION_IS_REGENERATED = Case(
    name="an edited declaration's body is what the next run sends",
    script=LANDS,
    files={".contenox/agents/checker.md": _decl("checker", "BODY-ONE: you check.")},
    steps=[
        _run("checker"),
        write(".contenox/agents/checker.md", _decl("checker", "BODY-TWO: you check.")),
        edit_dialog(LANDS),
        _run("checker"),
    ],
    probes=[
        probe(
            "which body each run's system prompt held",
            _bodies_per_run("BODY-ONE", "BODY-TWO"),
            expect=[["BODY-ONE"], ["BODY-TWO"]],
        )
    ],
)


def _chain_of(*task_ids: str) -> str:
    """A chain of noop tasks, each going on to the next, the last to `end`."""
    tasks = [
        {
            "id": tid,
            "handler": "noop",
            "transition": {
                "branches": [
                    {
                        "operator": "default",
                        "when": "",
                        "goto": task_ids[n + 1] if n + 1 < len(task_ids) else "end",
                    }
                ]
            },
        }
        for n, tid in enumerate(task_ids)
    ]
    return json.dumps({"id": "dup", "token_limit": 8192, "tasks": tasks})


TASK_IDS_ARE_UNIQUE = Case(
    name="vet fails a chain with two tasks of one id",
    files={"twice.json": _chain_of("a", "a"), "distinct.json": _chain_of("a", "b")},
    steps=[
        step(
            "vet",
            "twice.json",
            exit_code=1,
            stdout_has=["FAIL twice.json", 'duplicate task ID "a"'],
        ),
        # The control: the same chain with its second id changed passes.
        step("vet", "distinct.json", stdout_has=["ok   distinct.json"]),
    ],
)


def _acp_shape(instance: Instance) -> dict[str, list[str]]:
    """The compiled `acp` chain's route labels, and each coding task's edges (`eval → goto`)."""
    path = instance.home / ".contenox" / ".generated" / "chain-agent-acp.json"
    tasks = json.loads(path.read_text(encoding="utf-8"))["tasks"]
    shape: dict[str, list[str]] = {}
    for t in tasks:
        if t["handler"] == "route":
            shape["route"] = sorted(b["when"] for b in t["transition"]["branches"] if b["when"])
        elif t["id"].startswith("chain-acp-coding-"):
            shape[t["id"]] = [
                f"{b['operator']} {b.get('when', '')} → {b['goto']}".replace("  ", " ")
                for b in t["transition"]["branches"]
            ]
    return shape


THE_ACP_CHAIN_IS_THE_LOOP_FULLER = Case(
    name="the acp declaration compiles to a router a coding loop and a recovery loop",
    steps=[step("agent", "list", stdout_has=["chain-acp "])],
    probes=[
        probe(
            "the compiled acp chain: route labels and the coding branch's edges",
            _acp_shape,
            expect={
                "route": ["coding", "general", "review"],
                "chain-acp-coding-agent": [
                    "edge_traversed_at_least 60 → chain-acp-coding-recovery",
                    "equals tool_call → chain-acp-coding-tools",
                    "default → end",
                ],
                "chain-acp-coding-tools": ["default → chain-acp-coding-agent"],
                "chain-acp-coding-recovery": [
                    "edge_traversed_at_least 10 → chain-acp-summarise",
                    "equals tool_call → chain-acp-coding-recovery-tools",
                    "default → end",
                ],
                "chain-acp-coding-recovery-tools": ["default → chain-acp-coding-recovery"],
            },
        )
    ],
)


# ------------------------------------------------------------ specification/handlers.md


def _chat(*args: str, **expect: object) -> object:
    """``contenox chat --chain c.json <input>``: the chain file each case below writes."""
    return step("chat", "--chain", "c.json", *args, **expect)


def _sent_to(task_id: str):
    """What the one captured run sent the model on ``task_id``'s turn, system prompts aside."""

    def read(instance: Instance) -> list[str]:
        run = probes.the_captured_run(instance)
        return [
            m.content
            for u in probes.captured_units(instance, run)
            if u.task == task_id
            for m in u.sent
            if m.role != "system"
        ]

    return read


PROMPT_TEMPLATE_OVERRIDES = Case(
    name="prompt template is sent as the prompt in place of the input",
    script=Script(turns=["templated answer"]),
    files={
        "c.json": chain(
            task(
                "ask",
                prompt_template="Answer this in one word: {{ (last .input.Messages).Content }}",
                transition=END,
            )
        )
    },
    steps=[_chat("what colour is the sky", stdout_has=["templated answer"])],
    probes=[
        probe(
            "what the ask task sent the model",
            _sent_to("ask"),
            expect=["Answer this in one word: what colour is the sky"],
        )
    ],
)

SPRIG_IN_A_TEMPLATE = Case(
    name="prompt template renders sprig's trunc and toJson",
    script=Script(turns=["rendered"]),
    files={
        "c.json": chain(
            task(
                "ask",
                prompt_template=(
                    "cut={{ (last .input.Messages).Content | trunc 5 }} "
                    "json={{ (last .input.Messages).Content | toJson }}"
                ),
                transition=END,
            )
        )
    },
    steps=[_chat('hello "world"', stdout_has=["rendered"])],
    probes=[
        probe(
            "what the ask task sent the model",
            _sent_to("ask"),
            expect=['cut=hello json="hello \\"world\\""'],
        )
    ],
)

INPUT_VAR_NAMES_THE_SOURCE = Case(
    name="input var reads the named earlier task's output instead of the preceding one",
    script=Script(turns=["the first answer", "the second answer"]),
    files={
        "c.json": chain(
            task("keep", "noop", transition=branches(("default", "", "first"))),
            task("first", transition=branches(("default", "", "second"))),
            task("second", input_var="keep", transition=END),
        )
    },
    steps=[_chat("the question", stdout_has=["the second answer"])],
    probes=[
        ran("keep: noop", "first: executed", "second: executed"),
        # `first`'s reply is not in what `second` was sent: its input is `keep`'s output.
        probe("what the second task sent the model", _sent_to("second"), expect=["the question"]),
    ],
)

INPUT_MAX_BYTES_CAPS = Case(
    name="input max bytes caps an oversized input before the task runs",
    script=Script(turns=["short enough"]),
    files={"c.json": chain(task("ask", input_max_bytes=12, transition=END))},
    steps=[_chat("abcdefghijklmnopqrstuvwxyz0123456789", stdout_has=["short enough"])],
    probes=[
        probe(
            "what the ask task sent the model",
            _sent_to("ask"),
            expect=[
                "abcdefghijkl... [truncated original_bytes=36 sha256="
                "011fc2994e39d251141540f87a69092b3f22a86767f7283de7eeedb3897bedf6]"
            ],
        )
    ],
)

# A model no backend serves, with and without a fallback list: only `models`/`providers` change.
_UNSERVED = {"model": "no-such-model", "provider": "scripted-test"}

MODELS_FALL_BACK = Case(
    name="a task whose model is unavailable falls back to its models list",
    script=Script(turns=["served by the fallback"]),
    files={
        "c.json": chain(
            task(
                "ask",
                execute_config={
                    **_UNSERVED,
                    "models": ["scripted-test"],
                    "providers": ["scripted-test"],
                },
                transition=END,
            )
        )
    },
    steps=[_chat("hi", stdout_has=["served by the fallback"])],
    probes=[ran("ask: executed")],
)

NO_MODELS_NO_FALLBACK = Case(
    name="the same task without a models list fails naming no matching model",
    script=Script(turns=[Turn(text="never served", optional=True)]),
    files={"c.json": chain(task("ask", execute_config=_UNSERVED, transition=END))},
    steps=[
        _chat("hi", exit_code="non-zero", notices_has=["task ask", "no model matched"]),
    ],
    probes=[ran("ask: ERROR")],
)

_REQUIRED_REPRODUCE = (
    'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
    "# dialog.json: one turn 'served anyway' (scripted-test-backend.md)\n"
    "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
    "contenox config set default-provider scripted-test\n"
    "contenox config set default-model scripted-test\n"
    '# c.json: {{"id":"c","token_limit":8192,"tasks":[{{"id":"t",'
    '"handler":"chat_completion","execute_config":{config},'
    '"transition":{{"branches":[{{"operator":"default","when":"",'
    '"goto":"end"}}]}}}}]}}\n'
    "contenox vet c.json            # ok   c.json\n"
    "contenox chat --chain c.json hi  # served anyway, exit 0"
)

# Second readings of the two quarantines below, by field (their titles are f-strings).
_REQUIRED_READINGS = {
    "model": (
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch"
        " home: real. Saw: scripted-test backend (one turn 'served anyway') as default "
        "provider/model; c.json: one chat_completion with execute_config "
        '{"provider":"scripted-test"} and no model. \'contenox vet c.json\' -> \'ok   '
        "c.json', exit 0; 'contenox chat --chain c.json hi' -> 'served anyway', exit 0. "
        "Same check against an ollama-protocol stub (provider ollama, default-model "
        "m1:latest): vet ok, chat exit 0, stub got POST /api/chat "
        '{"model":"m1:latest",…}, so the default model is filled in without a word. Note:'
        " specification/handlers.md:33 lists `execute_config.model` as Required: Yes. No "
        "page says an omitted model falls back to default-model: the fallbacks the docs "
        "describe are the {{var:model}} macro (guide/concepts.md:135) and "
        "`{{var:alt_model|var:model}}` (routing.md:44), both written into the field. vet "
        "claims to check 'structural defects' (reference/contenox-cli.md:283) yet passes "
        "the chain. The one weak counter-example is guide/chains/writing-a-"
        "chain.md:126-133, which shows an execute_config with models[]/providers[] and no"
        " `model` key. That is a different shape (a model list is given), not a task with"
        " no model at all. Softer than a behaviour break: a user who follows the docs is "
        "not hurt, but the field is documented as required and is not enforced."
    ),
    "provider": (
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch"
        " home: real. Saw: scripted-test default backend; c.json: one chat_completion "
        'with execute_config {"model":"scripted-test"} and no provider. vet -> \'ok   '
        "c.json'; chat -> 'served anyway', exit 0. Against the ollama stub (model "
        "m1:latest, no provider, default-provider ollama): vet ok, chat 'stub reply' exit"
        " 0, stub got POST /api/chat, so the default provider is filled in. Note: "
        "specification/handlers.md:34 lists `execute_config.provider` as Required: Yes; "
        "handlers.md:175 says the same for route. No page says an omitted provider falls "
        "back to default-provider. The only provider fallback documented is the "
        "{{var:provider}} macro (guide/concepts.md:136), written into the field. writing-"
        "a-chain.md:126-133 omits `provider` only where providers[] is given. vet and the"
        " engine both accept a task the spec calls incomplete. This is a "
        "validation/leniency gap of the same kind as C6."
    ),
}

REQUIRED_FIELDS = [
    Case(
        name=f"a chat task with no {field} is refused",
        defect=Defect(
            title=f"a chat_completion task without execute_config.{field} is accepted and runs",
            second_reading=_REQUIRED_READINGS[field],
            reproduce=_REQUIRED_REPRODUCE.format(config=json.dumps(config, separators=(",", ":"))),
            promised=f'specification/handlers.md:{line} "{quote}"',
            observed=(
                f"vet passes the chain and chat runs the task on the default {field}, exit 0"
            ),
            bears_on=(
                'specification/handlers.md:175 "| `execute_config.model` / `provider` | Yes | '
                'Model to use |"',
            ),
        ),
        script=Script(turns=[Turn(text="served anyway", optional=True)]),
        serves_all_turns=False,
        files={"c.json": chain(task("t", "chat_completion", execute_config=config))},
        steps=[
            step("vet", "c.json", exit_code="non-zero", stdout_has=["FAIL c.json"]),
            _chat("hi", exit_code="non-zero", stdout_lacks=["served anyway"]),
        ],
    )
    for field, config, line, quote in [
        (
            "model",
            {"provider": "scripted-test"},
            33,
            "| `execute_config.model` | Yes | Model name, e.g. `qwen3:8b` |",
        ),
        (
            "provider",
            {"model": "scripted-test"},
            34,
            "| `execute_config.provider` | Yes | `ollama`, `openai`, `anthropic`, `vllm`, "
            "`gemini`, `bedrock`, `vertex-google` |",
        ),
    ]
]

TOOL_NAME_NOT_VALIDATED_AT_LOAD = Case(
    name="vet passes a tools task whose tool name its provider does not serve",
    files={
        "c.json": chain(
            task(
                "direct",
                "tools",
                tools={"name": "local_fs", "tool_name": "no_such_operation"},
                transition=END,
            )
        )
    },
    steps=[step("vet", "c.json", stdout_has=["ok   c.json"])],
)

RAISE_ERROR_WITH_NO_TRANSITION = Case(
    name="raise error with no transition halts the chain with its input as the message",
    script=UNASKED,
    files={
        "c.json": chain(
            task("first", "noop", transition=branches(("default", "", "bail"))),
            task("bail", "raise_error"),
        )
    },
    steps=[
        _chat(
            "the reason it stopped",
            exit_code="non-zero",
            notices_has=["task bail", "the reason it stopped"],
        )
    ],
    probes=[ran("first: noop", "bail: ERROR")],
)


# -- image input: an editor's image block becomes the history's `images` attachment

# A 1x1 PNG.
PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
        "0000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()
SEES_IT = Script(turns=[route(), Turn(text="I see a tiny image.", optional=True)])


def _prompt_with_an_image(instance: Instance) -> dict[str, object]:
    """`session/prompt` with a text block and an image block; the JSON-RPC response."""
    with open_acp(instance, permission="allow") as acp:
        rid = acp.request_async(
            "session/prompt",
            {
                "sessionId": acp.session_id,
                "prompt": [
                    {"type": "text", "text": "what is in this picture"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                ],
            },
        )
        return dict(acp.wait_response(rid, timeout=90))


def _attachments(instance: Instance) -> list[dict[str, object]]:
    """Each chat step's user messages as sent: content, and each image's type and size."""
    seen: list[dict[str, object]] = []
    for rid in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, rid):
            history = unit.raw.get("input")
            for m in history.get("messages", []) if isinstance(history, dict) else []:
                if m.get("role") != "user":
                    continue
                images = [
                    {"mime_type": i.get("mime_type"), "same_data": i.get("data") == PNG}
                    for i in m.get("images") or []
                ]
                entry = {"task": unit.task, "content": m.get("content"), "images": images}
                if entry not in seen:
                    seen.append(entry)
    return seen


# function: an ACP prompt with an image block, which prompt() (text only) cannot send
def test_an_image_an_editor_sends_reaches_the_model_as_an_attachment_beside_the_text(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(SEES_IT)
    response = _prompt_with_an_image(instance)
    instance.recorder.probe("the prompt's response", (), response)
    assert response.get("result", {}).get("stopReason") == "end_turn", response
    attached = _attachments(instance)
    instance.recorder.probe("user messages with their attachments", (), attached)
    agent = [a for a in attached if a["task"] == "chain-acp-general-agent"]
    assert agent == [
        {
            "task": "chain-acp-general-agent",
            "content": "what is in this picture",
            "images": [{"mime_type": "image/png", "same_data": True}],
        }
    ], attached


# function: as above; the control is the case above, where only the capability differs
def test_with_the_model_s_vision_switched_off_an_image_prompt_fails_naming_the_images(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(SEES_IT)
    instance.must(
        "model", "capability", "set", "scripted-test", "scripted-test", "--vision", "false"
    )
    response = _prompt_with_an_image(instance)
    error = str(response.get("error", {}).get("message", ""))
    instance.recorder.probe("the prompt's error, from its first clause", (), error.split(" (")[0])
    assert "lacks vision capability" in error and "the request carries images" in error, response
    # Never dropped to a text-only answer: the scripted reply was not served.
    assert "result" not in response, response


# -- print: a task's `print` template is an engine event on the bus, not part of its output

PRINTING = chain(
    task(
        "first",
        "noop",
        print="PRINTED: {{ (last .input.Messages).Content }}",
        transition=END,
    )
)


# function: a NATS server is started and read beside the command
def test_a_task_s_print_template_is_emitted_as_a_print_event_and_leaves_its_output_alone(
    instance: Instance,
) -> None:
    instance.recorder.redact(CLIENT_CLOSING, CLIENT_CLOSED)
    bus = serve_nats(instance)
    instance.init()
    instance.use_script(UNASKED)
    (instance.work / "c.json").write_text(PRINTING, encoding="utf-8")
    ran_it = instance.must(
        "chat", "--chain", "c.json", "hello there", env={"CONTENOX_NATS_URL": bus.url}
    )
    messages = bus.wait_for(
        lambda ms: any('"kind":"chain_completed"' in m.data.decode() for m in ms), timeout=30
    )
    printed = [
        e.get("content")
        for e in (m.json() for m in messages if m.subject == "taskengine.events")
        if e.get("kind") == "print"
    ]
    instance.recorder.probe("print events on taskengine.events", (), printed)
    assert printed == ["PRINTED: hello there"], printed
    # The noop's output, which chat prints, is its input: the print is not in it.
    assert '"content": "hello there"' in ran_it.stdout, ran_it.describe()
    assert "PRINTED" not in ran_it.stdout, ran_it.describe()


# -- sampling settings: what an OpenAI-compatible provider is sent (a stand-in records it)

_SAMPLING_KEYS = ("temperature", "max_tokens", "max_completion_tokens", "reasoning_effort")


def _sampling_sent(standin: ProviderStandIn) -> dict[str, object]:
    """The sampling keys of the first chat request's body, those present."""
    [first, *_] = standin.chat_requests()
    body = first.json()
    return {k: body[k] for k in _SAMPLING_KEYS if k in body}


def _sampling_case(name: str, settings: dict[str, object], expect: dict[str, object]) -> Case:
    return Case(
        name=name,
        provider="openai",
        script=Script(turns=["Sampled."]),
        files={
            "c.json": chain(
                task("ask", execute_config={**MODEL, **settings}, transition=END),
                token_limit=8192,
            )
        },
        steps=[
            _chat("hi", stdout_has=["Sampled."]),
            received(
                "provider", "sampling keys the chat request carried", _sampling_sent, expect=expect
            ),
        ],
    )


SAMPLING_SENT = _sampling_case(
    "a task's temperature and max tokens are what the provider is sent",
    {"temperature": 0.5, "max_tokens": 77},
    # OpenAI's name for the output cap (0.5, exact in the float32 contenox sends).
    {"temperature": 0.5, "max_completion_tokens": 77},
)

NO_OUTPUT_CAP = _sampling_case(
    "a task with no max tokens sends no output cap and not the chain's token limit",
    {},
    {},
)


# -- route: the engine appends the allowed labels to the classifier's instruction

_CLASSIFY = "Classify the message."
ROUTER = chain(
    task(
        "classify",
        "route",
        system_instruction=_CLASSIFY,
        execute_config={**MODEL, "tools": []},
        transition=branches(
            ("equals", "billing", "billing"),
            ("equals", "shipping", "general"),
            ("default", "", "general"),
        ),
    ),
    task("billing", system_instruction="You answer billing questions.", transition=END),
    task("general", system_instruction="You answer anything else.", transition=END),
)


def _classifier_instruction(standin: ProviderStandIn) -> str:
    """The system text of the first chat request (the route step's), as the provider got it."""
    [first, *_] = standin.chat_requests()
    return "\n".join(m["content"] for m in first.json()["messages"] if m["role"] == "system")


ROUTE_LABELS_APPENDED = Case(
    name="a route task's instruction reaches the model with the allowed labels appended",
    provider="openai",
    script=Script(turns=["billing", "answered"]),
    files={"c.json": ROUTER},
    steps=[
        _chat("why was I charged twice", stdout_has=["answered"]),
        received(
            "provider",
            "the route step's system text",
            _classifier_instruction,
            expect=satisfies(
                lambda text: (
                    text.startswith(_CLASSIFY) and "billing" in text and "shipping" in text
                ),
                "the instruction as written, then both labels (neither is in the instruction)",
            ),
        ),
    ],
)


# -- think: the reasoning effort an Ollama server is sent


def _think_sent(standin: ProviderStandIn) -> object:
    [first, *_] = standin.chat_requests()
    return first.json().get("think", "(no think key)")


THINK_SENT = Case(
    name="a task's think level is what an ollama server is sent",
    provider="ollama",
    script=Script(turns=["Thought about it."]),
    files={"c.json": chain(task("ask", execute_config={**MODEL, "think": "low"}, transition=END))},
    steps=[
        # The stand-in's /api/show advertises no thinking; the override marks the model so.
        step("model", "capability", "set", "ollama", "qwen-e2e:8b", "--think", "true"),
        _chat("hi", stdout_has=["Thought about it."]),
        received("provider", "the think field of the chat request", _think_sent, expect="low"),
    ],
)


# -- shift: a second turn whose history outgrows token_limit; only `shift` differs

_FIRST = " ".join(f"alpha{i}" for i in range(50))
_SECOND = " ".join(f"beta{i}" for i in range(50))


def _users_sent(instance: Instance) -> list[list[str]]:
    """Each run's user messages as the model was sent them, by how many (runs in any order)."""
    seen = []
    for rid in captured_requests(instance):
        for unit in probes.captured_units(instance, rid):
            if unit.handler == "chat_completion":
                seen.append([m.content[:7] + "…" for m in unit.sent if m.role == "user"])
    return sorted(seen, key=len)


def _shift_case(name: str, shift: bool, *more: object, **second: object) -> Case:
    settings = {"shift": True} if shift else {}
    return Case(
        name=name,
        # The scripted backend picks a turn by the history it is sent: a shifted history
        # that lost the first reply is answered with the first turn again.
        script=Script(turns=["fits", Turn(text="fits again", optional=True)]),
        serves_all_turns=False,
        # 150 tokens hold one 50-word message and its reply, not two.
        files={
            "c.json": chain(
                task("t", execute_config={**MODEL, **settings}, transition=END), token_limit=150
            )
        },
        steps=[_chat(_FIRST, stdout_has=["fits"]), _chat(_SECOND, **second), *more],
    )


SHIFT_SLIDES = _shift_case(
    "with shift a history over the token limit drops old messages and the turn runs",
    True,
    probe(
        "the user messages each run sent the model",
        _users_sent,
        expect=[["alpha0 …"], ["beta0 b…"]],
    ),
    stdout_has=["fits"],
)

NO_SHIFT_ERRS = _shift_case(
    "the same chain without shift fails the turn for its context length",
    False,
    exit_code="non-zero",
    notices_has=["exceeds context length"],
)

ROUTE_REQUIRES_ITS_MODEL = Case(
    name="a route task with no model or provider is refused",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh"
            " scratch home: real. Saw: scripted-test default backend (one turn "
            "'billing'); c.json: route task r with execute_config {} (an equals "
            "'billing' branch and a default, both to b) plus noop b. vet -> 'ok   "
            "c.json', exit 0; chat -> the noop's pass-through JSON, exit 0. Against "
            "an ollama-protocol stub (default-provider ollama, default-model "
            "m1:latest) the route sent POST /api/chat "
            '{"model":"m1:latest","messages":[{"role":"system","content":"Respond '
            "with exactly one of the following labels and nothing else: "
            'billing"},…]}, so the classifier runs on the default model without a '
            "word. Note: specification/handlers.md:175 says route "
            "`execute_config.model` / `provider` are Required: Yes; "
            "guide/chains/routing.md:24-26 and writing-a-chain.md:154 both set them. "
            "The closest counter-page is guide/confinement/guardrails.md:179-183, "
            "which shows a route task ('moderate') with no execute_config, calling it"
            " 'the moderation gate, shipped as examples/simple-chat-with-"
            "moderation.json'. It is an elided snippet: the text around it says the "
            "task 'classifies with a cheap model' and 'You pick the classifier "
            "model', so it does not say an omitted model is allowed or falls back to "
            "the default. I rule real (an unenforced required field, like C6/C7), but"
            " a stricter reader could call guardrails.md:179 a docs disagreement."
        ),
        title="a route task without execute_config.model and provider is accepted and runs",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: one turn 'billing' (scripted-test-backend.md)\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            '# c.json: {"id":"c","token_limit":8192,"tasks":[{"id":"r","handler":"route",'
            '"execute_config":{},"transition":{"branches":[{"operator":"equals","when":"billing",'
            '"goto":"b"},{"operator":"default","when":"","goto":"b"}]}},{"id":"b","handler":"noop"}]}\n'
            "contenox vet c.json            # ok   c.json\n"
            "contenox chat --chain c.json hi  # the noop's output, exit 0: the route was served"
        ),
        promised=(
            'specification/handlers.md:175 "| `execute_config.model` / `provider` | Yes | '
            'Model to use |"'
        ),
        observed="vet passes the chain and the route is served by the default model, exit 0",
        bears_on=(
            'specification/handlers.md:33 "| `execute_config.model` | Yes | Model name, e.g. '
            '`qwen3:8b` |"',
        ),
    ),
    script=Script(turns=[Turn(text="billing", optional=True)]),
    serves_all_turns=False,
    files={
        "c.json": chain(
            task(
                "r",
                "route",
                execute_config={},
                transition=branches(("equals", "billing", "b"), ("default", "", "b")),
            ),
            task("b", "noop"),
        )
    },
    steps=[
        step("vet", "c.json", exit_code="non-zero", stdout_has=["FAIL c.json"]),
        _chat("hi", exit_code="non-zero"),
    ],
)


# ------------------------------------------------------ specification/relay-protocol.md


# function: pairs with the loopback relay and runs `contenox acp` beside it
def test_an_instance_id_holding_a_nul_byte_is_refused_and_the_relay_is_never_dialled(
    instance: Instance,
) -> None:
    # The control is test_relay.py's test_the_hello_names_the_instance_the_version_and_a_32_byte_
    # nonce: the same pairing with the id `inst-e2e` dials and says hello.
    relay = serve_relay(instance)
    instance.must("pair", relay.mint_key(instance_id="inst\x00e2e"), relay.url, env=relay.env)
    instance.init()
    instance.use_script(Script(turns=["The relay cases never prompt the model."]))
    proc = start_contenox(instance, "acp", env=relay.env, stdin=True)
    proc.wait_for_output("identifier contains a control character", timeout=60)
    proc.close_stdin()
    ended = proc.wait(timeout=30)
    refusal = [line for line in ended.stderr.splitlines() if "control character" in line]
    instance.recorder.probe("the runtime's refusal", (), refusal)
    instance.recorder.probe("connections the relay saw", (), len(relay.links()))
    assert refusal and "instance" in refusal[0], ended.describe()
    assert relay.links() == [], relay.describe()


# A `tools` task naming an operation its provider lacks fails when it is called; retried.
TOOLS_TASK_RETRIED = Case(
    name="a tools task whose tool name is unknown fails at call time and is retried",
    script=UNASKED,
    files={
        "c.json": chain(
            task(
                "direct",
                "tools",
                tools={"name": "local_fs", "tool_name": "no_such_operation"},
                retry_on_failure=2,
                transition=branches(("default", "", "end"), on_failure="rescue"),
            ),
            task("rescue", "noop"),
        )
    },
    steps=[
        # chat asks nobody about a call its policy gates: run it under one allowing all.
        write(
            "hitl-policy-open.json",
            '{"version": 1, "default_action": "allow", "rules": []}\n',
            home=True,
        ),
        step("config", "set", "hitl-policy-name", "hitl-policy-open.json"),
        _chat("go"),
    ],
    probes=[ran("direct: ERROR", "direct: ERROR", "direct: ERROR", "rescue: noop")],
)
