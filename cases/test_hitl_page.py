"""guide/hitl.md's promises no other area's file asserts: what a reconnecting editor is re-offered.

An ACP session's ask outlives the ``contenox acp`` process that raised it: the
editor goes away with the card on screen, the row stays pending, and an editor
attaching to the session again (``session/load``) is re-presented the asks the
session still has open (test_asks.py shows an open ask re-offered). These cases
show the other half of hitl.md:115: an ask answered elsewhere, or expired with
its ``on_timeout`` applied, is not re-offered. Each session also holds an ask
that is still open, raised after the closed one, so the reconnecting editor has
something it must be offered: the case waits for that one and then reads that
it was the only one.

Every ``contenox acp`` process starts the scripted dialog at turn one, so the
dialog file is rewritten before each process with the turns that process is to
be served. What a person would look at is asserted: the permission requests the
editor received, ``approvals list``, ``approvals respond``'s answer and the files
the calls wrote or did not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    open_acp,
    probe,
    probes,
    route,
    satisfies,
    step,
    wait_until,
)
from harness.acp import AcpClient

CONTENT = "written by the agent\n"


def _write(path: str) -> ToolCall:
    return ToolCall("write_file", {"path": path, "content": CONTENT})


def _dialog(instance: Instance, *turns: Turn | str) -> None:
    """What the next process's model says; the first call registers the scripted backend."""
    script = Script(turns=list(turns))
    if (instance.work / "dialog.json").exists():
        script.write(instance.work / "dialog.json")
        said = " | ".join(_said(t) for t in turns)
        instance.recorder.note(f"the dialog, rewritten for the next process: {said}")
    else:
        instance.use_script(script)


def _said(turn: Turn | str) -> str:
    """A turn for the transcript: its text, and the path of each call it makes."""
    if isinstance(turn, str):
        return turn
    calls = [
        f"{c.name} {c.arguments.get('path', '')}" if isinstance(c.arguments, Mapping) else c.name
        for c in turn.tool_calls
    ]
    return " -> ".join([turn.text or "", *calls]) if calls else turn.text or ""


