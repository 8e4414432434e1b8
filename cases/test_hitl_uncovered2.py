"""guide/hitl.md, guide/sovereignty.md, guide/events.md, guide/comparison.md: rows no case held.

As in cases/test_missions_uncovered.py, a mission is fired under an envelope
declared in ``~/.contenox/agents.toml`` and its outcome is read back with
``mission show``.
"""

from __future__ import annotations

import json

from test_asks import _answer_as_agent, _answers, _question, _start
from test_asks import _envelope as _declare_envelope
from test_asks import _mission as _asking_mission
from test_events_page import LANDS as EVENTS_LANDS
from test_events_page import REPORT, _setup, dispatch_until, fired, firing_rows, trigger
from test_hitl_page import _dialog, _open_ask_ids, _written
from test_hitl_page import _write as _write_out
from test_missions_uncovered import _declare, _envelope, _fire

from harness import (
    Instance,
    Script,
    Turn,
    mission_finish,
    mission_report,
    open_acp,
    probes,
    route,
    wait_until,
)
from harness.probes import MissionDetail
from harness.servers.https_proxy import serve_https_proxy

# A unit whose first prompt turn is mute (prose only) and whose nudged turn lands. maxTokens is
# checked between prompt turns (missions.md:168), so the nudge is where a crossed bound shows.
# The scripted backend reports each turn's usage (its estimating tokenizer, about ten thousand
# tokens over this mission's turns, as the stuck reason prints it).
MUTE_THEN_LANDS = Script(
    turns=[
        Turn(text="Half way through the diff."),
        Turn(text="Filing.", tool_calls=[mission_report("result", "reviewed the diff")]),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)


def _under_max_tokens(instance: Instance, script: Script, bound: int) -> MissionDetail:
    instance.init()
    instance.use_script(script)
    _declare(instance, _envelope("spend", f"max_tokens = {bound}"))
    instance.recorder.note(
        f"~/.contenox/agents.toml: [envelopes.spend] allow, [envelopes.spend.compute] "
        f"max_tokens = {bound}"
    )
    _fire(instance, "spend")
    [fired] = probes.missions(instance)
    return probes.mission(instance, fired.id)


# hitl.md:212 "`maxTokens` applies when a unit's provider reports usage"; sovereignty.md:41
# "`maxTokens` is best-effort, enforced when the unit reports usage". A bound of 1000 is crossed
# by the mute first turn: the unit is stopped before its nudged turn can land (those turns are
# optional here: a broken bound serves them, and the mission lands).
def test_a_unit_whose_reported_usage_crosses_max_tokens_ends_stuck(instance: Instance) -> None:
    # function: the mission record is read back after the fire
    detail = _under_max_tokens(instance, MUTE_THEN_LANDS.optional_from(1), 1000)

    assert detail.status == "stuck", detail
    assert detail.status_reason.startswith("compute bound exhausted: maxTokens=1000"), detail
    assert detail.reports == (), detail


# The control: only the bound changes (a million, far above the usage) and the nudged turn lands.
def test_a_unit_whose_reported_usage_stays_under_max_tokens_lands(instance: Instance) -> None:
    # function: the mission record is read back after the fire
    detail = _under_max_tokens(instance, MUTE_THEN_LANDS, 1000000)

    assert detail.status == "landed", detail


# comparison.md:76 "The count is durable and actor-aware — … your own answers do not consume it."
# A bound of one agent answer, the first question answered by a person: the agent's answer to
# the second is still taken. test_asks.py's bound case is the control (an agent's first answer
# spends it, and the second is refused).
def test_a_person_s_answer_does_not_consume_the_agent_answer_bound(instance: Instance) -> None:
    # function: waits for the second question while the first leaves the inbox
    _declare_envelope(
        instance,
        "gate",
        _answers(max_answers=1)["agents.toml"].removeprefix("[envelopes.gate]\n"),
    )
    instance.init()
    instance.must("config", "set", "opt-in-beta", "true")
    run = _start(instance, _asking_mission(_question("which branch"), _question("which remote")))
    first = probes.await_approval(instance, 60, kind="question", run=run)
    probes.answer(instance, first.id, "use main")

    def second_question() -> probes.Ask | None:
        return next((a for a in probes.approvals(instance) if a.id != first.id), None)

    second = wait_until(second_question, timeout=60, interval=0.5, what="the second question")
    taken = _answer_as_agent(instance, second.id)
    run.wait(timeout=120).assert_success()

    taken.assert_success()
    assert 'Answered as agent "planner"' in taken.stdout, taken.describe()


# comparison.md:70 "The checkpoint is then claimed under a lease before the run is rebuilt, and
# deleted when the run completes, so a second process does not replay it." The editor closes with
# the write's card unanswered; a terminal approves and its process resumes the checkpoint (the
# write lands). The file is then removed, and a second process answering the same ask is refused
# and rebuilds nothing: the write does not land again.
def test_a_resumed_checkpoint_is_not_replayed_by_a_second_process(instance: Instance) -> None:
    # function: closes the editor's connection with the card on screen, then answers twice
    instance.init()
    _dialog(instance, route(), Turn(text="Writing.", tool_calls=[_write_out("out.txt")]), "Done.")
    editor = open_acp(instance, permission="defer")
    ask = editor.start_prompt("write out.txt").wait_for_permission(timeout=60)
    assert editor.close() == 0
    assert _open_ask_ids(instance) == [ask.ask_id]

    _dialog(instance, "Done after the verdict.", Turn(text="Done again.", optional=True))
    instance.contenox("approvals", "respond", ask.ask_id, "--approve", timeout=120).assert_success()
    assert _written(instance) is not None
    (instance.work / "out.txt").unlink()
    instance.recorder.note("out.txt removed after the resumed write landed")

    again = instance.contenox("approvals", "respond", ask.ask_id, "--approve", timeout=120)
    assert again.exit_code != 0 and "already answered" in again.stderr, again.describe()
    assert _open_ask_ids(instance) == []
    assert _written(instance) is None


# events.md:150 "A chain needing a tool its firing host does not register records an error for
# that firing (claimed, not retried)." The fired chain's one task calls a toolset no host
# registers; the dispatcher records that firing as an error, fired once. test_events_page.py's
# workspace-shadows case is the control: the noop chain under the same trigger fires ok.
_DEFAULT_END = {"branches": [{"operator": "default", "when": "", "goto": "end"}]}


def _unregistered_tool_chain() -> str:
    return json.dumps(
        {
            "id": "needs-a-tool",
            "description": "call a tool no host registers",
            "tasks": [
                {
                    "id": "call",
                    "handler": "tools",
                    "tools": {"name": "no-such-toolset", "tool_name": "nothing"},
                    "transition": _DEFAULT_END,
                }
            ],
        }
    )


def test_a_fired_chain_needing_an_unregistered_tool_records_an_error(instance: Instance) -> None:
    # function: needs dispatch running until its firing line appears
    _setup(instance)
    instance.write(".contenox/chain-needs-a-tool.json", _unregistered_tool_chain())
    body = json.loads(trigger("needs-tool", REPORT))
    body["chain"] = "chain-needs-a-tool.json"
    instance.write(".contenox/trigger-needs-tool.json", json.dumps(body))

    result = dispatch_until(instance, "fired needs-tool")

    [failed] = fired(result, "needs-tool")
    assert "status=error" in failed, result.describe()
    assert "unknown tools: no-such-toolset" in failed, result.describe()
    assert firing_rows(instance) == [["1", "needs-tool", "error"]]


# sovereignty.md:16 "no contenox service is in the loop unless you deliberately pair a machine with
# the relay — an install that never pairs contacts none; telemetry is opt-in and off by default."
# Every HTTPS and HTTP request of init, a mission run and doctor goes to a loopback proxy that
# routes nothing and records each host asked for; none is a contenox host. test_reach.py's hosted
# pairing case is the control: there the same proxy sees relay.contenox.com.
def test_an_install_that_never_pairs_asks_no_contenox_host_for_anything(
    instance: Instance,
) -> None:
    # function: a recording proxy runs beside the commands
    instance.init()
    instance.use_script(EVENTS_LANDS)
    proxy = serve_https_proxy(instance, {})
    net = {**proxy.env, "HTTP_PROXY": proxy.url, "NO_PROXY": ""}

    instance.must("init", env=net)
    instance.must("run", "--policy", "run", "report home", env=net)
    instance.must("doctor", env=net)

    hosts = sorted({r.host for r in proxy.requests()})
    instance.recorder.probe("hosts the proxy was asked for", (), hosts)
    assert [h for h in hosts if "contenox" in h.lower()] == [], proxy.describe()
