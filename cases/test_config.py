"""`contenox config` and reference/config.md: persistent defaults, their scope, and what they steer.

Every value is read back through contenox's own commands (`config get/list`,
`model list`, `approvals list`, the `serve` banner, what a run does).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    output_of,
    probe,
    route,
    start_contenox,
    step,
    wait_until,
)
from harness.probes import approvals, await_approval, missions

# --- set, get, list -----------------------------------------------------------------------

# (key, value as typed, value as `config get` prints it, scope): the example block of
# contenox-cli.md `contenox config` and reference/config.md "Set persistent defaults".
DOCUMENTED_EXAMPLES = [
    ("default-provider", "ollama", "ollama", "global"),
    ("default-model", "qwen3:8b", "qwen3:8b", "global"),
    ("default-alt-model", "gemini-3.6-flash", "gemini-3.6-flash", "global"),
    ("default-alt-provider", "gemini", "gemini", "global"),
    ("default-autocomplete-model", "qwen2.5-coder:7b", "qwen2.5-coder:7b", "global"),
    ("default-autocomplete-provider", "ollama", "ollama", "global"),
    ("default-audio-model", "gemini-2.5-flash", "gemini-2.5-flash", "global"),
    ("default-audio-provider", "gemini", "gemini", "global"),
    ("default-max-tokens", "8192", "8192", "global"),
    ("default-think", "high", "high", "global"),
    ("default-chain", ".contenox/my-chain.json", ".contenox/my-chain.json", "workspace"),
    ("hitl-policy-name", "hitl-policy-strict.json", "hitl-policy-strict.json", "workspace"),
    ("approval-ceiling", "24h", "24h0m0s", "global"),
    ("approval-ceiling", "never", "never", "global"),
]

# The rest of the documented global keys, with a value of the documented shape.
OTHER_GLOBAL_KEYS = [
    ("telemetry-enabled", "true"),
    ("update-check", "false"),
    ("opt-in-beta", "true"),
    ("default-mission-agent", "reviewer"),
    ("default-mission-policy", "run"),
    ("default-oracle-chain", "chain-oracle-default.json"),
    ("default-oracle-policy", "hitl-policy-oracle.json"),
    ("oracle-approves-tool-calls", "true"),
    ("fleet-max-parallel", "3"),
    ("log-max-size", "512KB"),
    ("log-max-files", "5"),
    ("log-max-age-days", "7"),
]

SET_THEN_GET = [
    Case(
        name=f"config set {key} {value} is read back by config get as {scope}",
        steps=[
            step("config", "set", key, value, stdout_has=[f"{key} = {shown}  ({scope})"]),
            step("config", "get", key, stdout_has=[f"{shown}  ({scope})"]),
        ],
    )
    for key, value, shown, scope in DOCUMENTED_EXAMPLES
]

EVERY_GLOBAL_KEY = [
    Case(
        name=f"config accepts the global key {key}",
        steps=[
            step("config", "set", key, value, stdout_has=[f"{key} = {value}  (global)"]),
            step("config", "get", key, stdout_has=[f"{value}  (global)"]),
        ],
    )
    for key, value in OTHER_GLOBAL_KEYS
]

AN_UNKNOWN_KEY_IS_REFUSED = Case(
    name="config set refuses an unknown key naming the valid ones and stores nothing",
    steps=[
        step(
            "config",
            "set",
            "default-modle",
            "qwen3:8b",
            exit_code=1,
            notices_has=['unknown key "default-modle"', "valid keys: approval-ceiling"],
        ),
        step("config", "list", stdout_lacks=["default-modle", "qwen3:8b"]),
    ],
)

CONFIG_LIST_SHOWS_VALUE_AND_SCOPE = Case(
    name="config list shows each key's value and its scope",
    steps=[
        step("config", "set", "default-model", "qwen3:8b"),
        step("config", "set", "hitl-policy-name", "hitl-policy-strict.json"),
    ],
    probes=[output_of("config", "list")],
)


def _list_row(instance: Instance, key: str, cwd: Path | None = None) -> list[str]:
    out = instance.must("config", "list", cwd=cwd).stdout
    [row] = [line.split() for line in out.splitlines() if line.startswith(key + " ")]
    return row


def test_config_list_shows_a_global_and_a_workspace_value_with_their_scopes(
    instance: Instance,
) -> None:
    instance.init()
    instance.must("config", "set", "default-model", "qwen3:8b")
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-strict.json")

    assert _list_row(instance, "default-model") == ["default-model", "qwen3:8b", "global"]
    assert _list_row(instance, "hitl-policy-name") == [
        "hitl-policy-name",
        "hitl-policy-strict.json",
        "workspace",
    ]


# --- scope: global vs workspace -------------------------------------------------------------


def _second_workspace(instance: Instance) -> Path:
    """Another project, outside the first one's tree, with its own `contenox init`."""
    other = instance.tmp / "other-project"
    other.mkdir()
    instance.must("init", cwd=other)
    return other


