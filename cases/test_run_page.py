"""`contenox run` as contenox-cli.md describes it: the argument shape, envelopes, exit codes.

The worked run itself (report on stdout, announcement on stderr, exit 0) is
`cases/test_run.py`; this file checks the rest of the section line by line.
"""

from __future__ import annotations

import pytest

from harness import (
    Case,
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    mission_report,
    probe,
    start_contenox,
    step,
)
from harness.probes import (
    approvals,
    approve,
    await_approval,
    captured_requests,
    captured_units,
    missions,
)


def _landing(summary: str) -> Script:
    """A unit that files ``summary`` as its result and lands."""
    return Script(
        turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", summary)]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Mission finished.",
        ]
    )


def _tool_results(instance: Instance) -> list[str]:
    """What every tool call of every captured run returned, as the model was sent it.

    Read back through `contenox state show <id> --raw`: the tool messages the
    next model turn carried.
    """
    seen: list[str] = []
    for request in captured_requests(instance):
        for unit in captured_units(instance, request):
            for message in unit.output_messages:
                if message.role == "tool" and message.content not in seen:
                    seen.append(message.content)
    return seen


def _mission_statuses(instance: Instance) -> list[tuple[str, str, str]]:
    return [(m.agent, m.envelope, m.status) for m in missions(instance)]


# --- the first argument -----------------------------------------------------------------

RUN_AT_A_DECLARED_AGENT = Case(
    name="a first argument naming a declared agent fires the mission at that agent",
    script=_landing("reviewed by the declared reviewer"),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "reviewer",
            "review the payment retry change",
            stdout_has=["reviewed by the declared reviewer"],
            notices_has=[
                'Mission fired at agent "reviewer" under envelope "run".',
                "Intent: review the payment retry change",
                "finished: landed",
            ],
        ),
    ],
    probes=[probe("missions", _mission_statuses)],
    # mission_finish tears the unit down while the closing turn may be asked for.
    serves_all_turns=False,
)

FIRST_WORD_NAMING_NO_AGENT_IS_PART_OF_THE_TASK = Case(
    name="a first argument naming no declared agent is part of the task for the run agent",
    script=_landing("reported what was asked"),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report",
            "what",
            stdout_has=["reported what was asked"],
            notices_has=[
                'Mission fired at agent "run" under envelope "run".',
                "Intent: report what",
            ],
        ),
    ],
    serves_all_turns=False,
    defect=(
        '`contenox run --policy run report what` exits 1 with \'Error: resolve agent "report": '
        "libdb: not found' and fires nothing; with three words (`run --policy run summarise "
        "the tree`) it is refused with 'accepts between 1 and 2 arg(s), received 3'. "
        "Contradicts contenox-cli.md, `contenox run`: 'The first argument is a declared agent "
        "when it names one, and part of the task otherwise'."
    ),
)

A_QUOTED_TASK_IS_ONE_TASK = Case(
    name="a task quoted as one argument reaches the run agent whole",
    script=_landing("summarised the changes"),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "summarise what changed under ./internal since Friday",
            stdout_has=["summarised the changes"],
            notices_has=[
                'Mission fired at agent "run" under envelope "run".',
                "Intent: summarise what changed under ./internal since Friday",
            ],
        ),
    ],
    probes=[probe("missions", _mission_statuses)],
    serves_all_turns=False,
)


# --- exit status --------------------------------------------------------------------------

DERAILED_RUN = Case(
    name="a run whose mission derails exits nonzero",
    script=Script(
        turns=[
            Turn(text="Cannot.", tool_calls=[mission_report("blocker", "the schema is missing")]),
            Turn(tool_calls=[mission_finish("derailed", reason="no way forward")]),
            "Stopped.",
        ]
    ),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "migrate the database",
            exit_code=1,
            stdout_lacks=["Mission fired", "finished:"],
            notices_has=["finished: derailed — no way forward"],
        ),
    ],
    probes=[probe("missions", _mission_statuses)],
    serves_all_turns=False,
)

