"""guide/troubleshooting.md: each symptom it names that can be produced offline, and its fix.

A provider that needs the network is pointed at 127.0.0.1:1, where nothing
listens, or checked with `doctor --skip-cycle` so no request leaves the machine.
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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
    column,
    json_path,
    mission_finish,
    mission_report,
    probe,
    satisfies,
    step,
    wait,
    wait_until,
    write,
)
from harness.probes import approvals, captured_requests, captured_units, missions

NOBODY = "http://127.0.0.1:1"
UNUSED = Script(turns=["unused"])

# --- Nothing answers: no model configured -----------------------------------------------------

DOCTOR_LEADS_WITH_READY_NO_AND_NEXT = Case(
    name="doctor on a fresh home leads with Ready no and a Next line naming contenox setup",
    steps=[
        step(
            "doctor",
            stdout_has=[
                "Ready: no — No default model is set. Internal chat and chains using "
                "{{var:model}} need it.",
                "Next:  contenox setup",
            ],
        )
    ],
)

NOT_READY_VERDICTS = [
    Case(
        name=f"doctor says {label}",
        script=script,
        steps=[
            *(step("config", "set", k, v) for k, v in settings),
            step("doctor", stdout_has=["Ready: no — " + verdict, "Next:  "]),
        ],
        init=True,
    )
    for label, script, settings, verdict in (
        (
            "no default provider is set when only the model is",
            None,
            [("default-model", "qwen3:8b")],
            "No default provider is set.",
        ),
        (
            "no backends are registered when only the defaults are saved",
            None,
            [("default-model", "qwen3:8b"), ("default-provider", "ollama")],
            "No LLM backends are registered yet. Saving defaults does not create a backend",
        ),
        (
            "the default provider has no registered backend when they disagree",
            UNUSED,
            [("default-provider", "ollama"), ("default-model", "qwen3:8b")],
            'Default provider "ollama" is set, but no registered backend uses that provider.',
        ),
        (
            "the default model is not available and lists the chat models that are",
            UNUSED,
            [("default-model", "no-such-model")],
            'Default model "no-such-model" is not currently available for provider '
            '"scripted-test". Available chat models: scripted-test.',
        ),
        (
            "the reachable provider serves no chat-capable model",
            Script(capabilities={"chat": False}, turns=["unused"]),
            [],
            'Default provider "scripted-test" is reachable, but runtime state contains no '
            "chat-capable models",
        ),
    )
]

SETTING_THE_DEFAULTS_DIRECTLY_MAKES_DOCTOR_READY = Case(
    name="setting the default model directly moves doctor to Ready yes",
    script=UNUSED,
    steps=[
        step("config", "set", "default-model", "no-such-model"),
        step("doctor", stdout_has=["Ready: no"]),
        step("config", "set", "default-model", "scripted-test"),
        step("config", "get", "default-model", stdout_has=["scripted-test"]),
        step("doctor", stdout_has=["Ready: yes"]),
    ],
)

# --- Provider unreachable, or a bad key -------------------------------------------------------

A_BACKEND_WITH_NO_KEY_IS_NAMED_AS_MISSING_CREDENTIALS = Case(
    name="doctor says a backend with no stored key cannot be used because credentials are missing",
    steps=[
        step(
            "backend",
            "add",
            "oai",
            "--type",
            "openai",
            "--url",
            f"{NOBODY}/v1",
            "--api-key-env",
            "E2E_KEY_NOBODY_SET",
            exit_code=None,
        ),
        step("config", "set", "default-provider", "openai"),
        step("config", "set", "default-model", "gpt-5-mini"),
        step(
            "doctor",
            "--skip-cycle",
            stdout_has=[
                'Default provider "openai" cannot be used because its backend '
                "credentials are missing. Affected backend(s): oai."
            ],
        ),
    ],
)

A_LOCAL_SERVER_THAT_IS_NOT_RUNNING = Case(
    name="doctor says no reachable backend is available when the local server is not running",
    steps=[
        step("backend", "add", "ollama", "--type", "ollama", "--url", NOBODY),
        step("config", "set", "default-provider", "ollama"),
        step("config", "set", "default-model", "qwen3:8b"),
        step(
            "doctor",
            stdout_has=[
                "Status: error",
                'No reachable backend is available for default provider "ollama".',
                "Next:  contenox backend list",
            ],
        ),
        step("backend", "list", stdout_has=["ollama", NOBODY]),
    ],
)

# --- `doctor` says a HITL policy copy is stale ------------------------------------------------

# A hand-written copy an earlier build might have seeded: it rules on local_fs only.
OLD_DEFAULT_POLICY = json.dumps(
    {
        "version": 1,
        "default_action": "approve",
        "rules": [{"tools": "local_fs", "tool": "read_file", "action": "allow"}],
    }
)

A_STALE_POLICY_COPY_IS_NAMED_BY_PATH = Case(
    name="doctor names a top-level policy copy that predates this build's toolsets by full path",
    script=UNUSED,
    home_files={"hitl-policy-default.json": OLD_DEFAULT_POLICY},
    steps=[
        step(
            "doctor",
            stdout_has=[
                "/.contenox/hitl-policy-default.json predates toolsets",
                "contenox init --refresh-policies",
            ],
            stdout_lacks=[".generated/hitl-policy-default.json predates"],
        )
    ],
)


# function: deletes a file between two commands
def test_deleting_a_stale_copy_clears_the_notice(instance: Instance) -> None:
    instance.init()
    instance.use_script(UNUSED)
    copy = instance.home / ".contenox" / "hitl-policy-default.json"
    copy.write_text(OLD_DEFAULT_POLICY)
    assert "predates" in instance.must("doctor").stdout

    copy.unlink()

    assert "predates" not in instance.must("doctor").stdout


def _no_longer_the_old_policy(where: Callable[[Instance], Path]) -> Probe:
    return probe(
        "the copy is no longer the old policy",
        lambda i: json.loads(where(i).read_text()) != json.loads(OLD_DEFAULT_POLICY),
        expect=True,
    )


REFRESH_POLICIES_REWRITES_THE_STALE_COPY = Case(
    name="refresh policies rewrites the stale copy and the notice stops",
    script=UNUSED,
    steps=[
        write("hitl-policy-default.json", OLD_DEFAULT_POLICY, home=True),
        step(
            "init",
            "--refresh-policies",
            stdout_has=["Refreshed {home}/.contenox/hitl-policy-default.json"],
        ),
        _no_longer_the_old_policy(lambda i: i.home / ".contenox" / "hitl-policy-default.json"),
        step("doctor", stdout_lacks=["predates"]),
    ],
)


def _policy_copies(instance: Instance) -> list[str]:
    """hitl-policy-*.json at the top of ~/.contenox and of the workspace's .contenox."""
    return [
        str(p.relative_to(instance.root))
        for where in (instance.home / ".contenox", instance.work / ".contenox")
        for p in sorted(where.glob("hitl-policy-*.json"))
    ]


