"""Typed dialogs: what they serialise to, and every input they refuse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import (
    Capabilities,
    DialogError,
    Script,
    ToolCall,
    Turn,
    Usage,
    mission_finish,
    mission_report,
    route,
    validate_dialog,
)

# The two example dialogs of contenox-docs/development/scripted-test-backend.md,
# copied here so the harness tests run without the docs checkout.
DOC_EXAMPLE_OBJECT = {
    "model": "scripted-test",
    "context_length": 32768,
    "turns": [
        {
            "text": "Let me look at what changed.",
            "tool_calls": [{"name": "git_diff", "arguments": {"path": "."}}],
        },
        {"text": "Two files changed: README.md and main.go."},
    ],
}
DOC_EXAMPLE_ARRAY = [{"text": "hello"}, {"text": "goodbye"}]
DOC_WORKED_RUN = {
    "turns": [
        {
            "text": "Filing what I found.",
            "tool_calls": [
                {
                    "name": "mission_report",
                    "arguments": {"kind": "result", "summary": "scripted run reporting home"},
                }
            ],
        },
        {"tool_calls": [{"name": "mission_finish", "arguments": {"status": "landed"}}]},
        {"text": "Mission finished."},
    ]
}


@pytest.mark.parametrize("doc", [DOC_EXAMPLE_OBJECT, DOC_EXAMPLE_ARRAY, DOC_WORKED_RUN])
def test_the_schema_accepts_the_documented_examples(doc: object) -> None:
    validate_dialog(doc)
    Script.from_json(doc)


def test_dataclasses_read_as_the_json_does() -> None:
    script = Script(
        turns=[
            Turn(
                text="Let me look at what changed.",
                tool_calls=[ToolCall(name="git_diff", arguments={"path": "."})],
            ),
            "Two files changed: README.md and main.go.",
        ],
        model="scripted-test",
        context_length=32768,
    )
    assert script.to_json() == DOC_EXAMPLE_OBJECT


def test_every_field_round_trips() -> None:
    script = Script(
        turns=[
            Turn(
                text="t",
                thinking="why",
                tool_calls=[ToolCall(name="echo", arguments='{"broken', id="call-1")],
                finish_reason="length",
                usage=Usage(prompt_tokens=1, completion_tokens=2, total_tokens=3),
            ),
            "done",
        ],
        model="m",
        context_length=10,
        max_output_tokens=5,
        embed_dimensions=8,
        capabilities={"chat": True, "embed": False},
    )
    data = script.to_json()
    assert data["capabilities"] == {"chat": True, "embed": False}
    assert data["turns"][0]["tool_calls"][0] == {
        "id": "call-1",
        "name": "echo",
        "arguments": '{"broken',
    }
    assert Script.from_json(json.loads(script.dumps())) == script


def test_serialisation_omits_what_was_not_set() -> None:
    assert Script(turns=["hi"]).to_json() == {"turns": [{"text": "hi"}]}
    assert ToolCall(name="echo").to_json() == {"name": "echo"}


def test_dumps_is_indented_sorted_and_ends_with_a_newline() -> None:
    text = Script(turns=["hi"], model="m").dumps()
    assert text.endswith("}\n")
    assert text.index('"model"') < text.index('"turns"')
    assert "\n  " in text


def test_builders() -> None:
    assert mission_report("result", "x").to_json() == {
        "name": "mission_report",
        "arguments": {"kind": "result", "summary": "x"},
    }
    assert mission_finish("landed").arguments == {"status": "landed"}
    assert route("general") == Turn(text="general")


def test_load_reads_an_object_and_a_bare_array(tmp_path: Path) -> None:
    obj = tmp_path / "obj.json"
    obj.write_text(json.dumps(DOC_EXAMPLE_OBJECT))
    arr = tmp_path / "arr.json"
    arr.write_text(json.dumps(DOC_EXAMPLE_ARRAY))
    assert Script.load(obj).model == "scripted-test"
    assert [t.text for t in Script.load(arr).turns] == ["hello", "goodbye"]


def test_load_validates_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"turns": [{"txet": "typo"}]}))
    with pytest.raises(DialogError, match=r"bad.json does not match the dialog schema"):
        Script.load(bad)


def test_a_dialog_ending_on_a_tool_call_is_refused_with_the_reason() -> None:
    with pytest.raises(DialogError) as err:
        Script(turns=[Turn(tool_calls=[mission_finish("landed")])])
    message = str(err.value)
    assert "turns[0]" in message
    assert "chat loop asks the model again" in message
    assert "runs_past_end=True" in message


def test_a_dialog_ending_on_thinking_only_is_refused() -> None:
    with pytest.raises(DialogError, match="not plain text"):
        Script(turns=[Turn(thinking="hmm")])


def test_running_past_the_end_is_allowed_when_said_explicitly() -> None:
    script = Script(turns=[Turn(tool_calls=[mission_finish("landed")])], runs_past_end=True)
    assert script.to_json()["turns"][0]["tool_calls"][0]["name"] == "mission_finish"


@pytest.mark.parametrize(
    ("build", "where"),
    [
        (lambda: Script(turns=[]), "turns is empty"),
        (lambda: Script(turns=[Turn(), "x"]), r"turns\[0\] is empty"),
        (lambda: Script(turns=["x"], capabilities={"telepathy": True}), "capabilities.telepathy"),
        (lambda: Script(turns=["x"], capabilities={"chat": "yes"}), "capabilities.chat"),
        (
            lambda: Script(turns=[Turn(text="x", usage=Usage(prompt_tokens=-1))]),
            r"turns\[0\].usage.prompt_tokens must not be negative",
        ),
        (
            lambda: Script(turns=["a", Turn(text="x", usage=Usage(total_tokens=1.5))]),  # type: ignore[arg-type]
            r"turns\[1\].usage.total_tokens must be a whole number",
        ),
        (
            lambda: Script(turns=[Turn(text="x", usage=Usage(completion_tokens=True))]),
            r"turns\[0\].usage.completion_tokens must be a whole number",
        ),
        (
            lambda: Script(
                turns=[Turn(tool_calls=[ToolCall(name="echo", arguments={"x": object()})]), "ok"]
            ),
            r"turns\[0\].tool_calls\[0\].arguments.x holds <object object .*> \(object\), which is not JSON-serialisable",
        ),
        (
            lambda: Script(
                turns=[Turn(tool_calls=[ToolCall(name="e", arguments={"x": float("nan")})]), "k"]
            ),
            r"turns\[0\].tool_calls\[0\].arguments.x is nan, which JSON cannot hold",
        ),
        (
            lambda: Script(turns=["a", Turn(tool_calls=[ToolCall(name="")]), "b"]),
            r"turns\[1\].tool_calls\[0\].name must name a tool",
        ),
        (
            lambda: Script(turns=[Turn(tool_calls=[ToolCall(name="e", arguments=[1])]), "b"]),  # type: ignore[arg-type]
            r"turns\[0\].tool_calls\[0\].arguments must be an object or a raw JSON string",
        ),
        (lambda: Script(turns=["x"], context_length=0), "context_length must be at least 1"),
        (lambda: Script(turns=["x"], embed_dimensions=-3), "embed_dimensions must not be negative"),
        (lambda: Script(turns=[Turn(text=3)]), r"turns\[0\].text must be a string"),  # type: ignore[arg-type]
        (
            lambda: Script(turns=[Turn(text="x", finish_reason="")]),
            "finish_reason must not be empty",
        ),
        (lambda: Script(turns="hello"), "turns must be a list"),
    ],
)
def test_bad_input_raises_a_dialog_error_naming_the_turn_and_field(build, where) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(DialogError, match=where):
        build()


def test_dialog_error_is_a_value_error() -> None:
    assert issubclass(DialogError, ValueError)


def test_capabilities_accept_the_dataclass() -> None:
    script = Script(turns=["x"], capabilities=Capabilities(stream=False))
    assert script.to_json()["capabilities"] == {"stream": False}


def test_an_optional_turn_is_the_harness_s_word_not_a_dialog_field() -> None:
    script = Script(turns=["asked", Turn(text="maybe asked", optional=True)])
    assert script.to_json() == {"turns": [{"text": "asked"}, {"text": "maybe asked"}]}
    assert script.optional_turns == 1
    with pytest.raises(DialogError, match="optional but not all at the end"):
        Script(turns=[Turn(text="maybe", optional=True), "asked"])


def test_optional_from_marks_every_turn_after_an_ask_optional() -> None:
    script = Script(turns=["asking", "after the verdict", "done"])
    later = script.optional_from(1)
    assert later.optional_turns == 2
    assert later.to_json() == script.to_json(), "optional is never written into the dialog"
    assert script.optional_turns == 0, "the original is left as it was"


@pytest.mark.parametrize("index", [0, 3, -1, "1", True])
def test_optional_from_refuses_an_index_outside_the_dialog(index: object) -> None:
    with pytest.raises(DialogError, match=r"optional_from\(.*\): index must be an int from 1 to 2"):
        Script(turns=["a", "b", "c"]).optional_from(index)  # type: ignore[arg-type]
