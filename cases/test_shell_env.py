"""The environment a shell tool receives: the scrub, the injection, and their previews.

guide/confinement/environment.md promises that an agent-reachable shell gets
the contenox process's environment minus the control plane and credential
shapes (``deny-secrets``, the default), the whole of it (``off``), or only a
safe base set (``strict``), with ``contenox shell-env`` values layered on top.

Every case here proves a variable present or absent the way a person would:
it puts the variable in the environment contenox is started with, has a
scripted ``local_shell`` run ``env``, and reads what that shell printed from
the run's recorded tool result (``session show``). Under ``run`` contenox
serves ``local_shell`` itself; under ``acp`` it is forwarded to the editor's
terminal, so the ACP cases read what the editor's terminal printed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

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
    group,
    mission_finish,
    open_acp,
    probe,
    prompt,
    respond,
    route,
    step,
    wait,
    write,
)
from harness.case import Action, Probe
from harness.probes import session_records, transcript

# A hand-written policy that lets every call through, so a case about the
# environment is not also a case about the gate. Named through --policy.
OPEN_POLICY = '{"version": 1, "default_action": "allow", "rules": []}\n'
# The same, but the shell asks first: the run waits, so the case can change
# the injected variables while the unit that will spawn the shell is alive.
ASKING_POLICY = (
    '{"version": 1, "default_action": "allow", "rules": ['
    '{"tools": "local_shell", "tool": "local_shell", "action": "approve"}]}\n'
)

PRINT_ENV = Script(
    turns=[
        Turn(
            text="Printing the environment.",
            tool_calls=[ToolCall("local_shell", {"command": "env"})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

# Names a shell sets for itself; they say nothing about what contenox passed.
_SHELL_OWN = frozenset({"PWD", "OLDPWD", "SHLVL", "_"})


def _printed_env(instance: Instance) -> dict[str, str]:
    """What the unit's ``env`` call printed, read back from its session transcript."""
    [unit] = [s for s in session_records(instance) if s.identity == "acp-client"]
    outputs = [
        json.loads(m.content)
        for m in transcript(instance, unit.id).messages
        if m.role == "tool" and m.content.startswith("{")
    ]
    shells = [o for o in outputs if o.get("command") == "env"]
    assert len(shells) == 1, f"expected one env call's result, got {outputs}"
    assert shells[0].get("exit_code") == 0, shells[0]
    env: dict[str, str] = {}
    for line in str(shells[0]["stdout"]).splitlines():
        name, sep, value = line.partition("=")
        if sep:
            env[name] = value
    return env


def _shell_sees(*names: str, expect: Mapping[str, str | None]) -> Probe:
    """The run shell's value of each of ``names`` (None: absent) must be ``expect``."""

    def read(instance: Instance) -> dict[str, str | None]:
        seen = _printed_env(instance)
        return {name: seen.get(name) for name in names}

    return probe("the run shell's " + ", ".join(names), read, expect=dict(expect))


def _absent(*names: str) -> dict[str, None]:
    return dict.fromkeys(names)


_RUN_ENV = ("run", "--policy", "envcheck", "--timeout", "90s", "print the environment")


def _env_case(name: str, env: Mapping[str, str], *checks: Action, **case: Any) -> Case:
    """One mission under the open policy whose shell prints ``env``, ``env`` set on contenox."""
    before = case.pop("before", ())
    return Case(
        name=name,
        script=PRINT_ENV,
        steps=[
            write("hitl-policy-envcheck.json", OPEN_POLICY, home=True),
            *before,
            step(*_RUN_ENV, env=dict(env)),
            *checks,
        ],
        **case,
    )


CREDENTIALS = {
    "CONTENOX_PROBE": "control-plane",
    "STRIPE_SECRET_KEY": "sk-probe",
    "DEPLOY_TOKEN": "tok-probe",
    "SIGNING_SECRET": "secret-probe",
    "DB_PASSWORD": "pw-probe",
    "SMTP_PASSWD": "passwd-probe",
    "CLOUD_CREDENTIALS": "cred-probe",
}
TOOLCHAIN = {"GOCACHE": "/probe/go-cache", "PROBE_PLAIN": "plain-value"}

DEFAULT_SCRUB = _env_case(
    "by default a run shell keeps the toolchain and loses every credential shape",
    {**CREDENTIALS, **TOOLCHAIN},
    _shell_sees(*TOOLCHAIN, *CREDENTIALS, expect={**TOOLCHAIN, **_absent(*CREDENTIALS)}),
)


