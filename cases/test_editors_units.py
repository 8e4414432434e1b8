"""Editor-page promises the earlier cases left unasserted, from the client's seat.

integrations/editors/{zed,jetbrains,aionui,openclaw}.md: the cards of a write and a sed
name their file, the permission request's Allow/Deny options, an MCP server registered
once reaching an ACP session, `default-model` as one setting every surface reads, the
`acp` declaration the session's chain is compiled from, a reopened session's tool call
and the database it lives in, an ask nobody answers and one answered after the editor
closed, `/mission` of the shipped planner without the beta, and `acpx` reading a line
range, under its session's `cwd`, and under a tightened `[envelopes.acpx]`. Each case
is named by a row of the pages' ledgers under cases/promises/.
"""

from __future__ import annotations

import re

from dialogs import WRITE_GREETING, workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    acp_turn,
    edit,
    mission_finish,
    mission_report,
    open_acp,
    probe,
    prompt,
    received,
    route,
    satisfies,
    serve,
    step,
    wait_until,
)
from harness.acp.turn import PromptTurn
from harness.case import mcp_arguments, model_saw
from harness.probes import approvals, missions


def _write_cards(turn: PromptTurn) -> dict[str, object]:
    """The permission cards' titles, and whether a tool card names out.txt."""
    titles = [str(c.get("title", "")) for c in turn.tool_calls.values()]
    return {
        "permission cards": [ask.title for ask in turn.permission_requests],
        "a write_file tool card names out.txt": any(
            re.search(r"write_file.*out\.txt", t) for t in titles
        ),
    }


THE_CARDS_OF_A_WRITE_NAME_THE_FILE = Case(
    name="the cards of a write name the file it writes",
    script=WRITE_GREETING,
    steps=[
        prompt("write the greeting", permission="allow", files_written=["out.txt"]),
        acp_turn(
            "the cards",
            _write_cards,
            expect=satisfies(
                lambda v: (
                    len(v["permission cards"]) == 1
                    and "out.txt" in v["permission cards"][0]
                    and v["a write_file tool card names out.txt"]
                ),
                "one permission card naming out.txt, and a write_file tool card naming out.txt",
            ),
        ),
    ],
)


# The harness's recording MCP server, spawned by contenox over stdio (see test_mcp.py):
# the call reaching it is the proof the session was offered the server's tool, since a
# tool the session lacks comes back "not found" and the next turn is served anyway.
MCP_SERVERS_REACH_AN_ACP_SESSION = Case(
    name="an mcp server added with mcp add is offered to an acp session and its tool runs",
    script=Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall("note", {"text": "from the editor", "tenant_id": "t-1"})]),
            "Noted.",
        ]
    ),
    steps=[
        serve("rec", "mcp-stdio"),
        step(
            "mcp",
            "add",
            "rec",
            "--transport",
            "stdio",
            "--command",
            "{rec_command}",
            "--args",
            "{rec_args}",
        ),
        prompt("take a note", permission="allow", tool_output_has=["noted: from the editor"]),
        received(
            "rec",
            "note calls",
            mcp_arguments("note"),
            expect=[{"text": "from the editor", "tenant_id": "t-1"}],
        ),
    ],
)


def _answers(label: str) -> Script:
    # One dialog for both surfaces, each a new process starting at turn 0. ACP's router
    # reads turn 0 as its label and drops its tool call, then replies with turn 1; `run`
    # lands on turn 0's mission_finish (its closing turn is served only sometimes).
    return Script(
        model=label,
        turns=[
            Turn(text="general", tool_calls=[mission_finish("landed")]),
            Turn(text=f"From {label}.", optional=True),
        ],
    )


