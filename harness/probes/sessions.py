"""Chat sessions, read back: ``session list`` (this workspace or ``--all``) and
``session show``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..instance import Instance
from ..table import TableError, read_table
from ._common import _int, _probe, _source, record_probes

__all__ = [
    "Session",
    "SessionMessage",
    "SessionRecord",
    "SessionTranscript",
    "parse_session_records",
    "parse_sessions",
    "parse_transcript",
    "session_records",
    "sessions",
    "transcript",
]


#: The tool result ``mission_finish`` files; the model call after it is the
#: closing turn v1.0.0 serves only sometimes (the unit is torn down first).
MISSION_FINISHED = "mission finished as "

#: What a transcript says instead of a closing call that races the teardown.
CLOSING_CALL = (
    "the closing call after mission_finish: served or cancelled by the teardown, "
    "run to run (not recorded)"
)

#: A mission unit's session is named for its instance (``contenoxruntime-<uuid>``).
UNIT_SESSION = "contenoxruntime-"

#: What a transcript says instead of a unit session's message count.
UNIT_COUNT = "a mission unit's: counts the closing turn only when it was served"


@dataclass(frozen=True)
class Session:
    """One line of ``contenox session list`` (this workspace; ``*`` marks the active one)."""

    name: str
    messages: int
    active: bool

    @staticmethod
    def __transcript__(session: Session) -> dict[str, object]:
        """As a transcript reads it: a unit session's racy count is named, not recorded."""
        count: object = UNIT_COUNT if session.name.startswith(UNIT_SESSION) else session.messages
        return {"name": session.name, "messages": count, "active": session.active}


@dataclass(frozen=True)
class SessionRecord:
    """One row of ``contenox session list --all`` (every session in the database)."""

    workspace: str
    name: str
    identity: str
    messages: int
    id: str

    @staticmethod
    def __transcript__(record: SessionRecord) -> dict[str, object]:
        """As a transcript reads it: a unit session's racy count is named, not recorded."""
        count: object = UNIT_COUNT if record.name.startswith(UNIT_SESSION) else record.messages
        return {
            "workspace": record.workspace,
            "name": record.name,
            "identity": record.identity,
            "messages": count,
            "id": record.id,
        }


@dataclass(frozen=True)
class SessionMessage:
    """One message of a session transcript."""

    at: str
    role: str
    content: str


@dataclass(frozen=True)
class SessionTranscript:
    """``contenox session show``: the session's name, how much is shown, the messages."""

    name: str
    shown: int
    total: int
    messages: tuple[SessionMessage, ...]

    @staticmethod
    def __transcript__(session: SessionTranscript) -> dict[str, object]:
        """As a transcript reads it, the same from run to run.

        What follows the ``mission_finish`` result (the closing turn, served
        only sometimes) is named, not recorded, and left out of the counts.
        """
        messages: list[object] = list(session.messages)
        cut = next(
            (
                i + 1
                for i, m in enumerate(session.messages)
                if m.role == "tool" and m.content.startswith(MISSION_FINISHED)
            ),
            None,
        )
        dropped = 0
        if cut is not None:
            dropped = len(messages) - cut
            messages = [*messages[:cut], {"closing": CLOSING_CALL}]
        return {
            "name": session.name,
            "shown": session.shown - dropped,
            "total": session.total - dropped,
            "messages": messages,
        }


_NO_SESSIONS = ("No sessions yet.",)
_SESSION_LINE = re.compile(r"^([* ]) (.+?)\s+\((\d+) messages?\)\s*$")


def parse_sessions(text: str, source: str = "contenox session list") -> list[Session]:
    stripped = text.strip()
    if any(stripped.startswith(s) for s in _NO_SESSIONS):
        return []
    out: list[Session] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _SESSION_LINE.match(line)
        if match is None:
            raise TableError(
                f"{source}: line {line!r} is not '[*] <name>  (<n> messages)'. If contenox "
                "changed the layout, re-record the fixtures and update the probe.\n"
                f"whole output:\n{text}"
            )
        out.append(Session(match.group(2), int(match.group(3)), match.group(1) == "*"))
    return out


def sessions(instance: Instance) -> list[Session]:
    """``contenox session list``: this workspace's sessions, ``[]`` when none.

    >>> [s.name for s in sessions(instance) if s.active]
    ['my work']
    """
    return parse_sessions(_probe(instance, "session", "list").stdout)


_NO_MATCHING = ("No matching sessions.",)


def parse_session_records(
    text: str, source: str = "contenox session list --all"
) -> list[SessionRecord]:
    rows = read_table(
        text,
        ["WORKSPACE", "NAME", "IDENTITY", "MESSAGES", "ID"],
        empty=_NO_MATCHING,
        source=source,
    )
    return [
        SessionRecord(
            r["WORKSPACE"],
            r["NAME"],
            r["IDENTITY"],
            _int(r["MESSAGES"], "MESSAGES", source),
            r["ID"],
        )
        for r in rows
    ]


def session_records(instance: Instance) -> list[SessionRecord]:
    """``contenox session list --all``: every session across the database, with its id.

    >>> {s.identity for s in session_records(instance)}
    {'local-user', 'acp-client'}
    """
    args = ("session", "list", "--all")
    return parse_session_records(_probe(instance, *args).stdout, _source(*args))


_TRANSCRIPT_HEAD = re.compile(r"^━+ Session: (.+) \((\d+)/(\d+) messages?\) ━+$")
_MESSAGE_HEAD = re.compile(r"^\[(\S+)\] (\w+):$")
_NO_MESSAGES = re.compile(r'^Session "(.*)" has no messages yet\.')


def parse_transcript(text: str, source: str = "contenox session show") -> SessionTranscript:
    empty = _NO_MESSAGES.match(text.strip())
    if empty:
        return SessionTranscript(empty.group(1), 0, 0, ())
    lines = text.splitlines()
    head = _TRANSCRIPT_HEAD.match(lines[0]) if lines else None
    if head is None:
        raise TableError(
            f"{source}: expected a first line '━━━━ Session: <name> (<shown>/<total> "
            f"messages) ━━━━'; whole output:\n{text or '(empty)'}"
        )
    messages: list[SessionMessage] = []
    at = role = ""
    body: list[str] = []

    def close() -> None:
        if role:
            # The first content line is indented by two; continuation lines are not.
            if body:
                body[0] = body[0].removeprefix("  ")
            messages.append(SessionMessage(at, role, "\n".join(body).rstrip("\n").rstrip()))

    for line in lines[1:]:
        if line.startswith("━━━━"):
            break
        match = _MESSAGE_HEAD.match(line)
        if match:
            close()
            at, role, body = match.group(1), match.group(2), []
        elif role:
            body.append(line)
    close()
    return SessionTranscript(head.group(1), int(head.group(2)), int(head.group(3)), tuple(messages))


def transcript(
    instance: Instance,
    name: str | None = None,
    *,
    head: int | None = None,
    tail: int | None = None,
) -> SessionTranscript:
    """``contenox session show [<name-or-id>] [--head N] [--tail N]``.

    With no name it is the active session. A session with no messages reads
    as an empty transcript.

    >>> [m.role for m in transcript(instance, "my work").messages]
    ['user', 'assistant']
    """
    args = ["session", "show"]
    if name is not None:
        args.append(name)
    if head is not None:
        args += ["--head", str(head)]
    if tail is not None:
        args += ["--tail", str(tail)]
    return parse_transcript(_probe(instance, *args).stdout, _source(*args))


record_probes(globals(), __all__)
