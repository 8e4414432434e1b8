"""The CLI reference: global flags, `version`, `cache clear`, `update`, environment variables."""

from __future__ import annotations

import json

from harness import Case, Defect, Instance, Script, open_acp, probe, route, step

ONE = Script(model="m1", turns=["reply from m1"])
TWO = Script(model="m2", turns=["reply from m2"])
BOTH = {"one": ONE, "two": TWO}
_END = {"branches": [{"operator": "default", "goto": "end"}]}


def _chain(**execute: str) -> str:
    """A one-task chain whose model/provider/max_tokens come from template variables."""
    task = {"id": "a", "handler": "chat_completion", "execute_config": execute, "transition": _END}
    return json.dumps({"id": "vars", "tasks": [task]})


ALT_CHAIN = _chain(model="{{var:alt_model}}", provider="{{var:alt_provider}}")
MAX_TOKENS_CHAIN = _chain(
    model="{{var:model}}", provider="{{var:provider}}", max_tokens="{{var:max_tokens}}"
)
# Far more than 100 tokens on its own, so a 100-token context cannot hold it.
LONG_TASK = " ".join(["please summarise this sentence carefully"] * 60)
# Keeps `update` on the loopback: the GitHub call goes to a proxy nothing listens on.
OFFLINE = {"HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "NO_PROXY": ""}

# --- global flags ---------------------------------------------------------------------------

GLOBAL_FLAGS_ON_SUBCOMMANDS = Case(
    name="every subcommands help lists the global flags",
    init=False,
    steps=[
        step(
            "backend",
            "--help",
            stdout_has=["Global Flags:", "--model", "--provider", "--db", "--data-dir", "--trace"],
        ),
        step("--help", stdout_has=["--timeout duration", "(default 2h0m0s)"]),
    ],
)

MODEL_OVERRIDE = Case(
    name="model picks another model for one invocation and persists nothing",
    backends=BOTH,
    steps=[
        step("chat", "--model", "m2", "hi", stdout_has=["reply from m2"]),
        step("config", "get", "default-model", stdout_has=["m1"]),
    ],
)

PROVIDER_OVERRIDE = Case(
    name="provider naming a provider with no backend does not answer from the default one",
    script=ONE,
    steps=[step("chat", "--provider", "ollama", "hi", exit_code=None, stdout_lacks=["reply"])],
    defect=Defect(
        title=("--provider naming a provider with no backend silently answers from the default"),
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: both: stdout 'reply from m1', stderr only "
            "'Thinking...', exit 0. --trace: 'provider_type=ollama … client "
            "resolution failed: no models found in runtime state' then "
            "'next_task=chat-recovery reason=error', and chat-recovery answers. No "
            "notice to the user. Note: The text contradicts itself: it sets "
            "default-model scripted-test and then says 'model m1'. With default-model "
            "scripted-test and a dialog whose model is m1, every chat is refused at "
            'setup (\'Default model "scripted-test" is not currently available … '
            "Available chat models: m1'), exit 1. Once I set default-model m1 the "
            "defect reproduces exactly. No page mentions chat-recovery or says an "
            "override fa..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# default provider scripted-test, model m1; no ollama backend\n"
            'contenox chat --provider ollama hi; echo "exit $?"   # prints: reply '
            "from m1, exit 0\n"
            "contenox chat --model zzz hi                        # the same"
        ),
        promised='reference/contenox-cli.md:22 "Provider override for this invocation"',
        observed=(
            "model resolution fails and the chat-recovery task answers from the "
            "configured default without a word"
        ),
    ),
)

DB_FLAG = Case(
    name="db points one invocation at another database",
    script=ONE,
    steps=[
        step("--db", "other.db", "backend", "list", stdout_has=["No backends registered"]),
        step("--db", "other.db", "backend", "add", "elsewhere", "--type", "ollama"),
        step("backend", "list", stdout_has=["scripted"], stdout_lacks=["elsewhere"]),
        step("--db", "other.db", "backend", "list", stdout_has=["elsewhere"]),
    ],
)


