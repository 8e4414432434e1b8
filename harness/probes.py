"""Durable state, read back the way an operator reads it: through contenox's own commands.

Every probe runs one contenox command in an :class:`~harness.instance.Instance`
and returns what it printed as typed, frozen values, so a case says what it
means instead of grepping a table::

    [landed] = missions(instance)
    assert landed.status == "landed"
    assert mission(instance, landed.id).reports[0].summary == "read the whole tree"

A probe never opens contenox's database or its files under ``~/.contenox``:
if a fact is visible only there, that is a finding about the product. A probe
whose command fails raises :class:`ProbeError` with the command, its exit code
and both streams. Each ``parse_*`` function is the probe's pure half, tested
against recorded output in ``tests/fixtures`` (re-record with
``python scripts/record_fixtures.py``).
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .command import Result
from .instance import Instance
from .process import Process
from .recorder import recorded_probe
from .table import TableError, read_fields, read_table

__all__ = [
    "Ask",
    "Backend",
    "BackendCheck",
    "BackendDetail",
    "BackendDiagnostic",
    "CapturedUnit",
    "Doctor",
    "DoctorIssue",
    "DoctorReport",
    "Message",
    "Mission",
    "MissionDetail",
    "MissionReports",
    "Model",
    "ProbeError",
    "Report",
    "ReportSummary",
    "RosterEntry",
    "Session",
    "SessionRecord",
    "Step",
    "Transcript",
    "answer",
    "approvals",
    "approve",
    "await_approval",
    "backend",
    "backends",
    "captured_requests",
    "captured_steps",
    "captured_units",
    "deny",
    "doctor",
    "doctor_json",
    "mission",
    "mission_reports",
    "missions",
    "models",
    "parse_approvals",
    "parse_backend",
    "parse_backends",
    "parse_captured_requests",
    "parse_captured_steps",
    "parse_captured_units",
    "parse_doctor",
    "parse_doctor_json",
    "parse_mission",
    "parse_mission_reports",
    "parse_missions",
    "parse_models",
    "parse_session_records",
    "parse_sessions",
    "parse_transcript",
    "session_records",
    "sessions",
    "system_prompts",
    "system_prompts_of",
    "the_captured_run",
    "transcript",
]


class ProbeError(AssertionError):
    """A probe's command failed, or printed something the probe cannot read.

    An ``AssertionError`` so pytest reports it as the case failing, with the
    command and both streams in the message.
    """


def _probe(instance: Instance, *args: str) -> Result:
    """Run ``contenox <args>``; raise with the whole story unless it exits 0."""
    result = instance.contenox(*args)
    if result.exit_code != 0:
        raise ProbeError(
            f"probe `contenox {' '.join(args)}` failed, so the state it reads is unknown.\n"
            "Fix the instance setup (init, backend, defaults) or the arguments; "
            "the command said:\n" + result.describe(logs=False)
        )
    return result


def _source(*args: str) -> str:
    return "contenox " + " ".join(args)


def _int(value: str, what: str, source: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise TableError(f"{source}: {what} should be a whole number, got {value!r}") from None


# --------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class Backend:
    """One row of ``contenox backend list``."""

    name: str
    type: str
    url: str


@dataclass(frozen=True)
class BackendDetail:
    """``contenox backend show <name>`` (it prints JSON)."""

    id: str
    name: str
    type: str
    base_url: str
    created_at: str
    updated_at: str
    raw: Mapping[str, Any] = field(compare=False, repr=False)


_NO_BACKENDS = ("No backends registered.",)


def parse_backends(text: str, source: str = "contenox backend list") -> list[Backend]:
    rows = read_table(text, ["NAME", "TYPE", "URL"], empty=_NO_BACKENDS, source=source)
    return [Backend(r["NAME"], r["TYPE"], r["URL"]) for r in rows]


def backends(instance: Instance) -> list[Backend]:
    """``contenox backend list``: every registered backend, ``[]`` when none.

    >>> [b.name for b in backends(instance)]
    ['scripted']
    """
    return parse_backends(_probe(instance, "backend", "list").stdout)


def _json(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise ProbeError(
            f"{source} did not print JSON ({err}); whole output:\n{text or '(empty)'}"
        ) from None


def parse_backend(text: str, source: str = "contenox backend show") -> BackendDetail:
    data = _json(text, source)
    try:
        return BackendDetail(
            id=data["id"],
            name=data["name"],
            type=data["type"],
            base_url=data.get("baseUrl", ""),
            created_at=data.get("createdAt", ""),
            updated_at=data.get("updatedAt", ""),
            raw=data,
        )
    except (KeyError, TypeError) as err:
        raise ProbeError(f"{source}: no {err} in the backend record:\n{text}") from None


def backend(instance: Instance, name: str) -> BackendDetail:
    """``contenox backend show <name>``; fails (with the output) when there is none.

    >>> backend(instance, "scripted").type
    'scripted-test'
    """
    args = ("backend", "show", name)
    return parse_backend(_probe(instance, *args).stdout, _source(*args))


# --------------------------------------------------------------------------- missions


@dataclass(frozen=True)
class Mission:
    """One row of ``contenox mission list`` (newest first)."""

    id: str
    agent: str
    envelope: str
    status: str
    age: str


@dataclass(frozen=True)
class ReportSummary:
    """A report line under ``mission show``: ``[kind] summary``."""

    kind: str
    summary: str


@dataclass(frozen=True)
class MissionDetail:
    """``contenox mission show <id>``: the record's labelled fields and report summaries.

    ``status`` is the bare status (``landed``, ``derailed``…); whatever contenox
    prints after it (``derailed — unit turn failed: …``) is ``status_reason``.
    """

    id: str
    intent: str
    agent: str
    envelope: str
    status: str
    status_reason: str
    session: str
    instance: str
    heartbeat: str
    created: str
    updated: str
    reports: tuple[ReportSummary, ...]


@dataclass(frozen=True)
class Report:
    """One report of ``contenox mission reports <id>``, with every labelled line."""

    kind: str
    at: str
    summary: str
    fields: Mapping[str, str]


@dataclass(frozen=True)
class MissionReports:
    """``contenox mission reports <id>``: the mission line and every report in full."""

    id: str
    status: str
    intent: str
    reports: tuple[Report, ...]


_NO_MISSIONS = ("No missions recorded.",)


def parse_missions(text: str, source: str = "contenox mission list") -> list[Mission]:
    rows = read_table(
        text, ["ID", "AGENT", "ENVELOPE", "STATUS", "AGE"], empty=_NO_MISSIONS, source=source
    )
    return [Mission(r["ID"], r["AGENT"], r["ENVELOPE"], r["STATUS"], r["AGE"]) for r in rows]


def missions(instance: Instance, *, limit: int | None = None) -> list[Mission]:
    """``contenox mission list``: recorded missions, newest first; ``[]`` when none.

    >>> missions(instance)[0].status
    'landed'
    """
    args = ("mission", "list") + (("--limit", str(limit)) if limit is not None else ())
    return parse_missions(_probe(instance, *args).stdout, _source(*args))


_MISSION_LABELS = (
    "Mission",
    "Intent",
    "Agent",
    "Envelope",
    "Status",
    "Session",
    "Instance",
    "Heartbeat",
    "Created",
    "Updated",
)
_REPORT_LINE = re.compile(r"^\s+\[([^\]]+)\]\s?(.*)$")


def parse_mission(text: str, source: str = "contenox mission show") -> MissionDetail:
    values = read_fields(
        text, _MISSION_LABELS, required=("Mission", "Status", "Agent", "Envelope"), source=source
    )
    status, _, reason = values["Status"].partition(" — ")
    reports: list[ReportSummary] = []
    in_reports = False
    for line in text.splitlines():
        if line.startswith("Reports"):
            in_reports = True
            continue
        match = _REPORT_LINE.match(line) if in_reports else None
        if match:
            reports.append(ReportSummary(match.group(1), match.group(2).strip()))
    return MissionDetail(
        id=values["Mission"],
        intent=values.get("Intent", ""),
        agent=values["Agent"],
        envelope=values["Envelope"],
        status=status.strip(),
        status_reason=reason.strip(),
        session=values.get("Session", ""),
        instance=values.get("Instance", ""),
        heartbeat=values.get("Heartbeat", ""),
        created=values.get("Created", ""),
        updated=values.get("Updated", ""),
        reports=tuple(reports),
    )


def mission(instance: Instance, mission_id: str) -> MissionDetail:
    """``contenox mission show <id>``: the record, its status and its report summaries.

    >>> mission(instance, missions(instance)[0].id).reports[0].kind
    'result'
    """
    args = ("mission", "show", mission_id)
    return parse_mission(_probe(instance, *args).stdout, _source(*args))


_MISSION_HEAD = re.compile(r"^Mission (\S+) \(([^)]*)\): ?(.*)$")
_REPORT_HEAD = re.compile(r"^\[([^\]]+)\]\s*(.*)$")
_LABELLED = re.compile(r"^([A-Z][\w -]*?):\s?(.*)$")


def parse_mission_reports(text: str, source: str = "contenox mission reports") -> MissionReports:
    lines = text.splitlines()
    head = _MISSION_HEAD.match(lines[0]) if lines else None
    if head is None:
        raise TableError(
            f"{source}: expected a first line 'Mission <id> (<status>): <intent>'; whole output:\n"
            f"{text or '(empty)'}"
        )
    reports: list[Report] = []
    kind = at = ""
    fields: dict[str, str] = {}

    def close() -> None:
        if kind:
            reports.append(Report(kind, at, fields.get("Summary", ""), dict(fields)))

    for line in lines[1:]:
        report = _REPORT_HEAD.match(line)
        if report:
            close()
            kind, at, fields = report.group(1), report.group(2).strip(), {}
            continue
        labelled = _LABELLED.match(line)
        if kind and labelled:
            fields[labelled.group(1)] = labelled.group(2)
        elif kind and line.strip() and fields:
            # A value that runs over several lines continues the last field.
            last = next(reversed(fields))
            fields[last] += "\n" + line
    close()
    return MissionReports(head.group(1), head.group(2), head.group(3), tuple(reports))


def mission_reports(instance: Instance, mission_id: str) -> MissionReports:
    """``contenox mission reports <id>``: every report in full, oldest first.

    >>> mission_reports(instance, mission_id).reports[0].summary
    'read the whole tree'
    """
    args = ("mission", "reports", mission_id)
    return parse_mission_reports(_probe(instance, *args).stdout, _source(*args))


# --------------------------------------------------------------------------- approvals


@dataclass(frozen=True)
class Ask:
    """One pending ask of ``contenox approvals list``.

    ``kind`` is ``permission`` (answer with approve/deny) or ``question``
    (answer with words). ``summary`` may be empty: a permission ask has none.
    """

    id: str
    kind: str
    tool: str
    summary: str
    mission: str
    age: str
    expires_in: str


_NO_ASKS = ("No pending asks.",)
_ASK_COLUMNS = ["ID", "KIND", "TOOL", "SUMMARY", "MISSION", "AGE", "EXPIRES-IN"]


def parse_approvals(text: str, source: str = "contenox approvals list") -> list[Ask]:
    rows = read_table(text, _ASK_COLUMNS, empty=_NO_ASKS, source=source)
    return [
        Ask(r["ID"], r["KIND"], r["TOOL"], r["SUMMARY"], r["MISSION"], r["AGE"], r["EXPIRES-IN"])
        for r in rows
    ]


def approvals(instance: Instance, *, limit: int | None = None) -> list[Ask]:
    """``contenox approvals list``: the pending asks, ``[]`` when none.

    Note the command is also contenox's reconciling read (it applies expired
    asks' on_timeout verdicts), so reading it is not free of effects.

    >>> [a.tool for a in approvals(instance)]
    ['native-echo.echo']
    """
    args = ("approvals", "list") + (("--limit", str(limit)) if limit is not None else ())
    return parse_approvals(_probe(instance, *args).stdout, _source(*args))


# What a run logs once the call that raises an ask is under way: a gated call's
# durable ask, or a mission question's tool call.
_ASK_UNDER_WAY = re.compile(
    r'subject="ask raised"|operation=tool_call subject=mission\.mission_ask_attention'
)


def await_approval(
    instance: Instance,
    timeout: float = 30.0,
    *,
    tool: str | None = None,
    kind: str | None = None,
    poll: float = 0.5,
    run: Process | None = None,
    context: Callable[[], str] | None = None,
) -> Ask:
    """Poll ``approvals list`` until an ask (of ``tool``/``kind``, if given) appears.

    Pass the waiting ``run`` (a background :class:`~harness.process.Process`):
    the inbox is then read only once the run has logged that its ask is under
    way, because a second process opening the store while ``run`` starts up
    can make that start fail with SQLITE_BUSY (seen under load). Fails after
    ``timeout`` seconds with the last listing and the run's output (or
    ``context()``), so a run that never raised its ask explains itself.

    >>> run = start_contenox(instance, "run", "--policy", "run", "echo hi")
    >>> ask = await_approval(instance, 30, tool="native-echo.echo", run=run)
    """
    deadline = time.monotonic() + timeout
    if run is not None:
        run.wait_for_output(_ASK_UNDER_WAY, stream="stderr", timeout=timeout)
        context = context or run.describe
    args = ("approvals", "list")
    while True:
        result = _probe(instance, *args)
        for ask in parse_approvals(result.stdout, _source(*args)):
            if (tool is None or ask.tool == tool) and (kind is None or ask.kind == kind):
                return ask
        if time.monotonic() >= deadline:
            wanted = ", ".join(
                f"{k}={v!r}" for k, v in (("tool", tool), ("kind", kind)) if v is not None
            )
            raise ProbeError(
                f"no pending ask{' with ' + wanted if wanted else ''} appeared within "
                f"{timeout:g}s. Is the run still waiting (did it start, did the envelope "
                "gate the call)? The last listing:\n"
                + result.describe(logs=False)
                + (f"\nMeanwhile:\n{context()}" if context is not None else "")
            )
        time.sleep(poll)


def _respond(instance: Instance, ask_id: str, *flag: str) -> Result:
    return _probe(instance, "approvals", "respond", ask_id, *flag)


def approve(instance: Instance, ask_id: str) -> Result:
    """``contenox approvals respond <id> --approve``; fails unless it exits 0.

    >>> approve(instance, ask.id).stdout
    'Verdict recorded for …'
    """
    return _respond(instance, ask_id, "--approve")


def deny(instance: Instance, ask_id: str) -> Result:
    """``contenox approvals respond <id> --deny``; fails unless it exits 0."""
    return _respond(instance, ask_id, "--deny")


def answer(instance: Instance, ask_id: str, text: str) -> Result:
    """``contenox approvals respond <id> --answer <text>``: a question's answer, in words."""
    return _respond(instance, ask_id, "--answer", text)


