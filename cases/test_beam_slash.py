"""`contenox beam`'s flags and slash commands (contenox-cli.md `contenox beam`, `/pair`, `/link`).

Typed into `beam --plain` under a real pty, as a person would, and read off
the screen. The machine is never paired here: pairing redeems a key minted in
the app against a relay, so the slash commands are checked on the unpaired
machine, where each must say so and change nothing.
"""

from __future__ import annotations

import re

from dialogs import WRITE_GREETING
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    defect,
    keys,
    open_terminal,
    probe,
    probes,
    route,
    screen,
    step,
)

COMPOSER = "type / for commands"
# beam needs a model to open a session; the slash commands never ask it anything.
IDLE = Script(model="probe-model", turns=["A slash command asks the model nothing."])
GREETING = Script(model="probe-model", turns=[route(), "Hello from the script."])
QUIT = [keys("/quit"), screen(exits=0, timeout=30)]
# beam names a session beam-<uuid>; its 8-hex short form is redacted as an id
# only when it has a letter in it, so both forms are named here.
SESSION = {
    r"beam-(?:\[HEX\d+\]|[0-9a-f]{8})(?:-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?": (
        "beam-[SESSION]"
    ),
    # The status line says "working" for a moment after a command, in some runs only.
    r"  [-/] working(?=  )": "",
}
NOT_PAIRED = "This machine is not paired with a relay"
HOW_TO_PAIR = "Sign in on the contenox app, tap Pair device, then run /pair <key> here."


SLASH_HELP_LISTS_THE_COMMANDS = Case(
    name="slash help lists the commands, the reference's slash commands among them",
    script=IDLE,
    redact=SESSION,
    steps=[
        screen(COMPOSER, timeout=30),
        keys("/help"),
        screen("Available commands:", timeout=30),
        *[
            screen(re.compile(rf"(?m)^\s+{re.escape(name)}\s+\S"), timeout=5)
            for name in ("/mission", "/pair", "/unpair", "/link", "/help")
        ],
        *QUIT,
    ],
)

PAIR_ALONE_REPORTS_AN_UNPAIRED_MACHINE = Case(
    name="pair alone on an unpaired machine says so and how to pair, changing nothing",
    script=IDLE,
    redact=SESSION,
    steps=[
        screen(COMPOSER, timeout=30),
        keys("/pair"),
        screen(f"{NOT_PAIRED}.", timeout=30),
        screen(HOW_TO_PAIR, timeout=5),
        *QUIT,
        step("pair", stdout_has=[re.compile(r"(?i)not paired")]),
    ],
)

LINK_ON_AN_UNPAIRED_MACHINE_POINTS_AT_PAIR = Case(
    name="link on an unpaired machine points at pair instead of printing a link",
    script=IDLE,
    redact=SESSION,
    steps=[
        screen(COMPOSER, timeout=30),
        keys("/link"),
        screen(f"{NOT_PAIRED}, so this session has no app link.", lacks=["https://"], timeout=30),
        screen(HOW_TO_PAIR, timeout=5),
        *QUIT,
    ],
)

UNPAIR_ON_AN_UNPAIRED_MACHINE_HAS_NOTHING_TO_DO = Case(
    name="unpair on an unpaired machine says there is nothing to do",
    script=IDLE,
    # beam draws the blank line between the command and its answer a moment
    # after the answer in some runs: the screen reads with it either way.
    redact={**SESSION, r"> /unpair\n+(?=This machine)": "> /unpair\n\n"},
    steps=[
        screen(COMPOSER, timeout=30),
        keys("/unpair"),
        screen(f"{NOT_PAIRED} — nothing to do.", timeout=30),
        *QUIT,
    ],
)

SESSION_WITH_AN_ID_THAT_IS_NOT_THERE_EXITS_1 = Case(
    name="beam session with an id that is not there is an error, not a create, and exits 1",
    script=IDLE,
    redact=SESSION,
    steps=[
        screen(
            re.compile(r'session "gone" not found'),
            args=["beam", "--plain", "--session", "gone"],
            timeout=30,
        ),
        screen(exits=1, timeout=30),
        step("session", "list", stdout_lacks=["gone"]),
    ],
)

BEAM_NEW_STARTS_A_FRESH_SESSION = Case(
    name="beam new starts a fresh session instead of resuming the newest",
    script=GREETING,
    redact=SESSION,
    steps=[
        step("session", "new", "kept"),
        screen(COMPOSER, args=["beam", "--plain", "--new"], timeout=30),
        keys("say hello"),
        screen("Hello from the script.", timeout=60),
        *QUIT,
        # The session made first got nothing; the fresh one holds the turn.
        step("session", "show", "kept", stdout_lacks=["say hello"]),
        step("session", "list", "--all", stdout_has=["kept", re.compile(r"beam-[0-9a-f]{8}")]),
    ],
)


