"""Bad dialogs and bad cases are refused before anything spawns, naming the turn and field.

Every test here runs with process creation booby-trapped: a refusal that came
only after contenox had been started would fail the test, however good its
message. Hand-written inputs cover every check the constructors make;
hypothesis mutates valid dialogs one field at a time and checks that the
error names the turn it broke.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import (
    Case,
    CaseError,
    DialogError,
    Script,
    Step,
    ToolCall,
    Turn,
    Usage,
    defect,
    step,
)

OK = Script(turns=["done"])
RUN = step("run", "go")


@pytest.fixture(autouse=True)
def nothing_spawns(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[list[object]]:
    """Fail the test if anything tries to start a process while it runs.

    A pytester test runs pytest in a subprocess and checks instead that the
    fake contenox was never executed.
    """
    spawned: list[object] = []
    if "pytester" in request.fixturenames:
        yield spawned
        return

    def refuse(*args: object, **kwargs: object) -> None:
        spawned.append(args[0] if args else kwargs.get("args"))
        raise AssertionError(f"a process was started before the input was refused: {spawned}")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr("os.fork", refuse)
    monkeypatch.setattr("os.posix_spawn", refuse)
    yield spawned
    assert not spawned, f"processes were started: {spawned}"


def _turns(*turns: object) -> Script:
    return Script(turns=turns)


# (id, how to build the bad input, the error type, what the message must name)
BAD: list[tuple[str, Callable[[], object], type[Exception], list[str]]] = [
    ("text not a string", lambda: _turns(Turn(text=1)), DialogError, ["turns[0].text", "string"]),
    (
        "thinking not a string",
        lambda: _turns("a", Turn(thinking=3), "b"),
        DialogError,
        ["turns[1].thinking"],
    ),
    ("empty turn", lambda: _turns("a", Turn(), "b"), DialogError, ["turns[1] is empty"]),
    (
        "empty finish_reason",
        lambda: _turns(Turn(text="a", finish_reason="")),
        DialogError,
        ["turns[0].finish_reason", "empty"],
    ),
    (
        "tool name empty",
        lambda: _turns(Turn(tool_calls=[ToolCall(name="")]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].name"],
    ),
    (
        "tool name blank",
        lambda: _turns("a", Turn(tool_calls=[ToolCall("grep"), ToolCall("  ")]), "b"),
        DialogError,
        ["turns[1].tool_calls[1].name"],
    ),
    (
        "tool name not a string",
        lambda: _turns(Turn(tool_calls=[ToolCall(name=7)]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].name"],
    ),
    (
        "tool id empty",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", id="")]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].id"],
    ),
    (
        "arguments a number",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", arguments=42)]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments", "int"],
    ),
    (
        "arguments a list",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", arguments=["a"])]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments", "list"],
    ),
    (
        "arguments with NaN",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"n": math.nan})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments", "JSON-serialisable"],
    ),
    (
        "arguments with an object",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"p": Path(".")})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments", "JSON-serialisable"],
    ),
    (
        "tool call not a ToolCall",
        lambda: _turns(Turn(tool_calls=["grep"]), "b"),
        DialogError,
        ["turns[0].tool_calls[0] must be a ToolCall"],
    ),
    (
        "usage negative",
        lambda: _turns(Turn(text="a", usage=Usage(total_tokens=-1))),
        DialogError,
        ["turns[0].usage.total_tokens", "negative"],
    ),
    (
        "usage a bool",
        lambda: _turns("a", Turn(text="b", usage=Usage(prompt_tokens=True))),
        DialogError,
        ["turns[1].usage.prompt_tokens", "whole number"],
    ),
    (
        "usage a float",
        lambda: _turns(Turn(text="a", usage=Usage(completion_tokens=1.5))),
        DialogError,
        ["turns[0].usage.completion_tokens", "whole number"],
    ),
    (
        "usage a dict",
        lambda: _turns(Turn(text="a", usage={"total_tokens": 1})),
        DialogError,
        ["turns[0].usage must be a Usage"],
    ),
    ("turn not a Turn", lambda: _turns("a", 42), DialogError, ["turns[1] must be a Turn"]),
    (
        "ends on a tool call",
        lambda: _turns("a", Turn(tool_calls=[ToolCall("grep")])),
        DialogError,
        ["turns[1] is the last turn", "runs_past_end=True"],
    ),
    ("no turns", lambda: Script(turns=[]), DialogError, ["turns is empty"]),
    ("turns a string", lambda: Script(turns="hello"), DialogError, ["turns must be a list"]),
    (
        "model empty",
        lambda: Script(turns=["a"], model=""),
        DialogError,
        ["model must be a non-empty string"],
    ),
    (
        "context_length zero",
        lambda: Script(turns=["a"], context_length=0),
        DialogError,
        ["context_length must be at least 1"],
    ),
    (
        "max_output_tokens negative",
        lambda: Script(turns=["a"], max_output_tokens=-5),
        DialogError,
        ["max_output_tokens", "negative"],
    ),
    (
        "embed_dimensions a string",
        lambda: Script(turns=["a"], embed_dimensions="4"),
        DialogError,
        ["embed_dimensions must be a whole number"],
    ),
    (
        "unknown capability",
        lambda: Script(turns=["a"], capabilities={"telepathy": True}),
        DialogError,
        ["capabilities.telepathy is not a capability"],
    ),
    (
        "capability not a bool",
        lambda: Script(turns=["a"], capabilities={"chat": "yes"}),
        DialogError,
        ["capabilities.chat must be true or false"],
    ),
    (
        "step args one string",
        lambda: Step(args="run go"),
        CaseError,
        ["Step args must be a list", "step('run'"],
    ),
    (
        "step expectation one string",
        lambda: step("run", stdout_has="landed"),
        CaseError,
        ["Step stdout_has must be a list"],
    ),
    ("step without a command", lambda: step(), CaseError, ["a Step needs a contenox command"]),
    (
        "step timeout zero",
        lambda: step("run", timeout=0),
        CaseError,
        ["Step timeout must be positive"],
    ),
    (
        "case without a name",
        lambda: Case(name="!!!", steps=[RUN]),
        CaseError,
        ["a Case needs a name"],
    ),
    (
        "case without steps",
        lambda: Case(name="it runs", steps=[]),
        CaseError,
        ["'it runs' has no steps"],
    ),
    (
        "case step not a Step",
        lambda: Case(name="it runs", steps=[RUN, "run"]),
        CaseError,
        ["'it runs': steps[1] must be a Step"],
    ),
    (
        "case with script and backends",
        lambda: Case(name="it runs", steps=[RUN], script=OK, backends={"b": OK}),
        CaseError,
        ["'it runs': give script or backends"],
    ),
    (
        "case backend not a Script",
        lambda: Case(name="it runs", steps=[RUN], backends={"b": ["done"]}),
        DialogError,
        ["'it runs': backend 'b' needs a Script"],
    ),
    (
        "case default_backend unknown",
        lambda: Case(name="it runs", steps=[RUN], backends={"b": OK}, default_backend="c"),
        CaseError,
        ["default_backend 'c' is not one of ['b']"],
    ),
    (
        "case defect blank",
        lambda: Case(name="it runs", steps=[RUN], defect="  "),
        CaseError,
        ["'it runs': a defect needs what was observed"],
    ),
    ("defect marker blank", lambda: defect(""), CaseError, ["a defect needs what was observed"]),
]


@pytest.mark.parametrize(("build", "error", "names"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_dialog_or_case_is_refused_naming_the_turn_and_field(
    build: Callable[[], object], error: type[Exception], names: list[str]
) -> None:
    with pytest.raises(error) as raised:
        build()
    for name in names:
        assert name in str(raised.value), f"the refusal does not name {name!r}: {raised.value}"


def test_there_are_at_least_twenty_hand_written_bad_inputs() -> None:
    assert len(BAD) >= 20


# --- dialogs as JSON (Script.load, Script.from_json): the schema's turn ------

BAD_JSON: list[tuple[str, Any, str]] = [
    ("text a number", {"turns": [{"text": 1}]}, "turns[0].text"),
    ("unknown turn field", {"turns": ["a", {"text": "b", "bogus": 1}]}, "turns[1]"),
    (
        "tool name empty",
        [{"text": "a"}, {"tool_calls": [{"name": ""}]}, {"text": "b"}],
        "turns[1].tool_calls[0].name",
    ),
    (
        "usage negative",
        {"turns": [{"text": "a", "usage": {"total_tokens": -1}}]},
        "turns[0].usage.total_tokens",
    ),
    ("empty turn", {"turns": [{"text": "a"}, {}]}, "turns[1]"),
    ("turn a string", {"turns": ["x"]}, "turns[0]"),
]


@pytest.mark.parametrize(("doc", "where"), [b[1:] for b in BAD_JSON], ids=[b[0] for b in BAD_JSON])
def test_a_malformed_dialog_file_is_refused(tmp_path: Path, doc: Any, where: str) -> None:
    path = tmp_path / "dialog.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DialogError, match="does not match the dialog schema"):
        Script.load(path)


@pytest.mark.parametrize(("doc", "where"), [b[1:] for b in BAD_JSON], ids=[b[0] for b in BAD_JSON])
def test_a_malformed_dialog_file_is_refused_naming_the_turn_and_field(
    tmp_path: Path, doc: Any, where: str
) -> None:
    path = tmp_path / "dialog.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DialogError) as raised:
        Script.load(path)
    assert where in str(raised.value), str(raised.value)


def test_an_unreadable_dialog_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"turns": [', encoding="utf-8")
    for path in (broken, tmp_path / "missing.json"):
        with pytest.raises(DialogError, match=f"cannot read dialog {path}"):
            Script.load(path)


# --- generated: valid dialogs with one field of one turn broken --------------

_text = st.text(min_size=1, max_size=20)
_args = st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=3)
_call = st.builds(
    lambda name, args, id: {"name": name, "arguments": args, **({"id": id} if id else {})},
    st.sampled_from(["list_dir", "grep", "mission_report", "stat_file"]),
    _args,
    st.none() | _text,
)
_usage = st.fixed_dictionaries(
    {}, optional={k: st.integers(0, 10_000) for k in ("prompt_tokens", "total_tokens")}
)
_turn = st.fixed_dictionaries(
    {"text": _text},
    optional={"thinking": _text, "tool_calls": st.lists(_call, min_size=1, max_size=3)},
) | st.fixed_dictionaries({"tool_calls": st.lists(_call, min_size=1, max_size=3)})
# A valid dialog: any turns, closed with a plain text turn.
_dialog = st.tuples(st.lists(_turn, max_size=5), st.builds(lambda t: {"text": t}, _text)).map(
    lambda parts: [*parts[0], parts[1]]
)

# (field the error must name, how to break a turn): each makes one turn invalid
# by the schema and by the constructors alike.
_NOT_STRINGS = st.integers() | st.booleans() | st.lists(st.integers(), max_size=2)
_NOT_COUNTS = st.integers(max_value=-1) | st.floats(allow_nan=False) | st.booleans() | _text
_MUTATIONS: list[tuple[str, Callable[[dict[str, Any], Any], None], st.SearchStrategy[Any]]] = [
    ("text", lambda t, v: t.__setitem__("text", v), _NOT_STRINGS),
    ("thinking", lambda t, v: t.__setitem__("thinking", v), _NOT_STRINGS),
    ("finish_reason", lambda t, v: t.__setitem__("finish_reason", ""), st.none()),
    (
        "usage.total_tokens",
        lambda t, v: t.__setitem__("usage", {"total_tokens": v}),
        _NOT_COUNTS,
    ),
    (
        "tool_calls[0].name",
        lambda t, v: t.__setitem__("tool_calls", [{"name": v}]),
        st.sampled_from(["", " "]) | st.integers(),
    ),
    (
        "tool_calls[0].id",
        lambda t, v: t.__setitem__("tool_calls", [{"name": "grep", "id": ""}]),
        st.none(),
    ),
    (
        "tool_calls[0].arguments",
        lambda t, v: t.__setitem__("tool_calls", [{"name": "grep", "arguments": v}]),
        st.integers() | st.lists(st.integers(), max_size=2) | st.booleans(),
    ),
]


@st.composite
def _broken(draw: st.DrawFn) -> tuple[list[dict[str, Any]], int, str]:
    turns = draw(_dialog)
    index = draw(st.integers(0, len(turns) - 1))
    field, mutate, values = draw(st.sampled_from(_MUTATIONS))
    mutate(turns[index], draw(values))
    return turns, index, field


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_dialog)
def test_generated_valid_dialogs_are_accepted(turns: list[dict[str, Any]]) -> None:
    # The generator's baseline must be valid, or the mutations below prove nothing.
    Script.from_json({"turns": turns})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_broken())
def test_a_dialog_with_one_broken_field_is_refused_naming_its_turn_and_field(
    broken: tuple[list[dict[str, Any]], int, str],
) -> None:
    turns, index, field = broken
    # The schema refuses the document...
    with pytest.raises(DialogError):
        Script.from_json({"turns": turns})
    # ...and the constructors name the turn and field.
    with pytest.raises(DialogError) as raised:
        Script(turns=[Turn.from_json(t) for t in turns])
    where = f"turns[{index}].{field}"
    assert where in str(raised.value), f"expected {where!r} in: {raised.value}"


# --- end to end: a bad Case in cases/ stops collection before contenox runs --


def test_a_bad_case_module_fails_collection_and_contenox_never_runs(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran = pytester.path / "contenox-ran"
    launcher = pytester.path / "contenox"
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {ran}\necho ok\n', encoding="utf-8")
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    pytester.makepyfile(
        test_cases="""
        from harness import Case, Script, Turn, ToolCall, step

        GOOD = Case(name="a good neighbour", steps=[step("version")], snapshot=False)
        BAD = Case(
            name="a case with a nameless tool",
            script=Script(turns=[Turn(tool_calls=[ToolCall(name="")]), "done"]),
            steps=[step("run", "go")],
        )
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=120)
    assert result.ret == pytest.ExitCode.INTERRUPTED, result.stdout.str()
    result.stdout.fnmatch_lines(["*DialogError*turns[[]0[]].tool_calls[[]0[]].name*"])
    assert not ran.exists(), f"contenox ran before the bad case was refused: {ran.read_text()}"


def test_the_trap_catches_a_command_that_would_have_started(nothing_spawns: list[object]) -> None:
    # Without this, a broken trap would pass every test above silently.
    from harness import run

    with pytest.raises(AssertionError, match="a process was started"):
        run(["true"], timeout=5)
    assert nothing_spawns == [("true",)]
    nothing_spawns.clear()
