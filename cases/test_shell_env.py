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
from collections.abc import Mapping

import pytest

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    open_acp,
    route,
    step,
)
from harness.probes import approve, await_approval, session_records, transcript
from harness.process import start_contenox

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


def _setup(instance: Instance, policy: str = OPEN_POLICY) -> None:
    instance.init()
    (instance.home / ".contenox" / "hitl-policy-envcheck.json").write_text(policy)
    instance.use_script(PRINT_ENV)


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


def _shell_env_under_run(instance: Instance, env: Mapping[str, str]) -> dict[str, str]:
    """Run one mission whose shell prints ``env``, with ``env`` set on contenox."""
    _setup(instance)
    instance.must(
        "run", "--policy", "envcheck", "--timeout", "90s", "print the environment", env=env
    )
    return _printed_env(instance)


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


# function: needs capture (the shell's output, read back from the session)
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_by_default_a_run_shell_keeps_the_toolchain_and_loses_every_credential_shape(
    instance: Instance,
) -> None:
    seen = _shell_env_under_run(instance, {**CREDENTIALS, **TOOLCHAIN})
    assert {k: seen.get(k) for k in TOOLCHAIN} == TOOLCHAIN
    leaked = sorted(k for k in CREDENTIALS if k in seen)
    assert leaked == [], f"credentials reached the shell: {leaked}"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_the_scrubbed_shell_keeps_the_operator_s_home_and_path(instance: Instance) -> None:
    seen = _shell_env_under_run(instance, {})
    assert seen.get("HOME") == str(instance.home)
    assert seen.get("PATH") == instance.env()["PATH"]


