"""Events & triggers (beta): the rows of guide/events.md no case held yet.

contenox-docs/guide/events.md: the dispatcher following new events live after
its catch-up, firing observability being a read, `events firings --limit`'s
default and ceiling, the fields of a trigger file (`type`, `chain`,
`description`, `policy`) and what `vet` refuses, and the fields of an
ordinary event (`subject`, `hop`, `time`).

The helpers are test_events_page.py's: a landed `run --policy run` appends
report_added (nid 1) and status_changed (nid 2); the triggers fire a one-task
noop chain that needs no model; the dispatcher runs until a firing line.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

from test_events_page import (
    EVERY,
    LANDS,
    PLANS,
    QUESTION,
    REPORT,
    STATUS,
    _setup,
    chain,
    dispatch_until,
    fired,
    firing_rows,
    trigger,
)

from harness import Defect, Instance, Script, Turn, defect, probes, start_contenox, wait_until
from harness.quiet import quiet

PLANNED = "missionservice.events.plan_revised"

# A unit that asks and, once stopped, files nothing more (QUESTION's later turns would
# append a report after the stop).
ASKS_ONLY = Script(turns=[QUESTION.turns[0], Turn(text="Stopped.", optional=True)])


def _trigger_file(instance: Instance, name: str, **fields: object) -> None:
    """``.contenox/trigger-<name>.json`` listening for every mission event, ``fields``
    replacing (or, given None, dropping) the defaults of test_events_page's ``trigger``."""
    body = json.loads(trigger(name, EVERY))
    body.update(fields)
    instance.write(
        f".contenox/trigger-{name}.json",
        json.dumps({k: v for k, v in body.items() if v is not None}),
    )


# ------------------------------------------------------------------ dispatch: catch-up, then live


def test_after_its_catch_up_the_dispatcher_follows_new_events_live(instance: Instance) -> None:
    # function: a run waits on its question while a dispatcher runs, then another process appends
    instance.init()
    # The unit ends at its question (stopped): a closing text turn at most, which appends nothing.
    instance.use_script(ASKS_ONLY)
    instance.must("config", "set", "opt-in-beta", "true")
    run = start_contenox(instance, "run", "--policy", "run", "--timeout", "90s", "ask then stop")
    ask = probes.await_approval(instance, 60, kind="question", run=run)  # nid 1: attention_asked
    # Written after the run started: the run loaded no trigger, the dispatcher is the only path.
    instance.write(".contenox/chain-on-event.json", chain())
    instance.write(".contenox/trigger-every.json", trigger("every", EVERY))
    dispatch = start_contenox(instance, "events", "dispatch", "--auto")
    dispatch.wait_for_output(
        re.compile(r"^fired every .* nid=1 ", re.M), stream="stdout", timeout=120
    )
    caught_up = dispatch.stdout

    # `mission stop` runs no engine: the status change it appends (nid 2) reaches
    # only the dispatcher, which is already past its catch-up.
    instance.must("mission", "stop", ask.mission)
    dispatch.wait_for_output(
        re.compile(r"^fired every .* nid=2 ", re.M), stream="stdout", timeout=120
    )
    dispatch.interrupt()
    out = dispatch.wait(timeout=60)
    # Whether the stopped unit is still served its closing text turn varies run to run.
    run.on_end = None
    run.wait(timeout=60)

    assert "nid=2" not in caught_up, caught_up
    assert [(" nid=1 " in f, " nid=2 " in f, "status=ok" in f) for f in fired(out, "every")] == [
        (True, False, True),
        (False, True, True),
    ], out.describe()
    assert STATUS in fired(out, "every")[1], out.describe()
    assert [r[0] for r in firing_rows(instance)] == ["2", "1"]


# ------------------------------------------------------------------ firings: a read, and its page


def test_reading_the_firings_appends_no_event(instance: Instance) -> None:
    # function: needs dispatch running until its firing lines appear
    _setup(instance, every=EVERY)
    dispatch_until(instance, re.compile(r"fired every .* nid=2 "))
    before = instance.must("events", "list").stdout

    # Every way of observing firings: the listing under each filter, and doctor's line.
    for args in (
        (),
        ("--status", "ok"),
        ("--status", "error"),
        ("--trigger", "every"),
        ("--since", "1"),
        ("--limit", "1"),
    ):
        instance.must("events", "firings", *args)
    instance.must("doctor")
    instance.must("doctor", "--json")

    after = instance.must("events", "list").stdout
    assert after == before, (before, after)
    assert [line.split()[0] for line in after.splitlines()[1:]] == ["1", "2"], after


