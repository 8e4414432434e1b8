"""`contenox run`: one task, the report on stdout, an exit code to branch on."""

from __future__ import annotations

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    Turn,
    column,
    mission_finish,
    mission_report,
    probe,
    step,
)
from harness.probes import backends, missions

# The worked run of contenox-docs/development/scripted-test-backend.md.
WORKED_RUN_DIALOG = Script(
    turns=[
        Turn(
            text="Filing what I found.",
            tool_calls=[mission_report("result", "scripted run reporting home")],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish the unit is torn down while the chat loop may
        # still be asking for the next turn: in repeated runs this closing turn
        # is served in some and not in others.
        Turn(text="Mission finished.", optional=True),
    ]
)

WORKED_RUN = Case(
    name="the worked run lands and prints its report",
    script=WORKED_RUN_DIALOG,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            stdout_has=["scripted run reporting home"],
            # The announcement and the verdict belong on stderr, not in the report.
            stdout_lacks=["Mission fired", "finished: landed"],
            notices_has=['Mission fired at agent "run" under envelope "run".', "finished: landed"],
        ),
        step("mission", "list", stdout_has=["landed"]),
    ],
    probes=[probe("missions", missions), probe("backends", backends)],
)

# docs disagree: scripted-test-backend.md's worked run (:164-187) never runs `contenox init`
# and prints "finished: landed"; the reference has the `run` declaration and its envelope
# come from init (contenox-cli.md:81 "the preseeded `run` declaration", :317 init "seeds
# `agents.toml`", :319 each envelope of agents.toml is what a policy name resolves to).
# v1.0.0 does what the reference says: refused on a fresh home, landed once init ran.
WORKED_RUN_AS_DOCUMENTED = Case(
    name="the worked run exactly as documented is refused on a fresh home and lands after init",
    script=WORKED_RUN_DIALOG,
    init=False,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            exit_code="non-zero",
            stdout_lacks=["scripted run reporting home"],
            notices_has=['hitl policy "run" could not be loaded'],
        ),
        step("init"),
        step(
            "run",
            "--policy",
            "run",
            "report what you know",
            stdout_has=["scripted run reporting home"],
            notices_has=["finished: landed"],
        ),
    ],
    defect=Defect(
        title=(
            "the worked run of scripted-test-backend.md needs a `contenox init` the page never runs"
        ),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: case error. Saw: without init: 'Error: invalid "
            'parameter value: hitlPolicyName: hitl policy "run" could not be '
            "loaded…', exit 1. After adding 'contenox init': 'scripted run "
            "reporting home' / 'Mission … finished: landed', exit 0 Note: Without"
            " init I saw exactly what the report says. The page never claims to "
            "work on an uninitialised home, though. The docs have init seed "
            "agents.toml, where the run envelope is declared "
            "(guide/chains/naming.md:84), and writing-a-chain.md:46 says to run "
            "contenox init first. With that one line added, the page's promise "
            "holds. The error not naming init is a usability point, not a broken "
            "promise."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"   # no contenox init: the '
            "page never runs it\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json   # the page's dialog\n"
            "contenox config set default-provider scripted-test; contenox config set "
            "default-model scripted-test\n"
            'contenox run --policy run "report what you know"   # the page\'s command\n'
            '# Error: invalid parameter value: hitlPolicyName: hitl policy "run" '
            "could not be loaded: it must name an existing policy; exit 1\n"
            "contenox init\n"
            'contenox run --policy run "report what you know"\n'
            "# stdout: scripted run reporting home; stderr: Mission … finished: landed"
        ),
        promised='development/scripted-test-backend.md:187 "# stderr: Mission … finished: landed"',
        observed=(
            "exit 1 on a fresh home: the `run` envelope exists only after `contenox init`, "
            "as the reference says; after init the worked run lands"
        ),
        bears_on=(
            'reference/contenox-cli.md:81 "with no agent named, the preseeded `run` '
            'declaration handles it"',
            'reference/contenox-cli.md:317 "It also seeds `agents.toml` and an `agents/` '
            'directory"',
            'reference/contenox-cli.md:319 "transpiled into `.generated/hitl-policy-<name>.json` '
            'instead, on every run rather than once at init"',
        ),
        docs_disagree=True,
    ),
)