# function: needs capture
@defect(
    "under the default deny-secrets scrub, a `run` unit's local_shell `env` lacks DATABASE_URL, "
    "GITHUB_PAT, PGPASSWORD and NPM_CONFIG_AUTH, none of which matches a listed shape "
    "(`contenox sandbox env` with the same variables drops them too). environment.md: "
    "'deny-secrets | Everything except the control plane (CONTENOX_*), the common credential "
    "shapes, and anything in SANDBOX_ENV_DENY', the shapes listed as CONTENOX_* *_TOKEN *_KEY "
    "*_SECRET *_PASSWORD *_PASSWD *_CREDENTIALS; the page's own example of a variable a task "
    "needs is a DATABASE_URL."
)
def test_deny_secrets_keeps_every_variable_that_matches_no_listed_credential_shape(
    instance: Instance,
) -> None:
    unlisted = {
        "DATABASE_URL": "postgres://probe/app",
        "GITHUB_PAT": "pat-probe",
        "PGPASSWORD": "pg-probe",
        "NPM_CONFIG_AUTH": "npm-probe",
    }
    seen = _shell_env_under_run(instance, unlisted)
    assert {k: seen.get(k) for k in unlisted} == unlisted


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_scrub_off_hands_the_shell_the_whole_environment_credentials_included(
    instance: Instance,
) -> None:
    seen = _shell_env_under_run(
        instance, {**CREDENTIALS, **TOOLCHAIN, "SANDBOX_SHELL_SCRUB": "off"}
    )
    wanted = {**CREDENTIALS, **TOOLCHAIN}
    assert {k: seen.get(k) for k in wanted} == wanted


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_sandbox_env_deny_drops_a_named_variable_and_a_suffix_glob(instance: Instance) -> None:
    seen = _shell_env_under_run(
        instance,
        {
            **TOOLCHAIN,
            "INTERNAL_URL": "http://probe",
            "SERVICE_URL": "http://probe2",
            "SANDBOX_ENV_DENY": "GOCACHE, *_URL",
        },
    )
    assert "GOCACHE" not in seen and "INTERNAL_URL" not in seen and "SERVICE_URL" not in seen
    assert seen.get("PROBE_PLAIN") == "plain-value"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_in_deny_secrets_sandbox_env_allow_cannot_re_permit_a_credential(
    instance: Instance,
) -> None:
    seen = _shell_env_under_run(
        instance, {"DEPLOY_TOKEN": "tok-probe", "SANDBOX_ENV_ALLOW": "DEPLOY_TOKEN"}
    )
    assert "DEPLOY_TOKEN" not in seen


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


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_strict_hands_the_shell_only_the_safe_base_set_and_what_allow_names(
    instance: Instance,
) -> None:
    base = {name: f"probe-{name.lower()}" for name in STRICT_BASE - {"PATH", "TMPDIR"}}
    seen = _shell_env_under_run(
        instance,
        {
            **base,
            **TOOLCHAIN,
            "LC_PROBE": "lc",
            "DEPLOY_TOKEN": "tok-probe",
            "CONTENOX_PROBE": "control-plane",
            "SANDBOX_SHELL_SCRUB": "strict",
            # A named credential is re-permitted; the control plane never is.
            "SANDBOX_ENV_ALLOW": "DEPLOY_TOKEN,CONTENOX_PROBE",
        },
    )
    assert {k: seen.get(k) for k in base} == base
    assert seen.get("LC_PROBE") == "lc", "LC_* is in the safe base set"
    assert seen.get("DEPLOY_TOKEN") == "tok-probe"
    extra = sorted(set(seen) - STRICT_BASE - {"LC_PROBE", "DEPLOY_TOKEN"} - _SHELL_OWN)
    extra = [name for name in extra if not name.startswith("LC_")]
    assert extra == [], f"strict let through names outside the base set and the allow list: {extra}"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_strict_drops_a_base_variable_sandbox_env_deny_names(instance: Instance) -> None:
    seen = _shell_env_under_run(
        instance,
        {"TZ": "UTC", "LANG": "C.UTF-8", "SANDBOX_SHELL_SCRUB": "strict", "SANDBOX_ENV_DENY": "TZ"},
    )
    assert "TZ" not in seen
    assert seen.get("LANG") == "C.UTF-8"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_allow_and_deny_globs_match_case_sensitively(instance: Instance) -> None:
    seen = _shell_env_under_run(
        instance,
        {
            "GOCACHE": "/probe",
            "PROBE_ONE": "1",
            "PROBE_TWO": "2",
            "SANDBOX_SHELL_SCRUB": "strict",
            # A prefix glob admits both PROBE_ names; a lower-case name admits nothing.
            "SANDBOX_ENV_ALLOW": "PROBE_* gocache",
        },
    )
    assert (seen.get("PROBE_ONE"), seen.get("PROBE_TWO")) == ("1", "2")
    assert "GOCACHE" not in seen


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_injected_variable_reaches_the_shell_and_wins_over_the_inherited_value(
    instance: Instance,
) -> None:
    instance.must("shell-env", "set", "PROBE_PLAIN=injected", "DATABASE_DSN=postgres://probe/app")
    seen = _shell_env_under_run(instance, {"PROBE_PLAIN": "inherited"})
    assert seen.get("PROBE_PLAIN") == "injected"
    assert seen.get("DATABASE_DSN") == "postgres://probe/app"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_injected_variable_applies_even_with_the_scrub_off(instance: Instance) -> None:
    instance.must("shell-env", "set", "PROBE_INJECTED=on-top")
    seen = _shell_env_under_run(instance, {"SANDBOX_SHELL_SCRUB": "off"})
    assert seen.get("PROBE_INJECTED") == "on-top"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_injected_value_wins_even_where_the_scrub_strips_the_name(instance: Instance) -> None:
    instance.must("shell-env", "set", "DEPLOY_TOKEN=set-by-operator")
    seen = _shell_env_under_run(instance, {"DEPLOY_TOKEN": "inherited-secret"})
    assert seen.get("DEPLOY_TOKEN") == "set-by-operator"


# function: needs background (an edit made while the unit that spawns the shell is alive)
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_an_edit_to_shell_env_applies_to_the_next_shell_without_a_restart(
    instance: Instance,
) -> None:
    _setup(instance, ASKING_POLICY)
    run = start_contenox(
        instance, "run", "--policy", "envcheck", "--timeout", "90s", "print the environment"
    )
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)
    # The unit is already running and its shell not yet spawned.
    instance.must("shell-env", "set", "PROBE_LIVE=edited-mid-run")
    approve(instance, ask.id)
    run.wait(timeout=90).assert_success()
    assert _printed_env(instance).get("PROBE_LIVE") == "edited-mid-run"


# function: needs capture
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_sandbox_env_previews_exactly_the_names_a_run_shell_receives(instance: Instance) -> None:
    env = {**CREDENTIALS, **TOOLCHAIN, "SANDBOX_ENV_DENY": "PROBE_PLAIN"}
    instance.must("shell-env", "set", "PROBE_INJECTED=x")
    preview = instance.must("sandbox", "env", env=env)
    previewed = {
        line for line in preview.stdout.splitlines() if line and not line.startswith("#")
    } - _SHELL_OWN
    seen = set(_shell_env_under_run(instance, env)) - _SHELL_OWN
    assert previewed == seen, (
        f"only in the preview: {sorted(previewed - seen)}; "
        f"only in the shell: {sorted(seen - previewed)}"
    )


