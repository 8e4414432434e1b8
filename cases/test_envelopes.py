"""Envelopes: which verdict a tool call gets, from which policy file, and what a bad envelope gets.

Each run case declares its own envelope in ``~/.contenox/agents.toml`` (or
writes a policy file by hand) — a v1.0.0 unit never loads an envelope declared
in the workspace's ``.contenox/agents.toml`` (quarantined below), so a case
declaring it there would test the default envelope — fires
``contenox run --policy <it>`` with a dialog whose tool calls hit one rule,
and reads the verdict where a person sees it: the tool result recorded in
``contenox state show --raw``, the ask in ``contenox approvals list``, and
the file a call did or did not write.

Tools used: ``read_file``/``write_file`` (``local_fs``, served by ``run``
itself) and ``echo`` (``native-echo``, whose one argument is ``input``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    edit,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    probes,
    prompt,
    remove,
    respond,
    route,
    satisfies,
    start_contenox,
    step,
    wait,
    write,
)
from harness.case import Action, AwaitAsk, Probe, Step

TASK = "do the task"
# How a quarantine's reproduction sets the model up, by hand.
_SCRIPTED = (
    "`contenox init`; `contenox backend add scripted --type scripted-test --script "
    "dialog.json`, `contenox config set default-provider scripted-test`, `contenox config set "
    "default-model scripted-test`, the dialog calling "
)
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


def _policy(default: str | None, *rules: tuple[str, str, str]) -> str:
    """A hand-written policy file: ``(toolset, tool, action)`` rules, top to bottom."""
    doc: dict[str, object] = {
        "rules": [{"tools": ts, "tool": t, "action": a} for ts, t, a in rules]
    }
    if default is not None:
        doc["default_action"] = default
    return json.dumps(doc, indent=2) + "\n"


_WRITE_TURN = Script(
    turns=[route(), Turn(text="Writing.", tool_calls=[_write("out.txt")]), "Done."]
)


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
    """The envelope's own refusal, not a person's denial nor a tool's error that says "denied"."""
    return text.startswith("Denied by the active policy")


def _person_denied(text: str) -> bool:
    """A person's deny on the ask: the call never ran, and no envelope rule is cited."""
    return "denied" in text.lower() and not _refused(text)


def _results(check: Callable[[list[str]], bool], message: str) -> Probe:
    return probe("tool results", _tool_results, expect=satisfies(check, message))


_NO_ASKS = probe("pending asks", probes.approvals, expect=[])


_NOREAD = '[envelopes.noread]\ndefault_action = "allow"\nfiles.read = "deny"\n'


def _run_step(policy: str) -> Step:
    return step("run", "--policy", policy, "--timeout", "90s", TASK, timeout=150)


def _landed(
    name: str,
    policy: str,
    script: Script,
    *checks: Action,
    declare: str | None = None,
    before: Sequence[Action] = (),
    files: Mapping[str, str] | None = None,
    **case: Any,
) -> Case:
    """A run under ``policy`` that lands with nothing left waiting on a person, then ``checks``.

    ``declare`` is ``~/.contenox/agents.toml``: an overlay that adds envelopes
    to the shipped set.
    """
    return Case(
        name=name,
        script=script,
        files=dict(files or {}),
        home_files={} if declare is None else {"agents.toml": declare},
        steps=[*before, _run_step(policy), _NO_ASKS, *checks],
        **case,
    )


def _asked(
    name: str,
    policy: str,
    script: Script,
    ask: AwaitAsk,
    verdict: Literal["approve", "deny"],
    *checks: Action,
    declare: str | None = None,
    before: Sequence[Action] = (),
    files: Mapping[str, str] | None = None,
    **case: Any,
) -> Case:
    """A run under ``policy`` whose call waits on ``ask``; a person gives ``verdict``; it lands."""
    return Case(
        name=name,
        script=script,
        files=dict(files or {}),
        home_files={} if declare is None else {"agents.toml": declare},
        steps=[
            *before,
            background("run", "run", "--policy", policy, "--timeout", "90s", TASK),
            ask,
            respond(ask.name, verdict),
            wait("run", timeout=120),
            *checks,
        ],
        **case,
    )


# --------------------------------------------------------------------------- verdicts

# The envelope's default denies, so only its allow rule lets the read run; the
# control drops that rule and the read is refused (the default envelope, which
# allows reads, would have let it run either way).
ALLOW_RULE = [
    _landed(
        name,
        "reader",
        _mission(_read("notes.txt")),
        _results(check, what),
        declare=f'[envelopes.reader]\ndefault_action = "deny"\n{rule}',
        files={"notes.txt": "the notes the unit may read\n"},
    )
    for name, rule, check, what in (
        (
            "an allow rule lets the call run unattended",
            'files.read = "allow"\n',
            lambda rs: any("the notes the unit may read" in r for r in rs),
            "the notes' text",
        ),
        (
            "without the allow rule the same read meets default_action deny",
            "",
            lambda rs: _refused(rs[0]) and "the notes the unit may read" not in rs[0],
            "the read refused",
        ),
    )
]

# The control is the same envelope with files.write allowed: the write runs.
DENY_RULE = [
    _landed(
        name,
        "nowrite",
        _mission(_write("out.txt")),
        workspace_file("out.txt", expect=written),
        _results(lambda rs, w=written: _refused(rs[0]) is (w is None), what),
        declare=f'[envelopes.nowrite]\ndefault_action = "allow"\nfiles.write = "{grant}"\n',
    )
    for name, grant, written, what in (
        ("a deny rule refuses the call and it writes nothing", "deny", None, "the write refused"),
        (
            "with the deny rule turned to allow the same write runs",
            "allow",
            CONTENT,
            "the write done",
        ),
    )
]


