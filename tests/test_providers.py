"""The provider stand-ins, driven by a plain HTTP client of each protocol (no contenox).

Each serves a Script in its wire format — streamed (SSE or NDJSON, chunked), a
tool call with its id and arguments, finish reason and usage — records what it
was sent with the key as ``[SECRET]``, takes a fault, and refuses a
non-loopback bind.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from harness.dialog import Script, ToolCall, Turn, Usage
from harness.servers import NotLoopback, eventstream
from harness.servers.providers import (
    PROTOCOLS,
    VERTEX_TOKEN,
    Fault,
    Provider,
    ProviderError,
    ProviderRequest,
    ProviderStandIn,
    as_provider,
    chunks,
    sent,
    service_account_json,
    start_provider,
)

SCRIPT = Script(
    turns=[
        Turn(
            text="Let me look at it.",
            thinking="The user wants the file.",
            tool_calls=[ToolCall(name="read_file", arguments={"path": "a.txt"}, id="call_7")],
            usage=Usage(prompt_tokens=11, completion_tokens=3, total_tokens=14),
        ),
        "It says hi.",
    ]
)
KEY = "sk-test-key"


@pytest.fixture
def standin(request: pytest.FixtureRequest) -> Iterator[ProviderStandIn]:
    protocol, fault = request.param if isinstance(request.param, tuple) else (request.param, None)
    server = start_provider(protocol, SCRIPT, fault=fault)
    yield server
    server.stop()


def _chat(standin: ProviderStandIn, *, stream: bool = True) -> tuple[httpx.Response, list[Any]]:
    """One chat request as that protocol's client makes it; the decoded stream events."""
    p, url = standin.protocol, standin.url
    body: dict[str, Any] = {"model": standin.model, "stream": stream}
    headers = {"authorization": f"Bearer {KEY}"}
    if p in ("openai", "vllm"):
        path = "/v1/chat/completions"
        body["messages"] = [{"role": "user", "content": "hi"}]
    elif p == "ollama":
        path = "/api/chat"
        body["messages"] = [{"role": "user", "content": "hi"}]
    elif p in ("gemini", "vertex"):
        verb = "streamGenerateContent?alt=sse" if stream else "generateContent"
        path = f"/v1beta/models/{standin.model}:{verb}"
        if p == "vertex":
            path = f"{standin.base_url.removeprefix(url)}/publishers/google/models/{path[15:]}"
        body = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
        headers = {"x-goog-api-key": KEY} if p == "gemini" else headers
    elif p == "bedrock":
        path = f"/model/{standin.model}/{'converse-stream' if stream else 'converse'}"
        body = {"messages": [{"role": "user", "content": [{"text": "hi"}]}]}
    else:
        path = "/v1/messages"
        body["messages"] = [{"role": "user", "content": "hi"}]
        body["max_tokens"] = 100
        headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
    events: list[Any] = []
    with (
        httpx.Client(timeout=10) as client,
        client.stream("POST", url + path, json=body, headers=headers) as response,
    ):
        if response.status_code != 200 or not stream:
            response.read()
            return response, [response.json()]
        if p == "bedrock":
            # AWS event-stream frames; the body ends with its last frame (a known length).
            assert response.headers["content-type"] == "application/vnd.amazon.eventstream"
            raw = b"".join(response.iter_bytes())
            for headers_, payload in eventstream.decode(raw):
                events.append((headers_[":event-type"], json.loads(payload)))
            return response, events
        assert response.headers.get("transfer-encoding") == "chunked"
        for line in response.iter_lines():
            if p == "ollama":
                if line:
                    events.append(json.loads(line))
            elif line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[len("data: ") :]))
            elif line == "data: [DONE]":
                events.append("[DONE]")
    return response, events