# function: needs capture (stdout checked against values set in the env)
def test_sandbox_env_prints_names_and_withholds_every_value(instance: Instance) -> None:
    result = instance.must(
        "sandbox", "env", env={"PROBE_PLAIN": "value-must-not-print", "SANDBOX_SHELL_SCRUB": "off"}
    )
    assert "PROBE_PLAIN" in result.stdout.splitlines()
    assert "value-must-not-print" not in result.stdout + result.stderr


# function: needs capture
def test_sandbox_env_defaults_to_the_deny_secrets_agent_shell_policy(instance: Instance) -> None:
    result = instance.must("sandbox", "env", env={**CREDENTIALS, **TOOLCHAIN})
    names = result.stdout.splitlines()
    assert "deny-secrets" in result.stdout
    assert "GOCACHE" in names and "PROBE_PLAIN" in names
    assert [k for k in CREDENTIALS if k in names] == []


# function: needs capture
def test_sandbox_env_terminal_shows_the_terminal_policy_which_defaults_to_off(
    instance: Instance,
) -> None:
    result = instance.must("sandbox", "env", "--terminal", env={**CREDENTIALS})
    names = result.stdout.splitlines()
    assert "scrub mode: off" in result.stdout
    assert [k for k in CREDENTIALS if k not in names] == []


# function: needs capture
def test_sandbox_terminal_scrub_deny_secrets_strips_the_terminal_preview(
    instance: Instance,
) -> None:
    result = instance.must(
        "sandbox",
        "env",
        "--terminal",
        env={**CREDENTIALS, **TOOLCHAIN, "SANDBOX_TERMINAL_SCRUB": "deny-secrets"},
    )
    names = result.stdout.splitlines()
    assert "scrub mode: deny-secrets" in result.stdout
    assert [k for k in CREDENTIALS if k in names] == []
    assert "GOCACHE" in names


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


# function: needs acp
@defect(
    "a scripted local_shell `env` over `contenox acp`, with DEPLOY_TOKEN, STRIPE_SECRET_KEY, "
    "DB_PASSWORD, CONTENOX_PROBE and three more credential shapes set on contenox and the "
    "editor, printed all seven: contenox's terminal/create request "
    'carries only {"command": "env", "cwd": …, "outputByteLimit": …} — no env and no '
    "wrapper — so nothing scrubs the forwarded shell. environment.md: 'It is live today across "
    "every agent-reachable shell this CLI spawns — … and contenox acp / contenox acpx (the ACP "
    "session's shell and its terminal passthrough)'; 'a task that reads env … finds nothing'."
)
def test_over_acp_the_forwarded_shell_is_scrubbed_of_credentials(instance: Instance) -> None:
    seen = _acp_shell_env(instance, {**CREDENTIALS, **TOOLCHAIN})
    assert seen.get("GOCACHE") == TOOLCHAIN["GOCACHE"]
    leaked = sorted(k for k in CREDENTIALS if k in seen)
    assert leaked == [], f"credentials reached the editor's shell: {leaked}"


# function: needs acp
@defect(
    "after `contenox shell-env set PROBE_INJECTED=on-top`, a scripted local_shell `env` over "
    "`contenox acp` printed no PROBE_INJECTED: the terminal/create request carries no env at "
    "all. contenox-cli.md `contenox shell-env`: 'the global environment variables contenox "
    "injects into the shells it spawns (local_shell, forwarded to the connected client's "
    "terminal) … so an injected value always wins'."
)
def test_over_acp_an_injected_variable_reaches_the_forwarded_shell(instance: Instance) -> None:
    instance.init()
    instance.must("shell-env", "set", "PROBE_INJECTED=on-top")
    seen = _acp_shell_env(instance, {})
    assert seen.get("PROBE_INJECTED") == "on-top"


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


# function: needs another cwd
def test_an_injected_variable_is_global_a_second_workspace_lists_it_too(
    instance: Instance,
) -> None:
    instance.must("shell-env", "set", "GOCACHE=/var/cache/go")
    elsewhere = instance.work / "elsewhere"
    elsewhere.mkdir()
    listed = instance.must("shell-env", "list", cwd=elsewhere)
    assert "GOCACHE=/var/cache/go" in listed.stdout.splitlines(), listed.describe()