# --------------------------------------------------------------------------- sessions


@dataclass(frozen=True)
class Session:
    """One line of ``contenox session list`` (this workspace; ``*`` marks the active one)."""

    name: str
    messages: int
    active: bool


@dataclass(frozen=True)
class SessionRecord:
    """One row of ``contenox session list --all`` (every session in the database)."""

    workspace: str
    name: str
    identity: str
    messages: int
    id: str


@dataclass(frozen=True)
class Message:
    """One message of a session transcript."""

    at: str
    role: str
    content: str


@dataclass(frozen=True)
class Transcript:
    """``contenox session show``: the session's name, how much is shown, the messages."""

    name: str
    shown: int
    total: int
    messages: tuple[Message, ...]


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


def parse_transcript(text: str, source: str = "contenox session show") -> Transcript:
    empty = _NO_MESSAGES.match(text.strip())
    if empty:
        return Transcript(empty.group(1), 0, 0, ())
    lines = text.splitlines()
    head = _TRANSCRIPT_HEAD.match(lines[0]) if lines else None
    if head is None:
        raise TableError(
            f"{source}: expected a first line '━━━━ Session: <name> (<shown>/<total> "
            f"messages) ━━━━'; whole output:\n{text or '(empty)'}"
        )
    messages: list[Message] = []
    at = role = ""
    body: list[str] = []

    def close() -> None:
        if role:
            # The first content line is indented by two; continuation lines are not.
            if body:
                body[0] = body[0].removeprefix("  ")
            messages.append(Message(at, role, "\n".join(body).rstrip("\n").rstrip()))

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
    return Transcript(head.group(1), int(head.group(2)), int(head.group(3)), tuple(messages))