# An envelope the workspace declares is never loaded by the unit: it logs
# `policy "noread" unreadable, gating on default "hitl-policy-default.json"`,
# and the default envelope allows the read. The control declares the same
# envelope in ~/.contenox/agents.toml, where it refuses the read.
WORKSPACE_ENVELOPE = [
    Case(
        name=name,
        script=_mission(_read("notes.txt")),
        files={"notes.txt": "the notes the unit may read\n", **where.get("files", {})},
        home_files=where.get("home_files", {}),
        steps=[
            _run_step("noread"),
            _NO_ASKS,
            _results(
                lambda rs: _refused(rs[0]) and "the notes the unit may read" not in rs[0],
                "the read refused",
            ),
        ],
        **extra,
    )
    for name, where, extra in (
        (
            "an envelope declared in the workspace agents.toml gates the run",
            {"files": {".contenox/agents.toml": _NOREAD}},
            {
                "defect": Defect(
                    title="an envelope declared in the workspace .contenox/agents.toml is never "
                    "loaded by the unit; it gates on the default envelope",
                    second_reading=(
                        "2026-12-01, a second reader with only this text and the docs, in a fresh "
                        "scratch home: real. Saw: workspace: exit 0, 'Mission fired at agent "
                        "\"run\" under envelope \"pinparent\"', 'finished: landed'; log: 'hitl: "
                        'policy "pinparent" unreadable, gating on default '
                        '"hitl-policy-default.json" instead: … open '
                        "<HOME>/.contenox/.generated/hitl-policy-pinparent.json: no such file or "
                        "directory'; local_shell result {exit_code:0, stdout:hello}, no approval. "
                        "Control: change_data=pinparent, 'binary …' detail, approval_pending, the "
                        "run never finished ('did not finish within 20s'), exit 1. Note: Same "
                        "root cause as Q03. One small error in the text: `contenox init` alone "
                        "does NOT render work/.contenox/.generated/hitl-policy-pinparent.json. "
                        "Its 'Rendered' lines list only the 8 global envelopes, and the workspace "
                        "file first appears once `run` has started. The defect holds either way."
                    ),
                    reproduce=(
                        "in a scratch HOME and an empty workspace: `notes.txt` holding 'the notes "
                        "the unit may read'; `.contenox/agents.toml` holding `[envelopes.noread]` "
                        '`default_action = "allow"` `files.read = "deny"`; `contenox init`; '
                        "`contenox backend add scripted --type scripted-test --script "
                        "dialog.json`, `contenox config set default-provider scripted-test`, "
                        "`contenox config set default-model scripted-test`, the dialog calling "
                        "`read_file {path: notes.txt}`, then `mission_finish landed`, a text "
                        'turn; `contenox run --policy noread --timeout 60s "do the task"` lands '
                        '(exit 0), its log has \'hitl: policy "noread" unreadable, gating on '
                        'default "hitl-policy-default.json" instead: … open '
                        "~/.contenox/.generated/hitl-policy-noread.json: no such file or "
                        "directory', and the read's tool result is the notes' text. The same "
                        "file as `~/.contenox/agents.toml` instead: the tool result is 'Denied by "
                        "the active policy noread (rule 0). …'"
                    ),
                    promised=(
                        'reference/agents-config.md:21 "3. `.contenox/agents.toml` — the '
                        'workspace, which wins"'
                    ),
                    observed="the read runs under hitl-policy-default.json",
                    bears_on=(
                        'guide/hitl.md:11 "You write an **envelope** — a named '
                        '`[envelopes.<name>]` section in"',
                    ),
                )
            },
        ),
        (
            "the same envelope declared in the home agents.toml gates the run",
            {"home_files": {"agents.toml": _NOREAD}},
            {},
        ),
    )
]

# The control of the home declaration: the same envelope there with files.read allowed;
# the read returns the notes.
HOME_ENVELOPE_ALLOWS = _landed(
    "the same envelope in the home agents.toml with the read allowed returns the notes",
    "noread",
    _mission(_read("notes.txt")),
    _results(lambda rs: "the notes the unit may read" in rs[0], "the notes' text"),
    declare=_NOREAD.replace('files.read = "deny"', 'files.read = "allow"'),
    files={"notes.txt": "the notes the unit may read\n"},
)


