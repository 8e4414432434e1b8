"""guide/troubleshooting.md and guide/quickstart.md: the units no other case asserted.

Each case is one sentence of those pages that no other case asserted: a stale
`doctor --skip-cycle`, what `init --refresh-policies` leaves alone, a drifted
trusted binary falling to a person, the shipped agent chains' `token_limit`,
and a read in beam that runs with no card.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import threading
import urllib.parse
import zipfile
from collections.abc import Iterator

import pyte
import pytest

from dialogs import workspace_file
from harness import (
    AcpError,
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
    edit_dialog,
    group,
    keys,
    mission_finish,
    mission_report,
    open_acp,
    open_terminal,
    probe,
    probes,
    route,
    screen,
    signal,
    step,
    wait,
    write,
)

COMPOSER = "type / for commands"

# --- `--skip-cycle`: reachability may be stale -------------------------------------------------


class _Gate:
    """Whether the stand-in accepts the key yet; flipped by the test between two doctors."""

    accepting = False


class _SwitchableOpenAI(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible model listing that answers 401 until the test flips the gate."""

    gate: type[_Gate] = _Gate

    def do_GET(self) -> None:
        if self.gate.accepting:
            body: object = {"object": "list", "data": [{"id": "gpt-5-mini", "object": "model"}]}
            status = 200
        else:
            body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
            status = 401
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def switchable_provider() -> Iterator[tuple[str, type[_Gate]]]:
    """(base URL, gate) of an OpenAI stand-in on 127.0.0.1 that rejects keys until told."""

    class Gate(_Gate):
        accepting = False

    handler = type("Handler", (_SwitchableOpenAI,), {"gate": Gate})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", Gate
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


REVOKED_KEY_STAYS_READY = Defect(
    second_reading=(
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch home: "
        "real. Saw: OpenAI-compatible stub on 127.0.0.1:18471 whose GET /v1/models answers 200 "
        "[gpt-5-mini] until a mode file says 401 invalid_api_key; K=sk-x contenox backend add oai"
        " --type openai --url …/v1 --api-key-env K; default-provider openai, default-model "
        "gpt-5-mini. doctor at 13:29:13 -> 'Ready: yes', 'Status: reachable; 1 chat model(s)', "
        "stub logs 1 GET /v1/models. Stub switched to 401. Plain doctor at 13:29:13, 13:30:23 and"
        " 13:31:34 -> each 'Ready: yes', 'Status: reachable', and the stub logs no request at "
        "all. doctor --skip-cycle says the same. 'contenox chat hi' then fails with 'OpenAI API "
        "returned non-200 status: 401 … invalid_api_key', so the key really is rejected. Extra "
        "check in a fresh home: after the switch to 401, 'contenox cache clear' ('Cleared 1 "
        "cached backend model list(s)') and then plain doctor sends a GET /v1/models and reports "
        "'Ready: no', 'Status: error', 'rejected the stored credentials'. So plain doctor reads "
        "the cached model list and does not sync. Note: guide/troubleshooting.md:31 says `--skip-"
        "cycle` skips 'the backend sync first — faster, but reachability may be stale', which "
        "implies plain doctor syncs; reference/contenox-cli.md:160 says the same. "
        "troubleshooting.md:75 lists '…rejected the stored credentials' as what doctor says for a"
        " wrong, expired or revoked key, and :87 says 'rerun `doctor` without `--skip-cycle` so "
        "the backend cycle actually re-runs'. Plain doctor behaves exactly like --skip-cycle. "
        "reference/contenox-cli.md:681 documents a model-list cache ('contenox cache clear … "
        "after adding models to a backend that the runtime hasn't picked up yet') but never says "
        "doctor's reachability check reads from it, so it does not make this docs-disagree. I "
        "watched for ~2.5 min, not the twelve the defect text reports."
    ),
    title=(
        "`doctor` never re-syncs a reachable backend: a key the provider now rejects "
        "reads Ready: yes"
    ),
    reproduce=(
        'export HOME=$(mktemp -d); cd "$(mktemp -d)"\n'
        "# an OpenAI-compatible stand-in on 127.0.0.1:PORT whose GET /v1/models answers 200\n"
        "# with one model (gpt-5-mini) until it is switched to answer 401 invalid_api_key\n"
        "K=sk-x contenox backend add oai --type openai --url http://127.0.0.1:PORT/v1 "
        "--api-key-env K\n"
        "contenox config set default-provider openai; contenox config set default-model "
        "gpt-5-mini\n"
        "contenox doctor      # Ready: yes — the stand-in logs one GET /v1/models\n"
        "# switch the stand-in to 401\n"
        "contenox doctor      # still 'Ready: yes', 'Status: reachable'; the stand-in logs no\n"
        "                     # request at all, every minute for twelve minutes (tried by hand)\n"
        "# (a backend in error is re-read: after a 401, switching to 200 makes even\n"
        "#  'doctor --skip-cycle' send a request and say Ready: yes)"
    ),
    promised=(
        'guide/troubleshooting.md:31 "`--skip-cycle` | Skip the backend sync first — faster, '
        'but reachability may be stale"'
    ),
    observed=(
        "plain `doctor` sends the provider no request and keeps reporting the backend "
        "reachable and Ready: yes after the provider starts rejecting the stored key"
    ),
    bears_on=(
        'guide/troubleshooting.md:75 "…rejected the stored credentials | The key is present '
        'and wrong, expired, or revoked"',
        'guide/troubleshooting.md:87 "If you just fixed a key, rerun `doctor` without '
        '`--skip-cycle` so the backend cycle actually re-runs."',
        'reference/contenox-cli.md:160 "Skip syncing backends before the check (faster but '
        'may show stale status)"',
    ),
)


