"""Clock-bound promises: the hours contenox waits for, passed in its own store.

contenox-docs/guide/missions.md, "Reclaim: what happens when the host dies":
a dead host's mission is reclaimed after six hours of heartbeat silence, a
floor an open ask widens to its own window and a `never` ask holds open for
good; `mission list`, `mission show` and text `doctor` sweep, `doctor --json`
does not; a reclaim finishes the mission `abandoned` ("reclaimed: host process
gone" plus the silence), files a blocker, prints the count, and touches the
mission record only.

guide/events.md and `### contenox events`: a `running` firing claim untouched
for two hours is stale, and the next claim attempt takes it over and fires again.

Each mission case fires a real mission, SIGKILLs its host at the unit's question (the
unit dies with it), and then lets the hours pass with harness/clock.py: the
mission's heartbeat and creation time are moved back in ~/.contenox/local.db
while no contenox process runs. Everything asserted is read back through
contenox's own commands. Each reclaim has a control moved back 5 hours 59
minutes, where nothing is reclaimed.

The firing cases leave a `running` claim the way a crashed dispatcher does: the
fired chain's `local_shell` call sleeps, and the dispatcher's process group is
SIGKILLed while it does. The claim's `updated_at` is then moved back.
"""

from __future__ import annotations

import os
import re
import signal
from datetime import timedelta

from test_events_page import LANDS, firing_rows, trigger
from test_missions_uncovered import _children, _crash_the_host, _fire_at_its_question
from test_unattended_asks import STATUS, _shell_chain

from harness import Instance, Process, Script, ToolCall, Turn, probes, wait_until
from harness.clock import move_firing_back, move_mission_back
from harness.process import start_contenox

PAST_THE_FLOOR = timedelta(hours=6, minutes=1)
SHORT_OF_THE_FLOOR = timedelta(hours=5, minutes=59)
RECLAIMED = "reclaimed: host process gone"


def _dead_host(instance: Instance, ceiling: str = "1h") -> probes.Ask:
    """A mission whose host was SIGKILLed at its question; the ask waits ``ceiling``.

    The default ceiling (1h) is shorter than the floor, so the open ask explains
    no more silence than six hours and the floor is what the sweep waits out.
    """
    instance.init()
    instance.must("config", "set", "approval-ceiling", ceiling)
    fire, ask = _fire_at_its_question(instance)
    _crash_the_host(instance, fire)
    return ask


def _pass(instance: Instance, mission: str, by: timedelta) -> None:
    instance.recorder.note(move_mission_back(instance.home, mission, by))


def _status(instance: Instance, mission: str) -> str:
    """The mission's status line from `mission reports`, which does not sweep."""
    head = instance.must("mission", "reports", mission).stdout.splitlines()[0]
    found = re.match(rf"Mission {mission} \((\w+)\)", head)
    assert found, head
    return found.group(1)


# ------------------------------------------------------------------ the floor


def test_six_hours_of_heartbeat_silence_reclaim_a_dead_host_s_mission_on_mission_list(
    instance: Instance,
) -> None:
    # function: the hours pass in contenox's store (harness/clock.py)
    ask = _dead_host(instance)
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    listed = instance.must("mission", "list")

    said = listed.stdout + listed.stderr
    assert "1 reclaimed as abandoned" in said, listed.describe()
    assert [(m.id, m.status) for m in probes.missions(instance)] == [(ask.mission, "abandoned")]
    shown = instance.must("mission", "show", ask.mission).stdout
    status = next(line for line in shown.splitlines() if line.startswith("Status:"))
    assert f"abandoned — {RECLAIMED}, no heartbeat for 6h1m" in status, shown
    # A reclaim is never silent: a blocker report explains it.
    reports = probes.mission(instance, ask.mission).reports
    assert [r.kind for r in reports] == ["blocker"], reports
    assert "host process is gone" in reports[0].summary, reports


def test_five_hours_59_minutes_of_silence_reclaim_nothing(instance: Instance) -> None:
    # function: the control — moved back short of the floor
    ask = _dead_host(instance)
    _pass(instance, ask.mission, SHORT_OF_THE_FLOOR)

    listed = instance.must("mission", "list")
    shown = instance.must("mission", "show", ask.mission).stdout
    doctor = instance.must("doctor").stdout

    assert "reclaim" not in (listed.stdout + listed.stderr).lower(), listed.describe()
    assert "reclaim" not in doctor.lower(), doctor
    assert "Status:    open" in shown and "No reports filed yet." in shown, shown
    assert probes.mission(instance, ask.mission).status == "open"