def _many_firings(instance: Instance, triggers: int) -> None:
    """One run (two events), ``triggers`` triggers on both: 2 × ``triggers`` firings.

    A firing is a (trigger, event) claim, so the triggers multiply one run's
    two events. The dispatcher's lines are counted out of the transcript.
    """
    _setup(instance)
    for n in range(triggers):
        instance.write(f".contenox/trigger-t{n:03d}.json", trigger(f"t{n:03d}", EVERY))
    want = 2 * triggers
    dispatch = start_contenox(instance, "events", "dispatch", "--auto")
    # Its thousand lines (and the triggers it lists) are counted, not recorded.
    dispatch.on_end = None
    with quiet():
        wait_until(
            lambda: len(re.findall(r"^fired ", dispatch.stdout, re.M)) >= want or None,
            timeout=300,
            what=f"{want} firing lines",
            interval=0.5,
        )
        dispatch.interrupt()
        dispatch.wait(timeout=60)
    instance.recorder.note(
        f"events dispatch --auto: {want} firings, {triggers} triggers × 2 events"
    )


def _rows(instance: Instance, *args: str) -> int:
    """How many rows `events firings` prints (its output is counted, not recorded)."""
    with quiet():
        lines = instance.must("events", "firings", *args).stdout.splitlines()
    assert lines[0].startswith("NID"), lines[:3]
    count = len([line for line in lines[1:] if line.strip()])
    instance.recorder.note(f"events firings {' '.join(args)}: {count} rows".replace("  ", " "))
    return count


def test_events_firings_lists_50_rows_unless_told_otherwise(instance: Instance) -> None:
    # function: needs 52 firings, counted
    _many_firings(instance, 26)

    assert _rows(instance) == 50
    assert _rows(instance, "--limit", "52") == 52


def test_events_firings_limit_is_capped_at_1000(instance: Instance) -> None:
    # function: needs 1002 firings, counted
    _many_firings(instance, 501)

    assert _rows(instance, "--limit", "1000") == 1000
    assert _rows(instance, "--limit", "1001") == 1000
    assert _rows(instance, "--limit", "5000") == 1000


# ------------------------------------------------------------------ trigger files


def test_vet_refuses_a_trigger_whose_shape_is_wrong_or_whose_chain_or_policy_does_not_resolve(
    instance: Instance,
) -> None:
    # function: four trigger files vetted one by one, the valid one the control
    instance.init()
    instance.must("config", "set", "opt-in-beta", "true")
    instance.write(".contenox/chain-on-event.json", chain())
    _trigger_file(instance, "valid")
    _trigger_file(instance, "shell", type="run_shell")
    _trigger_file(instance, "nochain", chain="chain-missing.json")
    _trigger_file(instance, "nopolicy", policy="hitl-policy-missing.json")

    valid = instance.contenox("vet", ".contenox/trigger-valid.json")
    shell = instance.contenox("vet", ".contenox/trigger-shell.json")
    nochain = instance.contenox("vet", ".contenox/trigger-nochain.json")
    nopolicy = instance.contenox("vet", ".contenox/trigger-nopolicy.json")

    assert valid.exit_code == 0 and "ok" in valid.stdout, valid.describe()
    for result, why in (
        (shell, 'unknown type "run_shell"'),
        (nochain, 'chain "chain-missing.json": file "chain-missing.json" not found'),
        (nopolicy, 'policy "hitl-policy-missing.json": file "hitl-policy-missing.json" not found'),
    ):
        assert result.exit_code == 1, result.describe()
        assert "FAIL" in result.stdout and why in result.stdout, result.describe()


def test_a_trigger_whose_action_is_not_fire_chain_is_skipped_and_never_fires(
    instance: Instance,
) -> None:
    # function: needs dispatch running until a sentinel firing appears
    _setup(instance, every=EVERY)
    _trigger_file(instance, "shell", type="run_shell")

    doctor = instance.must("doctor").stdout
    result = dispatch_until(instance, re.compile(r"fired every .* nid=2 "))

    why = 'unknown type "run_shell" (only "fire_chain" is supported)'
    assert re.search(rf"skipped: \S*trigger-shell\.json \(.*{re.escape(why)}", doctor), doctor
    assert re.search(r"warning: trigger file skipped: \S*trigger-shell\.json", result.stderr), (
        result.describe()
    )
    assert fired(result, "shell") == [], result.describe()
    assert firing_rows(instance, "--trigger", "shell") == []