# function: two ACP sessions, one before and one after the switch, and a `run` between.
def test_switching_default_model_switches_the_model_of_both_an_acp_session_and_run(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(_answers("alpha"), name="alpha", filename="alpha.json")
    instance.use_script(_answers("beta"), name="beta", filename="beta.json", make_default=False)
    with open_acp(instance) as before:
        assert "From alpha." in before.prompt("who answers?").text, before.describe()

    instance.must("config", "set", "default-model", "beta")
    with open_acp(instance) as after:
        turn = after.prompt("who answers now?")
    assert "From beta." in turn.text and "alpha" not in turn.text, turn.describe()
    ran = instance.must("run", "--policy", "hitl-policy-run.json", "--timeout", "90s", "hi")
    ran.assert_stderr_contains(re.compile(r"model=beta script=\S*beta\.json"))
    ran.refute_stderr_contains("model=alpha")


# function: the history is replayed by a second agent process on session/load, a request
# outside any prompt (as test_editors.py's replay of the prompt and the reply).
def test_reopening_a_session_replays_its_tool_call_with_the_output(instance: Instance) -> None:
    instance.init()
    instance.write("notes.txt", "the replayed line 4417\n")
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
                "Read it.",
            ]
        )
    )
    with open_acp(instance) as first:
        first.prompt("read the notes")
        session = first.session_id
    with open_acp(instance, handshake=False) as second:
        second.initialize()
        second.call(
            "session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []}
        )
        second.wire.listen(1.0)
        replayed = [
            m.payload["params"]["update"]
            for m in second.messages
            if m.direction == "received" and m.method == "session/update"
        ]
    calls = [u for u in replayed if u.get("sessionUpdate") in ("tool_call", "tool_call_update")]
    instance.recorder.note(f"replayed tool updates: {calls}")
    assert any("read_file" in str(u.get("title", "")) for u in calls), replayed
    assert "the replayed line 4417" in str(calls), replayed


# function: session/new names a cwd other than the directory the agent was started in,
# which open_acp's handshake does not.
def test_acpx_reads_under_the_cwd_its_session_names_not_the_directory_it_was_started_in(
    instance: Instance,
) -> None:
    instance.init()
    # acpx is no router: its first turn is the read, no label turn.
    instance.use_script(
        Script(turns=[Turn(tool_calls=[ToolCall("read_file", {"path": "plan.txt"})]), "Read."])
    )
    instance.write("plan.txt", "the started-in directory's plan\n")
    elsewhere = instance.tmp / "elsewhere"
    elsewhere.mkdir(parents=True, exist_ok=True)
    (elsewhere / "plan.txt").write_text("the session cwd's plan 5521\n", encoding="utf-8")
    with open_acp(instance, subcommand="acpx", handshake=False) as acp:
        acp.initialize()
        acp.new_session(cwd=elsewhere)
        turn = acp.prompt("read the plan")
    assert turn.paths_read == [str(elsewhere / "plan.txt")], turn.describe()
    assert "the session cwd's plan 5521" in str(turn.tool_outputs), turn.describe()
    assert "started-in" not in str(turn.tool_outputs), turn.describe()