# A unit that gives up: mission_finish "stuck" with a one-line reason.
STUCK_RUN_DIALOG = Script(
    turns=[
        Turn(tool_calls=[mission_finish("stuck", reason="no database to read from")]),
        Turn(text="Done."),
    ]
)

A_STUCK_RUN_EXITS_NONZERO_AND_SAYS_WHY = Case(
    name="a run whose mission gets stuck exits non-zero and prints the reason on stderr",
    script=STUCK_RUN_DIALOG,
    steps=[
        step(
            "run",
            "--policy",
            "run",
            "give up",
            # contenox-cli.md, `contenox run`: "Exit status is 0 when the work landed
            # and nonzero when it did not"; the outcome goes to stderr with its reason.
            exit_code=1,
            stdout_lacks=["no database to read from"],
            notices_has=["finished: stuck — no database to read from"],
        ),
    ],
    probes=[probe("missions", missions)],
)


PIPED = "the piped body\n"


PIPED_STDIN_TRAVELS_IN_THE_INTENT = Case(
    name="piped stdin travels inside the mission intent",
    script=WORKED_RUN_DIALOG,
    steps=[
        # The narration keeps one line and counts the body; the record keeps it whole.
        step(
            "run",
            "--policy",
            "run",
            "summarise this",
            stdin=PIPED,
            notices_has=["bytes piped stdin)"],
        ),
        step("mission", "list", capture={"mission": column("ID")}),
        step(
            "mission",
            "show",
            "{mission}",
            stdout_has=[
                "summarise this\n\n--- begin piped stdin ---\nthe piped body\n"
                "--- end piped stdin ---"
            ],
        ),
    ],
    defect=Defect(
        title="`run` refuses piped stdin: 'intent must be a single line'",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME+workspace, init, scripted backend (report, "
            "finish, text). `echo 'the piped body' | contenox run --policy run 'summarise "
            "this'` -> stderr 'Error: intent must be a single line', exit 1. `mission list` "
            "-> 'No missions recorded.' Note: Reproduces. `contenox run --help` says 'Piped "
            "stdin is the material the task is about… the piped body travels inside it, "
            "appended … between --- begin piped stdin --- and --- end piped stdin ---'. "
            'Top-level --help shows `git diff | contenox "<task>"`, and the run agent\'s '
            "own system prompt expects that block. contenox-cli.md's run section says "
            "nothing about stdin. No page says piped stdin is refused."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "echo 'the piped body' | contenox run --policy run 'summarise this'; "
            'echo "exit $?"\n'
            "# Error: intent must be a single line; exit 1, no mission fired"
        ),
        promised='`contenox run --help` "the piped body travels inside it"',
        observed=(
            "exit 1 'intent must be a single line'; contenox-cli.md does not mention piped stdin"
        ),
    ),
)


# function: what it checks depends on the run's exit code
def test_piped_stdin_is_never_silently_dropped_from_a_run(instance: Instance) -> None:
    # Whatever else happens to a piped body (see the quarantined case above), a run
    # must not land a mission that never saw it: either the mission carries the
    # body or the run refuses.
    instance.init()
    instance.use_script(WORKED_RUN_DIALOG)
    result = instance.contenox("run", "--policy", "run", "summarise this", stdin=PIPED)

    fired = missions(instance)
    if result.exit_code == 0:
        [only] = fired
        shown = instance.must("mission", "show", only.id)
        shown.assert_stdout_contains("the piped body")
    else:
        assert fired == [] or fired[0].status != "landed", (fired, result.describe())