def transcript(
    instance: Instance,
    name: str | None = None,
    *,
    head: int | None = None,
    tail: int | None = None,
) -> Transcript:
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


# --------------------------------------------------------------------------- state


@dataclass(frozen=True)
class Step:
    """One row of ``contenox state show <request-id>``: a task step that ran."""

    task: str
    handler: str
    retry: int
    duration: str
    transition: str
    status: str


@dataclass(frozen=True)
class CapturedUnit:
    """One unit of ``contenox state show <request-id> --raw``.

    ``sent`` is what the model was sent on a chat turn: the output history
    without the reply it produced. ``provider_type`` is empty for steps that
    did not call a model (tool execution).
    """

    task: str
    handler: str
    transition: str
    provider_type: str
    model_name: str
    finish_reason: str
    error: str
    input_messages: tuple[Message, ...]
    output_messages: tuple[Message, ...]
    raw: Mapping[str, Any] = field(compare=False, repr=False)

    @property
    def sent(self) -> tuple[Message, ...]:
        out = self.output_messages
        if self.handler == "chat_completion" and out and out[-1].role == "assistant":
            return out[:-1]
        return out


_NO_STATE = ("(no captured state",)


def parse_captured_requests(text: str, source: str = "contenox state list") -> list[str]:
    stripped = text.strip()
    if any(stripped.startswith(s) for s in _NO_STATE):
        return []
    ids = [line.strip() for line in text.splitlines() if line.strip()]
    bad = [i for i in ids if " " in i]
    if bad:
        raise TableError(
            f"{source}: expected one request id per line, got {bad[0]!r}; whole output:\n{text}"
        )
    return ids


