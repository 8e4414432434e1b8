"""What decides whether a shell line or a file call runs: shell tiers, hard bounds, the quarantine.

guide/confinement/guardrails.md and sandbox.md: the envelope's ``shell`` axis
reads a line in tiers (blacklist, substitution, prefix_allowlist,
ask_always, then the grant), ``tools_policies.local_shell._allowed_commands``
is a hard outer bound no approval crosses, and the credential quarantine
denies key stores and shell history under every shipped posture.

Each case fires a real ``run`` whose scripted unit makes one call, and reads
the verdict where a person would: an ask in ``approvals list`` (then denied,
so the run ends), or a run that ended without one, with the call's recorded
tool result (``session show``) saying whether it ran or was refused.

Every case that shows a gate refusing, asking or withholding has a control
beside it (or named in a comment by it): the same call, the same scratch
layout, only the gate changed (the envelope, the allowlist entry, the path's
quarantine, the profile), and the call runs with its effect seen.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

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
    defect,
    edit,
    mission_finish,
    open_acp,
    probe,
    prompt,
    respond,
    route,
    satisfies,
    step,
    wait,
    write,
)
from harness.case import Action, Edit, Predicate, Probe
from harness.probes import (
    MissionDetail,
    approvals,
    deny,
    mission,
    missions,
    session_records,
    transcript,
)
from harness.process import start_contenox

_ASK_OR_END = re.compile(r'subject="ask raised"|finished: \w+|did not finish within')


def _one_call(name: str, arguments: dict[str, Any]) -> Script:
    return Script(
        turns=[
            Turn(text="Working.", tool_calls=[ToolCall(name, arguments)]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _tool_result(instance: Instance) -> str:
    """The first tool result the run's unit recorded (``session list --all``, ``session show``)."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    results = [m.content for m in transcript(instance, unit.id).messages if m.role == "tool"]
    assert results, f"the unit recorded no tool result at all: {unit}"
    return results[0]


def _result(check: Callable[[str], bool], message: str) -> Probe:
    return probe("the call's tool result", _tool_result, expect=satisfies(check, message))


_RUN = ("run", "--policy")


def _asks(
    name: str,
    policy: str,
    call: str,
    arguments: dict[str, Any],
    *,
    before: Sequence[Action] = (),
    after: Sequence[Action] = (),
    **case: Any,
) -> Case:
    """A mission whose one call asks: the ask is denied (so the run ends), then ``after`` runs."""
    return Case(
        name=name,
        script=_one_call(call, arguments),
        steps=[
            *before,
            background("run", *_RUN, policy, "--timeout", "90s", "do the task"),
            await_ask("ask", timeout=90),
            respond("ask", "deny"),
            wait("run", exit_code=None),
            *after,
        ],
        **case,
    )


def _unasked(
    name: str,
    policy: str,
    call: str,
    arguments: dict[str, Any],
    *,
    before: Sequence[Action] = (),
    after: Sequence[Action] = (),
    **case: Any,
) -> Case:
    """A mission whose one call runs or is refused without raising an ask; then ``after``."""
    return Case(
        name=name,
        script=_one_call(call, arguments),
        steps=[
            *before,
            step(
                *_RUN,
                policy,
                "--timeout",
                "90s",
                "do the task",
                exit_code=None,
                stderr_lacks=['subject="ask raised"'],
                timeout=120,
            ),
            *after,
        ],
        **case,
    )


def _shell_args(command: str, *args: str, shell: bool = False) -> dict[str, Any]:
    arguments: dict[str, Any] = {"command": command}
    if args:
        arguments["args"] = list(args)
    if shell:
        arguments["shell"] = True
    return arguments


def _ran(result: str) -> bool:
    return '"exit_code"' in result and not _refused(result)


def _refused(result: str) -> bool:
    return "denied" in result.lower()


# While either of tools_policies.local_shell's allow and deny lists is set,
# local_shell refuses `shell: true` outright ("strictly forbidden when security
# policies … are active"), so a line with a redirect or a substitution never
# reaches the envelope's shell tiers: these cases clear both in agents.toml.
WITHOUT_SHELL_HARD_BOUNDS = edit(
    "agents.toml",
    replace={
        r'(?m)^_allowed_commands = ".*"$': '_allowed_commands = ""',
        r'(?m)^_denied_commands = ".*"$': '_denied_commands = ""',
    },
    under="contenox",
)

OPEN_POLICY = write(
    "hitl-policy-open.json", '{"version": 1, "default_action": "allow", "rules": []}\n', home=True
)


def _envelope(text: str) -> Edit:
    """Append envelope tables to the global agents.toml ``init`` wrote; each run renders them."""
    return edit("agents.toml", append="\n" + text, under="contenox")


# --- the shell tiers

ALLOWLISTED_LS = _unasked(
    "under the default envelope an allowlisted ls runs without asking",
    "default",
    "local_shell",
    _shell_args("ls"),
    files={"visible-file.txt": "x"},
    after=[_result(lambda r: "visible-file.txt" in r, "the listing names visible-file.txt")],
)

RM_ASKS = _asks(
    "under the default envelope rm asks although a shell may run other verbs",
    "default",
    "local_shell",
    _shell_args("rm", "-f", "keep-me.txt"),
    files={"keep-me.txt": "x"},
    after=[workspace_file("keep-me.txt", expect="x")],
)

BLACKLISTED_MKFS = _unasked(
    "under the default envelope a blacklisted mkfs is refused without asking",
    "default",
    "local_shell",
    _shell_args("mkfs", "--version"),
    # Without the hard deny list, which also names mkfs: this is the envelope's blacklist.
    before=[WITHOUT_SHELL_HARD_BOUNDS],
    after=[_result(lambda r: _refused(r) and not _ran(r), "a refusal, the line not run")],
)

