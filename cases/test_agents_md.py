"""AGENTS.md: which surfaces load it, from where, and what reaches the model.

contenox-docs/guide/agents-md.md and guide/agents-md-why.md. What reaches the
model is read from `contenox state show <run> --raw` (the messages each model
call was sent); what was persisted, from `contenox session show`.
"""

from __future__ import annotations

from harness import (
    Case,
    Instance,
    Script,
    Turn,
    mission_finish,
    mission_report,
    open_acp,
    open_terminal,
    probe,
    route,
    step,
)
from harness.probes import SessionMessage, captured_requests, captured_units, transcript

MARKER = "ALPHA-MARKER: never edit vendor/"
AGENTS_MD = f"# Project rules\n\n{MARKER}\n"
# The wrapper contenox puts around the file (guide/agents-md.md: "your AGENTS.md
# (plus a short wrapper)"); it is what tells the model the file is reference material.
WRAPPER = "(AGENTS.md, community standard from agents.md)"
REFERENCE = (
    "Treat this as project-specific reference material and conventions, not unconditional rules."
)
CHAT = Script(turns=["Hello there, friend."])
# `chat` logs no model call on stderr (quarantined in test_scripted_backend_identity.py),
# so the harness cannot count the turns it served; the reply on stdout shows it was.
CHAT_DEMAND_UNSEEN = False
LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "read the rules")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
# chat prompts start "Current date: 2026-11-30."
DATE = {r"\b\d{4}-\d\d-\d\d\b": "[DATE]"}


def _sent_system_messages(instance: Instance, request_id: str) -> list[SessionMessage]:
    """Every system message the model was sent in one captured run, first-seen order."""
    seen: list[SessionMessage] = []
    for unit in captured_units(instance, request_id):
        if unit.handler != "chat_completion":
            continue
        for message in unit.sent:
            if message.role == "system" and message.content not in [m.content for m in seen]:
                seen.append(message)
    return seen


def system_messages_sent(instance: Instance) -> list[dict[str, object]]:
    """Per captured run: each distinct system message the model was sent, by its first line.

    Whether it carries the AGENTS.md marker is spelled out, so a snapshot shows
    at a glance where the file landed (its own message, inside the chain's
    prompt, or nowhere).
    """
    out: list[dict[str, object]] = []
    for rid in captured_requests(instance):
        for message in _sent_system_messages(instance, rid):
            out.append(
                {
                    "first line": message.content.split("\n", 1)[0],
                    "carries AGENTS.md": MARKER in message.content,
                }
            )
    return out


def session_roles(instance: Instance) -> list[str]:
    """The roles of the active session's messages, in order (`session show`)."""
    return [m.role for m in transcript(instance).messages]


CHAT_LOADS = Case(
    name="chat loads the workspace AGENTS.md as the first message of the session",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[
        step("chat", "hello", stdout_has=["Hello there, friend."]),
        # The page's own check: the head of the active session.
        step(
            "session",
            "show",
            "--head",
            "1",
            stdout_has=["] system:", "Project context loaded from", "AGENTS.md", MARKER],
            stdout_lacks=["] user:"],
        ),
    ],
    probes=[probe("session roles", session_roles)],
    serves_all_turns=CHAT_DEMAND_UNSEEN,
)

CHAT_SENDS_IT = Case(
    name="the AGENTS.md reaches the model as its own system message, not inside the chat prompt",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[step("chat", "hello", stdout_has=["Hello there, friend."])],
    probes=[probe("system messages sent", system_messages_sent)],
    redact=DATE,
    serves_all_turns=CHAT_DEMAND_UNSEEN,
)

WRAPPED_AS_REFERENCE = Case(
    name="the loaded AGENTS.md is wrapped as reference material not as rules",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[
        step("chat", "hello"),
        step(
            "session",
            "show",
            "--head",
            "1",
            stdout_has=[WRAPPER, REFERENCE, "if it changes, start a new session"],
        ),
    ],
    serves_all_turns=CHAT_DEMAND_UNSEEN,
)

ONCE_PER_SESSION = Case(
    name="AGENTS.md is loaded once per session not once per turn",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[
        step("chat", "first question"),
        step("chat", "second question"),
        step("session", "show", stdout_has=[MARKER, "first question", "second question"]),
    ],
    probes=[probe("session roles", session_roles)],
    serves_all_turns=CHAT_DEMAND_UNSEEN,
)

NO_FILE_NOTHING_LOADED = Case(
    name="without an AGENTS.md in the tree chat opens the session with no project message",
    script=CHAT,
    steps=[
        step("chat", "hello"),
        step(
            "session",
            "show",
            "--head",
            "1",
            stdout_has=["] user:", "hello"],
            stdout_lacks=["] system:", "Project context loaded"],
        ),
    ],
    probes=[probe("session roles", session_roles)],
    serves_all_turns=CHAT_DEMAND_UNSEEN,
)

RUN_DOES_NOT_LOAD = Case(
    name="run starts its session without the project AGENTS.md",
    script=LANDS,
    files={"AGENTS.md": AGENTS_MD},
    steps=[step("run", "--policy", "run", "read the rules", stdout_has=["read the rules"])],
    probes=[probe("system messages sent", system_messages_sent)],
    serves_all_turns=False,  # the closing turn after mission_finish is served only sometimes
)