def _home_and_path(instance: Instance) -> dict[str, bool]:
    seen = _printed_env(instance)
    return {
        "HOME is the operator's": seen.get("HOME") == str(instance.home),
        "PATH is contenox's": seen.get("PATH") == instance.env()["PATH"],
    }


HOME_AND_PATH = _env_case(
    "the scrubbed shell keeps the operator's home and path",
    {},
    probe(
        "the run shell's HOME and PATH",
        _home_and_path,
        expect={"HOME is the operator's": True, "PATH is contenox's": True},
    ),
)

_UNLISTED = {
    "DATABASE_URL": "postgres://probe/app",
    "GITHUB_PAT": "pat-probe",
    "PGPASSWORD": "pg-probe",
    "NPM_CONFIG_AUTH": "npm-probe",
}

UNLISTED_SHAPES = _env_case(
    "deny-secrets keeps every variable that matches no listed credential shape",
    _UNLISTED,
    _shell_sees(*_UNLISTED, expect=_UNLISTED),
    defect=Defect(
        title="deny-secrets drops variables that match no listed credential shape",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: state --raw: FOO_PLAIN=1 and HOME=… appear in the env output; "
            "DATABASE_URL, GITHUB_PAT, PGPASSWORD, NPM_CONFIG_AUTH do not. sandbox env: '# agent "
            "shells … scrub mode: deny-secrets / # 36 of 40 variables pass'; FOO_PLAIN listed, the"
            " four missing. (The run then exited 1 on an exhausted 2-turn script after the reply; "
            "the tool result was already recorded.) Note: Reproduces. None of the four names "
            "matches the listed shapes (PGPASSWORD has no underscore before PASSWORD), and "
            "SANDBOX_ENV_DENY was unset. I grepped the docs and no page gives a longer deny list. "
            "The binary strips more than the docs list. That is safe, but it is not what the docs "
            "promise, and environment.md:9/83 use DATABASE_URL as the example of a variable a "
            "toolchain needs. The text doesn't..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a local_shell `env` call, then a reply\n"
            "DATABASE_URL=postgres://x GITHUB_PAT=p PGPASSWORD=p NPM_CONFIG_AUTH=a "
            "contenox run --policy run env\n"
            "contenox state show <request> --raw   # the env output lacks all four\n"
            "DATABASE_URL=postgres://x contenox sandbox env   # drops it too"
        ),
        promised=(
            'guide/confinement/environment.md:46 "Everything except the control '
            "plane (CONTENOX_*), the common credential shapes, and anything in "
            'SANDBOX_ENV_DENY"'
        ),
        observed=(
            "DATABASE_URL, GITHUB_PAT, PGPASSWORD and NPM_CONFIG_AUTH are scrubbed; "
            "none matches CONTENOX_* *_TOKEN *_KEY *_SECRET *_PASSWORD *_PASSWD "
            "*_CREDENTIALS"
        ),
    ),
)

SCRUB_OFF = _env_case(
    "scrub off hands the shell the whole environment credentials included",
    {**CREDENTIALS, **TOOLCHAIN, "SANDBOX_SHELL_SCRUB": "off"},
    _shell_sees(*CREDENTIALS, *TOOLCHAIN, expect={**CREDENTIALS, **TOOLCHAIN}),
)

ENV_DENY = _env_case(
    "sandbox env deny drops a named variable and a suffix glob",
    {
        **TOOLCHAIN,
        "INTERNAL_URL": "http://probe",
        "SERVICE_URL": "http://probe2",
        "SANDBOX_ENV_DENY": "GOCACHE, *_URL",
    },
    _shell_sees(
        "GOCACHE",
        "INTERNAL_URL",
        "SERVICE_URL",
        "PROBE_PLAIN",
        expect={**_absent("GOCACHE", "INTERNAL_URL", "SERVICE_URL"), "PROBE_PLAIN": "plain-value"},
    ),
)

ALLOW_CANNOT_REPERMIT = _env_case(
    "in deny-secrets sandbox env allow cannot re-permit a credential",
    {"DEPLOY_TOKEN": "tok-probe", "SANDBOX_ENV_ALLOW": "DEPLOY_TOKEN"},
    _shell_sees("DEPLOY_TOKEN", expect=_absent("DEPLOY_TOKEN")),
)

STRICT_BASE = {
    "PATH",
    "TERM",
    "COLORTERM",
    "TZ",
    "LANG",
    "LANGUAGE",
    "TMPDIR",
    "USER",
    "LOGNAME",
    "SHELL",
}

# Sorted: a set's order changes with each process's hash seed, and the env is in the transcript.
_STRICT_PROBES = {
    name: f"probe-{name.lower()}" for name in sorted(STRICT_BASE - {"PATH", "TMPDIR"})
}