def _beam_logs(instance: Instance) -> list[str]:
    """The files in ``work/beamlogs``, dates redacted."""
    folder = instance.work / "beamlogs"
    names = sorted(p.name for p in folder.iterdir()) if folder.exists() else []
    return [re.sub(r"\d{4}-\d{2}-\d{2}", "[DATE]", n) for n in names]


BEAM_LOG_DIR_WRITES_ITS_LOGS_THERE = Case(
    name="beam log dir writes its logs to the directory named",
    script=IDLE,
    redact={**SESSION, r"beam-\d{4}-\d{2}-\d{2}": "beam-[DATE]"},
    steps=[
        # The logs line is printed before beam draws its header: read it once the
        # composer is up, so the recorded screen is the whole drawn one.
        screen(COMPOSER, args=["beam", "--plain", "--log-dir", "beamlogs"], timeout=30),
        screen(re.compile(r"logs: beamlogs/beam-\d{4}-\d{2}-\d{2}\.log"), timeout=5),
        *QUIT,
        probe("beamlogs", _beam_logs, expect=["beam-[DATE].log"]),
    ],
)

SLASH_NEW_STARTS_A_NEW_SESSION_AND_SLASH_SESSIONS_LISTS_BOTH = Case(
    name="slash new starts a new session in this workspace and slash sessions lists both",
    script=IDLE,
    redact=SESSION,
    steps=[
        screen(COMPOSER, timeout=30),
        keys("/new"),
        keys("/sessions"),
        screen(re.compile(r"(?s)beam-\S+\s+beam-\S+\s+\(active\)\s*\n\s*beam-\S+"), timeout=30),
        screen("esc closes", timeout=5),
        keys("\x1b", enter=False),
        *QUIT,
    ],
)


@defect(
    Defect(
        title="a beam card that outlived its turn still offers 'Esc cancels turn'",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME+workspace, scripted dialog [general, "
            "write_file{path:out.txt}, Done.]. `beam --plain` (pexpect pty), typed 'write "
            "out.txt': card 'approval required - local_fs.write_file' with key line 'y "
            "allow - n deny - Esc cancels turn'. Sent SIGHUP; beam exited. `approvals "
            "list`: scripted-test-1-0-bc6b permission local_fs.write_file out.txt pending "
            "6d. `beam --plain --session beam-060ed780-525f-436c-9682-c54fddf1c8e6` (full "
            "session name from `session list --all`; the short 'beam-060ed780' shown in the "
            "status bar and the row ID both give 'session ... not found'): card redrawn as "
            "'approval required / tool local_fs.write_file / policy "
            "hitl-policy-default.json ... rule 48' with key line 'y allow - n deny - Esc "
            "cancels turn'. Never 'answering resumes the run'. Note: No doc page backs the "
            "binar..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a write_file {path: out.txt} call (gated by the default "
            "envelope), then a reply\n"
            "contenox beam --plain   # type: write out.txt; the card reads 'y allow "
            "- n deny - Esc cancels turn'\n"
            "# close the terminal (SIGHUP); `contenox approvals list` shows the ask "
            "pending\n"
            "contenox beam --plain --session <that session>\n"
            "# the card is drawn again with 'y allow - n deny - Esc cancels turn' "
            "(no arguments), never 'answering resumes the run'"
        ),
        promised=(
            'reference/contenox-cli.md:59 "A card that outlives its turn keeps working and says so"'
        ),
        observed=(
            "the reopened card's key line says 'Esc cancels turn', not 'answering resumes the run'"
        ),
    )
)
# function: two beam terminals in turn — the second reopens the session the
# first left with its card open — which one Case's terminal cannot express.
def test_a_card_that_outlives_its_turn_says_answering_resumes_the_run(instance: Instance) -> None:
    instance.init()
    instance.use_script(WRITE_GREETING)  # route, write_file out.txt, "Done."
    first = open_terminal(instance, "beam", "--plain")
    first.wait_for(COMPOSER, timeout=30)
    first.send_line("write out.txt")
    live = first.wait_for("approval required", timeout=60)
    first.wait_for("Esc cancels turn", timeout=10)
    # Closing the terminal is quitting with the ask still open.
    first.hangup()
    first.wait_exit(timeout=30)
    assert not (instance.work / "out.txt").exists(), live
    [record] = probes.session_records(instance)

    again = open_terminal(instance, "beam", "--plain", "--session", record.name)
    card = again.wait_for("answering resumes the run", timeout=60)

    assert "Esc cancels turn" not in card, again.describe()
    again.send("y")
    again.wait_for("Done.", timeout=60)
    assert (instance.work / "out.txt").read_text(encoding="utf-8") == "hello\n"
    again.send_line("/quit")
    assert again.wait_exit(timeout=30) == 0
