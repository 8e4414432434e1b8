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
    open_acp,
    probes,
    prompt,
    route,
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


def test_each_tool_invocation_renders_one_pending_card_then_one_final_update(
    instance: Instance,
) -> None:
    # function: reads the order and ids of the session/update notifications
    instance.init()
    instance.use_script(ECHO_ONCE)
    with open_acp(instance) as acp:
        turn = acp.prompt("echo it")

    updates = _tool_updates(turn)
    assert [(kind, status) for kind, _, status in updates] == [
        ("tool_call", "pending"),
        ("tool_call_update", "completed"),
    ], turn.describe()
    assert updates[0][1] == updates[1][1], "the pending card and its result name other calls"
    # The tool-bearing tasks (the agent turn, the tool runner) render no task card of
    # their own: the only cards of the turn are the call's.
    assert all(u.get("sessionUpdate") != "plan" for u in turn.updates), turn.describe()


def test_a_reused_model_call_id_becomes_two_distinct_engine_call_ids(instance: Instance) -> None:
    # function: reads the ids of the session/update notifications
    instance.init()
    instance.use_script(ECHO_TWICE)
    with open_acp(instance) as acp:
        turn = acp.prompt("echo twice")

    ids = [call for kind, call, _ in _tool_updates(turn) if kind == "tool_call"]
    assert len(ids) == 2, turn.describe()
    assert ids[0] != ids[1], f"both invocations were addressed as {ids[0]}"
    assert "Echoed both." in turn.text, turn.describe()


def test_a_usage_update_with_the_tokens_used_and_the_budget_precedes_the_model_s_reply(
    instance: Instance,
) -> None:
    # function: reads the order of the session/update notifications
    instance.init()
    instance.use_script(ECHO_ONCE)
    with open_acp(instance) as acp:
        turn = acp.prompt("echo it")

    kinds = turn.update_kinds
    first_reply = kinds.index("agent_message_chunk")
    before: list[Mapping[str, object]] = [
        u for u in turn.updates[:first_reply] if u.get("sessionUpdate") == "usage_update"
    ]
    assert any(
        isinstance(u.get("used"), int)
        and isinstance(u.get("size"), int)
        and 0 < u["used"] < u["size"]  # type: ignore[operator]
        for u in before
    ), turn.describe()


def test_a_gated_call_s_ask_is_filed_under_the_engine_s_call_id(instance: Instance) -> None:
    # function: the permission request is held open while another process reads the inbox
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


def test_every_captured_step_carries_its_chain_and_task_address(instance: Instance) -> None:
    # function: reads every unit of the raw captured state
    instance.init()
    instance.use_script(WORKED_RUN)
    instance.must("run", "--policy", "run", "report what you know")
    [request, *_] = probes.captured_requests(instance)

    units = probes.captured_units(instance, request)

    assert units, f"no captured step for {request}"
    for unit in units:
        assert unit.raw.get("scope") == {"chain": "run", "task": unit.task}, unit.raw


def test_the_calls_of_one_batch_render_in_the_model_s_call_order(instance: Instance) -> None:
    # function: reads the order of the session/update notifications
    instance.init()
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(
                    text="Echoing three.",
                    tool_calls=[ToolCall("echo", {"input": word}) for word in ("a", "b", "c")],
                ),
                "Echoed three.",
            ]
        )
    )
    with open_acp(instance) as acp:
        turn = acp.prompt("echo three")

    pending = [u.get("rawInput") for u in turn.updates_of("tool_call")]
    assert pending == [{"input": "a"}, {"input": "b"}, {"input": "c"}], turn.describe()
