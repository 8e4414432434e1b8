"""Durable asks: how long one waits, how it ends, answered once, and what a torn-down run did.

Runs are fired with ``contenox run --policy <envelope>`` under an envelope
declared in ``~/.contenox/agents.toml`` (a v1.0.0 unit never loads one declared
in the workspace's ``.contenox/agents.toml``: it logs ``policy "gate"
unreadable, gating on default "hitl-policy-default.json"`` and every case would
test the default envelope; test_envelopes.py quarantines that); the gated call is an
``echo`` (``native-echo``) or a ``write_file`` (``local_fs``). What a person
sees is asserted: ``approvals list`` (its EXPIRES-IN column and what it says
it swept), ``approvals respond``'s answer, the file a call wrote or did not,
the mission record, and the tool result in ``state show --raw``.
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Process,
    Result,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    probes,
    respond,
    route,
    satisfies,
    start_contenox,
    step,
    wait,
    wait_until,
)
from harness.case import Action, Probe, Step

TASK = "do the task"
ECHO = ToolCall("echo", {"input": "ping from the unit"})
CONTENT = "written by the unit\n"


def _write(path: str) -> ToolCall:
    return ToolCall("write_file", {"path": path, "content": CONTENT})


def _mission(*calls: ToolCall, report_first: str | None = None) -> Script:
    """Optionally a progress report, one turn per call, then a result and a landing."""
    head = [Turn(tool_calls=[mission_report("progress", report_first)])] if report_first else []
    return Script(
        turns=[
            *head,
            *(Turn(text="Working.", tool_calls=[call]) for call in calls),
            Turn(tool_calls=[mission_report("result", "the unit is done")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _envelope(instance: Instance, name: str, toml_body: str) -> None:
    """Declare envelope ``name`` in ``~/.contenox/agents.toml``, appended to what init wrote."""
    path = instance.home / ".contenox" / "agents.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(f"{before}\n[envelopes.{name}]\n{toml_body}", encoding="utf-8")


def _gate_echo(instance: Instance, grant: str) -> None:
    """Envelope ``gate``: everything allowed except ``echo``, which gets ``grant``."""
    _envelope(
        instance,
        "gate",
        f'default_action = "allow"\n[envelopes.gate.tools]\n"native-echo.echo" = {grant}\n',
    )


def _start(instance: Instance, script: Script, timeout: str = "90s") -> Process:
    instance.init()
    instance.use_script(script)
    return start_contenox(instance, "run", "--policy", "gate", "--timeout", timeout, TASK)


def _torn_down(instance: Instance, script: Script) -> Path:
    """A run whose --timeout ends it while its gated call waits; return its dialog's path.

    The run must exit non-zero. The scripted backend starts a dialog at turn
    one in every process, so a case that resumes the run elsewhere rewrites
    this file with the turns the resumed run is to be served (``_continue``).
    """
    if not (instance.work / "dialog.json").exists():
        # A retry of the derail race reuses the backend and rewrites its dialog.
        instance.init()
        path = instance.use_script(script)
    else:
        path = script.write(instance.work / "dialog.json")
    result = instance.contenox("run", "--policy", "gate", "--timeout", "4s", TASK, timeout=120)
    result.assert_failure()
    return path


def _continue(path: Path, *calls: ToolCall) -> None:
    """What the resumed run's model says next: ``calls``, then a result and a landing."""
    _mission(*calls).write(path)


def _tool_results(instance: Instance) -> list[str]:
    units = probes.captured_units(instance, probes.the_captured_run(instance))
    seen: list[str] = []
    for unit in units:
        for message in (*unit.input_messages, *unit.output_messages):
            if message.role == "tool" and message.content not in seen:
                seen.append(message.content)
    return seen


def _gate(toml_body: str) -> dict[str, str]:
    """``home_files``: ``~/.contenox/agents.toml`` declaring envelope ``gate``."""
    return {"agents.toml": f"[envelopes.gate]\n{toml_body}"}


def _gated_echo(grant: str) -> dict[str, str]:
    """Envelope ``gate``: everything allowed except ``echo``, which gets ``grant``."""
    return _gate(
        f'default_action = "allow"\n[envelopes.gate.tools]\n"native-echo.echo" = {grant}\n'
    )


_GATE = ("run", "--policy", "gate")
_TORN_DOWN = step(*_GATE, "--timeout", "4s", TASK, exit_code="non-zero", timeout=120)
_NO_ASKS = probe("pending asks", probes.approvals, expect=[])


def _pending_ids(instance: Instance, ask_id: str) -> list[str]:
    """The ids of the pending asks, the captured one read as ``the ask``."""
    return ["the ask" if a.id == ask_id else a.id for a in probes.approvals(instance)]


