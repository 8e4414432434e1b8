"""`contenox mission`: every verb of contenox-cli.md's `### contenox mission`, line by line.

`run` is a mission too (it fires the `run` agent under an envelope), so the
read verbs are exercised on runs and on `mission fire`.
"""

from __future__ import annotations

import json
import re

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    column,
    defect,
    mission_finish,
    mission_report,
    probe,
    respond,
    satisfies,
    step,
    wait,
    wait_until,
)
from harness.probes import approvals, mission, missions

LANDS = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "reviewed the diff")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
STUCK = Script(
    turns=[Turn(tool_calls=[mission_finish("stuck", reason="no diff to review")]), "Done."]
)
# A second backend needs its own model name, or the first backend keeps serving.
STUCK_M2 = Script(model="m2", turns=list(STUCK.turns))
DERAILED = Script(
    turns=[Turn(tool_calls=[mission_finish("derailed", reason="the tree vanished")]), "Done."]
)
PLAN = [
    {"content": "read the diff", "status": "completed", "priority": "high"},
    {"content": "write the review", "status": "pending", "priority": "medium"},
]
PLANS = Script(
    turns=[
        Turn(text="Planning.", tool_calls=[ToolCall("mission_plan", {"entries": PLAN})]),
        Turn(tool_calls=[mission_report("result", "planned the review")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
QUESTION = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {"summary": "which branch to review", "question": "which branch to review"},
                )
            ],
        ),
        Turn(tool_calls=[mission_report("result", "reviewed the branch given")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
# A mission that ends at its question (stopped, torn down by --timeout): the
# turns after the ask are never asked for; the question itself still is.
ENDS_AT_THE_QUESTION = QUESTION.optional_from(1)


def _fire(*extra: str) -> tuple[str, ...]:
    return ("mission", "fire", "run", "review the diff", *extra)


FIRE_LANDS = Case(
    name="mission fire waits for the mission to land, prints its reports and exits 0",
    script=LANDS,
    steps=[
        step(
            *_fire("--policy", "run", "--wait"),
            stdout_has=[
                'Mission fired at agent "run" under envelope "run".',
                "Intent: review the diff",
                "finished: landed",
                "[result] reviewed the diff",
            ],
        ),
        step("mission", "list", stdout_has=["landed"]),
    ],
)

FIRE_NEEDS_WAIT = Case(
    name="mission fire without wait is refused and records no mission",
    script=LANDS,
    steps=[
        step(
            *_fire("--policy", "run"),
            exit_code=1,
            notices_has=["mission fire requires --wait"],
        ),
        step("mission", "list", stdout_has=["No missions recorded"]),
    ],
)

FIRE_STUCK = Case(
    name="mission fire exits non-zero when the mission gets stuck",
    script=STUCK,
    steps=[
        step(
            *_fire("--policy", "run", "--wait"),
            exit_code=1,
            stdout_has=["finished: stuck"],
        ),
        step("mission", "list", stdout_has=["stuck"]),
    ],
)

FIRE_DERAILED = Case(
    name="mission fire exits non-zero when the mission derails",
    script=DERAILED,
    steps=[
        step(
            *_fire("--policy", "run", "--wait"),
            exit_code=1,
            stdout_has=["finished: derailed"],
        ),
        step("mission", "list", stdout_has=["derailed"]),
    ],
)

FIRE_DEFAULT_POLICY = Case(
    name="mission fire without policy runs under the default mission policy",
    script=LANDS,
    steps=[
        step("config", "set", "default-mission-policy", "run"),
        step(*_fire("--wait"), stdout_has=['under envelope "run"', "finished: landed"]),
    ],
)

FIRE_NAMES_NO_POLICY = Case(
    name="mission fire with no policy and no default mission policy is refused",
    script=LANDS,
    steps=[
        step(
            *_fire("--wait"),
            exit_code=1,
            stdout_lacks=["Mission fired"],
            notices_has=["no mission envelope: pass --policy"],
        ),
        step("mission", "list", stdout_has=["No missions recorded"]),
    ],
)

ASKS_IS_A_VERB = Case(
    name="mission asks lists pending questions instead of printing the mission help",
    steps=[
        step(
            "mission",
            "asks",
            stdout_lacks=["Available Commands:", "Usage:\n  contenox mission [command]"],
        )
    ],
    defect=Defect(
        title="`contenox mission asks` is no command",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: `mission asks` prints the mission help, 'Available Commands: fire, "
            "list, plan, reports, show, stop', exit 0; `mission asks abc` same help; the help's "
            "own text and Examples name 'contenox mission asks [mission-id]' Note: No page says "
            "asks is absent; every mention promises it. The binary's own help text also promises "
            "it."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            'contenox mission asks; echo "exit $?"\n'
            "# Usage: contenox mission [command]; Available Commands: fire, list, "
            "plan, reports, show, stop; exit 0\n"
            "contenox mission --help   # its examples list 'contenox mission asks "
            "[mission-id]'"
        ),
        promised='reference/contenox-cli.md:515 "contenox mission asks [mission-id]"',
        observed="it prints the mission help and exits 0 (`mission asks <id>` too)",
        bears_on=('reference/contenox-cli.md:522 "`--limit` (`list`, `asks`)"',),
    ),
)

USER_AGENT_NEEDS_BETA = (
    "with `opt-in-beta` unset, a user-authored `.contenox/chain-agent-mine.json` (a copy of "
    "the rendered run chain with id 'mine') is listed by `contenox agent list` and `contenox "
    "mission fire mine \"x\" --policy run --wait` fires it and prints 'finished: landed' "
    "(exit 0); contenox-cli.md `contenox mission`: 'user-authored agents (custom "
    "`chain-agent-*` chain files, like the one declaring `agent-reviewer` above) require "
    "`contenox config set opt-in-beta true` (or `CONTENOX_OPT_IN_BETA=1`)'"
)


def _ids(instance: Instance) -> list[str]:
    return [m.id for m in missions(instance)]


def _user_chain_agent(instance: Instance) -> None:
    # The run agent's chain is rendered on first use; agent list is a use.
    instance.must("agent", "list")
    [rendered, *_] = [
        p
        for base in (instance.work, instance.home)
        for p in (base / ".contenox" / ".generated").glob("chain-agent-run.json")
    ]
    chain = json.loads(rendered.read_text(encoding="utf-8"))
    chain["id"] = "mine"
    instance.write(".contenox/chain-agent-mine.json", json.dumps(chain))


# function: derives its chain from the one init rendered
def test_a_user_authored_chain_agent_fires_once_opt_in_beta_is_set(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Done."]))
    _user_chain_agent(instance)
    instance.must("config", "set", "opt-in-beta", "true")

    fired = instance.contenox(
        "mission", "fire", "mine", "review the diff", "--policy", "run", "--wait", timeout=180
    )

    fired.assert_success().assert_stdout_contains('Mission fired at agent "mine"')
    fired.assert_stdout_contains("finished: landed")


@defect(
    Defect(
        title="a user-authored chain agent fires without opt-in-beta",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: agent list: 'mine discovered chain true'; fire: 'Mission "
            'fired at agent "mine" under envelope "run".\' ... \'Mission … finished: landed\', '
            "'[result] mine reporting home', rc=0 Note: Reproduces exactly. The reference "
            "contradicts itself: :258 (agent section) says opt-in-beta turns on only the event "
            "tier and the doctor line, and that listing is ungated, which describes what the "
            "binary does; :530 and config.md:113 say user-authored chains need the opt-in. Same "
            "file, different section from the promise; counted as docs disagree."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# .contenox/chain-agent-mine.json: a copy of the rendered run chain "
            "with id 'mine'; opt-in-beta unset\n"
            "# dialog: a mission_finish landed turn\n"
            "contenox agent list                                   # lists mine\n"
            'contenox mission fire mine "x" --policy run --wait   # finished: '
            "landed, exit 0"
        ),
        promised=('reference/contenox-cli.md:530 "require `contenox config set opt-in-beta true`"'),
        observed="the agent is listed and fired; the mission lands",
        bears_on=(
            'reference/contenox-cli.md:258 "What `contenox config set opt-in-beta true` (or '
            "`CONTENOX_OPT_IN_BETA=1`) does turn on is the … event-trigger tier … and the "
            'beta line `contenox doctor` prints."',
        ),
        docs_disagree=True,
    )
)
# docs disagree: contenox-cli.md:530 gates user-authored chain agents on opt-in-beta;
# contenox-cli.md:258 says the opt-in turns on only the event tier and the doctor line.
# v1.0.0 does as :258 says: with the beta unset the agent is listed, fired, and lands.
# function: derives its chain from the one init rendered
def test_a_user_authored_chain_agent_fires_without_opt_in_beta(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Done."]))
    _user_chain_agent(instance)
    beta = instance.must("config", "get", "opt-in-beta")
    assert "true" not in beta.stdout, beta.describe()

    fired = instance.contenox(
        "mission", "fire", "mine", "review the diff", "--policy", "run", "--wait", timeout=180
    )

    fired.assert_success().assert_stdout_contains('Mission fired at agent "mine"')
    fired.assert_stdout_contains("finished: landed")
    assert [m.agent for m in missions(instance)] == ["mine"], fired.describe()
    listed = instance.must("agent", "list")
    assert re.search(r"(?m) mine +discovered +chain +true\b", listed.stdout), listed.describe()


# A landed run, then a stuck one from a second backend (its own model, made the default).
LANDED_THEN_STUCK = [
    step("run", "--policy", "run", "review the diff"),
    step("config", "set", "default-model", "m2"),
    step("run", "--policy", "run", "review again", exit_code=None),
]

MISSION_LIST_NEWEST_FIRST = Case(
    name="mission list prints newest first with id agent envelope status and age",
    backends={"first": LANDS, "second": STUCK_M2},
    steps=[
        *LANDED_THEN_STUCK,
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"\AID +AGENT +ENVELOPE +STATUS +AGE *\n")],
        ),
        probe(
            "missions",
            lambda i: [(m.agent, m.envelope, m.status, bool(m.age)) for m in missions(i)],
            expect=[("run", "run", "stuck", True), ("run", "run", "landed", True)],
        ),
    ],
)

