"""Sessions, read back through `session list`, `session list --all` and `session show`."""

from __future__ import annotations

from harness import Instance, Script
from harness.probes import Session, session_records, sessions, transcript

CHAT = Script(turns=["Hello there, friend."])


def test_session_list_is_empty_before_a_session_is_made(instance: Instance) -> None:
    assert sessions(instance) == []


def test_a_new_session_is_listed_as_active_under_a_name_with_spaces(instance: Instance) -> None:
    instance.must("session", "new", "alpha")
    instance.must("session", "new", "my work")

    assert sessions(instance) == [Session("alpha", 0, False), Session("my work", 0, True)]


def test_session_list_all_lists_every_session_with_its_id(instance: Instance) -> None:
    instance.must("session", "new", "my work")

    [record] = session_records(instance)

    assert (record.name, record.identity, record.messages) == ("my work", "local-user", 0)
    assert record.id and record.workspace


def test_session_show_prints_the_chat_turn_in_order(instance: Instance) -> None:
    instance.init()
    instance.use_script(CHAT)
    instance.must("session", "new", "my work")
    instance.must("chat", "say hello")

    shown = transcript(instance, "my work")

    assert (shown.name, shown.shown, shown.total) == ("my work", 2, 2)
    assert [(m.role, m.content) for m in shown.messages] == [
        ("user", "say hello"),
        ("assistant", "Hello there, friend."),
    ]
    assert sessions(instance) == [Session("my work", 2, True)]


def test_session_show_tail_prints_only_the_last_messages(instance: Instance) -> None:
    instance.init()
    instance.use_script(CHAT)
    instance.must("session", "new", "my work")
    instance.must("chat", "say hello")

    shown = transcript(instance, "my work", tail=1)

    assert (shown.shown, shown.total) == (1, 2)
    assert [m.content for m in shown.messages] == ["Hello there, friend."]


def test_session_show_of_a_session_with_no_messages_is_empty(instance: Instance) -> None:
    instance.must("session", "new", "alpha")

    shown = transcript(instance, "alpha")

    assert (shown.name, shown.messages) == ("alpha", ())