def _outside_strict(instance: Instance) -> list[str]:
    """Names the strict shell got beyond the base set, LC_*, the allow list and its own."""
    seen = set(_printed_env(instance))
    extra = sorted(seen - STRICT_BASE - {"LC_PROBE", "DEPLOY_TOKEN"} - _SHELL_OWN)
    return [name for name in extra if not name.startswith("LC_")]


STRICT = _env_case(
    "strict hands the shell only the safe base set and what allow names",
    {
        **_STRICT_PROBES,
        **TOOLCHAIN,
        "LC_PROBE": "lc",
        "DEPLOY_TOKEN": "tok-probe",
        "CONTENOX_PROBE": "control-plane",
        "SANDBOX_SHELL_SCRUB": "strict",
        # A named credential is re-permitted; the control plane never is.
        "SANDBOX_ENV_ALLOW": "DEPLOY_TOKEN,CONTENOX_PROBE",
    },
    # LC_* is in the safe base set.
    _shell_sees(
        *sorted(_STRICT_PROBES),
        "LC_PROBE",
        "DEPLOY_TOKEN",
        expect={**_STRICT_PROBES, "LC_PROBE": "lc", "DEPLOY_TOKEN": "tok-probe"},
    ),
    probe("names outside the base set and the allow list", _outside_strict, expect=[]),
)

STRICT_DENY = _env_case(
    "strict drops a base variable sandbox env deny names",
    {"TZ": "UTC", "LANG": "C.UTF-8", "SANDBOX_SHELL_SCRUB": "strict", "SANDBOX_ENV_DENY": "TZ"},
    _shell_sees("TZ", "LANG", expect={"TZ": None, "LANG": "C.UTF-8"}),
)

# A prefix glob admits both PROBE_ names; a lower-case name admits nothing.
CASE_SENSITIVE_GLOBS = _env_case(
    "allow and deny globs match case sensitively",
    {
        "GOCACHE": "/probe",
        "PROBE_ONE": "1",
        "PROBE_TWO": "2",
        "SANDBOX_SHELL_SCRUB": "strict",
        "SANDBOX_ENV_ALLOW": "PROBE_* gocache",
    },
    _shell_sees(
        "PROBE_ONE",
        "PROBE_TWO",
        "GOCACHE",
        expect={"PROBE_ONE": "1", "PROBE_TWO": "2", "GOCACHE": None},
    ),
)

INJECTED_WINS = _env_case(
    "an injected variable reaches the shell and wins over the inherited value",
    {"PROBE_PLAIN": "inherited"},
    _shell_sees(
        "PROBE_PLAIN",
        "DATABASE_DSN",
        expect={"PROBE_PLAIN": "injected", "DATABASE_DSN": "postgres://probe/app"},
    ),
    before=[step("shell-env", "set", "PROBE_PLAIN=injected", "DATABASE_DSN=postgres://probe/app")],
)

INJECTED_SCRUB_OFF = _env_case(
    "an injected variable applies even with the scrub off",
    {"SANDBOX_SHELL_SCRUB": "off"},
    _shell_sees("PROBE_INJECTED", expect={"PROBE_INJECTED": "on-top"}),
    before=[step("shell-env", "set", "PROBE_INJECTED=on-top")],
)

INJECTED_OVER_SCRUB = _env_case(
    "an injected value wins even where the scrub strips the name",
    {"DEPLOY_TOKEN": "inherited-secret"},
    _shell_sees("DEPLOY_TOKEN", expect={"DEPLOY_TOKEN": "set-by-operator"}),
    before=[step("shell-env", "set", "DEPLOY_TOKEN=set-by-operator")],
)

LIVE_EDIT = Case(
    name="an edit to shell-env applies to the next shell without a restart",
    script=PRINT_ENV,
    steps=[
        write("hitl-policy-envcheck.json", ASKING_POLICY, home=True),
        background("run", *_RUN_ENV),
        await_ask("ask", tool="local_shell.local_shell", timeout=60),
        # The unit is already running and its shell not yet spawned.
        step("shell-env", "set", "PROBE_LIVE=edited-mid-run"),
        respond("ask", "approve"),
        wait("run"),
        _shell_sees("PROBE_LIVE", expect={"PROBE_LIVE": "edited-mid-run"}),
    ],
)


def _preview_against_shell(instance: Instance, preview: str) -> dict[str, list[str]]:
    """The names only the ``sandbox env`` preview lists, and those only the run shell got."""
    previewed = {
        line for line in preview.splitlines() if line and not line.startswith("#")
    } - _SHELL_OWN
    seen = set(_printed_env(instance)) - _SHELL_OWN
    return {
        "only in the preview": sorted(previewed - seen),
        "only in the shell": sorted(seen - previewed),
    }