EVERY_WORKSPACE_SHARES_THE_DATABASE = Case(
    name="every workspace shares the one global database",
    init=False,
    steps=[
        step("init", "--project", cwd="work/a"),
        step("init", "--project", cwd="work/b"),
        step("backend", "add", "shared", "--type", "ollama", cwd="work/a"),
        step("session", "new", "made-in-a", cwd="work/a"),
        step("backend", "list", cwd="work/b", stdout_has=["shared"]),
        step("session", "list", "--all", cwd="work/b", stdout_has=["made-in-a"]),
    ],
)

OTHER_DATA_DIR = "{tmp}/other/.contenox"


def _filed_under_the_other_marker(instance: Instance) -> bool:
    other = instance.tmp / "other" / ".contenox"
    marker = json.loads((other / "workspace.id").read_text(encoding="utf-8"))["id"]
    workspaces = instance.must("session", "workspaces").stdout
    return any(
        line.startswith(marker) and "via-data-dir" in line for line in workspaces.splitlines()
    )


DATA_DIR_PICKS_THE_MARKER_NOT_THE_DATABASE = Case(
    name="data dir picks the workspace marker without moving the database",
    init=False,
    steps=[
        step("init"),
        step("--data-dir", OTHER_DATA_DIR, "init"),
        step("--data-dir", OTHER_DATA_DIR, "session", "new", "via-data-dir", cwd="work/sub"),
        step("session", "workspaces"),
        probe(
            "the session is filed under the --data-dir marker's workspace",
            _filed_under_the_other_marker,
            expect=True,
        ),
        probe(
            "databases in --data-dir",
            lambda i: [p.name for p in (i.tmp / "other" / ".contenox").glob("*.db")],
            expect=[],
        ),
    ],
)


TIMEOUT_FLAG = Case(
    name="timeout bounds the invocation",
    script=ONE,
    steps=[
        step("chat", "--timeout", "1ns", "hi", exit_code=1, stdout_lacks=["reply from m1"]),
    ],
    defect=Defect(
        title="--timeout does not bound the invocation",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: chat --timeout 1ns hi -> 'reply from "
            "m1', exit 0 (0.17 s); contenox --timeout 1ns chat hi -> same Note: "
            'Dialog [{"text":"reply from m1"}]. No other doc line exempts chat '
            "from the global --timeout."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: one turn 'reply from m1'\n"
            'time contenox chat --timeout 1ns hi; echo "exit $?"   # prints: reply '
            "from m1, exit 0 after ~0.9 s\n"
            "contenox --timeout 1ns chat hi                         # the same"
        ),
        promised='reference/contenox-cli.md:25 "Max execution time per invocation"',
        observed="the chat answers and exits 0",
    ),
)

CONTEXT_FLAG = Case(
    name="context sets the context length the tokenizer checks against",
    script=ONE,
    steps=[
        step(
            "chat",
            "--context",
            "100",
            LONG_TASK,
            exit_code=1,
            notices_has=["exceeds context length", "> 100"],
            stdout_lacks=["reply from m1"],
        )
    ],
)

OLLAMA_DEFAULT = Case(
    name="ollama defaults to the local ollama url",
    init=False,
    steps=[step("--help", stdout_has=["--ollama string", '(default "http://127.0.0.1:11434")'])],
)

NO_DELETE_MODELS = Case(
    name="no delete models is accepted and changes nothing",
    script=ONE,
    steps=[step("--no-delete-models", "backend", "list", stdout_has=["scripted"])],
)

TRACE = Case(
    name="trace streams operation telemetry on stderr and leaves stdout the reply",
    # The telemetry's lines, their order and count vary run to run: no snapshot.
    snapshot=False,
    script=ONE,
    steps=[
        step(
            "chat",
            "--trace",
            "hi",
            stdout_has=["reply from m1"],
            stdout_lacks=["Operation started"],
            stderr_has=["Operation started", "subject=scripted-test"],
        )
    ],
)