# Controls of RM_ASKS, BLACKLISTED_MKFS, REDIRECT_ASKS and SUBSTITUTION_ASKS: SHELL_TIER_CONTROLS.
REDIRECT_ASKS = _asks(
    "a redirect takes the prefix allowlist off the table and the line asks",
    "default",
    "local_shell",
    _shell_args("echo hi > written.txt", shell=True),
    before=[WITHOUT_SHELL_HARD_BOUNDS],
    after=[workspace_file("written.txt", expect=None)],
)

SUBSTITUTION_ASKS = _asks(
    "a command substitution asks whatever verb the line starts with",
    "default",
    "local_shell",
    _shell_args("echo $(pwd)", shell=True),
    before=[WITHOUT_SHELL_HARD_BOUNDS],
)

# Its control is ALLOWLISTED_LS: the same ls under default runs unasked.
STRICT_LS_ASKS = _asks(
    "under strict the shell has no allowlist tier and even ls asks",
    "strict",
    "local_shell",
    _shell_args("ls"),
    files={"visible-file.txt": "x"},
)

# Controls of the three default-envelope lines above that ask or are refused: the
# same line, the same hard bounds and files, under a policy that allows every call
# (hitl-policy-open.json). Only the envelope differs, and each line runs.
SHELL_TIER_CONTROLS = [
    _unasked(
        "under an envelope allowing every call the same rm runs and removes the file",
        "open",
        "local_shell",
        _shell_args("rm", "-f", "keep-me.txt"),
        files={"keep-me.txt": "x"},
        before=[OPEN_POLICY],
        after=[_result(_ran, "the line run"), workspace_file("keep-me.txt", expect=None)],
    ),
    _unasked(
        "under an envelope allowing every call the same mkfs line runs",
        "open",
        "local_shell",
        _shell_args("mkfs", "--version"),
        before=[WITHOUT_SHELL_HARD_BOUNDS, OPEN_POLICY],
        after=[_result(lambda r: _ran(r) and "mkfs from" in r, "mkfs's version printed")],
        redact={r"util-linux [0-9][0-9.]*": "util-linux [VERSION]"},
    ),
    _unasked(
        "under an envelope allowing every call the same redirect writes its file",
        "open",
        "local_shell",
        _shell_args("echo hi > written.txt", shell=True),
        before=[WITHOUT_SHELL_HARD_BOUNDS, OPEN_POLICY],
        after=[_result(_ran, "the line run"), workspace_file("written.txt", expect="hi\n")],
    ),
    _unasked(
        "under an envelope allowing every call the same substitution runs",
        "open",
        "local_shell",
        _shell_args("echo $(pwd)", shell=True),
        before=[WITHOUT_SHELL_HARD_BOUNDS, OPEN_POLICY],
        after=[_result(lambda r: _ran(r) and "/work" in r, "the workspace path echoed")],
    ),
]

OFF_ALLOWED_COMMANDS = _unasked(
    "a command off allowed commands is refused even where the envelope allows everything",
    "open",
    "local_shell",
    _shell_args("id"),
    before=[OPEN_POLICY],
    after=[
        # The refusal names what is allowed, so nobody asks for an approval that cannot widen it.
        _result(
            lambda r: not _ran(r) and "ls" in r and "git" in r,
            "the line not run, and the refusal naming ls and git as allowed",
        )
    ],
)

# The control: the same call under the same envelope, id added to _allowed_commands.
ON_ALLOWED_COMMANDS = _unasked(
    "a command added to allowed commands runs where the envelope allows everything",
    "open",
    "local_shell",
    _shell_args("id"),
    before=[
        OPEN_POLICY,
        edit(
            "agents.toml",
            replace={r'(?m)^_allowed_commands = "': '_allowed_commands = "id,'},
            under="contenox",
        ),
    ],
    after=[_result(lambda r: _ran(r) and "uid=" in r, "id's output")],
    redact={r"uid=[^\"]*": "uid=[ID]"},
)


# --- the credential quarantine


# function: the key sits in the scratch $HOME/.ssh and the scripted call names its absolute
# path, which a dialog (written before the steps, without placeholders) cannot hold
@pytest.mark.parametrize("envelope", ["auto_edit", "default", "strict"])
def test_the_credential_quarantine_denies_reading_an_ssh_key_under_every_posture(
    instance: Instance, envelope: str
) -> None:
    instance.init()
    key = instance.home / ".ssh" / "id_ed25519"
    key.parent.mkdir()
    key.write_text("PRIVATE-KEY-MATERIAL\n")
    instance.use_script(_one_call("read_file", {"path": str(key)}))
    run = start_contenox(instance, "run", "--policy", envelope, "--timeout", "90s", "do the task")
    run.wait_for_output(_ASK_OR_END, stream="stderr", timeout=90)
    pending = approvals(instance)
    for ask in pending:
        deny(instance, ask.id)
    run.wait(timeout=90)
    result = _tool_result(instance)
    assert not pending, pending
    # The envelope's rule refused it, not the file tool's own wall (a read outside the
    # workspace says "escapes allowed directory"): KEY_IN_THE_WORKSPACE is its control.
    assert "Denied by the active policy" in result, result
    assert "PRIVATE-KEY-MATERIAL" not in result, result


# The same key text read through a relative path in the workspace, under every posture:
# under .ssh/ it is refused; the control, the one dot dropped (ssh/), is read.
KEY_IN_THE_WORKSPACE = [
    _unasked(
        f"the credential quarantine {verdict} under {envelope}",
        envelope,
        "read_file",
        {"path": f"{directory}/deploy-key"},
        files={f"{directory}/deploy-key": "PRIVATE-KEY-MATERIAL\n"},
        after=[_result(check, what)],
    )
    for envelope in ("auto_edit", "default", "strict")
    for directory, verdict, check, what in (
        (
            ".ssh",
            "denies reading a key under a workspace .ssh",
            lambda r: _refused(r) and "PRIVATE-KEY-MATERIAL" not in r,
            "a refusal, the key withheld",
        ),
        (
            "ssh",
            "lets the same key text be read outside .ssh",
            lambda r: "PRIVATE-KEY-MATERIAL" in r,
            "the key text",
        ),
    )
]