def test_a_workspace_key_set_in_one_project_is_invisible_in_another(instance: Instance) -> None:
    instance.init()
    other = _second_workspace(instance)

    instance.must("config", "set", "hitl-policy-name", "hitl-policy-strict.json")

    here = instance.must("config", "get", "hitl-policy-name")
    there = instance.must("config", "get", "hitl-policy-name", cwd=other)
    assert "hitl-policy-strict.json  (workspace)" in here.stdout, here
    assert "hitl-policy-strict" not in there.stdout, there


def test_a_global_default_is_seen_from_every_workspace(instance: Instance) -> None:
    instance.init()
    other = _second_workspace(instance)

    instance.must("config", "set", "default-model", "qwen3:8b")

    there = instance.must("config", "get", "default-model", cwd=other)
    assert "qwen3:8b  (global)" in there.stdout, there


@defect(
    "no command gives a workspace key a global value: in a directory with no `.contenox` "
    "above it, `contenox config set default-chain chain-global.json` prints '✓  default-chain "
    "= chain-global.json  (workspace)', and `contenox config get default-chain` in an "
    "initialised project then prints '  (global)' (empty). Contradicts reference/config.md: "
    "'`default-chain` | workspace | … falls back to the global value when unset' (same for "
    "`hitl-policy-name`) and `config set --help`: 'fall back to the global value when not set "
    "locally'."
)
def test_a_workspace_key_unset_locally_falls_back_to_the_global_value(
    instance: Instance,
) -> None:
    instance.init()
    outside = instance.tmp / "no-project"
    outside.mkdir()
    # Set where no workspace is found, the key can only land in the global scope.
    instance.must("config", "set", "default-chain", "chain-global.json", cwd=outside)

    got = instance.must("config", "get", "default-chain")
    assert "chain-global.json" in got.stdout, got


def test_a_project_resolves_to_the_same_workspace_from_any_directory_inside_it(
    instance: Instance,
) -> None:
    instance.init()
    deeper = instance.work / "src" / "internal"
    deeper.mkdir(parents=True)

    instance.must("config", "set", "hitl-policy-name", "hitl-policy-strict.json")

    got = instance.must("config", "get", "hitl-policy-name", cwd=deeper)
    assert "hitl-policy-strict.json  (workspace)" in got.stdout, got


def test_sessions_of_one_workspace_are_invisible_to_another(instance: Instance) -> None:
    instance.init()
    other = _second_workspace(instance)

    instance.must("session", "new", "only-here")

    assert "only-here" in instance.must("session", "list").stdout
    assert "only-here" not in instance.must("session", "list", cwd=other).stdout


def test_a_backend_registered_in_one_workspace_is_listed_in_every_other(
    instance: Instance,
) -> None:
    instance.init()
    other = _second_workspace(instance)

    instance.use_script(Script(turns=["unused"]))

    assert "scripted" in instance.must("backend", "list", cwd=other).stdout


# --- database location --------------------------------------------------------------------


def test_db_points_a_command_at_another_sqlite_file(instance: Instance) -> None:
    instance.init()
    other_db = instance.tmp / "isolated.db"

    instance.must("--db", str(other_db), "config", "set", "default-model", "isolated-model")

    assert other_db.is_file()
    isolated = instance.must("--db", str(other_db), "config", "get", "default-model")
    default = instance.must("config", "get", "default-model")
    assert "isolated-model" in isolated.stdout, isolated
    assert "isolated-model" not in default.stdout, default


def test_data_dir_picks_the_workspace_instead_of_the_walk_up(instance: Instance) -> None:
    instance.init()
    other = _second_workspace(instance)
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-strict.json", cwd=other)

    got = instance.must("--data-dir", str(other / ".contenox"), "config", "get", "hitl-policy-name")

    assert "hitl-policy-strict.json  (workspace)" in got.stdout, got


# --- approval-ceiling ---------------------------------------------------------------------

GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"message": "hi"})]),
        Turn(tool_calls=[mission_report("result", "echoed")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _ask_left_waiting(instance: Instance) -> str:
    """A run that times out on a gated `echo`; return its ask's EXPIRES-IN."""
    instance.contenox("run", "--policy", "run", "--timeout", "3s", "echo hi").assert_failure()
    [ask] = approvals(instance)
    return ask.expires_in


def test_an_ask_waits_seven_days_while_approval_ceiling_is_unset(instance: Instance) -> None:
    # The run ends at its ask (torn down, stopped or refused) by design, so the
    # turns after it are never asked for: model demand cannot be checked here.
    instance.recorder.demand_checked = False
    instance.init()
    instance.use_script(GATED_ECHO)

    # 168h less the seconds the run took.
    assert _ask_left_waiting(instance) == "6d"


def test_approval_ceiling_sets_how_long_an_ask_waits(instance: Instance) -> None:
    # The run ends at its ask (torn down, stopped or refused) by design, so the
    # turns after it are never asked for: model demand cannot be checked here.
    instance.recorder.demand_checked = False
    instance.init()
    instance.use_script(GATED_ECHO)
    instance.must("config", "set", "approval-ceiling", "24h")

    assert _ask_left_waiting(instance) == "23h"


@pytest.mark.parametrize("word", ["never", "forever", "indefinite"])
def test_approval_ceiling_never_leaves_an_ask_with_no_deadline(
    instance: Instance, word: str
) -> None:
    # The run ends at its ask (torn down, stopped or refused) by design, so the
    # turns after it are never asked for: model demand cannot be checked here.
    instance.recorder.demand_checked = False
    instance.init()
    instance.use_script(GATED_ECHO)
    instance.must("config", "set", "approval-ceiling", word)

    assert _ask_left_waiting(instance) == "never"


APPROVAL_CEILING_REFUSES_WHAT_IS_NOT_A_WAIT = [
    Case(
        name=f"config set approval-ceiling {value} is refused as not a wait",
        steps=[
            step("config", "set", "approval-ceiling", value, exit_code=1, notices_has=[complaint]),
            step("config", "list", stdout_lacks=[value]),
        ],
    )
    for value, complaint in (
        ("24hours", '"24hours" is not a wait'),
        ("0s", '"0s" states no wait at all'),
    )
]


# --- opt-in-beta --------------------------------------------------------------------------

BETA_OFF_HIDES_EVENTS = Case(
    name="with opt-in-beta off the events command is not offered",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("--help", stdout_lacks=["events       Tail"]),
    ],
)

BETA_ON_OFFERS_EVENTS = Case(
    name="with opt-in-beta on the events command is offered",
    steps=[
        step("config", "set", "opt-in-beta", "true"),
        step("--help", stdout_has=["events       Tail the durable event log"]),
    ],
)

BETA_OFF_MEANS_EVENTS_IS_ABSENT = Case(
    name="with opt-in-beta off the events tier is absent, not merely hidden",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("events", "list", exit_code=1, stdout_lacks=["(no events)"]),
    ],
    defect=(
        "with `contenox config set opt-in-beta false`, `contenox --help` no longer lists "
        "`events`, but `contenox events list` still runs: exit 0, '(no events)'. Contradicts "
        "reference/config.md, `opt-in-beta`: 'Off means the features are absent, not "
        "disabled', and contenox-cli.md `contenox config`: 'which are otherwise absent "
        "entirely'."
    ),
)

BETA_OFF_MEANS_THE_AGENT_ROSTER_IS_ABSENT = Case(
    name="with opt-in-beta off the agent roster is absent",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("--help", stdout_lacks=["agent        Inspect"]),
        step("agent", "list", exit_code=1, stdout_lacks=["reviewer"]),
    ],
    defect=(
        "with `contenox config set opt-in-beta false`, `contenox --help` still lists `agent` "
        "('Inspect and manage the runtime's declared agents.') and `contenox agent list` exits "
        "0 listing the declared agents (run, reviewer, triage, …). Contradicts "
        "reference/config.md, `opt-in-beta`: 'Enable beta features …: the agent roster "
        "(`contenox agent`, …) … Off means the features are absent, not disabled' (note that "
        "guide/quickstart.md step 4 runs `contenox agent list` with no beta switch)."
    ),
)

BETA_ENV_TURNS_IT_ON_FOR_ONE_INVOCATION = Case(
    name="CONTENOX_OPT_IN_BETA=1 turns the beta on for one invocation only",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("--help", env={"CONTENOX_OPT_IN_BETA": "1"}, stdout_has=["events       Tail"]),
        step("--help", stdout_lacks=["events       Tail"]),
        step("config", "get", "opt-in-beta", stdout_has=["false"]),
    ],
)