def _still_pending(name: str = "ask") -> Probe:
    return probe("pending asks", _pending_ids, f"{{{name}}}", expect=["the ask"])


# --------------------------------------------------------------------------- how long an ask waits

# Nobody answers: the run's own wait of 2s elapses, on_timeout (deny) applies,
# the ask leaves the inbox and the run lands on its own. The control changes
# only the echo's grant, to allow: the same run echoes without an ask.
GRANT_TIMEOUT = [
    Case(
        name=name,
        script=_mission(ECHO),
        home_files=_gated_echo(grant),
        steps=[
            step(*_GATE, "--timeout", "90s", TASK, timeout=150),
            _NO_ASKS,
            probe(
                "tool results",
                _tool_results,
                # The echo's result exactly: the expiry's own denial, not a person's
                # ("User denied …") nor the envelope's ("Denied by the active policy …").
                expect=satisfies(lambda rs, first=first: rs[0] == first, what),
            ),
        ],
    )
    for name, grant, first, what in (
        (
            "a blocked run applies its grant timeout itself and carries on denied",
            '{ grant = "approve", timeout = "2s", on_timeout = "deny" }',
            "Approval timed out. The operation was automatically denied.",
            "the echo denied by the timeout",
        ),
        (
            "the same run with the echo allowed instead echoes without an ask",
            '"allow"',
            "ping from the unit",
            "the echo's own text",
        ),
    )
]


def _expires(name: str, grant: str, expires: Sequence[str], *before: Action, **case: Any) -> Case:
    """The echo's pending ask lists EXPIRES-IN one of ``expires``; it is then denied."""
    return Case(
        name=name,
        script=_mission(ECHO),
        home_files=_gated_echo(grant),
        steps=[
            *before,
            background("run", *_GATE, "--timeout", "90s", TASK),
            await_ask("ask", tool="native-echo.echo", timeout=60),
            probe(
                "pending asks",
                probes.approvals,
                expect=satisfies(
                    lambda asks: [a.expires_in in expires for a in asks] == [True],
                    f"one ask, expiring in {' or '.join(expires)}",
                ),
            ),
            respond("ask", "deny"),
            wait("run", exit_code=None, timeout=120),
        ],
        **case,
    )


GRANT_WAIT_LISTED = _expires(
    "an ask lists the wait its grant names as expires in",
    '{ grant = "approve", timeout = "30m", on_timeout = "deny" }',
    ("29m", "30m"),
)

NEVER_LISTED = _expires(
    "an ask whose grant says never lists expires in never",
    '{ grant = "approve", timeout = "never" }',
    ("never",),
)

# Seven days less the seconds already waited reads as 6d.
SEVEN_DAYS = _expires(
    "an ask whose grant names no wait gets seven days from the unset ceiling",
    '"approve"',
    ("6d", "7d"),
)

HOST_CEILING = _expires(
    "an ask whose grant names no wait gets the approval ceiling set on the host",
    '"approve"',
    ("23h", "24h"),
    step("config", "set", "approval-ceiling", "24h"),
    step("config", "get", "approval-ceiling", stdout_has=["24h"]),
)


def _expired_ask(instance: Instance) -> tuple[str, Result]:
    """A torn-down run's ask under an 8s ceiling: its id, and the listing that swept it."""
    instance.init()
    instance.must("config", "set", "approval-ceiling", "8s")
    _gate_echo(instance, '"approve"')
    _torn_down(instance, _mission(ECHO).optional_from(1))
    [ask] = probes.approvals(instance)

    def swept() -> Result | None:
        listing = instance.must("approvals", "list")
        return listing if ask.id not in listing.stdout else None

    listing = wait_until(swept, timeout=60, interval=1, what="the expired ask to be swept")
    return ask.id, listing


# function: polls approvals list until the expiry sweeps the ask
def test_approvals_list_closes_an_expired_ask_nobody_waits_on_and_says_how_many(
    instance: Instance,
) -> None:
    _, listing = _expired_ask(instance)
    assert "Swept 1 expired ask" in listing.stdout, listing.describe()


# function: polls approvals list until the expiry sweeps the ask
def test_answering_an_ask_whose_window_closed_is_refused_naming_the_verdict_applied(
    instance: Instance,
) -> None:
    ask_id, _ = _expired_ask(instance)
    late = instance.contenox("approvals", "respond", ask_id, "--approve")
    late.assert_failure()
    assert "expired" in late.stderr and "deny" in late.stderr, late.describe()