SHELL_HISTORY = _unasked(
    "the credential quarantine denies reading shell history",
    "auto_edit",
    "read_file",
    {"path": ".bash_history"},
    files={".bash_history": "export API_TOKEN=typed-once\n"},
    after=[
        _result(lambda r: _refused(r) and "typed-once" not in r, "a refusal, the content withheld")
    ],
)

# The control: the same text under a name no quarantine glob matches is read.
SHELL_HISTORY_CONTROL = _unasked(
    "the same text under a name no quarantine matches is read",
    "auto_edit",
    "read_file",
    {"path": "bash_history.txt"},
    files={"bash_history.txt": "export API_TOKEN=typed-once\n"},
    after=[_result(lambda r: "typed-once" in r, "the file's content")],
)

DOT_ENV_ASKS = _asks(
    "reading a dot env asks rather than proceeding",
    "default",
    "read_file",
    {"path": ".env"},
    files={".env": "STRIPE_SECRET_KEY=sk-live\n"},
    after=[_result(lambda r: "sk-live" not in r, "the secret withheld")],
)

# The control: the same text under a name approve_paths does not match is read unasked.
DOT_ENV_CONTROL = _unasked(
    "the same text in a file approve paths does not name is read without asking",
    "default",
    "read_file",
    {"path": "env.txt"},
    files={"env.txt": "STRIPE_SECRET_KEY=sk-live\n"},
    after=[_result(lambda r: "sk-live" in r, "the file's content")],
)


# --- fail closed

UNKNOWN_DEFAULT_ACTION = Case(
    name="an unknown default_action refuses to load the policy",
    script=_one_call("local_shell", {"command": "ls"}),
    steps=[
        write(
            "hitl-policy-typo.json",
            '{"version": 1, "default_action": "alow", "rules": []}\n',
            home=True,
        ),
        step(*_RUN, "typo", "--timeout", "30s", "do the task", exit_code="non-zero"),
        step(
            "vet",
            "{home}/.contenox/hitl-policy-typo.json",
            exit_code="non-zero",
            stdout_has=["default_action"],
        ),
    ],
)

# The control: the same file, default_action spelled right, loads and the ls runs.
KNOWN_DEFAULT_ACTION = Case(
    name="the same policy with default_action spelled right loads and the call runs",
    script=_one_call("local_shell", {"command": "ls"}),
    steps=[
        write(
            "hitl-policy-typo.json",
            '{"version": 1, "default_action": "allow", "rules": []}\n',
            home=True,
        ),
        step(*_RUN, "typo", "--timeout", "30s", "do the task", timeout=60),
        step("vet", "{home}/.contenox/hitl-policy-typo.json"),
        _result(_ran, "the line run"),
    ],
)


# --- what the wall does not cover

EDITOR_SHELL = Case(
    name="over acp local_shell runs in the editor's terminal outside any wall",
    script=Script(
        turns=[
            route(),
            Turn(
                tool_calls=[
                    ToolCall(
                        "local_shell",
                        {"command": "cat", "args": ["../home/outside-the-workspace.txt"]},
                    )
                ]
            ),
            "Read it.",
        ]
    ),
    steps=[
        edit("outside-the-workspace.txt", append="reachable from the editor shell\n", under="home"),
        # The editor ran it: contenox forwarded the line instead of spawning it behind a fence.
        prompt(
            "read the file",
            permission="allow",
            terminal_commands=["cat ../home/outside-the-workspace.txt"],
            tool_output_has=["reachable from the editor shell"],
        ),
    ],
)


# function: opens `contenox acpx`; prompt() opens `contenox acp` only
def test_the_hardened_acpx_profile_refuses_local_shell_outright(instance: Instance) -> None:
    instance.init()
    instance.use_script(
        # acpx's chain has no route task: the first call is the chat turn itself.
        Script(
            turns=[
                Turn(tool_calls=[ToolCall("local_shell", {"command": "ls"})]),
                "Done.",
            ]
        )
    )
    with open_acp(instance, subcommand="acpx", permission="allow") as acp:
        turn = acp.prompt("list the files")
    assert turn.permission_requests == [], turn.describe()
    assert turn.terminal_commands == [], turn.describe()
    assert "Denied by the active policy" in str(turn.tool_outputs), turn.describe()


# function: the control of the acpx case above, read the same way from its PromptTurn
def test_the_acp_profile_forwards_the_same_local_shell_to_the_editor(instance: Instance) -> None:
    instance.init()
    # acp's chain opens with a route task; the call is the same.
    instance.use_script(
        Script(
            turns=[route(), Turn(tool_calls=[ToolCall("local_shell", {"command": "ls"})]), "Done."]
        )
    )
    with open_acp(instance, subcommand="acp", permission="allow") as acp:
        turn = acp.prompt("list the files")
    assert turn.terminal_commands == ["ls"], turn.describe()
    assert "Denied by the active policy" not in str(turn.tool_outputs), turn.describe()


COMPOUND_LINE = _unasked(
    "a compound line of allowlisted verbs is read structurally and runs without asking",
    "default",
    "local_shell",
    _shell_args("echo first && echo second", shell=True),
    before=[WITHOUT_SHELL_HARD_BOUNDS],
    after=[_result(lambda r: "first" in r and "second" in r, "both echoes' output")],
)

UNIT_SHELL_UNWALLED = _unasked(
    "a run unit's shell is not walled off from files outside the workspace",
    "open",
    "local_shell",
    _shell_args("cat", "../home/outside-the-workspace.txt"),
    before=[
        OPEN_POLICY,
        edit("outside-the-workspace.txt", append="reachable from the unit shell\n", under="home"),
    ],
    after=[_result(lambda r: "reachable from the unit shell" in r, "the outside file's text")],
)


# --- envelopes (guardrails.md)

UNSET_AXIS_DENY = _unasked(
    "an axis left unset takes default_action deny",
    "noshell",
    "local_shell",
    _shell_args("ls"),
    before=[
        _envelope(
            '[envelopes.noshell]\ndefault_action = "deny"\nfiles.read = "allow"\n'
            'missions.fire = "allow"\n'
        )
    ],
    after=[_result(_refused, "a refusal")],
)

