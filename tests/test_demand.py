"""Model demand, read from the log lines contenox v1.0.0 prints (copied from a real run)."""

from __future__ import annotations

from harness.demand import Demand, served_calls

SCRIPT = "/tmp/x3/work/d.json"
SERVED = (
    'time=2026-11-30T09:09:53.527Z level=INFO msg="Operation started" operation=stream '
    "subject=scripted-test op_id=op-20261130-090953.527-j request_id=cli-9ef981bf70dc39ce "
    f"model=scripted-test script={SCRIPT}\n"
    'time=2026-11-30T09:09:53.527Z level=INFO msg="Operation completed" operation=stream '
    "subject=scripted-test op_id=op-20261130-090953.527-j duration=156.933µs\n"
)
EXHAUSTED = (
    'time=2026-11-30T09:09:53.550Z level=INFO msg="Operation started" operation=stream '
    "subject=scripted-test op_id=op-20261130-090953.550-v request_id=cli-9ef981bf70dc39ce "
    f"model=scripted-test script={SCRIPT}\n"
    'time=2026-11-30T09:09:53.550Z level=ERROR msg="Operation failed" operation=stream '
    "subject=scripted-test op_id=op-20261130-090953.550-v "
    f'error="scripted-test script \\"{SCRIPT}\\" is exhausted: stream asked for turn 1 but the '
    'script holds 1 turn(s); add the missing turn or shorten the run" request_id=cli-9\n'
)


def test_served_calls_count_started_operations_that_did_not_fail() -> None:
    assert served_calls(SERVED + EXHAUSTED, SCRIPT) == 1
    assert served_calls(SERVED, "/other/script.json") == 0


def test_exhaustion_is_reported_with_the_turn_index() -> None:
    demand = Demand.from_stderrs([SERVED + EXHAUSTED], SCRIPT, held=1)
    assert demand.exhausted_at == 1
    assert demand.problem() == (
        f"the run went past the end of {SCRIPT}: it asked for turns[1] but the dialog holds "
        "1 turn(s); add the missing turn or shorten the run"
    )


def test_unserved_turns_are_reported_as_another_branch() -> None:
    demand = Demand.from_stderrs([SERVED], SCRIPT, held=3)
    assert demand.unserved == 2
    problem = demand.problem()
    assert problem is not None
    assert problem.startswith("the run took another branch: 2 of 3 turns were never served")
    assert Demand.from_stderrs([SERVED], SCRIPT, held=2).problem() is not None


def test_each_process_starts_at_turn_zero_so_the_most_served_counts() -> None:
    demand = Demand.from_stderrs([SERVED, SERVED + SERVED.replace("-j ", "-k ")], SCRIPT, held=2)
    assert demand.served == 2
    assert demand.problem() is None
    assert demand.summary() == "2 of 2 turns served"


def test_an_optional_closing_turn_reads_the_same_served_or_not() -> None:
    served = Demand(script="d.json", held=3, served=3, optional=1)
    unserved = Demand(script="d.json", held=3, served=2, optional=1)
    assert served.problem() is None and unserved.problem() is None
    assert served.summary() == unserved.summary() == "2 of 3 turns served, the last 1 optional"
    assert Demand(script="d.json", held=3, served=1, optional=1).unserved == 1


def test_a_dialog_never_asked_for_says_so() -> None:
    demand = Demand(script="d.json", held=2, served=0)
    assert demand.problem() is None
    assert demand.summary() == "no served call seen (2 turns held)"


def test_a_unit_that_failed_before_its_call_was_not_served() -> None:
    # The tokenizer refused the history (or the closing call was cancelled): the
    # captured state names the model, but no turn of its dialog was consumed.
    from harness.case.runner import served_counts
    from harness.probes import CapturedUnit

    def unit(model: str, error: str = "") -> CapturedUnit:
        return CapturedUnit(
            task="chat",
            handler="chat_completion",
            transition="",
            provider_type="scripted-test",
            model_name=model,
            finish_reason="stop",
            error=error,
            input_messages=(),
            output_messages=(),
            raw={},
        )

    units = [unit("m"), unit("m", "exceeds context length: 614 > 100"), unit("other")]
    assert served_counts(units) == {"m": 1, "other": 1}