def _decoded(protocol: str, events: list[Any]) -> dict[str, Any]:
    """Text, thinking, tool calls, finish reason and usage, read back from a stream."""
    text, thinking, calls, finish, usage = "", "", [], None, None
    if protocol in ("openai", "vllm"):
        assert events[-1] == "[DONE]"
        args: dict[int, str] = {}
        for e in events[:-1]:
            usage = e.get("usage") or usage
            for choice in e["choices"]:
                d = choice["delta"]
                text += d.get("content") or ""
                thinking += d.get("reasoning_content") or ""
                for c in d.get("tool_calls", []):
                    if "id" in c:
                        calls.append({"id": c["id"], "name": c["function"]["name"]})
                    args[c["index"]] = args.get(c["index"], "") + c["function"]["arguments"]
                finish = choice["finish_reason"] or finish
        for n, call in enumerate(calls):
            call["arguments"] = json.loads(args[n])
        return {
            "text": text,
            "thinking": thinking,
            "calls": calls,
            "finish": finish,
            "usage": usage,
        }
    if protocol == "ollama":
        for e in events:
            m = e["message"]
            text += m.get("content", "")
            thinking += m.get("thinking", "")
            for c in m.get("tool_calls", []):
                f = c["function"]
                calls.append({"id": c["id"], "name": f["name"], "arguments": f["arguments"]})
        last = events[-1]
        assert last["done"] is True and all(not e["done"] for e in events[:-1])
        usage = (last["prompt_eval_count"], last["eval_count"])
        return {
            "text": text,
            "thinking": thinking,
            "calls": calls,
            "finish": last["done_reason"],
            "usage": usage,
        }
    if protocol == "bedrock":
        assert events[0][0] == "messageStart" and events[-1][0] == "metadata"
        inputs: dict[int, str] = {}
        for kind, e in events:
            if kind == "contentBlockStart":
                use = e["start"]["toolUse"]
                calls.append(
                    {"id": use["toolUseId"], "name": use["name"], "index": e["contentBlockIndex"]}
                )
            elif kind == "contentBlockDelta":
                d = e["delta"]
                text += d.get("text", "")
                thinking += d.get("reasoningContent", {}).get("text", "")
                if "toolUse" in d:
                    at = e["contentBlockIndex"]
                    inputs[at] = inputs.get(at, "") + d["toolUse"]["input"]
            elif kind == "messageStop":
                finish = e["stopReason"]
            elif kind == "metadata":
                usage = e["usage"]
        for call in calls:
            call["arguments"] = json.loads(inputs[call.pop("index")])
        return {
            "text": text,
            "thinking": thinking,
            "calls": calls,
            "finish": finish,
            "usage": usage,
        }
    if protocol in ("gemini", "vertex"):
        for e in events:
            cand = e["candidates"][0]
            for part in cand["content"]["parts"]:
                if "functionCall" in part:
                    f = part["functionCall"]
                    calls.append({"id": f["id"], "name": f["name"], "arguments": f["args"]})
                elif part.get("thought"):
                    thinking += part["text"]
                else:
                    text += part.get("text", "")
            finish = cand.get("finishReason", finish)
            usage = e.get("usageMetadata", usage)
        return {
            "text": text,
            "thinking": thinking,
            "calls": calls,
            "finish": finish,
            "usage": usage,
        }
    partial: dict[int, str] = {}
    for e in events:
        if e["type"] == "content_block_start" and e["content_block"]["type"] == "tool_use":
            b = e["content_block"]
            calls.append({"id": b["id"], "name": b["name"], "index": e["index"]})
        elif e["type"] == "content_block_delta":
            d = e["delta"]
            text += d.get("text", "")
            thinking += d.get("thinking", "")
            if d["type"] == "input_json_delta":
                partial[e["index"]] = partial.get(e["index"], "") + d["partial_json"]
        elif e["type"] == "message_delta":
            finish, usage = e["delta"]["stop_reason"], e["usage"]
    assert events[0]["type"] == "message_start" and events[-1]["type"] == "message_stop"
    for call in calls:
        call["arguments"] = json.loads(partial[call.pop("index")])
    return {"text": text, "thinking": thinking, "calls": calls, "finish": finish, "usage": usage}


