"""Envelopes: which verdict a tool call gets, from which policy file, and what a bad envelope gets.

Each run case declares its own envelope in the workspace's
``.contenox/agents.toml`` (or writes a policy file by hand), fires
``contenox run --policy <it>`` with a dialog whose tool calls hit one rule,
and reads the verdict where a person sees it: the tool result recorded in
``contenox state show --raw``, the ask in ``contenox approvals list``, and
the file a call did or did not write.

Tools used: ``read_file``/``write_file`` (``local_fs``, served by ``run``
itself) and ``echo`` (``native-echo``, whose one argument is ``input``).
"""

from __future__ import annotations

import json

import pytest

from harness import (
    Case,
    Instance,
    Result,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    probes,
    route,
    start_contenox,
    step,
)

TASK = "do the task"
ECHO = ToolCall("echo", {"input": "ping from the unit"})
ECHOED = "ping from the unit"
CONTENT = "written by the unit\n"


def _write(path: str) -> ToolCall:
    return ToolCall("write_file", {"path": path, "content": CONTENT})


def _read(path: str) -> ToolCall:
    return ToolCall("read_file", {"path": path})


def _mission(*calls: ToolCall) -> Script:
    """One turn per call, then a report and a landing, closed by a text turn."""
    return Script(
        turns=[
            *(Turn(text="Working.", tool_calls=[call]) for call in calls),
            Turn(tool_calls=[mission_report("result", "the unit is done")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _declare(instance: Instance, toml: str) -> None:
    """The workspace's agents.toml: an overlay that adds envelopes to the shipped set."""
    instance.write(".contenox/agents.toml", toml)


def _policy(default: str | None, *rules: tuple[str, str, str]) -> str:
    """A hand-written policy file: ``(toolset, tool, action)`` rules, top to bottom."""
    doc: dict[str, object] = {
        "rules": [{"tools": ts, "tool": t, "action": a} for ts, t, a in rules]
    }
    if default is not None:
        doc["default_action"] = default
    return json.dumps(doc, indent=2) + "\n"


def _run(instance: Instance, policy: str, script: Script, timeout: str = "90s") -> Result:
    instance.init()
    instance.use_script(script)
    return instance.contenox("run", "--policy", policy, "--timeout", timeout, TASK, timeout=150)


def _tool_results(instance: Instance) -> list[str]:
    """Every tool result the run recorded, in order, as the model was sent it."""
    units = probes.captured_units(instance, probes.the_captured_run(instance))
    seen: list[str] = []
    for unit in units:
        for message in (*unit.input_messages, *unit.output_messages):
            if message.role == "tool" and message.content not in seen:
                seen.append(message.content)
    return seen


def _refused(text: str) -> bool:
    return "denied" in text.lower()


def _landed_without_asks(instance: Instance, result: Result) -> list[str]:
    result.assert_success()
    assert probes.approvals(instance) == [], "no call should have waited on a person"
    return _tool_results(instance)


# --------------------------------------------------------------------------- verdicts


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_allow_rule_lets_the_call_run_unattended(instance: Instance) -> None:
    # function: needs tool results from `state show --raw`
    _declare(
        instance,
        '[envelopes.reader]\ndefault_action = "deny"\nfiles.read = "allow"\n',
    )
    instance.write("notes.txt", "the notes the unit may read\n")
    results = _landed_without_asks(instance, _run(instance, "reader", _mission(_read("notes.txt"))))
    assert any("the notes the unit may read" in r for r in results), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_deny_rule_refuses_the_call_and_it_writes_nothing(instance: Instance) -> None:
    # function: needs tool results and the workspace after the run
    _declare(instance, '[envelopes.nowrite]\ndefault_action = "allow"\nfiles.write = "deny"\n')
    results = _landed_without_asks(instance, _run(instance, "nowrite", _mission(_write("out.txt"))))
    assert not (instance.work / "out.txt").exists(), "a denied write_file wrote its file"
    assert _refused(results[0]), results


def test_an_approve_rule_holds_the_call_on_an_ask_until_a_person_approves_it(
    instance: Instance,
) -> None:
    # function: needs background — the run waits while another process answers
    # The grant is written in its table form: `{ grant = "approve" }` is the
    # same document as the bare word.
    _declare(
        instance,
        '[envelopes.askwrite]\ndefault_action = "allow"\nfiles.write = { grant = "approve" }\n',
    )
    instance.init()
    instance.use_script(_mission(_write("out.txt")))
    run = start_contenox(instance, "run", "--policy", "askwrite", "--timeout", "90s", TASK)
    ask = probes.await_approval(instance, 60, kind="permission", run=run)
    assert "write_file" in ask.tool, ask
    assert not (instance.work / "out.txt").exists(), "the gated write ran before anyone answered"
    assert run.running, run.describe()

    probes.approve(instance, ask.id)

    run.wait(timeout=120).assert_success()
    assert (instance.work / "out.txt").read_text() == CONTENT
    assert probes.approvals(instance) == []


# --------------------------------------------------------------------------- default_action


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_call_no_rule_names_runs_when_default_action_is_allow(instance: Instance) -> None:
    # function: needs tool results from `state show --raw`
    _declare(instance, '[envelopes.open]\ndefault_action = "allow"\n')
    results = _landed_without_asks(instance, _run(instance, "open", _mission(ECHO)))
    assert results[0] == ECHOED, results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_axis_left_unset_falls_through_to_default_action_deny(instance: Instance) -> None:
    # function: needs tool results and the workspace after the run
    # files.write is unset: it emits no rule, so the write meets default_action
    # (deny) — not an implicit approve, which would leave the run waiting.
    _declare(instance, '[envelopes.shut]\ndefault_action = "deny"\nfiles.read = "allow"\n')
    results = _landed_without_asks(instance, _run(instance, "shut", _mission(_write("out.txt"))))
    assert not (instance.work / "out.txt").exists()
    assert _refused(results[0]), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_envelope_without_default_action_asks_about_a_call_no_rule_names(
    instance: Instance,
) -> None:
    # function: needs background — the unmatched call must wait on an ask
    _declare(instance, '[envelopes.quiet]\ndescription = "names no tool at all"\n')
    instance.init()
    instance.use_script(_mission(ECHO))
    run = start_contenox(instance, "run", "--policy", "quiet", "--timeout", "90s", TASK)
    ask = probes.await_approval(instance, 60, tool="native-echo.echo", run=run)
    probes.deny(instance, ask.id)
    run.wait(timeout=120).assert_success()
    assert _refused(_tool_results(instance)[0])


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_hand_written_policy_without_default_action_asks_about_a_call_no_rule_names(
    instance: Instance,
) -> None:
    # function: needs background — the unmatched call must wait on an ask
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-bare.json").write_text(_policy(None))
    instance.use_script(_mission(ECHO))
    run = start_contenox(instance, "run", "--policy", "bare", "--timeout", "90s", TASK)
    ask = probes.await_approval(instance, 60, tool="native-echo.echo", run=run)
    probes.approve(instance, ask.id)
    run.wait(timeout=120).assert_success()
    assert _tool_results(instance)[0] == ECHOED


# --------------------------------------------------------------------------- first match


@pytest.mark.parametrize(
    ("first", "second", "runs"),
    [("deny", "allow", False), ("allow", "deny", True)],
    ids=["deny-first", "allow-first"],
)
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_rules_are_evaluated_top_to_bottom_and_the_first_match_wins(
    instance: Instance, first: str, second: str, runs: bool
) -> None:
    # function: needs tool results from `state show --raw`
    instance.init()
    policy = _policy("approve", ("native-echo", "echo", first), ("native-echo", "echo", second))
    (instance.home / ".contenox" / "hitl-policy-order.json").write_text(policy)
    results = _landed_without_asks(instance, _run(instance, "order", _mission(ECHO)))
    assert (results[0] == ECHOED) is runs and _refused(results[0]) is not runs, results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_deny_path_carves_a_refusal_out_of_an_allow_grant(instance: Instance) -> None:
    # function: needs the workspace after the run
    _declare(
        instance,
        "[envelopes.carve]\n"
        'default_action = "deny"\n'
        "[envelopes.carve.files.write]\n"
        'grant = "allow"\n'
        'deny_paths = ["**/secret*"]\n',
    )
    script = _mission(_write("ok.txt"), _write("secret.txt"))
    results = _landed_without_asks(instance, _run(instance, "carve", script))
    assert (instance.work / "ok.txt").read_text() == CONTENT
    assert not (instance.work / "secret.txt").exists(), "deny_paths did not stop the write"
    assert _refused(results[1]) and not _refused(results[0]), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_approve_path_carves_an_ask_out_of_an_allow_grant(instance: Instance) -> None:
    # function: needs background — the carved-out read waits on an ask
    _declare(
        instance,
        "[envelopes.keys]\n"
        'default_action = "deny"\n'
        "[envelopes.keys.files.read]\n"
        'grant = "allow"\n'
        'approve_paths = ["**/*.pem"]\n',
    )
    instance.write("plain.txt", "plain text\n")
    instance.write("server.pem", "-----BEGIN KEY-----\n")
    instance.init()
    instance.use_script(_mission(_read("plain.txt"), _read("server.pem")))
    run = start_contenox(instance, "run", "--policy", "keys", "--timeout", "90s", TASK)
    ask = probes.await_approval(instance, 60, kind="permission", run=run)
    assert "read_file" in ask.tool, ask
    probes.deny(instance, ask.id)
    run.wait(timeout=120).assert_success()
    results = _tool_results(instance)
    assert "plain text" in results[0] and _refused(results[1]), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_tools_pattern_is_matched_most_specific_first_not_in_file_order(
    instance: Instance,
) -> None:
    # function: needs tool results from `state show --raw`
    _declare(
        instance,
        "[envelopes.pick]\n"
        'default_action = "deny"\n'
        "[envelopes.pick.tools]\n"
        '"native-echo.*" = "deny"\n'
        '"native-echo.echo" = "allow"\n',
    )
    results = _landed_without_asks(instance, _run(instance, "pick", _mission(ECHO)))
    assert results[0] == ECHOED, results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_child_envelope_keeps_the_parent_axes_it_does_not_set(instance: Instance) -> None:
    # function: needs tool results and the workspace after the run
    _declare(
        instance,
        "[envelopes.parent]\n"
        'default_action = "deny"\n'
        'files.read = "allow"\n'
        "[envelopes.child]\n"
        'extends = "parent"\n'
        'files.write = "allow"\n',
    )
    instance.write("notes.txt", "inherited read\n")
    script = _mission(_read("notes.txt"), _write("out.txt"))
    results = _landed_without_asks(instance, _run(instance, "child", script))
    assert "inherited read" in results[0], results
    assert (instance.work / "out.txt").read_text() == CONTENT


# ------------------------------------------------------------------ where a policy comes from

_ALLOW_ECHO = _policy("deny", ("native-echo", "echo", "allow"))
_DENY_ECHO = _policy("allow", ("native-echo", "echo", "deny"))


@defect(
    "the global copy wins over the workspace copy: with `.contenox/hitl-policy-r1.json` "
    "denying `native-echo.echo` and `~/.contenox/hitl-policy-r1.json` allowing it, `contenox "
    "run --policy r1` ran the echo (tool result 'ping…'); the workspace copy alone is honoured "
    "(it denied). Contradicts hitl.md, Policy resolution order: 'A top-level "
    "hitl-policy-<name>.json in the workspace .contenox/, then ~/.contenox/, wins if it is "
    "there' (and missions.md: 'the workspace .contenox/, then ~/.contenox/ … first match wins')"
)
def test_a_workspace_policy_file_wins_over_the_global_copy(instance: Instance) -> None:
    # function: needs tool results from `state show --raw`
    instance.init()
    instance.write(".contenox/hitl-policy-r1.json", _DENY_ECHO)
    (instance.home / ".contenox" / "hitl-policy-r1.json").write_text(_ALLOW_ECHO)
    results = _landed_without_asks(instance, _run(instance, "r1", _mission(ECHO)))
    assert _refused(results[0]), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_global_policy_file_wins_over_the_rendered_envelope_and_is_never_rewritten(
    instance: Instance,
) -> None:
    # function: needs tool results and the hand-written file after the run
    _declare(
        instance,
        '[envelopes.r2]\ndefault_action = "allow"\n[envelopes.r2.tools]\n'
        '"native-echo.echo" = "deny"\n',
    )
    instance.init()
    mine = instance.home / ".contenox" / "hitl-policy-r2.json"
    mine.write_text(_ALLOW_ECHO)
    results = _landed_without_asks(instance, _run(instance, "r2", _mission(ECHO)))
    assert results[0] == ECHOED, results
    assert mine.read_text() == _ALLOW_ECHO, "a run rewrote the hand-written copy"


@defect(
    "the global render directory wins over the workspace one: with "
    "`.contenox/.generated/hitl-policy-r3.json` denying `native-echo.echo` and "
    "`~/.contenox/.generated/hitl-policy-r3.json` allowing it (no envelope r3 declared), "
    "`contenox run --policy r3` ran the echo. Contradicts hitl.md's search path, strongest "
    "first: '.contenox/.generated/  the workspace's rendered envelopes' before "
    "'~/.contenox/.generated/  the global rendered envelopes'"
)
def test_the_workspace_render_directory_is_searched_before_the_global_one(
    instance: Instance,
) -> None:
    # function: needs tool results from `state show --raw`
    instance.init()
    instance.write(".contenox/.generated/hitl-policy-r3.json", _DENY_ECHO)
    (instance.home / ".contenox" / ".generated" / "hitl-policy-r3.json").write_text(_ALLOW_ECHO)
    results = _landed_without_asks(instance, _run(instance, "r3", _mission(ECHO)))
    assert _refused(results[0]), results


@pytest.mark.parametrize("spelling", ["rendered", "hitl-policy-rendered.json"])
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_envelope_name_and_its_file_name_resolve_to_the_same_rendered_policy(
    instance: Instance, spelling: str
) -> None:
    # function: needs tool results from `state show --raw`
    _declare(
        instance,
        '[envelopes.rendered]\ndefault_action = "allow"\n[envelopes.rendered.tools]\n'
        '"native-echo.echo" = "deny"\n',
    )
    results = _landed_without_asks(instance, _run(instance, spelling, _mission(ECHO)))
    assert _refused(results[0]), results
    render = instance.home / ".contenox" / ".generated" / "hitl-policy-rendered.json"
    workspace_render = instance.work / ".contenox" / ".generated" / "hitl-policy-rendered.json"
    rendered = next(p for p in (workspace_render, render) if p.exists())
    assert "[envelopes.rendered]" in rendered.read_text(), "the render is not stamped"


def test_editing_an_envelope_changes_the_next_run_without_an_init(instance: Instance) -> None:
    # function: needs two runs with an edit between them
    _declare(instance, '[envelopes.edit]\ndefault_action = "allow"\nfiles.write = "deny"\n')
    script = _mission(_write("out.txt"))
    _run(instance, "edit", script).assert_success()
    assert not (instance.work / "out.txt").exists()

    _declare(instance, '[envelopes.edit]\ndefault_action = "allow"\nfiles.write = "allow"\n')
    instance.contenox("run", "--policy", "edit", "--timeout", "90s", TASK, timeout=150)
    assert (instance.work / "out.txt").read_text() == CONTENT, "the edit did not reach the run"


def test_a_hitl_policy_value_with_a_path_separator_is_that_file_verbatim(
    instance: Instance,
) -> None:
    # function: needs an ACP client
    # The file denies write_file; the envelope acp runs under otherwise asks
    # about it. A permission request, or the file appearing, means the path
    # was not the policy.
    instance.init()
    instance.write("ops/locked.json", _policy("allow", ("local_fs", "write_file", "deny")))
    instance.use_script(
        Script(turns=[route(), Turn(text="Writing.", tool_calls=[_write("out.txt")]), "Done."])
    )
    with open_acp(instance, "--hitl-policy", "./ops/locked.json", permission="allow") as acp:
        turn = acp.prompt("write the file")
    assert turn.permission_requests == [], turn.describe()
    assert not (instance.work / "out.txt").exists(), turn.describe()


# ------------------------------------------------------------------ names that resolve to nothing

ACP_MISSING_PATH = Case(
    name="a hitl policy path that does not exist is an error rather than a fallback",
    steps=[
        step(
            "acp",
            "--hitl-policy",
            "./ops/missing.json",
            stdin="",
            exit_code=1,
            notices_has=["missing.json", "no such file"],
        )
    ],
)

ACP_UNKNOWN_NAME = Case(
    name="a policy name that resolves to nothing is fatal and names what it looked for and where",
    steps=[
        step(
            "acp",
            "--hitl-policy",
            "nosuch",
            stdin="",
            exit_code=1,
            notices_has=["hitl-policy-nosuch.json", ".contenox/.generated"],
        )
    ],
)

RUN_UNKNOWN_NAME = Case(
    name="run refuses a policy name that resolves to nothing naming where it looked",
    steps=[
        step(
            "run",
            "--policy",
            "nosuch",
            "do the task",
            exit_code=1,
            notices_has=["hitl-policy-nosuch.json", ".contenox/.generated"],
        )
    ],
    defect=(
        '`contenox run --policy nosuch` exits 1 with only \'hitl policy "nosuch" could not be '
        "loaded: it must name an existing policy (see `contenox config` / the .contenox policy "
        "files)' — neither the file it looked for nor where (acp names both). Contradicts "
        "hitl.md: 'Only a name that resolves to nothing at all is fatal, and it names both what "
        "it looked for and where.'"
    ),
)


# --------------------------------------------------------------------------- malformed envelopes

_MALFORMED = [
    (
        "an unknown envelope key is refused naming the known ones",
        '[envelopes.bad]\nbogus = "x"\n',
        ['unknown key "bogus"', "known keys:", "default_action"],
    ),
    (
        "a partial glob in a tools pattern is refused",
        '[envelopes.bad.tools]\n"git*" = "allow"\n',
        ['"git*"', "can never match"],
    ),
    (
        "on_timeout beside timeout never is refused naming the envelope and the axis",
        '[envelopes.bad.tools]\n"native-echo.echo" = '
        '{ grant = "approve", timeout = "never", on_timeout = "deny" }\n',
        ["[envelopes.bad]", "native-echo.echo", "never"],
    ),
    (
        "a timeout in words is refused naming the envelope the axis and the value",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "half an hour" }\n',
        ["[envelopes.bad]", "shell", '"half an hour"'],
    ),
    (
        "a timeout without a unit is refused",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "30" }\n',
        ["[envelopes.bad]", "shell", '"30"'],
    ),
    (
        "a timeout finer than whole seconds is refused",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "1500ms" }\n',
        ["[envelopes.bad]", "shell", '"1500ms"'],
    ),
    (
        "a timeout past the seven day cap is refused pointing at never",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "200h" }\n',
        ["[envelopes.bad]", '"200h"', "never"],
    ),
    (
        "a timeout word other than never forever or indefinite is refused naming the three",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "someday" }\n',
        ['"someday"', "never", "forever", "indefinite"],
    ),
    (
        "on_timeout allow is refused",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "30m", on_timeout = "allow" }\n',
        ["[envelopes.bad]", "on_timeout", '"allow"'],
    ),
    (
        "on_timeout approve is refused",
        '[envelopes.bad]\nshell = { grant = "approve", timeout = "30m", on_timeout = "approve" }\n',
        ["[envelopes.bad]", "on_timeout", '"approve"'],
    ),
    (
        "a wait on a grant that never asks is refused naming the envelope and the axis",
        '[envelopes.bad]\nfiles.read = { grant = "allow", timeout = "30m" }\n',
        ["[envelopes.bad]", "files.read"],
    ),
    (
        "a wait on missions answer is refused",
        '[envelopes.bad]\nmissions.answer = { grant = "allow", timeout = "30m" }\n',
        ["[envelopes.bad]", "missions.answer"],
    ),
    (
        "a list entry containing a comma is refused",
        '[envelopes.bad.shell]\ngrant = "approve"\nblacklist = ["rm,sudo"]\n',
        ["[envelopes.bad]", '"rm,sudo"', "comma"],
    ),
    (
        "extends naming a missing parent is refused naming it",
        '[envelopes.bad]\nextends = "nosuchparent"\n',
        ["[envelopes.bad]", '"nosuchparent"'],
    ),
    (
        "an extends cycle is refused naming the offender",
        '[envelopes.bad]\nextends = "loop"\n[envelopes.loop]\nextends = "bad"\n',
        ["[envelopes.bad]", "cycle"],
    ),
    (
        "an extends chain deeper than eight envelopes is refused",
        '[envelopes.bad]\nextends = "e1"\n'
        + "".join(f'[envelopes.e{n}]\nextends = "e{n + 1}"\n' for n in range(1, 9))
        + '[envelopes.e9]\ndefault_action = "deny"\n',
        ["[envelopes.bad]", "deeper than 8"],
    ),
]