def captured_requests(instance: Instance) -> list[str]:
    """``contenox state list``: request ids with captured state, oldest first.

    >>> captured_requests(instance)
    ['cli-5652078821a501b8']
    """
    return parse_captured_requests(_probe(instance, "state", "list").stdout)


def the_captured_run(instance: Instance) -> str:
    """The request id of the one run captured in this instance; fails unless exactly one.

    >>> steps = captured_steps(instance, the_captured_run(instance))
    """
    ids = captured_requests(instance)
    if len(ids) != 1:
        raise ProbeError(
            f"expected exactly one captured run in `contenox state list`, found {len(ids)}: "
            f"{ids}. Name the request id explicitly when a case makes several runs."
        )
    return ids[0]


def parse_captured_steps(text: str, source: str = "contenox state show") -> list[Step]:
    rows = read_table(
        text,
        ["TASK", "HANDLER", "RETRY", "DURATION", "TRANSITION", "STATUS"],
        empty=_NO_STATE,
        source=source,
    )
    return [
        Step(
            r["TASK"],
            r["HANDLER"],
            _int(r["RETRY"], "RETRY", source),
            r["DURATION"],
            r["TRANSITION"],
            r["STATUS"],
        )
        for r in rows
    ]


def captured_steps(instance: Instance, request_id: str) -> list[Step]:
    """``contenox state show <request-id>``: the steps that ran, in order.

    >>> [s.task for s in captured_steps(instance, the_captured_run(instance))]
    ['run-agent', 'run-tools', 'run-agent', 'run-tools']
    """
    args = ("state", "show", request_id)
    return parse_captured_steps(_probe(instance, *args).stdout, _source(*args))