BETA_ENV_TURNS_IT_OFF_FOR_ONE_INVOCATION = Case(
    name="CONTENOX_OPT_IN_BETA with any other value turns the beta off for one invocation",
    steps=[
        step("config", "set", "opt-in-beta", "true"),
        step("--help", env={"CONTENOX_OPT_IN_BETA": "no"}, stdout_lacks=["events       Tail"]),
        step("--help", stdout_has=["events       Tail"]),
    ],
)


# --- per-process overrides of the default-* model settings ----------------------------------

ENV_OVERRIDES_THE_DEFAULT_MODEL = Case(
    name="CONTENOX_DEFAULT_MODEL overrides the default model for one process without persisting",
    backends={
        "scripted": Script(turns=["from the configured default"]),
        "other": Script(model="other-model", turns=["from the model the environment named"]),
    },
    steps=[
        step(
            "chat",
            "hello",
            env={"CONTENOX_DEFAULT_MODEL": "other-model"},
            stdout_has=["from the model the environment named"],
        ),
        step("config", "get", "default-model", stdout_has=["scripted-test  (global)"]),
    ],
    serves_all_turns=False,
    defect=(
        "with two scripted backends (`scripted` serving model scripted-test, the configured "
        "default, and `other` serving other-model), `CONTENOX_DEFAULT_MODEL=other-model "
        "contenox chat hello` replies from scripted-test ('from the configured default'), as "
        "does adding CONTENOX_DEFAULT_PROVIDER=scripted-test; `--model other-model` and "
        "`config set default-model other-model` both switch it. `doctor` under the variable "
        "still prints 'Default model: scripted-test'. Contradicts reference/config.md and "
        "contenox-cli.md: 'The `default-*` model settings can also be overridden per process — "
        "without persisting anything — via the `CONTENOX_DEFAULT_*` environment variables'."
    ),
)


# --- envelopes and missions -----------------------------------------------------------------

MISSION_FIRE_FALLS_BACK_TO_THE_DEFAULT_MISSION_POLICY = Case(
    name="mission fire without policy runs under default-mission-policy",
    script=Script(
        turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", "fired without a policy")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    ),
    steps=[
        step("config", "set", "default-mission-policy", "run"),
        step("mission", "fire", "run", "report what you know", "--wait"),
        step("mission", "list", stdout_has=["landed"]),
    ],
    probes=[probe("missions", lambda i: [(m.agent, m.envelope, m.status) for m in missions(i)])],
    serves_all_turns=False,
)

MISSION_FIRE_IGNORES_THE_DEFAULT_MISSION_AGENT = Case(
    name="mission fire still needs the agent named when default-mission-agent is set",
    script=Script(turns=["this must not be served"]),
    steps=[
        step("config", "set", "default-mission-agent", "run"),
        step("mission", "fire", "--policy", "run", exit_code=1, notices_lacks=["Mission fired"]),
        step("mission", "list", stdout_has=["No missions"]),
    ],
    serves_all_turns=False,
)


def test_a_workspace_policy_file_shadows_the_one_in_home_by_name(instance: Instance) -> None:
    # function: needs files in both places and the ask list after the run
    instance.init()
    allow_all = '{"version": 1, "default_action": "allow", "rules": []}\n'
    approve_all = '{"version": 1, "default_action": "approve", "rules": []}\n'
    instance.write(".contenox/hitl-policy-mine.json", allow_all)
    (instance.home / ".contenox" / "hitl-policy-mine.json").write_text(approve_all)
    instance.use_script(GATED_ECHO)

    result = instance.contenox("run", "--policy", "mine", "--timeout", "60s", "echo hi")

    # The workspace copy allows echo, so nothing waits and the run lands.
    result.assert_success()
    assert approvals(instance) == []


# --- what the serve host reads from config ---------------------------------------------------


def _serve_banner(instance: Instance) -> str:
    """Start `contenox serve .`, return everything it printed up to its ready banner, stop it."""
    host = start_contenox(instance, "serve", ".")
    host.wait_for_output("Relay ", stream="stdout", timeout=60)
    host.interrupt()
    result = host.wait(timeout=60)
    return result.stdout + result.notices


def _serving(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=["unused"]))


def test_serve_keeps_host_logs_by_the_documented_defaults(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)

    banner = _serve_banner(instance)

    assert "new part at 10MB · keep 14 files · 14 days" in banner, banner


def test_serve_keeps_host_logs_by_the_configured_bounds(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)
    instance.must("config", "set", "log-max-size", "512KB")
    instance.must("config", "set", "log-max-files", "5")
    instance.must("config", "set", "log-max-age-days", "7")

    banner = _serve_banner(instance)

    assert "new part at 512KB · keep 5 files · 7 days" in banner, banner


