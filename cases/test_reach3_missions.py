"""guide/missions.md and guide/sovereignty.md: rows the ledger still held as uncovered.

A session driven prompt by prompt keeps its history (missions.md:19); a session-fired
mission's report after its session process ended (missions.md:117); a `result`'s
hand-over, by reference (missions.md:119); `mission show`'s warning on a claimed
artifact that does not exist (missions.md:121); `maxTokens` checked between turns,
never mid-turn (missions.md:168); `/mission` typed into beam (missions.md:83); and
swapping a cloud backend for a local one by configuration alone (sovereignty.md:74).

Missions are fired as test_missions_uncovered.py fires them: under an envelope
declared in ``~/.contenox/agents.toml`` (``_declare``/``_envelope``), read back with
``mission show`` / ``mission reports``.
"""

from __future__ import annotations

import re

from test_beam_slash import COMPOSER, SESSION
from test_mission_slash import LANDS, RUN_ENVELOPE
from test_missions_uncovered import _declare, _envelope, _fire

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    Terminal,
    ToolCall,
    Turn,
    column,
    defect,
    mission_finish,
    mission_report,
    open_acp,
    open_terminal,
    probe,
    probes,
    prompt,
    route,
    step,
    wait_until,
)
from harness.probes import MissionDetail, transcript
from harness.servers.providers import KEY, KEY_ENV, Provider, register_provider, serve_provider

# ------------------------------------------------------------------ missions.md:19 the session


def _history(instance: Instance, name: str) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in transcript(instance, name).messages]


# missions.md:19 "**Session** (… an editor over `contenox acp` …) | An attended conversation:
# you prompt … | You, turn by turn | The session history". Two prompts from the editor, each
# answered in its turn; `session show` of the editor's session reads both turns, in order.
A_SESSION_IS_DRIVEN_TURN_BY_TURN_AND_KEEPS_ITS_HISTORY = Case(
    name="an editor session is driven prompt by prompt and session show keeps both turns",
    script=Script(turns=[route(), "The first answer.", route(), "The second answer."]),
    steps=[
        prompt("the first question", text_has=[re.compile(r"\AThe first answer\.\Z")]),
        prompt("the second question", text_has=[re.compile(r"\AThe second answer\.\Z")]),
        step(
            "session",
            "list",
            "--all",
            # By its id: the editor's session is named in its own namespace, not the workspace's.
            capture={"editor": column("ID", where={"IDENTITY": "acp-client"})},
        ),
        probe(
            "the editor session's history",
            _history,
            "{editor}",
            expect=[
                ("user", "the first question"),
                ("assistant", "The first answer."),
                ("user", "the second question"),
                ("assistant", "The second answer."),
            ],
        ),
    ],
)


# ------------------------------------------------------------------ missions.md:117 the inbox