STEPS = Case(
    name="steps prints the execution steps after the result",
    script=ONE,
    steps=[step("chat", "--steps", "hi", stdout_has=["reply from m1", "chat-agent"])],
    defect=Defect(
        title="--steps prints no execution step",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: both: stdout 'reply from m1', stderr "
            "'Thinking...', exit 0; no step is printed Note: No other page mentions "
            "--steps."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: one turn 'reply from m1'\n"
            "contenox chat --steps hi        # stdout: reply from m1; stderr: "
            "Thinking...\n"
            "contenox --steps chat hi        # the same"
        ),
        promised='reference/contenox-cli.md:30 "Print execution steps after the result"',
        observed="no step of the chain (chat-agent, chat_completion) is printed",
    ),
)

THINK = [
    Case(
        name="think refuses a level it does not know and names the valid ones",
        script=ONE,
        steps=[
            step(
                "chat",
                "--think",
                "bogus",
                "hi",
                exit_code=1,
                notices_has=["auto, off, minimal, low, medium, high, xhigh"],
            )
        ],
    ),
    Case(
        name="think accepts a documented level",
        script=ONE,
        steps=[step("chat", "--think", "low", "hi", stdout_has=["reply from m1"])],
    ),
]

ALT_FLAGS = Case(
    name="alt model and alt provider fill a chains alt variables over the config",
    backends=BOTH,
    files={"alt.json": ALT_CHAIN},
    steps=[
        step("config", "set", "default-alt-model", "m1"),
        step("config", "set", "default-alt-provider", "scripted-test"),
        step(
            "chat",
            "--chain",
            "alt.json",
            "--alt-model",
            "m2",
            "--alt-provider",
            "scripted-test",
            "hi",
            stdout_has=["reply from m2"],
        ),
    ],
)

MAX_TOKENS_FLAG = Case(
    name="max tokens fills a chains max tokens variable",
    script=ONE,
    files={"mt.json": MAX_TOKENS_CHAIN},
    steps=[
        step(
            "chat",
            "--chain",
            "mt.json",
            "hi",
            exit_code=1,
            notices_has=['template var "max_tokens" is not set'],
        ),
        step("chat", "--chain", "mt.json", "--max-tokens", "64", "hi", stdout_has=["reply"]),
    ],
)

# --- version, cache clear, update -------------------------------------------------------------

VERSION = Case(
    name="version prints the binary version and exits",
    init=False,
    steps=[
        step("version", stdout_has=["contenox version v1.0.0"]),
        step("--version", stdout_has=["contenox version v1.0.0"]),
    ],
)

CACHE_CLEAR = Case(
    name="cache clear says how many model lists it cleared and the next chat refetches",
    # One chat after the clear: it asks for one turn, and a second would be a run gone astray.
    script=Script(model="m1", turns=["first"]),
    steps=[
        step("cache", "clear", stdout_has=["Cleared", "cached backend model list(s)"]),
        step("chat", "hi", stdout_has=["first"]),
    ],
)


# function: needs the backend's script edited between commands
def test_after_a_model_is_added_and_the_cache_cleared_the_new_model_answers(
    instance: Instance,
) -> None:
    path = instance.use_script(ONE)
    assert "reply from m1" in instance.must("chat", "hi").stdout
    TWO.write(path)  # the backend now serves m2
    instance.must("cache", "clear")
    instance.must("config", "set", "default-model", "m2")
    assert "reply from m2" in instance.must("chat", "hi").stdout


UPDATE_CHECK_OFFLINE = Case(
    name="update check offline shows the current version and says it could not check",
    init=False,
    steps=[
        step(
            "update",
            "check",
            env=OFFLINE,
            exit_code=1,
            stdout_has=["Current version:  v1.0.0"],
            notices_has=["could not check for updates"],
        )
    ],
)