def test_without_default_oracle_chain_no_oracle_is_mounted(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)

    assert "Oracle mounted" not in _serve_banner(instance)


def test_setting_default_oracle_chain_mounts_the_oracle(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)
    instance.must("config", "set", "default-oracle-chain", "chain-oracle-default.json")

    banner = _serve_banner(instance)

    assert "Oracle mounted (chain-oracle-default.json under hitl-policy-oracle.json)" in banner
    assert "questions AND its approve-tier tool calls" not in banner, banner


def test_default_oracle_policy_is_the_envelope_the_oracle_runs_under(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)
    instance.must("config", "set", "default-oracle-chain", "chain-oracle-default.json")
    instance.must("config", "set", "default-oracle-policy", "hitl-policy-strict.json")

    banner = _serve_banner(instance)

    assert "(chain-oracle-default.json under hitl-policy-strict.json)" in banner, banner


def test_oracle_approves_tool_calls_lets_the_oracle_rule_on_tool_calls(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)
    instance.must("config", "set", "default-oracle-chain", "chain-oracle-default.json")
    instance.must("config", "set", "oracle-approves-tool-calls", "true")

    banner = _serve_banner(instance)

    assert "questions AND its approve-tier tool calls" in banner, banner


# --- fleet-max-parallel ---------------------------------------------------------------------


@defect(
    "with `contenox config set fleet-max-parallel 1` and one `contenox run` holding an open "
    "unit (waiting on its gated `echo` ask), a second `contenox run --policy run --timeout 20s` "
    "from another process is admitted and lands (exit 0, 'finished: landed'), so two units "
    "are open at once: each `run` embeds its own fleet. Contradicts reference/config.md, "
    "`fleet-max-parallel`: 'Max concurrently open mission units across the fleet' and "
    "contenox-cli.md: 'Fleet-wide admission cap'."
)
def test_fleet_max_parallel_caps_the_units_open_at_once(instance: Instance) -> None:
    # function: needs background (one unit holds the only slot while a second asks for one)
    instance.init()
    instance.use_script(GATED_ECHO)
    # The second run replies from its own model, so only admission can stop it landing.
    instance.use_script(
        Script(
            model="lander",
            turns=[
                Turn(text="Filing.", tool_calls=[mission_report("result", "second unit ran")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ],
        ),
        name="lander",
        filename="lander.json",
        make_default=False,
    )
    instance.must("config", "set", "fleet-max-parallel", "1")
    holder = start_contenox(instance, "run", "--policy", "run", "--timeout", "120s", "echo hi")
    await_approval(instance, 60, tool="native-echo.echo", run=holder)

    second = instance.contenox(
        "run", "--model", "lander", "--policy", "run", "--timeout", "20s", "report"
    )
    open_while_both_ran = sum(m.status == "open" for m in missions(instance))
    holder.interrupt()
    holder.wait(timeout=60)

    assert "finished: landed" not in second.notices, second.describe()
    assert open_while_both_ran <= 1, missions(instance)


# --- external backends for state (opt-in) ----------------------------------------------------

# The NATS client logs with Go's default logger: a wall-clock stamp per line.
GO_LOG_TIME = {r"\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}": "[TIME]"}
# Nothing listens on 127.0.0.1:1, so a server named there never answers; no case needs
# a network beyond loopback.

NOBODY = "127.0.0.1:1"

REFUSED_STATE_SETTINGS = [
    Case(
        name=f"{variable} {why} stops the command naming the variable",
        init=False,
        steps=[
            step(
                "config",
                "list",
                env={variable: value},
                exit_code=1,
                stdout_lacks=["KEY "],
                notices_has=[variable, *complaint],
            ),
        ],
    )
    for variable, value, why, complaint in (
        (
            "CONTENOX_POSTGRES_URL",
            f"postgres://contenox:pw@{NOBODY}/contenox",
            "without the other two",
            ["also set CONTENOX_NATS_URL and CONTENOX_VALKEY_URL"],
        ),
        ("CONTENOX_VALKEY_URL", f"valkeys://{NOBODY}", "asking for TLS", ["TLS"]),
        ("CONTENOX_VALKEY_URL", f"rediss://{NOBODY}", "asking for TLS as rediss", ["TLS"]),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://appuser@{NOBODY}",
            "with a user and no password",
            ["a user with no password"],
        ),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://{NOBODY}/contenox",
            "with a path that is not a database index",
            ["not a database index"],
        ),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://{NOBODY}/-1",
            "with a negative database index",
            ["not a database index"],
        ),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://{NOBODY}/3/extra",
            "with a path deeper than a database index",
            ['carries the path "/3/extra"'],
        ),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://{NOBODY}/3?db=3",
            "with a query parameter other than namespace",
            ['only "namespace" is understood'],
        ),
        (
            "CONTENOX_VALKEY_URL",
            f"valkey://{NOBODY}/3?namespace=ten*ant",
            "with a glob character in its namespace",
            ["glob characters"],
        ),
        ("CONTENOX_NATS_URL", "bus-without-scheme", "that is not a URL", ["has no scheme"]),
    )
]