_PREVIEWED = {**CREDENTIALS, **TOOLCHAIN, "SANDBOX_ENV_DENY": "PROBE_PLAIN"}

PREVIEW_MATCHES = _env_case(
    "sandbox env previews exactly the names a run shell receives",
    _PREVIEWED,
    probe(
        "the preview against the run shell",
        _preview_against_shell,
        "{preview}",
        expect={"only in the preview": [], "only in the shell": []},
    ),
    before=[
        step("shell-env", "set", "PROBE_INJECTED=x"),
        step("sandbox", "env", env=_PREVIEWED, capture={"preview": group(r"(?s)(.*)")}),
    ],
)


def _names(*names: str) -> list[re.Pattern[str]]:
    """Each name alone on a line, as ``sandbox env`` lists it."""
    return [re.compile(rf"(?m)^{re.escape(name)}$") for name in names]


SANDBOX_ENV_NO_VALUES = Case(
    name="sandbox env prints names and withholds every value",
    init=False,
    steps=[
        step(
            "sandbox",
            "env",
            env={"PROBE_PLAIN": "value-must-not-print", "SANDBOX_SHELL_SCRUB": "off"},
            stdout_has=_names("PROBE_PLAIN"),
            stdout_lacks=["value-must-not-print"],
            stderr_lacks=["value-must-not-print"],
        )
    ],
)

SANDBOX_ENV_DEFAULT = Case(
    name="sandbox env defaults to the deny-secrets agent shell policy",
    init=False,
    steps=[
        step(
            "sandbox",
            "env",
            env={**CREDENTIALS, **TOOLCHAIN},
            stdout_has=["deny-secrets", *_names("GOCACHE", "PROBE_PLAIN")],
            stdout_lacks=_names(*CREDENTIALS),
        )
    ],
)

SANDBOX_ENV_TERMINAL = Case(
    name="sandbox env terminal shows the terminal policy which defaults to off",
    init=False,
    steps=[
        step(
            "sandbox",
            "env",
            "--terminal",
            env=dict(CREDENTIALS),
            stdout_has=["scrub mode: off", *_names(*CREDENTIALS)],
        )
    ],
)

SANDBOX_TERMINAL_SCRUB = Case(
    name="sandbox terminal scrub deny-secrets strips the terminal preview",
    init=False,
    steps=[
        step(
            "sandbox",
            "env",
            "--terminal",
            env={**CREDENTIALS, **TOOLCHAIN, "SANDBOX_TERMINAL_SCRUB": "deny-secrets"},
            stdout_has=["scrub mode: deny-secrets", *_names("GOCACHE")],
            stdout_lacks=_names(*CREDENTIALS),
        )
    ],
)


# --- acp

ACP_PRINT_ENV = Script(
    turns=[route(), Turn(tool_calls=[ToolCall("local_shell", {"command": "env"})]), "Printed."]
)


def _acp_shell_env(instance: Instance, env: Mapping[str, str]) -> dict[str, str]:
    """What the editor's terminal printed for a scripted ``env`` over ``contenox acp``.

    The harness's editor runs terminal commands with the environment it was
    started with, overlaid with the ``env`` contenox sends on terminal/create
    — what a real editor does — and ``env`` here is set on both.
    """
    instance.init()
    instance.use_script(ACP_PRINT_ENV)
    with open_acp(instance, permission="allow", env=env) as acp:
        turn = acp.prompt("print the environment")
        assert turn.terminal_commands == ["env"], turn.describe()
        [raw] = turn.tool_outputs
    printed: dict[str, str] = {}
    for line in str(json.loads(raw)["stdout"]).splitlines():
        name, sep, value = line.partition("=")
        if sep:
            printed[name] = value
    return printed


