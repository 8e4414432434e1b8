"""`contenox serve`: the standing host (guide/serve.md, contenox-cli.md `contenox serve [path]`).

v1.0.0's host opens no listening socket of its own: its only inbound path is
the relay tunnel, so what a case can observe offline is what a person at the
box sees — the status screen on stdout, the host log files, and how Ctrl-C
ends it. Each case starts the host in the background, waits for its
"Running." line, interrupts it and checks what it printed.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from harness import Case, Defect, Instance, Script, background, probe, signal, step, wait

RUNNING = "Running. Press Ctrl-C to stop."
# A host log is named by the day it was written; the date is not the promise.
# The old logs a case plants are dated 2020 and keep their names.
LOG_NAME = re.compile(r"serve-(?!2020-)\d{4}-\d{2}-\d{2}((?:\.\d+)?\.log)")
REDACT_DATE = {r"serve-(?!2020-)\d{4}-\d{2}-\d{2}": "serve-[DATE]"}
# A model the host can name on its Model row; the host is never asked to run it.
IDLE = Script(model="host-model", turns=["A host waits for work; nothing asks it here."])


def _host(*args: str, name: str = "host", timeout: float = 90) -> list[object]:
    """Start `contenox serve <args>` as ``name``, wait for its Running line, and interrupt it."""
    return [
        background(name, "serve", *args, ready=RUNNING, ready_stream="stdout", timeout=timeout),
        signal(name),
    ]


def log_files(instance: Instance, where: str = "") -> list[str]:
    """The names in the host's log directory (``~/.contenox/logs`` or ``where``), dates redacted."""
    folder = Path(where) if where else instance.home / ".contenox" / "logs"
    if not folder.exists():
        return []
    return sorted(LOG_NAME.sub(r"serve-[DATE]\1", p.name) for p in folder.iterdir())


def first_parts(instance: Instance) -> list[str]:
    """Today's first three log parts, as named (how many more a start fills varies)."""
    wanted = {"serve-[DATE].log", "serve-[DATE].2.log", "serve-[DATE].3.log"}
    return [name for name in log_files(instance) if name in wanted]


def other_files(instance: Instance) -> list[str]:
    """The log directory without today's host logs (how many parts a start fills varies)."""
    return [name for name in log_files(instance) if not name.startswith("serve-[DATE]")]


def todays_logs(instance: Instance) -> int:
    """How many of today's host log files are left."""
    return len([name for name in log_files(instance) if name.startswith("serve-[DATE]")])


def logged_startups(instance: Instance) -> int:
    """How many host startups the log files record (one line opens each)."""
    folder = instance.home / ".contenox" / "logs"
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("serve-*.log")))
    return text.count('msg="Operation started" operation=startup subject=serve')


A_HOST_WITH_NO_MODEL_SAYS_SO_AND_STILL_SERVES = Case(
    name="a host with no model configured says so on its setup row and still serves",
    redact=REDACT_DATE,
    steps=[
        *_host("."),
        wait(
            "host",
            stdout_has=[
                re.compile(r"Setup\s+no model configured"),
                "Configure a provider and model:  contenox setup",
                RUNNING,
            ],
        ),
    ],
)

A_READY_HOST_REPORTS_SETUP_WORKSPACE_MODEL_RELAY_AND_LOGS = Case(
    name="a ready host reports its setup, workspace, model, relay and log file",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        step("doctor", stdout_has=[re.compile(r"(?i)ready")]),
        *_host("."),
        wait(
            "host",
            stdout_has=[
                re.compile(r"Setup\s+ready"),
                re.compile(r"Workspace\s+\S+/work\n"),
                re.compile(r"Model\s+scripted-test/host-model"),
                re.compile(r"Relay\s+not paired"),
                re.compile(r"Logs\s+\S+/\.contenox/logs/serve-\d{4}-\d{2}-\d{2}\.log"),
                "new part at 10MB · keep 14 files · 14 days",
            ],
        ),
    ],
)

AN_UNPAIRED_HOST_PRINTS_THE_STEPS_TO_PAIR_IT_AND_KEEPS_RUNNING = Case(
    name="an unpaired host prints the steps to pair it and keeps running",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        *_host("."),
        wait(
            "host",
            stdout_has=[
                "not paired — reachable on this machine only",
                "Sign in at https://app.contenox.com and tap Pair device",
                "contenox pair <key>",
                RUNNING,
            ],
        ),
    ],
)

CTRL_C_STOPS_THE_HOST = Case(
    name="ctrl c stops the host, which says the app can no longer reach the machine",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        *_host("."),
        wait(
            "host",
            exit_code=0,
            stdout_has=["Stopping — the app can no longer reach this machine."],
        ),
    ],
)

THE_STATUS_SCREEN_CARRIES_NO_STRUCTURED_LOG_LINES = Case(
    name="the host's structured logs go to its log file, not over the status screen",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        *_host("."),
        wait("host", stdout_lacks=["level=INFO", "msg="], notices_lacks=["level=INFO"]),
        probe("startups in the host log", logged_startups, expect=1),
        probe("log directory", log_files, expect=["serve-[DATE].log"]),
    ],
)

LOG_DIR_MOVES_THE_HOST_LOGS = Case(
    name="log dir moves the host logs to the directory named",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        *_host(".", "--log-dir", "{work}/hostlogs"),
        wait("host", stdout_has=[re.compile(r"Logs\s+\S+/work/hostlogs/serve-\S+\.log")]),
        probe("log-dir", log_files, "{work}/hostlogs", expect=["serve-[DATE].log"]),
        probe("default log directory", log_files, expect=[]),
    ],
)

