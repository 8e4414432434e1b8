"""Sessions, read back through `session list`, `session list --all` and `session show`."""

from __future__ import annotations

from harness import Case, Instance, Script, probe, satisfies, step
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