def test_mission_show_sweeps_and_reclaims_the_mission_it_shows(instance: Instance) -> None:
    # function: `mission show` is the first command after the hours pass
    ask = _dead_host(instance)
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    shown = instance.must("mission", "show", ask.mission)

    said = shown.stdout + shown.stderr
    assert "1 reclaimed as abandoned" in said, shown.describe()
    assert f"abandoned — {RECLAIMED}" in shown.stdout, shown.describe()


def test_text_doctor_sweeps_and_prints_how_many_it_reclaimed(instance: Instance) -> None:
    # function: text `doctor` is the first command after the hours pass
    ask = _dead_host(instance)
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    doctor = instance.must("doctor")

    said = doctor.stdout + doctor.stderr
    assert "1 reclaimed as abandoned" in said, doctor.describe()
    assert _status(instance, ask.mission) == "abandoned"


def test_doctor_json_does_not_sweep(instance: Instance) -> None:
    # function: `doctor --json` is the only command after the hours pass, then a non-sweeping read
    ask = _dead_host(instance)
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    doctor = instance.must("doctor", "--json")

    assert "reclaim" not in (doctor.stdout + doctor.stderr).lower(), doctor.describe()
    assert _status(instance, ask.mission) == "open"
    # The control: the next sweeping command collects it.
    listed = instance.must("mission", "list")
    assert "1 reclaimed as abandoned" in listed.stdout + listed.stderr, listed.describe()


# ------------------------------------------------------------------ what a reclaim leaves


def test_a_reclaim_collects_the_mission_record_only_its_ask_and_checkpoint_stay(
    instance: Instance,
) -> None:
    # function: the ask is read back and answered after the reclaim
    ask = _dead_host(instance, ceiling="1h")
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    instance.must("mission", "list")

    assert probes.mission(instance, ask.mission).status == "abandoned"
    [still] = probes.approvals(instance)
    assert still.id == ask.id, still
    # The run it checkpointed is still there: answering finds it, and (the mission
    # being finished) declines to resume it rather than finding nothing.
    answered = instance.contenox("approvals", "respond", ask.id, "--answer", "main")
    assert "the mission behind this checkpoint already finished" in answered.stderr, (
        answered.describe()
    )


# ------------------------------------------------------------------ asks widen the floor


def test_an_open_ask_with_a_longer_window_widens_the_floor_to_that_window(
    instance: Instance,
) -> None:
    # function: the ask waits 24h; the hours pass twice, to 6h1m and then to 24h1m
    ask = _dead_host(instance, ceiling="24h")
    _pass(instance, ask.mission, PAST_THE_FLOOR)

    first = instance.must("mission", "list")

    assert "reclaim" not in (first.stdout + first.stderr).lower(), first.describe()
    assert probes.mission(instance, ask.mission).status == "open"

    _pass(instance, ask.mission, timedelta(hours=18))  # 24 hours 1 minute of silence in all
    second = instance.must("mission", "list")

    assert "1 reclaimed as abandoned" in second.stdout + second.stderr, second.describe()
    assert probes.mission(instance, ask.mission).status == "abandoned"


def test_a_mission_holding_a_never_ask_is_never_reclaimed(instance: Instance) -> None:
    # function: the ask has no deadline; thirty days pass
    ask = _dead_host(instance, ceiling="never")
    _pass(instance, ask.mission, timedelta(days=30))

    listed = instance.must("mission", "list")
    doctor = instance.must("doctor").stdout

    assert "reclaim" not in (listed.stdout + listed.stderr).lower(), listed.describe()
    assert "reclaim" not in doctor.lower(), doctor
    assert probes.mission(instance, ask.mission).status == "open"


# ------------------------------------------------------------------ a stale firing claim

SLEEPS = Script(
    model="firing",
    turns=[
        Turn(
            text="Waiting.",
            tool_calls=[ToolCall("local_shell", {"command": "sleep", "args": ["300"]})],
        ),
        "Slept.",
    ],
)
TOUCHES = Script(
    model="firing",
    turns=[
        Turn(
            text="Touching.",
            tool_calls=[ToolCall("local_shell", {"command": "touch", "args": ["fired.txt"]})],
        ),
        "Touched.",
    ],
)


def _descendants(pid: int) -> list[str]:
    """The command lines of every live descendant of ``pid``."""
    return list(_descendant_pids(pid).values())