def _load(client: AcpClient, instance: Instance, session: str) -> None:
    """Attach ``client`` to ``session`` as an editor reconnecting does."""
    client.call("session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []})


def _asked(client: AcpClient) -> list[str]:
    """The ask ids of every ``session/request_permission`` the editor has received."""
    client.wire.listen(0.5)
    return [
        str(m.payload["params"]["toolCall"]["toolCallId"])
        for m in client.messages
        if m.method == "session/request_permission" and m.direction == "received"
    ]


def _leave_an_ask(
    instance: Instance, path: str, *args: str, session: str | None = None
) -> tuple[str, str]:
    """An editor prompts a write into ``session`` (a new one if None) and goes away at its card.

    Returns the session's id and the ask's; the ask is left pending (asserted).
    """
    _dialog(instance, route(), Turn(text="Writing.", tool_calls=[_write(path)]), "Done.")
    editor = open_acp(instance, *args, permission="defer")
    if session is not None:
        _load(editor, instance, session)
    sid = session or editor.session_id
    assert sid is not None
    ask = editor.start_prompt(f"write {path}", session_id=sid).wait_for_permission(timeout=60)
    editor.process.interrupt()  # the editor goes away with the card on screen
    editor.process.wait(timeout=60)
    assert ask.ask_id in _open_ask_ids(instance), "the ask is not pending"
    return sid, ask.ask_id


def _open_ask_ids(instance: Instance) -> list[str]:
    return [a.id for a in probes.approvals(instance)]


def _offered_on_reconnect(instance: Instance, session: str, open_ask: str) -> list[str]:
    """Attach a new editor to ``session``; wait for ``open_ask`` to be re-offered (and
    denied there); return every ask the editor was offered, others as ``another ask``."""
    # The re-presented ask is denied; a resumed turn would be served this.
    _dialog(instance, "Left as it was.")
    with open_acp(instance, permission="deny") as editor:
        _load(editor, instance, session)
        wait_until(
            lambda: open_ask in _asked(editor),
            timeout=60,
            interval=0.1,
            what="the session's open ask to be re-offered",
        )
        wait_until(
            lambda: open_ask not in _open_ask_ids(instance),
            timeout=60,
            interval=0.5,
            what="the re-offered ask, denied, to leave the inbox",
        )
        offered = [a if a == open_ask else "another ask" for a in _asked(editor)]
    instance.recorder.probe("asks re-offered to the reconnecting editor", (), offered)
    return offered


# function: three editors in turn on one session, a terminal answering between them
def test_a_reconnecting_client_is_not_re_offered_an_ask_answered_elsewhere(
    instance: Instance,
) -> None:
    instance.init()
    session, answered = _leave_an_ask(instance, "answered.txt")
    # Answered from a terminal while no editor is attached; the checkpointed
    # turn resumed by the verdict is served this.
    _dialog(instance, "Left as it was.")
    verdict = instance.contenox("approvals", "respond", answered, "--deny", timeout=120)
    verdict.assert_success()
    assert answered not in _open_ask_ids(instance)

    _, still_open = _leave_an_ask(instance, "open.txt", session=session)

    offered = _offered_on_reconnect(instance, session, still_open)
    assert offered == [still_open], offered
    assert not (instance.work / "answered.txt").exists()
    assert not (instance.work / "open.txt").exists()


def _expiring(instance: Instance) -> None:
    """Envelope ``expiring`` (``~/.contenox/agents.toml``): a write asks, waits 2s, then denies."""
    path = instance.home / ".contenox" / "agents.toml"
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(
        before + '\n[envelopes.expiring]\ndefault_action = "allow"\n'
        'files.write = { grant = "approve", timeout = "2s", on_timeout = "deny" }\n',
        encoding="utf-8",
    )


# function: three editors in turn on one session, the inbox read between them
def test_a_reconnecting_client_is_not_re_offered_an_ask_that_expired(
    instance: Instance,
) -> None:
    instance.init()
    _expiring(instance)
    session, expired = _leave_an_ask(instance, "expired.txt", "--hitl-policy", "expiring")
    # Nobody is blocked on it: `approvals list` is the read that applies its on_timeout.
    wait_until(
        lambda: expired not in _open_ask_ids(instance),
        timeout=60,
        interval=1,
        what="the expired ask to be closed by approvals list",
    )
    assert _open_ask_ids(instance) == []
    # Its on_timeout verdict was applied: a late answer is refused.
    late = instance.contenox("approvals", "respond", expired, "--approve", timeout=120)
    late.assert_failure()
    assert "expired" in late.stderr, late.stderr

    _, still_open = _leave_an_ask(instance, "open.txt", session=session)

    offered = _offered_on_reconnect(instance, session, still_open)
    assert offered == [still_open], offered
    assert not (instance.work / "expired.txt").exists()
    assert not (instance.work / "open.txt").exists()


# --------------------------------------------------------------------------- the shipped envelopes

_SHIPPED = ("read_only", "ask_always", "auto_edit", "default", "strict", "acpx", "oracle", "serve")


def _rendered(instance: Instance, name: str) -> dict[str, Any]:
    path = instance.home / ".contenox" / ".generated" / f"hitl-policy-{name}.json"
    rendered: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return rendered


def _attention(instance: Instance) -> dict[str, Any]:
    """Each shipped render's ``attention`` block (None where the render has none)."""
    return {name: _rendered(instance, name).get("attention") for name in _SHIPPED}


# hitl.md:336-348: default and serve let an agent answer up to 3; strict, acpx
# and oracle are human only (missions.answer = "deny" omits the block, line
# 284); the three postures state no missions.answer at all.
SHIPPED_ATTENTION = Case(
    name="each shipped envelope states who may answer a unit's question",
    steps=[
        step("acp", stdin=""),
        probe(
            "attention of each shipped render",
            _attention,
            expect={
                "read_only": None,
                "ask_always": None,
                "auto_edit": None,
                "default": {"allowAgentAnswers": True, "maxAgentAnswers": 3},
                "strict": None,
                "acpx": None,
                "oracle": None,
                "serve": {"allowAgentAnswers": True, "maxAgentAnswers": 3},
            },
        ),
    ],
)


def _ask_always_words(instance: Instance) -> list[str]:
    """The command words of the ``default`` render's ``command_ask_always`` shell rule."""
    return [
        word
        for rule in _rendered(instance, "default")["rules"]
        for cond in rule.get("when") or ()
        if rule["tool"] == "local_shell" and cond["op"] == "command_ask_always"
        for word in cond["value"].split(",")
    ]


# hitl.md:318: the old `acp` preset folded into `default`, which absorbed its
# two extra shell tokens.
DEFAULT_ABSORBED_ACP = Case(
    name="the default envelope asks about the two shell tokens the old acp preset added",
    steps=[
        step("acp", stdin=""),
        probe(
            "the default render's ask-always words",
            _ask_always_words,
            expect=satisfies(lambda words: {">:", ">>"} <= set(words), "holds >: and >>"),
        ),
    ],
)

# hitl.md:318: `dev` is gone — no envelope renders it, so the name resolves to nothing.
DEV_IS_GONE = Case(
    name="the old dev preset is gone and naming it resolves to nothing",
    steps=[
        step(
            "acp",
            "--hitl-policy",
            "dev",
            stdin="",
            exit_code=1,
            notices_has=["hitl-policy-dev.json"],
        ),
    ],
)
