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

from ._common import ProbeError
from .approvals import (
    Ask,
    answer,
    approvals,
    approve,
    await_approval,
    deny,
    parse_approvals,
)
from .backends import (
    Backend,
    BackendDetail,
    backend,
    backends,
    parse_backend,
    parse_backends,
)
from .doctor import (
    BackendCheck,
    BackendDiagnostic,
    Doctor,
    DoctorIssue,
    DoctorReport,
    RosterEntry,
    doctor,
    doctor_json,
    parse_doctor,
    parse_doctor_json,
)
from .missions import (
    Mission,
    MissionDetail,
    MissionReports,
    Report,
    ReportSummary,
    mission,
    mission_reports,
    missions,
    parse_mission,
    parse_mission_reports,
    parse_missions,
)
from .models import (
    Model,
    models,
    parse_models,
)
from .sessions import (
    Session,
    SessionMessage,
    SessionRecord,
    SessionTranscript,
    parse_session_records,
    parse_sessions,
    parse_transcript,
    session_records,
    sessions,
    transcript,
)
from .state import (
    CapturedUnit,
    StateStep,
    captured_requests,
    captured_steps,
    captured_units,
    parse_captured_requests,
    parse_captured_steps,
    parse_captured_units,
    system_prompts,
    system_prompts_of,
    the_captured_run,
)

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
    "Mission",
    "MissionDetail",
    "MissionReports",
    "Model",
    "ProbeError",
    "Report",
    "ReportSummary",
    "RosterEntry",
    "Session",
    "SessionMessage",
    "SessionRecord",
    "SessionTranscript",
    "StateStep",
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