RESTARTING_A_HOST_CONTINUES_THE_CURRENT_PART = Case(
    name="restarting a host continues the current log part rather than opening a file per launch",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        *_host("."),
        wait("host"),
        *_host(".", name="restarted"),
        wait("restarted"),
        probe("log directory", log_files, expect=["serve-[DATE].log"]),
        probe("startups in the host log", logged_startups, expect=2),
    ],
)

A_DAY_THAT_OUTGROWS_ITS_SIZE_BOUND_CONTINUES_IN_NUMBERED_PARTS = Case(
    name="a day that outgrows its size bound continues in numbered parts",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        step("config", "set", "log-max-size", "1KB"),
        step("config", "set", "log-max-files", "0"),
        *_host("."),
        wait("host", stdout_has=["new part at 1KB"]),
        probe(
            "today's first parts",
            first_parts,
            expect=["serve-[DATE].2.log", "serve-[DATE].3.log", "serve-[DATE].log"],
        ),
    ],
)

# Files the host finds in its log directory when it starts: a host log of its
# own from long ago, and two files that are not host logs.
_OLD_LOGS = {
    "logs/serve-2020-01-01.log": "a host log from long ago\n",
    "logs/notes.log": "someone else's log\n",
    "logs/serve-notes.txt": "not a host log name\n",
}

RETENTION_RETIRES_ONLY_THE_HOSTS_OWN_OLD_LOGS = Case(
    name="retention retires the host's own old logs by date and leaves every other file alone",
    script=IDLE,
    home_files=_OLD_LOGS,
    redact=REDACT_DATE,
    steps=[
        # A part fills at once, so the host applies its bounds while it runs.
        step("config", "set", "log-max-size", "1KB"),
        step("config", "set", "log-max-files", "0"),
        step("config", "set", "log-max-age-days", "7"),
        *_host("."),
        wait("host"),
        # serve-2020-01-01.log is retired; the two files that are not its own stay.
        probe(
            "the rest of the log directory", other_files, expect=["notes.log", "serve-notes.txt"]
        ),
    ],
)

THE_FILE_COUNT_BOUND_SPARES_THE_FILE_BEING_WRITTEN = Case(
    name="the file count bound keeps the newest parts and never the file being written",
    script=IDLE,
    home_files=_OLD_LOGS,
    redact=REDACT_DATE,
    steps=[
        step("config", "set", "log-max-size", "1KB"),
        step("config", "set", "log-max-files", "1"),
        *_host("."),
        wait("host"),
        # A bound of one file leaves exactly one: the part being written.
        probe("today's host logs left", todays_logs, expect=1),
        probe(
            "the rest of the log directory", other_files, expect=["notes.log", "serve-notes.txt"]
        ),
    ],
)

THE_CONTROL_PLANE_IS_NEVER_A_HOSTS_WORKSPACE = Case(
    name="serve refuses the contenox control plane as its workspace",
    script=IDLE,
    defect=Defect(
        title="`contenox serve ~/.contenox` serves the control plane as a workspace",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: timeout 10 contenox serve ~/.contenox"
            " -> banner 'Workspace    <home>/.contenox' (setup-only, no model), "
            "runs until timeout kills it (rc 124) Note: Nothing added (no "
            "backend; it served setup-only, which still shows ~/.contenox as the "
            "workspace). contenox-cli.md:142 'never a workspace, on any shape. "
            "There is no setting that turns this off.'"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "timeout 5 contenox serve ~/.contenox\n"
            "# Workspace    <home>/.contenox\n"
            "# Running. Press Ctrl-C to stop."
        ),
        promised='reference/contenox-cli.md:142 "is never a workspace, on any shape"',
        observed="it serves ~/.contenox until interrupted",
    ),
    steps=[
        # A refusal ends the command at once; a host that serves it runs into the timeout.
        step("serve", "{home}/.contenox", exit_code="non-zero", timeout=30),
    ],
)

PARTS_RESTART_AT_ONE_EACH_DAY = Case(
    name="parts restart at one each day",
    script=IDLE,
    # An earlier day that ran to a third part; with no age limit it stays.
    home_files={"logs/serve-2020-01-01.3.log": "an earlier day's third part\n"},
    redact=REDACT_DATE,
    steps=[
        step("config", "set", "log-max-age-days", "0"),
        *_host("."),
        wait("host", stdout_has=[re.compile(r"Logs\s+\S+/serve-\d{4}-\d{2}-\d{2}\.log\n")]),
        probe("log directory", log_files, expect=["serve-2020-01-01.3.log", "serve-[DATE].log"]),
    ],
)

TELEMETRY_OFF_LEAVES_THE_HOST_ITS_LOGS = Case(
    name="turning telemetry off leaves the host its log file",
    script=IDLE,
    redact=REDACT_DATE,
    steps=[
        step("config", "set", "telemetry-enabled", "false"),
        *_host("."),
        wait("host"),
        probe("log directory", log_files, expect=["serve-[DATE].log"]),
        probe("startups in the host log", logged_startups, expect=1),
    ],
)


def serve_envelope(instance: Instance) -> dict[str, object]:
    """`[envelopes.serve]` of the agents.toml `init` wrote: the policy an operator reads."""
    text = (instance.home / ".contenox" / "agents.toml").read_text(encoding="utf-8")
    table = tomllib.loads(text)["envelopes"]["serve"]
    return {k: table[k] for k in ("default_action", "files", "shell")}


THE_SERVE_ENVELOPE_DENIES_FILES_AND_SHELL = Case(
    name="the serve envelope denies file reads, file writes and the shell, and approves the rest",
    steps=[
        probe(
            "[envelopes.serve]",
            serve_envelope,
            expect={
                "default_action": "approve",
                "files": {"read": "deny", "write": "deny"},
                "shell": "deny",
            },
        ),
    ],
)
