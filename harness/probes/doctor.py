"""``contenox doctor``, as a person reads it and as ``--json``."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..instance import Instance
from ..table import read_fields
from ._common import ProbeError, _int, _json, _probe, _source, record_probes

__all__ = [
    "BackendCheck",
    "BackendDiagnostic",
    "Doctor",
    "DoctorIssue",
    "DoctorReport",
    "RosterEntry",
    "doctor",
    "doctor_json",
    "parse_doctor",
    "parse_doctor_json",
]


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


record_probes(globals(), __all__)