AN_UNREACHABLE_VALKEY_STOPS_A_RUN = Case(
    name="a run with an unreachable CONTENOX_VALKEY_URL stops naming the variable",
    script=Script(turns=["this must not be served"]),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            env={"CONTENOX_VALKEY_URL": f"valkey://{NOBODY}"},
            exit_code=1,
            stdout_lacks=["this must not be served"],
            notices_has=["CONTENOX_VALKEY_URL: cannot reach the Valkey server it names"],
        ),
    ],
    serves_all_turns=False,
)

AN_UNREACHABLE_POSTGRES_STOPS_THE_COMMAND = Case(
    name="an unreachable CONTENOX_POSTGRES_URL stops the command instead of using the local file",
    steps=[
        step(
            "config",
            "list",
            env={
                "CONTENOX_POSTGRES_URL": f"postgres://contenox:pw@{NOBODY}/contenox",
                "CONTENOX_NATS_URL": f"nats://{NOBODY}",
                "CONTENOX_VALKEY_URL": f"valkey://{NOBODY}",
            },
            exit_code=1,
            stdout_lacks=["KEY "],
            notices_has=["CONTENOX_POSTGRES_URL: cannot use the Postgres database it names"],
        ),
    ],
)

DOCTOR_NAMES_THE_STATE_BACKENDS = Case(
    name="doctor's State storage section names each backend and the unreachable one's variable",
    script=Script(turns=["unused"]),
    steps=[
        step(
            "doctor",
            env={
                "CONTENOX_VALKEY_URL": f"valkey://appuser:s3cret-pw@{NOBODY}/3?namespace=contenox"
            },
            exit_code=None,
            stdout_has=[
                "State storage:",
                "• store: SQLite (",
                "• message bus: SQLite (",
                "Status: local file",
                f"• key-value cache: Valkey (valkey://appuser:xxxxx@{NOBODY}/3?namespace=contenox, "
                "from CONTENOX_VALKEY_URL)",
                "Status: unreachable",
            ],
            stdout_lacks=["s3cret-pw"],
        ),
    ],
    serves_all_turns=False,
)

DOCTOR_MASKS_A_NATS_TOKEN = Case(
    name="doctor masks a NATS token given where a user name goes",
    redact=GO_LOG_TIME,
    script=Script(turns=["unused"]),
    steps=[
        step(
            "doctor",
            env={"CONTENOX_NATS_URL": f"nats://s3cret-token@{NOBODY}"},
            exit_code=None,
            stdout_has=[f"• message bus: NATS (nats://xxxxx@{NOBODY}, from CONTENOX_NATS_URL)"],
            stdout_lacks=["s3cret-token"],
        ),
    ],
    serves_all_turns=False,
)

DOCTOR_WITHOUT_STATE_VARIABLES = Case(
    name="doctor has no State storage section when no state variable is set",
    script=Script(turns=["unused"]),
    steps=[step("doctor", stdout_lacks=["State storage"])],
    serves_all_turns=False,
)

A_REMOTE_STATE_BACKEND_THAT_DOES_NOT_ANSWER_STOPS_DOCTOR = Case(
    name="doctor stops nonzero when a selected remote state backend does not answer",
    redact=GO_LOG_TIME,
    script=Script(turns=["unused"]),
    steps=[
        step(
            "doctor",
            env={"CONTENOX_NATS_URL": f"nats://{NOBODY}"},
            exit_code=1,
            stdout_has=["from CONTENOX_NATS_URL)", "Status: unreachable"],
            stdout_lacks=["Ready: yes"],
        ),
    ],
    serves_all_turns=False,
)


# --- backends that need a URL ----------------------------------------------------------------

A_BACKEND_TYPE_THAT_NEEDS_A_URL_IS_REFUSED_WITHOUT_ONE = [
    Case(
        name=f"backend add --type {kind} without url is refused",
        init=False,
        steps=[
            step("backend", "add", "needs-url", "--type", kind, exit_code=1),
            step("backend", "list", stdout_lacks=["needs-url"]),
        ],
    )
    for kind in ("vllm", "bedrock", "vertex-google")
]


