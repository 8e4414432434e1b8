"""Sessions, read back through `session list`, `session list --all` and `session show`."""

from __future__ import annotations

import re

from harness import (
    Case,
    Instance,
    Script,
    column,
    edit_dialog,
    probe,
    prompt,
    route,
    satisfies,
    step,
)
from harness.probes import Session, session_records, sessions, transcript

CHAT = Script(turns=["Hello there, friend."])


def _tail_one(instance: Instance, name: str) -> object:
    return transcript(instance, name, tail=1)


SESSION_LIST_IS_EMPTY = Case(
    name="session list is empty before a session is made",
    init=False,
    probes=[probe("sessions", sessions, expect=[])],
)

A_NEW_SESSION_IS_LISTED_AS_ACTIVE = Case(
    name="a new session is listed as active under a name with spaces",
    init=False,
    steps=[step("session", "new", "alpha"), step("session", "new", "my work")],
    probes=[
        probe(
            "sessions", sessions, expect=[Session("alpha", 0, False), Session("my work", 0, True)]
        )
    ],
)

SESSION_LIST_ALL_LISTS_EVERY_SESSION_WITH_ITS_ID = Case(
    name="session list all lists every session with its id",
    init=False,
    steps=[step("session", "new", "my work")],
    probes=[
        probe(
            "session records",
            session_records,
            expect=satisfies(
                lambda rs: (
                    [(r.name, r.identity, r.messages) for r in rs] == [("my work", "local-user", 0)]
                    and bool(rs[0].id and rs[0].workspace)
                ),
                "one record: my work, local-user, 0 messages, with an id and a workspace",
            ),
        )
    ],
)

SESSION_SHOW_PRINTS_THE_CHAT_TURN_IN_ORDER = Case(
    name="session show prints the chat turn in order",
    script=CHAT,
    steps=[step("session", "new", "my work"), step("chat", "say hello")],
    probes=[
        probe(
            "session show",
            transcript,
            "my work",
            expect=satisfies(
                lambda t: (
                    (t.name, t.shown, t.total) == ("my work", 2, 2)
                    and [(m.role, m.content) for m in t.messages]
                    == [("user", "say hello"), ("assistant", "Hello there, friend.")]
                ),
                "my work, 2 of 2 messages: the user's then the scripted reply",
            ),
        ),
        probe("sessions", sessions, expect=[Session("my work", 2, True)]),
    ],
)

SESSION_SHOW_TAIL_PRINTS_ONLY_THE_LAST_MESSAGES = Case(
    name="session show tail prints only the last messages",
    script=CHAT,
    steps=[step("session", "new", "my work"), step("chat", "say hello")],
    probes=[
        probe(
            "session show --tail 1",
            _tail_one,
            "my work",
            expect=satisfies(
                lambda t: (
                    (t.shown, t.total) == (1, 2)
                    and [m.content for m in t.messages] == ["Hello there, friend."]
                ),
                "1 of 2 messages shown: the scripted reply",
            ),
        )
    ],
)

SESSION_SHOW_OF_A_SESSION_WITH_NO_MESSAGES_IS_EMPTY = Case(
    name="session show of a session with no messages is empty",
    init=False,
    steps=[step("session", "new", "alpha")],
    probes=[
        probe(
            "session show",
            transcript,
            "alpha",
            expect=satisfies(
                lambda t: (t.name, t.messages) == ("alpha", ()), "alpha, with no messages"
            ),
        )
    ],
)


# ------------------------------------------------------------- w44: by id, fork, namespace

ANSWER = Script(turns=["the answer"])
SESSION_ID = {"id": column("ID", where={"NAME": "talk"})}

SESSION_SHOW_BY_ID_TAKES_A_NAMESPACE_HINT_AS_ADVISORY = Case(
    name="session show by id with a namespace hint shows the session whether the hint fits or not",
    script=ANSWER,
    steps=[
        step("session", "new", "talk"),
        step("chat", "the question"),
        step("session", "list", "--all", capture=SESSION_ID),
        # From outside the workspace: only the id resolves it there.
        step(
            "session",
            "show",
            "{id}",
            "--ns",
            "talk",
            cwd="tmp/elsewhere",
            stdout_has=["Session: talk", "the question", "the answer"],
        ),
        # The hint is advisory: one that names another namespace does not stop the lookup.
        step(
            "session",
            "show",
            "{id}",
            "--ns",
            "zed",
            cwd="tmp/elsewhere",
            stdout_has=["Session: talk", "the question", "the answer"],
        ),
    ],
)

SUMMARY = "SUMMARY: two questions were asked and answered"


def _roles_and_text(instance: Instance, name: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in transcript(instance, name).messages]


SESSION_FORK_SUMMARY_COMPACTS_THE_OLDER_TURNS_AND_KEEPS_THE_LAST_N = Case(
    name=(
        "session fork summary compacts the older turns into a summary and keeps the last n verbatim"
    ),
    script=ANSWER,
    steps=[
        step("session", "new", "trunk"),
        step("chat", "first question"),
        step("chat", "second question"),
        step("chat", "third question"),
        # The compaction is a model call of its own (chain-compact-default.json): a new
        # process replays the dialog from its first turn, so the summary is that turn.
        edit_dialog(Script(turns=[SUMMARY])),
        step("session", "fork", "branch", "--summary", "--keep", "2"),
        probe(
            "the fork",
            _roles_and_text,
            "branch",
            expect=satisfies(
                lambda ms: (
                    len(ms) == 3
                    and SUMMARY in ms[0][1]
                    and ms[1:] == [("user", "third question"), ("assistant", "the answer")]
                    and not any("first question" in text for _, text in ms)
                ),
                "the summary, then the last 2 messages verbatim; the older turns only summarised",
            ),
        ),
        probe(
            "the original, untouched",
            lambda i: [text for _, text in _roles_and_text(i, "trunk")],
            expect=[
                "first question",
                "the answer",
                "second question",
                "the answer",
                "third question",
                "the answer",
            ],
        ),
        probe(
            "sessions", sessions, expect=[Session("branch", 3, True), Session("trunk", 6, False)]
        ),
    ],
)

EDITOR_TURN = Script(turns=[route(), "Hi from the editor."])

SESSION_LIST_NAMESPACE_LISTS_THAT_NAMESPACE_ACROSS_THE_DATABASE = Case(
    name="session list namespace lists the sessions of that namespace across the whole database",
    script=EDITOR_TURN,
    steps=[
        step("session", "new", "mine"),
        # The editor's session is named <client>-<id>: the harness's client is contenox-e2e.
        prompt("hello", text_has=["Hi from the editor."]),
        step(
            "session",
            "list",
            "--namespace",
            "contenoxe2e",
            cwd="tmp/elsewhere",
            stdout_has=[re.compile(r"contenoxe2e-\S+\s+acp-client\s+2\s")],
            stdout_lacks=["mine"],
        ),
        step(
            "session",
            "list",
            "--namespace",
            "mine",
            cwd="tmp/elsewhere",
            stdout_has=[re.compile(r"\smine\s+local-user\s+0\s")],
            stdout_lacks=["contenoxe2e"],
        ),
    ],
)