# function: asserts the run is still running while its ask waits, which no step reads
def test_an_approve_rule_holds_the_call_on_an_ask_until_a_person_approves_it(
    instance: Instance,
) -> None:
    # The grant is written in its table form: `{ grant = "approve" }` is the
    # same document as the bare word.
    (instance.home / ".contenox").mkdir(parents=True, exist_ok=True)
    (instance.home / ".contenox" / "agents.toml").write_text(
        '[envelopes.askwrite]\ndefault_action = "allow"\nfiles.write = { grant = "approve" }\n',
        encoding="utf-8",
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

DEFAULT_ALLOW = _landed(
    "a call no rule names runs when default_action is allow",
    "open",
    _mission(ECHO),
    _results(lambda rs: rs[0] == ECHOED, "the echo"),
    declare='[envelopes.open]\ndefault_action = "allow"\n',
)

# files.write is unset: it emits no rule, so the write meets default_action
# (deny) — not an implicit approve, which would leave the run waiting.
UNSET_AXIS_DENY = [
    _landed(
        name,
        "shut",
        _mission(_write("out.txt")),
        workspace_file("out.txt", expect=written),
        _results(lambda rs, w=written: _refused(rs[0]) is (w is None), what),
        declare=f'[envelopes.shut]\ndefault_action = "{default}"\nfiles.read = "allow"\n',
    )
    for name, default, written, what in (
        ("an axis left unset falls through to default_action deny", "deny", None, "write refused"),
        (
            "an axis left unset falls through to default_action allow and runs",
            "allow",
            CONTENT,
            "the write done",
        ),
    )
]

NO_DEFAULT_ACTION_ASKS = [
    _asked(
        "an envelope without default_action asks about a call no rule names",
        "quiet",
        _mission(ECHO),
        await_ask("ask", tool="native-echo.echo", timeout=60),
        "deny",
        _results(lambda rs: _person_denied(rs[0]), "the echo refused"),
        declare='[envelopes.quiet]\ndescription = "names no tool at all"\n',
    ),
    # The control: only default_action added, allow; the echo runs unasked.
    _landed(
        "an envelope whose default_action is allow runs the same call unasked",
        "quiet",
        _mission(ECHO),
        _results(lambda rs: rs[0] == ECHOED, "the echo"),
        declare=(
            '[envelopes.quiet]\ndescription = "names no tool at all"\ndefault_action = "allow"\n'
        ),
    ),
]

HAND_WRITTEN_NO_DEFAULT_ASKS = _asked(
    "a hand written policy without default_action asks about a call no rule names",
    "bare",
    _mission(ECHO),
    await_ask("ask", tool="native-echo.echo", timeout=60),
    "approve",
    _results(lambda rs: rs[0] == ECHOED, "the echo"),
    before=[write("hitl-policy-bare.json", _policy(None), home=True)],
)

# The control: only default_action added to the same file, allow; the echo runs unasked.
HAND_WRITTEN_ALLOW_RUNS = _landed(
    "a hand written policy whose default_action is allow runs the same call unasked",
    "bare",
    _mission(ECHO),
    _results(lambda rs: rs[0] == ECHOED, "the echo"),
    before=[write("hitl-policy-bare.json", _policy("allow"), home=True)],
)


# --------------------------------------------------------------------------- first match


def _first_match(variant: str, first: str, second: str, runs: bool) -> Case:
    policy = _policy("approve", ("native-echo", "echo", first), ("native-echo", "echo", second))
    return _landed(
        f"rules are evaluated top to bottom and the first match wins ({variant})",
        "order",
        _mission(ECHO),
        _results(
            lambda rs: (rs[0] == ECHOED) is runs and _refused(rs[0]) is not runs,
            "the echo run" if runs else "the echo refused",
        ),
        before=[write("hitl-policy-order.json", policy, home=True)],
    )


FIRST_MATCH = [
    _first_match("deny first", "deny", "allow", False),
    _first_match("allow first", "allow", "deny", True),
]

DENY_PATH_CARVE = _landed(
    "a deny path carves a refusal out of an allow grant",
    "carve",
    _mission(_write("ok.txt"), _write("secret.txt")),
    workspace_file("ok.txt", expect=CONTENT),
    workspace_file("secret.txt", expect=None),
    _results(lambda rs: _refused(rs[1]) and not _refused(rs[0]), "only the second write refused"),
    declare=(
        "[envelopes.carve]\n"
        'default_action = "deny"\n'
        "[envelopes.carve.files.write]\n"
        'grant = "allow"\n'
        'deny_paths = ["**/secret*"]\n'
    ),
)

# The control: the same envelope without its deny_paths; the same second write lands.
NO_DENY_PATH_CARVE = _landed(
    "without the deny path the same allow grant writes both files",
    "carve",
    _mission(_write("ok.txt"), _write("secret.txt")),
    workspace_file("ok.txt", expect=CONTENT),
    workspace_file("secret.txt", expect=CONTENT),
    _results(lambda rs: not _refused(rs[0]) and not _refused(rs[1]), "neither write refused"),
    declare=(
        "[envelopes.carve]\n"
        'default_action = "deny"\n'
        "[envelopes.carve.files.write]\n"
        'grant = "allow"\n'
    ),
)

APPROVE_PATH_CARVE = _asked(
    "an approve path carves an ask out of an allow grant",
    "keys",
    _mission(_read("plain.txt"), _read("server.pem")),
    await_ask("ask", tool="local_fs.read_file", kind="permission", timeout=60),
    "deny",
    _results(
        lambda rs: "plain text" in rs[0] and _person_denied(rs[1]) and "BEGIN KEY" not in rs[1],
        "the plain read, the .pem refused",
    ),
    declare=(
        "[envelopes.keys]\n"
        'default_action = "deny"\n'
        "[envelopes.keys.files.read]\n"
        'grant = "allow"\n'
        'approve_paths = ["**/*.pem"]\n'
    ),
    files={"plain.txt": "plain text\n", "server.pem": "-----BEGIN KEY-----\n"},
)

# The control: the same envelope without its approve_paths; the .pem is read unasked.
NO_APPROVE_PATH_CARVE = _landed(
    "without the approve path the same allow grant reads the pem unasked",
    "keys",
    _mission(_read("plain.txt"), _read("server.pem")),
    _results(
        lambda rs: "plain text" in rs[0] and "BEGIN KEY" in rs[1], "both files' text, unasked"
    ),
    declare=(
        '[envelopes.keys]\ndefault_action = "deny"\n[envelopes.keys.files.read]\ngrant = "allow"\n'
    ),
    files={"plain.txt": "plain text\n", "server.pem": "-----BEGIN KEY-----\n"},
)

MOST_SPECIFIC_FIRST = _landed(
    "a tools pattern is matched most specific first not in file order",
    "pick",
    _mission(ECHO),
    _results(lambda rs: rs[0] == ECHOED, "the echo"),
    declare=(
        "[envelopes.pick]\n"
        'default_action = "deny"\n'
        "[envelopes.pick.tools]\n"
        '"native-echo.*" = "deny"\n'
        '"native-echo.echo" = "allow"\n'
    ),
)

CHILD_KEEPS_PARENT_AXES = _landed(
    "a child envelope keeps the parent axes it does not set",
    "child",
    _mission(_read("notes.txt"), _write("out.txt")),
    _results(lambda rs: "inherited read" in rs[0], "the inherited read"),
    workspace_file("out.txt", expect=CONTENT),
    declare=(
        "[envelopes.parent]\n"
        'default_action = "deny"\n'
        'files.read = "allow"\n'
        "[envelopes.child]\n"
        'extends = "parent"\n'
        'files.write = "allow"\n'
    ),
    files={"notes.txt": "inherited read\n"},
)


# ------------------------------------------------------------------ where a policy comes from

_ALLOW_ECHO = _policy("deny", ("native-echo", "echo", "allow"))
_DENY_ECHO = _policy("allow", ("native-echo", "echo", "deny"))

WORKSPACE_POLICY_WINS = _landed(
    "a workspace policy file wins over the global copy",
    "r1",
    _mission(ECHO),
    _results(lambda rs: _refused(rs[0]), "the echo refused"),
    files={".contenox/hitl-policy-r1.json": _DENY_ECHO},
    before=[write("hitl-policy-r1.json", _ALLOW_ECHO, home=True)],
    defect=Defect(
        title="a global hitl-policy-<name>.json wins over the workspace's copy",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: both copies: run --policy r1 lands, "
            "the echo tool_call completes with no deny (global allow used). "
            'Workspace copy alone: \'hitl: policy "r1" unreadable, gating on '
            'default "hitl-policy-default.json" instead: … not found: open '
            "<home>/.contenox/.generated/hitl-policy-r1.json' Note: Dialog: echo "
            "{input}, mission_report, mission_finish landed, text turns; I added "
            "--timeout 60s. The control shows the workspace copy is not read at "
            "all by the unit's gate — the echo there is denied by the default "
            "policy, not by the workspace file — which still breaks "
            "hitl.md:379-380."
        ),
        reproduce=(
            "in a scratch HOME: `.contenox/hitl-policy-r1.json` in the workspace holding "
            '`{"default_action": "allow", "rules": [{"tools": "native-echo", "tool": "echo", '
            '"action": "deny"}]}` and `~/.contenox/hitl-policy-r1.json` holding the opposite '
            '(`default_action` "deny", the echo rule "allow"); '
            + _SCRIPTED
            + "`echo {input: ping from the unit}`, then "
            "`mission_report`, `mission_finish landed`, a text turn; `contenox run --policy r1 "
            "--timeout 90s \"do the task\"` lands and the echo's tool result is 'ping from the "
            "unit' (the global copy's allow). The workspace copy alone is not read either (its own "
            "quarantine): the default envelope's ask comes back 'User denied the operation'"
        ),
        promised=(
            'guide/hitl.md:379-380 "A top-level hitl-policy-<name>.json in the workspace '
            '.contenox/, then ~/.contenox/, wins if it is there."'
        ),
        observed="the echo runs: the global copy was used",
        bears_on=(
            'guide/missions.md:35 "the workspace `.contenox/`, then `~/.contenox/`, then '
            'each of their `.generated/` directories, first match wins"',
        ),
    ),
)


# The two quarantines above, with the global copy taken away: the workspace's
# copy (or render) alone is not read either — the unit looks only under
# ~/.contenox/.generated/, logs `policy "r1" unreadable, gating on default`,
# and the default envelope's ask comes back denied. The controls put the same
# file where the unit does look, and it refuses the echo by its own rule.
# Their second readings, by the copy's name.
_ALONE_READINGS = {
    "r1": (
        "2026-12-02, a second reader with only this text and the docs, in a "
        "fresh scratch home: real. Saw: with only <workspace>/.contenox/hitl-"
        'policy-r1.json present: exit 0, \'hitl: policy "r1" unreadable, '
        'gating on default "hitl-policy-default.json" instead: ... not found:'
        " open $HOME/.contenox/.generated/hitl-policy-r1.json', 'ask raised "
        "... policy=hitl-policy-default.json', echo result 'User denied the "
        "operation.'. With the same file at ~/.contenox/hitl-policy-r1.json "
        "instead: 'Denied by the active policy r1 (rule 0).' Note: I added "
        "the dialog arguments, copying the mission_report/mission_finish "
        "shapes from scripted-test-backend.md:172-175: echo{input:'ping from "
        "the unit'}, mission_report{kind:result,summary:done}, "
        "mission_finish{status:landed}, then a text turn. I created the "
        "workspace .contenox/ and the policy file before 'contenox init', and"
        " init wrote workspace.id there. reference/conte..."
    ),
    "r3": (
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch home: "
        "real. Saw: Scratch HOME. Workspace .contenox/.generated/hitl-policy-r3.json = {default "
        "allow, rule 0 deny native-echo.echo}; nothing named r3 under ~/.contenox. Scripted "
        "dialog: echo{input:'ping from the unit'}, mission_report, mission_finish landed, text. "
        '`contenox run --policy r3 --timeout 90s "do the task"` exited 0 with \'Mission … '
        "finished: landed'. stderr had: 'hitl: policy \"r3\" unreadable, gating on default "
        '"hitl-policy-default.json" instead: read hitl policy "r3": hitl policy '
        '"hitl-policy-r3.json" not found: open '
        "$HOME/.contenox/.generated/hitl-policy-r3.json: no such file or directory'. The "
        "workspace file was still there afterwards. `state show <req> --raw`: the echo result "
        "was 'User denied the operation. …'. Control run in a fresh HOME with the same file at "
        "~/.contenox/.generated/hitl-polic..."
    ),
}