# The control of the late answer above: only the ceiling changed (unset: seven days). The
# same torn-down run's ask, answered at once, is taken: nothing says it expired and it
# leaves the inbox. Whether the answer also resumes the run is the derail race quarantined
# below, so its exit status is not this case's.
@pytest.mark.no_transcript(
    reason="the answer races the torn-down mission's derail (quarantined below): respond "
    "exits 0 or 1 with a resume failure, run to run"
)
# function: a torn-down run's ask answered while its window is open
def test_answering_the_same_ask_while_its_window_is_open_is_taken(instance: Instance) -> None:
    instance.recorder.demand_checked = False
    instance.init()
    _gate_echo(instance, '"approve"')
    path = _torn_down(instance, _mission(ECHO).optional_from(1))
    [ask] = probes.approvals(instance)
    _continue(path)

    answer = instance.contenox("approvals", "respond", ask.id, "--approve", timeout=60)

    assert "expired" not in answer.stderr, answer.describe()
    assert answer.exit_code == 0 or "not resumable" in answer.stderr, answer.describe()
    assert probes.approvals(instance) == [], answer.describe()


# --------------------------------------------------------------------------- answered once


def _live_ask(
    name: str,
    script: Script,
    files: dict[str, str],
    *steps: Action,
    before: Sequence[Action] = (),
    **kw: Any,
) -> Case:
    """``before``, then a run under ``gate`` in the background, then ``steps``."""
    return Case(
        name=name,
        script=script,
        home_files=files,
        steps=[*before, background("run", *_GATE, "--timeout", "90s", TASK), *steps],
        **kw,
    )


ANSWERED_ONCE = _live_ask(
    "an ask already answered refuses a second verdict",
    _mission(ECHO),
    _gated_echo('"approve"'),
    await_ask("ask", tool="native-echo.echo", timeout=60),
    respond("ask", "approve"),
    wait("run", timeout=120),
    respond("ask", "deny", exit_code="non-zero", stderr_has=["already answered"]),
)


_BETA = step("config", "set", "opt-in-beta", "true")

RESPOND_NEEDS_ONE_VERDICT = [
    Case(
        name=f"approvals respond refuses {what}",
        init=False,
        steps=[
            step(
                "approvals",
                "respond",
                "some-ask",
                *flags,
                exit_code=1,
                notices_has=["exactly one of --approve, --deny, or --answer"],
            )
        ],
    )
    for what, flags in [
        ("a call with no verdict", ()),
        ("both approve and deny", ("--approve", "--deny")),
    ]
]

# The control: the same call with exactly one verdict gets past the flags and goes on to
# look the ask up (there is none, so it fails on that, not on the flags).
RESPOND_WITH_ONE_VERDICT = Case(
    name="approvals respond with exactly one verdict goes on to look the ask up",
    init=False,
    steps=[
        step(
            "approvals",
            "respond",
            "some-ask",
            "--approve",
            exit_code=1,
            notices_has=['no ask "some-ask" exists'],
            notices_lacks=["exactly one of"],
        )
    ],
)

_AS_AGENT = ("approvals", "respond", "some-ask", "--answer", "yes", "--as-agent", "planner")

# The control: only the beta opt-in changed; the same call takes the flag and goes on to
# look the ask up (there is none, so it fails on that, not on the flag).
AS_AGENT_NEEDS_THE_BETA = [
    Case(
        name="without the beta opt in approvals respond has no as agent flag",
        init=False,
        steps=[step(*_AS_AGENT, exit_code=1, notices_has=["unknown flag: --as-agent"])],
    ),
    Case(
        name="with the beta opt in the same approvals respond takes the as agent flag",
        init=False,
        steps=[
            _BETA,
            step(
                *_AS_AGENT,
                exit_code=1,
                notices_has=['no ask "some-ask" exists'],
                notices_lacks=["unknown flag"],
            ),
        ],
    ),
]


PERMISSION_REFUSES_WORDS = _live_ask(
    "a permission ask refuses an answer in words",
    _mission(ECHO),
    _gated_echo('"approve"'),
    await_ask("ask", tool="native-echo.echo", timeout=60),
    respond("ask", answer="sure", exit_code="non-zero"),
    respond("ask", "deny"),
    wait("run", exit_code=None, timeout=120),
)

