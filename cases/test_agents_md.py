"""AGENTS.md: which surfaces load it, from where, and what reaches the model.

contenox-docs/guide/agents-md.md and guide/agents-md-why.md. What reaches the
model is read from `contenox state show <run> --raw` (the messages each model
call was sent); what was persisted, from `contenox session show`.
"""

from __future__ import annotations

import re

from harness import (
    Case,
    Instance,
    Probe,
    Script,
    Turn,
    keys,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    prompt,
    route,
    satisfies,
    screen,
    step,
    write,
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
)

CHAT_SENDS_IT = Case(
    name="the AGENTS.md reaches the model as its own system message, not inside the chat prompt",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[step("chat", "hello", stdout_has=["Hello there, friend."])],
    probes=[probe("system messages sent", system_messages_sent)],
    redact=DATE,
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
)

RUN_DOES_NOT_LOAD = Case(
    name="run starts its session without the project AGENTS.md",
    script=LANDS,
    files={"AGENTS.md": AGENTS_MD},
    steps=[step("run", "--policy", "run", "read the rules", stdout_has=["read the rules"])],
    probes=[probe("system messages sent", system_messages_sent)],
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


def _head_facts(instance: Instance, *needles: str) -> dict[str, bool]:
    """Which of ``needles`` the session's first (system) message carries."""
    head = _head_system(instance)
    return {n: n in head for n in needles}


CHAT_WALKS_UP_TO_THE_AGENTS_MD_ABOVE = Case(
    name="chat walks up from a subdirectory to the agents md above it",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[step("chat", "hello", cwd="work/pkg/deeper")],
    probes=[
        probe(
            "the session's first message",
            lambda i: _head_facts(i, MARKER, f"loaded from {i.work / 'AGENTS.md'}"),
            expect=satisfies(lambda facts: all(facts.values()), "the root AGENTS.md, named"),
        )
    ],
)


def _systems(instance: Instance, *session: str) -> list[str]:
    return [m.content for m in transcript(instance, *session).messages if m.role == "system"]


def _closest_wins(instance: Instance) -> dict[str, object]:
    systems = _systems(instance)
    first = systems[0] if systems else ""
    return {
        "system messages": len(systems),
        "the package's file": "PKG-MARKER" in first
        and f"loaded from {instance.work / 'pkg' / 'AGENTS.md'}" in first,
        # Stopped at the first hit: the root file never loaded beside it.
        "the root's file": MARKER in first,
    }


THE_CLOSEST_AGENTS_MD_WINS = Case(
    name="the closest agents md wins and the walk stops there",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD, "pkg/AGENTS.md": "PKG-MARKER: this package is generated\n"},
    steps=[step("chat", "hello", cwd="work/pkg/deeper")],
    probes=[
        probe(
            "what the session was sent",
            _closest_wins,
            expect={"system messages": 1, "the package's file": True, "the root's file": False},
        )
    ],
)

BIG_AGENTS_MD = "# big\n" + ("A" * 99 + "\n") * 700 + "TAIL-MARKER\n"  # 70,006 bytes


def _truncation(instance: Instance) -> dict[str, bool]:
    head = _head_system(instance)
    marked = "truncated to 64 KiB" in head
    kept = head[head.index("# big") : head.index("[AGENTS.md truncated")] if marked else ""
    kept = kept.rstrip("\n")
    return {
        "marked truncated to 64 KiB": marked,
        "the tail is gone": "TAIL-MARKER" not in head,
        "kept a 60-64 KiB head of the file": BIG_AGENTS_MD.startswith(kept)
        and 60 * 1024 <= len(kept.encode()) <= 64 * 1024,
    }


AN_AGENTS_MD_OVER_64_KIB_IS_TRUNCATED = Case(
    name="an agents md over 64 kib is truncated with a marker",
    script=CHAT,
    # Placed as a file, so the 70 KB body never reaches the transcript.
    files={"AGENTS.md": BIG_AGENTS_MD},
    steps=[step("chat", "hello")],
    probes=[
        probe(
            "the session's first message",
            _truncation,
            expect={
                "marked truncated to 64 KiB": True,
                "the tail is gone": True,
                "kept a 60-64 KiB head of the file": True,
            },
        )
    ],
)


def _which_rules(instance: Instance, *session: str) -> list[tuple[bool, bool]]:
    """(the first rules, the changed rules) for each system message of the session."""
    return [(MARKER in m, "BETA-MARKER" in m) for m in _systems(instance, *session)]


EDITING_AGENTS_MD_MID_SESSION = Case(
    name="editing agents md mid session changes nothing until a new session",
    script=CHAT,
    files={"AGENTS.md": AGENTS_MD},
    steps=[
        step("chat", "first"),
        write("AGENTS.md", "BETA-MARKER: the rules changed\n"),
        step("chat", "second"),
        probe("the session's rules", _which_rules, expect=[(True, False)]),
        step("session", "new", "fresh"),
        step("chat", "third"),
        probe(
            "the fresh session's first message",
            lambda i: (
                (m := transcript(i, "fresh").messages[0]).role,
                MARKER in m.content,
                "BETA-MARKER" in m.content,
            ),
            expect=("system", False, True),
        ),
    ],
)


def _no_session_carries_the_marker() -> Probe:
    return probe(
        "sessions carrying the project's AGENTS.md",
        _carries_marker,
        expect=satisfies(lambda carried: carried and not any(carried), "sessions, none with it"),
    )


ACP_STARTS_WITHOUT_AGENTS_MD = Case(
    name="acp starts its session without the project agents md",
    files={"AGENTS.md": AGENTS_MD},
    script=Script(turns=[route(), "Hello from the script."]),
    steps=[prompt("say hello", text_has=[re.compile(r"\AHello from the script\.\Z")])],
    probes=[_no_session_carries_the_marker()],
)


# function: opens acpx, a subcommand prompt() cannot choose
def test_acpx_starts_its_session_without_the_project_agents_md(instance: Instance) -> None:
    instance.init()
    instance.write("AGENTS.md", AGENTS_MD)
    # acpx's chain is not the acp router: no label turn.
    instance.use_script(Script(turns=["Hello from the script."]))
    with open_acp(instance, subcommand="acpx") as acp:
        turn = acp.prompt("say hello")
        assert turn.text == "Hello from the script.", turn.describe()
    carried = _carries_marker(instance)
    assert carried and not any(carried), carried


# snapshot=False: the screen at the reply races beam's status line ("working" or the
# prompt's title) and its session id is now and then all digits, so two clean runs differ.
BEAM_STARTS_WITHOUT_AGENTS_MD = Case(
    name="beam starts its session without the project agents md",
    files={"AGENTS.md": AGENTS_MD},
    script=Script(turns=[route(), "Hello from the script."]),
    steps=[
        screen("type / for commands", args=["beam", "--plain"], timeout=30),
        keys("say hello"),
        screen("Hello from the script.", timeout=60),
        keys("/quit"),
        screen(exits=0, timeout=30),
    ],
    probes=[_no_session_carries_the_marker()],
    snapshot=False,
)