# The control of the deny and approve cases: the same envelope, default_action allow.
UNSET_AXIS_ALLOW = _unasked(
    "an axis left unset takes default_action allow and the line runs",
    "allowshell",
    "local_shell",
    _shell_args("ls"),
    before=[
        _envelope(
            '[envelopes.allowshell]\ndefault_action = "allow"\nfiles.read = "allow"\n'
            'missions.fire = "allow"\n'
        )
    ],
    after=[_result(_ran, "the line run")],
)

UNSET_AXIS_APPROVE = _asks(
    "an axis left unset takes default_action approve",
    "askshell",
    "local_shell",
    _shell_args("ls"),
    before=[
        _envelope(
            '[envelopes.askshell]\ndefault_action = "approve"\nfiles.read = "allow"\n'
            'missions.fire = "allow"\n'
        )
    ],
)

UNANSWERED_TIMEOUT = Case(
    name="an ask with a timeout nobody answers is denied and the run moves on",
    script=_one_call("local_shell", {"command": "rm", "args": ["keep-me.txt"]}),
    files={"keep-me.txt": "x"},
    steps=[
        _envelope(
            '[envelopes.shortwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
            'shell = { grant = "approve", timeout = "3s", on_timeout = "deny" }\n'
        ),
        # Nobody answers: the ask must resolve itself to a denial and the mission land.
        step(*_RUN, "shortwait", "--timeout", "90s", "do the task", timeout=120),
        workspace_file("keep-me.txt", expect="x"),
        _result(_refused, "a refusal"),
    ],
)

# The control: the same envelope with the shell granted; the same rm runs.
UNASKED_RM_RUNS = Case(
    name="the same envelope granting the shell runs the same rm",
    script=_one_call("local_shell", {"command": "rm", "args": ["keep-me.txt"]}),
    files={"keep-me.txt": "x"},
    steps=[
        _envelope(
            '[envelopes.shortwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
            'shell = "allow"\n'
        ),
        step(*_RUN, "shortwait", "--timeout", "90s", "do the task", timeout=120),
        workspace_file("keep-me.txt", expect=None),
        _result(_ran, "the line run"),
    ],
)


def _expiry(
    name: str, policy: str, expires: Callable[[str], bool], message: str, *before: Action
) -> Case:
    """A pending shell ask's "expires in", read in the inbox before the ask is denied."""
    return Case(
        name=name,
        script=_one_call("local_shell", {"command": "rm", "args": ["nothing"]}),
        steps=[
            *before,
            background("run", *_RUN, policy, "--timeout", "90s", "do the task"),
            await_ask("ask", timeout=90),
            probe(
                "pending asks",
                approvals,
                expect=satisfies(
                    lambda asks: len(asks) == 1 and expires(asks[0].expires_in), message
                ),
            ),
            respond("ask", "deny"),
            wait("run", exit_code=None),
        ],
    )


NEVER_EXPIRES = _expiry(
    "an ask with timeout never has no deadline",
    "forever",
    lambda e: e == "never",
    "one ask, expiring never",
    _envelope(
        '[envelopes.forever]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
        'shell = { grant = "approve", timeout = "never" }\n'
    ),
)

# Seven days, less the seconds gone.
SEVEN_DAY_CEILING = _expiry(
    "an ask without a timeout is bounded by the seven day approval ceiling",
    "default",
    lambda e: e == "6d",
    "one ask, expiring in 6d",
)

HOST_CEILING = _expiry(
    "an ask without a timeout is bounded by the ceiling the host sets",
    "default",
    lambda e: e in {"1h", "2h", "1h59m"},
    "one ask, expiring in about 2h",
    step("config", "set", "approval-ceiling", "2h"),
)


def _bad_wait(variant: str, grant: str) -> Case:
    return Case(
        name=f"an on_timeout other than deny or beside never is refused ({variant})",
        script=_one_call("local_shell", {"command": "ls"}),
        steps=[
            _envelope(
                f'[envelopes.badwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n{grant}\n'
            ),
            step(
                *_RUN,
                "badwait",
                "--timeout",
                "30s",
                "do the task",
                exit_code="non-zero",
                stderr_has=["badwait"],
            ),
        ],
    )


# Controls: GOOD_ON_TIMEOUT below (on_timeout deny loads, the ask times out to a denial)
# and NEVER_EXPIRES (timeout never alone loads, the ask has no deadline).
BAD_ON_TIMEOUT = [
    _bad_wait(
        "on_timeout allow", 'shell = { grant = "approve", timeout = "30m", on_timeout = "allow" }'
    ),
    _bad_wait(
        "never with on_timeout",
        'shell = { grant = "approve", timeout = "never", on_timeout = "deny" }',
    ),
]

# The direct control: the same envelope and call, on_timeout deny; it loads, the ls asks,
# nobody answers, the ask times out to a denial and the run lands.
GOOD_ON_TIMEOUT = Case(
    name="an on_timeout of deny beside a timeout loads and the run goes on",
    script=_one_call("local_shell", {"command": "ls"}),
    steps=[
        _envelope(
            '[envelopes.badwait]\ndefault_action = "deny"\nmissions.fire = "allow"\n'
            'shell = { grant = "approve", timeout = "3s", on_timeout = "deny" }\n'
        ),
        step(*_RUN, "badwait", "--timeout", "90s", "do the task", timeout=120),
        _result(lambda r: "timed out" in r, "the ask timed out to a denial"),
    ],
)

COMPUTE_TYPO = Case(
    name="a typo inside compute refuses to load the policy",
    script=_one_call("local_shell", {"command": "ls"}),
    steps=[
        write(
            "hitl-policy-typo.json",
            '{"version": 1, "default_action": "allow", "rules": [], '
            '"compute": {"maxToolCals": 3}}\n',
            home=True,
        ),
        step(*_RUN, "typo", "--timeout", "30s", "do the task", exit_code="non-zero"),
    ],
)