QUESTION = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {"summary": "which branch", "question": "which branch should I use"},
                )
            ],
        ),
        Turn(tool_calls=[mission_report("result", "used the answer")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

QUESTION_REFUSES_VERDICT = _live_ask(
    "a question refuses a permission verdict",
    QUESTION,
    _gated_echo('"approve"'),
    await_ask("ask", kind="question", timeout=60),
    respond("ask", "approve", exit_code="non-zero"),
    respond("ask", answer="main"),
    wait("run", exit_code=None, timeout=120),
)


# --------------------------------------------------------------------------- a torn-down run

# A run torn down at its ask ends there by design, so the turns after it are
# never asked for: those Cases' dialogs are optional from the turn after the ask.
_WRITE_GATE = _gate('default_action = "allow"\nfiles.write = "approve"\n')


def _report_summaries(instance: Instance, mission_id: str) -> list[str]:
    return [r.summary for r in probes.mission_reports(instance, mission_id).reports]


def _mission_count(instance: Instance) -> int:
    return len(probes.missions(instance))


TORN_DOWN_RECORD = Case(
    name="a torn down run has not run its gated call and its record survives",
    script=_mission(_write("gated.txt"), report_first="started on the gated write").optional_from(
        2
    ),
    home_files=_WRITE_GATE,
    steps=[
        _TORN_DOWN,
        workspace_file("gated.txt", expect=None),
        await_ask("ask", tool="local_fs.write_file"),
        _still_pending(),
        probe("missions", _mission_count, expect=1),
        step("mission", "list", stdout_has=["{ask_mission}"]),
        probe(
            "report summaries",
            _report_summaries,
            "{ask_mission}",
            expect=["started on the gated write"],
        ),
    ],
)


def _mission_statuses(instance: Instance) -> list[str]:
    return [m.status for m in probes.missions(instance)]


# The control: only files.write turned to allow. The same run writes gated.txt itself and
# lands with nothing waiting (its --timeout long enough to land: an unheld run needs no
# teardown), so what the case above shows absent is the grant's doing.
TORN_DOWN_RECORD_CONTROL = Case(
    name="the same run with the write allowed writes the file and lands with no ask",
    script=_mission(_write("gated.txt"), report_first="started on the gated write"),
    home_files=_gate('default_action = "allow"\nfiles.write = "allow"\n'),
    steps=[
        step(*_GATE, "--timeout", "90s", TASK, timeout=150),
        workspace_file("gated.txt", expect=CONTENT),
        _NO_ASKS,
        probe("mission statuses", _mission_statuses, expect=["landed"]),
    ],
)


_DERAILED = Defect(
    title="answering a torn-down run's ask does not resume it: the mission is already derailed",
    second_reading=(
        "2026-12-02, a second reader with only this text and the docs, in a "
        "fresh scratch home: real. Saw: 1 of 3 gate runs (plus once in A17's "
        "run-envelope setup): mission list showed 'derailed' right after the "
        "4s teardown, then respond → '… recorded, but resuming its suspended "
        "run failed: agentservice: the mission behind this checkpoint already"
        " finished; the suspended run is not resumable'; the other 2 resumed "
        "('Verdict recorded … resumed in this process') Note: Intermittent, "
        "as the report says. I used the gate envelope from the text and the "
        "dialog write_file{path,content} / mission_finish / text (no "
        "mission_report). guide/missions.md:139 promises the checkpointed run"
        " resumes exactly once."
    ),
    reproduce=(
        "in a scratch HOME, `~/.contenox/agents.toml` holding `[envelopes.gate]` "
        '`default_action = "allow"` `files.write = "approve"`; `contenox init`; a scripted-test '
        "backend as the default whose dialog calls `write_file {path: gated.txt}`, then "
        "`mission_finish landed` and a text turn; `contenox run --policy gate --timeout 4s "
        '"do the task"` (exits 1 at its ask; `mission list` already shows the mission '
        "`open` or `derailed`, and it stays so); `contenox approvals respond <id> --approve`: "
        "when it was `derailed`, exit 1 with 'verdict for approval <id> recorded, but resuming "
        "its suspended run failed: agentservice: the mission behind this checkpoint already "
        'finished; the suspended run is not resumable (mission <id> is "derailed")\' '
        "(2 of 5 single runs under load, 1 of 4 by hand; a SIGINT at the ask instead of the "
        "timeout races the same way; eight runs at once all resumed once on a CI machine; "
        "test_approvals.py quarantines the same race)"
    ),
    promised=(
        'guide/missions.md:139 "the run checkpoints beside the still-pending row on '
        "its way out, so answering it tomorrow from a different terminal resumes the "
        'suspended run exactly once"'
    ),
    observed="'… the suspended run is not resumable (mission <id> is \"derailed\")', exit 1",
)


# function: a race: up to twenty runs torn down one after another, each answer checked
@pytest.mark.no_transcript(
    reason="a race: how many runs are torn down before one derails differs run to run"
)
@defect(_DERAILED)
def test_answering_a_torn_down_run_s_ask_resumes_it_and_its_mission_lands(
    instance: Instance,
) -> None:
    # The defect is a race decided inside the torn-down run (its mission is
    # already "open" or "derailed" when the process exits, and stays so), so
    # one run proves little either way; eight at once all resumed on a CI
    # machine. Twenty runs are torn down on their own asks one after another
    # and every answer must resume its run to a landed mission; the first one
    # that does not is the failure. By hand, 2 of 5 single runs derailed.
    instance.recorder.demand_checked = False
    _envelope(instance, "gate", 'default_action = "allow"\nfiles.write = "approve"\n')
    for attempt in range(1, 21):
        (instance.work / "gated.txt").unlink(missing_ok=True)
        path = _torn_down(instance, _mission(_write("gated.txt")))
        (ask,) = probes.approvals(instance)
        _continue(path)

        answer = instance.contenox("approvals", "respond", ask.id, "--approve", timeout=60)

        assert answer.exit_code == 0, (
            f"torn-down run {attempt} of 20 did not resume:\n{answer.describe(logs=False)}"
        )
        assert probes.mission(instance, ask.mission).status == "landed", attempt
        assert (instance.work / "gated.txt").read_text() == CONTENT, attempt
        assert probes.approvals(instance) == [], attempt


# function: a race retried up to ten times until a run resumes
@pytest.mark.no_transcript(
    reason="the resume races the mission's derail (see the quarantined derail race): "
    "how many tries it takes, and what each recorded, differs run to run"
)
def test_a_resumed_run_that_meets_a_further_gated_call_suspends_again_under_a_new_ask(
    instance: Instance,
) -> None:
    # A torn-down run is sometimes derailed before it can be resumed (the race
    # quarantined above); that is not this promise, so up to ten runs are
    # tried until one resumes, and this case checks what the resumed run does.
    # Demand stays unchecked: the derail race decides how many runs are torn down,
    # each rewriting the dialog, so how many turns are served differs run to run.
    instance.recorder.demand_checked = False
    _envelope(instance, "gate", 'default_action = "allow"\nfiles.write = "approve"\n')
    for _attempt in range(10):
        (instance.work / "one.txt").unlink(missing_ok=True)
        path = _torn_down(instance, _mission(_write("one.txt"), _write("two.txt")))
        first = probes.approvals(instance)[0]
        _continue(path, _write("two.txt"))
        answered = instance.contenox("approvals", "respond", first.id, "--approve", timeout=60)
        if "is not resumable" not in answered.stderr:
            break
    answered.assert_success()

    pending = probes.approvals(instance)
    assert [a.id for a in pending] != [first.id] and len(pending) == 1, pending
    assert pending[0].tool == "local_fs.write_file", pending
    assert (instance.work / "one.txt").exists() and not (instance.work / "two.txt").exists()
    assert probes.mission(instance, pending[0].mission).status == "open"


NO_ENGINE_NO_VERDICT = Case(
    name="a terminal that cannot build an engine records no verdict on a checkpointed ask",
    script=_mission(_write("gated.txt")),
    home_files=_WRITE_GATE,
    steps=[
        _TORN_DOWN,
        await_ask("ask"),
        # No model anywhere: no default, no provider, no backend.
        step("config", "set", "default-model", ""),
        step("config", "set", "default-provider", ""),
        step("backend", "remove", "scripted"),
        respond("ask", "approve", exit_code="non-zero"),
        _still_pending(),
        workspace_file("gated.txt", expect=None),
    ],
    defect=Defect(
        title="a terminal that cannot build an engine still records the verdict and runs the call",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME; init; scripted backend as default; "
            "appended [envelopes.gate] default_action='allow', files.write='approve' to "
            "~/.contenox/agents.toml. Dialog: write_file{path:gated.txt}, mission_report, "
            "mission_finish landed, text. `run --policy gate --timeout 4s` exited 1 ('did "
            "not finish within 4s'); `approvals list` showed scripted-test-0-0-4da9 "
            "permission local_fs.write_file gated.txt. Then `config set default-model "
            '""`, `config set default-provider ""`, `backend remove scripted`; doctor: '
            "'No default model is set'. `approvals respond scripted-test-0-0-4da9 "
            "--approve` exited 1: 'hitlservice: verdict for approval … recorded, but "
            "resuming its suspended run failed: agentservice: resume … failed (checkpoint "
            "retained with failure annotation): … client resolution failed: no models found "
            "in run..."
        ),
        reproduce=(
            "in a scratch HOME, `~/.contenox/agents.toml` holding `[envelopes.gate]` "
            '`default_action = "allow"` `files.write = "approve"`; `contenox init`; a '
            "scripted-test backend `scripted` as the default whose dialog calls `write_file "
            "{path: gated.txt}`, then `mission_report`, `mission_finish landed`, a text turn; "
            '`contenox run --policy gate --timeout 4s "do the task"` exits 1 at its ask; '
            '`contenox config set default-model ""`; `contenox config set default-provider ""`; '
            "`contenox backend remove scripted`; `contenox approvals respond <id> --approve` "
            "exits 1 with 'verdict for approval <id> recorded, but resuming its suspended run "
            "failed: … client resolution failed: no models found in runtime state'; `contenox "
            "approvals list` no longer lists the ask, and gated.txt was written"
        ),
        promised=(
            'reference/contenox-cli.md:553 "a process that cannot build an engine (no '
            'default model configured) is refused before anything is recorded"'
        ),
        observed="the verdict is recorded (the ask leaves the inbox) and the gated write ran",
    ),
)


def _listed(limit: int | None) -> Callable[[Instance], int]:
    def count(instance: Instance) -> int:
        return len(probes.approvals(instance, limit=limit))

    return count


LIMIT = Case(
    name="approvals list limit caps the asks listed",
    # Two runs torn down at their asks: each process is served turn 0 only.
    script=_mission(ECHO).optional_from(1),
    home_files=_gated_echo('"approve"'),
    steps=[
        _TORN_DOWN,
        step(*_GATE, "--timeout", "4s", TASK, exit_code=None, timeout=120),
        probe("asks listed", _listed(None), expect=2),
        probe("asks listed with --limit 1", _listed(1), expect=1),
    ],
)


# --------------------------------------------------------------------------- more of an ask's life

CEILING_NEVER = _expires(
    "approval ceiling never leaves an unbounded ask without a deadline",
    '"approve"',
    ("never",),
    step("config", "set", "approval-ceiling", "never"),
)


def _mission_status(instance: Instance, mission_id: str) -> str:
    return probes.mission(instance, mission_id).status


# The run is live and waiting on its ask: a torn-down run races to mark its
# mission derailed (the quarantined resume race), and then nothing can stop it.
MISSION_STOP = Case(
    name="mission stop closes the mission's pending asks",
    # Stopped at its ask: the turns after the echo are never asked for.
    script=_mission(ECHO).optional_from(1),
    home_files=_gated_echo('"approve"'),
    steps=[
        background("run", *_GATE, "--timeout", "120s", TASK),
        await_ask("ask", tool="native-echo.echo", timeout=60),
        step("mission", "stop", "{ask_mission}", "--reason", "no longer wanted"),
        wait("run", exit_code=None, timeout=120),
        _NO_ASKS,
        probe("mission status", _mission_status, "{ask_mission}", expect="abandoned"),
    ],
)


def _unit_says(instance: Instance, ask_id: str) -> str:
    """Everything the ask's mission's unit session says, the ask's id read as ``[ASK]``."""
    [ask] = [a for a in probes.approvals(instance) if a.id == ask_id]
    session = probes.mission(instance, ask.mission).session
    [unit] = [s for s in probes.session_records(instance) if s.name == session]
    said = "\n".join(m.content for m in probes.transcript(instance, unit.id).messages)
    return said.replace(ask_id, "[ASK]")


SUSPENSION_SAID = Case(
    name="a suspended turn says so in its transcript naming the approval id",
    script=_mission(ECHO),
    home_files=_gated_echo('"approve"'),
    steps=[
        _TORN_DOWN,
        await_ask("ask"),
        probe(
            "the unit's messages",
            _unit_says,
            "{ask}",
            expect=satisfies(
                lambda said: "[ASK]" in said and "suspended" in said.lower(),
                "a suspension naming the ask",
            ),
        ),
    ],
    defect=Defect(
        title="a torn-down run's unit session records no suspension naming the approval id",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: run rc=1: 'mission … did not finish within 4s: it is torn down with "
            "this process …'; stderr log 'checkpoint pending … approval_id=scripted-test-0-0-f068 "
            "reason=process_leaving' and 'the run suspends until the approval is answered'. "
            "approvals list: scripted-test-0-0-f068 permission native-echo.echo, pending. mission "
            "show: Status open, Session contenoxruntime-51c0…, one report '[blocker] unit turn "
            'failed: agentinstance: "ef18…": agentinstance: instance not found\'. session list '
            "--all: that sessi... Note: Reproduces as written. The checkpoint is taken (the log "
            "names the approval id), but the unit's session holds no messages at all, so nothing "
            "in the transcript says it is suspended. No page exempts `run` units. Side "
            "observations: `session show <name>` as printed by mission show returns 'session … not"
            " found' even though session list --all puts it in this workspace (only the id works)."
            " The blocker ..."
        ),
        reproduce=(
            "in a scratch HOME, `~/.contenox/agents.toml` holding `[envelopes.gate]` "
            '`default_action = "allow"` and `[envelopes.gate.tools]` `"native-echo.echo" = '
            '"approve"`; `contenox init`; a scripted-test backend as the default whose dialog '
            "calls `echo {input: ping from the unit}`, then `mission_report`, `mission_finish "
            'landed`, a text turn; `contenox run --policy gate --timeout 4s "do the task"` '
            "exits 1 at its ask; `contenox mission show <mission of the ask>` names the unit's "
            "session; `contenox session show <it>` prints 'has no messages yet' — nothing names "
            "the approval id"
        ),
        promised=(
            'guide/hitl.md:111 "A turn that suspended — the process left, or its asks '
            "were detached — ends with a message in the transcript saying it is "
            'suspended rather than finished, naming the approval id."'
        ),
        observed="the unit's session has no messages at all",
    ),
)