# function: sets the editor's environment too (open_acp env=), which prompt() cannot
@defect(
    Defect(
        title="over ACP the forwarded shell is not scrubbed of credentials",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: sandbox env preview: none of the four names (scrub active in "
            "preview); terminal/create params {sessionId, command: 'env', cwd, outputByteLimit: "
            "1048576} — no env, no wrapper; tool output contains DEPLOY_TOKEN=t, "
            "STRIPE_SECRET_KEY=k, DB_PASSWORD=p, CONTENOX_PROBE=c Note: Reproduces. The reproduce "
            "names four variables; I saw all four printed. The report's 'seven' I can't check from"
            " the text, since it names only four."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a local_shell `env` call, then a reply\n"
            "DEPLOY_TOKEN=t STRIPE_SECRET_KEY=k DB_PASSWORD=p CONTENOX_PROBE=c "
            "contenox acp\n"
            "#   ACP client with the terminal capability, the same variables in its "
            "env: session/new, prompt; allow the call\n"
            '# terminal/create is {"command": "env", "cwd": …, "outputByteLimit": '
            "…}: no env, no wrapper; the output has every variable"
        ),
        promised=(
            'guide/confinement/environment.md:18 "contenox acp / contenox acpx (the '
            "ACP session's shell and its terminal passthrough)\""
        ),
        observed="all seven credential-shaped variables are printed",
    )
)
def test_over_acp_the_forwarded_shell_is_scrubbed_of_credentials(instance: Instance) -> None:
    seen = _acp_shell_env(instance, {**CREDENTIALS, **TOOLCHAIN})
    assert seen.get("GOCACHE") == TOOLCHAIN["GOCACHE"]
    leaked = sorted(k for k in CREDENTIALS if k in seen)
    assert leaked == [], f"credentials reached the editor's shell: {leaked}"


ACP_INJECTED = Case(
    name="over acp an injected variable reaches the forwarded shell",
    script=ACP_PRINT_ENV,
    steps=[
        step("shell-env", "set", "PROBE_INJECTED=on-top"),
        prompt(
            "print the environment",
            permission="allow",
            terminal_commands=["env"],
            tool_output_has=["PROBE_INJECTED=on-top"],
        ),
    ],
    defect=Defect(
        title=("over ACP an injected shell-env variable does not reach the forwarded shell"),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: session/request_permission 'local_shell.local_shell: env' "
            "(hitl-policy-default.json rule 54) → terminal/create params {sessionId, command: "
            "'env', cwd: <workdir>, outputByteLimit: 1048576} — no env field, no wrapper; output "
            "has no PROBE_INJECTED; stopReason end_turn Note: Reproduces as written."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox shell-env set PROBE_INJECTED=on-top\n"
            "# dialog: a local_shell `env` call, then a reply\n"
            "contenox acp   # ACP client with the terminal capability: session/new, "
            "prompt; allow the call\n"
            "# the terminal/create request carries no env; the output has no "
            "PROBE_INJECTED"
        ),
        promised='reference/contenox-cli.md:609 "so an injected value always wins"',
        observed="terminal/create carries no env at all",
    ),
)


# --- shell-env verbs

SHELL_ENV_ROUND_TRIP = Case(
    name="shell-env set, list and unset manage the injected variables",
    init=False,
    steps=[
        step("shell-env", "list", stdout_has=["no global shell-env variables set"]),
        step("shell-env", "set", "HTTP_PROXY=http://proxy:3128", "GOCACHE=/var/cache/go"),
        step(
            "shell-env",
            "list",
            stdout_has=["HTTP_PROXY=http://proxy:3128", "GOCACHE=/var/cache/go"],
        ),
        step("shell-env", "unset", "HTTP_PROXY"),
        step(
            "shell-env", "list", stdout_has=["GOCACHE=/var/cache/go"], stdout_lacks=["HTTP_PROXY"]
        ),
    ],
)

SHELL_ENV_SET_OVERRIDES = Case(
    name="shell-env set overrides a variable already set",
    init=False,
    steps=[
        step("shell-env", "set", "HTTP_PROXY=http://old:1"),
        step("shell-env", "set", "HTTP_PROXY=http://new:2"),
        step("shell-env", "list", stdout_has=["HTTP_PROXY=http://new:2"], stdout_lacks=["old"]),
    ],
)

SHELL_ENV_REFUSES_A_NAME_WITHOUT_VALUE = Case(
    name="shell-env set refuses an argument that is not KEY=VALUE and stores nothing",
    init=False,
    steps=[
        step("shell-env", "set", "NOEQUALS", exit_code=1, notices_has=["is not KEY=VALUE"]),
        step("shell-env", "list", stdout_has=["no global shell-env variables set"]),
    ],
)


# function: runs a command from another directory (a step always runs in the workspace)
def test_an_injected_variable_is_global_a_second_workspace_lists_it_too(
    instance: Instance,
) -> None:
    instance.must("shell-env", "set", "GOCACHE=/var/cache/go")
    elsewhere = instance.work / "elsewhere"
    elsewhere.mkdir()
    listed = instance.must("shell-env", "list", cwd=elsewhere)
    assert "GOCACHE=/var/cache/go" in listed.stdout.splitlines(), listed.describe()