# function: flips a stand-in the test serves on loopback between two doctors
@defect(REVOKED_KEY_STAYS_READY)
def test_doctor_without_skip_cycle_syncs_again_and_sees_a_key_the_provider_now_rejects(
    instance: Instance, switchable_provider: tuple[str, type[_Gate]]
) -> None:
    url, gate = switchable_provider
    gate.accepting = True
    instance.init()
    instance.must(
        "backend",
        "add",
        "oai",
        "--type",
        "openai",
        "--url",
        f"{url}/v1",
        "--api-key-env",
        "E2E_PROVIDER_KEY",
        env={"E2E_PROVIDER_KEY": "sk-e2e-key"},
    )
    instance.must("config", "set", "default-provider", "openai")
    instance.must("config", "set", "default-model", "gpt-5-mini")
    assert "Ready: yes" in instance.contenox("doctor").stdout

    # The provider revokes the key: only a sync can learn that.
    gate.accepting = False

    # --skip-cycle may report the last sync; that is what the flag is for.
    instance.contenox("doctor", "--skip-cycle")
    fresh = instance.contenox("doctor").stdout
    assert 'Default provider "openai" rejected the stored credentials.' in fresh, fresh
    assert "Ready: no" in fresh, fresh


# --- `init --refresh-policies` leaves chains, config and sessions alone ------------------------

OLD_DEFAULT_POLICY = json.dumps(
    {
        "version": 1,
        "default_action": "approve",
        "rules": [{"tools": "local_fs", "tool": "read_file", "action": "allow"}],
    }
)
MY_CHAIN = json.dumps(
    {
        "id": "mine",
        "token_limit": 4096,
        "tasks": [{"id": "only", "handler": "noop", "transition": {"branches": []}}],
    },
    indent=2,
)