def _question(summary: str) -> ToolCall:
    return ToolCall("mission_ask_attention", {"summary": summary, "question": summary + "?"})


def _answers(max_answers: int | None = None) -> dict[str, str]:
    bound = (
        f"[envelopes.gate.attention]\nmax_agent_answers = {max_answers}\n" if max_answers else ""
    )
    return _gate(f'default_action = "allow"\nmissions.answer = "allow"\n{bound}')


def _as_agent(**expect: Any) -> Step:
    return step(
        "approvals", "respond", "{ask}", "--answer", "use main", "--as-agent", "planner", **expect
    )


# The same live run and question, only missions.answer changed: granted, the
# agent's answer is taken; denied, it is refused and a person answers instead.
AGENT_ANSWER = [
    _live_ask(
        "an agent answer is accepted where the envelope grants agent answers",
        _mission(_question("which branch")),
        _answers(),
        await_ask("ask", kind="question", timeout=60),
        _as_agent(stdout_has=['Answered as agent "planner"']),
        wait("run", timeout=120),
        before=[_BETA],
    ),
    _live_ask(
        "an agent answer is refused where the envelope grants none",
        _mission(_question("which branch")),
        _gate('default_action = "allow"\nmissions.answer = "deny"\n'),
        await_ask("ask", kind="question", timeout=60),
        _as_agent(exit_code="non-zero", stderr_has=["allowAgentAnswers"]),
        # The question was not answered by the agent: it waits for a person.
        _still_pending(),
        respond("ask", answer="use main"),
        wait("run", timeout=120),
        before=[_BETA],
    ),
]