REFRESH_POLICIES_NEVER_CREATES_A_COPY = Case(
    name="refresh policies never creates a copy",
    steps=[
        probe("policy copies before", _policy_copies, expect=[]),
        step("init", "--refresh-policies"),
        probe("policy copies after", _policy_copies, expect=[]),
    ],
)

REFRESH_POLICIES_REFRESHES_A_WORKSPACE_SHADOW = Case(
    name="refresh policies also refreshes a workspace copy that shadows one",
    steps=[
        write(".contenox/hitl-policy-default.json", OLD_DEFAULT_POLICY),
        step("init", "--refresh-policies"),
        _no_longer_the_old_policy(lambda i: i.work / ".contenox" / "hitl-policy-default.json"),
    ],
)


# --- `doctor` says a trusted-binary declaration stopped matching --------------------------------


def _trusted_tool(instance: Instance) -> Path:
    """A workspace policy copy pinning a little script, then the script changed under it."""
    instance.init()
    instance.use_script(UNUSED)
    shipped = instance.home / ".contenox" / ".generated" / "hitl-policy-default.json"
    instance.write(".contenox/hitl-policy-default.json", shipped.read_text())
    tool = instance.write("tool.sh", "#!/bin/sh\necho v1\n")
    tool.chmod(0o755)
    instance.must("hitl", "trust", str(tool))
    tool.write_text("#!/bin/sh\necho v2\n")
    return tool


