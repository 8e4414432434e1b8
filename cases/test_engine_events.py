"""The engine's event contract, where it is observable from outside.

contenox-docs/development/engine-events.md is the contract between the task
engine's event stream and its consumers. The stream and its journal have no
reader command; what a user sees of it is (a) the ACP translation an editor
receives (`session/update` notifications, §6–§7), (b) the address every
captured step carries in `contenox state show <id> --raw` (§2), and (c) the ids
a gated call's ask is filed under (§2: `approval_id` = `scope.tool_call`).
"""

from __future__ import annotations

from collections.abc import Mapping

from dialogs import WORKED_RUN
from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    acp_turn,
    open_acp,
    probe,
    probes,
    prompt,
    route,
    step,
)
from harness.acp.turn import PromptTurn

ECHO_TWICE = Script(
    turns=[
        route(),
        # The model reuses one call id on two turns; the engine must mint two.
        Turn(text="Echoing once.", tool_calls=[ToolCall("echo", {"input": "one"}, id="same")]),
        Turn(text="Echoing twice.", tool_calls=[ToolCall("echo", {"input": "two"}, id="same")]),
        "Echoed both.",
    ]
)
ECHO_ONCE = Script(
    turns=[
        route(),
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi"})]),
        "Echoed.",
    ]
)


def _tool_updates(turn: PromptTurn) -> list[tuple[str, str, str]]:
    """(kind, toolCallId, status) of every tool_call / tool_call_update, in order."""
    return [
        (str(u.get("sessionUpdate")), str(u.get("toolCallId")), str(u.get("status")))
        for u in turn.updates
        if u.get("sessionUpdate") in ("tool_call", "tool_call_update")
    ]


A_ROUTE_TASK_S_OUTPUT_IS_NOT_NARRATED = Case(
    name="a route task's label never reaches the editor's transcript while prose does",
    script=Script(turns=[route("general"), "Hello from the prose turn."]),
    steps=[
        prompt(
            "say hello",
            text_has=["Hello from the prose turn."],
            # The router's streamed answer is control flow, not narration.
            text_lacks=["general"],
        )
    ],
)


def _cards(turn: PromptTurn) -> dict[str, object]:
    """The call's cards as (kind, status), whether both name one call, and any task card."""
    updates = _tool_updates(turn)
    return {
        "cards": [f"{kind} {status}" for kind, _, status in updates],
        "one call id": len({call for _, call, _ in updates}) == 1,
        # The tool-bearing tasks (the agent turn, the tool runner) render no task card of
        # their own: the only cards of the turn are the call's.
        "plan updates": sum(1 for u in turn.updates if u.get("sessionUpdate") == "plan"),
    }


ONE_PENDING_CARD_THEN_ONE_FINAL = Case(
    name="each tool invocation renders one pending card then one final update",
    script=ECHO_ONCE,
    steps=[
        prompt("echo it"),
        acp_turn(
            "the call's cards",
            _cards,
            expect={
                "cards": ["tool_call pending", "tool_call_update completed"],
                "one call id": True,
                "plan updates": 0,
            },
        ),
    ],
)


def _distinct_call_ids(turn: PromptTurn) -> dict[str, int]:
    ids = [call for kind, call, _ in _tool_updates(turn) if kind == "tool_call"]
    return {"tool_call cards": len(ids), "distinct ids": len(set(ids))}


REUSED_CALL_ID = Case(
    name="a reused model call id becomes two distinct engine call ids",
    script=ECHO_TWICE,
    steps=[
        prompt("echo twice", text_has=["Echoed both."]),
        acp_turn(
            "the tool_call cards' ids",
            _distinct_call_ids,
            expect={"tool_call cards": 2, "distinct ids": 2},
        ),
    ],
)


def _usage_before_reply(turn: PromptTurn) -> bool:
    """A usage_update with 0 < used < size arrived before the first reply chunk."""
    first_reply = turn.update_kinds.index("agent_message_chunk")
    before: list[Mapping[str, object]] = [
        u for u in turn.updates[:first_reply] if u.get("sessionUpdate") == "usage_update"
    ]
    return any(
        isinstance(u.get("used"), int)
        and isinstance(u.get("size"), int)
        and 0 < u["used"] < u["size"]  # type: ignore[operator]
        for u in before
    )


USAGE_BEFORE_REPLY = Case(
    name="a usage update with the tokens used and the budget precedes the model s reply",
    script=ECHO_ONCE,
    steps=[
        prompt("echo it"),
        acp_turn("a usage_update before the reply", _usage_before_reply, expect=True),
    ],
)


# function: the permission request is held open while another process reads the inbox
def test_a_gated_call_s_ask_is_filed_under_the_engine_s_call_id(instance: Instance) -> None:
    instance.init()
    instance.use_script(ECHO_ONCE)
    with open_acp(instance, permission="defer") as acp:
        pending = acp.start_prompt("echo it")
        ask = pending.wait_for_permission(timeout=60)
        [filed] = probes.approvals(instance)
        instance.must("approvals", "respond", filed.id, "--approve")
        turn = pending.finish(timeout=60)

    [card, *_] = [call for kind, call, _ in _tool_updates(turn) if kind == "tool_call"]
    # approval_id = scope.tool_call: the ask, the permission request and the card are one id.
    assert filed.id == card, (filed, turn.describe())
    assert ask.tool_call.get("toolCallId") == card, ask.params
    assert "Echoed." in turn.text, turn.describe()


def _scopes(instance: Instance) -> dict[str, object]:
    """Whether the first captured request has steps, and the steps whose scope is not its
    ``{chain: run, task: <its task>}`` address."""
    [request, *_] = probes.captured_requests(instance)
    units = probes.captured_units(instance, request)
    wrong = [
        unit.raw.get("scope")
        for unit in units
        if unit.raw.get("scope") != {"chain": "run", "task": unit.task}
    ]
    return {"captured steps": bool(units), "steps with another address": wrong}


EVERY_STEP_ADDRESSED = Case(
    name="every captured step carries its chain and task address",
    script=WORKED_RUN,
    steps=[
        step("run", "--policy", "run", "report what you know"),
        probe(
            "the captured steps' addresses",
            _scopes,
            expect={"captured steps": True, "steps with another address": []},
        ),
    ],
)


def _pending_inputs(turn: PromptTurn) -> list[object]:
    return [u.get("rawInput") for u in turn.updates_of("tool_call")]


BATCH_ORDER = Case(
    name="the calls of one batch render in the model s call order",
    script=Script(
        turns=[
            route(),
            Turn(
                text="Echoing three.",
                tool_calls=[ToolCall("echo", {"input": word}) for word in ("a", "b", "c")],
            ),
            "Echoed three.",
        ]
    ),
    steps=[
        prompt("echo three"),
        acp_turn(
            "the pending cards' inputs",
            _pending_inputs,
            expect=[{"input": "a"}, {"input": "b"}, {"input": "c"}],
        ),
    ],
)