MALFORMED_ENVELOPES = [
    Case(
        name=name,
        # acp reads the global agents.toml only (see the finding in the ledger).
        home_files={"agents.toml": toml},
        steps=[
            step(
                "acp",
                "--hitl-policy",
                "bad",
                stdin="",
                exit_code=1,
                notices_has=['render envelope "bad"', *needles],
            )
        ],
    )
    for name, toml, needles in _MALFORMED
]

RUN_MALFORMED = Case(
    name=(
        "run refuses an envelope with a malformed duration "
        "naming the envelope the axis and the value"
    ),
    files={
        ".contenox/agents.toml": (
            '[envelopes.bad]\nshell = { grant = "approve", timeout = "half an hour" }\n'
        )
    },
    steps=[
        step(
            "run",
            "--policy",
            "bad",
            "do the task",
            exit_code=1,
            notices_has=["[envelopes.bad]", "shell", '"half an hour"'],
        )
    ],
    defect=(
        '`contenox run --policy bad` on an envelope with `timeout = "half an hour"` exits 1 '
        "with only 'hitl policy \"bad\" could not be loaded: it must name an existing policy' — "
        "the parse error is not shown (`contenox acp --hitl-policy bad` shows it). Contradicts "
        "agents-config.md, Bounding the wait: 'A malformed duration is refused at parse time, "
        "naming the envelope, the axis and the value'"
    ),
)