STUCK_RUN = Case(
    name="a run whose mission gets stuck exits nonzero",
    script=Script(
        turns=[
            Turn(tool_calls=[mission_finish("stuck", reason="need the staging credentials")]),
            "Stopped.",
        ]
    ),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "deploy to staging",
            exit_code=1,
            notices_has=["finished: stuck — need the staging credentials"],
        ),
    ],
    probes=[probe("missions", _mission_statuses)],
    serves_all_turns=False,
)


# --- envelopes ----------------------------------------------------------------------------

POLICY_FALLS_BACK_TO_THE_CONFIGURED_DEFAULT = Case(
    name="without policy the run is bounded by the default-mission-policy config",
    script=_landing("ran under the configured envelope"),
    steps=[
        step("config", "set", "default-mission-policy", "run"),
        step(
            "run",
            "report what you know",
            stdout_has=["ran under the configured envelope"],
            notices_has=['Mission fired at agent "run" under envelope "run".', "finished: landed"],
        ),
    ],
    serves_all_turns=False,
)

A_RUN_WITH_NO_ENVELOPE_IS_REFUSED = Case(
    name="a run with neither policy nor a default envelope is refused and fires nothing",
    script=Script(turns=["this must not be served"]),
    steps=[
        step(
            "run",
            "report what you know",
            exit_code=1,
            stdout_lacks=["this must not be served"],
            notices_has=["no mission envelope: pass --policy"],
            notices_lacks=["Mission fired"],
        ),
        step("mission", "list", stdout_has=["No missions"]),
    ],
    serves_all_turns=False,
)

AN_UNKNOWN_ENVELOPE_IS_REFUSED = Case(
    name="a run under an envelope that does not exist is refused naming it",
    script=Script(turns=["this must not be served"]),
    steps=[
        step(
            "run",
            "--policy",
            "no-such-envelope",
            "report what you know",
            exit_code=1,
            notices_has=['"no-such-envelope" could not be loaded'],
            notices_lacks=["Mission fired"],
        ),
    ],
    serves_all_turns=False,
)


# --- --timeout ----------------------------------------------------------------------------

# `echo` is named by no rule of the `run` envelope, so its default_action
# (approve) gates it: the run waits on a durable ask nobody answers.
GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"message": "hi there"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

RUN_TIMEOUT_TEARS_THE_UNIT_DOWN = Case(
    name="run --timeout tears the unit down and exits nonzero while its record survives",
    script=GATED_ECHO,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "--timeout",
            "3s",
            "echo something",
            exit_code=1,
            stdout_lacks=["echoed after the verdict"],
            notices_has=["Waiting for a terminal status (timeout 3s;", "did not finish within 3s"],
        ),
    ],
    probes=[
        # The record survives; its status races the teardown (seen both `open` and
        # `derailed`), so only who ran under what is captured.
        probe("missions", lambda i: [(m.agent, m.envelope) for m in missions(i)]),
        probe("asks", lambda i: [(a.kind, a.tool) for a in approvals(i)]),
    ],
    serves_all_turns=False,
)

RUN_WAITS_THIRTY_MINUTES_BY_DEFAULT = Case(
    name="run waits thirty minutes for a terminal status by default",
    script=_landing("landed well inside the default wait"),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            notices_has=["Waiting for a terminal status (timeout 30m0s;"],
        ),
    ],
    serves_all_turns=False,
)

RUN_TIMEOUT_IS_ITS_OWN_FLAG = Case(
    name="run's timeout is its own bound, not the global per-invocation timeout",
    init=False,
    steps=[
        step(
            "run",
            "--help",
            stdout_has=[
                "--timeout duration   Maximum time to wait for a terminal status before "
                "tearing the unit down (default 30m0s)"
            ],
            stdout_lacks=["Maximum execution time"],
        ),
    ],
)


# --- piped stdin --------------------------------------------------------------------------

PIPED_STDIN_TRAVELS_WITH_THE_TASK = Case(
    name="piped stdin travels inside the task and the run lands",
    script=_landing("reviewed the piped diff"),
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "review this and say what I should check myself",
            stdin="diff --git a/pay.go b/pay.go\n+retry := 3\n",
            stdout_has=["reviewed the piped diff"],
            notices_has=["finished: landed"],
        ),
    ],
    serves_all_turns=False,
    defect=(
        "`printf 'diff --git a/pay.go b/pay.go\\n+retry := 3\\n' | contenox run --policy run "
        "\"review this…\"` exits 1 with 'Error: intent must be a single line' and fires "
        "nothing. Contradicts `contenox run --help`: 'Piped stdin is the material the task is "
        'about … the piped body travels inside it, appended to the task between "--- begin '
        'piped stdin ---" and "--- end piped stdin ---"\', and its example `git diff | '
        'contenox run "review this and say what I should check myself"` (the page itself is '
        "silent on stdin)."
    ),
)


