"""`contenox inbox`: the reports an operator-fired mission left with no session to read them.

`contenox run` fires its mission from no chat session, so the reports it
files land in the inbox; the cases read them back with `inbox list`,
`inbox show` and `inbox ack`.
"""

from __future__ import annotations

from harness import Instance, Script, Turn, mission_finish, mission_report
from harness.table import read_table

REPORTED = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "the inbox report")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
_COLUMNS = ["ID", "REASON", "MISSION", "KIND", "SUMMARY", "AGE", "ACKED"]
_EMPTY = ("No ",)


def _items(instance: Instance, *flags: str) -> list[dict[str, str]]:
    out = instance.must("inbox", "list", *flags).stdout
    # The listing ends with a hint line after a blank line; the table is what precedes it.
    table = out.split("\n\n")[0]
    return read_table(table, _COLUMNS, empty=_EMPTY, source="contenox inbox list")


def _landed_runs(instance: Instance, count: int) -> None:
    instance.init()
    instance.use_script(REPORTED)
    for n in range(count):
        instance.must("run", "--policy", "run", f"report {n}", timeout=150)


def test_a_run_s_report_lands_in_the_inbox_and_show_prints_it(instance: Instance) -> None:
    # function: needs an id printed by an earlier command
    _landed_runs(instance, 1)
    [item] = _items(instance)
    assert (item["KIND"], item["SUMMARY"], item["ACKED"]) == ("result", "the inbox report", "no")
    shown = instance.must("inbox", "show", item["ID"]).stdout
    assert "the inbox report" in shown and item["MISSION"] in shown, shown


def test_ack_marks_an_item_read_without_deleting_it(instance: Instance) -> None:
    # function: needs an id printed by an earlier command
    _landed_runs(instance, 1)
    [item] = _items(instance)
    instance.must("inbox", "ack", item["ID"])
    assert _items(instance) == []
    [kept] = _items(instance, "--all")
    assert (kept["ID"], kept["ACKED"]) == (item["ID"], "yes")


def test_inbox_list_limit_caps_the_items_listed(instance: Instance) -> None:
    # function: needs two runs
    _landed_runs(instance, 2)
    assert len(_items(instance)) == 2
    assert len(_items(instance, "--limit", "1")) == 1