@defect(
    Defect(
        title="the dispatcher loads and fires a trigger whose chain is a path",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init; contenox config set '
            "opt-in-beta true; a scripted-test default backend whose dialog files a report and "
            "calls mission_finish landed; `contenox run --policy run 'report home'`; a noop chain "
            "at .contenox/chain-on-event.json and at .contenox/sub/chain-on-event.json; "
            '.contenox/trigger-pathy.json: {"name": "pathy", "listen_for": {"type": '
            '"missionservice.events.*"}, "type": "fire_chain", "chain": '
            '"./sub/chain-on-event.json"}. `contenox vet .contenox/trigger-pathy.json` exits 1: '
            '\'chain "./sub/chain-on-event.json": must be a file name resolved from .contenox/ '
            "or ~/.contenox, not a path'; but `contenox doctor` lists 'pathy → "
            "missionservice.events.* → ./sub/chain-on-event.json' as loaded and `contenox events "
            "dispatch --auto` prints 'fired pathy ← missionservice.events.report_added nid=1 "
            "hop=0 status=ok request=evt-…' (and nid=2)"
        ),
        promised=(
            'guide/events.md:90 "`chain` | The chain file to run, as a file name (never a path)"'
        ),
        observed="doctor lists it loaded; dispatch fires it status=ok on both events",
        bears_on=(
            'guide/events.md:97 "`contenox vet` validates trigger files"',
            'guide/events.md:97 "a malformed trigger file is skipped with a printed warning and '
            'never fires"',
        ),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, opt-in-beta, scripted-test default; `run --policy run "
            "'report home'` rc=0 ('scripted run reporting home'); noop chains at .contenox/chain-"
            "on-event.json and .contenox/sub/chain-on-event.json; .contenox/trigger-pathy.json "
            'with "chain": "./sub/chain-on-event.json". `vet .contenox/trigger-pathy.json` rc=1: '
            '\'chain "./sub/chain-on-event.json": must be a file name resolved from .contenox/ or '
            "~/.contenox, not a path'. `doctor`: 'Event triggers (1 loaded): pathy → "
            "missionservice.events.* → ./sub/chain-on-event.json'. `events dispatch --auto`: "
            "'Loaded 1 trigger(s)', 'fired pathy ← …report_added nid=1 hop=0 status=ok "
            "request=evt-…' and nid=2 status=ok; firings shows 2 ok rows, state list shows 2 evt-"
            " runs. Note: guide/events.md:90 '`chain` | The chain file to run, as a file name "
            "(never a path)'; :97 vet validates trigger files and 'a malformed trigger file is "
            "skipped with a printed warning and never fires'. The binary's own vet calls this "
            "trigger invalid, yet the dispatcher loads and fires it with no warning. No page "
            "allows a path in `chain` (grep 'never a path', '\"chain\":')."
        ),
    )
)
def test_a_trigger_naming_its_chain_by_a_path_is_refused_and_never_fires(
    instance: Instance,
) -> None:
    # function: needs dispatch running until a sentinel firing appears
    _setup(instance, every=EVERY)
    instance.write(".contenox/sub/chain-on-event.json", chain())
    _trigger_file(instance, "pathy", chain="./sub/chain-on-event.json")

    vet = instance.contenox("vet", ".contenox/trigger-pathy.json")
    doctor = instance.must("doctor").stdout
    result = dispatch_until(instance, re.compile(r"fired every .* nid=2 "))

    assert vet.exit_code == 1 and "not a path" in vet.stdout, vet.describe()
    assert "pathy →" not in doctor.split("skipped:")[0], doctor
    assert fired(result, "pathy") == [], result.describe()


def test_a_trigger_with_no_description_and_no_policy_loads_and_fires(instance: Instance) -> None:
    # function: needs dispatch running until its firing lines appear
    _setup(instance)
    _trigger_file(instance, "bare", description=None, policy=None)
    body = json.loads((instance.work / ".contenox" / "trigger-bare.json").read_text())

    vet = instance.must("vet", ".contenox/trigger-bare.json")
    result = dispatch_until(instance, re.compile(r"fired bare .* nid=2 "))

    assert "description" not in body and "policy" not in body, body
    assert "ok" in vet.stdout, vet.describe()
    assert ["status=ok" in f for f in fired(result, "bare")] == [True, True], result.describe()