# function: copies the shipped envelope init renders, then pins a script in it
def test_doctor_reports_a_trusted_binary_that_changed_under_its_declaration(
    instance: Instance,
) -> None:
    tool = _trusted_tool(instance)

    report = instance.must("doctor").stdout

    assert "trusted-binary declaration(s) no longer describe this host" in report, report
    assert f"{tool}: does not match the declared hash" in report, report
    assert "contenox hitl trust --refresh" in report, report


# function: copies the shipped envelope init renders, then pins a script in it
def test_hitl_trust_list_shows_the_drifted_declaration(instance: Instance) -> None:
    tool = _trusted_tool(instance)

    listing = instance.must("hitl", "trust", "--list").stdout

    assert f"BAD  {tool}: does not match the declared hash" in listing, listing


# function: copies the shipped envelope init renders, then pins a script in it
def test_hitl_trust_refresh_rehashes_and_the_drift_notice_stops(instance: Instance) -> None:
    tool = _trusted_tool(instance)

    instance.must("hitl", "trust", "--refresh")

    assert f"ok   {tool}" in instance.must("hitl", "trust", "--list").stdout
    assert "no longer describe this host" not in instance.must("doctor").stdout


# --- A chain or policy file fails to load -----------------------------------------------------

BROKEN_CHAIN = json.dumps(
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

VET_FAILS_A_BROKEN_CHAIN = Case(
    name="vet exits nonzero when a workspace chain has a dangling goto",
    files={".contenox/chain-broken.json": BROKEN_CHAIN},
    steps=[step("vet", exit_code=1, stdout_has=["chain-broken.json"])],
)

VET_ONE_FILE = Case(
    name="vet of one file checks just that file",
    files={"my-chain.json": BROKEN_CHAIN},
    steps=[step("vet", "./my-chain.json", exit_code=1, stdout_has=["my-chain.json"])],
)

VET_SKIPS_WHAT_IS_NEITHER_CHAIN_NOR_ENVELOPE = Case(
    name="vet skips a json file that is neither a chain nor an envelope",
    files={".contenox/notes.json": '{"hello": "world"}'},
    steps=[step("vet", stdout_has=["notes.json"])],
)

# --- Recovering after a crash or a restart ----------------------------------------------------

GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
# A run that ends at the echo's ask (torn down, stopped, expired): the turns
# after the ask are never asked for; the echo call itself still is.
ENDS_AT_THE_ASK = GATED_ECHO.optional_from(1)


A_RESPONDER_WITH_NO_MODEL_IS_REFUSED = Case(
    name="a responder with no usable model is refused and the ask stays pending",
    script=ENDS_AT_THE_ASK,
    steps=[
        step("run", "--policy", "run", "--timeout", "3s", "echo hi", exit_code="non-zero"),
        step("approvals", "list", capture={"ask": column("ID")}),
        step("backend", "remove", "scripted"),
        step("approvals", "respond", "{ask}", "--approve", exit_code="non-zero"),
        step(
            "approvals",
            "list",
            stdout_has=[re.compile(r"^{ask} ", re.M)],
            stdout_lacks=["No pending asks"],
        ),
    ],
    defect=Defect(
        title=("`approvals respond` with no usable model records the verdict and drops the ask"),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace; scripted dialog: local_shell "
            "{command:echo,args:[hi]}, mission_report, mission_finish, text. `run --policy "
            "run --timeout 2s echo` -> exit 1 'did not finish within 2s'; `approvals list` "
            "shows permission ask scripted-test-0-0-00e9 (local_shell echo hi, 6d). "
            "`backend remove scripted`; `approvals respond <id> --approve` -> exit 1 "
            "'Error: respond to ask …: hitlservice: verdict for approval … recorded, but "
            "resuming its suspended run failed: agentservice: the mission behind this "
            "checkpoint already finished; the suspended run is not resumable (mission … is "
            "\"derailed\" …)'; `approvals list` -> 'No pending asks.' Second fresh run, "
            "this time with default-model and default-provider set to '' (no model "
            "configured at all): same message, same empty list. Note: Reproduces: with no "
            "us..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: a gated local_shell echo call\n"
            'contenox run --policy run --timeout 2s "echo"   # leaves a checkpointed '
            "ask\n"
            "contenox backend remove scripted\n"
            "contenox approvals respond <id> --approve\n"
            "# verdict for approval <id> recorded, but resuming its suspended run "
            "failed: … (checkpoint retained with failure annotation):\n"
            "#   … client resolution failed: no models found in runtime state\n"
            "contenox approvals list   # No pending asks."
        ),
        promised=(
            'guide/troubleshooting.md:169 "A process with no usable model '
            'configuration is refused outright and the ask stays pending"'
        ),
        observed="the verdict is recorded and the ask leaves the pending list",
    ),
)