QUESTION = ToolCall("mission_ask_attention", {"summary": "which branch", "question": "which?"})
ASKS = Script(
    turns=[
        Turn(text="Asking.", tool_calls=[QUESTION]),
        # Served only if the answer resumed the unit in this same process (it does not:
        # the editor is gone by then); the resumed run reads the rewritten dialog below.
        Turn(tool_calls=[mission_report("result", "never served")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Done.", optional=True),
    ]
).optional_from(1)
AFTER_THE_ANSWER = Script(
    turns=[
        Turn(tool_calls=[mission_report("result", "went with main")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Done.", optional=True),
    ]
)


def _questions(instance: Instance) -> list[str]:
    return [a.id for a in probes.approvals(instance) if a.kind == "question"]


@defect(
    Defect(
        title="a report filed after the firing session's process ended does not reach the inbox",
        second_reading=(
            "2026-12-04, a second reader with only this text and the docs, by hand with a small "
            "ACP client: real. Saw: once 'which branch' showed in approvals list, contenox acp "
            "was ended four ways (SIGKILL, SIGINT, SIGTERM, stdin EOF); approvals respond "
            "--answer main exited 0, mission reports showed the mission landed with '[result] "
            "went with main', and inbox list --all said 'Operator inbox is empty' each time, "
            "also after acp started again. Control: the same dialog under mission fire --wait "
            "put its report in the inbox as 'operator-fired (no session)'. Note: the binary's "
            "own /mission confirmation says 'if this session has ended when one lands, it "
            "waits in the operator inbox'; in 1 of 2 stdin-EOF closes the mission went "
            "derailed ('agentinstance: instance not found') instead."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: a mission_ask_attention call {summary: 'which branch'}, as "
            "scripted-test-backend.md writes a dialog\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox acp   # ACP client: session/new, prompt '/mission --policy "
            "hitl-policy-strict.json run which branch'; once `approvals list` shows the "
            "question, close the acp process\n"
            "# dialog.json now: mission_report result 'went with main', mission_finish landed, "
            "'Done.'\n"
            "contenox approvals respond <question> --answer main\n"
            "contenox mission reports <mission>   # [result] went with main\n"
            "contenox inbox list --all            # Operator inbox is empty."
        ),
        promised=(
            'guide/missions.md:117 "it is where reports land when the mission has no parent '
            "session listening, which is always the case for an operator-fired `mission fire` "
            'and eventually the case for any session-fired mission whose session process ended."'
        ),
        observed="the report is on the mission; `inbox list --all` says the inbox is empty",
        bears_on=(
            'reference/contenox-cli.md:577 "its reports land in the inbox instead of vanishing"',
            'guide/missions.md:115 "**Inbox item** | A report that had no live session to '
            'deliver to"',
        ),
    )
)
def test_a_report_filed_after_the_firing_editor_closed_lands_in_the_inbox(
    instance: Instance,
) -> None:
    # function: the editor's process ends while the unit waits on its question; another
    # process answers it and the rewritten dialog serves the resumed unit
    instance.init()
    instance.use_script(ASKS)
    editor = open_acp(instance, permission="defer")
    # strict: a human answers its questions, so no agent of the session takes this one.
    fired = editor.prompt("/mission --policy hitl-policy-strict.json run which branch")
    assert "Mission fired" in fired.text, fired.describe()
    [asked] = wait_until(
        lambda: _questions(instance), timeout=60, interval=0.5, what="the unit's question"
    )
    assert editor.close() == 0  # the firing session's process has ended
    [mission] = probes.missions(instance)
    assert probes.mission_reports(instance, mission.id).reports == ()  # nothing filed yet

    AFTER_THE_ANSWER.write(instance.work / "dialog.json")
    instance.recorder.note(
        "dialog.json rewritten for the answering process: mission_report result "
        "'went with main', mission_finish landed, 'Done.'"
    )
    instance.contenox("approvals", "respond", asked, "--answer", "main", timeout=120)

    filed = [r.summary for r in probes.mission_reports(instance, mission.id).reports]
    assert filed, "the mission filed no report after its session ended"
    inbox = instance.must("inbox", "list", "--all").stdout
    missing = [s for s in filed if s[:24] not in inbox]
    assert not missing, f"reports not in the inbox: {missing}\n{inbox}"


# ------------------------------------------------------------------ missions.md:119-121 reports

ARTIFACT = "notes/summary.md"
# What the artifact holds: a report carries its path, never this.
ARTIFACT_TEXT = "ARTIFACT BODY 7f3e: the whole summary, which no report may inline\n"
HANDOVER = {
    "outcome": "summarised the tree",
    "artifacts": [ARTIFACT],
    "handoverForNext": "pick up the open questions in the summary",
    "caveats": "the vendor directory was skipped",
}


def _hands_over(instance: Instance, *, artifact_written: bool) -> MissionDetail:
    """A `run` whose unit files a `result` with a hand-over naming ``ARTIFACT``; its record."""
    instance.init()
    if artifact_written:
        instance.write(ARTIFACT, ARTIFACT_TEXT)
        instance.recorder.note(f"{ARTIFACT} written in the workspace before the run")
    else:
        instance.recorder.note(f"no {ARTIFACT} in the workspace")
    instance.use_script(
        Script(
            turns=[
                Turn(
                    text="Handing over.",
                    tool_calls=[
                        mission_report("result", "the summary is written", handover=HANDOVER)
                    ],
                ),
                Turn(tool_calls=[mission_finish("landed")]),
                Turn(text="Mission finished.", optional=True),
            ]
        )
    )
    instance.must("run", "--policy", "run", "summarise the tree", timeout=150)
    [fired] = probes.missions(instance)
    return probes.mission(instance, fired.id)


# missions.md:119 "A `result` report may carry a structured **hand-over** — outcome, artifacts
# by reference, a brief for the next mission, and caveats … Reports carry references only,
# never inline artifact content." The artifact exists, so the report stays a `result` (this is
# also the control of the warning case below: only the file's presence changes).
def test_a_result_report_carries_its_hand_over_with_artifacts_by_reference(
    instance: Instance,
) -> None:
    # function: the full report is read with mission reports
    detail = _hands_over(instance, artifact_written=True)
    full = instance.must("mission", "reports", detail.id).stdout
    shown = instance.must("mission", "show", detail.id).stdout

    assert [r.kind for r in detail.reports] == ["result"], detail
    for line in (
        "Handover:",
        f"Outcome:  {HANDOVER['outcome']}",
        f"Artifacts: {ARTIFACT}",
        f"For next: {HANDOVER['handoverForNext']}",
        f"Caveats:  {HANDOVER['caveats']}",
    ):
        assert line in full, (line, full)
    # By reference: the path is there, the artifact's content is not, in either view.
    for text in (full, shown):
        assert "ARTIFACT BODY" not in text, text
    assert "claimed artifacts not found" not in full + shown, (full, shown)


# missions.md:121 "a report the verification gate downgraded because it claimed an artifact
# that does not exist is printed with a `⚠ claimed artifacts not found` warning beside it."
def test_mission_show_flags_a_result_claiming_an_artifact_that_does_not_exist(
    instance: Instance,
) -> None:
    # function: mission show's report lines are read as printed
    detail = _hands_over(instance, artifact_written=False)
    shown = instance.must("mission", "show", detail.id).stdout

    assert re.search(
        r"(?m)^\s+\[\w+\] the summary is written\n\s+⚠ claimed artifacts not found: "
        + re.escape(f'"{ARTIFACT}"'),
        shown,
    ), shown
    # Downgraded: the claim is not kept as a result.
    assert [r.kind for r in detail.reports] != ["result"], detail


# ------------------------------------------------------------------ missions.md:168 maxTokens

# Turn 1 is two model calls: an echo (which the `allow` envelope runs unasked), then a mute
# reply to its result. The bound (1000) is crossed before the first call already (the unit's
# context, as the stuck reason prints it, is about ten thousand tokens), so the second call
# is served after the crossing: not checked mid-turn. Between turn 1 and the nudge the bound
# is checked and the mission ends stuck; the nudge's turns are never served.
MUTE_AFTER_AN_ECHO = Script(
    turns=[
        Turn(text="Echoing first.", tool_calls=[ToolCall("echo", {"input": "mid-turn"})]),
        Turn(text="Still working through the echo."),
        Turn(text="Filing.", tool_calls=[mission_report("result", "reported after the nudge")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _spend(instance: Instance, bound: int, script: Script) -> tuple[MissionDetail, list[str]]:
    """A fire under `max_tokens = bound`; its record and every text the unit's model said."""
    instance.init()
    instance.use_script(script)
    _declare(instance, _envelope("spend", f"max_tokens = {bound}"))
    instance.recorder.note(
        f"~/.contenox/agents.toml: [envelopes.spend] allow, [envelopes.spend.compute] "
        f"max_tokens = {bound}"
    )
    _fire(instance, "spend")
    [fired] = probes.missions(instance)
    detail = probes.mission(instance, fired.id)
    # By its id: the unit's session is named in a namespace of its own.
    [unit] = [r.id for r in probes.session_records(instance) if r.name == detail.session]
    said = [m.content for m in transcript(instance, unit).messages]
    return detail, said


def test_max_tokens_is_checked_between_turns_and_never_mid_turn(instance: Instance) -> None:
    # function: the unit's session is read back after the fire
    detail, said = _spend(instance, 1000, MUTE_AFTER_AN_ECHO.optional_from(2))

    # Served after the bound was crossed, inside turn 1: no mid-turn check stopped it.
    assert any("Still working through the echo." in s for s in said), said
    # Checked between turns: stuck before the nudge reached the model (it is the last word).
    assert said[-1] == "Still working through the echo.", said
    assert detail.status == "stuck", detail
    assert detail.status_reason.startswith("compute bound exhausted: maxTokens=1000"), detail
    assert detail.reports == (), detail


def test_max_tokens_far_above_the_usage_lets_the_nudged_turn_land(instance: Instance) -> None:
    # function: the control — the same dialog, only the bound changed
    detail, said = _spend(instance, 1000000, MUTE_AFTER_AN_ECHO)

    assert any("Still working through the echo." in s for s in said), said
    assert detail.status == "landed", detail
    assert [r.summary for r in detail.reports] == ["reported after the nudge"], detail


# ------------------------------------------------------------------ missions.md:83 beam /mission

REPORT_CARD = "unit run reported (result): slash mission home"
LANDED_LINE = "unit run landed"
# A structured log line (`time=… level=INFO msg=…`), as contenox writes them to its log files.
LOG_LINE = re.compile(r"level=(?:DEBUG|INFO|WARN|ERROR) msg=")


def _drawn(term: Terminal, *texts: str) -> bool | None:
    """True once beam has drawn every one of ``texts`` (in its byte stream; the screen may
    have scrolled past them already)."""
    raw = term.raw().decode("utf-8", "replace")
    return all(t in raw for t in texts) or None


def _beam_fires(instance: Instance) -> Terminal:
    """beam --plain, `/mission … run report home` typed, until the unit's card and landing."""
    for pattern, name in SESSION.items():
        instance.recorder.redact(pattern, name)
    instance.init()
    instance.use_script(LANDS)
    term = open_terminal(instance, "beam", "--plain")
    # No screen is recorded: beam's screen also carries log lines whose layout varies run
    # to run (the case below); what beam drew is asserted and named in a note instead.
    term.on_screen = None
    term.wait_for(COMPOSER, timeout=30)
    term.send_line(f"/mission --policy {RUN_ENVELOPE} run report home")
    wait_until(
        lambda: _drawn(term, REPORT_CARD, LANDED_LINE),
        timeout=120,
        interval=0.5,
        what="beam to draw the unit's report card and its landing",
    )
    return term


def _quit(term: Terminal) -> None:
    term.send_line("/quit")
    assert term.wait_exit(timeout=30) == 0, term.describe()


# missions.md:83 "`contenox beam` (a terminal session) | `/mission <intent>` | Reports stream
# back into the firing session as they land". Typed into beam under a pty; the unit is beam's
# child and replays LANDS from its first turn (beam itself asks the model nothing). What beam
# draws is read from its byte stream: the unit's log lines scroll the screen (the case below).
def test_mission_typed_into_beam_streams_the_unit_s_report_back_into_the_session(
    instance: Instance,
) -> None:
    # function: the card is read from beam's byte stream, in whichever order it lands
    term = _beam_fires(instance)
    instance.recorder.note(f"beam drew {REPORT_CARD!r} and {LANDED_LINE!r}")
    _quit(term)

    [fired] = probes.missions(instance)
    assert (fired.agent, fired.envelope, fired.status) == ("run", RUN_ENVELOPE, "landed")


@defect(
    Defect(
        title="a mission fired from beam writes its unit's structured log lines onto beam's screen",
        second_reading=(
            "2026-12-04, a second reader with only this text and the docs, by hand under "
            "pexpect: real. Saw: no log line before /mission; after it 177 'time=… level=INFO "
            "msg=…' lines (the unit's own: loading chain-agent-run.json, …) around the '* unit "
            "run reported (result): slash mission home' card; beam's own log file "
            "(~/.contenox/logs/beam-*.log) holds none of them; with --log-dir DIR the same, 151 "
            "lines on the screen and none in DIR. Note: guide/serve.md:136 and "
            "contenox-cli.md:741 say the same of hosts (logs go to files); no page says "
            "otherwise."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: mission_report result 'slash mission home', mission_finish landed, "
            "'Mission finished.', as scripted-test-backend.md writes a dialog\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "contenox beam --plain   # type: /mission --policy hitl-policy-run.json run report "
            "home\n"
            "# the screen fills with 'time=… level=INFO msg=\"Operation started\" …' lines "
            "around the '* unit run reported (result)' card"
        ),
        promised=(
            'reference/contenox-cli.md:70 "`--log-dir <dir>` | Write structured logs here '
            '(default: `<data-dir>/logs`)"'
        ),
        observed=(
            "no log line on the screen before /mission; once it fires, the unit's structured "
            "log lines (165 'time=… level=INFO msg=…' lines in a hand-run under pexpect) are "
            "drawn on beam's screen, scrolling the transcript"
        ),
        bears_on=(
            'guide/missions.md:83 "Reports stream back into the firing session as they land"',
        ),
    )
)
def test_a_mission_fired_from_beam_keeps_its_unit_s_log_lines_off_the_screen(
    instance: Instance,
) -> None:
    # function: beam's byte stream is read for log lines once the unit has landed
    term = _beam_fires(instance)
    raw = term.raw().decode("utf-8", "replace")
    _quit(term)

    assert not LOG_LINE.search(raw), "structured log lines on beam's screen"


# ------------------------------------------------------------------ sovereignty.md:74 the swap

LOCAL_MODEL = "qwen3:8b"


def _system(body: dict[str, object]) -> list[object]:
    messages = body.get("messages")
    assert isinstance(messages, list), body
    return [m.get("content") for m in messages if isinstance(m, dict) and m["role"] == "system"]


def _contents(body: dict[str, object]) -> list[object]:
    messages = body.get("messages")
    assert isinstance(messages, list), body
    return [m.get("content") for m in messages if isinstance(m, dict) and m["role"] != "system"]


# sovereignty.md:74 "swapping to a local backend later is a configuration change, not a
# rewrite." One session chats through an OpenAI stand-in (the cloud backend, its key named by
# env var); then `backend add` of an Ollama stand-in and the two default keys, nothing else,
# and the next chat of the same session goes to the local model with the same system prompt
# (the same chain) and the session's history.
def test_swapping_a_cloud_backend_for_a_local_one_is_a_configuration_change(
    instance: Instance,
) -> None:
    # function: two provider stand-ins, the swap between two chats
    instance.init()
    cloud = register_provider(instance, Provider("openai"), Script(turns=["From the cloud."]))
    local = serve_provider(
        instance, "ollama", Script(model=LOCAL_MODEL, turns=["From the local model."])
    )
    instance.recorder.name(local.url, "[LOCAL_URL]")
    key = {KEY_ENV: KEY}
    instance.must("session", "new", "work")
    first = instance.must("chat", "the first question", env=key)

    instance.must("backend", "add", "ollama", "--type", "ollama", "--url", local.url)
    instance.must("config", "set", "default-provider", "ollama")
    instance.must("config", "set", "default-model", LOCAL_MODEL)
    second = instance.must("chat", "the second question", env=key)

    assert "From the cloud." in first.stdout, first.describe()
    assert "From the local model." in second.stdout, second.describe()
    [to_cloud] = [r.json() for r in cloud.chat_requests()]
    [to_local] = [r.json() for r in local.chat_requests()]
    instance.recorder.probe(
        "what the local model was sent (model, the turns)",
        (),
        [to_local.get("model"), _contents(to_local)],
    )
    assert to_local.get("model") == LOCAL_MODEL, to_local
    assert _contents(to_local) == [
        "the first question",
        "From the cloud.",
        "the second question",
    ], to_local
    assert _system(to_local) == _system(to_cloud), (to_cloud, to_local)