def _alone(what: str, name: str, rel: str, where: str) -> Defect:
    return Defect(
        title=f"a workspace {what} alone is never read by the unit; it gates on the default",
        second_reading=_ALONE_READINGS[name],
        reproduce=(
            f"in a scratch HOME: `.contenox/{rel}` in the workspace holding "
            '`{"default_action": "allow", "rules": [{"tools": "native-echo", "tool": "echo", '
            f'"action": "deny"}}]}}`, nothing named {name} under ~/.contenox; '
            + _SCRIPTED
            + "`echo {input: ping from the unit}`, then `mission_report`, `mission_finish "
            f'landed`, a text turn; `contenox run --policy {name} --timeout 90s "do the task"` '
            f'lands (exit 0), its log has \'hitl: policy "{name}" unreadable, gating on '
            f'default "hitl-policy-default.json" instead: read hitl policy "{name}": hitl '
            f'policy "hitl-policy-{name}.json" not found: open '
            f"~/.contenox/.generated/hitl-policy-{name}.json: no such file or directory', and "
            "the echo's tool result is 'User denied the operation. …', not the policy's "
            f"'Denied by the active policy …'. The same file at {where} instead: 'Denied by "
            f"the active policy {name} (rule 0). …'"
        ),
        promised=(
            'guide/hitl.md:379-380 "A top-level hitl-policy-<name>.json in the workspace '
            '.contenox/, then ~/.contenox/, wins if it is there."'
        )
        if rel.startswith("hitl")
        else (
            "guide/hitl.md:388-389 \".contenox/.generated/  the workspace's rendered "
            'envelopes ~/.contenox/.generated/  the global rendered envelopes"'
        ),
        observed="the echo is asked about under hitl-policy-default.json and comes back denied",
        bears_on=(
            'guide/missions.md:35 "the workspace `.contenox/`, then `~/.contenox/`, then '
            'each of their `.generated/` directories, first match wins"',
        ),
    )


WORKSPACE_COPY_ALONE = [
    case
    for what, name, rel in (
        ("policy file", "r1", "hitl-policy-r1.json"),
        ("render", "r3", ".generated/hitl-policy-r3.json"),
    )
    for case in (
        _landed(
            f"a workspace {what} alone gates the run",
            name,
            _mission(ECHO),
            _results(lambda rs: _refused(rs[0]), "the echo refused by the policy"),
            files={f".contenox/{rel}": _DENY_ECHO},
            defect=_alone(what, name, rel, f"~/.contenox/{rel}"),
        ),
        _landed(
            f"the same {what} under the home contenox gates the run",
            name,
            _mission(ECHO),
            _results(lambda rs: _refused(rs[0]), "the echo refused by the policy"),
            before=[write(rel, _DENY_ECHO, home=True)],
        ),
        # Its control: the same place, the file allowing the echo; the echo runs (the
        # default envelope, were the file not read, would ask and come back denied).
        _landed(
            f"the same {what} under the home contenox allowing the echo runs it",
            name,
            _mission(ECHO),
            _results(lambda rs: rs[0] == ECHOED, "the echo"),
            before=[write(rel, _ALLOW_ECHO, home=True)],
        ),
    )
]


def _global_file(instance: Instance, rel: str) -> str | None:
    """A file's text under ``~/.contenox``, or None when it is not there."""
    path = instance.home / ".contenox" / rel
    return path.read_text() if path.exists() else None


GLOBAL_POLICY_WINS = _landed(
    "a global policy file wins over the rendered envelope and is never rewritten",
    "r2",
    _mission(ECHO),
    _results(lambda rs: rs[0] == ECHOED, "the echo"),
    probe(
        "~/.contenox/hitl-policy-r2.json", _global_file, "hitl-policy-r2.json", expect=_ALLOW_ECHO
    ),
    declare=(
        '[envelopes.r2]\ndefault_action = "allow"\n[envelopes.r2.tools]\n'
        '"native-echo.echo" = "deny"\n'
    ),
    before=[write("hitl-policy-r2.json", _ALLOW_ECHO, home=True)],
)

# The two renders both refuse the echo, by different rules, so the refusal names the
# file that won: the workspace's by its rule 1 (after a rule that allows jq), the
# global one by its rule 0. The default envelope, read when neither is, asks instead
# and the unattended answer is "User denied". (A first version had the global render
# allow the echo, which the default envelope may do as well: an echo that ran could
# not say which render won, as its second reader found.)
_DENY_ECHO_SECOND = _policy("deny", ("native-jq", "jq", "allow"), ("native-echo", "echo", "deny"))
_DENY_ECHO_FIRST = _policy("allow", ("native-echo", "echo", "deny"))