# function: a loop: polls approvals list until the expired ask is swept
def test_approvals_list_applies_an_expired_asks_timeout_verdict(instance: Instance) -> None:
    instance.init()
    instance.use_script(ENDS_AT_THE_ASK)
    instance.must("config", "set", "approval-ceiling", "5s")
    instance.contenox("run", "--policy", "run", "--timeout", "2s", "echo hi").assert_failure()

    # The read that finds the ask expired applies its verdict and says how many it closed.
    def sweeping_read() -> str | None:
        out = instance.must("approvals", "list").stdout
        return out if "Swept" in out else None

    swept = wait_until(
        sweeping_read,
        timeout=60,
        interval=1,
        what="`approvals list` to sweep the expired ask",
    )

    assert "Swept 1 expired ask(s) to their on-timeout verdict." in swept, swept
    assert "No pending asks." in swept, swept


MISSION_STOP_ABANDONS_AND_CLOSES_ASKS = Case(
    name="mission stop abandons a mission and closes its pending asks",
    script=ENDS_AT_THE_ASK,
    steps=[
        background("run", "run", "--policy", "run", "--timeout", "120s", "echo hi"),
        await_ask("ask", tool="native-echo.echo", timeout=60),
        step("mission", "stop", "{ask_mission}", "--reason", "host is gone"),
        wait("run", exit_code=None, timeout=120),
        probe("mission statuses", lambda i: [m.status for m in missions(i)], expect=["abandoned"]),
        probe("approvals", approvals, expect=[]),
        step("mission", "show", "{ask_mission}", stdout_has=["host is gone"]),
    ],
)


# --- Filing a bug: `doctor --bundle` ----------------------------------------------------------


def _bundle(instance: Instance) -> zipfile.ZipFile:
    return zipfile.ZipFile(instance.tmp / "report.zip")


def _bundle_members_and_report(instance: Instance) -> dict[str, bool]:
    archive = _bundle(instance)
    # doctor.json is the report exactly as --json renders it: the same fields.
    bundled = json.loads(archive.read("doctor.json"))
    return {
        "doctor.json and build.txt are members": {"doctor.json", "build.txt"}
        <= set(archive.namelist()),
        "doctor.json has the fields of doctor --json": set(bundled)
        == set(json.loads(instance.must("doctor", "--json").stdout)),
        "build.txt names v1.0.0": "v1.0.0" in archive.read("build.txt").decode(),
    }


