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
import re
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import (
    BinaryError,
    Case,
    CaseError,
    DialogError,
    Instance,
    InstanceError,
    Script,
    Step,
    ToolCall,
    Turn,
    Usage,
    await_ask,
    background,
    defect,
    edit,
    link,
    prompt,
    remove,
    resolve_binary,
    screen,
    serve,
    signal,
    step,
    wait,
    write,
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
    if "pytester" in request.fixturenames or "make_program" in request.fixturenames:
        # A pytester run checks the fake never ran; a binary check must run
        # the binary's `version` to judge it (and nothing else).
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
        "background ready on a stream that is not one",
        lambda: background("host", "serve", ready="Running", ready_stream="stdin"),
        CaseError,
        ["ready_stream", 'must be "stdout" or "stderr"'],
    ),
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
    # --- issue 12: inputs that used to pass construction and fail mid-case --
    (
        "tool_calls None",
        lambda: _turns(Turn(tool_calls=None), "b"),
        DialogError,
        ["turns[0].tool_calls must be a list of ToolCall", "None"],
    ),
    (
        "tool_calls one string",
        lambda: _turns("a", Turn(text="x", tool_calls="grep"), "b"),
        DialogError,
        ["turns[1].tool_calls must be a list"],
    ),
    (
        "arguments with mixed key types",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {1: "a", "b": 2})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments has the key 1 (int)"],
    ),
    (
        "arguments with a nested int key",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"a": {2: "x"}})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments.a has the key 2"],
    ),
    (
        "arguments nested 200 deep",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"a": _deep(200)})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments", "nested more than 64 levels"],
    ),
    (
        "arguments with a 5000-digit integer",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"n": 10**5000})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments.n", "more than 4300 digits"],
    ),
    (
        "arguments with infinity",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"n": [1, math.inf]})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments.n[1]", "JSON cannot hold"],
    ),
    (
        "arguments with a set",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"s": {1, 2}})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments.s", "set", "not JSON-serialisable"],
    ),
    (
        "text with a lone surrogate",
        lambda: _turns("a", "b\ud800c"),
        DialogError,
        ["turns[1].text is not valid text", "UTF-8"],
    ),
    (
        "thinking with a lone surrogate",
        lambda: _turns(Turn(text="a", thinking="\udfff")),
        DialogError,
        ["turns[0].thinking is not valid text"],
    ),
    (
        "tool name with a lone surrogate",
        lambda: _turns(Turn(tool_calls=[ToolCall("gr\ud800ep")]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].name is not valid text"],
    ),
    (
        "raw arguments with a lone surrogate",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", '{"a": "\ud800"}')]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments is not valid text"],
    ),
    (
        "argument key with a lone surrogate",
        lambda: _turns(Turn(tool_calls=[ToolCall("grep", {"\ud800": 1})]), "b"),
        DialogError,
        ["turns[0].tool_calls[0].arguments key", "not valid text"],
    ),
    (
        "step argument a number",
        lambda: step("mission", 5),
        CaseError,
        ["step('mission', 5)", "test_bad_input.py:", "args[1] must be a string", "'5'"],
    ),
    (
        "step argument a path",
        lambda: step("run", "--script", Path("d.json")),
        CaseError,
        ["args[2] must be a string", "PosixPath"],
    ),
    (
        "step argument with a NUL byte",
        lambda: step("a\x00b"),
        CaseError,
        ["args[0]", "NUL byte"],
    ),
    (
        "step args None",
        lambda: Step(args=None),
        CaseError,
        ["args must be a list of strings, got None"],
    ),
    (
        "step env value a number",
        lambda: step("run", env={"CONTENOX_DEFAULT_MAX_TOKENS": 5}),
        CaseError,
        ["step('run')", "env['CONTENOX_DEFAULT_MAX_TOKENS'] must be a string", "int"],
    ),
    (
        "step env value with NUL",
        lambda: step("run", env={"A": "x\x00y"}),
        CaseError,
        ["env['A'] must be a string without NUL"],
    ),
    (
        "step env name with =",
        lambda: step("run", env={"A=B": "1"}),
        CaseError,
        ["env name 'A=B'"],
    ),
    (
        "step env name a number",
        lambda: step("run", env={1: "1"}),
        CaseError,
        ["env name 1"],
    ),
    ("step env a list", lambda: step("run", env=["A=1"]), CaseError, ["env must be a mapping"]),
    (
        "step env moves HOME",
        lambda: step("init", env={"HOME": "/root"}),
        CaseError,
        ["step('init')", "env['HOME'] would move contenox's files out of the case's scratch root"],
    ),
    (
        "step env moves TMPDIR",
        lambda: step("init", env={"TMPDIR": "/tmp"}),
        CaseError,
        ["env['TMPDIR'] would move"],
    ),
    (
        "step env moves XDG_DATA_HOME",
        lambda: step("init", env={"XDG_DATA_HOME": "/root/.local/share"}),
        CaseError,
        ["env['XDG_DATA_HOME'] would move"],
    ),
    (
        "step env moves XDG_CONFIG_HOME",
        lambda: step("init", env={"XDG_CONFIG_HOME": "cfg"}),
        CaseError,
        ["env['XDG_CONFIG_HOME'] would move"],
    ),
    (
        "step expectation a number",
        lambda: step("run", stdout_has=[1]),
        CaseError,
        ["step('run')", "stdout_has[0] must be a string", "got 1"],
    ),
    (
        "step expectation None",
        lambda: step("run", notices_lacks=None),
        CaseError,
        ["notices_lacks must be a list of strings, got None"],
    ),
    (
        "step expectation a bytes needle",
        lambda: step("run", stderr_has=[b"x"]),
        CaseError,
        ["stderr_has[0] must be a string"],
    ),
    (
        "step timeout a string",
        lambda: step("run", timeout="5"),
        CaseError,
        ["step('run')", "timeout must be a number of seconds, got '5'"],
    ),
    (
        "step timeout a bool",
        lambda: step("run", timeout=True),
        CaseError,
        ["timeout must be a number of seconds, got True"],
    ),
    (
        "step timeout NaN",
        lambda: step("run", timeout=math.nan),
        CaseError,
        ["timeout must be a number of seconds, got nan"],
    ),
    (
        "step exit_code a string",
        lambda: step("run", exit_code="0"),
        CaseError,
        ["step('run')", "exit_code must be a whole number or None", "'0'"],
    ),
    (
        "step exit_code a bool",
        lambda: step("run", exit_code=False),
        CaseError,
        ["exit_code must be a whole number", "False"],
    ),
    ("step stdin a number", lambda: step("run", stdin=5), CaseError, ["stdin must be a string"]),
    (
        "step full_stderr a string",
        lambda: step("run", full_stderr="yes"),
        CaseError,
        ["full_stderr must be True or False"],
    ),
    (
        "case steps None",
        lambda: Case(name="it runs", steps=None),
        CaseError,
        ["case 'it runs'", "test_bad_input.py:", "steps must be a list of step(...), got None"],
    ),
    (
        "case steps one Step",
        lambda: Case(name="it runs", steps=RUN),
        CaseError,
        ["case 'it runs'", "steps must be a list"],
    ),
    ("case name None", lambda: Case(name=None, steps=[RUN]), CaseError, ["a Case needs a name"]),
    (
        "case file path absolute",
        lambda: Case(name="it runs", steps=[RUN], files={"/abs/path": "x"}),
        CaseError,
        ["case 'it runs'", "files['/abs/path']", "is absolute", "outside the case's scratch root"],
    ),
    (
        "case home file climbing out",
        lambda: Case(name="it runs", steps=[RUN], home_files={"../../.contenox/local.db": "x"}),
        CaseError,
        ["home_files['../../.contenox/local.db']", "climbs out of the scratch dir"],
    ),
    (
        "case file climbing out after a detour",
        lambda: Case(name="it runs", steps=[RUN], files={"a/../../b": "x"}),
        CaseError,
        ["files['a/../../b']", "climbs out"],
    ),
    (
        "case file under ~",
        lambda: Case(name="it runs", steps=[RUN], files={"~/.contenox/config.yaml": "x"}),
        CaseError,
        ["files['~/.contenox/config.yaml']", "is absolute"],
    ),
    (
        "case file path empty",
        lambda: Case(name="it runs", steps=[RUN], files={"": "x"}),
        CaseError,
        ["files['']", "non-empty string"],
    ),
    (
        "case file path a number",
        lambda: Case(name="it runs", steps=[RUN], home_files={3: "x"}),
        CaseError,
        ["home_files[3]", "non-empty string"],
    ),
    (
        "case file content bytes",
        lambda: Case(name="it runs", steps=[RUN], files={"a.bin": b"x"}),
        CaseError,
        ["files['a.bin'] must be the file's text", "b'x'"],
    ),
    (
        "case files a list",
        lambda: Case(name="it runs", steps=[RUN], files=["a.txt"]),
        CaseError,
        ["files must be a mapping"],
    ),
    (
        "case probe not a probe",
        lambda: Case(name="it runs", steps=[RUN], probes=[print]),
        CaseError,
        ["case 'it runs'", "probes[0] must be a probe(...)"],
    ),
    (
        "case redact not a regex",
        lambda: Case(name="it runs", steps=[RUN], redact={"(": "[X]"}),
        CaseError,
        ["redact['(']", "is not a regex"],
    ),
    (
        "case init a string",
        lambda: Case(name="it runs", steps=[RUN], init="no"),
        CaseError,
        ["init must be True or False"],
    ),
    (
        "case defect not text",
        lambda: Case(name="it runs", steps=[RUN], defect=404),
        CaseError,
        ["defect must say what was observed"],
    ),
    (
        "case backend name with a space",
        lambda: Case(name="it runs", steps=[RUN], backends={"my backend": OK}),
        CaseError,
        ["backends key 'my backend' must be a backend name"],
    ),
    (
        "case script a list",
        lambda: Case(name="it runs", steps=[RUN], script=["done"]),
        DialogError,
        ["backend 'scripted' needs a Script"],
    ),
    # --- issue 26: values accepted at build that failed mid-case --
    (
        "wait timeout math.nan",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), wait("r", timeout=math.nan)]
        ),
        CaseError,
        [
            "case 'it runs': steps[1] (wait)",
            "timeout must be positive seconds, a finite number",
            "nan",
        ],
    ),
    (
        "wait timeout math.inf",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), wait("r", timeout=math.inf)]
        ),
        CaseError,
        [
            "case 'it runs': steps[1] (wait)",
            "timeout must be positive seconds, a finite number",
            "inf",
        ],
    ),
    (
        "wait timeout -math.inf",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), wait("r", timeout=-math.inf)]
        ),
        CaseError,
        [
            "case 'it runs': steps[1] (wait)",
            "timeout must be positive seconds, a finite number",
            "inf",
        ],
    ),
    (
        "background timeout NaN",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go", timeout=math.nan), wait("r")]
        ),
        CaseError,
        [
            "case 'it runs': steps[0] (background)",
            "timeout must be positive seconds, a finite number, got nan",
        ],
    ),
    (
        "prompt timeout NaN",
        lambda: Case(name="it runs", steps=[RUN, prompt("hi", timeout=math.nan)]),
        CaseError,
        [
            "case 'it runs': steps[1] (prompt)",
            "timeout must be positive seconds, a finite number, got nan",
        ],
    ),
    (
        "screen timeout infinite",
        lambda: Case(name="it runs", steps=[RUN, screen("ready", timeout=math.inf)]),
        CaseError,
        [
            "case 'it runs': steps[1] (screen)",
            "timeout must be positive seconds, a finite number, got inf",
        ],
    ),
    (
        "await_ask timeout NaN",
        lambda: Case(
            name="it runs",
            steps=[background("r", "run", "go"), await_ask("ask", timeout=math.nan), wait("r")],
        ),
        CaseError,
        ["case 'it runs': steps[1] (await_ask)", "timeout"],
    ),
    (
        "step timeout infinite",
        lambda: Case(name="it runs", steps=[RUN, step("run", timeout=math.inf)]),
        CaseError,
        ["case 'it runs': steps[1] (step)", "timeout must be a number of seconds, got inf"],
    ),
    (
        "wait timeout a year",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), wait("r", timeout=365 * 86400)]
        ),
        CaseError,
        ["steps[1] (wait)", "timeout must be at most a day"],
    ),
    (
        "signal the platform does not define",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), signal("r", 9999), wait("r")]
        ),
        CaseError,
        [
            "case 'it runs': steps[1] (signal)",
            "Signal signal 9999 is no signal this platform defines",
        ],
    ),
    (
        "signal zero",
        lambda: Case(
            name="it runs", steps=[background("r", "run", "go"), signal("r", 0), wait("r")]
        ),
        CaseError,
        ["steps[1] (signal)", "0 is no signal"],
    ),
    (
        "write to '.'",
        lambda: Case(name="it runs", steps=[RUN, write(".", "x")]),
        CaseError,
        ["case 'it runs': steps[1] (write)", "Write path '.' names a directory, not a file"],
    ),
    (
        "write to a directory",
        lambda: Case(name="it runs", steps=[write("notes/", "x")]),
        CaseError,
        ["case 'it runs': steps[0] (write)", "path 'notes/' names a directory"],
    ),
    (
        "edit a directory",
        lambda: Case(name="it runs", steps=[RUN, edit("agents/.", append="x", under="contenox")]),
        CaseError,
        ["steps[1] (edit)", "Edit path 'agents/.' names a directory"],
    ),
    (
        "remove a directory",
        lambda: Case(name="it runs", steps=[RUN, remove("notes/")]),
        CaseError,
        ["steps[1] (remove)", "Remove path 'notes/' names a directory"],
    ),
    (
        "link at '.'",
        lambda: Case(name="it runs", steps=[RUN, link(".", "{home}")]),
        CaseError,
        ["steps[1] (link)", "Link path '.' names a directory"],
    ),
    (
        "files at '.'",
        lambda: Case(name="it runs", files={".": "x"}, steps=[RUN]),
        CaseError,
        ["case 'it runs'", "files '.'", "names a directory, not a file"],
    ),
    (
        "home_files at a directory",
        lambda: Case(name="it runs", home_files={"agents/": "x"}, steps=[RUN]),
        CaseError,
        ["case 'it runs'", "home_files 'agents/'", "names a directory"],
    ),
    (
        "files that are one another's directory",
        lambda: Case(name="it runs", files={"a": "x", "a/b": "y"}, steps=[RUN]),
        CaseError,
        ["case 'it runs'", "files 'a/b'", "'a' is a file and also the directory of 'a/b'"],
    ),
    (
        "files that name one file twice",
        lambda: Case(name="it runs", files={"a/b": "x", "a/./b": "y"}, steps=[RUN]),
        CaseError,
        ["files 'a/./b'", "names the same file as 'a/b'"],
    ),
    (
        "files text with a lone surrogate",
        lambda: Case(name="it runs", files={"a.txt": "caf\ud800"}, steps=[RUN]),
        CaseError,
        ["case 'it runs'", "files 'a.txt'", "text holds '\\ud800'", "lone surrogate"],
    ),
    (
        "home_files path with a lone surrogate",
        lambda: Case(name="it runs", home_files={"x\udfff.md": "x"}, steps=[RUN]),
        CaseError,
        ["home_files 'x\\udfff.md'", "path holds '\\udfff'"],
    ),
    (
        "stdin with a lone surrogate",
        lambda: Case(name="it runs", steps=[RUN, step("chat", stdin="hi \ud800")]),
        CaseError,
        [
            "case 'it runs': steps[1] (step)",
            "Step stdin holds '\\ud800' at index 3",
            "lone surrogate",
        ],
    ),
    (
        "write text with a lone surrogate",
        lambda: Case(name="it runs", steps=[RUN, write("a.txt", "\udc80")]),
        CaseError,
        ["steps[1] (write)", "Write text holds '\\udc80'"],
    ),
    (
        "argument with a lone surrogate",
        lambda: Case(name="it runs", steps=[RUN, step("run", "\ud800")]),
        CaseError,
        ["steps[1] (step)", "Step args holds '\\ud800'"],
    ),
    (
        "unknown keyword to step",
        lambda: Case(name="it runs", steps=[RUN, step("run", stdout_haz=["x"])]),
        CaseError,
        [
            "case 'it runs': steps[1] (step)",
            "step() takes no keyword 'stdout_haz'",
            "did you mean 'stdout_has'",
        ],
    ),
    (
        "unknown keyword to wait",
        lambda: Case(name="it runs", steps=[background("r", "run", "go"), wait("r", timout=5)]),
        CaseError,
        ["case 'it runs': steps[1] (wait)", "wait() takes no keyword 'timout'", "'timeout'"],
    ),
    (
        "unknown keyword to write",
        lambda: Case(name="it runs", steps=[RUN, write("a", "b", homee=True)]),
        CaseError,
        ["case 'it runs': steps[1] (write)", "write() takes no keyword 'homee'"],
    ),
    (
        "unknown keyword to edit",
        lambda: Case(name="it runs", steps=[RUN, edit("a", append="b", under_="home")]),
        CaseError,
        ["steps[1] (edit)", "edit() takes no keyword 'under_'"],
    ),
    (
        "unknown keyword to background",
        lambda: Case(name="it runs", steps=[background("r", "run", redy="x"), wait("r")]),
        CaseError,
        ["steps[0] (background)", "background() takes no keyword 'redy'", "'ready'"],
    ),
    (
        "unknown keyword to prompt",
        lambda: Case(name="it runs", steps=[RUN, prompt("hi", text_have=["x"])]),
        CaseError,
        ["steps[1] (prompt)", "prompt() takes no keyword 'text_have'"],
    ),
    (
        "unknown keyword to serve",
        lambda: Case(name="it runs", steps=[RUN, serve("rec", "mcp-http", tsl=True)]),
        CaseError,
        ["steps[1] (serve)", "serve() takes no keyword 'tsl'"],
    ),
    (
        "step index past a spread",
        lambda: Case(name="it runs", steps=[*[RUN, RUN], step("run", stdout_haz=["x"])]),
        CaseError,
        ["case 'it runs': steps[…] (step)", "stdout_haz"],
    ),
]