MISSION_LIST_LIMIT_CAPS_THE_ROWS = Case(
    name="mission list limit caps the rows at the newest",
    backends={"first": LANDS, "second": STUCK_M2},
    steps=[
        *LANDED_THEN_STUCK,
        probe(
            "mission list --limit 1",
            lambda i: [m.status for m in missions(i, limit=1)],
            expect=["stuck"],
        ),
    ],
)

FIRE_THE_PLAN = [
    step("mission", "fire", "run", "plan the review", "--policy", "run", "--wait"),
    step("mission", "list", capture={"mission": column("ID")}),
]

MISSION_SHOW_PRINTS_THE_PLAN_SUMMARY = Case(
    name="mission show prints the plan summary",
    script=PLANS,
    steps=[
        *FIRE_THE_PLAN,
        step(
            "mission",
            "show",
            "{mission}",
            stdout_has=[
                "Plan:      revision 1 (1 pending, 0 in progress, 1 completed)",
                "[result] planned the review",
            ],
        ),
        probe("mission status", lambda i, m: mission(i, m).status, "{mission}", expect="landed"),
    ],
)

MISSION_PLAN_PRINTS_EVERY_ENTRY = Case(
    name="mission plan prints every entry with status priority and revision history",
    script=PLANS,
    steps=[
        *FIRE_THE_PLAN,
        step(
            "mission",
            "plan",
            "{mission}",
            stdout_has=[
                "Mission {mission} — plan revision 1",
                re.compile(
                    r"^completed +high +read the diff *\npending +medium +write the review *$",
                    re.M,
                ),
                "Revision history (oldest first):",
                "rev 1: +2/-0 (1 pending, 0 in progress, 1 completed)",
            ],
            # No other entry in the table.
            stdout_lacks=[
                re.compile(r"^(completed|pending)(?! +high +read| +medium +write)", re.M)
            ],
        ),
    ],
)

