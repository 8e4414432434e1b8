"""contenox's own provider clients, against loopback stand-ins serving a Script.

Every other case replaces the model with the scripted-test backend, inside
contenox. Here the dialog is served from outside, by a stand-in speaking the
provider's wire format (``harness/servers/providers.py``), registered the way
the page under ``integrations/providers/`` tells a user to:
``contenox backend add openai --type openai --url … --api-key-env …``. So what
runs is contenox's real OpenAI / vLLM / Ollama / Gemini / Anthropic client:
the listing it reads, the request it builds, the stream it parses, the tool
call it carries back.

Each transcript ends with every request the stand-in received (the key header
as ``[SECRET]``, the system prompt — which carries the date — as ``[system
prompt]``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import Case, Script, ToolCall, Turn, received, satisfies, step
from harness.servers.providers import Fault, Provider, ProviderStandIn

# The key the harness registers (harness/servers/providers.py KEY), as each protocol carries it.
KEY = "sk-e2e-provider-key-0000"
NOTE = "hi from the note\n"

# The tool each protocol offers for read_file: OpenAI and Anthropic take the
# name without a dot, Ollama and Gemini get the dotted one (what contenox v1.0.0 sends).
READ_FILE = {
    "openai": "local_fs_read_file",
    "vllm": "local_fs_read_file",
    "anthropic": "local_fs_read_file",
    "ollama": "local_fs.read_file",
    "gemini": "local_fs.read_file",
}


def chat_bodies(standin: ProviderStandIn) -> list[Any]:
    return [r.json() for r in standin.chat_requests()]


def first_chat(
    read: Callable[[ProviderStandIn, Any], object],
) -> Callable[[ProviderStandIn], object]:
    """A reader of the first chat request the stand-in received."""

    def reader(standin: ProviderStandIn) -> object:
        [first, *_] = standin.chat_requests()
        return read(standin, first)

    return reader


def key_header(standin: ProviderStandIn, request: Any) -> object:
    """The header the key travels in, and whether it holds the registered key."""
    for name, value in sorted(request.headers.items()):
        if KEY in value:
            return {name: value.replace(KEY, "[KEY]")}
    return "(no header carries the key)"


def model_and_user_text(standin: ProviderStandIn, request: Any) -> object:
    body = request.json()
    if standin.protocol == "gemini":
        model = request.path.split("/")[-1].split(":")[0]
        texts = [p.get("text") for c in body["contents"] if c["role"] == "user" for p in c["parts"]]
    else:
        model = body["model"]
        texts = []
        for m in body["messages"]:
            if m["role"] != "user":
                continue
            content = m["content"]
            if isinstance(content, str):
                texts.append(content)
            else:
                texts += [c.get("text") for c in content if c.get("type") == "text"]
    return {"model": model, "user": texts}


def offered(standin: ProviderStandIn, request: Any) -> object:
    from harness.servers.providers import _tool_names

    return sorted(_tool_names(request.json().get("tools")))


def tool_result_sent_back(standin: ProviderStandIn) -> object:
    """Whether the second chat request carries the tool's output (the note's text)."""
    requests = standin.chat_requests()
    if len(requests) < 2:
        return f"only {len(requests)} chat request(s)"
    return NOTE.strip() in requests[1].body.replace("\\n", "\n")


def chat_turn(protocol: str) -> Case:
    return Case(
        name=f"chat through the {protocol} client streams the stand-in's reply",
        provider=protocol,
        script=Script(turns=[Turn(text="Hello from the stand-in, in chunks.")]),
        steps=[
            step("chat", "say hello", stdout_has=["Hello from the stand-in, in chunks."]),
        ],
    )


def request_sent(protocol: str, header: object) -> Case:
    return Case(
        name=f"the {protocol} chat request carries the model, the message, the tools and the key",
        provider=protocol,
        script=Script(turns=["Noted."]),
        steps=[
            step("chat", "what is in this repo?", stdout_has=["Noted."]),
            received(
                "provider",
                "model and user message",
                first_chat(model_and_user_text),
                expect=satisfies(
                    lambda v: v["user"] == ["what is in this repo?"] and bool(v["model"]),
                    "the default model, and the user's message as typed",
                ),
            ),
            received(
                "provider",
                "tools offered",
                first_chat(offered),
                expect=satisfies(lambda names: len(names) >= 1, "at least one tool offered"),
            ),
            received("provider", "key header", first_chat(key_header), expect=header),
        ],
    )


def tool_round_trip(protocol: str) -> Case:
    return Case(
        name=f"a tool call served over {protocol} runs and its result goes back to the model",
        provider=protocol,
        files={"note.txt": NOTE},
        script=Script(
            turns=[
                Turn(
                    text="Reading it.",
                    tool_calls=[ToolCall(name=READ_FILE[protocol], arguments={"path": "note.txt"})],
                ),
                "The note says hi.",
            ]
        ),
        steps=[
            step("chat", "read note.txt and tell me", stdout_has=["The note says hi."]),
            received(
                "provider", "tool result in the next request", tool_result_sent_back, expect=True
            ),
        ],
    )


def error_path(protocol: str, fault: Fault, said: list[str], what: str) -> Case:
    return Case(
        name=f"{what} from the {protocol} endpoint fails chat naming it",
        provider=Provider(protocol, fault=fault),  # type: ignore[arg-type]
        script=Script(turns=["never served"]),
        serves_all_turns=False,
        steps=[step("chat", "say hello", exit_code="non-zero", stderr_has=said)],
    )


def model_list(protocol: str, model: str) -> Case:
    return Case(
        name=f"model list lists the model the {protocol} endpoint serves",
        provider=protocol,
        script=Script(turns=["unused"], model=model),
        serves_all_turns=False,
        steps=[step("model", "list", stdout_has=[model])],
    )


ALWAYS_401 = Fault("status", status=401, times=None)

OPENAI_CHAT = chat_turn("openai")
OPENAI_REQUEST = request_sent("openai", {"authorization": "Bearer [KEY]"})
OPENAI_TOOL = tool_round_trip("openai")
OPENAI_401 = error_path("openai", ALWAYS_401, ["401", "invalid_api_key"], "a 401")
OPENAI_CUT = error_path(
    "openai", Fault("cut", after=2, times=None), ["unexpected EOF"], "a stream cut mid-turn"
)
OPENAI_MALFORMED = error_path(
    "openai", Fault("malformed", after=2, times=None), ["{not json"], "a malformed chunk"
)
OPENAI_MODELS = model_list("openai", "gpt-e2e-listed")

VLLM_CHAT = chat_turn("vllm")
VLLM_REQUEST = request_sent("vllm", "(no header carries the key)")
VLLM_TOOL = tool_round_trip("vllm")
VLLM_500 = error_path("vllm", Fault("status", status=500, times=None), ["500"], "a 500")

OLLAMA_CHAT = chat_turn("ollama")
OLLAMA_REQUEST = request_sent("ollama", "(no header carries the key)")
OLLAMA_TOOL = tool_round_trip("ollama")
OLLAMA_429 = error_path("ollama", Fault("status", status=429, times=None), ["429"], "a 429")
OLLAMA_MODELS = model_list("ollama", "qwen-e2e-listed:8b")

GEMINI_CHAT = chat_turn("gemini")
GEMINI_REQUEST = request_sent("gemini", {"x-goog-api-key": "[KEY]"})
GEMINI_TOOL = tool_round_trip("gemini")
GEMINI_401 = error_path("gemini", ALWAYS_401, ["401"], "a 401")
GEMINI_MODELS = model_list("gemini", "gemini-e2e-listed")

ANTHROPIC_CHAT = chat_turn("anthropic")
ANTHROPIC_REQUEST = request_sent("anthropic", {"x-api-key": "[KEY]"})
ANTHROPIC_TOOL = tool_round_trip("anthropic")
ANTHROPIC_401 = error_path("anthropic", ALWAYS_401, ["401"], "a 401")
ANTHROPIC_MODELS = model_list("anthropic", "claude-e2e-listed")