REFRESH_LEAVES_CHAINS_CONFIG_AND_SESSIONS_ALONE = Case(
    name="refresh policies rewrites the stale copy and leaves chains config and sessions alone",
    script=Script(turns=["unused"]),
    steps=[
        write("hitl-policy-default.json", OLD_DEFAULT_POLICY, home=True),
        write("chain-mine.json", MY_CHAIN, home=True),
        step("config", "set", "default-mission-policy", "run"),
        step("session", "new", "kept-session"),
        step(
            "init",
            "--refresh-policies",
            stdout_has=["Refreshed {home}/.contenox/hitl-policy-default.json"],
        ),
        # The refresh did happen: the stale copy is no longer the old policy …
        probe(
            "the policy copy is still the old one",
            lambda i: (
                json.loads((i.home / ".contenox" / "hitl-policy-default.json").read_text())
                == json.loads(OLD_DEFAULT_POLICY)
            ),
            expect=False,
        ),
        # … and beside it the chain, the config and the session are as they were.
        probe(
            "~/.contenox/chain-mine.json unchanged",
            lambda i: (i.home / ".contenox" / "chain-mine.json").read_text() == MY_CHAIN,
            expect=True,
        ),
        step("config", "get", "default-mission-policy", stdout_has=["run"]),
        step("session", "list", stdout_has=["kept-session"]),
    ],
)


# --- A drifted trusted binary falls to a person --------------------------------------------------

# `ls` is in the run chain's shell allowlist; the workspace's own bin/ls is the pinned binary.
MYTOOL_V1 = "#!/bin/sh\necho mytool v1\n"
MYTOOL_V2 = "#!/bin/sh\necho mytool v2\n"
# The approve floor: what the pin withdraws falls to a person, not to a denial.
APPROVE_FLOOR_POLICY = json.dumps(
    {
        "default_action": "approve",
        "rules": [
            {
                "tools": "local_shell",
                "tool": "local_shell",
                "when": [{"key": "command", "op": "command_prefix_allowlist", "value": "ls"}],
                "action": "allow",
            }
        ],
    }
)
RUNS_MYTOOL = Script(
    turns=[
        Turn(text="Running it.", tool_calls=[ToolCall("local_shell", {"command": "ls"})]),
        Turn(tool_calls=[mission_report("result", "ran mytool")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


_PATH = {"PATH": "{work}/bin:" + os.environ.get("PATH", "/usr/bin:/bin")}


def _ls_results(instance: Instance) -> list[str]:
    """The distinct stdouts of the local_shell `ls` results the runs so far recorded."""
    return sorted(
        {
            json.loads(m.content).get("stdout", "")
            for rid in probes.captured_requests(instance)
            for unit in probes.captured_units(instance, rid)
            for m in unit.output_messages
            if m.role == "tool" and m.content.startswith("{") and '"command":"ls"' in m.content
        }
    )


A_CHANGED_TRUSTED_BINARY_STOPS_FOR_A_PERSON = Case(
    name="a trusted binary that changed stops for a person instead of running",
    script=RUNS_MYTOOL,
    steps=[
        write("hitl-policy-mine.json", APPROVE_FLOOR_POLICY, home=True),
        edit("bin/ls", append=MYTOOL_V1, executable=True),
        step("hitl", "trust", "--policy", "hitl-policy-mine.json", "{work}/bin/ls"),
        # Control: the declared binary, unchanged, runs unasked.
        step("run", "--policy", "mine", "--timeout", "90s", "run mytool", env=_PATH),
        probe("ls results", _ls_results, expect=["mytool v1"]),
        # The binary changes under its declaration: the allow is withdrawn, a person is asked.
        edit("bin/ls", replace={"v1": "v2"}),
        edit_dialog(RUNS_MYTOOL.optional_from(1)),
        background(
            "again", "run", "--policy", "mine", "--timeout", "120s", "run mytool", env=_PATH
        ),
        await_ask(
            "ask", tool="local_shell.local_shell", kind="permission", run="again", timeout=90
        ),
        probe("ls results", _ls_results, expect=["mytool v1"]),
        # Ctrl-C, not `mission stop`: a stop closes the ask, and the unit may then be served
        # its next turn before it is reaped, so what the run prints would vary.
        signal("again"),
        wait("again", exit_code=None, timeout=120),
    ],
)


# --- The shipped chains use 131072 ------------------------------------------------------------


def _agent_chain_token_limits(instance: Instance) -> dict[str, object]:
    generated = instance.home / ".contenox" / ".generated"
    return {
        p.name: json.loads(p.read_text()).get("token_limit")
        for p in sorted(generated.glob("chain-agent-*.json"))
    }


SHIPPED_AGENT_CHAINS_USE_131072 = Case(
    name="the agent chains init renders each carry a token limit of 131072",
    probes=[
        probe(
            "token_limit of each rendered agent chain",
            _agent_chain_token_limits,
            expect={
                "chain-agent-acp.json": 131072,
                "chain-agent-acpx.json": 131072,
                "chain-agent-change.json": 131072,
                "chain-agent-chat.json": 131072,
                "chain-agent-researcher.json": 131072,
                "chain-agent-reviewer.json": 131072,
                "chain-agent-run.json": 131072,
                "chain-agent-triage.json": 131072,
            },
        )
    ],
)


# --- quickstart.md: reads run silently under the shipped envelope ------------------------------

READ_IN_BEAM = Script(
    turns=[
        route(),
        Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "payments.go"})]),
        "The retry budget is never reset.",
    ]
)