WORKSPACE_RENDER_FIRST = _landed(
    "the workspace render directory is searched before the global one",
    "r3",
    _mission(ECHO),
    _results(
        lambda rs: rs[0].startswith("Denied by the active policy r3 (rule 1)"),
        "the echo refused by the workspace render's rule 1",
    ),
    files={".contenox/.generated/hitl-policy-r3.json": _DENY_ECHO_SECOND},
    before=[write(".generated/hitl-policy-r3.json", _DENY_ECHO_FIRST, home=True)],
    defect=Defect(
        title="the global .generated/ wins over the workspace's .generated/",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Case's commands verbatim (fresh HOME/W, init, the two "
            "hand-written hitl-policy-r3.json renders, scripted dialog, `run --policy r3`): "
            "rc=0, mission landed; state show --raw: 'Denied by the active policy r3 (rule "
            "0). ...' - the global render's rule. Control (fresh HOME/W, ONLY the workspace "
            ".contenox/.generated/hitl-policy-r3.json): the echo got 'User denied the "
            'operation...\' and stderr said: hitl: policy "r3" unreadable, gating on '
            'default "hitl-policy-default.json" instead: ... open '
            "$HOME/.contenox/.generated/hitl-policy-r3.json: no such file or directory. "
            "Both files were unchanged after the runs. Note: Reproduces, and more strongly "
            "than the case says: the evaluator does not look in the workspace "
            ".contenox/.generated/ at all - it only tried ~/.contenox/.generated/, then "
            "fell back to the de..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "mkdir -p .contenox/.generated ~/.contenox/.generated\n"
            "# the workspace render: the echo refused by rule 1\n"
            "cat > .contenox/.generated/hitl-policy-r3.json <<'J'\n"
            + json.dumps(json.loads(_DENY_ECHO_SECOND))
            + "\nJ\n"
            "# the global render: the echo refused by rule 0\n"
            "cat > ~/.contenox/.generated/hitl-policy-r3.json <<'J'\n"
            + json.dumps(json.loads(_DENY_ECHO_FIRST))
            + "\nJ\n"
            "# no envelope r3 is declared in any agents.toml\n"
            "cat > dialog.json <<'J'\n"
            '{"turns": [{"text": "Working.", "tool_calls": [{"name": "echo", "arguments": '
            '{"input": "ping from the unit"}}]}, {"text": "Reporting.", "tool_calls": [{"name": '
            '"mission_report", "arguments": {"kind": "result", "summary": "done"}}]}, '
            '{"tool_calls": [{"name": "mission_finish", "arguments": {"status": "landed"}}]}, '
            '{"text": "Done."}]}\n'
            "J\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            'contenox run --policy r3 --timeout 90s "do the task"   # lands, exit 0\n'
            "contenox state show $(contenox state list | head -1) --raw "
            "| grep -o 'Denied by[^\"]*'\n"
            "# the echo's tool result: 'Denied by the active policy r3 (rule 0). …', the "
            "global render's rule; the workspace render would say (rule 1), the default "
            "envelope 'User denied the operation. …'"
        ),
        promised=(
            "guide/hitl.md:388-389 \".contenox/.generated/  the workspace's rendered "
            'envelopes ~/.contenox/.generated/  the global rendered envelopes"'
        ),
        observed=(
            "the echo is refused by rule 0: the global render was used, the workspace's was not"
        ),
        bears_on=(
            'guide/missions.md:35 "the workspace `.contenox/`, then `~/.contenox/`, then '
            'each of their `.generated/` directories, first match wins"',
        ),
    ),
)


def _render_stamp(instance: Instance, name: str) -> bool:
    """Whether the render of envelope ``name`` (workspace first, then global) names its table."""
    for base in (instance.work / ".contenox", instance.home / ".contenox"):
        path = base / ".generated" / f"hitl-policy-{name}.json"
        if path.exists():
            return f"[envelopes.{name}]" in path.read_text()
    raise AssertionError(f"no render of envelope {name!r} in either .generated/")


NAME_AND_FILE_NAME = [
    _landed(
        f"an envelope name and its file name resolve to the same rendered policy ({variant})",
        spelling,
        _mission(ECHO),
        _results(lambda rs, g=grant: _refused(rs[0]) is (g == "deny"), f"the echo {grant}"),
        probe("the render is stamped", _render_stamp, "rendered", expect=True),
        declare=(
            '[envelopes.rendered]\ndefault_action = "allow"\n[envelopes.rendered.tools]\n'
            f'"native-echo.echo" = "{grant}"\n'
        ),
    )
    for variant, spelling, grant in (
        ("name", "rendered", "deny"),
        ("file name", "hitl-policy-rendered.json", "deny"),
        # The control: the same envelope allowing the echo, named by its file name.
        ("file name, the echo allowed", "hitl-policy-rendered.json", "allow"),
    )
]

EDITED_ENVELOPE = _landed(
    "editing an envelope changes the next run without an init",
    "edit",
    _mission(_write("out.txt")),
    workspace_file("out.txt", expect=None),
    edit(
        "agents.toml", replace={'files.write = "deny"': 'files.write = "allow"'}, under="contenox"
    ),
    step("run", "--policy", "edit", "--timeout", "90s", TASK, timeout=150, exit_code=None),
    workspace_file("out.txt", expect=CONTENT),
    declare='[envelopes.edit]\ndefault_action = "allow"\nfiles.write = "deny"\n',
)

# The file denies write_file; the envelope acp runs under otherwise asks
# about it. A permission request, or the file appearing, means the path
# was not the policy. The control is the same file allowing write_file: the
# write lands, again without a request.
HITL_POLICY_PATH = [
    Case(
        name=name,
        script=_WRITE_TURN,
        files={"ops/locked.json": _policy("allow", ("local_fs", "write_file", action))},
        steps=[
            prompt(
                "write the file",
                acp_args=["--hitl-policy", "./ops/locked.json"],
                permission="allow",
                permission_requests=0,
            ),
            workspace_file("out.txt", expect=written),
        ],
    )
    for name, action, written in (
        ("a hitl policy value with a path separator is that file verbatim", "deny", None),
        (
            "a hitl policy file at a path that allows the write lets it land unasked",
            "allow",
            CONTENT,
        ),
    )
]


# ------------------------------------------------------------------ names that resolve to nothing

# Their controls: the same start once the path, or the name, resolves to a file; acp
# starts under it and says nothing of a missing policy.
_A_POLICY = _policy("allow")

ACP_MISSING_PATH = [
    Case(
        name=name,
        files=files,
        steps=[
            step(
                "acp",
                "--hitl-policy",
                "./ops/missing.json",
                stdin="",
                **expect,
            )
        ],
    )
    for name, files, expect in (
        (
            "a hitl policy path that does not exist is an error rather than a fallback",
            {},
            {"exit_code": 1, "notices_has": ["missing.json", "no such file"]},
        ),
        (
            "the same hitl policy path once the file exists starts acp under it",
            {"ops/missing.json": _A_POLICY},
            {"exit_code": 0, "notices_lacks": ["missing.json", "no such file"]},
        ),
    )
]

ACP_UNKNOWN_NAME = [
    Case(
        name=(
            "a policy name that resolves to nothing is fatal and names what it looked for and where"
        ),
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
    ),
    Case(
        name="the same policy name once its file is under the home contenox starts acp under it",
        steps=[
            write("hitl-policy-nosuch.json", _A_POLICY, home=True),
            step(
                "acp",
                "--hitl-policy",
                "nosuch",
                stdin="",
                exit_code=0,
                notices_lacks=["hitl-policy-nosuch.json"],
            ),
        ],
    ),
]

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
    defect=Defect(
        title="run --policy <unknown> names neither the file it looked for nor where",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: run --policy nosuch -> 'Error: "
            'invalid parameter value: hitlPolicyName: hitl policy "nosuch" could '
            "not be loaded: it must name an existing policy (see `contenox "
            "config` / the .contenox policy files)', exit 1 Note: Nothing added. "
            "Contrast: acp --hitl-policy nosuch says 'hitl-policy-nosuch.json is "
            "on none of <home>/.contenox, <home>/.contenox/.generated …', which "
            "is what hitl.md:395-396 describes."
        ),
        reproduce=(
            'in a scratch HOME, `contenox init`; `contenox run --policy nosuch "do the task"` '
            'exits 1 with only \'hitl policy "nosuch" could not be loaded: it must name an '
            "existing policy (see `contenox config` / the .contenox policy files)'; `contenox acp "
            "--hitl-policy nosuch` </dev/null names hitl-policy-nosuch.json and the .generated "
            "directories"
        ),
        promised=(
            'guide/hitl.md:395-396 "Only a name that resolves to nothing at all is '
            'fatal, and it names both what it looked for and where."'
        ),
        observed="'hitl policy \"nosuch\" could not be loaded: it must name an existing policy …'",
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