# --- /mission in an editor falls back to the configured agent and envelope -------------------

LANDING = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "fired from the editor")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _mission_from_the_editor(instance: Instance, policy: str) -> tuple[str, list[object]]:
    """`/mission <intent>` over ACP with the defaults set; the confirmation and the missions."""
    instance.init()
    instance.use_script(LANDING)
    instance.must("config", "set", "default-mission-agent", "reviewer")
    instance.must("config", "set", "default-mission-policy", policy)
    with open_acp(instance) as acp:
        turn = acp.prompt("/mission report what you know")
        if "Mission fired" in turn.text:
            # The unit is a child of the acp process: keep it up until the mission ends.
            wait_until(
                lambda: [m for m in missions(instance) if m.status != "open"] or None,
                timeout=120,
                interval=0.5,
                what="the mission fired from the editor to finish",
            )
    return turn.text, [(m.agent, m.envelope, m.status) for m in missions(instance)]


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_mission_in_an_editor_fires_the_default_mission_agent_under_the_default_policy(
    instance: Instance,
) -> None:
    # function: needs an ACP client
    text, fired = _mission_from_the_editor(instance, "hitl-policy-run.json")

    assert 'Mission fired at default mission agent "reviewer"' in text, text
    assert "(default-mission-policy)" in text, text
    assert fired == [("reviewer", "hitl-policy-run.json", "landed")], fired


@defect(
    "with `config set default-mission-policy run` (the value `contenox mission fire` and "
    "`contenox run` accept as the `run` envelope), `/mission report what you know` over ACP "
    'fires nothing and replies \'⚠️  unknown mission envelope "run" (default-mission-policy): '
    "no such policy file on the search path. Available: …, hitl-policy-run.json, …'; only the "
    "file name `hitl-policy-run.json` works there. Contradicts contenox-cli.md, `contenox "
    "config`: '`default-mission-policy` | Envelope (HITL policy) name that both `/mission` and "
    "`contenox mission fire --policy` fall back to when none is named.'"
)
def test_mission_in_an_editor_accepts_the_envelope_name_mission_fire_accepts(
    instance: Instance,
) -> None:
    # function: needs an ACP client
    text, fired = _mission_from_the_editor(instance, "run")

    assert 'Mission fired at default mission agent "reviewer"' in text, text
    assert fired == [("reviewer", "run", "landed")], fired


# --- which envelope a surface runs under: --hitl-policy ---------------------------------------

WRITE_OVER_ACP = Script(
    turns=[
        route(),
        Turn(
            text="Writing.",
            tool_calls=[ToolCall("write_file", {"path": "out.txt", "content": "hello\n"})],
        ),
        "Done.",
    ]
)
# An envelope of our own that lets everything through except a file write.
NO_WRITES = json.dumps(
    {
        "version": 1,
        "default_action": "allow",
        "rules": [{"tools": "local_fs", "tool": "write_file", "action": "deny"}],
    }
)


def _write_over_acp(instance: Instance, *args: str) -> bool:
    """Prompt a scripted write over `contenox acp <args>` (editor allows every ask); written?"""
    instance.use_script(WRITE_OVER_ACP)
    with open_acp(instance, *args, permission="allow") as acp:
        turn = acp.prompt("write the greeting")
        assert turn.stop_reason == "end_turn", turn.describe()
    return (instance.work / "out.txt").exists()


def _with_no_writes_envelope(instance: Instance) -> None:
    instance.init()
    # In ~/.contenox: `acp` resolves --hitl-policy when it starts, before any session has
    # named a workspace, so it searches only ~/.contenox and its .generated/.
    (instance.home / ".contenox" / "hitl-policy-nowrites.json").write_text(NO_WRITES)


@pytest.mark.parametrize("name", ["nowrites", "hitl-policy-nowrites.json"])
def test_hitl_policy_by_envelope_name_or_file_name_bounds_an_acp_session(
    instance: Instance, name: str
) -> None:
    # function: needs an ACP client
    _with_no_writes_envelope(instance)

    assert not _write_over_acp(instance, "--hitl-policy", name)


@defect(
    "with `~/.contenox/hitl-policy-nowrites.json` (default_action allow, `local_fs` "
    "`write_file` deny) and `contenox config set hitl-policy-name hitl-policy-nowrites.json` "
    "in the project, `contenox acp` started there (no --hitl-policy) still writes: a scripted "
    "`write_file` is asked and, allowed by the editor, `out.txt` appears; the same envelope "
    "given as `--hitl-policy nowrites` denies it. Contradicts contenox-cli.md `contenox "
    "config`: '`hitl-policy-name` | Envelope this workspace runs under … Overridden per run by "
    "`--hitl-policy` on `beam`, `acp`, `acpx` and `serve`' and reference/config.md: "
    "'`hitl-policy-name` is the persistent setting'."
)
def test_hitl_policy_name_is_the_envelope_a_workspace_runs_under(instance: Instance) -> None:
    # function: needs an ACP client
    _with_no_writes_envelope(instance)
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-nowrites.json")

    assert not _write_over_acp(instance)