FINISH = {
    "openai": "tool_calls",
    "vllm": "tool_calls",
    "ollama": "stop",
    "gemini": "STOP",
    "anthropic": "tool_use",
    "vertex": "STOP",
    "bedrock": "tool_use",
}
USAGE = {
    "openai": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    "vllm": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    "ollama": (11, 3),
    "gemini": {"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 14},
    "anthropic": {"output_tokens": 3},
    "vertex": {"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 14},
    "bedrock": {"inputTokens": 11, "outputTokens": 3, "totalTokens": 14},
}


@pytest.mark.parametrize("standin", PROTOCOLS, indirect=True)
def test_a_stand_in_streams_a_turn_with_thinking_and_a_tool_call(standin: ProviderStandIn) -> None:
    response, events = _chat(standin)
    assert response.status_code == 200
    assert len(events) > 3, "the turn arrives in several chunks"
    got = _decoded(standin.protocol, events)
    assert got["text"] == "Let me look at it."
    assert got["thinking"] == "The user wants the file."
    assert got["calls"] == [{"id": "call_7", "name": "read_file", "arguments": {"path": "a.txt"}}]
    assert got["finish"] == FINISH[standin.protocol]
    assert got["usage"] == USAGE[standin.protocol]
    # The next request gets the next turn; then the script is done.
    _, events = _chat(standin)
    assert _decoded(standin.protocol, events)["text"] == "It says hi."
    assert standin.served == 2 and standin.problem() is None


@pytest.mark.parametrize("standin", PROTOCOLS, indirect=True)
def test_a_stand_in_records_each_request_with_its_key_shown_as_secret(
    standin: ProviderStandIn,
) -> None:
    _chat(standin)
    [request] = standin.chat_requests()
    assert request.turn == 0
    shown = json.dumps(request.shown())
    assert KEY not in shown and "[SECRET]" in shown
    assert KEY in json.dumps(dict(request.headers)), "the raw record keeps what was sent"
    assert KEY not in json.dumps(sent(standin))


@pytest.mark.parametrize("standin", PROTOCOLS, indirect=True)
def test_a_stand_in_serves_a_whole_turn_when_not_streaming(standin: ProviderStandIn) -> None:
    response, [body] = _chat(standin, stream=False)
    assert response.status_code == 200
    assert "Let me look at it." in json.dumps(body) and "call_7" in json.dumps(body)


@pytest.mark.parametrize("standin", PROTOCOLS, indirect=True)
def test_a_stand_in_lists_its_model(standin: ProviderStandIn) -> None:
    p, url = standin.protocol, standin.url
    if p == "ollama":
        tags = httpx.get(f"{url}/api/tags").json()
        assert [m["name"] for m in tags["models"]] == [standin.model]
        show = httpx.post(f"{url}/api/show", json={"model": standin.model}).json()
        assert "tools" in show["capabilities"]
        assert httpx.post(f"{url}/api/show", json={"model": "nope"}).status_code == 404
    elif p == "vertex":
        listed = httpx.get(f"{url}/v1beta1/publishers/google/models").json()
        names = [m["name"] for m in listed["publisherModels"]]
        assert names == [f"publishers/google/models/{standin.model}"]
    elif p == "bedrock":
        listed = httpx.get(f"{url}/foundation-models").json()
        assert [m["modelId"] for m in listed["modelSummaries"]] == [standin.model]
        profiles = httpx.get(f"{url}/inference-profiles").json()
        assert profiles == {"inferenceProfileSummaries": []}
    elif p == "gemini":
        listed = httpx.get(f"{url}/v1beta/models").json()
        assert [m["name"] for m in listed["models"]] == [f"models/{standin.model}"]
        assert httpx.get(f"{url}/v1beta/models/{standin.model}").status_code == 200
    else:
        listed = httpx.get(f"{url}/v1/models").json()
        assert [m["id"] for m in listed["data"]] == [standin.model]
    assert standin.chat_requests() == [] and standin.served == 0


@pytest.mark.parametrize(
    "standin",
    [(p, Fault("status", status=s)) for p in PROTOCOLS for s in (401, 429, 500)],
    indirect=True,
)
def test_a_status_fault_answers_the_protocols_error_and_keeps_the_turn(
    standin: ProviderStandIn,
) -> None:
    assert standin.fault is not None
    response, [body] = _chat(standin)
    assert response.status_code == standin.fault.status
    assert "e2e stand-in" in json.dumps(body)
    if standin.fault.status == 429:
        assert response.headers["retry-after"] == "0"
    # The faulted request did not consume the turn: the next one gets it.
    _, events = _chat(standin)
    assert _decoded(standin.protocol, events)["text"] == "Let me look at it."
    assert [r.fault for r in standin.chat_requests()] == ["status", None]


@pytest.mark.parametrize("standin", [(p, Fault("cut", after=2)) for p in PROTOCOLS], indirect=True)
def test_a_cut_fault_drops_the_stream_mid_turn(standin: ProviderStandIn) -> None:
    with pytest.raises(httpx.RemoteProtocolError):
        _chat(standin)
    assert standin.served == 0, "a cut turn is served again"


@pytest.mark.parametrize(
    "standin", [(p, Fault("malformed", after=1)) for p in PROTOCOLS], indirect=True
)
def test_a_malformed_fault_sends_a_chunk_that_is_not_json(standin: ProviderStandIn) -> None:
    with pytest.raises(json.JSONDecodeError):
        _chat(standin)


@pytest.mark.parametrize("standin", [("openai", Fault("slow", delay=0.5))], indirect=True)
def test_a_slow_fault_holds_the_first_byte(standin: ProviderStandIn) -> None:
    started = time.monotonic()
    _, events = _chat(standin)
    assert time.monotonic() - started >= 0.5
    assert _decoded("openai", events)["text"] == "Let me look at it."


@pytest.mark.parametrize("standin", ["openai"], indirect=True)
def test_a_request_past_the_end_is_an_error_and_a_problem(standin: ProviderStandIn) -> None:
    for _ in range(2):
        _chat(standin)
    response, _ = _chat(standin)
    assert response.status_code == 500
    assert standin.exhausted == 1
    assert "ran out" in (standin.problem() or "")


def test_an_unserved_turn_is_a_problem() -> None:
    server = start_provider("ollama", SCRIPT)
    try:
        assert "never asked" in (server.problem() or "")
    finally:
        server.stop()


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "example.com"])
def test_a_stand_in_refuses_a_non_loopback_bind(host: str) -> None:
    with pytest.raises(NotLoopback):
        start_provider("openai", SCRIPT, host=host)