def _deep(levels: int) -> object:
    value: object = "bottom"
    for _ in range(levels):
        value = {"d": value}
    return value


@pytest.mark.parametrize(("build", "error", "names"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_dialog_or_case_is_refused_naming_the_turn_and_field(
    build: Callable[[], object], error: type[Exception], names: list[str]
) -> None:
    with pytest.raises(error) as raised:
        build()
    for name in names:
        assert name in str(raised.value), f"the refusal does not name {name!r}: {raised.value}"


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


# Dialog files that made Python itself fail inside Script.load, with no file name.
BAD_FILES: list[tuple[str, bytes, str]] = [
    ("invalid UTF-8", b'{"turns": [{"text": "caf\xe9"}]}', "it is not UTF-8"),
    ("a UTF-16 file", '{"turns": ["a"]}'.encode("utf-16"), "it is not UTF-8"),
    ("nested 100000 deep", b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (
        "a 5000-digit integer",
        b'{"turns": [{"text": "a", "usage": {"total_tokens": ' + b"9" * 5000 + b"}}]}",
        "digits",
    ),
    ("an empty file", b"", "Expecting value"),
    ("a bare number", b"5", "must be an object"),
    ("NaN as a count", b'{"turns": [{"text": "a", "usage": {"total_tokens": NaN}}]}', "usage"),
]


@pytest.mark.parametrize(
    ("content", "problem"), [b[1:] for b in BAD_FILES], ids=[b[0] for b in BAD_FILES]
)
def test_a_dialog_file_python_cannot_read_is_refused_naming_the_file(
    tmp_path: Path, content: bytes, problem: str
) -> None:
    path = tmp_path / "dialogs" / "broken.json"
    path.parent.mkdir()
    path.write_bytes(content)
    with pytest.raises(DialogError) as raised:
        Script.load(path)
    assert str(path) in str(raised.value) and problem in str(raised.value), str(raised.value)


def test_a_deeply_nested_document_is_refused_when_built_from_data() -> None:
    doc = {"turns": [{"text": "a", "tool_calls": [{"name": "g", "arguments": _deep(5000)}]}]}
    with pytest.raises(DialogError, match=r"inline dialog is nested too deeply|nested more than"):
        Script.from_json(doc, source="inline dialog")


# Instance inputs that used to reach the real home or a TypeError in subprocess.
BAD_INSTANCE: list[tuple[str, Callable[[Instance], object], str]] = [
    ("write an absolute path", lambda i: i.write("/tmp/x", "x"), "is absolute"),
    ("write climbing out", lambda i: i.write("../home/.contenox/x", "x"), "climbs out"),
    ("must with HOME outside", lambda i: i.must("init", env={"HOME": "/root"}), "env['HOME']"),
    (
        "contenox with XDG_STATE_HOME outside",
        lambda i: i.contenox("init", env={"XDG_STATE_HOME": "/var"}),
        "env['XDG_STATE_HOME']",
    ),
    ("run with TMPDIR relative", lambda i: i.run(["true"], env={"TMPDIR": "t"}), "env['TMPDIR']"),
    ("env value a number", lambda i: i.must("init", env={"N": 1}), "env['N'] must be a string"),
]


@pytest.mark.parametrize("call", [b[1] for b in BAD_INSTANCE], ids=[b[0] for b in BAD_INSTANCE])
def test_an_instance_refuses_what_leaves_its_root_before_running(
    tmp_path: Path, call: Callable[[Instance], object]
) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("/nonexistent/contenox"))
    problem = next(b[2] for b in BAD_INSTANCE if b[1] is call)
    with pytest.raises(InstanceError, match=re.escape(problem)):
        call(inst)


# What CONTENOX_BIN answers to `version`: it must read as contenox's and name a version.
BAD_BINARIES: list[tuple[str, str, str]] = [
    (
        "300 random bytes",
        "import os, sys\nsys.stdout.buffer.write(bytes(range(256)) + bytes(range(44)))\n",
        "does not answer `version` as contenox does",
    ),
    ("nothing at all", "", "does not answer `version` as contenox does"),
    ("a bare number", "print('v1.0.0')\n", "does not answer `version` as contenox does"),
    ("no number", "print('contenox version')\n", "does not answer `version` as contenox does"),
    (
        "another program's version",
        "print('git version 2.43.0')\n",
        "does not answer `version` as contenox does",
    ),
    (
        "a second line",
        "print('contenox version v1.0.0')\nprint('and more')\n",
        "does not answer `version` as contenox does",
    ),
    ("a failing version", "import sys\nsys.exit(3)\n", "version` failed"),
]


@pytest.mark.parametrize(
    ("source", "problem"), [b[1:] for b in BAD_BINARIES], ids=[b[0] for b in BAD_BINARIES]
)
def test_a_binary_that_does_not_answer_version_like_contenox_is_refused(
    make_program: Callable[[str, str], Path], source: str, problem: str
) -> None:
    fake = make_program("contenox", source)
    with pytest.raises(BinaryError) as raised:
        resolve_binary({"CONTENOX_BIN": str(fake)})
    assert problem in str(raised.value) and str(fake) in str(raised.value), str(raised.value)
    assert "re-record" not in str(raised.value)


def test_there_are_at_least_sixty_bad_inputs() -> None:
    count = len(BAD) + len(BAD_JSON) + len(BAD_FILES) + len(BAD_INSTANCE) + len(BAD_BINARIES)
    assert count >= 60, count


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