def _answer_as_agent(instance: Instance, ask_id: str) -> Result:
    return instance.contenox(
        "approvals", "respond", ask_id, "--answer", "use main", "--as-agent", "planner"
    )


# function: waits for the second question while the first leaves the inbox
def test_an_agent_answer_is_refused_once_the_mission_s_agent_answer_bound_is_spent(
    instance: Instance,
) -> None:
    _envelope(
        instance,
        "gate",
        _answers(max_answers=1)["agents.toml"].removeprefix("[envelopes.gate]\n"),
    )
    instance.init()
    instance.must("config", "set", "opt-in-beta", "true")
    run = _start(instance, _mission(_question("which branch"), _question("which remote")))
    first = probes.await_approval(instance, 60, kind="question", run=run)
    _answer_as_agent(instance, first.id).assert_success()

    def second_question() -> probes.Ask | None:
        return next((a for a in probes.approvals(instance) if a.id != first.id), None)

    second = wait_until(second_question, timeout=60, interval=0.5, what="the second question")
    refused = _answer_as_agent(instance, second.id)
    still_pending = [a.id for a in probes.approvals(instance)]
    probes.answer(instance, second.id, "origin")
    run.wait(timeout=120).assert_success()

    refused.assert_failure()
    assert still_pending == [second.id], refused.describe()