def _read_result(instance: Instance) -> list[str]:
    return [
        m.content
        for rid in probes.captured_requests(instance)
        for unit in probes.captured_units(instance, rid)
        for m in unit.output_messages
        if m.role == "tool"
    ]


# snapshot=False: beam's redraw races its streaming text and spinner (as in test_quickstart.py).
A_READ_IN_BEAM_RUNS_WITH_NO_CARD = Case(
    name="a read in beam under the shipped envelope runs with no approval card",
    script=READ_IN_BEAM,
    files={"payments.go": "package payments // retry budget\n"},
    steps=[
        screen(COMPOSER, args=["beam"], timeout=30),
        keys("read payments.go"),
        # Had the read stopped at a card, the closing reply would never be drawn.
        screen("The retry budget is never reset.", timeout=60),
        probe("pending asks", probes.approvals, expect=[]),
        workspace_file("payments.go", expect="package payments // retry budget\n"),
        keys("/quit"),
        screen(exits=0, timeout=90),
    ],
    probes=[
        probe(
            "the read's content reached the model",
            lambda i: any("retry budget" in r for r in _read_result(i)),
            expect=True,
        )
    ],
    snapshot=False,
)


# --- `doctor --bundle`: every member scrubbed, and the issue URL's facts ---------------------

# One of each shape troubleshooting.md names that test_doctor_page.py does not: the
# Anthropic, Google, GitHub, AWS and Google OAuth key shapes, `token:` and `authorization=`.
# None is a real key.
PROVIDER_SHAPES = {
    "anthropic": "sk-ant-api03-e2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2E",
    "google": "AIzaSyE2eE2ee2eE2Ee2ee2eE2Ee2ee2eE2Ee2e",
    "github": "ghp_e2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2E",
    "aws access key id": "AKIAE2EE2EE2EE2EE2EX",
    "google oauth": "ya29.a0E2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2Ee2e",
    "token:": "tok-e2e-named-assignment-1",
    "authorization=": "auth-e2e-named-assignment-2",
}
# A bare shape is found by its form; the two named assignments by their field name.
SHAPES_LOG = "".join(
    f"{label} {value}\n" if label.endswith((":", "=")) else f"a request carried {value}\n"
    for label, value in PROVIDER_SHAPES.items()
).replace("authorization= ", "authorization=")
URL_KEY = "sk-e2e-in-the-query-string-0123456789"