def test_bad_input_is_refused_before_anything_starts() -> None:
    with pytest.raises(ProviderError, match="no stand-in"):
        start_provider("azure", SCRIPT)  # type: ignore[arg-type]
    with pytest.raises(ProviderError, match="HTTP error"):
        Fault("status", status=200)
    with pytest.raises(ProviderError, match="delay"):
        Fault("slow")
    with pytest.raises(ProviderError, match=r"case 'x'.*no stand-in"):
        as_provider("azure", "x")
    assert as_provider("gemini", "x") == Provider("gemini")


def test_chunks_join_back_to_the_text() -> None:
    text = "  Two  spaces,\nand a line. "
    assert "".join(chunks(text)) == text and len(chunks(text)) > 3


@pytest.mark.parametrize(
    ("standin", "kind"),
    [
        (("bedrock", Fault("status", status=403)), "AccessDeniedException"),
        (
            ("bedrock", Fault("status", status=400, code="ValidationException")),
            "ValidationException",
        ),
        (
            ("bedrock", Fault("status", status=403, code="UnrecognizedClientException")),
            "UnrecognizedClientException",
        ),
    ],
    indirect=["standin"],
)
def test_a_bedrock_fault_names_the_aws_error_type(standin: ProviderStandIn, kind: str) -> None:
    response, [body] = _chat(standin)
    assert response.headers["x-amzn-errortype"] == kind
    assert "message" in body


@pytest.mark.parametrize(
    "standin", [("vertex", Fault("status", status=403, code="SERVICE_DISABLED"))], indirect=True
)
def test_a_vertex_fault_names_the_google_status(standin: ProviderStandIn) -> None:
    response, [body] = _chat(standin)
    assert response.status_code == 403 and body["error"]["status"] == "SERVICE_DISABLED"


@pytest.mark.parametrize("standin", ["vertex"], indirect=True)
def test_the_vertex_token_endpoint_mints_a_token_and_shows_the_assertion_as_secret(
    standin: ProviderStandIn,
) -> None:
    form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": "eyJ.x.y"}
    token = httpx.post(standin.token_uri, data=form).json()
    assert token["access_token"] == VERTEX_TOKEN and token["token_type"] == "Bearer"
    [request] = standin.requests()
    assert request.shown()["body"] == {"assertion": "[SECRET]", "grant_type": form["grant_type"]}
    assert standin.chat_requests() == []