# The control: maxToolCalls spelled right loads and the ls runs.
COMPUTE_SPELLED_RIGHT = Case(
    name="the same compute block spelled right loads and the call runs",
    script=_one_call("local_shell", {"command": "ls"}),
    steps=[
        write(
            "hitl-policy-typo.json",
            '{"version": 1, "default_action": "allow", "rules": [], '
            '"compute": {"maxToolCalls": 3}}\n',
            home=True,
        ),
        step(*_RUN, "typo", "--timeout", "30s", "do the task", timeout=60),
        _result(_ran, "the line run"),
    ],
)


def _model_allowlist(name: str, allowlist: str, *after: Action, **case: Any) -> Case:
    return Case(
        name=name,
        script=_one_call("local_shell", {"command": "ls"}),
        steps=[
            _envelope(
                '[envelopes.pinnedmodel]\ndefault_action = "allow"\n\n'
                "[envelopes.pinnedmodel.compute]\n"
                f'model_allowlist = {allowlist}\non_exhausted = "finish_stuck"\n'
            ),
            step(*_RUN, "pinnedmodel", "--timeout", "90s", "do the task", exit_code=None),
            *after,
        ],
        **case,
    )


def _statuses(instance: Instance) -> list[str]:
    """The status of every mission, as ``mission list`` prints them."""
    return [m.status for m in missions(instance)]


def _only_mission(instance: Instance) -> MissionDetail:
    """``mission show`` of the one mission ``mission list`` names."""
    [fired] = missions(instance)
    return mission(instance, fired.id)


ALLOWED_MODEL = _model_allowlist(
    "a unit runs on a model the envelope's model_allowlist names",
    '["scripted-test"]',
    probe("mission statuses", _statuses, expect=["landed"]),
)

# Control: ALLOWED_MODEL, the same allowlist naming the model the unit runs on.
UNNAMED_MODEL = _model_allowlist(
    "a unit cannot use a model the envelope's model_allowlist does not name",
    '["a-model-nobody-named"]',
    probe(
        "the mission",
        _only_mission,
        expect=satisfies(
            lambda m: m.status != "landed" and "modelAllowlist" in m.status_reason,
            "not landed, its reason naming modelAllowlist",
        ),
    ),
)

CROSSED_BOUND_STUCK = _model_allowlist(
    "a unit that crosses an enforced compute bound ends stuck",
    '["a-model-nobody-named"]',
    probe("mission statuses", _statuses, expect=["stuck"]),
    defect=Defect(
        title="a unit refused by compute.model_allowlist ends derailed, not stuck",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: exit 1; 'Mission … finished: derailed — unit turn failed: … task "
            "run-agent: chat failed: compute bound refused: modelAllowlist — this mission's "
            "envelope permits o…'; mission show: 'Envelope: pinnedmodel', 'Status: derailed — "
            "…compute bound refused: modelAllowlist…', one [blocker] report Note: Reproduces "
            'exactly. The nearest counter-line is guide/missions.md:103 "A turn that **errors** … '
            'finishes the mission `derailed`", but it is the general turn-error rule; it does not '
            "say an allowlist refusal is an error rather than a bound, while :170/:173 name the "
            "allowlist as an enforced bound finishing `stuck`. No page says an allowlist refusal "
            "derails. The text did not give the envelope's oth..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; appended to ~/.contenox/agents.toml an "
            "envelope `pinnedmodel` whose `[envelopes.pinnedmodel.compute]` has "
            '`model_allowlist = ["a-model-nobody-named"]`, `on_exhausted = "finish_stuck"`; a '
            "scripted-test default backend (model scripted-test); `contenox run --policy "
            "pinnedmodel …`; `contenox mission show <id>` says 'Status: derailed — unit turn "
            "failed: … chat failed: compute bound refused: modelAllowlist …'"
        ),
        promised=(
            'guide/confinement/guardrails.md:194-195 "A unit that crosses a bound ends as '
            '`stuck` rather than running on."'
        ),
        observed="Status: derailed — … compute bound refused: modelAllowlist …",
        bears_on=(
            'guide/missions.md:173 "Crossing an enforced bound is never silent: the mission is '
            'finished `stuck` with a reason led by `compute bound exhausted`"',
        ),
    ),
)

FILE_TOOL_OUTSIDE = _unasked(
    "a read outside the workspace is refused by a file tool",
    "open",
    "read_file",
    {"path": "../home/outside-the-workspace.txt"},
    before=[
        OPEN_POLICY,
        edit("outside-the-workspace.txt", append="NOT-FOR-THE-FILE-TOOL\n", under="home"),
    ],
    after=[
        _result(
            lambda r: "escapes allowed directory" in r and "NOT-FOR-THE-FILE-TOOL" not in r,
            "the tool's refusal, the outside file withheld",
        )
    ],
)

# The control: the same ../ shape that lands back inside the workspace is read.
FILE_TOOL_INSIDE = _unasked(
    "a read whose path climbs out and back into the workspace is served",
    "open",
    "read_file",
    {"path": "../work/inside-the-workspace.txt"},
    files={"inside-the-workspace.txt": "READ-BY-THE-FILE-TOOL\n"},
    before=[OPEN_POLICY],
    after=[_result(lambda r: "READ-BY-THE-FILE-TOOL" in r, "the file's text")],
)


def _second_session_cwd(instance: Instance, asked: Path) -> list[object] | None:
    """Open a second ACP session asking for ``asked``: its shell cwds, or None if refused."""
    instance.init()
    instance.use_script(
        Script(
            turns=[route(), Turn(tool_calls=[ToolCall("local_shell", {"command": "pwd"})]), "Ok."]
        )
    )
    with open_acp(instance, permission="allow") as acp:
        answer = acp.request("session/new", {"cwd": str(asked), "mcpServers": []})
        if "error" in answer:
            return None
        result = answer["result"]
        assert isinstance(result, dict), answer
        turn = acp.prompt("where am I", session_id=str(result["sessionId"]))
    return [r.params.get("cwd") for r in turn.requests_of("terminal/create")]