def _bundle_texts(instance: Instance) -> dict[str, str]:
    with zipfile.ZipFile(instance.tmp / "b.zip") as bundle:
        return {n: bundle.read(n).decode() for n in bundle.namelist()}


def _survivors(instance: Instance) -> dict[str, object]:
    texts = _bundle_texts(instance)
    every = "".join(texts.values())
    backends = json.loads(texts["doctor.json"])["backendChecks"]
    return {
        "secrets found in the bundle": sorted(
            label for label, value in PROVIDER_SHAPES.items() if value in every
        ),
        "the URL key found in the bundle": URL_KEY in every,
        "doctor.json's backend URL": [b["baseUrl"] for b in backends],
    }


DOCTOR_BUNDLE_SCRUBS_EVERY_MEMBER = Case(
    name="doctor bundle scrubs provider key shapes from the logs and a key from doctor json",
    files={".contenox/telemetry.log": SHAPES_LOG},
    steps=[
        step(
            "backend",
            "add",
            "keyed",
            "--type",
            "openai",
            "--url",
            f"http://127.0.0.1:1/v1?api_key={URL_KEY}",
            "--api-key-env",
            "E2E_KEY_NOBODY_SET",
        ),
        step("doctor", "--skip-cycle", "--bundle", "--bundle-out", "{tmp}/b.zip"),
        probe(
            "what survived the scrubber",
            _survivors,
            expect={
                "secrets found in the bundle": [],
                "the URL key found in the bundle": False,
                "doctor.json's backend URL": ["http://127.0.0.1:1/v1?api_key=[REDACTED]"],
            },
        ),
    ],
)


def _issue_facts(instance: Instance, url: str) -> list[str]:
    """The diagnostics lines of the pre-filled issue body, and the attachment line."""
    body = urllib.parse.unquote_plus(url)
    return [
        line.replace(str(instance.tmp), "[TMP]")
        for line in body.splitlines()
        if line.startswith(("- ready:", "- provider/model:", "- backends:", "Attach "))
    ]


DOCTOR_BUNDLE_ISSUE_URL_CARRIES_THE_FACTS = Case(
    name="doctor bundle issue url carries the ready verdict provider model and backend counts",
    script=Script(turns=["unused"]),
    steps=[
        step(
            "doctor",
            "--bundle",
            "--bundle-out",
            "{tmp}/b.zip",
            capture={"url": group(r"Report: +(\S+)")},
        ),
        probe(
            "the issue body's facts",
            _issue_facts,
            "{url}",
            expect=[
                "- ready: yes",
                "- provider/model: scripted-test / scripted-test",
                "- backends: 1 registered, 1 reachable",
                "Attach the redacted bundle: `[TMP]/b.zip`",
            ],
        ),
    ],
)


# --- Nothing resumes a run --------------------------------------------------------------------

GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _echo_results(instance: Instance) -> list[str]:
    """The tool results any run recorded for the gated echo."""
    return sorted(
        {
            m.content
            for rid in probes.captured_requests(instance)
            for unit in probes.captured_units(instance, rid)
            for m in unit.output_messages
            if m.role == "tool"
        }
    )


NOTHING_RESUMES_A_RUN = Case(
    name="a run torn down at its ask stays suspended through later commands until answered",
    # Only the echo call is asked for; the run never gets past its ask.
    script=GATED_ECHO.optional_from(1),
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "120s", "echo hi"),
        await_ask("ask", tool="native-echo.echo", kind="permission", run="run", timeout=60),
        # Ctrl-C: the firing CLI exits, its unit is torn down with it.
        signal("run"),
        wait("run", exit_code=None, timeout=120),
        # Later commands that read the store (doctor sweeps it) do not resume it.
        # (`mission list` is not read: whether the torn-down unit leaves the mission open or
        # derailed is a race, quarantined in test_approvals.py.)
        step("session", "list", "--all"),
        step("doctor"),
        probe(
            "pending asks",
            lambda i: [a.tool for a in probes.approvals(i)],
            expect=["native-echo.echo"],
        ),
        probe("the echo's tool results", _echo_results, expect=[]),
    ],
)


