"""The CLI reference (reference/contenox-cli.md): promises no other case file held.

Each case names the section and line it holds; its ledger row is in
``cases/promises/reference/contenox-cli/<section>.md``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    background,
    edit_dialog,
    keys,
    mission_finish,
    mission_report,
    probe,
    probes,
    satisfies,
    screen,
    signal,
    step,
    wait,
    write,
)
from harness.case import Action

# ------------------------------------------------- ### contenox session (line 96)
# "Each session maintains its own conversation history": two sessions, one
# exchange each; each shows its own and neither shows the other's. Every chat
# is a new process, which replays the dialog from its first turn: the second
# chat's reply is the dialog edited between them.

_ALPHA_Q, _ALPHA_A = "the question asked in alpha", "the answer given in alpha"
_BETA_Q, _BETA_A = "the question asked in beta", "the answer given in beta"

EACH_SESSION_KEEPS_ITS_OWN_HISTORY = Case(
    name="each session keeps its own conversation history",
    script=Script(turns=[_ALPHA_A]),
    steps=[
        step("session", "new", "alpha"),
        step("chat", _ALPHA_Q, stdout_has=[_ALPHA_A]),
        step("session", "new", "beta"),
        edit_dialog(Script(turns=[_BETA_A])),
        step("chat", _BETA_Q, stdout_has=[_BETA_A]),
        step(
            "session",
            "show",
            "alpha",
            stdout_has=[_ALPHA_Q, _ALPHA_A],
            stdout_lacks=[_BETA_Q, _BETA_A],
        ),
        step(
            "session",
            "show",
            "beta",
            stdout_has=[_BETA_Q, _BETA_A],
            stdout_lacks=[_ALPHA_Q, _ALPHA_A],
        ),
    ],
)

# ----------------------------------------------- ### contenox vet [path] (line 288)
# "the transpiled one is then never read, so editing `[envelopes.<name>]` in
# `agents.toml` would change nothing": the declaration denies the write; a
# hand-written top-level copy of the same name allows it. With the copy the
# write lands (the render's deny is never read); the control, without the copy,
# is the same run refused by the declaration.

_CONTENT = "written by the unit\n"
_NOWRITE = '[envelopes.nowrite]\ndefault_action = "allow"\nfiles.write = "deny"\n'
_ALLOWING_COPY = '{"default_action": "allow", "rules": []}\n'
_WRITE_AND_LAND = Script(
    turns=[
        Turn(
            text="Writing.",
            tool_calls=[ToolCall("write_file", {"path": "out.txt", "content": _CONTENT})],
        ),
        Turn(tool_calls=[mission_report("result", "the unit is done")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
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


def _refused_by(policy: str) -> Callable[[list[str]], bool]:
    return lambda results: (
        bool(results) and results[0].startswith(f"Denied by the active policy {policy}")
    )


SHADOWED_ENVELOPE = [
    Case(
        name=name,
        script=_WRITE_AND_LAND,
        home_files={"agents.toml": _NOWRITE, **copy},
        steps=[
            step("run", "--policy", "nowrite", "--timeout", "90s", "write it", timeout=150),
            probe("pending asks", probes.approvals, expect=[]),
            workspace_file("out.txt", expect=written),
            probe(
                "tool results",
                _tool_results,
                expect=satisfies(
                    lambda rs, w=written: _refused_by("nowrite")(rs) is (w is None),
                    "the write done" if written else "the write refused by nowrite",
                ),
            ),
        ],
    )
    for name, copy, written in (
        (
            "with a shadowing copy the envelope s declaration changes nothing",
            {"hitl-policy-nowrite.json": _ALLOWING_COPY},
            _CONTENT,
        ),
        (
            "without the shadowing copy the envelope s declaration refuses the write",
            {},
            None,
        ),
    )
]

# --------------------------------------------- ### Workspace authority (line 140)
# "Serving a second workspace means starting a second instance": two hosts at
# once, each started on its own path, each names its own workspace.


def _host(name: str, path: str) -> list[Action]:
    return [
        background(name, "serve", path, ready="Relay ", ready_stream="stdout", timeout=60),
    ]


def _stopped(name: str, workspace: str) -> list[Action]:
    return [
        signal(name),
        wait(
            name,
            exit_code=None,
            timeout=60,
            stdout_has=[re.compile(rf"^ *Workspace +{workspace} *$", re.M)],
        ),
    ]


# serve stays up until interrupted; its dialog is registered, never asked for.
A_SECOND_WORKSPACE_IS_A_SECOND_INSTANCE = Case(
    name="serving a second workspace means starting a second instance",
    script=Script(turns=["unused"]),
    steps=[
        write("api/README.md", "the api project\n"),
        write("web/README.md", "the web project\n"),
        *_host("api", "{work}/api"),
        *_host("web", "{work}/web"),
        *_stopped("web", "{work}/web"),
        *_stopped("api", "{work}/api"),
    ],
)

# ------------------------------------------------- ### contenox events (line 602)
# "`--keep-days` (`prune`) | Keep partitions from the last N days; older ones are
# dropped (default 30)": with no flag, prune keeps the last 30 days, as it says;
# the control names another window and prune keeps that one instead. (No offline
# surface can append an event older than today, so what is dropped is not seen.)
PRUNE_KEEPS_DAYS = [
    Case(
        name=name,
        script=Script(turns=["unused"]),
        steps=[
            step("config", "set", "opt-in-beta", "true"),
            step(
                "events",
                "prune",
                *flags,
                "--yes",
                stdout_has=[f"no event partitions older than {days} day(s)"],
            ),
        ],
    )
    for name, flags, days in (
        ("events prune without keep days keeps the last 30 days", (), 30),
        ("events prune keep days 7 keeps the last 7 days instead", ("--keep-days", "7"), 7),
    )
]


# ---------------------------------------------- ### contenox serve [path] (line 739)
# "`--log-dir <dir>` | Write host logs here (default: `<data-dir>/logs`)", where
# the data dir is what `--data-dir` names (line 24). The control names the same
# directory with `--log-dir`, and the status screen's Logs line follows it.
_LOGS_IN_THE_DATA_DIR = re.compile(r"Logs\s+\S+/work/\.contenox/logs/serve-\S+\.log")


def _host_logs(*flags: str) -> list[Action]:
    return [
        background("host", "serve", ".", *flags, ready="Relay ", ready_stream="stdout", timeout=60),
        signal("host"),
        wait("host", exit_code=None, timeout=60, stdout_has=[_LOGS_IN_THE_DATA_DIR]),
    ]


# serve stays up until interrupted; its dialog is registered, never asked for.
A_HOST_LOGS_UNDER_ITS_DATA_DIR = Case(
    name="a host started with data dir writes its logs under that data dir by default",
    script=Script(turns=["unused"]),
    steps=_host_logs("--data-dir", "{work}/.contenox"),
    defect=Defect(
        title="`serve --data-dir D` writes its logs to ~/.contenox/logs, not D/logs",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            'contenox serve . --data-dir "$PWD/.contenox"   # Ctrl-C at the status screen\n'
            "# prints: Logs  $HOME/.contenox/logs/serve-<date>.log (and the file is there;\n"
            "# $PWD/.contenox holds only workspace.id). The same without --data-dir, where\n"
            "# the walk-up finds $PWD/.contenox."
        ),
        promised=(
            'reference/contenox-cli.md:739 "Write host logs here (default: `<data-dir>/logs`)"'
        ),
        observed="Logs [HOME]/.contenox/logs/serve-[DATE].log; nothing under the data dir",
        bears_on=(
            'reference/contenox-cli.md:24 "Override the `.contenox` data directory (skips '
            'walk-up search)"',
            'guide/serve.md:137 "They live in `<data-dir>/logs`"',
            'reference/config.md:176 "point at a specific workspace directory (overrides the '
            'walk-up discovery)"',
        ),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, init, `timeout 8 contenox serve . --data-dir "
            "\"$PWD/.contenox\"`: status screen 'Logs  $HOME/.contenox/logs/serve-2026-12-03.log'; "
            "that file exists under $HOME/.contenox/logs; $PWD/.contenox holds only workspace.id "
            "(no logs/). Same 'Logs $HOME/.contenox/logs/…' without --data-dir (Workspace = "
            "$PWD). Note: reference/contenox-cli.md:739 '--log-dir … (default: `<data-"
            "dir>/logs`)' and guide/serve.md:137 'They live in `<data-dir>/logs`'; --data-dir is "
            "'the `.contenox` data directory' (contenox-cli.md:24). guide/serve.md:108/141 show "
            "~/.contenox/logs, but for the home-directory workspace (Workspace /home/you), where "
            "<data-dir> is ~/.contenox, so they agree with the rule rather than with the binary. "
            "No page says host logs always go under ~/.contenox. The binary ignores --data-dir "
            "(and the walked-up workspace) for the log location."
        ),
    ),
)

A_HOST_LOGS_WHERE_LOG_DIR_SAYS = Case(
    name="a host started with log dir in the data dir writes its logs there",
    script=Script(turns=["unused"]),
    steps=_host_logs("--log-dir", "{work}/.contenox/logs"),
)

# --------------------------------------------------- ### contenox beam (line 70)
# "`--log-dir <dir>` | Write structured logs here (default: `<data-dir>/logs`)":
# beam prints where its logs go before it draws; with `--data-dir D` that is
# D/logs. The control names the same directory with `--log-dir`.
_BEAM_IDLE = Script(model="probe-model", turns=["A slash command asks the model nothing."])
_BEAM_SESSION = {
    r"beam-(?:\[HEX\d+\]|[0-9a-f]{8})(?:-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?": (
        "beam-[SESSION]"
    ),
    r"beam-\d{4}-\d{2}-\d{2}": "beam-[DATE]",
}
# A screen's args take no placeholders: both paths are the workspace's, relative.
_BEAM_LOGS_IN_THE_DATA_DIR = re.compile(
    r"logs: (?:\S*/work/)?\.contenox/logs/beam-\d{4}-\d{2}-\d{2}\.log"
)

_BEAM_DATA_DIR_LOGS = Defect(
    title="`beam --data-dir D` writes its logs to ~/.contenox/logs, not D/logs",
    reproduce=(
        'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
        "contenox beam --plain --data-dir .contenox   # at a terminal; /quit\n"
        "# its first line reads: logs: $HOME/.contenox/logs/beam-<date>.log;\n"
        "# with --log-dir .contenox/logs it reads: logs: .contenox/logs/beam-<date>.log"
    ),
    promised=(
        'reference/contenox-cli.md:70 "Write structured logs here (default: `<data-dir>/logs`)"'
    ),
    observed="logs: [HOME]/.contenox/logs/beam-[DATE].log",
    bears_on=(
        'reference/contenox-cli.md:24 "Override the `.contenox` data directory (skips '
        'walk-up search)"',
        'reference/config.md:176 "point at a specific workspace directory (overrides the '
        'walk-up discovery)"',
    ),
    second_reading=(
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch home: "
        "real. Saw: fresh HOME, init, scripted-test default backend; `contenox beam --plain "
        "--data-dir .contenox` under script(1), /quit: first line 'logs: "
        "$HOME/.contenox/logs/beam-2026-12-03.log'; $HOME/.contenox/logs/beam-2026-12-03.log "
        "exists, $PWD/.contenox holds only workspace.id. With `--log-dir .contenox/logs`: 'logs: "
        ".contenox/logs/beam-2026-12-03.log' and the file is there. Note: reference/contenox-"
        "cli.md:70 '--log-dir <dir> | Write structured logs here (default: `<data-dir>/logs`)'; "
        "contenox-cli.md:24 defines --data-dir as 'Override the `.contenox` data directory'. No "
        "page says beam logs always go under ~/.contenox (grep data-dir, /logs, log-dir). The "
        "default ignores --data-dir."
    ),
)

BEAM_LOGS = [
    Case(
        name=name,
        script=_BEAM_IDLE,
        redact=_BEAM_SESSION,
        steps=[
            screen("type / for commands", args=["beam", "--plain", *flags], timeout=30),
            screen(_BEAM_LOGS_IN_THE_DATA_DIR, timeout=5),
            keys("/quit"),
            screen(exits=0, timeout=30),
        ],
        **extra,
    )
    for name, flags, extra in (
        (
            "beam started with data dir writes its logs under that data dir by default",
            ("--data-dir", ".contenox"),
            {"defect": _BEAM_DATA_DIR_LOGS},
        ),
        (
            "beam started with log dir in the data dir writes its logs there",
            ("--log-dir", ".contenox/logs"),
            {},
        ),
    )
]