# function: sends a second session/new over the wire, which prompt() does not
@defect(
    Defect(
        title="contenox acp accepts a second session/new in another directory and runs there",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: with contenox acp launched "
            "in the workspace, session/new {cwd: /tmp/rA/elsewhere_8437} was "
            'accepted; the prompt\'s local_shell went out as \'"method":"terminal/c'
            'reate","params":{…"command":"pwd","cwd":"/tmp/rA/elsewhere_8437"…}\' '
            "Note: I added a minimal stdio ACP client and the report's dialog "
            "(general / local_shell pwd / Ok.). The behaviour matches what the "
            "report says. Other lines back it, though: reference/contenox-"
            "cli.md:138 ('`contenox acp` | whatever the editor opened — per the "
            "protocol, the client owns the cwd') and "
            "integrations/editors/openclaw.md:73 ('unless you point it elsewhere "
            "with an explicit `cwd`'). Those conflict with contenox-cli.md:130 "
            "and guardrails.md:87-88."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init` in the workspace; a scripted-test default "
            "backend whose dialog is `general`, `local_shell {command: pwd}`, `Ok.`; "
            "`contenox acp` started in the workspace, driven by an ACP client: initialize, "
            "session/new with cwd = <tmp>/elsewhere (not the workspace) is accepted; "
            "session/prompt 'where am I' in it: the local_shell call goes out as "
            "terminal/create with cwd <tmp>/elsewhere"
        ),
        promised=(
            'reference/contenox-cli.md:130 "One instance serves exactly one workspace, fixed at '
            'launch"'
        ),
        observed="session/new accepted; terminal/create with cwd <tmp>/elsewhere",
        bears_on=(
            'reference/contenox-cli.md:138 "| [`contenox acp`](#contenox-acp--contenox-acpx) | '
            'whatever the editor opened — per the protocol, the client owns the cwd |"',
            'guide/confinement/guardrails.md:87-88 "Its sessions run there and nowhere else — '
            'never in a directory a client asked for"',
            'integrations/editors/openclaw.md:73 "unless you point it elsewhere with an explicit '
            '`cwd`"',
        ),
        docs_disagree=True,
    )
)
def test_a_second_session_in_another_directory_the_client_asked_for_runs_there(
    instance: Instance,
) -> None:
    # docs disagree: contenox-cli.md:130 (one workspace, fixed at launch) and
    # guardrails.md:87-88 (never a directory a client asked for) against the same
    # reference's :138 (for `acp` the client owns the cwd) and openclaw.md:73. v1.0.0
    # runs the second session where the client asked, as :138 says.
    elsewhere = instance.tmp / "elsewhere"
    elsewhere.mkdir()
    cwds = _second_session_cwd(instance, elsewhere)
    assert cwds == [str(elsewhere)], cwds


# function: sends a second session/new over the wire, which prompt() does not
@defect(
    Defect(
        title="contenox acp opens a session in ~/.contenox, the runtime's control plane",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: session/new → result sessionId acp-0867… "
            "(accepted); client request 'terminal/create {command: pwd, cwd: "
            "<HOME>/.contenox}'; tool_call_update rawOutput stdout "
            "'<HOME>/.contenox'; stopReason end_turn Note: Line 138 lets the client "
            "choose the cwd, but line 142 carves the control plane out 'on any "
            "shape', so no page says this is right."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init` in the workspace; a scripted-test default "
            "backend whose dialog is `general`, `local_shell {command: pwd}`, `Ok.`; "
            "`contenox acp` started in the workspace, driven by an ACP client: initialize, "
            "session/new with cwd = ~/.contenox is accepted; session/prompt 'where am I' in "
            "it: the local_shell call goes out as terminal/create with cwd ~/.contenox"
        ),
        promised=(
            'reference/contenox-cli.md:142 "is never a workspace, on any shape. There is no '
            'setting that turns this off."'
        ),
        observed="session/new accepted; terminal/create with cwd ~/.contenox",
        bears_on=(
            "guide/confinement/guardrails.md:88 \"and never in the runtime's own config, "
            'database or policies."',
        ),
    )
)
def test_the_runtime_s_own_control_plane_is_never_a_session_s_workspace(
    instance: Instance,
) -> None:
    control_plane = instance.home / ".contenox"
    control_plane.mkdir(exist_ok=True)
    cwds = _second_session_cwd(instance, control_plane)
    assert cwds is None or str(control_plane) not in [str(c) for c in cwds], cwds


# function: puts a directory where the policy file goes (no step makes one)
def test_a_policy_file_that_cannot_be_read_falls_back_to_asking_even_about_reads(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("notes.txt", "plain project notes\n")
    # The session's policy exists by name but cannot be read as a file.
    (instance.home / ".contenox" / "hitl-policy-default.json").mkdir()
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
                "Read.",
            ]
        )
    )
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("read the notes")
    assert len(turn.permission_requests) == 1, turn.describe()
    assert turn.paths_read == [], turn.describe()


# function: the control of the case above, the policy file left as init wrote it
def test_the_same_read_under_a_readable_policy_file_runs_without_asking(
    instance: Instance,
) -> None:
    instance.init()
    instance.write("notes.txt", "plain project notes\n")
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
                "Read.",
            ]
        )
    )
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("read the notes")
    assert turn.permission_requests == [], turn.describe()
    assert [Path(p).name for p in turn.paths_read] == ["notes.txt"], turn.describe()


# --- which tools exist


def _declared_echo(name: str, tools: str | None, check: Probe, **case: Any) -> Case:
    """A declared agent ``narrow`` (``tools: <tools>``, or none) whose unit calls ``echo``."""
    front = "---\nname: narrow\ndescription: a narrowed test agent\n"
    if tools is not None:
        front += f"tools: {tools}\n"
    return Case(
        name=name,
        script=_one_call("echo", {"input": "echoed-ok"}),
        steps=[
            OPEN_POLICY,
            write("agents/narrow.md", front + "---\nDo it.\n", home=True),
            step("run", "narrow", "--policy", "open", "--timeout", "60s", "echo", timeout=120),
            check,
        ],
        **case,
    )