BUNDLE = ("doctor", "--bundle", "--bundle-out", "{tmp}/report.zip")

DOCTOR_BUNDLE_WRITES_THE_ZIP = Case(
    name="doctor bundle writes the zip it names with the documented members",
    script=UNUSED,
    steps=[
        step(
            *BUNDLE,
            stdout_has=[
                "Bundle: {tmp}/report.zip",
                "Redacted:",
                "Review the file before sharing it.",
                "Report:   https://github.com/contenox/contenox/issues/new?",
            ],
        ),
    ],
    probes=[
        probe(
            "the bundle",
            _bundle_members_and_report,
            expect={
                "doctor.json and build.txt are members": True,
                "doctor.json has the fields of doctor --json": True,
                "build.txt names v1.0.0": True,
            },
        )
    ],
)

DOCTOR_JSON_BUNDLE_KEEPS_STDOUT_JSON = Case(
    name="doctor json bundle keeps stdout parseable json",
    script=UNUSED,
    steps=[
        step(
            "doctor",
            "--json",
            "--bundle",
            "--bundle-out",
            "{tmp}/report.zip",
            # Parseable: the whole stdout is one JSON document.
            capture={"parsed": json_path("resolvedFrom")},
            notices_has=["Bundle: {tmp}/report.zip"],
        ),
        probe("report.zip is a file", lambda i: (i.tmp / "report.zip").is_file(), expect=True),
    ],
)


def _bundled_logs(instance: Instance) -> str:
    archive = _bundle(instance)
    return "".join(archive.read(n).decode() for n in archive.namelist() if n.startswith("logs/"))


DOCTOR_BUNDLE_REDACTS_A_KEY = Case(
    name="doctor bundle redacts a key in a telemetry log",
    script=UNUSED,
    files={".contenox/telemetry.log": "request api_key=sk-live-e2e-not-a-real-key ok\n"},
    steps=[
        step(
            *BUNDLE,
            stdout_has=["Report:   https://"],
            stdout_lacks=[
                "Redacted: 0 ",
                # The issue URL carries no log content.
                re.compile(r"Report:.*(sk-live|api_key)"),
            ],
            notices_lacks=["Redacted: 0 "],
        ),
        probe(
            "the bundled logs",
            _bundled_logs,
            expect=satisfies(
                lambda text: (
                    bool(text)
                    and "sk-live-e2e-not-a-real-key" not in text
                    and "api_key=[REDACTED]" in text
                ),
                "logs/ members, the key redacted as api_key=[REDACTED]",
            ),
        ),
    ],
)


VET_ALL_ALSO_VETS_THE_HOME_CONTENOX = Case(
    name="vet all also vets the files under the home contenox that plain vet leaves alone",
    home_files={"chain-broken.json": BROKEN_CHAIN},
    steps=[
        step("vet", stdout_lacks=["chain-broken.json"]),
        step("vet", "--all", exit_code=1, stdout_has=["chain-broken.json"]),
    ],
)


# --- Stand-ins on loopback for a provider that answers ---------------------------------------

GOOD_KEY = "sk-e2e-accepted"