UPDATE_OFFLINE = Case(
    name="update offline installs nothing and the binary is still the same version",
    init=False,
    steps=[
        step("update", env=OFFLINE, exit_code=1, notices_has=["could not check for updates"]),
        step("version", stdout_has=["v1.0.0"]),
    ],
)

# --- environment variables ------------------------------------------------------------------

ENV_DEFAULT_MODEL = Case(
    name="contenox default model overrides the configured model for one process",
    backends=BOTH,
    steps=[
        step("chat", "hi", env={"CONTENOX_DEFAULT_MODEL": "m2"}, stdout_has=["reply from m2"]),
        step("config", "get", "default-model", stdout_has=["m1"]),
    ],
    defect=Defect(
        title="CONTENOX_DEFAULT_MODEL does not override the configured default model",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME. Two scripted-test backends: s1 (script "
            "model 'm1', replies 'reply from m1') and s2 (model 'm2', 'reply from m2'). "
            "default-provider scripted-test, default-model m1. `CONTENOX_DEFAULT_MODEL=m2 "
            "contenox chat hi` printed 'reply from m1'. `CONTENOX_DEFAULT_MODEL=m2 contenox "
            "doctor` printed 'Default model:    m1'. `CONTENOX_DEFAULT_PROVIDER=ollama "
            "contenox doctor` printed 'Default provider: scripted-test'. For comparison, "
            "`contenox --model m2 chat hi` printed 'reply from m2', so m2 does resolve. "
            "Note: contenox-cli.md:798 and config.md:149 both say the CONTENOX_DEFAULT_* "
            "variables override the default-* settings for one process. No page says "
            "otherwise. I did not check the ACP env_var auth path."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# two scripted backends: m1 (the configured default-model, replies "
            "'reply from m1') and m2 ('reply from m2')\n"
            "CONTENOX_DEFAULT_MODEL=m2 contenox chat hi     # prints: reply from m1\n"
            "CONTENOX_DEFAULT_MODEL=m2 contenox doctor      # Default model:    m1"
        ),
        promised=(
            'reference/contenox-cli.md:798 "Process-level override of the configured '
            'default model/provider"'
        ),
        observed=(
            "the configured m1 answers and doctor reports m1 "
            "(CONTENOX_DEFAULT_PROVIDER likewise shows nothing)"
        ),
    ),
)

ENV_ALT = Case(
    name="contenox default alt model and provider fill a chains alt variables",
    backends=BOTH,
    files={"alt.json": ALT_CHAIN},
    steps=[
        step(
            "chat",
            "--chain",
            "alt.json",
            "hi",
            env={
                "CONTENOX_DEFAULT_ALT_MODEL": "m2",
                "CONTENOX_DEFAULT_ALT_PROVIDER": "scripted-test",
            },
            stdout_has=["reply from m2"],
        )
    ],
    defect=Defect(
        title="CONTENOX_DEFAULT_ALT_MODEL/PROVIDER do not fill a chain's alt variables",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: CONTENOX_DEFAULT_ALT_MODEL=scripted-"
            "test CONTENOX_DEFAULT_ALT_PROVIDER=scripted-test chat --chain "
            "alt.json hi -> 'Error: chain execution failed: task chat: "
            'execute_config.model macro error: template var "alt_model" is not '
            "set'; with --alt-model/--alt-provider -> 'reply from m2' Note: I "
            "wrote alt.json (one chat_completion, model {{var:alt_model}}, "
            "provider {{var:alt_provider}}) and used the one scripted backend "
            "(model scripted-test) instead of a second backend serving m2."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# alt.json: a chat chain whose model is {{var:alt_model}} and provider "
            "{{var:alt_provider}}; a second scripted backend serves m2\n"
            "CONTENOX_DEFAULT_ALT_MODEL=m2 "
            "CONTENOX_DEFAULT_ALT_PROVIDER=scripted-test contenox chat --chain "
            "alt.json hi\n"
            '# Error: … template var "alt_model" is not set\n'
            "contenox chat --chain alt.json --alt-model m2 --alt-provider "
            "scripted-test hi   # works"
        ),
        promised='reference/contenox-cli.md:799 "Same, for the alt model pair."',
        observed="'template var \"alt_model\" is not set': the variables are not read",
    ),
)