def _messages(side: object) -> tuple[Message, ...]:
    if not isinstance(side, Mapping):
        return ()
    return tuple(
        Message(str(m.get("timestamp", "")), str(m.get("role", "")), str(m.get("content", "")))
        for m in side.get("messages") or ()
        if isinstance(m, Mapping)
    )


def parse_captured_units(
    text: str, source: str = "contenox state show --raw"
) -> list[CapturedUnit]:
    if any(text.strip().startswith(s) for s in _NO_STATE):
        return []
    data = _json(text, source)
    if not isinstance(data, list):
        raise ProbeError(f"{source}: expected a JSON array of captured units, got:\n{text[:2000]}")
    units: list[CapturedUnit] = []
    for unit in data:
        error = unit.get("error")
        units.append(
            CapturedUnit(
                task=str(unit.get("taskID", "")),
                handler=str(unit.get("taskHandler", "")),
                transition=str(unit.get("transition", "")),
                provider_type=str(unit.get("providerType", "")),
                model_name=str(unit.get("modelName", "")),
                finish_reason=str(unit.get("finishReason", "")),
                error=str(error.get("error", "")) if isinstance(error, Mapping) else "",
                input_messages=_messages(unit.get("input")),
                output_messages=_messages(unit.get("output")),
                raw=unit,
            )
        )
    return units