class _ProviderStandIn(http.server.BaseHTTPRequestHandler):
    """Answers as an OpenAI-compatible API (401 unless the key is GOOD_KEY) and as Ollama."""

    def do_GET(self) -> None:
        if self.path.startswith("/api/tags"):
            self._reply(200, {"models": []})
        elif self.path.startswith("/api/version"):
            self._reply(200, {"version": "0.9.0"})
        elif self.headers.get("Authorization") == f"Bearer {GOOD_KEY}":
            self._reply(200, {"object": "list", "data": [{"id": "gpt-5-mini", "object": "model"}]})
        else:
            self._reply(
                401,
                {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}},
            )

    def _reply(self, status: int, body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def provider_stand_in() -> Iterator[str]:
    """The base URL of a provider stand-in on 127.0.0.1, stopped after the test."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ProviderStandIn)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _openai_backend(instance: Instance, url: str, key: str) -> None:
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
        env={"E2E_PROVIDER_KEY": key},
    )


# function: a provider stand-in the test serves on loopback
def test_doctor_says_a_provider_rejected_the_stored_credentials(
    instance: Instance, provider_stand_in: str
) -> None:
    instance.init()
    _openai_backend(instance, provider_stand_in, "sk-e2e-wrong")
    instance.must("config", "set", "default-provider", "openai")
    instance.must("config", "set", "default-model", "gpt-5-mini")

    report = instance.contenox("doctor").stdout

    assert 'Default provider "openai" rejected the stored credentials.' in report, report


# function: a provider stand-in the test serves on loopback
def test_rerunning_doctor_after_fixing_the_key_reruns_the_sync(
    instance: Instance, provider_stand_in: str
) -> None:
    instance.init()
    _openai_backend(instance, provider_stand_in, "sk-e2e-wrong")
    instance.must("config", "set", "default-provider", "openai")
    instance.must("config", "set", "default-model", "gpt-5-mini")
    assert "rejected the stored credentials" in instance.contenox("doctor").stdout

    instance.must("backend", "remove", "oai")
    _openai_backend(instance, provider_stand_in, GOOD_KEY)

    report = instance.contenox("doctor").stdout
    assert "rejected the stored credentials" not in report, report
    assert "Status: reachable" in report, report


# function: a provider stand-in the test serves on loopback
def test_doctor_probes_ollama_host_and_prints_the_pull_and_register_commands(
    instance: Instance, provider_stand_in: str
) -> None:
    instance.init()
    instance.must("config", "set", "default-provider", "ollama")
    instance.must("config", "set", "default-model", "qwen3:8b")

    report = instance.contenox("doctor", env={"OLLAMA_HOST": provider_stand_in}).stdout

    assert f"Local Ollama responded at {provider_stand_in}" in report, report
    assert (
        "Next:  ollama pull qwen3:8b && contenox backend add ollama --type ollama "
        f'--url "{provider_stand_in}"' in report
    ), report


# --- Every tool call returns `tool_result_too_large` -------------------------------------------

CHAT_READS = Script(
    turns=[
        Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        "Read it.",
    ]
)


def _chat_read_with_chain(instance: Instance, token_limit: int | None) -> list[str]:
    """`chat --chain` a copy of the shipped chat chain, its token_limit set or removed."""
    instance.init()
    instance.write("notes.txt", "retry budget\n")
    instance.use_script(CHAT_READS)
    shipped = instance.home / ".contenox" / ".generated" / "chain-agent-chat.json"
    chain = json.loads(shipped.read_text())
    chain.pop("token_limit", None)
    if token_limit is not None:
        chain["token_limit"] = token_limit
    instance.write("my-chain.json", json.dumps(chain))

    instance.must("chat", "--chain", "./my-chain.json", "read notes.txt")

    return [
        m.content
        for request in captured_requests(instance)
        for unit in captured_units(instance, request)
        for m in unit.output_messages
        if m.role == "tool"
    ]


# function: edits a copy of the chat chain that init renders
def test_a_chain_with_no_token_limit_gets_tool_result_too_large_for_every_call(
    instance: Instance,
) -> None:
    results = _chat_read_with_chain(instance, None)

    assert results, "the read_file call left no tool result"
    for result in results:
        payload = json.loads(result)
        assert (payload["error"], payload["max_bytes"]) == ("tool_result_too_large", 0), result


# function: edits a copy of the chat chain that init renders
def test_setting_token_limit_at_the_top_of_the_chain_lets_results_through(
    instance: Instance,
) -> None:
    results = _chat_read_with_chain(instance, 131072)

    assert "retry budget\n" in results, results
