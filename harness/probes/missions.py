"""Missions, read back: ``mission list``, ``mission show`` and ``mission reports``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..instance import Instance
from ..table import TableError, read_fields, read_table
from ._common import _probe, _source, record_probes

__all__ = [
    "Mission",
    "MissionDetail",
    "MissionReports",
    "Report",
    "ReportSummary",
    "mission",
    "mission_reports",
    "missions",
    "parse_mission",
    "parse_mission_reports",
    "parse_missions",
]


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


record_probes(globals(), __all__)