def captured_units(instance: Instance, request_id: str) -> list[CapturedUnit]:
    """``contenox state show <request-id> --raw``: what each step saw and who served it.

    >>> {u.provider_type for u in captured_units(instance, rid) if u.handler == "chat_completion"}
    {'scripted-test'}
    """
    args = ("state", "show", request_id, "--raw")
    return parse_captured_units(_probe(instance, *args).stdout, _source(*args))


def system_prompts_of(units: Sequence[CapturedUnit]) -> list[str]:
    """The distinct system prompts sent to the model in ``units``, in first-seen order."""
    seen: list[str] = []
    for unit in units:
        if unit.handler != "chat_completion":
            continue
        for message in unit.sent:
            if message.role == "system" and message.content not in seen:
                seen.append(message.content)
    return seen


def system_prompts(instance: Instance, request_id: str | None = None) -> list[str]:
    """The system prompts the model was actually sent during a captured run.

    ``request_id`` defaults to :func:`the_captured_run`.

    >>> system_prompts(instance)[0][:20]
    'You are a task engin'
    """
    rid = the_captured_run(instance) if request_id is None else request_id
    return system_prompts_of(captured_units(instance, rid))


# --------------------------------------------------------------------------- doctor


@dataclass(frozen=True)
class DoctorIssue:
    """One entry under ``Setup issues`` (text) or ``issues`` (JSON)."""

    severity: str
    message: str
    fix: str
    code: str = ""


@dataclass(frozen=True)
class BackendDiagnostic:
    """One entry under ``Backend diagnostics`` in ``contenox doctor``."""

    tag: str
    name: str
    type: str
    url: str
    status: str


@dataclass(frozen=True)
class RosterEntry:
    """One line of the tool roster: ``tool — toolset — origin`` (toolset may be empty)."""

    tool: str
    toolset: str
    origin: str


@dataclass(frozen=True)
class Doctor:
    """``contenox doctor``, as a person reads it."""

    ready: bool
    verdict: str
    default_model: str
    default_provider: str
    backends_registered: int
    backends_reachable: int
    backends: tuple[BackendDiagnostic, ...]
    issues: tuple[DoctorIssue, ...]
    build: str
    roster: tuple[RosterEntry, ...]

    def tool(self, name: str) -> RosterEntry | None:
        """The roster entry for ``name``, if the roster lists it."""
        return next((entry for entry in self.roster if entry.tool == name), None)