FIRE_AND_WAIT_ON_THE_QUESTION = [
    background("fire", "mission", "fire", "run", "review a branch", "--policy", "run", "--wait"),
    await_ask("ask", kind="question", timeout=90),
]

A_FIRED_MISSIONS_QUESTION_IS_ANSWERED = Case(
    name="a fired missions question is answered with approvals respond and it lands",
    script=QUESTION,
    steps=[
        *FIRE_AND_WAIT_ON_THE_QUESTION,
        # The ask belongs to the one mission fired.
        probe(
            "missions",
            lambda i, m: [x.id == m for x in missions(i)],
            "{ask_mission}",
            expect=[True],
        ),
        respond("ask", answer="review main"),
        wait("fire", timeout=120, stdout_has=["finished: landed"]),
        probe(
            "mission status", lambda i, m: mission(i, m).status, "{ask_mission}", expect="landed"
        ),
    ],
)


def _no_pending_ask(instance: Instance) -> list[str]:
    """The pending asks, once none is left (a stopped mission's ask leaves the list)."""
    wait_until(
        lambda: not _pending(instance),
        timeout=30,
        what="the stopped mission's question to leave approvals list",
    )
    return _pending(instance)


MISSION_STOP_ABANDONS_A_WAITING_MISSION = Case(
    name="mission stop abandons a waiting mission with its reason and the fire exits non zero",
    script=ENDS_AT_THE_QUESTION,
    steps=[
        *FIRE_AND_WAIT_ON_THE_QUESTION,
        step(
            "mission",
            "stop",
            "{ask_mission}",
            "--reason",
            "no longer needed",
            stdout_has=["abandoned"],
        ),
        probe(
            "mission status and reason",
            lambda i, m: (mission(i, m).status, mission(i, m).status_reason),
            "{ask_mission}",
            expect=("abandoned", "no longer needed"),
        ),
        # Its pending ask is closed with it.
        probe("pending asks", _no_pending_ask, expect=[]),
        wait("fire", exit_code="non-zero", timeout=120),
    ],
)


def _pending(instance: Instance) -> list[str]:
    return [a.id for a in approvals(instance)]


MISSION_FIRE_TIMEOUT_TEARS_THE_UNIT_DOWN = Case(
    name="mission fire timeout tears the unit down and exits non zero",
    script=ENDS_AT_THE_QUESTION,
    steps=[
        step(
            "mission",
            "fire",
            "run",
            "review a branch",
            "--policy",
            "run",
            "--wait",
            "--timeout",
            "20s",
            exit_code="non-zero",
            timeout=180,
        ),
        probe(
            "mission statuses",
            lambda i: [m.status for m in missions(i)],
            expect=satisfies(lambda st: len(st) == 1 and st[0] != "landed", "one, not landed"),
        ),
    ],
    # The mission's status read after the teardown is "open" in some clean runs and
    # "derailed" in others (the teardown races the status write).
    snapshot=False,
)
