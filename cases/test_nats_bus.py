"""`CONTENOX_NATS_URL` against a real NATS server: what doctor says of a bus that answers.

reference/config.md (external backends for state) and reference/contenox-cli.md's
environment variables: the variable moves the message bus onto a NATS server, and
`doctor`'s State storage section names it and says whether it answered. The refused
and malformed URLs are cases in test_config.py and test_doctor_page.py; this is the
reachable side, which needs a server (harness/servers/nats.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness import Instance, Script
from harness.servers.nats import CLIENT_CLOSED, CLIENT_CLOSING, NatsMessage, serve_nats

# doctor opens several NATS connections at once; their client's log lines (connect,
# unsubscribe errors at close, disconnect) interleave differently run to run.
# The client's connect lines, logged before any work: one placeholder. Its closing
# lines are a race at exit (harness.servers.nats.CLIENT_CLOSING): dropped.
CLIENT_LOG = r"(?m)(?:^[^\n]*(?:Connecting to NATS|Successfully connected to NATS)[^\n]*(?:\n|$))+"


def _redact_client_log(instance: Instance) -> None:
    # Closing lines first, so connect lines they interleaved with become one block.
    instance.recorder.redact(CLIENT_CLOSING, CLIENT_CLOSED)
    instance.recorder.redact(CLIENT_LOG, "[the NATS client's connection log]\n")


def _bus_section(stdout: str) -> list[str]:
    """The message bus's lines of doctor's State storage section (its bullet and its Status)."""
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if "message bus:" in line:
            return [line.strip(), lines[i + 1].strip() if i + 1 < len(lines) else ""]
    return []


# function: a NATS server is started beside the command
def test_doctor_names_a_reachable_nats_bus_with_its_variable_and_says_it_answered(
    instance: Instance,
) -> None:
    _redact_client_log(instance)
    bus = serve_nats(instance)
    instance.init()
    doctor = instance.must("doctor", env={"CONTENOX_NATS_URL": bus.url})
    assert _bus_section(doctor.stdout) == [
        f"• message bus: NATS ({bus.url}, from CONTENOX_NATS_URL)",
        "Status: reachable",
    ], doctor.describe()


def _subjects_of(messages: list[NatsMessage], request_id: str) -> list[str]:
    """The subjects one run published on, its request id written as <rid>, sorted."""
    return sorted(
        {
            m.subject.replace(request_id, "<rid>")
            for m in messages
            if request_id in m.subject or request_id in m.data.decode(errors="replace")
        }
    )


def _request_ids(messages: list[NatsMessage]) -> list[str]:
    seen: list[str] = []
    for m in messages:
        if m.subject == "taskengine.events":
            rid = str(m.json().get("request_id"))
            if rid not in seen:
                seen.append(rid)
    return seen


def _run_ended(messages: Sequence[NatsMessage], count: int) -> bool:
    return (
        sum(
            1
            for m in messages
            if m.subject.startswith("taskengine.events.request.")
            and m.json().get("kind") == "chain_completed"
        )
        >= count
    )


# function: two deployments (two homes) share one NATS server started beside them
def test_two_deployments_on_one_nats_server_publish_on_the_same_subjects(
    instance: Instance,
) -> None:
    _redact_client_log(instance)
    bus = serve_nats(instance)
    instance.init()
    script = instance.use_script(Script(turns=["Hello from a deployment."]))
    other = {"HOME": str(instance.root / "other" / "home"), "CONTENOX_NATS_URL": bus.url}
    elsewhere = instance.root / "other" / "work"
    Path(other["HOME"]).mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    instance.must("chat", "hello", env={"CONTENOX_NATS_URL": bus.url})
    for args in (
        ("init",),
        ("backend", "add", "scripted", "--type", "scripted-test", "--script", str(script)),
        ("config", "set", "default-provider", "scripted-test"),
        ("config", "set", "default-model", "scripted-test"),
        ("chat", "hello"),
    ):
        instance.must(*args, env=other, cwd=elsewhere)
    messages = bus.wait_for(lambda ms: _run_ended(ms, 2), timeout=30)
    first, second = _request_ids(messages)
    mine, theirs = _subjects_of(messages, first), _subjects_of(messages, second)
    instance.recorder.probe("subjects of each deployment's run", (), {"a": mine, "b": theirs})
    # Nothing in a subject names the deployment: a subscriber to one deployment's
    # subjects receives the other's events too.
    assert "taskengine.events" in mine, bus.describe()
    assert mine == theirs, bus.describe()