# --------------------------------------------------------------------------- what a render says

_FOUR_WAYS = """\
[envelopes.mine]
description = "Four ways to say what a call may do."
default_action = "approve"
files.read = "allow"
shell = { grant = "approve", timeout = "30m", on_timeout = "deny" }
files.write = "deny"

[envelopes.mine.tools]
"github.merge_pr" = { grant = "approve", timeout = "2h", on_timeout = "deny" }
"deploy.production" = { grant = "approve", timeout = "never" }
"""


def _rendered(instance: Instance, name: str) -> dict[str, object]:
    for base in (instance.work / ".contenox", instance.home / ".contenox"):
        path = base / ".generated" / f"hitl-policy-{name}.json"
        if path.exists():
            data = json.loads(path.read_text())
            assert isinstance(data, dict)
            return data
    raise AssertionError(f"no render of envelope {name!r} in either .generated/")


def test_the_four_ways_envelope_renders_the_documented_rules(instance: Instance) -> None:
    # function: needs the rendered file a run leaves in .generated/
    _declare(instance, _FOUR_WAYS)
    _run(
        instance,
        "mine",
        Script(
            turns=[
                Turn(tool_calls=[mission_report("result", "nothing to do")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
    ).assert_success()
    rules = _rendered(instance, "mine")["rules"]
    assert isinstance(rules, list)

    def rule(tools: str, tool: str) -> dict[str, object]:
        return next(r for r in rules if r["tools"] == tools and r["tool"] == tool)

    assert rule("local_fs", "read_file")["action"] == "allow"
    assert rule("local_fs", "write_file")["action"] == "deny"
    shell = rule("local_shell", "local_shell")
    assert (shell["action"], shell["timeout_s"], shell["on_timeout"]) == ("approve", 1800, "deny")
    deploy = rule("deploy", "production")
    assert (deploy["action"], deploy["timeout_s"]) == ("approve", -1)
    assert "on_timeout" not in deploy
    merge = rule("github", "merge_pr")
    assert (merge["timeout_s"], merge["on_timeout"]) == (7200, "deny")
    instance.must("vet")


@pytest.mark.parametrize(
    "toml",
    [
        '[envelopes.note]\ndefault_action = { grant = "approve", timeout = "30m", '
        'on_timeout = "deny" }\n',
        '[envelopes.note]\ndefault_action = "allow"\n[envelopes.note.network.read]\n'
        'grant = "deny"\ndeny_hosts = ["example.com"]\n',
    ],
    ids=["default-action-wait", "network-axis"],
)
def test_what_a_render_cannot_carry_it_states_in_a_reserved_note(
    instance: Instance, toml: str
) -> None:
    # function: needs the rendered file a run leaves in .generated/
    _declare(instance, toml)
    _run(
        instance,
        "note",
        Script(
            turns=[
                Turn(tool_calls=[mission_report("result", "nothing to do")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
    ).assert_success()
    render = _rendered(instance, "note")
    assert "//reserved" in render, render
    assert all("timeout_s" not in r for r in render["rules"]), render  # type: ignore[union-attr]
    assert all(r["tools"] not in ("native-web", "web") for r in render["rules"]), render  # type: ignore[union-attr,index]


# ----------------------------------------------------------------- renders, read back
#
# `contenox acp` renders every declared envelope at startup and, with its
# stdin closed, exits; acp reads the global agents.toml, so these envelopes
# are appended there. The render is the file hitl.md tells a person to read
# "when you want to know what a rendered envelope actually did".


def _render(instance: Instance, toml: str, name: str) -> dict[str, object]:
    instance.init()
    agents = instance.home / ".contenox" / "agents.toml"
    agents.write_text(agents.read_text() + "\n" + toml)
    instance.contenox("acp", stdin="").assert_success()
    return _rendered(instance, name)


def _rules(render: dict[str, object]) -> list[dict[str, object]]:
    rules = render["rules"]
    assert isinstance(rules, list)
    return rules


def test_every_render_carries_the_policy_schema(instance: Instance) -> None:
    # function: needs the rendered file
    render = _render(instance, '[envelopes.plain]\ndefault_action = "deny"\n', "plain")
    assert str(render.get("$schema", "")).endswith("hitl-policy-v1.schema.json"), render


def test_the_eight_shipped_envelopes_are_rendered_into_generated(instance: Instance) -> None:
    # function: needs the .generated/ directory listing
    _render(instance, "", "default")
    generated = instance.home / ".contenox" / ".generated"
    shipped = ["read_only", "ask_always", "auto_edit", "default", "strict", "acpx", "oracle"]
    missing = [n for n in [*shipped, "serve"] if not (generated / f"hitl-policy-{n}.json").exists()]
    assert missing == [], sorted(p.name for p in generated.iterdir())


def test_the_shell_tiers_render_in_the_documented_order(instance: Instance) -> None:
    # function: needs the rendered file
    render = _render(
        instance,
        "[envelopes.tiers.shell]\n"
        'grant = "approve"\n'
        'ask_always = ["rm"]\n'
        'prefix_allowlist = ["go test"]\n'
        'substitution = "deny"\n'
        'blacklist = ["mkfs"]\n',
        "tiers",
    )
    shell = [r for r in _rules(render) if r["tool"] == "local_shell"]
    ops = [r["when"][0]["op"] if r.get("when") else "grant" for r in shell]  # type: ignore[index]
    assert ops == [
        "command_blacklist",
        "no_command_substitution",
        "command_prefix_allowlist",
        "command_ask_always",
        "grant",
    ], shell
    assert [r["action"] for r in shell] == ["deny", "deny", "allow", "approve", "approve"]


def test_approve_paths_under_an_allow_grant_carry_the_wait_and_the_allow_floor_none(
    instance: Instance,
) -> None:
    # function: needs the rendered file
    render = _render(
        instance,
        "[envelopes.paths.files.write]\n"
        'grant = "allow"\n'
        'approve_paths = ["**/*.pem"]\n'
        'timeout = "10m"\n'
        'on_timeout = "deny"\n',
        "paths",
    )
    writes = [r for r in _rules(render) if r["tools"] == "local_fs"]
    asks = [r for r in writes if r["action"] == "approve"]
    floor = [r for r in writes if r["action"] == "allow"]
    assert asks and all((r["timeout_s"], r["on_timeout"]) == (600, "deny") for r in asks), writes
    assert floor and all("timeout_s" not in r for r in floor), writes


def test_missions_answer_renders_an_attention_block_and_an_explicit_key_wins(
    instance: Instance,
) -> None:
    # function: needs the rendered file
    render = _render(
        instance,
        '[envelopes.answers]\nmissions.answer = "allow"\n'
        "[envelopes.answers.attention]\nmax_agent_answers = 2\n",
        "answers",
    )
    attention = render.get("attention")
    assert isinstance(attention, dict), render
    assert (attention.get("allowAgentAnswers"), attention.get("maxAgentAnswers")) == (True, 2)
    assert not attention.get("allowAgentApprovals"), attention
    assert all(r["tools"] != "mission" for r in _rules(render)), render


def test_a_child_s_list_replaces_the_parent_s_and_a_bare_axis_replaces_the_whole_axis(
    instance: Instance,
) -> None:
    # function: needs the rendered files
    toml = (
        "[envelopes.base.files.write]\n"
        'grant = "allow"\n'
        'deny_paths = ["**/a", "**/b"]\n'
        '[envelopes.narrow]\nextends = "base"\n'
        "[envelopes.narrow.files.write]\n"
        'grant = "allow"\n'
        'deny_paths = ["**/c"]\n'
        '[envelopes.bare]\nextends = "base"\nfiles.write = "allow"\n'
    )
    narrow = _render(instance, toml, "narrow")
    globs = [r["when"][0]["value"] for r in _rules(narrow) if r.get("when")]  # type: ignore[index]
    # One rule per glob and per tool of the axis (write_file, edit_file, sed).
    assert set(globs) == {"**/c"}, _rules(narrow)
    bare = _rendered(instance, "bare")
    assert [r for r in _rules(bare) if r.get("when")] == [], _rules(bare)


def test_always_deny_accumulates_parent_first_ahead_of_every_grant(instance: Instance) -> None:
    # function: needs the rendered file
    toml = (
        '[envelopes.top]\nfiles.read = "allow"\n'
        "[[envelopes.top.always_deny]]\n"
        'tools = "local_fs"\ntool = "*"\nwhen_key = "path"\nwhen_op = "glob"\n'
        'when_value = "**/parent-secret"\n'
        '[envelopes.sub]\nextends = "top"\n'
        "[[envelopes.sub.always_deny]]\n"
        'tools = "local_fs"\ntool = "*"\nwhen_key = "path"\nwhen_op = "glob"\n'
        'when_value = "**/child-secret"\n'
    )
    rules = _rules(_render(instance, toml, "sub"))
    values = [r["when"][0]["value"] for r in rules[:2]]  # type: ignore[index]
    assert values == ["**/parent-secret", "**/child-secret"], rules
    assert [r["action"] for r in rules[:2]] == ["deny", "deny"]


def test_an_envelope_of_a_posture_s_name_wins_over_the_policy_postures_block(
    instance: Instance,
) -> None:
    # function: needs the rendered file
    # The shipped auto_edit envelope keeps the shell on approve; a posture
    # block granting it must not reach the render.
    render = _render(
        instance,
        '[policy.postures.auto_edit]\nlocal_fs_read = "allow"\nlocal_fs_write = "allow"\n'
        'local_shell = "allow"\n',
        "auto_edit",
    )
    shell = [r for r in _rules(render) if r["tool"] == "local_shell" and not r.get("when")]
    assert [r["action"] for r in shell] == ["approve"], _rules(render)


ENVELOPE_NAME_RULE = Case(
    name="an envelope name outside the name pattern is refused",
    home_files={"agents.toml": '[envelopes.Bad]\ndefault_action = "deny"\n'},
    steps=[
        step(
            "acp",
            stdin="",
            notices_has=["[envelopes.Bad]", "name must match ^[a-z0-9][a-z0-9_-]*$"],
        )
    ],
)

ENVELOPE_OWNS_AN_AGENT_S_FILE = Case(
    name="agent list says when an envelope owns an agent s policy file",
    home_files={"agents.toml": '[envelopes.reviewer]\ndefault_action = "deny"\n'},
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                'not carried  reviewer: posture — "reviewer" is also an envelope',
                'not carried  chain-acpx: posture — "acpx" is also an envelope',
            ],
        )
    ],
)

VET_SAYS_A_COPY_SHADOWS_A_RENDER = Case(
    name="vet says when a hand written copy shadows a rendered envelope",
    files={".contenox/hitl-policy-strict.json": '{"default_action": "deny", "rules": []}\n'},
    steps=[step("vet", stdout_has=["shadows the rendered envelope"])],
)


# ----------------------------------------------------------------- acp: the policy it runs under

_WRITE_TURN = Script(
    turns=[route(), Turn(text="Writing.", tool_calls=[_write("out.txt")]), "Done."]
)


def test_acp_auto_runs_a_gated_call_without_a_permission_request(instance: Instance) -> None:
    # function: needs an ACP client
    instance.init()
    instance.use_script(_WRITE_TURN)
    with open_acp(instance, "--auto", permission="deny") as acp:
        turn = acp.prompt("write the file")
    assert turn.permission_requests == [], turn.describe()
    assert (instance.work / "out.txt").read_text() == CONTENT


@defect(
    "`contenox acp` ignores the workspace's hitl-policy-name: after `contenox config set "
    "hitl-policy-name hitl-policy-locked.json` (read back by `config get`) with "
    "~/.contenox/hitl-policy-locked.json denying write_file, a scripted write_file under "
    "`contenox acp` raised a permission request whose _meta says policyName "
    "'hitl-policy-default.json', and the file was written once allowed. Contradicts hitl.md, "
    "Selecting the active policy: 'The config key writes to the KV store and takes effect "
    "immediately — no restart required. It applies to all subsequent invocations in the same "
    "workspace.'"
)
def test_config_hitl_policy_name_selects_the_policy_acp_runs_under(instance: Instance) -> None:
    # function: needs an ACP client
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-locked.json").write_text(
        _policy("allow", ("local_fs", "write_file", "deny"))
    )
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-locked.json")
    assert "hitl-policy-locked.json" in instance.must("config", "get", "hitl-policy-name").stdout
    instance.use_script(_WRITE_TURN)
    with open_acp(instance, permission="allow") as acp:
        turn = acp.prompt("write the file")
    assert turn.permission_requests == [], turn.describe()
    assert not (instance.work / "out.txt").exists(), turn.describe()


def test_an_unresolvable_hitl_policy_name_falls_back_to_the_default_envelope(
    instance: Instance,
) -> None:
    # function: needs an ACP client
    # default asks about a write; a fail-open fallback would write unasked.
    instance.init()
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-nosuch.json")
    instance.use_script(_WRITE_TURN)
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("write the file")
    assert len(turn.permission_requests) == 1, turn.describe()
    assert not (instance.work / "out.txt").exists()


def test_a_card_nobody_answers_is_not_a_denial_and_a_terminal_can_answer_it(
    instance: Instance,
) -> None:
    # function: needs an ACP client and a second process
    instance.init()
    instance.use_script(_WRITE_TURN)
    with open_acp(instance, permission="defer") as acp:
        pending = acp.start_prompt("write the file")
        ask = pending.wait_for_permission(timeout=60)
        assert ask.ask_id, ask.params
        assert [a.id for a in probes.approvals(instance)] == [ask.ask_id]
        instance.must("approvals", "respond", ask.ask_id, "--approve")
        turn = pending.finish(timeout=60)
    assert turn.stop_reason == "end_turn", turn.describe()
    assert (instance.work / "out.txt").read_text() == CONTENT


# ----------------------------------------------------------------- more of what a run sees


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_eq_condition_gates_only_the_call_whose_argument_equals_the_value(
    instance: Instance,
) -> None:
    # function: needs tool results from `state show --raw`
    instance.init()
    policy = {
        "default_action": "allow",
        "rules": [
            {
                "tools": "native-echo",
                "tool": "echo",
                "when": [{"key": "input", "op": "eq", "value": "forbidden word"}],
                "action": "deny",
            }
        ],
    }
    (instance.home / ".contenox" / "hitl-policy-eq.json").write_text(json.dumps(policy))
    script = _mission(ToolCall("echo", {"input": "forbidden word"}), ECHO)
    results = _landed_without_asks(instance, _run(instance, "eq", script))
    assert _refused(results[0]) and results[1] == ECHOED, results


def test_strict_asks_about_every_command_line_including_ls(instance: Instance) -> None:
    # function: needs background — the shell call waits on an ask
    instance.init()
    instance.use_script(_mission(ToolCall("local_shell", {"command": "ls"})))
    run = start_contenox(instance, "run", "--policy", "strict", "--timeout", "90s", TASK)
    ask = probes.await_approval(instance, 60, kind="permission", run=run)
    assert "local_shell" in ask.tool, ask
    probes.deny(instance, ask.id)
    run.wait(timeout=120).assert_success()


@defect(
    "a failed render is not reported: after `contenox run --policy stale` rendered "
    '[envelopes.stale] (files.write = "deny") from the workspace agents.toml, adding '
    "`bogus = 1` to it and running again lands with the stale render still denying the "
    "write (as promised) but neither the notices nor the log lines mention the failed "
    "render. Contradicts hitl.md, Policy resolution order: 'A render that fails while a "
    "readable copy is already on the path is reported and survived'"
)
def test_a_render_that_fails_is_reported_and_the_stale_render_still_gates(
    instance: Instance,
) -> None:
    # function: needs two runs with a broken edit between them
    _declare(instance, '[envelopes.stale]\ndefault_action = "allow"\nfiles.write = "deny"\n')
    script = _mission(_write("out.txt"))
    _run(instance, "stale", script).assert_success()
    _declare(
        instance,
        '[envelopes.stale]\ndefault_action = "allow"\nfiles.write = "allow"\nbogus = 1\n',
    )
    second = instance.contenox("run", "--policy", "stale", "--timeout", "90s", TASK, timeout=150)
    second.assert_success()
    assert not (instance.work / "out.txt").exists(), "the stale render stopped gating"
    assert 'unknown key "bogus"' in second.stderr, second.describe()


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_the_credential_quarantine_denies_a_key_store_read_under_the_most_permissive_posture(
    instance: Instance,
) -> None:
    # function: needs tool results from `state show --raw`
    instance.write("notes.txt", "plain notes\n")
    instance.write(".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    script = _mission(_read("notes.txt"), _read(".ssh/id_ed25519"))
    results = _landed_without_asks(instance, _run(instance, "auto_edit", script))
    assert "plain notes" in results[0], results
    assert _refused(results[1]) and "PRIVATE KEY" not in results[1], results