def _descendant_pids(pid: int) -> dict[int, str]:
    """Every live descendant of ``pid``, with its command line."""
    found: dict[int, str] = {}
    for child, argv in _children(pid).items():
        found[child] = argv
        found.update(_descendant_pids(child))
    return found


def _kill_survivors(pids: dict[int, str]) -> str | None:
    """SIGKILL what a crash left running outside the killed group; say what it was."""
    killed = []
    for pid, argv in pids.items():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue
        killed.append(argv)
    return f"killed what the crashed dispatcher left running: {killed}" if killed else None


def _a_crashed_dispatcher_s_claim(instance: Instance) -> str:
    """A landed run (status_changed is nid 2), then a dispatcher SIGKILLed mid-firing.

    Returns the claim's request id. The firing's dialog is then rewritten (the
    scripted backend reloads a changed file at turn 1), so a second firing touches
    ``fired.txt`` and ends.
    """
    instance.init()
    instance.use_script(LANDS)
    instance.use_script(SLEEPS, name="firing", filename="firing.json", make_default=False)
    instance.must("config", "set", "opt-in-beta", "true")
    instance.must("run", "--policy", "run", "report home")
    instance.write(".contenox/chain-on-event.json", _shell_chain())
    instance.write(".contenox/trigger-on-status.json", trigger("on-status", STATUS))
    dispatch = start_contenox(instance, "events", "dispatch", "--auto")
    wait_until(
        lambda: any("sleep 300" in argv for argv in _descendants(dispatch.pid)) or None,
        timeout=90,
        what="the fired chain's local_shell call to be sleeping",
        interval=0.5,
    )
    # The fired chain's `sleep 300` runs in a process group of its own, so the
    # SIGKILL below leaves it running: the case kills it at its end (a session
    # shorter than five minutes otherwise reported it as left running).
    survivors = {
        pid: argv for pid, argv in _descendant_pids(dispatch.pid).items() if "sleep" in argv
    }
    instance.cleanups.append(lambda: _kill_survivors(survivors) and None)
    dispatch.kill()  # SIGKILL to its whole group: the dispatcher crashed mid-firing
    instance.recorder.note("the dispatcher's process group was sent SIGKILL mid-firing")
    text = instance.must("events", "firings").stdout
    [row] = [line.split() for line in text.splitlines()[1:] if line.strip()]
    assert row[:3] == ["2", "on-status", "running"], text
    TOUCHES.write(instance.work / "firing.json")
    instance.recorder.note("firing.json now scripts a local_shell `touch fired.txt`")
    return row[3]


def _dispatch_until(instance: Instance, needle: str) -> str:
    dispatch: Process = start_contenox(instance, "events", "dispatch", "--auto")
    dispatch.wait_for_output(re.compile(needle), stream="stdout", timeout=120)
    dispatch.interrupt()
    return dispatch.wait(timeout=60).stdout


def test_a_running_claim_untouched_for_two_hours_is_taken_over_and_fired_again(
    instance: Instance,
) -> None:
    # function: a dispatcher is SIGKILLed mid-firing; the claim's hours pass in the store
    stale = _a_crashed_dispatcher_s_claim(instance)
    instance.recorder.note(
        move_firing_back(instance.home, "on-status", 2, timedelta(hours=2, minutes=1))
    )

    out = _dispatch_until(instance, r"fired on-status .* nid=2 ")

    [line] = [x for x in out.splitlines() if x.startswith("fired on-status")]
    assert "status=ok" in line and stale not in line, out
    assert (instance.work / "fired.txt").exists(), "the taken-over firing did not run its chain"
    assert firing_rows(instance) == [["2", "on-status", "ok"]]


def test_a_running_claim_younger_than_two_hours_is_not_taken_over(instance: Instance) -> None:
    # function: the control — moved back 1h59m; a later event (nid 4) is the sentinel
    stale = _a_crashed_dispatcher_s_claim(instance)
    instance.must("run", "--policy", "run", "report home")  # appends nid 3 and nid 4
    instance.recorder.note(
        move_firing_back(instance.home, "on-status", 2, timedelta(hours=1, minutes=59))
    )

    # Catch-up goes in nid order: once nid 4 fired, nid 2 was passed.
    out = _dispatch_until(instance, r"fired on-status .* nid=4 ")

    assert not [x for x in out.splitlines() if "nid=2 " in x], out
    rows = firing_rows(instance)
    assert rows == [["4", "on-status", "ok"], ["2", "on-status", "running"]], rows
    text = instance.must("events", "firings", "--trigger", "on-status").stdout
    assert stale in text, text