# --- quickstart.md: the transcript is the terminal's own scrollback ---------------------------

LONG_REPLY = "\n".join(f"scrollback line {n:02d}" for n in range(1, 81))
# The escape sequences that switch a terminal to its alternate screen, which has no scrollback.
ALT_SCREEN = (b"\x1b[?1049h", b"\x1b[?1047h", b"\x1b[?47h")


def _scrolled_off(raw: bytes, rows: int, cols: int) -> list[str]:
    """The lines a terminal keeps above its screen after showing ``raw``: its scrollback."""
    history = pyte.HistoryScreen(cols, rows, history=5000)
    pyte.ByteStream(history).feed(raw)
    return ["".join(line[x].data for x in sorted(line)).rstrip() for line in history.history.top]


# function: replays the bytes beam wrote into a terminal that keeps its scrollback
def test_beam_writes_its_transcript_into_the_terminal_s_own_scrollback(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), LONG_REPLY]))
    term = open_terminal(instance, "beam")
    term.wait_for(COMPOSER, timeout=30)
    term.send_line("tell me eighty lines")
    term.wait_for("scrollback line 80", timeout=60)
    term.send_line("/quit")
    assert term.wait_exit(timeout=60) == 0, term.describe()

    raw = term.raw()
    assert not [seq for seq in ALT_SCREEN if seq in raw], "beam switched to the alternate screen"
    # Eighty lines do not fit a forty-row screen: the first ones are in the scrollback.
    above = _scrolled_off(raw, term.rows, term.cols)
    assert "scrollback line 01" in [line.strip() for line in above], above[-50:]


# --- A chain or policy file fails to load -----------------------------------------------------

DANGLING_GOTO = json.dumps(
    {
        "id": "broken",
        "token_limit": 131072,
        "tasks": [
            {
                "id": "only",
                "handler": "noop",
                "transition": {"branches": [{"operator": "default", "goto": "nowhere"}]},
            }
        ],
    }
)
DANGLES = 'branch goto references unknown task "nowhere"'

A_CHAIN_WITH_A_STRUCTURAL_DEFECT_FAILS_AND_VET_NAMES_IT = Case(
    name="a chat on a chain with a dangling goto fails naming it and vet names the same defect",
    # The chain fails before any task runs: its one turn is never asked for.
    script=Script(turns=["unused"]),
    files={"my-chain.json": DANGLING_GOTO},
    steps=[
        step("chat", "--chain", "./my-chain.json", "hello", exit_code=1, notices_has=[DANGLES]),
        step("vet", "./my-chain.json", exit_code=1, stdout_has=["FAIL ./my-chain.json", DANGLES]),
    ],
)

