"""`contenox run` as contenox-cli.md describes it: the argument shape, envelopes, exit codes.

The worked run itself (report on stdout, announcement on stderr, exit 0) is
`cases/test_run.py`; this file checks the rest of the section line by line.
"""

from __future__ import annotations

from collections.abc import Callable

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Probe,
    Script,
    ToolCall,
    Turn,
    await_ask,
    background,
    mission_finish,
    mission_report,
    probe,
    respond,
    satisfies,
    step,
    wait,
)
from harness.case import Action
from harness.probes import (
    approvals,
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
    defect=Defect(
        title="`run`'s first argument is taken as an agent even when it names none",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, scripted backend default (mission "
            "dialog). `contenox run --policy run report what` printed 'Error: resolve agent "
            '"report": libdb: not found\', exit 1. `contenox run --policy run summarise '
            "the tree` printed 'Error: accepts between 1 and 2 arg(s), received 3'. "
            'Control: `contenox run --policy run "summarise the tree"` landed. Note: '
            "contenox-cli.md:81 says the first argument is an agent only when it names one, "
            "and part of the task otherwise. No doc page says the task must be one quoted "
            "argument. Only `run --help` says so ('Quote the task as ONE argument', usage "
            '`run [agent] "<task>"`), and the help is the binary\'s own text, not a doc '
            "page. An undeclared first word is always resolved as an agent."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            'contenox run --policy run report what; echo "exit $?"\n'
            '# Error: resolve agent "report": libdb: not found; exit 1\n'
            "contenox run --policy run summarise the tree\n"
            "# accepts between 1 and 2 arg(s), received 3"
        ),
        promised=(
            'reference/contenox-cli.md:81 "The first argument is a declared agent '
            'when it names one, and part of the task otherwise"'
        ),
        observed=("exit 1 'resolve agent \"report\": libdb: not found'; three words are refused"),
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
)


# --- --timeout ----------------------------------------------------------------------------

# `echo` is named by no rule of the `run` envelope, so its default_action
# (approve) gates it: the run waits on a durable ask nobody answers.
GATED_ECHO = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"input": "hi there"})]),
        Turn(tool_calls=[mission_report("result", "echoed after the verdict")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

RUN_TIMEOUT_TEARS_THE_UNIT_DOWN = Case(
    name="run --timeout tears the unit down and exits nonzero while its record survives",
    # The run ends at the echo's ask: the turns after it are never asked for.
    script=GATED_ECHO.optional_from(1),
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
    defect=Defect(
        title="`run` refuses a piped diff: 'intent must be a single line'",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            'scratch home: real. Saw: "Error: intent must be a single line", exit 1 '
            "Note: The intent argument is one line, so the binary must have merged "
            "the piped material into the intent, which is what --help says it keeps "
            'apart. A grep for "single line" in the docs found nothing. I did not '
            "check whether anything fired."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "printf 'diff --git a/pay.go b/pay.go\\n+retry := 3\\n' | contenox run "
            '--policy run "review this and say what I should check myself"; echo '
            '"exit $?"\n'
            "# Error: intent must be a single line; exit 1, nothing fired"
        ),
        promised='`contenox run --help` "Piped stdin is the material the task is about"',
        observed=("exit 1 'intent must be a single line'; contenox-cli.md is silent on stdin"),
        bears_on=(
            (
                '`contenox run --help` "git diff | contenox run "review this and say '
                'what I should check myself""'
            ),
        ),
    ),
)


# --- what a run can reach -------------------------------------------------------------------


def _unit(text: str, call: ToolCall, summary: str) -> Script:
    """A unit that makes ``call``, reports ``summary`` and lands."""
    return Script(
        turns=[
            Turn(text=text, tool_calls=[call]),
            Turn(tool_calls=[mission_report("result", summary)]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _results(promise: str, check: Callable[[list[str]], bool]) -> Probe:
    return probe("tool results", _tool_results, expect=satisfies(check, promise))


RUN_SERVES_READ_FILE_ITSELF = Case(
    name="run serves read file itself rooted where it started",
    files={"notes.txt": "the retry budget is three\n"},
    script=_unit("Reading.", ToolCall("read_file", {"path": "notes.txt"}), "read the notes"),
    steps=[step("run", "--policy", "run", "read notes.txt")],
    probes=[_results("the notes were read", lambda rs: "the retry budget is three\n" in rs)],
)


def _shell_once_approved(*args: str, env: dict[str, str] | None = None) -> list[Action]:
    """A run whose local_shell call the `run` envelope gates, approved from outside."""
    return [
        background("run", "run", "--policy", "run", *args, env=env or {}),
        await_ask("ask", tool="local_shell.local_shell", timeout=60),
        respond("ask", "approve"),
        wait("run", timeout=120),
    ]


RUN_SERVES_LOCAL_SHELL_ONCE_LET_THROUGH = Case(
    name="run serves local shell itself once the envelope lets it through",
    script=_unit(
        "Running.",
        ToolCall("local_shell", {"command": "echo", "args": ["shell says hi"]}),
        "ran the shell",
    ),
    steps=_shell_once_approved("say hi through the shell"),
    probes=[_results("the shell ran", lambda rs: any("shell says hi" in r for r in rs))],
)


def _env_dump_keeps_no_secret(results: list[str]) -> bool:
    [env_dump] = [r for r in results if "E2E_PLAIN_SETTING" in r]
    return "sk-never-show-this" not in env_dump


RUN_LOCAL_SHELL_SCRUBS_THE_ENV = Case(
    name="run local shell runs under the sandbox env scrub",
    script=_unit("Looking.", ToolCall("local_shell", {"command": "env"}), "read the environment"),
    steps=_shell_once_approved(
        "print the environment",
        env={"E2E_PAYMENT_API_KEY": "sk-never-show-this", "E2E_PLAIN_SETTING": "visible"},
    ),
    # deny-secrets, the default for agent shells, keeps ordinary variables and
    # strips the credential shapes (*_KEY among them).
    probes=[_results("one env dump, without the key's value", _env_dump_keeps_no_secret)],
)

RUN_REACHES_THE_IN_PROCESS_TOOLSETS = Case(
    name="run reaches the in process toolsets",
    files={"notes.txt": "twelve bytes"},
    script=_unit("Checking.", ToolCall("stat_file", {"path": "notes.txt"}), "stat the notes"),
    steps=[step("run", "--policy", "run", "stat notes.txt")],
    probes=[
        _results(
            "stat_file answered about notes.txt (12 bytes), nothing was not found",
            lambda rs: (
                any("notes.txt" in r and "12" in r for r in rs)
                and not any("not found" in r for r in rs)
            ),
        )
    ],
)

A_DENIED_CALL_DOES_NOT_RUN = Case(
    name="a call the envelope denies does not run",
    # A .git directory for the write to aim at.
    files={".git/description": "scratch\n"},
    script=_unit(
        "Writing.",
        ToolCall("write_file", {"path": ".git/config", "content": "[core]\n"}),
        "tried to write",
    ),
    steps=[step("run", "--policy", "run", "write the git config")],
    probes=[
        workspace_file(".git/config", expect=None),
        _results("the call was denied", lambda rs: any("denied" in r.lower() for r in rs)),
        # A denied call must not wait for a human.
        probe("approvals", approvals, expect=[]),
    ],
)