# The `acp` declaration init seeds in ~/.contenox/agents/acp/: a router over branch
# directories. A line added to the general branch's prompt reaching the model is the
# proof the session's chain is compiled from that declaration as it stands.
ACP_CHAIN_IS_COMPILED_FROM_THE_ACP_DECLARATION = Case(
    name="the first acp session after an edit to the acp declaration runs the edited chain",
    script=Script(turns=[route(), "Hello."]),
    steps=[
        edit(
            "agents/acp/general/agent.md",
            append="\nDeclaration canary 7306: the general branch of the acp agent.\n",
            under="contenox",
        ),
        prompt("hello", text_has=["Hello."]),
        model_saw("Declaration canary 7306"),
    ],
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME, init, scripted dialog ['general','Hello.']; appended "
            "'Declaration canary 7306.' to ~/.contenox/agents/acp/general/agent.md; "
            ".generated/chain-agent-acp.json before the session: grep -c 7306 = 0. ACP session 1 "
            "(initialize, session/new, prompt 'hi'): end_turn; state cli-e895e374f2927976 = "
            "chain-acp-route(general) -> chain-acp-general-agent, its --raw holds 'You are "
            "Contenox running inside the user's editor' but grep -c 7306 = 0; .generated file "
            "after session 1: 1. Session 2: state cli-8cc5d70b844542cb grep -c 7306 = 1. Session "
            "1's stderr shows the order: 'operation=load subject=acp_chain "
            "source=.../.generated/chain-agent-acp.json' at 13:22:56.406, then 'operation=sync "
            "subject=declared_agents' at .439, so the chain is loaded before the declarations are"
            " re-transpiled. Note: integrations/editors/zed.md:48 (also jetbrains.md:57, "
            "aionui.md:44/62): ACP sessions load a chain compiled from the acp declaration; "
            "guide/agents.md:22-23 'Drop it in and the next run picks it up'; reference/agents-"
            "config.md:80 'regenerates every agent it affects on the next run'. The first session"
            " after the edit runs the stale compile; nothing says ACP lags one session behind. "
            "guide/chains/naming.md:78 (resolution order .generated first) doesn't excuse it, "
            "because the compiled file it reads is stale at load time."
        ),
        title=(
            "the first ACP session after an edit to the acp declaration runs the chain "
            "compiled before the edit"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a dialog\n"
            "contenox backend add scripted --type scripted-test --script ./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            "# dialog: 'general' (the router's label), then 'Hello.'\n"
            'echo "Declaration canary 7306." >> ~/.contenox/agents/acp/general/agent.md\n'
            "contenox acp   # ACP client: initialize, session/new, one prompt; close\n"
            "contenox state show <its request id> --raw | grep -c 7306   # 0: the general "
            "branch's system prompt lacks the line\n"
            "# ~/.contenox/.generated/chain-agent-acp.json now holds the line (rewritten as "
            "that session started);\n"
            "# a second `contenox acp` session's captured state has it (grep -c: 1)"
        ),
        promised=(
            'integrations/editors/zed.md:48 "ACP sessions load a chain compiled from the '
            '`acp` agent declaration"'
        ),
        observed=(
            "the first session after the edit sends the general branch's old prompt; only "
            "the next session sends the edited one (a `run` after an edit of "
            "~/.contenox/agents/run.md sends the edited prompt at once)"
        ),
        bears_on=(
            'guide/agents.md:22-23 "the body becomes its system prompt. Drop it in and the '
            'next run picks it up."',
            'integrations/editors/jetbrains.md:57 "ACP sessions load a chain compiled from the '
            '`acp` agent declaration"',
            'integrations/editors/aionui.md:44 "Every prompt runs the ACP session chain, '
            'compiled from the `acp` agent declaration"',
        ),
    ),
)


# function: two ACP clients in turn; the first goes away with its card open, the second
# loads the session and approves the ask it is offered again.
def test_answering_an_ask_after_the_editor_closed_resumes_the_run_and_the_write_lands(
    instance: Instance,
) -> None:
    instance.init()
    instance.use_script(WRITE_GREETING)
    first = open_acp(instance, permission="defer")
    session = first.session_id
    ask = first.start_prompt("write the greeting").wait_for_permission(timeout=60)
    first.process.interrupt()  # the editor goes away with the card on screen
    first.process.wait(timeout=60)
    assert not (instance.work / "out.txt").exists(), "the write ran before anyone answered"
    assert [a.id for a in approvals(instance)] == [ask.ask_id]

    with open_acp(instance, permission="allow") as second:
        second.call(
            "session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []}
        )

        def written() -> bool:
            second.wire.listen(0.5)
            return (instance.work / "out.txt").exists()

        wait_until(written, timeout=60, interval=0.1, what="the approved write to land")
    assert (instance.work / "out.txt").read_text() == "hello\n"
    assert approvals(instance) == []


# acpx is no router: its first turn is the read. Line 2 of three, so a whole-file read
# would show lines 1 and 3 too.
ACPX_READS_A_LINE_RANGE = Case(
    name="acpx reads a line range of a workspace file without raising an ask",
    script=Script(
        turns=[
            Turn(
                tool_calls=[
                    ToolCall(
                        "read_file_range", {"path": "notes.txt", "start_line": 2, "end_line": 2}
                    )
                ]
            ),
            "Read.",
        ]
    ),
    files={"notes.txt": "line one 1101\nline two 2202\nline three 3303\n"},
    steps=[
        prompt(
            "read line two",
            acp_command="acpx",
            tool_output_has=["line two 2202"],
            requests_lack=["session/request_permission"],
        ),
        acp_turn(
            "lines one and three in a tool output",
            lambda t: [n for n in ("1101", "3303") if n in str(t.tool_outputs)],
            expect=[],
        ),
    ],
)