ENV_MAX_TOKENS = Case(
    name="contenox default max tokens fills a chains max tokens variable",
    script=ONE,
    files={"mt.json": MAX_TOKENS_CHAIN},
    steps=[
        step(
            "chat",
            "--chain",
            "mt.json",
            "hi",
            env={"CONTENOX_DEFAULT_MAX_TOKENS": "64"},
            stdout_has=["reply from m1"],
        )
    ],
    defect=Defect(
        title="CONTENOX_DEFAULT_MAX_TOKENS does not fill {{var:max_tokens}}",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: CONTENOX_DEFAULT_MAX_TOKENS=64 "
            "contenox chat --chain mt.json hi → 'Error: chain execution failed: "
            "task answer: execute_config.max_tokens macro error: template var "
            '"max_tokens" is not set\'; --max-tokens 64 and config default-max-'
            "tokens 64 both work Note: I added a text-only dialog and mt.json "
            "(one chat_completion task, execute_config.max_tokens "
            '"{{var:max_tokens}}"). contenox-cli.md:800 says the variable is '
            "'Same' as the model override, and config.md:109 says default-max-"
            "tokens feeds {{var:max_tokens}}."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# mt.json: a chat chain with max_tokens = {{var:max_tokens}}\n"
            "CONTENOX_DEFAULT_MAX_TOKENS=64 contenox chat --chain mt.json hi\n"
            '# Error: … template var "max_tokens" is not set\n'
            "contenox chat --chain mt.json --max-tokens 64 hi   # works"
        ),
        promised=(
            'reference/contenox-cli.md:800 "Same, for the response token cap and reasoning level."'
        ),
        observed="'template var \"max_tokens\" is not set': the variable is not read",
    ),
)

ENV_THINK = Case(
    name="contenox default think is read like think and an unknown level is refused",
    script=ONE,
    steps=[
        step(
            "chat",
            "hi",
            env={"CONTENOX_DEFAULT_THINK": "bogus"},
            exit_code=1,
            stdout_lacks=["reply from m1"],
        )
    ],
    defect=Defect(
        title="CONTENOX_DEFAULT_THINK is not read as the reasoning level",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            'scratch home: real. Saw: env run: "reply from m1", exit 0. --think '
            'bogus: "Error: --think: invalid think level "bogus" (valid: auto, off, '
            'minimal, low, medium, high, xhigh)". config set default-think bogus: '
            '"Error: invalid think level "bogus"" too Note: It reproduces: the flag '
            "and the config key both refuse the value, but the variable takes it "
            "without a word. Caveat: this only shows that a bad value is ignored. I "
            "did not check whether a valid value (e.g. high) reaches the request "
            '(state show --raw), so the title "not read" is not proven beyond that. '
            "doctor prints no think line, with or without the variable. No page found "
            "that says ignoring it ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: one turn 'reply from m1'\n"
            'CONTENOX_DEFAULT_THINK=bogus contenox chat hi; echo "exit $?"   # '
            "prints: reply from m1, exit 0\n"
            "contenox chat --think bogus hi                                 # "
            "refused: invalid think level"
        ),
        promised=(
            'reference/contenox-cli.md:800 "Same, for the response token cap and reasoning level."'
        ),
        observed=("an unknown level in the variable is ignored: the chat answers and exits 0"),
    ),
)