def test_hitl_policy_overrides_hitl_policy_name_for_one_run(instance: Instance) -> None:
    # function: needs an ACP client
    _with_no_writes_envelope(instance)
    instance.must("config", "set", "hitl-policy-name", "hitl-policy-nowrites.json")

    assert _write_over_acp(instance, "--hitl-policy", "default")


HITL_POLICY_PATH_IS_VERBATIM = Case(
    name="hitl-policy naming a path that does not exist is an error rather than a fallback",
    script=Script(turns=["unused"]),
    steps=[
        step(
            "serve",
            ".",
            "--hitl-policy",
            "./ops/locked.json",
            exit_code=1,
            notices_has=['--hitl-policy "./ops/locked.json"', "no such file or directory"],
            stdout_lacks=["Workspace "],
            timeout=60,
        ),
    ],
    serves_all_turns=False,
)


def test_a_grants_own_timeout_wins_over_the_approval_ceiling(instance: Instance) -> None:
    # function: needs an envelope of our own beside the shipped one
    # The run ends at its ask (torn down, stopped or refused) by design, so the
    # turns after it are never asked for: model demand cannot be checked here.
    instance.recorder.demand_checked = False
    instance.init()
    instance.use_script(GATED_ECHO)
    shipped = instance.home / ".contenox" / ".generated" / "hitl-policy-run.json"
    policy = json.loads(shipped.read_text())
    policy["rules"].insert(
        0,
        {
            "tools": "native-echo",
            "tool": "echo",
            "action": "approve",
            "timeout_s": 1800,
            "on_timeout": "deny",
        },
    )
    (instance.home / ".contenox" / "hitl-policy-timed.json").write_text(json.dumps(policy))
    instance.must("config", "set", "approval-ceiling", "24h")

    instance.contenox("run", "--policy", "timed", "--timeout", "3s", "echo hi").assert_failure()

    [ask] = approvals(instance)
    assert ask.expires_in == "29m", ask


# --- the default-alt-* pair reaches a chain through {{var:alt_model}} ------------------------


def test_default_alt_model_reaches_a_chain_through_var_alt_model(instance: Instance) -> None:
    # function: needs a chain of our own beside the shipped one
    instance.init()
    instance.use_script(Script(turns=["from the default model"]))
    instance.use_script(
        Script(model="alt-model", turns=["from the alt model"]),
        name="alt",
        filename="alt.json",
        make_default=False,
    )
    shipped = instance.home / ".contenox" / ".generated" / "chain-agent-chat.json"
    chain = json.loads(shipped.read_text())
    first = chain["tasks"][0]
    first["execute_config"]["model"] = "{{var:alt_model}}"
    first["execute_config"]["provider"] = "{{var:alt_provider}}"
    instance.write("alt-chain.json", json.dumps(chain))
    instance.must("config", "set", "default-alt-model", "alt-model")
    instance.must("config", "set", "default-alt-provider", "scripted-test")

    reply = instance.must("chat", "--chain", "./alt-chain.json", "hello")

    assert "from the alt model" in reply.stdout, reply.describe()


# --- default-autocomplete-* pick the completion model, apart from default-model ---------------

AUTOCOMPLETE_USES_ITS_OWN_MODEL = Case(
    name="default-autocomplete-model picks the completion model apart from the chat default",
    backends={
        "scripted": Script(turns=["from the chat default"]),
        "completer": Script(model="completer-model", turns=["fmt.Println(1)"]),
    },
    steps=[
        step("config", "set", "default-autocomplete-model", "completer-model"),
        step("config", "set", "default-autocomplete-provider", "scripted-test"),
        step(
            "autocomplete",
            "--stdio",
            stdin=json.dumps(
                {"id": "1", "path": "main.go", "language": "go", "prefix": "func main() {\n\t"}
                | {"suffix": "\n}", "max_tokens": 64}
            )
            + "\n",
            stdout_has=['{"id":"1","completion":"fmt.Println(1)"}'],
            stdout_lacks=["from the chat default"],
            notices_has=["(model completer-model)"],
        ),
    ],
    serves_all_turns=False,
)