# ~/.contenox/system/ holds the shipped chains; a broken shipped copy of the acp chain
# that a session read before the compiled one would stop it starting.
THE_COMPILED_CHAIN_IS_READ_BEFORE_THE_SHIPPED_ONE = Case(
    name="acp runs the compiled chain when a broken shipped copy sits in the system directory",
    script=Script(turns=[route(), "Hello."]),
    home_files={"system/chain-agent-acp.json": "{not a chain\n"},
    steps=[prompt("hello", text_has=["Hello."])],
)


# The control is test_acpx.py's read of the same kind of file, which the shipped
# `[envelopes.acpx]` answers: only the envelope's files.read grant changes here.
A_TIGHTENED_ACPX_ENVELOPE_REFUSES_THE_READ = Case(
    name="tightening the acpx envelope in agents toml refuses the read it allowed",
    script=Script(turns=[Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]), "Done."]),
    files={"notes.txt": "the answer is 42\n"},
    steps=[
        edit(
            "agents.toml",
            replace={
                r'(\[envelopes\.acpx\.files\.read\]\s*\n)grant = "allow"': r'\1grant = "deny"'
            },
            under="contenox",
        ),
        prompt(
            "read the notes",
            acp_command="acpx",
            files_read=[],
            tool_output_has=["Denied by the active policy hitl-policy-acpx.json"],
            text_lacks=["the answer is 42"],
            requests_lack=["session/request_permission"],
        ),
    ],
)


# Nobody answers the editor's card: the envelope's own wait of 2s elapses and its
# on_timeout (deny) applies, so the turn carries on with the write refused. The control
# changes only the write's grant, to allow: the same turn writes without an ask.
AN_UNANSWERED_EDITOR_ASK_RESOLVES_TO_ITS_ON_TIMEOUT = [
    Case(
        name=name,
        script=WRITE_GREETING,
        home_files={
            "agents.toml": (
                '[envelopes.gate]\ndefault_action = "allow"\n[envelopes.gate.tools]\n'
                f'"local_fs.write_file" = {grant}\n'
            )
        },
        steps=[
            prompt(
                "write the greeting",
                acp_args=["--hitl-policy", "gate"],
                permission="defer",
                permission_requests=asks,
                files_written=written,
                tool_output_has=outputs,
                timeout=120,
            ),
            workspace_file("out.txt", expect=content),
        ],
    )
    for name, grant, asks, written, outputs, content in (
        (
            "an ask nobody answers in the editor resolves to its on timeout deny and the turn "
            "carries on",
            '{ grant = "approve", timeout = "2s", on_timeout = "deny" }',
            1,
            [],
            ["Approval timed out. The operation was automatically denied."],
            None,
        ),
        (
            "the same turn with the write allowed writes without an ask",
            '"allow"',
            0,
            ["out.txt"],
            [],
            "hello\n",
        ),
    )
]


# `opt-in-beta` is left unset. What is asserted is that the shipped planner is fired by
# name, not refused for the beta; whether its unit lands on this dialog is not the point.
# snapshot=False: the unit's report chunks race the end of the firing turn (as in
# test_mission_slash.py), so two clean runs record different agent text.
THE_SHIPPED_AGENT_PLANNER_FIRES_WITHOUT_THE_BETA = Case(
    name="mission naming the shipped agent planner fires it without opt in beta",
    script=Script(
        turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", "planner home")]),
            Turn(tool_calls=[mission_finish("landed")]),
            Turn(text="Mission finished.", optional=True),
        ]
    ),
    steps=[
        prompt(
            "/mission --policy hitl-policy-run.json agent-planner plan the release",
            text_has=['Mission fired at named agent "agent-planner"'],
            text_lacks=["opt-in-beta"],
        ),
        probe(
            "missions fired",
            lambda i: [m.agent for m in missions(i)],
            expect=["agent-planner"],
        ),
    ],
    snapshot=False,
)