# The control of the refusals above: a well-formed block of the same shape (the
# timeout written as a duration); the same start renders it and exits 0.
WELL_FORMED_ENVELOPE = Case(
    name="a well formed envelope of the same shape renders and acp starts under it",
    home_files={"agents.toml": '[envelopes.bad]\nshell = { grant = "approve", timeout = "30m" }\n'},
    steps=[
        step(
            "acp",
            "--hitl-policy",
            "bad",
            stdin="",
            exit_code=0,
            notices_lacks=['render envelope "bad"'],
        )
    ],
)

RUN_MALFORMED = Case(
    name=(
        "run refuses an envelope with a malformed duration "
        "naming the envelope the axis and the value"
    ),
    home_files={
        "agents.toml": '[envelopes.bad]\nshell = { grant = "approve", timeout = "half an hour" }\n'
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
    defect=Defect(
        title="run --policy on an envelope with a malformed duration hides the parse error",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: run rc=1, only: 'Error: invalid parameter value: hitlPolicyName: "
            'hitl policy "bad" could not be loaded: it must name an existing policy (see `contenox'
            " config` / the .contenox policy files)' — no envelope/axis/value anywhere on stderr. "
            'acp rc=1: \'Error: render envelope "bad": agentdecl: [envelopes.bad]: shell.timeout is'
            ' "half an hour", which is not a duration — write it as Go writes one: 90s, 30m, 2h, '
            "or one of never, forever, indefinite …'. init also prints it as ' note: rendering "
            "envelopes f... Note: The parser does name all three (acp, init), so the defect is "
            "narrow: `run --policy` swallows the render error and prints a generic 'must name an "
            "existing policy' that names neither the cause nor where it looked. hitl.md:393-396 "
            "backs the report rather than the binary. No page found saying run's message is right."
        ),
        reproduce=(
            "in a scratch HOME, `~/.contenox/agents.toml` holding `[envelopes.bad]` `shell = { "
            'grant = "approve", timeout = "half an hour" }`; `contenox init`; `contenox run '
            '--policy bad "do the task"` exits 1 with only \'hitl policy "bad" could not be '
            "loaded: it must name an existing policy …' — no envelope, axis or value; `contenox "
            "acp --hitl-policy bad` </dev/null shows the parse error naming [envelopes.bad], "
            'shell and "half an hour"'
        ),
        promised=(
            'reference/agents-config.md:407-408 "A malformed duration is refused at '
            'parse time, naming the envelope, the axis and the value"'
        ),
        observed="'hitl policy \"bad\" could not be loaded: it must name an existing policy'",
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


def _rendered(instance: Instance, name: str) -> dict[str, Any]:
    """The render of envelope ``name``: the workspace's .generated/ first, then the global one."""
    for base in (instance.work / ".contenox", instance.home / ".contenox"):
        path = base / ".generated" / f"hitl-policy-{name}.json"
        if path.exists():
            data = json.loads(path.read_text())
            assert isinstance(data, dict)
            return data
    raise AssertionError(f"no render of envelope {name!r} in either .generated/")


def _rules(instance: Instance, name: str) -> list[dict[str, Any]]:
    """The rules of envelope ``name``'s render, in order."""
    rules = _rendered(instance, name)["rules"]
    assert isinstance(rules, list)
    return rules


def _rule(rules: list[dict[str, Any]], tools: str, tool: str) -> dict[str, Any]:
    return next(r for r in rules if r["tools"] == tools and r["tool"] == tool)


def _four_ways(rules: list[dict[str, Any]]) -> bool:
    shell = _rule(rules, "local_shell", "local_shell")
    deploy = _rule(rules, "deploy", "production")
    merge = _rule(rules, "github", "merge_pr")
    return (
        _rule(rules, "local_fs", "read_file")["action"] == "allow"
        and _rule(rules, "local_fs", "write_file")["action"] == "deny"
        and (shell["action"], shell["timeout_s"], shell["on_timeout"]) == ("approve", 1800, "deny")
        and (deploy["action"], deploy["timeout_s"]) == ("approve", -1)
        and "on_timeout" not in deploy
        and (merge["timeout_s"], merge["on_timeout"]) == (7200, "deny")
    )


_NOTHING_TO_DO = Script(
    turns=[
        Turn(tool_calls=[mission_report("result", "nothing to do")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

FOUR_WAYS = Case(
    name="the four ways envelope renders the documented rules",
    script=_NOTHING_TO_DO,
    home_files={"agents.toml": _FOUR_WAYS},
    steps=[
        _run_step("mine"),
        probe(
            "rules rendered for mine",
            _rules,
            "mine",
            expect=satisfies(
                _four_ways,
                "read allow, write deny, shell approve 1800s/deny, deploy approve -1 "
                "without on_timeout, merge_pr 7200s/deny",
            ),
        ),
        step("vet"),
    ],
)


def _reserved_note(render: dict[str, Any]) -> bool:
    rules = render["rules"]
    return (
        "//reserved" in render
        and all("timeout_s" not in r for r in rules)
        and all(r["tools"] not in ("native-web", "web") for r in rules)
    )


RESERVED_NOTE = [
    Case(
        name=f"what a render cannot carry it states in a reserved note ({variant})",
        script=_NOTHING_TO_DO,
        home_files={"agents.toml": toml},
        steps=[
            _run_step("note"),
            probe(
                "render of note",
                _rendered,
                "note",
                expect=satisfies(_reserved_note, "a //reserved note, no timeout_s, no web rule"),
            ),
        ],
    )
    for variant, toml in (
        (
            "default_action wait",
            '[envelopes.note]\ndefault_action = { grant = "approve", timeout = "30m", '
            'on_timeout = "deny" }\n',
        ),
        (
            "network axis",
            '[envelopes.note]\ndefault_action = "allow"\n[envelopes.note.network.read]\n'
            'grant = "deny"\ndeny_hosts = ["example.com"]\n',
        ),
    )
]


# ----------------------------------------------------------------- renders, read back
#
# `contenox acp` renders every declared envelope at startup and, with its
# stdin closed, exits; acp reads the global agents.toml, so these envelopes
# are appended there. The render is the file hitl.md tells a person to read
# "when you want to know what a rendered envelope actually did".


def _render_case(name: str, toml: str, *checks: Probe) -> Case:
    """Append ``toml`` to the global agents.toml, let ``acp`` render it, then ``checks``."""
    return Case(
        name=name,
        steps=[
            edit("agents.toml", append="\n" + toml, under="contenox"),
            step("acp", stdin=""),
            *checks,
        ],
    )


def _schema(instance: Instance, name: str) -> str:
    """The ``$schema`` envelope ``name``'s render names."""
    return str(_rendered(instance, name).get("$schema", ""))


SCHEMA = _render_case(
    "every render carries the policy schema",
    '[envelopes.plain]\ndefault_action = "deny"\n',
    probe(
        "$schema of plain",
        _schema,
        "plain",
        expect=satisfies(
            lambda s: s.endswith("hitl-policy-v1.schema.json"), "hitl-policy-v1.schema.json"
        ),
    ),
)

_SHIPPED = ["read_only", "ask_always", "auto_edit", "default", "strict", "acpx", "oracle", "serve"]


def _unrendered(instance: Instance) -> list[str]:
    """The shipped envelopes with no render in ~/.contenox/.generated/."""
    generated = instance.home / ".contenox" / ".generated"
    return [n for n in _SHIPPED if not (generated / f"hitl-policy-{n}.json").exists()]


SHIPPED_RENDERED = Case(
    name="the eight shipped envelopes are rendered into generated",
    steps=[step("acp", stdin=""), probe("shipped envelopes not rendered", _unrendered, expect=[])],
)


def _shell_tiers(instance: Instance, name: str) -> list[tuple[str, str]]:
    """Each local_shell rule of the render, as (its condition's op or "grant", its action)."""
    shell = [r for r in _rules(instance, name) if r["tool"] == "local_shell"]
    return [(r["when"][0]["op"] if r.get("when") else "grant", r["action"]) for r in shell]


SHELL_TIERS = _render_case(
    "the shell tiers render in the documented order",
    "[envelopes.tiers.shell]\n"
    'grant = "approve"\n'
    'ask_always = ["rm"]\n'
    'prefix_allowlist = ["go test"]\n'
    'substitution = "deny"\n'
    'blacklist = ["mkfs"]\n',
    probe(
        "shell rules of tiers",
        _shell_tiers,
        "tiers",
        expect=[
            ("command_blacklist", "deny"),
            ("no_command_substitution", "deny"),
            ("command_prefix_allowlist", "allow"),
            ("command_ask_always", "approve"),
            ("grant", "approve"),
        ],
    ),
)


def _fs_rules(instance: Instance, name: str) -> list[dict[str, Any]]:
    return [r for r in _rules(instance, name) if r["tools"] == "local_fs"]


def _waits_and_floor(writes: list[dict[str, Any]]) -> bool:
    asks = [r for r in writes if r["action"] == "approve"]
    floor = [r for r in writes if r["action"] == "allow"]
    return (
        bool(asks)
        and all((r["timeout_s"], r["on_timeout"]) == (600, "deny") for r in asks)
        and bool(floor)
        and all("timeout_s" not in r for r in floor)
    )


APPROVE_PATHS_WAIT = _render_case(
    "approve paths under an allow grant carry the wait and the allow floor none",
    "[envelopes.paths.files.write]\n"
    'grant = "allow"\n'
    'approve_paths = ["**/*.pem"]\n'
    'timeout = "10m"\n'
    'on_timeout = "deny"\n',
    probe(
        "local_fs rules of paths",
        _fs_rules,
        "paths",
        expect=satisfies(
            _waits_and_floor, "approve rules waiting 600s then deny, allow rules with no wait"
        ),
    ),
)


def _attention(render: dict[str, Any]) -> bool:
    attention = render.get("attention")
    return (
        isinstance(attention, dict)
        and (attention.get("allowAgentAnswers"), attention.get("maxAgentAnswers")) == (True, 2)
        and not attention.get("allowAgentApprovals")
        and all(r["tools"] != "mission" for r in render["rules"])
    )


MISSIONS_ANSWER_ATTENTION = _render_case(
    "missions answer renders an attention block and an explicit key wins",
    '[envelopes.answers]\nmissions.answer = "allow"\n'
    "[envelopes.answers.attention]\nmax_agent_answers = 2\n",
    probe(
        "render of answers",
        _rendered,
        "answers",
        expect=satisfies(
            _attention,
            "attention allowing 2 agent answers, no agent approvals, no mission rule",
        ),
    ),
)


def _conditioned(instance: Instance, name: str) -> list[str]:
    """The glob of every conditioned rule of the render."""
    return [r["when"][0]["value"] for r in _rules(instance, name) if r.get("when")]


CHILD_LIST_REPLACES = _render_case(
    "a child's list replaces the parent's and a bare axis replaces the whole axis",
    "[envelopes.base.files.write]\n"
    'grant = "allow"\n'
    'deny_paths = ["**/a", "**/b"]\n'
    '[envelopes.narrow]\nextends = "base"\n'
    "[envelopes.narrow.files.write]\n"
    'grant = "allow"\n'
    'deny_paths = ["**/c"]\n'
    '[envelopes.bare]\nextends = "base"\nfiles.write = "allow"\n',
    # One rule per glob and per tool of the axis (write_file, edit_file, sed).
    probe(
        "conditioned globs of narrow",
        _conditioned,
        "narrow",
        expect=satisfies(lambda globs: set(globs) == {"**/c"}, "only **/c"),
    ),
    probe("conditioned globs of bare", _conditioned, "bare", expect=[]),
)


def _first_two(instance: Instance, name: str) -> list[tuple[str, str]]:
    """The first two rules of the render, as (glob, action)."""
    return [(r["when"][0]["value"], r["action"]) for r in _rules(instance, name)[:2]]


ALWAYS_DENY_ACCUMULATES = _render_case(
    "always_deny accumulates parent first ahead of every grant",
    '[envelopes.top]\nfiles.read = "allow"\n'
    "[[envelopes.top.always_deny]]\n"
    'tools = "local_fs"\ntool = "*"\nwhen_key = "path"\nwhen_op = "glob"\n'
    'when_value = "**/parent-secret"\n'
    '[envelopes.sub]\nextends = "top"\n'
    "[[envelopes.sub.always_deny]]\n"
    'tools = "local_fs"\ntool = "*"\nwhen_key = "path"\nwhen_op = "glob"\n'
    'when_value = "**/child-secret"\n',
    probe(
        "first two rules of sub",
        _first_two,
        "sub",
        expect=[("**/parent-secret", "deny"), ("**/child-secret", "deny")],
    ),
)


def _plain_shell_actions(instance: Instance, name: str) -> list[str]:
    """The action of each unconditioned local_shell rule of the render."""
    return [
        r["action"]
        for r in _rules(instance, name)
        if r["tool"] == "local_shell" and not r.get("when")
    ]


# The shipped auto_edit envelope keeps the shell on approve; a posture block
# granting it must not reach the render.
POSTURE_NAME_WINS = _render_case(
    "an envelope of a posture's name wins over the policy postures block",
    '[policy.postures.auto_edit]\nlocal_fs_read = "allow"\nlocal_fs_write = "allow"\n'
    'local_shell = "allow"\n',
    probe(
        "unconditioned shell rules of auto_edit",
        _plain_shell_actions,
        "auto_edit",
        expect=["approve"],
    ),
)


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

# The control: only the name changed, inside the pattern; the same start says nothing of it.
ENVELOPE_NAME_IN_THE_PATTERN = Case(
    name="an envelope name inside the name pattern is not refused",
    home_files={"agents.toml": '[envelopes.bad]\ndefault_action = "deny"\n'},
    steps=[step("acp", stdin="", notices_lacks=["[envelopes.bad]", "name must match"])],
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

ACP_AUTO = Case(
    name="acp auto runs a gated call without a permission request",
    script=_WRITE_TURN,
    steps=[
        prompt(
            "write the file",
            acp_args=["--auto"],
            permission="deny",
            permission_requests=0,
        ),
        workspace_file("out.txt", expect=CONTENT),
    ],
)

CONFIG_POLICY_NAME = Case(
    name="config hitl policy name selects the policy acp runs under",
    script=_WRITE_TURN,
    steps=[
        write(
            "hitl-policy-locked.json",
            _policy("allow", ("local_fs", "write_file", "deny")),
            home=True,
        ),
        step("config", "set", "hitl-policy-name", "hitl-policy-locked.json"),
        step("config", "get", "hitl-policy-name", stdout_has=["hitl-policy-locked.json"]),
        prompt("write the file", permission="allow", permission_requests=0),
        workspace_file("out.txt", expect=None),
    ],
    defect=Defect(
        title="contenox acp ignores hitl-policy-name set with config set",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: config get hitl-policy-name: 'hitl-"
            "policy-locked.json  (workspace)'; contenox acp raised "
            "session/request_permission with _meta policyName 'hitl-policy-"
            "default.json'; the session's hitl-policy currentValue "
            "'__contenox_default__'; out.txt written after allow Note: I added a "
            "minimal stdio ACP client that answers permission requests with an "
            "allow option and fs/write_text_file by writing the file; the dialog "
            "was general / write_file{path:out.txt,content:x} / Done. contenox-"
            "cli.md:432 also says hitl-policy-name is the envelope the workspace "
            "runs under, overridden only by --hitl-policy."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `~/.contenox/hitl-policy-locked.json` holding "
            '`{"default_action": "allow", "rules": [{"tools": "local_fs", "tool": "write_file", '
            '"action": "deny"}]}`; `contenox config set hitl-policy-name hitl-policy-locked.json` '
            "(`config get hitl-policy-name` prints it); a scripted-test default backend whose "
            "dialog is `general`, `write_file {path: out.txt}`, `Done.`; `contenox acp` prompted "
            "'write the file' by an ACP client: it raises session/request_permission whose _meta "
            "names policyName 'hitl-policy-default.json', and out.txt is written once allowed"
        ),
        promised=(
            'guide/hitl.md:368-369 "The config key writes to the KV store and takes '
            "effect immediately — no restart required. It applies to all subsequent "
            'invocations in the same workspace."'
        ),
        observed="a permission request under hitl-policy-default.json; the file written",
    ),
)

# Its controls: the same policy file in effect, named by `acp --hitl-policy`, refuses
# the write with no permission request; turned to allow (only the rule changed), the
# write lands with none. So the quarantine above fails only on how the file is selected.
FLAG_POLICY_NAME = [
    Case(
        name=f"acp hitl policy names the same policy file and its write rule {verdict}",
        script=_WRITE_TURN,
        steps=[
            write(
                "hitl-policy-locked.json",
                _policy("allow", ("local_fs", "write_file", action)),
                home=True,
            ),
            prompt(
                "write the file",
                permission="allow",
                permission_requests=0,
                acp_args=["--hitl-policy", "hitl-policy-locked.json"],
            ),
            workspace_file("out.txt", expect=expect),
        ],
    )
    for verdict, action, expect in (
        ("refuses it", "deny", None),
        ("turned to allow lets it land", "allow", CONTENT),
    )
]

# default asks about a write; a fail-open fallback would write unasked.
# The control: the same card allowed (only the answer changed); the write lands, so the
# file's absence above is the card's refusal.
UNRESOLVABLE_POLICY_NAME = [
    Case(
        name=name,
        script=_WRITE_TURN,
        steps=[
            step("config", "set", "hitl-policy-name", "hitl-policy-nosuch.json"),
            prompt("write the file", permission=permission, permission_requests=1),
            workspace_file("out.txt", expect=written),
        ],
    )
    for name, permission, written in (
        ("an unresolvable hitl policy name falls back to the default envelope", "deny", None),
        (
            "under the same fallback the card allowed lets the write land",
            "allow",
            CONTENT,
        ),
    )
]


# function: a second process answers the card while the prompt is still open
def test_a_card_nobody_answers_is_not_a_denial_and_a_terminal_can_answer_it(
    instance: Instance,
) -> None:
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

_EQ_POLICY = {
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

EQ_CONDITION = _landed(
    "an eq condition gates only the call whose argument equals the value",
    "eq",
    _mission(ToolCall("echo", {"input": "forbidden word"}), ECHO),
    _results(
        lambda rs: _refused(rs[0]) and rs[1] == ECHOED, "the first echo refused, not the second"
    ),
    before=[write("hitl-policy-eq.json", json.dumps(_EQ_POLICY), home=True)],
)

# The control is the same ask approved: ls runs and its listing reaches the unit.
STRICT_ASKS_LS = [
    _asked(
        name,
        "strict",
        _mission(ToolCall("local_shell", {"command": "ls"})),
        await_ask("ask", tool="local_shell.local_shell", kind="permission", timeout=60),
        verdict,
        _results(check, what),
        files={"marker.txt": "a file ls lists\n"},
    )
    for name, verdict, check, what in (
        (
            "strict asks about every command line including ls",
            "deny",
            lambda rs: _person_denied(rs[0]) and "marker.txt" not in rs[0],
            "the ls refused, no listing",
        ),
        (
            "strict asks about ls and once approved it runs",
            "approve",
            lambda rs: "marker.txt" in rs[0] and not _refused(rs[0]),
            "the listing naming marker.txt",
        ),
    )
]

# The control: the same edit with the grants swapped. The stale render allows the write
# (and the broken edit would deny it), so the write landing says the stale render gates,
# not a render that fails closed.
STALE_RENDER = [
    Case(
        name=name,
        script=_mission(_write("out.txt")),
        home_files={
            "agents.toml": (f'[envelopes.stale]\ndefault_action = "allow"\nfiles.write = "{was}"\n')
        },
        steps=[
            _run_step("stale"),
            *between,
            edit(
                "agents.toml",
                replace={f'files.write = "{was}"\\n': f'files.write = "{now}"\\nbogus = 1\\n'},
                under="contenox",
            ),
            step(
                "run",
                "--policy",
                "stale",
                "--timeout",
                "90s",
                TASK,
                timeout=150,
                stderr_has=['unknown key "bogus"'],
            ),
            # The stale render still gates.
            workspace_file("out.txt", expect=written),
        ],
    )
    for name, was, now, between, written in (
        (
            "a render that fails is reported and the stale render still gates",
            "deny",
            "allow",
            (),
            None,
        ),
        (
            "a render that fails leaves the same stale render allowing the write and it lands",
            "allow",
            "deny",
            # The first run wrote the file; it goes, so the second run's write is what shows.
            (workspace_file("out.txt", expect=CONTENT), remove("out.txt")),
            CONTENT,
        ),
    )
]

KEY_STORE_QUARANTINE = _landed(
    "the credential quarantine denies a key store read under the most permissive posture",
    "auto_edit",
    _mission(_read("notes.txt"), _read(".ssh/id_ed25519")),
    _results(
        lambda rs: "plain notes" in rs[0] and _refused(rs[1]) and "PRIVATE KEY" not in rs[1],
        "the notes read, the key refused and its text withheld",
    ),
    files={
        "notes.txt": "plain notes\n",
        ".ssh/id_ed25519": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    },
)