_ECHOED = probe("the call's tool result", _tool_result, expect="echoed-ok")
_NOT_FOUND = _result(lambda r: "tool echo not found" in r, "'tool echo not found'")

OMITTED_TOOLS = _declared_echo(
    "a declaration that omits tools inherits every tool",
    None,
    _ECHOED,
)

STAR_GRANT = _declared_echo(
    "a star grant admits the native toolsets",
    '"*"',
    _ECHOED,
)

# Control of the two below: STAR_GRANT (and OMITTED_TOOLS), the same echo; it runs.
NEVER_GRANTED = _declared_echo(
    "a tool the declaration never granted cannot be called",
    '"native-git"',
    _NOT_FOUND,
)

EMPTY_TOOLS = _declared_echo(
    "an empty tools list grants nothing",
    "[]",
    _NOT_FOUND,
)

# docs disagree: agents-config.md:576-581 (reference) says a declaration's `tools:` line
# shares the chain allowlist's vocabulary, `!name` included; the section it points to,
# agents.md:133-137, says `!name` in a declaration resolves to nothing and is dropped.
# v1.0.0 drops it (agent list: "not carried narrow: tools — resolves to nothing connected
# here"), so `*` admits native-echo and the echo runs, whichever order.
DECLARED_EXCLUSION = [
    _declared_echo(
        f"a declaration's exclusion is dropped whatever order it appears in ({order})",
        tools,
        _ECHOED,
        defect=Defect(
            title="a declaration's `!name` does not remove a toolset from `*`",
            second_reading=(
                "2026-12-01, a second reader with only this text and the docs, in a fresh "
                "scratch home: docs disagree. Saw: exit 0, 'Mission fired at agent "
                '"narrow" under envelope "open"\', finished: landed; tool_call '
                "subject=native-echo.echo ran, result 'echoed-ok'; the compiled "
                ".contenox/.generated/chain-agent-narrow.json has "
                "narrow-agent/narrow-tools/recovery tools ['*','mission']; agent list: "
                "'not carried narrow: tools — resolves to nothing connected here; …' "
                "Note: The binary does exactly what guide/agents.md:133-136 describes: it "
                "drops the name and reports it as not carried. The reference "
                "agents-config.md:578-581 says the declaration line shares the `!name` "
                "vocabulary. Under GUIDE's rule the reference is the contract, so this is "
                'a finding for the docs. I tested only the ["*", "!native-echo"] '
                "ordering."
            ),
            reproduce=(
                "in a scratch HOME, `contenox init`; `~/.contenox/agents/narrow.md` with "
                '`tools: ["*", "!native-echo"]` (or `["!native-echo", "*"]`, or the string '
                '"*, !native-echo"); an envelope that runs every tool unasked; a scripted-test '
                "default backend whose dialog calls `echo {input: echoed-ok}`, then a closing "
                "turn; `contenox run narrow --policy open --timeout 60s echo`: the echo's tool "
                "result is 'echoed-ok'; the compiled .generated/chain-agent-narrow.json carries "
                "execute_config.tools ['*', 'mission'], the exclusion dropped"
            ),
            promised=(
                'reference/agents-config.md:578-581 "The vocabulary that line and every chain '
                "allowlist share — `*` for every connected toolset with no exceptions, `!name` "
                'to remove one"'
            ),
            observed="the echo runs: the exclusion is dropped from the compiled chain",
            bears_on=(
                "guide/agents.md:133-136 \"`!name` is the **chain** allowlist's vocabulary, "
                "not a declaration's. … in a declaration's `tools:` line it resolves to "
                'nothing and is dropped with the rest of the unresolved names."',
                'guide/confinement/guardrails.md:57 "| `"!name"` | removes that one '
                'toolset; an exclusion beats `*`, whatever order they appear in |"',
            ),
            docs_disagree=True,
        ),
    )
    for order, tools in (
        ("exclusion last", '["*", "!native-echo"]'),
        ("exclusion first", '["!native-echo", "*"]'),
    )
]


UNNAMED_AND_NAMED = _envelope(
    '[envelopes.unnamed]\ndefault_action = "approve"\nmissions.fire = "allow"\n\n'
    '[envelopes.named]\ndefault_action = "approve"\nmissions.fire = "allow"\n\n'
    '[envelopes.named.tools]\n"native-echo.*" = "allow"\n'
)

# Control: NAMED_TOOL_RUNS below, the same echo under the envelope that names it.
NO_RULE_ASKS = _asks(
    "a tool no rule names falls to default_action and asks",
    "unnamed",
    "echo",
    {"input": "echoed-ok"},
    before=[UNNAMED_AND_NAMED],
)

NAMED_TOOL_RUNS = _unasked(
    "a tool the envelope names under tools runs without asking",
    "named",
    "echo",
    {"input": "echoed-ok"},
    before=[UNNAMED_AND_NAMED],
    after=[_ECHOED],
)


# --- what content gets through: a route task as a moderation gate


def _moderated_chain() -> str:
    def task(task_id: str, handler: str, model: str, goto: str) -> dict[str, object]:
        return {
            "id": task_id,
            "handler": handler,
            "system_instruction": f"The {task_id} step.",
            "execute_config": {"model": model, "provider": "scripted-test", "tools": []},
            "transition": {"branches": [{"operator": "default", "when": "", "goto": goto}]},
        }

    moderate = task("moderate", "route", "classifier", "simple-chat")
    moderate["transition"] = {
        "branches": [
            {"operator": "equals", "when": "safe", "goto": "simple-chat"},
            {"operator": "equals", "when": "unsafe", "goto": "reject_request"},
            {"operator": "default", "when": "", "goto": "simple-chat"},
        ]
    }
    reject = {"id": "reject_request", "handler": "raise_error"}
    chain = {
        "id": "moderated",
        "description": "a moderation gate in front of the real chat",
        "tasks": [moderate, task("simple-chat", "chat_completion", "expensive", "end"), reject],
    }
    return json.dumps(chain, indent=2) + "\n"