# The control of the bound case above: only the bound changed (two agent answers, not one);
# the same agent's answer to the second question is taken, and the run lands.
# function: waits for the second question while the first leaves the inbox
def test_an_agent_answer_is_taken_while_the_mission_s_agent_answer_bound_is_not_spent(
    instance: Instance,
) -> None:
    _envelope(
        instance,
        "gate",
        _answers(max_answers=2)["agents.toml"].removeprefix("[envelopes.gate]\n"),
    )
    instance.init()
    instance.must("config", "set", "opt-in-beta", "true")
    run = _start(instance, _mission(_question("which branch"), _question("which remote")))
    first = probes.await_approval(instance, 60, kind="question", run=run)
    _answer_as_agent(instance, first.id).assert_success()

    def second_question() -> probes.Ask | None:
        return next((a for a in probes.approvals(instance) if a.id != first.id), None)

    second = wait_until(second_question, timeout=60, interval=0.5, what="the second question")
    taken = _answer_as_agent(instance, second.id)
    run.wait(timeout=120).assert_success()

    taken.assert_success()
    assert 'Answered as agent "planner"' in taken.stdout, taken.describe()
    assert probes.approvals(instance) == []


# function: polls approvals list until the expiry sweeps the question
@pytest.mark.no_transcript(
    reason="the expiry races the mission's derail: two clean runs read status open with "
    "the blocker filed, and derailed without it"
)
def test_a_question_nobody_answers_is_recorded_as_a_blocker_when_it_expires(
    instance: Instance,
) -> None:
    instance.init()
    instance.must("config", "set", "approval-ceiling", "8s")
    _envelope(instance, "gate", 'default_action = "allow"\n')
    # Torn down at its question by design: the turns after it are never asked for.
    _torn_down(instance, _mission(_question("which branch")).optional_from(1))
    [ask] = probes.approvals(instance)
    wait_until(
        lambda: ask.id not in instance.must("approvals", "list").stdout,
        timeout=60,
        interval=1,
        what="the expired question to be swept",
    )
    kinds = [r.kind for r in probes.mission_reports(instance, ask.mission).reports]
    assert "blocker" in kinds, kinds