# --- what a run can reach -------------------------------------------------------------------


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
# function: needs the tool results read back from `state show --raw`
def test_run_serves_read_file_itself_rooted_where_it_started(instance: Instance) -> None:
    instance.init()
    instance.write("notes.txt", "the retry budget is three\n")
    instance.use_script(
        Script(
            turns=[
                Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
                Turn(tool_calls=[mission_report("result", "read the notes")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )

    instance.must("run", "--policy", "run", "read notes.txt")

    results = _tool_results(instance)
    assert "the retry budget is three\n" in results, results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
# function: needs background (the `run` envelope gates local_shell; answered from outside)
def test_run_serves_local_shell_itself_once_the_envelope_lets_it_through(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(
        Script(
            turns=[
                Turn(
                    text="Running.",
                    tool_calls=[
                        ToolCall("local_shell", {"command": "echo", "args": ["shell says hi"]})
                    ],
                ),
                Turn(tool_calls=[mission_report("result", "ran the shell")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )
    run = start_contenox(instance, "run", "--policy", "run", "say hi through the shell")
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)

    approve(instance, ask.id)
    result = run.wait(timeout=120)

    result.assert_success()
    assert any("shell says hi" in r for r in _tool_results(instance)), _tool_results(instance)


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
# function: needs background (the gated local_shell is approved from another process)
def test_run_local_shell_runs_under_the_sandbox_env_scrub(instance: Instance) -> None:
    instance.init()
    instance.use_script(
        Script(
            turns=[
                Turn(text="Looking.", tool_calls=[ToolCall("local_shell", {"command": "env"})]),
                Turn(tool_calls=[mission_report("result", "read the environment")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )
    run = start_contenox(
        instance,
        "run",
        "--policy",
        "run",
        "print the environment",
        env={"E2E_PAYMENT_API_KEY": "sk-never-show-this", "E2E_PLAIN_SETTING": "visible"},
    )
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)

    approve(instance, ask.id)
    run.wait(timeout=120).assert_success()

    [env_dump] = [r for r in _tool_results(instance) if "E2E_PLAIN_SETTING" in r]
    # deny-secrets, the default for agent shells, keeps ordinary variables and
    # strips the credential shapes (*_KEY among them).
    assert "sk-never-show-this" not in env_dump, env_dump


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
# function: needs the tool results read back from `state show --raw`
def test_run_reaches_the_in_process_toolsets(instance: Instance) -> None:
    instance.init()
    instance.write("notes.txt", "twelve bytes")
    instance.use_script(
        Script(
            turns=[
                Turn(text="Checking.", tool_calls=[ToolCall("stat_file", {"path": "notes.txt"})]),
                Turn(tool_calls=[mission_report("result", "stat the notes")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )

    instance.must("run", "--policy", "run", "stat notes.txt")

    results = _tool_results(instance)
    assert any("notes.txt" in r and "12" in r for r in results), results
    assert not any("not found" in r for r in results), results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
# function: needs the workspace and the tool results after the run
def test_a_call_the_envelope_denies_does_not_run(instance: Instance) -> None:
    instance.init()
    (instance.work / ".git").mkdir()
    instance.use_script(
        Script(
            turns=[
                Turn(
                    text="Writing.",
                    tool_calls=[
                        ToolCall("write_file", {"path": ".git/config", "content": "[core]\n"})
                    ],
                ),
                Turn(tool_calls=[mission_report("result", "tried to write")]),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        )
    )

    instance.must("run", "--policy", "run", "write the git config")

    assert not (instance.work / ".git" / "config").exists()
    results = _tool_results(instance)
    assert any("denied" in r.lower() for r in results), results
    assert approvals(instance) == [], "a denied call must not wait for a human"
