"""`contenox config` and reference/config.md: persistent defaults, their scope, and what they steer.

Every value is read back through contenox's own commands (`config get/list`,
`model list`, `approvals list`, the `serve` banner, what a run does).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from dialogs import WRITE_GREETING, workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Probe,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    group,
    mission_finish,
    mission_report,
    output_of,
    probe,
    prompt,
    satisfies,
    signal,
    step,
    wait,
    wait_until,
    write,
)
from harness.case import Action
from harness.probes import approvals, missions

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


CONFIG_LIST_SHOWS_BOTH_SCOPES = Case(
    name="config list shows a global and a workspace value with their scopes",
    steps=[
        step("config", "set", "default-model", "qwen3:8b"),
        step("config", "set", "hitl-policy-name", "hitl-policy-strict.json"),
        step(
            "config",
            "list",
            stdout_has=[
                re.compile(r"^default-model +qwen3:8b +global *$", re.M),
                re.compile(r"^hitl-policy-name +hitl-policy-strict\.json +workspace *$", re.M),
            ],
        ),
    ],
)


# --- scope: global vs workspace -------------------------------------------------------------


# Another project, outside the first one's tree, with its own `contenox init`.
OTHER = "tmp/other-project"
INIT_OTHER = step("init", cwd=OTHER)

A_WORKSPACE_KEY_STAYS_IN_ITS_PROJECT = Case(
    name="a workspace key set in one project is invisible in another",
    steps=[
        INIT_OTHER,
        step("config", "set", "hitl-policy-name", "hitl-policy-strict.json"),
        step(
            "config", "get", "hitl-policy-name", stdout_has=["hitl-policy-strict.json  (workspace)"]
        ),
        step("config", "get", "hitl-policy-name", cwd=OTHER, stdout_lacks=["hitl-policy-strict"]),
    ],
)

A_GLOBAL_DEFAULT_IS_SEEN_EVERYWHERE = Case(
    name="a global default is seen from every workspace",
    steps=[
        INIT_OTHER,
        step("config", "set", "default-model", "qwen3:8b"),
        step("config", "get", "default-model", cwd=OTHER, stdout_has=["qwen3:8b  (global)"]),
    ],
)

A_WORKSPACE_KEY_FALLS_BACK_TO_THE_GLOBAL_VALUE = Case(
    name="a workspace key unset locally falls back to the global value",
    steps=[
        # Set where no workspace is found, the key can only land in the global scope.
        step("config", "set", "default-chain", "chain-global.json", cwd="tmp/no-project"),
        step("config", "get", "default-chain", stdout_has=["chain-global.json"]),
    ],
    defect=Defect(
        title="no command gives a workspace key a global value",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: '✓ default-chain = chain-global.json "
            "(workspace)'; no .contenox created in the unmarked dir; in the project, "
            "get prints ' (global)' with no value; list: 'default-chain global' with "
            "no value Note: No page or help text shows a way to set the global value "
            "(no --global flag is documented), and the one plausible way, setting it "
            "outside a workspace, stores it as '(workspace)'."
        ),
        reproduce=(
            "in a scratch HOME: in a directory with no `.contenox` above it, `contenox config "
            "set default-chain chain-global.json` prints '✓  default-chain = "
            "chain-global.json  (workspace)'; `contenox config get default-chain` in an "
            "initialised project then prints '  (global)' with no value"
        ),
        promised=(
            'reference/config.md:120 "| `default-chain` | workspace | Chain file used in this '
            'workspace; falls back to the global value when unset |"'
        ),
        observed="stored for the unmarked directory's workspace; the project sees no value",
        bears_on=(
            'reference/config.md:121 "| `hitl-policy-name` | workspace | Active HITL policy for '
            'this workspace; falls back to the global value when unset."',
        ),
    ),
)

A_PROJECT_IS_ONE_WORKSPACE_FROM_ANY_DIRECTORY = Case(
    name="a project resolves to the same workspace from any directory inside it",
    steps=[
        step("config", "set", "hitl-policy-name", "hitl-policy-strict.json"),
        step(
            "config",
            "get",
            "hitl-policy-name",
            cwd="work/src/internal",
            stdout_has=["hitl-policy-strict.json  (workspace)"],
        ),
    ],
)

SESSIONS_STAY_IN_THEIR_WORKSPACE = Case(
    name="sessions of one workspace are invisible to another",
    steps=[
        INIT_OTHER,
        step("session", "new", "only-here"),
        step("session", "list", stdout_has=["only-here"]),
        step("session", "list", cwd=OTHER, stdout_lacks=["only-here"]),
    ],
)

A_BACKEND_IS_LISTED_IN_EVERY_WORKSPACE = Case(
    name="a backend registered in one workspace is listed in every other",
    script=Script(turns=["unused"]),
    steps=[INIT_OTHER, step("backend", "list", cwd=OTHER, stdout_has=["scripted"])],
)


# --- database location --------------------------------------------------------------------

DB_POINTS_AT_ANOTHER_FILE = Case(
    name="db points a command at another sqlite file",
    steps=[
        step("--db", "{tmp}/isolated.db", "config", "set", "default-model", "isolated-model"),
        probe("isolated.db is a file", lambda i: (i.tmp / "isolated.db").is_file(), expect=True),
        step(
            "--db",
            "{tmp}/isolated.db",
            "config",
            "get",
            "default-model",
            stdout_has=["isolated-model"],
        ),
        step("config", "get", "default-model", stdout_lacks=["isolated-model"]),
    ],
)

DATA_DIR_PICKS_THE_WORKSPACE = Case(
    name="data dir picks the workspace instead of the walk up",
    steps=[
        INIT_OTHER,
        step("config", "set", "hitl-policy-name", "hitl-policy-strict.json", cwd=OTHER),
        step(
            "--data-dir",
            "{tmp}/other-project/.contenox",
            "config",
            "get",
            "hitl-policy-name",
            stdout_has=["hitl-policy-strict.json  (workspace)"],
        ),
    ],
)


# --- approval-ceiling ---------------------------------------------------------------------

GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi"})]),
        Turn(tool_calls=[mission_report("result", "echoed")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
ALLOW_ALL = '{"version": 1, "default_action": "allow", "rules": []}\n'
APPROVE_ALL = '{"version": 1, "default_action": "approve", "rules": []}\n'


# A run that times out on a gated `echo` leaves its ask waiting. The run ends at
# its ask by design, so the turns after the echo (WAITING_ECHO) are never asked for.
WAITING_ECHO = GATED_ECHO.optional_from(1)
LEAVE_AN_ASK_WAITING = step(
    "run", "--policy", "run", "--timeout", "3s", "echo hi", exit_code="non-zero"
)


def _one_ask_expiring_in(expires_in: str) -> Probe:
    return probe(
        "approvals",
        approvals,
        expect=satisfies(
            lambda asks: [a.expires_in for a in asks] == [expires_in],
            f"one pending ask, expiring in {expires_in}",
        ),
    )


AN_ASK_WAITS_SEVEN_DAYS = Case(
    name="an ask waits seven days while approval ceiling is unset",
    script=WAITING_ECHO,
    # 168h less the seconds the run took.
    steps=[LEAVE_AN_ASK_WAITING, _one_ask_expiring_in("6d")],
)

APPROVAL_CEILING_SETS_THE_WAIT = Case(
    name="approval ceiling sets how long an ask waits",
    script=WAITING_ECHO,
    steps=[
        step("config", "set", "approval-ceiling", "24h"),
        LEAVE_AN_ASK_WAITING,
        _one_ask_expiring_in("23h"),
    ],
)

APPROVAL_CEILING_NEVER_LEAVES_NO_DEADLINE = [
    Case(
        name=f"approval ceiling {word} leaves an ask with no deadline",
        script=WAITING_ECHO,
        steps=[
            step("config", "set", "approval-ceiling", word),
            LEAVE_AN_ASK_WAITING,
            _one_ask_expiring_in("never"),
        ],
    )
    for word in ("never", "forever", "indefinite")
]


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

# docs disagree: config.md:113 and contenox-cli.md:425 say the event tier is absent
# with the beta off; contenox-cli.md:581 and events.md:16 say only that `contenox events`
# is hidden (and no trigger file loads). v1.0.0 does the latter: hidden, but it runs.
BETA_OFF_HIDES_EVENTS_BUT_IT_STILL_RUNS = Case(
    name="with opt-in-beta off the events command is hidden from help but still runs",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("--help", stdout_lacks=["events       Tail"]),
        step("events", "list", stdout_has=["(no events)"]),
    ],
    defect=Defect(
        title="with opt-in-beta off, contenox events still runs",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: --help lists no `events` command (only the --trace flag "
            "line mentions events); `contenox events list` prints '(no events)', exit 0; `events "
            "--help` still prints the command's help Note: Reproduces exactly as written. But the "
            "reference page's own `contenox events` section (contenox-cli.md:581) and "
            "guide/events.md:16 promise only that the command is hidden (and triggers don't load),"
            " which is what the binary does. config.md:113/contenox-cli.md:425 say 'absent'. The "
            "reference pages contradict each other, so this is a docs finding. (Also, "
            "contenox-cli.md:258 says `contenox agent` i..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `contenox config set opt-in-beta false`; "
            "`contenox --help` no longer lists `events`, but `contenox events list` exits 0 "
            "printing '(no events)'"
        ),
        promised=(
            'reference/config.md:113 "Off means the features are absent, not disabled."\n'
            'reference/contenox-cli.md:425 "which are otherwise absent entirely"'
        ),
        observed="`contenox events list` exits 0, '(no events)'",
        bears_on=(
            'reference/contenox-cli.md:581 "without it this command is hidden and no trigger '
            'file loads"',
            'guide/events.md:16 "Without the opt-in, `contenox events` is hidden from help and '
            'no trigger file loads."',
        ),
        docs_disagree=True,
    ),
)

# docs disagree: config.md:113 lists the agent roster among the features that are absent
# with the beta off; contenox-cli.md:257 says `contenox agent` is not gated (listed in help,
# `agent list` shows every agent whether or not opt-in-beta is set). v1.0.0 does the latter.
BETA_OFF_STILL_LISTS_THE_AGENT_ROSTER = Case(
    name="with opt-in-beta off the agent roster is still listed",
    steps=[
        step("config", "set", "opt-in-beta", "false"),
        step("--help", stdout_has=["agent        Inspect"]),
        step("agent", "list", stdout_has=["reviewer", "run"]),
    ],
    defect=Defect(
        title="with opt-in-beta off, the agent roster is still there",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: opt-in-beta=false: --help "
            "lists 'agent        Inspect and manage the runtime's declared "
            "agents.'; 'agent list' exit 0 with triage, run, … Note: "
            'reference/contenox-cli.md:257: "It is not gated: `contenox agent` is'
            " listed in `contenox --help` and `contenox agent list` shows every "
            'discovered agent whether or not `opt-in-beta` is set." — the binary '
            "matches that page; config.md:113 disagrees."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `contenox config set opt-in-beta false`; "
            "`contenox --help` still lists `agent` ('Inspect and manage the runtime's declared "
            "agents.') and `contenox agent list` exits 0 listing the declared agents (run, "
            "reviewer, triage, …)"
        ),
        promised=(
            'reference/config.md:113 "the agent roster (`contenox agent`, user-authored '
            '`chain-agent-*` chain discovery) … Off means the features are absent, not disabled."'
        ),
        observed="`agent` in --help; `contenox agent list` exits 0 with the roster",
        bears_on=(
            'reference/contenox-cli.md:258 "It is not gated: `contenox agent` is listed in '
            "`contenox --help` and `contenox agent list` shows every discovered agent whether "
            'or not `opt-in-beta` is set."',
            'guide/quickstart.md:86 "contenox agent list"',
        ),
        docs_disagree=True,
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
    defect=Defect(
        title="CONTENOX_DEFAULT_MODEL does not override the default model",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: env: 'from the configured default' (rc 0); env+provider: 'from the "
            "configured default'; --model other-model: 'from the model the environment named'; "
            "doctor under the variable: 'Default model: scripted-test' Note: grep of the docs for "
            "CONTENOX_DEFAULT finds only these three lines, all promising the override; none "
            "limits it to acp. I did not try acp."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; two scripted-test backends: `scripted` (model "
            "scripted-test, the configured default-model, replying 'from the configured "
            "default') and `other` (model other-model, replying 'from the model the "
            "environment named'); `CONTENOX_DEFAULT_MODEL=other-model contenox chat hello` "
            "replies 'from the configured default' (also with CONTENOX_DEFAULT_PROVIDER="
            "scripted-test); `--model other-model` switches it; `contenox doctor` under the "
            "variable prints 'Default model: scripted-test'"
        ),
        promised=(
            'reference/config.md:149 "The `default-*` model settings can also be overridden '
            "per process — without persisting anything — via the `CONTENOX_DEFAULT_*` "
            'environment variables"'
        ),
        observed="the reply comes from scripted-test, the configured default",
        bears_on=('reference/contenox-cli.md:444 "can also be overridden per process"',),
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
)

MISSION_FIRE_IGNORES_THE_DEFAULT_MISSION_AGENT = Case(
    name="mission fire still needs the agent named when default-mission-agent is set",
    script=Script(turns=["this must not be served"]),
    steps=[
        step("config", "set", "default-mission-agent", "run"),
        step("mission", "fire", "--policy", "run", exit_code=1, notices_lacks=["Mission fired"]),
        step("mission", "list", stdout_has=["No missions"]),
    ],
)


A_WORKSPACE_POLICY_SHADOWS_THE_HOME_ONE = Case(
    name="a workspace policy file shadows the one in home by name",
    script=GATED_ECHO,
    steps=[
        write(".contenox/hitl-policy-mine.json", ALLOW_ALL),
        write("hitl-policy-mine.json", APPROVE_ALL, home=True),
        # The workspace copy allows echo, so nothing waits and the run lands.
        step("run", "--policy", "mine", "--timeout", "60s", "echo hi"),
        probe("approvals", approvals, expect=[]),
    ],
)


# --- what the serve host reads from config ---------------------------------------------------


def _serve_banner(
    *config: tuple[str, str],
    stdout_has: Sequence[str] = (),
    notices_has: Sequence[str] = (),
    lacks: Sequence[str] = (),
) -> list[Action]:
    """`config set` each pair, start `contenox serve .`, stop it at its ready banner, check it.

    The banner is on stdout, the oracle's line among the notices: what ``lacks``
    names is absent from both.
    """
    return [
        *(step("config", "set", key, value) for key, value in config),
        background("serve", "serve", ".", ready="Relay ", ready_stream="stdout", timeout=60),
        signal("serve"),
        wait(
            "serve",
            exit_code=None,
            timeout=60,
            stdout_has=stdout_has,
            notices_has=notices_has,
            stdout_lacks=lacks,
            notices_lacks=lacks,
        ),
    ]


# serve stays up until interrupted; its dialog is registered, never asked for.
SERVING = Script(turns=["unused"])

SERVE_KEEPS_LOGS_BY_DEFAULT = Case(
    name="serve keeps host logs by the documented defaults",
    script=SERVING,
    steps=_serve_banner(stdout_has=["new part at 10MB · keep 14 files · 14 days"]),
)

SERVE_KEEPS_LOGS_BY_THE_CONFIGURED_BOUNDS = Case(
    name="serve keeps host logs by the configured bounds",
    script=SERVING,
    steps=_serve_banner(
        ("log-max-size", "512KB"),
        ("log-max-files", "5"),
        ("log-max-age-days", "7"),
        stdout_has=["new part at 512KB · keep 5 files · 7 days"],
    ),
)

NO_ORACLE_WITHOUT_A_CHAIN = Case(
    name="without default oracle chain no oracle is mounted",
    script=SERVING,
    steps=_serve_banner(stdout_has=["Relay "], lacks=["Oracle mounted"]),
)

THE_ORACLE_CHAIN_MOUNTS_THE_ORACLE = Case(
    name="setting default oracle chain mounts the oracle",
    script=SERVING,
    steps=_serve_banner(
        ("default-oracle-chain", "chain-oracle-default.json"),
        notices_has=["Oracle mounted (chain-oracle-default.json under hitl-policy-oracle.json)"],
        lacks=["questions AND its approve-tier tool calls"],
    ),
)

THE_ORACLE_POLICY_IS_ITS_ENVELOPE = Case(
    name="default oracle policy is the envelope the oracle runs under",
    script=SERVING,
    steps=_serve_banner(
        ("default-oracle-chain", "chain-oracle-default.json"),
        ("default-oracle-policy", "hitl-policy-strict.json"),
        notices_has=["(chain-oracle-default.json under hitl-policy-strict.json)"],
    ),
)

THE_ORACLE_MAY_RULE_ON_TOOL_CALLS = Case(
    name="oracle approves tool calls lets the oracle rule on tool calls",
    script=SERVING,
    steps=_serve_banner(
        ("default-oracle-chain", "chain-oracle-default.json"),
        ("oracle-approves-tool-calls", "true"),
        notices_has=["questions AND its approve-tier tool calls"],
    ),
)


# --- fleet-max-parallel ---------------------------------------------------------------------


FLEET_MAX_PARALLEL_CAPS_OPEN_UNITS = Case(
    name="fleet max parallel caps the units open at once",
    backends={
        # The holder is interrupted at its ask by design: its later turns are never asked for.
        "scripted": WAITING_ECHO,
        # The second run's unit is served by its own model (CONTENOX_DEFAULT_MODEL: `run
        # --model` does not reach a unit, see test_run_flags.py), so only admission can stop
        # it landing. A unit the cap holds back is never asked for a turn at all.
        "lander": Script(
            model="lander",
            turns=[
                Turn(text="Filing.", tool_calls=[mission_report("result", "second unit ran")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ],
        ).optional_from(2),
    },
    steps=[
        step("config", "set", "fleet-max-parallel", "1"),
        # One unit holds the only slot, waiting on its gated echo, while a second asks for one.
        background("holder", "run", "--policy", "run", "--timeout", "600s", "echo hi"),
        await_ask("ask", tool="native-echo.echo", timeout=60),
        step(
            "run",
            "--policy",
            "run",
            # Long enough to land on a loaded machine, so only admission can stop it.
            "--timeout",
            "60s",
            "report",
            env={"CONTENOX_DEFAULT_MODEL": "lander"},
            exit_code=None,
            timeout=150,
            capture={"second": group(r"Mission (\S+) \(instance", stream="notices")},
            # A unit that derails ("instance not found", the derail race quarantined in
            # test_asks.py) was admitted too: it must not pass for a unit the cap refused.
            notices_lacks=["finished: landed", "finished: derailed"],
        ),
        # Its mission is filed either way; a unit the cap held back never reported.
        step("mission", "reports", "{second}", stdout_lacks=["second unit ran"]),
        signal("holder"),
        wait("holder", exit_code=None, timeout=60),
    ],
    defect=Defect(
        title="fleet-max-parallel does not cap units across processes",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: '✓ fleet-max-parallel = 1 (global)'; approvals list: "
            "'scripted-test-0-0-c1c7 permission native-echo.echo … 4b3cc297…'; B: exit 0, stdout "
            "'lander reporting', 'Mission 1d2fc107… finished: landed' while A was still running; "
            "mission list: '1d2fc107… run run landed' and '4b3cc297… run gated open' Note: "
            "Reproduces as written: with the cap at 1, B is admitted and lands while A's unit is "
            "open (mission list shows it open). The only lines that could be read for the binary "
            'are guide/missions.md:66 and reference/contenox-cli.md:528 ("`mission fire` embeds '
            'the fleet **in-process**"; `run --help` says the same), which suggest each command '
            "has a fleet of its own. But no page says the cap counts only on..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `contenox config set fleet-max-parallel 1`; "
            "one `contenox run` holding an open unit (waiting on its gated echo ask); from "
            "another process `CONTENOX_DEFAULT_MODEL=lander contenox run --policy run --timeout "
            "60s report` is admitted, files its report and lands (exit 0, 'finished: landed') "
            "while the first still waits"
        ),
        promised=('reference/config.md:116 "Max concurrently open mission units across the fleet"'),
        observed="the second run is admitted and lands while the first unit is open",
        bears_on=('reference/contenox-cli.md:440 "Fleet-wide admission cap"',),
    ),
)


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
)

DOCTOR_WITHOUT_STATE_VARIABLES = Case(
    name="doctor has no State storage section when no state variable is set",
    script=Script(turns=["unused"]),
    steps=[step("doctor", stdout_lacks=["State storage"])],
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


def _fired_once_finished(instance: Instance) -> list[tuple[str, str, str]]:
    """(agent, envelope, status) of every mission, once none is open any more.

    The unit is a child of the acp process, which the case keeps up until here.
    """
    wait_until(
        lambda: [m for m in missions(instance) if m.status != "open"] or None,
        timeout=120,
        interval=0.5,
        what="the mission fired from the editor to finish",
    )
    return [(m.agent, m.envelope, m.status) for m in missions(instance)]


def _mission_from_the_editor(policy: str, *, text_has: list[str], fired: object) -> list[Action]:
    """`/mission <intent>` over ACP with the default agent and envelope set."""
    return [
        step("config", "set", "default-mission-agent", "reviewer"),
        step("config", "set", "default-mission-policy", policy),
        prompt("/mission report what you know", text_has=text_has),
        probe("missions fired", _fired_once_finished, expect=fired),
    ]


# snapshot=False: the fired unit's report chunks stream into the firing turn's text or
# after it, as the race goes, so two clean runs record different agent text.
MISSION_IN_AN_EDITOR_FIRES_THE_DEFAULTS = Case(
    name="mission in an editor fires the default mission agent under the default policy",
    script=LANDING,
    steps=_mission_from_the_editor(
        "hitl-policy-run.json",
        text_has=['Mission fired at default mission agent "reviewer"', "(default-mission-policy)"],
        fired=[("reviewer", "hitl-policy-run.json", "landed")],
    ),
    snapshot=False,
)

MISSION_IN_AN_EDITOR_ACCEPTS_THE_ENVELOPE_NAME = Case(
    name="mission in an editor accepts the envelope name mission fire accepts",
    script=LANDING,
    steps=_mission_from_the_editor(
        "run",
        text_has=['Mission fired at default mission agent "reviewer"'],
        fired=[("reviewer", "run", "landed")],
    ),
    defect=Defect(
        title="/mission refuses default-mission-policy given as an envelope name",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: default-mission-policy run, ACP "
            "'/mission report what you know' -> '⚠️  unknown mission envelope "
            '"run" (default-mission-policy): no such policy file on the search '
            "path. Available: hitl-policy-acp.json, …'; with hitl-policy-run.json"
            ' -> \'Mission fired at default mission agent "run" under envelope '
            '"hitl-policy-run.json"\' Note: I had to add a scripted backend '
            "(session/new refuses with no default-model) and 'config set default-"
            "mission-agent run' (else '⚠️ no mission agent'). hitl.md:375-378 "
            "says 'strict' and 'hitl-policy-strict.json' name the same envelope."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `contenox config set default-mission-policy "
            "run` (the value `contenox mission fire` and `contenox run` accept as the `run` "
            "envelope); over `contenox acp`, the prompt `/mission report what you know` fires "
            'nothing and replies \'⚠️  unknown mission envelope "run" '
            "(default-mission-policy): no such policy file on the search path. Available: …, "
            "hitl-policy-run.json, …'; only the file name `hitl-policy-run.json` works there"
        ),
        promised=(
            'reference/contenox-cli.md:436 "| `default-mission-policy` | Envelope (HITL policy) '
            "name that both `/mission` and `contenox mission fire --policy` fall back to when "
            'none is named."'
        ),
        observed="'⚠️  unknown mission envelope \"run\" (default-mission-policy) …'",
    ),
)


# --- which envelope a surface runs under: --hitl-policy ---------------------------------------

# An envelope of our own that lets everything through except a file write.
NO_WRITES = json.dumps(
    {
        "version": 1,
        "default_action": "allow",
        "rules": [{"tools": "local_fs", "tool": "write_file", "action": "deny"}],
    }
)


# In ~/.contenox: `acp` resolves --hitl-policy when it starts, before any session has
# named a workspace, so it searches only ~/.contenox and its .generated/.
WRITE_NO_WRITES_ENVELOPE = write("hitl-policy-nowrites.json", NO_WRITES, home=True)


def _write_over_acp(*acp_args: str, written: bool) -> list[Action]:
    """Prompt a scripted write over `contenox acp <args>` (the editor allows every ask)."""
    return [
        prompt("write the greeting", acp_args=acp_args, permission="allow"),
        workspace_file("out.txt", expect="hello\n" if written else None),
    ]


HITL_POLICY_BY_NAME_BOUNDS_AN_ACP_SESSION = [
    Case(
        name=f"hitl policy {name} bounds an acp session",
        script=WRITE_GREETING,
        steps=[WRITE_NO_WRITES_ENVELOPE, *_write_over_acp("--hitl-policy", name, written=False)],
    )
    for name in ("nowrites", "hitl-policy-nowrites.json")
]

HITL_POLICY_NAME_IS_THE_WORKSPACE_ENVELOPE = Case(
    name="hitl policy name is the envelope a workspace runs under",
    script=WRITE_GREETING,
    steps=[
        WRITE_NO_WRITES_ENVELOPE,
        step("config", "set", "hitl-policy-name", "hitl-policy-nowrites.json"),
        *_write_over_acp(written=False),
    ],
    defect=Defect(
        title="contenox acp ignores the workspace's hitl-policy-name",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: '✓ hitl-policy-name = hitl-policy-nowrites.json "
            "(workspace)'; no flag: change_data=hitl-policy-default.json, "
            "session/request_permission 'local_fs.write_file: out.txt', "
            "fs/write_text_file, out.txt created. With --hitl-policy nowrites: "
            "change_data=hitl-policy-nowrites.json, rawOutput 'Deni…', no permission "
            "request, out.txt absent. Note: No page says acp ignores the setting."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init` in the project; "
            '`~/.contenox/hitl-policy-nowrites.json` holding `{"default_action": "allow", '
            '"rules": [{"tools": "local_fs", "tool": "write_file", "action": '
            '"deny"}]}`; `contenox config set hitl-policy-name hitl-policy-nowrites.json` in '
            "the project; a scripted-test default backend whose dialog is `general`, "
            "`write_file {path: out.txt}`, a text turn; `contenox acp` started there (no "
            "--hitl-policy), prompted to write: a permission request is raised and, allowed, "
            "out.txt appears; with `--hitl-policy nowrites` the write is denied"
        ),
        promised=('reference/contenox-cli.md:432 "Envelope this workspace runs under"'),
        observed="the write is asked about and, allowed, written",
        bears_on=(
            'reference/config.md:127 "`hitl-policy-name` is the persistent setting. Per run, '
            '`--hitl-policy` overrides"',
        ),
    ),
)

HITL_POLICY_OVERRIDES_HITL_POLICY_NAME = Case(
    name="hitl policy overrides hitl policy name for one run",
    script=WRITE_GREETING,
    steps=[
        WRITE_NO_WRITES_ENVELOPE,
        step("config", "set", "hitl-policy-name", "hitl-policy-nowrites.json"),
        *_write_over_acp("--hitl-policy", "default", written=True),
    ],
)


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
)


# function: its envelope is derived from the shipped one that `init` renders
def test_a_grants_own_timeout_wins_over_the_approval_ceiling(instance: Instance) -> None:
    instance.init()
    # The run ends at its ask (torn down) by design: the turns after the echo are never asked for.
    instance.use_script(WAITING_ECHO)
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


# function: its chain is derived from the shipped one that `init` renders
def test_default_alt_model_reaches_a_chain_through_var_alt_model(instance: Instance) -> None:
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
)