def _moderation_case(label: str, reaches: bool) -> Case:
    verdict = "reaches the real chain" if reaches else "is rejected before the real chain"
    answer = "The expensive model's answer."
    return Case(
        name=f"a request the route task labels {label} {verdict}",
        backends={
            "classifier": Script(turns=[label], model="classifier"),
            "expensive": Script(turns=[answer], model="expensive"),
        },
        files={"moderated-chain.json": _moderated_chain()},
        steps=[
            step(
                "chat",
                "--chain",
                "moderated-chain.json",
                "tell me something",
                exit_code=0 if reaches else 1,
                **({"stdout_has": [answer]} if reaches else {"stdout_lacks": [answer]}),
            )
        ],
    )


# The pair is its own control: only the route task's label differs.
MODERATION = [_moderation_case("safe", True), _moderation_case("unsafe", False)]


# --- an authored chain's execute_config.tools


def _authored_chain(execute_config: dict[str, Any]) -> str:
    """An authored chain: one model task whose calls go to one tool task, both on ``config``."""
    config = {"model": "{{var:model}}", "provider": "{{var:provider}}", **execute_config}
    back = {"branches": [{"operator": "default", "when": "", "goto": "agent"}]}
    chain = {
        "id": "authored",
        "description": "an authored chain: one model task, one tool task",
        # Without a context budget every tool result reads as too large.
        "token_limit": 131072,
        "tasks": [
            {
                "id": "agent",
                "handler": "chat_completion",
                "system_instruction": "Do the task.",
                "execute_config": config,
                "transition": {
                    "branches": [
                        {"operator": "equals", "when": "tool_call", "goto": "tools"},
                        {"operator": "default", "when": "", "goto": "end"},
                    ]
                },
            },
            {
                "id": "tools",
                "handler": "execute_tool_calls",
                "input_var": "agent",
                "execute_config": config,
                "transition": back,
            },
        ],
    }
    return json.dumps(chain, indent=2)


def _chat_tool_result(instance: Instance) -> str:
    """The one tool result of the chat session, the workspace path read as ``[WORK]``."""
    results = [m.content for m in transcript(instance).messages if m.role == "tool"]
    assert len(results) == 1, results
    return results[0].replace(str(instance.work), "[WORK]")


def _authored_shell(
    name: str, execute_config: dict[str, Any], check: Predicate, **case: Any
) -> Case:
    """Chat once (``--shell``) through an authored chain whose model calls local_shell ``pwd``."""
    return Case(
        name=name,
        script=Script(
            turns=[Turn(tool_calls=[ToolCall("local_shell", {"command": "pwd"})]), "Done."]
        ),
        files={"authored-chain.json": _authored_chain(execute_config)},
        steps=[
            step("chat", "--shell", "--chain", "authored-chain.json", "where am I", timeout=120),
            probe("the call's tool result", _chat_tool_result, expect=check),
        ],
        **case,
    )


_SHELL_NOT_FOUND = satisfies(
    lambda r: "tool local_shell not found" in r, "'tool local_shell not found'"
)

AUTHORED_STAR = _authored_shell(
    "an authored task granting star reaches local_shell",
    {"tools": ["*"]},
    satisfies(lambda r: "[WORK]" in r, "pwd printing the workspace"),
)

# Control of the grant, exclusion and hide cases below: AUTHORED_STAR, where pwd runs.
AUTHORED_NO_GRANT = [
    _authored_shell(
        f"an authored task without a tools grant has no tools ({variant})",
        config,
        _SHELL_NOT_FOUND,
    )
    for variant, config in (("absent", {}), ("null", {"tools": None}))
]

AUTHORED_EXCLUSION = [
    _authored_shell(
        f"an authored task's exclusion beats star in either order ({order})",
        {"tools": tools},
        _SHELL_NOT_FOUND,
    )
    for order, tools in (
        ("exclusion last", ["*", "!local_shell"]),
        ("exclusion first", ["!local_shell", "*"]),
    )
]

HIDDEN_TOOL = _authored_shell(
    "hide_tools withholds a tool a star grant admits",
    {"tools": ["*"], "hide_tools": ["local_shell.local_shell"]},
    satisfies(lambda r: "hidden" in r and "[WORK]" not in r, "a 'hidden' refusal, pwd not run"),
)


# --- who may answer a unit's question

QUESTION = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {"summary": "which database", "question": "which database should I use"},
                )
            ],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _unit_messages(instance: Instance) -> list[str]:
    """Every message the run's unit recorded (``session show`` of the acp-client session)."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    texts = [m.content for m in transcript(instance, unit.id).messages]
    # Up to mission_finish's result: the closing text after it is served or not as the
    # unit's teardown races it.
    ends = [i for i, t in enumerate(texts) if t.startswith("mission finished as ")]
    return texts[: ends[0] + 1] if ends else texts


# Control: test_asks.py's AGENT_ANSWER pair, the same question with missions.answer
# granted (an agent's answer is taken) and denied (refused; a person answers).
ANSWERED_QUESTION = Case(
    name="with missions.answer denied a unit's question waits for a human",
    script=QUESTION,
    steps=[
        background("run", *_RUN, "strict", "--timeout", "90s", "pick a db"),
        await_ask("ask", kind="question", timeout=60),
        probe(
            "pending asks",
            approvals,
            expect=satisfies(
                lambda asks: [a.summary for a in asks] == ["which database"],
                "one ask, summarised 'which database'",
            ),
        ),
        respond("ask", answer="use the staging database"),
        wait("run"),
        probe(
            "the unit's messages",
            _unit_messages,
            expect=satisfies(
                lambda texts: any("use the staging database" in t for t in texts),
                "the human's answer among them",
            ),
        ),
    ],
)