AN_ENVELOPE_NAME_NOTHING_DEFINES_IS_REFUSED = Case(
    name="a run under an envelope name nothing defines is refused and fires nothing",
    script=Script(
        turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", "summarised")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    ),
    steps=[
        step(
            "run",
            "--policy",
            "no-such-envelope",
            "summarise",
            exit_code=1,
            notices_has=['hitl policy "no-such-envelope" could not be loaded'],
        ),
        probe("missions", lambda i: [m.status for m in probes.missions(i)], expect=[]),
        # Control: only the envelope's name changes, and the same run lands.
        step("run", "--policy", "run", "summarise", stdout_has=["summarised"]),
        probe("missions", lambda i: [m.status for m in probes.missions(i)], expect=["landed"]),
    ],
)


# --- Nothing answers: an ACP session with no model configured ---------------------------------


# function: an ACP session/new that must fail, which no step type expects
def test_with_no_model_configured_an_acp_session_refuses_to_start_and_doctor_says_ready_no(
    instance: Instance,
) -> None:
    instance.init()
    assert instance.contenox("doctor").stdout.startswith("Ready: no"), "doctor was ready"
    with open_acp(instance, handshake=False) as acp:
        acp.initialize()
        with pytest.raises(AcpError, match="no default-model is set"):
            acp.new_session()

    # Control: only a model changes, and the same editor gets a session that answers.
    instance.use_script(Script(turns=[route(), "Hello from the model."]))
    with open_acp(instance) as acp:
        turn = acp.prompt("hello")
    assert turn.stop_reason == "end_turn" and "Hello from the model." in turn.text, turn.describe()


# --- quickstart.md: deny on the card, and the agent is told so --------------------------------

WRITE_THEN_CARRY_ON = Script(
    turns=[
        route(),
        Turn(
            text="Writing it.",
            tool_calls=[ToolCall("write_file", {"path": "out.txt", "content": "written\n"})],
        ),
        "Understood, I will not write it.",
    ]
)


def _tool_results(instance: Instance) -> list[str]:
    return sorted(
        {
            m.content
            for rid in probes.captured_requests(instance)
            for unit in probes.captured_units(instance, rid)
            for m in unit.output_messages
            if m.role == "tool"
        }
    )


# snapshot=False: beam's redraw races its streaming text and spinner (as in test_quickstart.py).
DENYING_THE_CARD_IN_BEAM_TELLS_THE_AGENT = Case(
    name="denying the card in beam with one key keeps the write from running and tells the agent",
    script=WRITE_THEN_CARRY_ON,
    steps=[
        screen(COMPOSER, args=["beam"], timeout=30),
        keys("write out.txt"),
        screen("n deny", timeout=60),
        keys("n", enter=False),
        # The turn carries on: the model is asked again and its reply is drawn.
        screen("Understood, I will not write it.", timeout=60),
        workspace_file("out.txt", expect=None),
        probe("pending asks", probes.approvals, expect=[]),
        keys("/quit"),
        screen(exits=0, timeout=90),
    ],
    probes=[
        probe(
            "the write's tool result says it was denied",
            lambda i: any("denied" in r.lower() for r in _tool_results(i)),
            expect=True,
        )
    ],
    snapshot=False,
)


# --- quickstart.md: what the card and the status line show ------------------------------------


# function: a terminal wide enough that the policy line (which carries the scratch root's
# path) never wraps, which the screen step's 120 columns cannot promise
@pytest.mark.no_transcript(reason="the screens it records carry beam's spinner frame")
def test_beam_s_approval_card_names_the_tool_the_exact_arguments_and_the_rule_that_gated_it(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(WRITE_THEN_CARRY_ON)
    term = open_terminal(instance, "beam", cols=300)
    term.wait_for(COMPOSER, timeout=30)
    term.send_line("write out.txt")
    term.wait_for("n deny", timeout=60)
    card = term.wait_for(re.compile(r"· rule \d+"), timeout=10)
    term.send("n")
    term.wait_for("Understood, I will not write it.", timeout=60)
    term.send_line("/quit")
    assert term.wait_exit(timeout=90) == 0, term.describe()

    assert "tool  local_fs.write_file" in card, card
    assert "path = out.txt" in card and re.search(r"content =\s+written", card), card
    assert re.search(r"policy hitl-policy-default\.json · .* · rule \d+", card), card


# snapshot=False: the gauge's numbers are the tokenizer's count of the session so far.
THE_STATUS_LINE_SAYS_HOW_MUCH_CONTEXT_IS_LEFT = Case(
    name="beam's status line carries a context gauge of tokens used of the budget",
    script=Script(turns=[route(), "Hello back."]),
    steps=[
        screen(COMPOSER, args=["beam"], timeout=30),
        keys("hello"),
        screen("Hello back.", timeout=60),
        screen(re.compile(r"\b\d+/\d+ \(\d+%\)"), timeout=30),
        keys("/quit"),
        screen(exits=0, timeout=90),
    ],
    snapshot=False,
)