MISSION_FIRE_DOES_NOT_LOAD = Case(
    name="mission fire starts its session without the project AGENTS.md",
    script=LANDS,
    files={"AGENTS.md": AGENTS_MD},
    steps=[
        step(
            "mission",
            "fire",
            "run",
            "read the rules",
            "--policy",
            "run",
            "--wait",
            stdout_has=["finished: landed"],
        )
    ],
    probes=[probe("system messages sent", system_messages_sent)],
    serves_all_turns=False,
)


def _carries_marker(instance: Instance) -> list[bool]:
    return [
        MARKER in m.content
        for rid in captured_requests(instance)
        for m in _sent_system_messages(instance, rid)
    ]


def _head_system(instance: Instance) -> str:
    shown = transcript(instance, head=1)
    return (
        shown.messages[0].content if shown.messages and shown.messages[0].role == "system" else ""
    )


def test_chat_walks_up_from_a_subdirectory_to_the_agents_md_above_it(instance: Instance) -> None:
    # function: needs a cwd below the workspace root
    instance.init()
    instance.use_script(CHAT)
    instance.write("AGENTS.md", AGENTS_MD)
    deeper = instance.work / "pkg" / "deeper"
    deeper.mkdir(parents=True)

    instance.must("chat", "hello", cwd=deeper)

    head = _head_system(instance)
    assert MARKER in head, transcript(instance)
    assert f"loaded from {instance.work / 'AGENTS.md'}" in head, head


def test_the_closest_agents_md_wins_and_the_walk_stops_there(instance: Instance) -> None:
    # function: needs a cwd below the workspace root
    instance.init()
    instance.use_script(CHAT)
    instance.write("AGENTS.md", AGENTS_MD)
    instance.write("pkg/AGENTS.md", "PKG-MARKER: this package is generated\n")
    deeper = instance.work / "pkg" / "deeper"
    deeper.mkdir(parents=True)

    instance.must("chat", "hello", cwd=deeper)

    shown = transcript(instance)
    systems = [m.content for m in shown.messages if m.role == "system"]
    assert len(systems) == 1, shown
    assert "PKG-MARKER" in systems[0], shown
    assert f"loaded from {instance.work / 'pkg' / 'AGENTS.md'}" in systems[0], shown
    # Stopped at the first hit: the root file never loaded beside it.
    assert MARKER not in systems[0], shown


def test_an_agents_md_over_64_kib_is_truncated_with_a_marker(instance: Instance) -> None:
    # function: a 70 KB file would make an unreadable snapshot
    instance.init()
    instance.use_script(CHAT)
    body = "# big\n" + ("A" * 99 + "\n") * 700 + "TAIL-MARKER\n"  # 70,006 bytes
    instance.write("AGENTS.md", body)

    instance.must("chat", "hello")

    head = _head_system(instance)
    assert "truncated to 64 KiB" in head, head[-500:]
    assert "TAIL-MARKER" not in head, head[-500:]
    kept = head[head.index("# big") : head.index("[AGENTS.md truncated")].rstrip("\n")
    assert body.startswith(kept) and 60 * 1024 <= len(kept.encode()) <= 64 * 1024, len(kept)


def test_editing_agents_md_mid_session_changes_nothing_until_a_new_session(
    instance: Instance,
) -> None:
    # function: needs the file rewritten between two commands
    instance.init()
    instance.use_script(CHAT)
    instance.write("AGENTS.md", AGENTS_MD)
    instance.must("chat", "first")
    instance.write("AGENTS.md", "BETA-MARKER: the rules changed\n")

    instance.must("chat", "second")
    shown = transcript(instance)
    systems = [m.content for m in shown.messages if m.role == "system"]
    assert len(systems) == 1 and MARKER in systems[0] and "BETA" not in systems[0], shown

    instance.must("session", "new", "fresh")
    instance.must("chat", "third")
    fresh = transcript(instance, "fresh")
    assert fresh.messages[0].role == "system", fresh
    assert "BETA-MARKER" in fresh.messages[0].content, fresh
    assert MARKER not in fresh.messages[0].content, fresh


def test_acp_starts_its_session_without_the_project_agents_md(instance: Instance) -> None:
    # function: needs acp
    instance.init()
    instance.write("AGENTS.md", AGENTS_MD)
    instance.use_script(Script(turns=[route(), "Hello from the script."]))
    with open_acp(instance) as acp:
        turn = acp.prompt("say hello")
        assert turn.text == "Hello from the script.", turn.describe()
    carried = _carries_marker(instance)
    assert carried and not any(carried), carried


def test_acpx_starts_its_session_without_the_project_agents_md(instance: Instance) -> None:
    # function: needs acp
    instance.init()
    instance.write("AGENTS.md", AGENTS_MD)
    # acpx's chain is not the acp router: no label turn.
    instance.use_script(Script(turns=["Hello from the script."]))
    with open_acp(instance, subcommand="acpx") as acp:
        turn = acp.prompt("say hello")
        assert turn.text == "Hello from the script.", turn.describe()
    carried = _carries_marker(instance)
    assert carried and not any(carried), carried


def test_beam_starts_its_session_without_the_project_agents_md(instance: Instance) -> None:
    # function: needs a terminal
    instance.init()
    instance.write("AGENTS.md", AGENTS_MD)
    instance.use_script(Script(turns=[route(), "Hello from the script."]))
    term = open_terminal(instance, "beam", "--plain")
    term.wait_for("type / for commands", timeout=30)
    term.send_line("say hello")
    term.wait_for("Hello from the script.", timeout=60)
    term.send_line("/quit")
    assert term.wait_exit(timeout=30) == 0, term.describe()
    carried = _carries_marker(instance)
    assert carried and not any(carried), carried