@dataclass(frozen=True)
class BackendCheck:
    """One entry of ``backendChecks`` in ``contenox doctor --json``."""

    name: str
    type: str
    base_url: str
    status: str
    reachable: bool
    default_provider: bool
    model_count: int
    chat_models: tuple[str, ...]


@dataclass(frozen=True)
class DoctorReport:
    """``contenox doctor --json``, parsed. ``raw`` keeps every field for new keys."""

    default_model: str
    default_provider: str
    backend_count: int
    reachable_backend_count: int
    issues: tuple[DoctorIssue, ...]
    backend_checks: tuple[BackendCheck, ...]
    raw: Mapping[str, Any] = field(compare=False, repr=False)


_BULLET_ISSUE = re.compile(r"^\s+• \[(\w+)\]\s+(.*)$")
_BULLET_BACKEND = re.compile(r"^\s+• \[(\w+)\] (\S+) \(([^,]+), (.*)\)$")


def _section(lines: Sequence[str], title: str) -> list[str]:
    """The indented lines under ``title`` up to the next unindented line."""
    out: list[str] = []
    inside = False
    for line in lines:
        if inside:
            if line and not line[0].isspace():
                break
            out.append(line)
        elif line.startswith(title):
            inside = True
    return out


def parse_doctor(text: str, source: str = "contenox doctor") -> Doctor:
    values = read_fields(
        text,
        [
            "Ready",
            "Default model",
            "Default provider",
            "Backends (registered)",
            "Reachable backends",
            "Build",
        ],
        required=["Ready", "Default model", "Default provider"],
        source=source,
    )
    answer, _, verdict = values["Ready"].partition(" — ")
    lines = text.splitlines()
    issues: list[DoctorIssue] = []
    for line in _section(lines, "Setup issues:"):
        match = _BULLET_ISSUE.match(line)
        if match:
            issues.append(DoctorIssue(match.group(1), match.group(2).strip(), ""))
        elif line.strip().startswith("Try:") and issues:
            last = issues[-1]
            issues[-1] = DoctorIssue(last.severity, last.message, line.strip()[4:].strip())
    diagnostics: list[BackendDiagnostic] = []
    for line in _section(lines, "Backend diagnostics:"):
        match = _BULLET_BACKEND.match(line)
        if match:
            tag, name, kind, url = match.groups()
            diagnostics.append(BackendDiagnostic(tag, name, kind, url, status=""))
        elif line.strip().startswith("Status:") and diagnostics:
            last_backend = diagnostics[-1]
            diagnostics[-1] = BackendDiagnostic(
                last_backend.tag,
                last_backend.name,
                last_backend.type,
                last_backend.url,
                line.strip()[7:].strip(),
            )
    roster: list[RosterEntry] = []
    for line in _section(lines, "Tool roster"):
        parts = [p.strip() for p in line.strip().split(" — ")]
        if len(parts) >= 3:
            roster.append(RosterEntry(parts[0], parts[1], " — ".join(parts[2:])))
        elif len(parts) == 2:
            roster.append(RosterEntry(parts[0], "", parts[1]))
    return Doctor(
        ready=answer.strip() == "yes",
        verdict=verdict.strip(),
        default_model=values["Default model"],
        default_provider=values["Default provider"],
        backends_registered=_int(values.get("Backends (registered)", "0"), "backends", source),
        backends_reachable=_int(values.get("Reachable backends", "0"), "backends", source),
        backends=tuple(diagnostics),
        issues=tuple(issues),
        build=values.get("Build", ""),
        roster=tuple(roster),
    )


def doctor(instance: Instance, *, skip_cycle: bool = False) -> Doctor:
    """``contenox doctor``: readiness, defaults, backends, issues and the tool roster.

    >>> doctor(instance).ready
    True
    """
    args = ("doctor",) + (("--skip-cycle",) if skip_cycle else ())
    return parse_doctor(_probe(instance, *args).stdout, _source(*args))