def _replayed_text(instance: Instance, session: str, *args: str) -> tuple[object, str]:
    """session/load of ``session`` by a fresh `contenox acp <args>`: its answer and replay."""
    with open_acp(instance, *args, handshake=False) as acp:
        acp.initialize()
        answer = acp.request(
            "session/load", {"sessionId": session, "cwd": str(instance.work), "mcpServers": []}
        )
        acp.wire.listen(1.0)
        text = " ".join(
            str(m.payload["params"]["update"].get("content", ""))
            for m in acp.messages
            if m.direction == "received" and m.method == "session/update"
        )
    return answer, text


# function: three agent processes, each loading the session over the wire. The explicit
# `--db ~/.contenox/local.db` finds it; a database elsewhere does not: the history is
# in that file, not in the process or some other store. (A database elsewhere holds no
# config either: that agent serves setup-only, and says so.)
def test_a_session_s_history_lives_in_the_home_local_db(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=[route(), "Kept in the database 6630."]))
    with open_acp(instance) as first:
        first.prompt("remember this")
        session = first.session_id
    home_db = instance.home / ".contenox" / "local.db"
    _, found = _replayed_text(instance, session, "--db", str(home_db))
    instance.recorder.note(f"--db ~/.contenox/local.db replays the reply: {'6630' in found}")
    assert "Kept in the database 6630." in found, found
    answer, elsewhere = _replayed_text(instance, session, "--db", str(instance.tmp / "other.db"))
    instance.recorder.note(f"--db elsewhere replays the reply: {'6630' in elsewhere}")
    assert "6630" not in elsewhere, (answer, elsewhere)


def _ask_options(turn: PromptTurn) -> list[list[tuple[object, object]]]:
    """Each permission request's options as (name, kind)."""
    return [
        [(o.get("name"), o.get("kind")) for o in ask.options] for ask in turn.permission_requests
    ]


# What AionUi renders as its Allow/Deny dialog: the options the request carries. Deny is
# chosen, so the write is refused, as the option said.
THE_PERMISSION_REQUEST_OFFERS_ALLOW_AND_DENY = Case(
    name="a gated call s permission request offers exactly allow and deny",
    script=WRITE_GREETING,
    steps=[
        prompt("write the greeting", permission="deny", files_written=[]),
        acp_turn(
            "the options of each permission request",
            _ask_options,
            expect=[[("Allow", "allow_once"), ("Deny", "reject_once")]],
        ),
        workspace_file("out.txt", expect=None),
    ],
)


def _sed_cards(turn: PromptTurn) -> dict[str, object]:
    """The permission cards' titles, and whether a sed tool card names notes.txt."""
    titles = [str(c.get("title", "")) for c in turn.tool_calls.values()]
    return {
        "permission cards": [ask.title for ask in turn.permission_requests],
        "a sed tool card names notes.txt": any(re.search(r"sed.*notes\.txt", t) for t in titles),
    }


# sed on an existing file needs a read of it first (integrations/tools/local.md).
THE_CARDS_OF_A_SED_NAME_THE_FILE = Case(
    name="the cards of a sed name the file it edits",
    files={"notes.txt": "old line\n"},
    script=Script(
        turns=[
            route(),
            Turn(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
            Turn(
                tool_calls=[
                    ToolCall("sed", {"path": "notes.txt", "pattern": "old", "replacement": "new"})
                ]
            ),
            "Edited.",
        ]
    ),
    steps=[
        prompt("edit the notes", permission="allow"),
        acp_turn(
            "the cards",
            _sed_cards,
            expect=satisfies(
                lambda v: (
                    len(v["permission cards"]) == 1
                    and "notes.txt" in v["permission cards"][0]
                    and v["a sed tool card names notes.txt"]
                ),
                "one permission card naming notes.txt, and a sed tool card naming notes.txt",
            ),
        ),
        workspace_file("notes.txt", expect="new line\n"),
    ],
)