# function: two ACP clients in turn, the second loading the session over the wire
def test_a_reconnecting_client_is_asked_again_under_the_original_ask_id(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(
        Script(turns=[route(), Turn(text="Writing.", tool_calls=[_write("out.txt")]), "Done."])
    )
    first = open_acp(instance, permission="defer")
    session = first.session_id
    ask = first.start_prompt("write the file").wait_for_permission(timeout=60)
    first.process.interrupt()  # the editor goes away with the card on screen
    first.process.wait(timeout=60)
    assert [a.id for a in probes.approvals(instance)] == [ask.ask_id]

    with open_acp(instance, permission="deny") as second:
        second.call(
            "session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []}
        )

        def represented() -> list[str]:
            second.wire.listen(0.5)
            return [
                str(m.payload["params"]["toolCall"]["toolCallId"])
                for m in second.messages
                if m.method == "session/request_permission" and m.direction == "received"
            ]

        asked = wait_until(represented, timeout=60, interval=0.1, what="the ask re-presented")
        assert asked == [ask.ask_id], asked
        wait_until(
            lambda: probes.approvals(instance) == [],
            timeout=60,
            interval=0.5,
            what="the re-presented ask, answered, to leave the inbox",
        )
    assert not (instance.work / "out.txt").exists()


# function: signals the ACP host while its card is open
@defect(
    Defect(
        title="an ACP host going away with an ask open ends the turn cancelled, not suspended",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, scripted default with dialog "
            "['general', write_file{path:out.txt}, 'Done.']. I drove `contenox acp` with my "
            "own small Python stdio JSON-RPC client (initialize with fs caps, session/new, "
            "session/prompt 'write the file'). It received session/request_permission "
            "(toolCallId scripted-test-1-0-ef50, _meta askId same, policy "
            "hitl-policy-default.json). I left it unanswered and sent SIGTERM. The prompt "
            "response was {stopReason:'cancelled', "
            "_meta:{contenox.stopReason:{reason:'cancelled', explanation:'The turn was "
            "cancelled before it finished, so any work in flight was abandoned. Whatever it "
            "had already written to disk stays written.'}}}. No agent_message_chunk text, "
            "and no approval id anywhere. `approvals list` afterwards still showed "
            "scripted-test-1-0-ef50 pending (6d). Note: guide/h..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; a scripted-test backend as the default whose "
            "dialog is `general` (the router's label), `write_file {path: out.txt}`, `Done.`; "
            "`contenox acp` driven by an ACP client: initialize, session/new, session/prompt "
            "'write the file'; leave the session/request_permission unanswered and send the "
            "`contenox acp` process SIGTERM (or SIGHUP, or SIGINT): the prompt is answered "
            "with stopReason 'cancelled' and _meta contenox.stopReason 'The turn was cancelled "
            "before it finished, so any work in flight was abandoned'; the turn's text names no "
            "approval id, although `contenox approvals list` still lists the ask and a "
            "reconnecting client is asked it again"
        ),
        promised=(
            'guide/hitl.md:111 "A turn that suspended — the process left, or its asks '
            "were detached — ends with a message in the transcript saying it is "
            'suspended rather than finished, naming the approval id."'
        ),
        observed="stopReason 'cancelled', no approval id in the turn's text or _meta",
        bears_on=(
            'guide/hitl.md:111 "On the wire the ACP `stopReason` stays `end_turn` — the '
            'protocol has no "suspended" reason"',
        ),
    )
)
def test_a_turn_suspended_by_its_host_going_away_ends_as_end_turn_naming_the_ask(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(
        Script(turns=[route(), Turn(text="Writing.", tool_calls=[_write("out.txt")]), "Done."])
    )
    acp = open_acp(instance, permission="defer")
    pending = acp.start_prompt("write the file")
    ask = pending.wait_for_permission(timeout=60)
    acp.process.signal(signal.SIGTERM)  # the host shuts down with the card on screen
    turn = pending.finish(timeout=60)
    acp.process.wait(timeout=60)
    assert [a.id for a in probes.approvals(instance)] == [ask.ask_id]
    assert turn.stop_reason == "end_turn", turn.describe()
    assert str(ask.ask_id) in turn.text and "suspended" in turn.text.lower(), turn.describe()
    meta = json.dumps((turn.response or {}).get("result", {}).get("_meta", {}))
    assert "suspend" in meta.lower(), meta