def parse_doctor_json(text: str, source: str = "contenox doctor --json") -> DoctorReport:
    data = _json(text, source)
    if not isinstance(data, Mapping):
        raise ProbeError(f"{source}: expected a JSON object, got:\n{text[:2000]}")
    return DoctorReport(
        default_model=str(data.get("defaultModel", "")),
        default_provider=str(data.get("defaultProvider", "")),
        backend_count=int(data.get("backendCount", 0)),
        reachable_backend_count=int(data.get("reachableBackendCount", 0)),
        issues=tuple(
            DoctorIssue(
                str(i.get("severity", "")),
                str(i.get("message", "")),
                str(i.get("cliCommand", "")),
                str(i.get("code", "")),
            )
            for i in data.get("issues") or ()
        ),
        backend_checks=tuple(
            BackendCheck(
                name=str(b.get("name", "")),
                type=str(b.get("type", "")),
                base_url=str(b.get("baseUrl", "")),
                status=str(b.get("status", "")),
                reachable=bool(b.get("reachable", False)),
                default_provider=bool(b.get("defaultProvider", False)),
                model_count=int(b.get("modelCount", 0)),
                chat_models=tuple(b.get("chatModels") or ()),
            )
            for b in data.get("backendChecks") or ()
        ),
        raw=data,
    )


def doctor_json(instance: Instance, *, skip_cycle: bool = False) -> DoctorReport:
    """``contenox doctor --json``, parsed.

    >>> doctor_json(instance).backend_checks[0].reachable
    True
    """
    args = ("doctor", "--json") + (("--skip-cycle",) if skip_cycle else ())
    return parse_doctor_json(_probe(instance, *args).stdout, _source(*args))


# --------------------------------------------------------------------------- models


@dataclass(frozen=True)
class Model:
    """One row of ``contenox model list``. ``default`` is the ``*`` after the name."""

    backend: str
    name: str
    default: bool
    chat: bool
    embed: bool
    prompt: bool
    think: bool
    vision: bool
    context: int


_MODEL_COLUMNS = ["BACKEND", "MODEL", "CHAT", "EMBED", "PROMPT", "THINK", "VISION", "CTX"]


def _mark(value: str, column: str, source: str) -> bool:
    if value == "✓":
        return True
    if value in ("-", ""):
        return False
    raise TableError(f"{source}: {column} should be '✓' or '-', got {value!r}")


def parse_models(text: str, source: str = "contenox model list") -> list[Model]:
    rows = read_table(text, _MODEL_COLUMNS, empty=_NO_BACKENDS, source=source)
    out: list[Model] = []
    for r in rows:
        name = r["MODEL"]
        default = name.endswith(" *")
        out.append(
            Model(
                backend=r["BACKEND"],
                name=name.removesuffix(" *").strip(),
                default=default,
                chat=_mark(r["CHAT"], "CHAT", source),
                embed=_mark(r["EMBED"], "EMBED", source),
                prompt=_mark(r["PROMPT"], "PROMPT", source),
                think=_mark(r["THINK"], "THINK", source),
                vision=_mark(r["VISION"], "VISION", source),
                context=_int(r["CTX"], "CTX", source) if r["CTX"] else 0,
            )
        )
    return out


def models(instance: Instance) -> list[Model]:
    """``contenox model list``: every model the registered backends expose now.

    >>> [(m.name, m.default) for m in models(instance)]
    [('scripted-test', True)]
    """
    return parse_models(_probe(instance, "model", "list").stdout)


# Every probe's typed value lands in the instance's transcript, by name (its
# own commands do not: polling and parsing are the probe's business).
for _name in __all__:
    _fn = globals()[_name]
    if inspect.isfunction(_fn) and next(iter(inspect.signature(_fn).parameters), "") == "instance":
        globals()[_name] = recorded_probe(_fn)