# function: needs an ACP client; no default is configured, only the variables
def test_acp_with_only_the_default_model_and_provider_variables_answers(
    instance: Instance,
) -> None:
    instance.init()

    instance.use_script(Script(turns=[route(), "Hello from env."]), make_default=False)
    env = {"CONTENOX_DEFAULT_MODEL": "scripted-test", "CONTENOX_DEFAULT_PROVIDER": "scripted-test"}
    with open_acp(instance, env=env) as acp:
        turn = acp.prompt("hello")
    assert turn.text == "Hello from env.", turn.describe()
    assert instance.must("config", "get", "default-model").stdout.split()[0] == "(global)"


def _chain_path_case(instance: Instance, subcommand: str, variable: str) -> None:
    instance.init()
    chain = instance.write(
        "my-chain.json", _chain(model="{{var:model}}", provider="{{var:provider}}")
    )
    # No router turn: only a chain without the shipped router reads this as the reply.
    instance.use_script(Script(turns=["Hello from my chain."]))
    with open_acp(instance, subcommand=subcommand, env={variable: str(chain)}) as acp:
        turn = acp.prompt("hello")
    assert turn.text == "Hello from my chain.", turn.describe()


# function: needs an ACP client
def test_contenox_acp_chain_path_overrides_the_chain_of_an_acp_session(
    instance: Instance,
) -> None:
    _chain_path_case(instance, "acp", "CONTENOX_ACP_CHAIN_PATH")


# function: needs an ACP client
def test_contenox_acpx_chain_path_overrides_the_chain_of_an_acpx_session(
    instance: Instance,
) -> None:
    _chain_path_case(instance, "acpx", "CONTENOX_ACPX_CHAIN_PATH")


RELAY = Case(
    name="contenox relay endpoint is where pair redeems a key",
    init=False,
    steps=[
        step(
            "pair",
            "K7M-3PQ",
            env={"CONTENOX_RELAY_ENDPOINT": "http://127.0.0.1:9"},
            exit_code=1,
            notices_has=["http://127.0.0.1:9"],
        )
    ],
)

POSTGRES_ALONE = Case(
    name="contenox postgres url without nats and valkey is refused",
    init=False,
    steps=[
        step(
            "backend",
            "list",
            env={"CONTENOX_POSTGRES_URL": "postgres://u:p@127.0.0.1:9/db"},
            exit_code=1,
            notices_has=["CONTENOX_POSTGRES_URL", "CONTENOX_NATS_URL", "CONTENOX_VALKEY_URL"],
        )
    ],
)

SCRUB = [
    Case(
        name=f"sandbox env honours {what}",
        init=False,
        steps=[
            step(
                "sandbox",
                "env",
                *extra,
                env={"MY_PLAIN": "1", "MY_API_KEY": "2", **env},
                stdout_has=has,
                stdout_lacks=lacks,
            )
        ],
    )
    for what, extra, env, has, lacks in [
        ("the default deny secrets scrub", (), {}, ["MY_PLAIN"], ["MY_API_KEY"]),
        (
            "sandbox shell scrub off",
            (),
            {"SANDBOX_SHELL_SCRUB": "off"},
            ["scrub mode: off", "MY_API_KEY"],
            [],
        ),
        ("sandbox env deny", (), {"SANDBOX_ENV_DENY": "MY_PLAIN"}, [], ["MY_PLAIN"]),
        (
            "sandbox env allow under strict",
            (),
            {"SANDBOX_SHELL_SCRUB": "strict", "SANDBOX_ENV_ALLOW": "MY_API_KEY"},
            ["scrub mode: strict", "MY_API_KEY"],
            ["MY_PLAIN"],
        ),
        (
            "sandbox terminal scrub",
            ("--terminal",),
            {"SANDBOX_TERMINAL_SCRUB": "deny-secrets"},
            ["interactive terminal — scrub mode: deny-secrets"],
            ["MY_API_KEY"],
        ),
    ]
]