# ------------------------------------------------------------------ the event's fields


def test_an_ordinary_mission_event_names_its_mission_as_subject_at_hop_0_in_utc(
    instance: Instance,
) -> None:
    # function: the event's columns are compared with the mission's id and the clock
    instance.init()
    instance.use_script(LANDS)
    instance.must("config", "set", "opt-in-beta", "true")
    start = datetime.now(UTC).replace(microsecond=0)
    instance.must("run", "--policy", "run", "report home")
    end = datetime.now(UTC)
    [landed] = probes.missions(instance)

    listed = instance.must("events", "list").stdout
    header, *rows = listed.splitlines()
    assert header.split() == ["NID", "TYPE", "SOURCE", "SUBJECT", "HOP", "TIME", "DATA"], header
    fields = [row.split()[:6] for row in rows]

    assert [f[1] for f in fields] == [REPORT, STATUS], listed
    assert [f[3] for f in fields] == [landed.id, landed.id], (landed.id, listed)
    assert [f[4] for f in fields] == ["0", "0"], listed
    for f in fields:
        assert f[5].endswith("Z"), listed
        stamped = datetime.strptime(f[5], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        assert start - timedelta(seconds=1) <= stamped <= end, (start, stamped, end)


# ------------------------------------------------------------------ the event's data


def _fired_data(instance: Instance, result_stdout: str) -> dict[str, dict[str, Any]]:
    """Event type → the `data` of the envelope its firing's chain received as input."""
    out = {}
    for line in result_stdout.splitlines():
        match = re.search(r"← (\S+) nid=\d+ .* request=(evt-\S+)", line)
        if match:
            raw = instance.must("state", "show", match.group(2), "--raw").stdout
            out[match.group(1)] = json.loads(raw)[0]["input"]["data"]
    return out


def test_a_report_and_a_status_event_carry_the_report_the_status_and_the_routing_fields(
    instance: Instance,
) -> None:
    # function: the fired chains' inputs are read with state show --raw
    instance.recorder.redact(r'"duration": \d+', '"duration": [N]')
    _setup(instance, every=EVERY)
    result = dispatch_until(instance, re.compile(r"fired every .* nid=2 "))
    [landed] = probes.missions(instance)
    [filed] = probes.mission(instance, landed.id).reports

    data = _fired_data(instance, result.stdout)

    report, status = data[REPORT], data[STATUS]
    routing = {"missionId": landed.id, "agentName": "run", "intent": "report home"}
    for payload in (report, status):
        assert {k: payload.get(k) for k in routing} == routing, payload
    assert report["report"]["summary"] == filed.summary == "events page home", report
    assert report["report"]["kind"] == "result", report
    assert (status.get("oldStatus"), status.get("newStatus")) == ("open", "landed"), status
    # A landing gives no reason; a stop's reason: the next case.


def test_a_question_event_carries_its_ask_id_and_a_stop_s_status_event_its_reason(
    instance: Instance,
) -> None:
    # function: a run waits on its question while the dispatcher fires on it
    instance.recorder.redact(r'"duration": \d+', '"duration": [N]')
    instance.init()
    instance.use_script(ASKS_ONLY)
    instance.must("config", "set", "opt-in-beta", "true")
    run = start_contenox(instance, "run", "--policy", "run", "--timeout", "90s", "ask then stop")
    ask = probes.await_approval(instance, 60, kind="question", run=run)
    instance.write(".contenox/chain-on-event.json", chain())
    instance.write(".contenox/trigger-every.json", trigger("every", EVERY))
    asked = dispatch_until(instance, re.compile(r"fired every .* nid=1 "))
    instance.must("mission", "stop", ask.mission, "--reason", "no longer needed")
    # Whether the stopped unit is still served its closing text turn varies run to run.
    run.on_end = None
    run.wait(timeout=60)
    stopped = dispatch_until(instance, re.compile(r"fired every .* nid=2 "))

    question = _fired_data(instance, asked.stdout)["missionservice.events.attention_asked"]
    status = _fired_data(instance, stopped.stdout)[STATUS]

    assert ask.id in json.dumps(question) and question.get("missionId") == ask.mission, question
    assert "which branch to use" in json.dumps(question), question
    assert (status.get("oldStatus"), status.get("newStatus")) == ("open", "abandoned"), status
    assert status.get("reason") == "no longer needed", status


def test_a_plan_event_carries_the_revision_and_the_entry_counts(instance: Instance) -> None:
    # function: the fired chain's input is read with state show --raw
    instance.recorder.redact(r'"duration": \d+', '"duration": [N]')
    instance.init()
    instance.use_script(PLANS)
    instance.must("config", "set", "opt-in-beta", "true")
    instance.must("run", "--policy", "run", "plan then report")
    instance.write(".contenox/chain-on-event.json", chain())
    instance.write(".contenox/trigger-plans.json", trigger("plans", PLANNED))
    result = dispatch_until(instance, "fired plans")

    data = _fired_data(instance, result.stdout)[PLANNED]

    [fired] = probes.missions(instance)
    assert data.get("missionId") == fired.id, data
    assert data.get("revision") == 1, data
    # PLANS' two entries added to an empty plan, none removed; one `in_progress`, one `pending`.
    counts = {k: v for k, v in data.items() if k in ("added", "removed", "pending")}
    assert counts == {"added": 2, "removed": 0, "pending": 1}, data


# ------------------------------------------------------------------ the live path


@defect(
    Defect(
        title="a live firing whose chain fails records nothing",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init; contenox config set '
            "opt-in-beta true; .contenox/trigger-every.json listening for missionservice.events.* "
            "and naming .contenox/chain-on-event.json, a noop chain whose only branch goes to a "
            "task that is not there; a scripted-test default backend whose dialog files a report "
            "and calls mission_finish landed; `contenox mission fire run 'report home' --policy "
            "run --wait` prints 'in-process event dispatch: 1 trigger(s) fire live in this "
            "process' and lands; `contenox events list` shows report_added and "
            "status_changed; `contenox events firings --status error` prints '(no firings)' "
            "(so does `events firings`)"
        ),
        promised=(
            'guide/events.md:101 "a chain failure is recorded on the firing record and never '
            "fails or delays the event's append.\""
        ),
        observed="the mission lands and both events are appended, but no firing is recorded",
        bears_on=('guide/events.md:11 "fires matching triggers the moment it appends an event"',),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, opt-in-beta, scripted-test default (dialog: "
            "mission_report, mission_finish landed, text); .contenox/chain-on-event.json = one "
            "noop task whose default branch goes to 'missing' (vet: 'branch goto references "
            'unknown task "missing"\'); .contenox/trigger-every.json listens '
            "missionservice.events.*. `mission fire run 'report home' --policy run --wait` rc=0, "
            "'in-process event dispatch: 1 trigger(s) fire live in this process', 'finished: "
            "landed'. `events list`: nid 1 report_added, nid 2 status_changed. `events firings` "
            "and `--status error`: '(no firings)'; `state list` shows only the cli- run, no evt- "
            "run. Then `events dispatch --auto` fires both: 'status=error … chain execution "
            'failed: task "n": branch goto references unknown task "missing"\', and firings lists '
            "2 error rows. Control with goto 'end': same — no live firing row and no evt- run "
            "after mission fire; catch-up dispatch then fires both status=ok. Note: "
            "guide/events.md:101 'a chain failure is recorded on the firing record'; :11 and :101"
            " name `contenox mission fire` (when it builds an engine) as a live path; :14/:187 "
            "every firing is claimed in the durable table before it runs. No page says mission "
            "fire skips live firing. The defect is broader than its title: the control shows the "
            "live path under `mission fire` records (and evidently runs) nothing even when the "
            "chain succeeds — the catch-up dispatcher later finds both pairs unclaimed and fires "
            "them, which it could not do had the live path claimed them."
        ),
    )
)
def test_a_live_firing_s_chain_failure_is_recorded_and_the_append_still_lands(
    instance: Instance,
) -> None:
    # function: the host fires live; the firing record is read after it exits
    instance.init()
    instance.use_script(LANDS)
    instance.must("config", "set", "opt-in-beta", "true")
    instance.write(".contenox/chain-on-event.json", chain(broken=True))
    instance.write(".contenox/trigger-every.json", trigger("every", EVERY))

    fired = instance.must("mission", "fire", "run", "report home", "--policy", "run", "--wait")
    listed = instance.must("events", "list").stdout

    assert "finished: landed" in fired.stdout, fired.describe()
    assert REPORT in listed and STATUS in listed, listed
    assert [r[1:3] for r in firing_rows(instance, "--status", "error")] == [
        ["every", "error"],
        ["every", "error"],
    ]
