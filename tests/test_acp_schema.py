"""The ACP schema check against hand-written messages (no contenox): good ones pass,
each bad one is named by its method, its field and what is wrong with it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from harness.acp import AcpClient, AcpError
from harness.acp.schema import (
    KNOWN_VIOLATIONS,
    SCHEMA_PROTOCOL_VERSION,
    KnownViolation,
    Violation,
    check,
    known,
)
from harness.process import start

FAKE = Path(__file__).parent / "peers" / "fake_agent.py"


def update(**fields: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s-1", "update": fields},
    }


def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}


def result(value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "result": value}


def lines(violations: list[Violation]) -> list[str]:
    return [str(v) for v in violations]


GOOD: list[tuple[str, dict[str, Any], str | None]] = [
    (
        "initialize",
        result(
            {
                "protocolVersion": 1,
                "agentCapabilities": {
                    "loadSession": True,
                    "promptCapabilities": {"image": True, "audio": True, "embeddedContext": True},
                    "mcpCapabilities": {"http": True},
                    "sessionCapabilities": {"list": {}, "resume": {}, "close": {}},
                },
                "agentInfo": {"name": "agent", "title": "An agent", "version": "v1"},
                "_meta": {"anything": ["goes", 1]},
            }
        ),
        "initialize",
    ),
    ("session/new", result({"sessionId": "s-1"}), "session/new"),
    (
        "session/new with an extension config category",
        result(
            {
                "sessionId": "s-1",
                "configOptions": [
                    {
                        "id": "policy",
                        "name": "Policy",
                        "category": "_policy",
                        "type": "select",
                        "currentValue": "a",
                        "options": [{"value": "a", "name": "A"}],
                    }
                ],
            }
        ),
        "session/new",
    ),
    ("session/prompt", result({"stopReason": "end_turn"}), "session/prompt"),
    ("session/list", result({"sessions": [{"sessionId": "s-1", "cwd": "/w"}]}), "session/list"),
    (
        "an error response",
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32603, "message": "boom"}},
        "session/prompt",
    ),
    (
        "a response to a request the client never sent",
        result({"anything": 1}),
        None,
    ),
    (
        "agent_message_chunk",
        update(sessionUpdate="agent_message_chunk", content={"type": "text", "text": "hi"}),
        None,
    ),
    (
        "tool_call",
        update(
            sessionUpdate="tool_call",
            toolCallId="c-1",
            title="local_shell: ls",
            kind="execute",
            status="pending",
            rawInput={"command": "ls"},
        ),
        None,
    ),
    (
        "tool_call_update",
        update(sessionUpdate="tool_call_update", toolCallId="c-1", status="completed"),
        None,
    ),
    (
        "available_commands_update",
        update(
            sessionUpdate="available_commands_update",
            availableCommands=[{"name": "mission", "description": "fire a mission"}],
        ),
        None,
    ),
    (
        "session/request_permission",
        request(
            "session/request_permission",
            {
                "sessionId": "s-1",
                "toolCall": {"toolCallId": "c-1", "title": "write out.txt"},
                "options": [
                    {"optionId": "y", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "n", "name": "Deny", "kind": "reject_once"},
                ],
            },
        ),
        None,
    ),
    ("fs/read_text_file", request("fs/read_text_file", {"sessionId": "s-1", "path": "/w/a"}), None),
    (
        "fs/write_text_file",
        request("fs/write_text_file", {"sessionId": "s-1", "path": "/w/a", "content": "x"}),
        None,
    ),
    (
        "terminal/create",
        request("terminal/create", {"sessionId": "s-1", "command": "echo", "args": ["hi"]}),
        None,
    ),
    ("an extension method", request("_contenox/anything", {"free": "form"}), None),
    (
        "an extension notification",
        {"jsonrpc": "2.0", "method": "_contenox/note", "params": [1, 2]},
        None,
    ),
]


@pytest.mark.parametrize(("message", "answers"), [g[1:] for g in GOOD], ids=[g[0] for g in GOOD])
def test_a_message_the_schema_allows_passes(message: dict[str, Any], answers: str | None) -> None:
    assert check(message, answers) == []


BAD: list[tuple[str, dict[str, Any], str | None, list[str]]] = [
    (
        "an unknown content type",
        update(sessionUpdate="agent_message_chunk", content={"type": "foo"}),
        None,
        [
            'ACP schema: session/update params.update.content.type: "foo" is not one of '
            "'text', 'image', 'audio', 'resource_link', 'resource'"
        ],
    ),
    (
        "an unknown update kind",
        update(sessionUpdate="progress"),
        None,
        [
            'ACP schema: session/update params.update.sessionUpdate: "progress" is not one of '
            "'user_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'tool_call', "
            "'tool_call_update', 'plan', 'plan_update', 'plan_removed', "
            "'available_commands_update', 'current_mode_update', 'config_option_update', "
            "'session_info_update', 'usage_update'"
        ],
    ),
    (
        "no update kind",
        update(content={"type": "text", "text": "hi"}),
        None,
        ["ACP schema: session/update params.update.sessionUpdate: required field is missing"],
    ),
    (
        "no session id",
        {"jsonrpc": "2.0", "method": "session/update", "params": {"update": {}}},
        None,
        [
            "ACP schema: session/update params.sessionId: required field is missing",
            "ACP schema: session/update params.update.sessionUpdate: required field is missing",
        ],
    ),
    (
        "an unknown tool call status",
        update(sessionUpdate="tool_call", toolCallId="c", title="t", status="running"),
        None,
        [
            'ACP schema: session/update params.update.status: "running" is not one of '
            "'pending', 'in_progress', 'completed' or 'failed'"
        ],
    ),
    (
        # The package would salvage this field to None; the sender still broke it.
        "a field the package salvages",
        update(
            sessionUpdate="agent_message_chunk",
            content={"type": "text", "text": "hi"},
            messageId=42,
        ),
        None,
        [
            "ACP schema: session/update params.update.messageId: "
            "Input should be a valid string (got 42)"
        ],
    ),
    (
        # The package would drop the bad item and keep the list.
        "an item the package drops from a list",
        update(
            sessionUpdate="available_commands_update",
            availableCommands=[{"name": "ok", "description": "fine"}, {"name": 3}],
        ),
        None,
        [
            "ACP schema: session/update params.update.availableCommands[1].name: "
            "Input should be a valid string (got 3)",
            "ACP schema: session/update params.update.availableCommands[1].description: "
            "required field is missing",
        ],
    ),
    (
        "a protocol version that is a string",
        result({"protocolVersion": "1"}),
        "initialize",
        [
            "ACP schema: initialize response result.protocolVersion: "
            'Input should be a valid integer (got "1")'
        ],
    ),
    (
        "an unknown stop reason",
        result({"stopReason": "done"}),
        "session/prompt",
        [
            'ACP schema: session/prompt response result.stopReason: "done" is not one of '
            "'end_turn', 'max_tokens', 'max_turn_requests', 'refusal' or 'cancelled'"
        ],
    ),
    (
        "a session/new without a session id",
        result({}),
        "session/new",
        ["ACP schema: session/new response result.sessionId: required field is missing"],
    ),
    (
        "a config category that is neither the schema's nor an extension's",
        result(
            {
                "sessionId": "s",
                "configOptions": [
                    {
                        "id": "x",
                        "name": "X",
                        "category": "context",
                        "type": "select",
                        "currentValue": "a",
                        "options": [{"value": "a", "name": "A"}],
                    }
                ],
            }
        ),
        "session/new",
        [
            'ACP schema: session/new response result.configOptions[0].category: "context" is '
            "not one of 'mode', 'model', 'model_config', 'thought_level', nor an extension "
            "value (one starting with '_'); unknown values without '_' are reserved for future "
            "ACP variants"
        ],
    ),
    (
        "an error code that is not a number",
        {"jsonrpc": "2.0", "id": 1, "error": {"code": "E1", "message": "m"}},
        "session/new",
        [
            'ACP schema: session/new response error.code: "E1" is not one of -32700, -32600, '
            "-32601, -32602, -32603, -32800, -32000, -32002 / "
            'Input should be a valid integer (got "E1")'
        ],
    ),
    (
        "a response with both result and error",
        {"jsonrpc": "2.0", "id": 1, "result": {}, "error": {"code": 1, "message": "m"}},
        "session/new",
        [
            "ACP schema: session/new response (message): a response carries exactly one of result, error"
        ],
    ),
    (
        "a response id that is an object",
        {"jsonrpc": "2.0", "id": {"n": 1}, "result": {}},
        None,
        ['ACP schema: response id: {"n": 1} is not a string or integer'],
    ),
    (
        "a permission option kind the schema lacks",
        request(
            "session/request_permission",
            {
                "sessionId": "s",
                "toolCall": {"toolCallId": "c"},
                "options": [{"optionId": "a", "name": "Allow", "kind": "allow_sometimes"}],
            },
        ),
        None,
        [
            "ACP schema: session/request_permission params.options[0].kind: "
            "\"allow_sometimes\" is not one of 'allow_once', 'allow_always', 'reject_once' or "
            "'reject_always'"
        ],
    ),
    (
        "a write without content",
        request("fs/write_text_file", {"sessionId": "s", "path": "/w/a"}),
        None,
        ["ACP schema: fs/write_text_file params.content: required field is missing"],
    ),
    (
        "a client method the schema lacks",
        request("fs/delete", {"path": "/w/a"}),
        None,
        [
            "ACP schema: fs/delete method: not a client request of the ACP schema "
            "(schema-v1.19.0), nor an extension method (a name starting with '_')"
        ],
    ),
    (
        "a notification sent as a request",
        {"jsonrpc": "2.0", "id": 9, "method": "session/update", "params": {}},
        None,
        ["ACP schema: session/update id: sent as a request; the schema makes it a notification"],
    ),
]


@pytest.mark.parametrize(
    ("message", "answers", "expected"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_a_message_the_schema_refuses_is_named_by_method_and_field(
    message: dict[str, Any], answers: str | None, expected: list[str]
) -> None:
    assert lines(check(message, answers)) == expected


def test_the_pinned_schema_speaks_the_protocol_version_contenox_answers() -> None:
    # contenox v1.0.0 answers initialize with protocolVersion 1 (cases/test_acp_client.py).
    assert SCHEMA_PROTOCOL_VERSION == 1
    # The harness imports the package only when it checks a message; the version it
    # names is the pinned package's own.
    import acp.meta

    assert acp.meta.PROTOCOL_VERSION == SCHEMA_PROTOCOL_VERSION


def test_the_package_still_salvages_outside_the_check() -> None:
    # The strict switch is scoped to check(): acp.schema itself is unchanged for others,
    # once check() has installed it as well as before.
    import acp.schema

    assert check({"jsonrpc": "2.0", "method": "session/update", "params": {}})
    chunk = acp.schema.AgentMessageChunk.model_validate(
        {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
            "messageId": 42,
        }
    )
    assert chunk.message_id is None


def config_result(category: str) -> dict[str, Any]:
    return result(
        {
            "sessionId": "s",
            "configOptions": [
                {
                    "id": "x",
                    "name": "X",
                    "category": category,
                    "type": "select",
                    "currentValue": "a",
                    "options": [{"value": "a", "name": "A"}],
                }
            ],
        }
    )


def test_a_known_violation_covers_only_the_values_it_lists() -> None:
    listed = config_result("context")
    [violation] = check(listed, "session/new")
    entry = known(violation, listed)
    assert entry is not None and entry.case.startswith("cases/test_acp_client.py::")
    other = config_result("sandbox")
    [unlisted] = check(other, "session/new")
    assert known(unlisted, other) is None
    assert known(violation, listed, allowed=()) is None
    # The same options, answered to session/load, are the same finding.
    [loaded] = check(listed, "session/load")
    assert known(loaded, listed) is entry
    # …but not in a message the entry does not name.
    elsewhere = Violation("session/prompt response", loaded.path, loaded.problem)
    assert known(elsewhere, listed) is None


def test_every_known_violation_names_its_finding_spec_and_quarantined_case() -> None:
    for entry in KNOWN_VIOLATIONS:
        assert isinstance(entry, KnownViolation)
        assert entry.finding and entry.spec and entry.values
        assert entry.case.startswith("cases/") and "::test_" in entry.case


def test_a_malformed_message_fails_the_exchange_naming_method_and_field(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {"PATH": "/usr/bin:/bin"}
    client = AcpClient(
        start([sys.executable, str(FAKE)], env=env, cwd=work, queue_lines=True),
        workspace=work,
        env=env,
        timeout=10.0,
    )
    try:
        client.initialize()
        client.new_session()
        with pytest.raises(AcpError) as failure:
            client.prompt("malformed")
    finally:
        client.cleanup()
    message = str(failure.value)
    assert message.startswith(
        "ACP schema: session/update params.update.content.type: \"foo\" is not one of 'text'"
    )
    assert '<< {"jsonrpc": "2.0", "method": "session/update"' in message
    assert [v.path for v in client.wire.violations] == ["params.update.content.type"]
