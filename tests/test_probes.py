"""Every probe's parser against output recorded from contenox v1.0.0.

Re-record with ``python scripts/record_fixtures.py``; these tests say which
shape each command's output had, so a new version's diff is read here first.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from harness.probes import (
    Ask,
    Backend,
    Session,
    StateStep,
    parse_approvals,
    parse_backend,
    parse_backends,
    parse_captured_requests,
    parse_captured_steps,
    parse_captured_units,
    parse_doctor,
    parse_doctor_json,
    parse_mission,
    parse_mission_reports,
    parse_missions,
    parse_models,
    parse_session_records,
    parse_sessions,
    parse_transcript,
    system_prompts_of,
)
from harness.table import TableError

FIXTURES = Path(__file__).parent / "fixtures"
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "parse"),
    [
        ("backend_list.empty.txt", parse_backends),
        ("mission_list.empty.txt", parse_missions),
        ("approvals_list.empty.txt", parse_approvals),
        ("session_list.empty.txt", parse_sessions),
        ("session_list_all.empty.txt", parse_session_records),
        ("state_list.empty.txt", parse_captured_requests),
        ("state_show.empty.txt", parse_captured_steps),
        ("state_show.empty.txt", parse_captured_units),
        ("model_list.empty.txt", parse_models),
    ],
)
def test_every_list_command_reads_its_empty_state_as_no_rows(name: str, parse: object) -> None:
    assert callable(parse)
    assert parse(fixture(name)) == []


def test_a_fixture_exists_for_every_recorded_command() -> None:
    names = {p.name for p in FIXTURES.iterdir()}
    assert len(names) >= 28, sorted(names)


# backends


def test_backend_list_reads_name_type_and_the_script_path_as_url() -> None:
    rows = parse_backends(fixture("backend_list.txt"))
    assert [b.name for b in rows] == ["embedder", "scripted"]
    scripted = rows[1]
    assert isinstance(scripted, Backend)
    assert scripted.type == "scripted-test"
    assert scripted.url.endswith("/work/dialog.json")


def test_backend_show_reads_the_json_record() -> None:
    detail = parse_backend(fixture("backend_show.json"))
    assert detail.name == "scripted"
    assert detail.type == "scripted-test"
    assert detail.base_url.endswith("/work/dialog.json")
    assert UUID.match(detail.id)
    assert detail.raw["createdAt"] == detail.created_at


# missions


def test_mission_list_reads_newest_first_with_every_status() -> None:
    rows = parse_missions(fixture("mission_list.txt"))
    assert [m.status for m in rows] == ["landed", "derailed", "stuck", "landed"]
    assert all(m.agent == "run" and m.envelope == "run" and UUID.match(m.id) for m in rows)


def test_mission_show_reads_the_fields_and_the_report_summary_with_spaces() -> None:
    detail = parse_mission(fixture("mission_show.txt"))
    assert detail.status == "landed"
    assert detail.status_reason == ""
    assert detail.intent == "report what you know"
    assert (detail.agent, detail.envelope) == ("run", "run")
    assert detail.session.startswith("contenoxruntime-")
    assert [(r.kind, r.summary) for r in detail.reports] == [("result", "read the whole tree")]


def test_mission_show_splits_the_status_from_its_reason() -> None:
    detail = parse_mission(fixture("mission_show.stuck.txt"))
    assert detail.status == "stuck"
    assert detail.status_reason == "no database to read from"
    assert detail.heartbeat == ""  # absent from this record
    assert detail.reports == ()


def test_mission_reports_reads_every_report_in_full() -> None:
    reports = parse_mission_reports(fixture("mission_reports.txt"))
    assert reports.status == "landed"
    assert reports.intent == "report what you know"
    [report] = reports.reports
    assert report.kind == "result"
    assert report.summary == "read the whole tree"
    assert re.match(r"^\d{4}-\d\d-\d\dT", report.at)


def test_mission_reports_with_none_filed_reads_as_no_reports() -> None:
    reports = parse_mission_reports(fixture("mission_reports.stuck.txt"))
    assert (reports.status, reports.reports) == ("stuck", ())


def test_mission_reports_that_is_not_the_shape_names_it() -> None:
    with pytest.raises(TableError, match="Mission <id>"):
        parse_mission_reports("nothing here\n")


# approvals


def test_approvals_list_reads_a_question_and_a_permission_ask() -> None:
    question, permission = parse_approvals(fixture("approvals_list.txt"))
    assert isinstance(question, Ask)
    assert question.kind == "question"
    assert question.tool == "mission.mission_ask_attention"
    assert question.summary == "which database should I use"
    assert UUID.match(question.mission)
    assert permission.kind == "permission"
    assert permission.tool == "native-echo.echo"
    assert permission.summary == ""
    assert permission.expires_in == "6d"


def test_approvals_list_passes_over_the_lines_it_leads_with_after_reconciling() -> None:
    # `approvals list` is also the reconciling read: having swept expired asks or
    # resumed stranded runs it says so before the table (recorded-style fixture).
    assert parse_approvals(fixture("approvals_list.swept.txt")) == parse_approvals(
        fixture("approvals_list.txt")
    )


def test_approvals_list_reads_an_empty_inbox_after_its_reconciliation_lines() -> None:
    assert parse_approvals(fixture("approvals_list.swept_empty.txt")) == []


def test_approvals_list_still_refuses_a_lead_line_it_does_not_know() -> None:
    with pytest.raises(TableError, match="no header row"):
        parse_approvals("Swept the floor.\n" + fixture("approvals_list.empty.txt"))


# sessions


def test_session_list_reads_names_with_spaces_and_the_active_marker() -> None:
    assert parse_sessions(fixture("session_list.txt")) == [
        Session("my work", 2, True),
        Session("alpha", 0, False),
    ]


def test_session_list_that_is_not_the_shape_is_refused() -> None:
    with pytest.raises(TableError, match="messages"):
        parse_sessions("* alpha\n")


def test_session_list_all_reads_every_session_with_its_id() -> None:
    records = parse_session_records(fixture("session_list_all.txt"))
    mine = next(r for r in records if r.name == "my work")
    assert (mine.identity, mine.messages) == ("local-user", 2)
    assert UUID.match(mine.id) and UUID.match(mine.workspace)
    runs = [r for r in records if r.identity == "acp-client"]
    assert runs and all(r.name.startswith("contenoxruntime-") for r in runs)


def test_session_show_reads_the_messages_in_order() -> None:
    transcript = parse_transcript(fixture("session_show.txt"))
    assert (transcript.name, transcript.shown, transcript.total) == ("my work", 2, 2)
    assert [(m.role, m.content) for m in transcript.messages] == [
        ("user", "say hello"),
        ("assistant", "Hello there, friend."),
    ]


def test_session_show_keeps_multi_line_content_whole() -> None:
    text = (
        "━━━━ Session: s (1/1 messages) ━━━━\n"
        "[2026-01-01T00:00:00Z] user:\n"
        "  first line\n"
        "second line\n"
        "\n"
        "━━━━━━━━━━━━━━━━━━━━\n"
    )
    [message] = parse_transcript(text).messages
    assert message.content == "first line\nsecond line"


def test_session_show_of_an_empty_session_is_an_empty_transcript() -> None:
    transcript = parse_transcript(fixture("session_show.empty.txt"))
    assert (transcript.name, transcript.total, transcript.messages) == ("alpha", 0, ())


# state


def test_state_list_reads_request_ids_oldest_first() -> None:
    ids = parse_captured_requests(fixture("state_list.txt"))
    assert len(ids) == 5  # worked, stuck, gated, question, chat
    assert all(re.match(r"^cli-[0-9a-f]{16}$", i) for i in ids)


def test_state_show_reads_the_steps_in_order() -> None:
    steps = parse_captured_steps(fixture("state_show.txt"))
    assert steps[:4] == [
        StateStep("run-agent", "chat_completion", 0, steps[0].duration, "tool_call", "OK"),
        StateStep("run-tools", "execute_tool_calls", 0, steps[1].duration, "tools_executed", "OK"),
        StateStep("run-agent", "chat_completion", 0, steps[2].duration, "tool_call", "OK"),
        StateStep("run-tools", "execute_tool_calls", 0, steps[3].duration, "tools_executed", "OK"),
    ]
    assert all(s.duration.endswith("s") for s in steps)


def test_state_show_raw_reads_the_provider_and_what_the_model_was_sent() -> None:
    [unit] = parse_captured_units(fixture("state_show_raw.json"))
    assert (unit.task, unit.handler, unit.provider_type) == (
        "chat-agent",
        "chat_completion",
        "scripted-test",
    )
    assert unit.model_name == "scripted-test"
    assert [m.role for m in unit.sent] == ["system", "user"]
    assert unit.output_messages[-1].content == "Hello there, friend."
    [prompt] = system_prompts_of([unit])
    assert "Someone is at a terminal waiting for an answer." in prompt


def test_state_show_raw_that_is_not_json_names_the_command() -> None:
    with pytest.raises(AssertionError, match="did not print JSON"):
        parse_captured_units("TASK  HANDLER\n", "contenox state show x --raw")


# doctor


def test_doctor_reads_ready_defaults_backends_issues_and_roster() -> None:
    report = parse_doctor(fixture("doctor.txt"))
    assert report.ready is True
    assert (report.default_model, report.default_provider) == ("scripted-test", "scripted-test")
    assert (report.backends_registered, report.backends_reachable) == (2, 2)
    assert [b.name for b in report.backends] == ["embedder", "scripted"]
    assert report.backends[1].status.startswith("reachable")
    [issue] = report.issues
    assert issue.severity == "warning"
    assert issue.fix == "contenox config set default-provider ollama"
    assert report.build == "v1.0.0"
    echo = report.tool("echo")
    assert echo is not None and echo.toolset == "native-echo"
    mission = report.tool("mission")
    assert mission is not None and mission.toolset == ""


def test_doctor_on_an_empty_instance_is_not_ready_and_says_why() -> None:
    report = parse_doctor(fixture("doctor.empty.txt"))
    assert report.ready is False
    assert "No default model is set" in report.verdict
    assert [i.severity for i in report.issues] == ["error", "error", "warning"]
    assert report.backends == ()


def test_doctor_json_reads_the_backend_checks_and_issues() -> None:
    report = parse_doctor_json(fixture("doctor_json.json"))
    assert report.default_model == "scripted-test"
    assert (report.backend_count, report.reachable_backend_count) == (2, 2)
    scripted = next(b for b in report.backend_checks if b.name == "scripted")
    assert scripted.reachable and scripted.chat_models == ("scripted-test",)
    assert report.issues[0].code == "scripted_test_provider_active"


def test_doctor_json_on_an_empty_instance_has_no_backends() -> None:
    report = parse_doctor_json(fixture("doctor_json.empty.json"))
    assert (report.backend_count, report.backend_checks) == (0, ())
    assert {i.severity for i in report.issues} >= {"error"}


# models


def test_model_list_reads_the_default_marker_and_capability_marks() -> None:
    embedder, scripted = parse_models(fixture("model_list.txt"))
    assert (scripted.name, scripted.default, scripted.context) == ("scripted-test", True, 32768)
    assert scripted.chat and scripted.vision and scripted.think
    assert (embedder.name, embedder.default, embedder.context) == ("tiny-embedder", False, 4096)
    assert not embedder.chat and embedder.embed and not embedder.think and not embedder.vision


def _unit(handler: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]]) -> Any:
    from harness.probes import CapturedUnit, SessionMessage

    def messages(pairs: list[tuple[str, str]]) -> tuple[SessionMessage, ...]:
        return tuple(SessionMessage("2026-11-30T00:00:00Z", r, c) for r, c in pairs)

    served = handler == "chat_completion"
    return CapturedUnit(
        task="run-agent" if served else "run-tools",
        handler=handler,
        transition="tool_call" if served else "tools_executed",
        provider_type="scripted-test" if served else "",
        model_name="scripted-test" if served else "",
        finish_reason="tool_calls",
        error="",
        input_messages=messages(inputs),
        output_messages=messages(outputs),
        raw={},
    )


def test_captured_units_read_in_a_transcript_as_what_each_adds() -> None:
    from harness.recorder import plain

    system = ("system", "You are a task engine.\nline two\nline three")
    user = ("user", "do the task")
    said = ("assistant", "Working.")
    echoed = ("tool", "echoed")
    units = [
        _unit("chat_completion", [user], [system, user, said]),
        _unit("execute_tool_calls", [system, user, said], [system, user, said, echoed]),
    ]
    assert plain(units) == [
        {
            "unit": "run-agent chat_completion -> tool_call",
            "served_by": "scripted-test/scripted-test (tool_calls)",
            "adds": [
                {"system": "You are a task engine. … (3 lines)"},
                {"user": "do the task"},
                {"assistant": "Working."},
            ],
        },
        {"unit": "run-tools execute_tool_calls -> tools_executed", "adds": [{"tool": "echoed"}]},
    ]


def test_the_call_after_mission_finish_is_named_not_recorded_in_a_transcript() -> None:
    # v1.0.0 serves it or cancels it as the unit is torn down: its outcome
    # differs from run to run, so a snapshot holding it could never be stable.
    from harness.probes.state import CLOSING_CALL, units_for_transcript

    finished = [("user", "go"), ("tool", "mission finished as landed")]
    served = _unit("chat_completion", finished, [*finished, ("assistant", "Done.")])
    cancelled = dataclasses.replace(served, transition="request was canceled", output_messages=())
    for unit in (served, cancelled):
        assert units_for_transcript([unit]) == [
            {"unit": "run-agent chat_completion", "closing": CLOSING_CALL}
        ]


def test_a_unit_sessions_closing_turn_and_count_are_named_not_recorded() -> None:
    # The closing turn after mission_finish is served only sometimes, so the
    # session holds it or not: a transcript must read the same either way.
    from harness.probes import SessionMessage, SessionRecord, SessionTranscript
    from harness.probes.sessions import CLOSING_CALL, UNIT_COUNT
    from harness.recorder import plain

    def said(role: str, content: str) -> SessionMessage:
        return SessionMessage("[TIME]", role, content)

    finished = (said("user", "go"), said("tool", "mission finished as landed"))
    served = SessionTranscript("contenoxruntime-x", 3, 3, (*finished, said("assistant", "Done.")))
    cancelled = SessionTranscript("contenoxruntime-x", 2, 2, finished)
    assert plain(served) == plain(cancelled)
    assert plain(served) == {
        "name": "contenoxruntime-x",
        "shown": 2,
        "total": 2,
        "messages": [
            {"at": "[TIME]", "role": "user", "content": "go"},
            {"at": "[TIME]", "role": "tool", "content": "mission finished as landed"},
            {"closing": CLOSING_CALL},
        ],
    }
    unit = SessionRecord("[WORK]", "contenoxruntime-x", "acp-client", 3, "id")
    chat = SessionRecord("[WORK]", "default", "chat", 3, "id2")
    assert plain(unit)["messages"] == UNIT_COUNT  # type: ignore[index]
    assert plain(chat)["messages"] == 3  # type: ignore[index]
    assert plain(Session("contenoxruntime-x", 4, False)) == {
        "name": "contenoxruntime-x",
        "messages": UNIT_COUNT,
        "active": False,
    }


def test_a_closing_call_no_unit_recorded_is_named_all_the_same() -> None:
    # The teardown came before the closing call was asked for: the transcript
    # reads as it does when the call was served or cancelled.
    from harness.probes.state import CLOSING_CALL, units_for_transcript

    history = [("user", "go"), ("assistant", "")]
    done = _unit("execute_tool_calls", history, [*history, ("tool", "mission finished as landed")])
    assert units_for_transcript([done])[-1] == {
        "unit": "run-agent chat_completion",
        "closing": CLOSING_CALL,
    }