def test_a_service_account_json_names_the_token_endpoint_and_a_real_key() -> None:
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    account = json.loads(service_account_json("http://127.0.0.1:1/token", key_id="k2"))
    assert account["type"] == "service_account" and account["private_key_id"] == "k2"
    assert account["token_uri"] == "http://127.0.0.1:1/token"
    assert load_pem_private_key(account["private_key"].encode(), None).key_size == 2048


def test_an_event_stream_frame_round_trips_and_a_flipped_byte_is_caught() -> None:
    frame = eventstream.encode_event("contentBlockDelta", {"delta": {"text": "hé"}})
    [(headers, payload)] = eventstream.decode(frame + eventstream.encode_exception("X", "m"))[:1]
    assert headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert json.loads(payload) == {"delta": {"text": "hé"}}
    broken = bytearray(frame)
    broken[-6] ^= 0xFF
    with pytest.raises(eventstream.EventStreamError, match="message CRC"):
        eventstream.decode(bytes(broken))
    with pytest.raises(eventstream.EventStreamError, match="prelude CRC"):
        eventstream.decode(b"\x00" * 16)


def test_a_vertex_token_error_refuses_every_grant_and_is_vertex_only() -> None:
    server = start_provider("vertex", SCRIPT, token_error="invalid_grant")
    try:
        response = httpx.post(server.token_uri, data={"grant_type": "x", "assertion": "y"})
        assert response.status_code == 400 and response.json()["error"] == "invalid_grant"
    finally:
        server.stop()
    with pytest.raises(ProviderError, match="token_error"):
        start_provider("openai", SCRIPT, token_error="invalid_grant")
    with pytest.raises(ProviderError, match="token_error"):
        Provider("gemini", token_error="invalid_grant")


def test_a_provider_location_is_a_vertex_location() -> None:
    assert Provider("vertex", location="europe-west4").location == "europe-west4"
    with pytest.raises(ProviderError, match="location"):
        Provider("openai", location="europe-west4")
    with pytest.raises(ProviderError, match="location"):
        Provider("vertex", location="../x")


_FINISHING = Script(
    turns=[Turn(tool_calls=[ToolCall(name="mission_finish", id="call_9")]), "Done."]
)


def _post(server: ProviderStandIn, messages: list[dict[str, Any]]) -> None:
    body = {"model": server.model, "stream": False, "messages": messages}
    httpx.post(f"{server.url}/v1/chat/completions", json=body, timeout=10).raise_for_status()


@pytest.mark.parametrize("closing_sent", [True, False])
def test_the_closing_call_after_mission_finish_reads_the_same_whether_it_was_sent(
    closing_sent: bool,
) -> None:
    server = start_provider("openai", _FINISHING)
    try:
        ask = [{"role": "user", "content": "file a note"}]
        _post(server, ask)
        if closing_sent:  # the history ends on the mission_finish result
            done = {"role": "tool", "content": "mission finished as landed", "tool_call_id": "c"}
            _post(server, [*ask, {"role": "assistant", "content": None}, done])
        shown = sent(server)
    finally:
        server.stop()
    assert [r.get("served") for r in shown] == [0, None]
    assert shown[-1] == {
        "request": "POST /v1/chat/completions",
        "closing": shown[-1]["closing"],
    }
    assert "mission_finish" in shown[-1]["closing"]


def test_a_request_the_aws_sdk_retried_says_so_in_the_listing() -> None:
    # A Bedrock listing that gained a request (seen once at -n auto) must say
    # whose retry it was: the SDK numbers its attempts in amz-sdk-request.
    def request(header: str) -> dict[str, Any]:
        return ProviderRequest(
            method="POST",
            path="/model/m/converse-stream",
            query={},
            headers={"amz-sdk-request": header},
            body="",
        ).shown()

    assert "retry" not in request("attempt=1; max=3")
    assert request("attempt=2; max=3")["retry"] == (
        "AWS SDK attempt 2 of 3: the SDK retried the request before it"
    )
    assert "amz-sdk-request" not in request("attempt=2; max=3")["headers"]
