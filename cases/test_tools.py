"""What a model may call: a chain task's tool allowlist, the `{{tools}}` macros, and local files.

The allowlist cases run a chain of their own as a workspace chain-agent fired with `mission fire`
(one chat_completion task and its execute_tool_calls loop, both given the same
`execute_config.tools`), with the recording MCP server `rec` registered over stdio.
What the model was offered is the `{{tools}}` manifest in its system prompt; what
it could call is the tool result (`tool <name> not found`) and the server's record.

The local file cases run under `contenox run`, where the runtime serves local_fs
itself, rooted at the directory the command started in, under an envelope that
allows every call — so a refusal comes from the tool, not from an approval gate.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness import Case, Instance, Script, ToolCall, Turn, defect, mission_finish, probes, step
from harness.servers import McpServer, read_mcp_records, stdio_command
from harness.servers.wiring import (
    OPEN_ENVELOPE,
    model_view,
    offered_roster,
    open_envelope,
    run_mission,
)

MANIFEST = "Available tools (tools -> function names):\n{{tools}}"
ABSENT = object()


def _chain(tools: Any = ABSENT, system: str = MANIFEST) -> dict[str, Any]:
    config: dict[str, Any] = {"model": "{{var:model}}", "provider": "{{var:provider}}"}
    if tools is not ABSENT:
        config["tools"] = tools
    runner: dict[str, Any] = {} if tools is ABSENT else {"tools": tools}
    return {
        "id": "allowlist",
        "tasks": [
            {
                "id": "ask",
                "handler": "chat_completion",
                "system_instruction": system,
                "execute_config": config,
                "transition": {
                    "branches": [
                        {"operator": "equals", "when": "tool_call", "goto": "run"},
                        {"operator": "default", "goto": "end"},
                    ]
                },
            },
            {
                "id": "run",
                "handler": "execute_tool_calls",
                "input_var": "ask",
                "execute_config": runner,
                "transition": {"branches": [{"operator": "default", "goto": "ask"}]},
            },
        ],
    }


def _fire_chain(instance: Instance, chain: dict[str, Any], *calls: ToolCall) -> McpServer:
    """init, the open envelope, `rec` over HTTP, then fire the chain; returns the server.

    `rec` is the harness's HTTP server, already listening when contenox starts: a
    stdio server still importing its SDK when the task starts is callable, but the
    `{{tools}}` manifest rendered at that moment can miss it (seen: `{}`).

    The chain is a chain-agent file in the workspace, fired with `mission fire`. It has
    no mission_finish, so after its first run the drive loop prompts it again and the
    dialog runs out: the cases read the first captured run only.
    """
    instance.init()
    open_envelope(instance)
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", "rec", "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    instance.write(f".contenox/chain-agent-{chain['id']}.json", json.dumps(chain, indent=2))
    turns: list[Turn | str] = [Turn(text="Calling.", tool_calls=list(calls))] if calls else []
    instance.use_script(Script(turns=[*turns, "Done."], runs_past_end=True))
    instance.contenox(
        "mission",
        "fire",
        chain["id"],
        "go",
        "--wait",
        "--policy",
        OPEN_ENVELOPE,
        "--timeout",
        "60s",
    )
    return record


def _first_run(instance: Instance) -> str:
    runs = probes.captured_requests(instance)
    assert runs, "the chain never ran: `contenox state list` is empty"
    return runs[0]


def _called(server: McpServer | Path) -> list[str]:
    records = server.records() if isinstance(server, McpServer) else read_mcp_records(server)
    return [r.tool or "" for r in records if r.method == "tools/call"]


# ---------------------------------------------------------------- the allowlist


@pytest.mark.parametrize("tools", [ABSENT, None, []], ids=["absent", "null", "empty"])
@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_a_task_without_an_allowlist_or_with_an_empty_one_offers_no_tools(
    instance: Instance, tools: Any
) -> None:
    # function: needs a server record read after the run
    record = _fire_chain(instance, _chain(tools), ToolCall("add", {"a": 1, "b": 2}))

    assert offered_roster(instance, _first_run(instance)) == {}
    assert "tool add not found" in model_view(instance)
    assert _called(record) == []


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_a_named_allowlist_offers_only_the_named_toolsets(instance: Instance) -> None:
    # function: needs a server record read after the run
    record = _fire_chain(
        instance,
        _chain(["rec"]),
        ToolCall("add", {"a": 1, "b": 2}),
        ToolCall("echo", {"text": "x"}),
    )

    # Only `rec` may be in the manifest. Whether it is there at all varies from run to
    # run (a connected MCP server is sometimes missing from `{{tools}}`: one chain
    # fired twice against the same warm server listed it once and omitted it once),
    # so the call and the refusal are what prove the allowlist.
    assert set(offered_roster(instance, _first_run(instance))) <= {"rec"}
    assert _called(record) == ["add"]
    assert "tool echo not found" in model_view(instance)


def test_a_star_allowlist_offers_every_connected_toolset_namespaced_ones_included(
    instance: Instance,
) -> None:
    # function: needs a server record read after the run
    record = _fire_chain(instance, _chain(["*"]), ToolCall("add", {"a": 1, "b": 2}))

    roster = offered_roster(instance, _first_run(instance))
    # `rec` itself is sometimes missing from the manifest (see the named-allowlist
    # case); the call reaching it is what shows `*` admitted it.
    assert {"native-echo", "native-git", "native-fs-browse", "native-jq"} <= set(roster)
    assert _called(record) == ["add"]


@pytest.mark.parametrize(
    "tools", [["*", "!rec"], ["!rec", "*"]], ids=["exclusion-after", "exclusion-before"]
)
@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_an_exclusion_wins_over_star_wherever_it_stands(
    instance: Instance, tools: list[str]
) -> None:
    # function: needs a server record read after the run
    record = _fire_chain(instance, _chain(tools), ToolCall("add", {"a": 1, "b": 2}))

    roster = offered_roster(instance, _first_run(instance))
    assert "rec" not in roster and "native-echo" in roster
    assert "tool add not found" in model_view(instance)
    assert _called(record) == []


def test_an_exclusion_removes_a_namespaced_in_process_toolset(instance: Instance) -> None:
    # function: needs a server record read after the run
    _fire_chain(instance, _chain(["*", "!native-git"]))

    roster = offered_roster(instance, _first_run(instance))
    assert "native-git" not in roster and "native-echo" in roster


def test_an_unknown_name_in_an_exact_allowlist_is_ignored(instance: Instance) -> None:
    # function: needs a server record read after the run
    record = _fire_chain(instance, _chain(["rec", "no-such-toolset"]), ToolCall("count", {}))

    assert set(offered_roster(instance, _first_run(instance))) <= {"rec"}
    assert _called(record) == ["count"]


# ---------------------------------------------------------------- the macros


def _macro_lines(instance: Instance, tools: list[str], *lines: str) -> dict[str, str]:
    _fire_chain(instance, _chain(tools, "\n".join(lines)))
    [prompt] = probes.system_prompts(instance, _first_run(instance))
    return dict(line.split("=", 1) for line in prompt.splitlines())


def test_the_toolservice_tools_macros_render_the_allowed_toolsets_and_their_tools(
    instance: Instance,
) -> None:
    # function: needs the system prompt read after the run
    lines = _macro_lines(
        instance,
        ["native-echo"],
        "MANIFEST={{tools}}",
        "TOOLS={{toolservice:tools}}",
        "ONE={{toolservice:tools native-echo}}",
    )

    assert json.loads(lines["MANIFEST"]) == {"native-echo": ["echo"]}
    assert json.loads(lines["TOOLS"]) == ["native-echo"]
    assert json.loads(lines["ONE"]) == ["echo"]


def test_the_toolservice_list_macro_renders_the_same_as_tools(instance: Instance) -> None:
    # function: needs the system prompt read after the run
    lines = _macro_lines(
        instance, ["native-echo"], "LIST={{toolservice:list}}", "MANIFEST={{tools}}"
    )

    assert json.loads(lines["LIST"]) == json.loads(lines["MANIFEST"]) == {"native-echo": ["echo"]}


def test_the_template_macros_render_chain_host_time_and_caller_variables(
    instance: Instance,
) -> None:
    # function: needs a server record read after the run
    system = "\n".join(
        [
            "CHAIN={{chain:id}}",
            "OS={{host:os}}",
            "ARCH={{host:arch}}",
            "DAY={{now:2006-01-02}}",
            "MODEL={{var:model}}",
        ]
    )
    _fire_chain(instance, _chain(["rec"], system))

    [prompt] = probes.system_prompts(instance, _first_run(instance))
    lines = dict(line.split("=", 1) for line in prompt.splitlines())
    assert lines["CHAIN"] == "allowlist"
    assert lines["OS"] == "linux"
    assert lines["ARCH"] in ("amd64", "arm64")
    assert len(lines["DAY"]) == 10 and lines["DAY"][4] == "-" and lines["DAY"][7] == "-"
    assert lines["MODEL"] == "scripted-test"


@defect(
    "a chain task with system_instruction 'NOW={{now}}' is sent 'NOW=2026-11-30' — the date "
    "alone, no time or zone (`state show --raw`, first system message). "
    "integrations/tools/index.md, Template variables: '{{now}} — Current time in RFC3339 format'"
)
def test_the_now_macro_renders_the_current_time_in_rfc3339(instance: Instance) -> None:
    # function: needs the system prompt read after the run
    lines = _macro_lines(instance, ["native-echo"], "NOW={{now}}")

    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", lines["NOW"])


def test_nothing_is_added_to_a_system_instruction_it_does_not_declare(instance: Instance) -> None:
    # function: needs a server record read after the run
    _fire_chain(instance, _chain(["rec"], "You are terse."))

    assert probes.system_prompts(instance, _first_run(instance)) == ["You are terse."]


# ---------------------------------------------------------------- local files under `run`

SECRET = "outside-secret-4127"


def _file_run(instance: Instance, *calls: ToolCall) -> str:
    instance.init()
    open_envelope(instance)
    (instance.root / "outside.txt").write_text(SECRET + "\n", encoding="utf-8")
    run_mission(
        instance,
        Script(
            turns=[
                Turn(text="Touching files.", tool_calls=list(calls)),
                Turn(tool_calls=[mission_finish("landed")]),
                "Done.",
            ]
        ),
        "touch the files",
    )
    return model_view(instance)


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_read_file_inside_the_workspace_returns_its_content(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    instance.write("inside.txt", "inside-content-2291\n")

    seen = _file_run(instance, ToolCall("read_file", {"path": "inside.txt"}))

    assert "inside-content-2291" in seen


@pytest.mark.parametrize(
    "path", ["../outside.txt", "{root}/outside.txt"], ids=["dotdot", "absolute"]
)
@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_read_file_refuses_a_path_outside_the_workspace(instance: Instance, path: str) -> None:
    # function: needs the workspace prepared before the run
    seen = _file_run(instance, ToolCall("read_file", {"path": path.format(root=instance.root)}))

    assert SECRET not in seen


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_read_file_refuses_a_link_in_the_workspace_that_points_outside_it(
    instance: Instance,
) -> None:
    # function: needs the workspace prepared before the run
    (instance.work / "link.txt").symlink_to(instance.root / "outside.txt")

    seen = _file_run(instance, ToolCall("read_file", {"path": "link.txt"}))

    assert SECRET not in seen


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_write_file_refuses_a_path_outside_the_workspace(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    _file_run(instance, ToolCall("write_file", {"path": "../escaped.txt", "content": "escaped"}))

    assert not (instance.root / "escaped.txt").exists()


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_write_file_refuses_to_write_through_a_link_that_points_outside(
    instance: Instance,
) -> None:
    # function: needs the workspace prepared before the run
    (instance.work / "out").symlink_to(instance.root)

    _file_run(instance, ToolCall("write_file", {"path": "out/escaped.txt", "content": "escaped"}))

    assert not (instance.root / "escaped.txt").exists()


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_read_file_refuses_a_denied_path_substring(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    instance.write("node_modules/pkg/index.js", "denied-content-8813\n")

    seen = _file_run(instance, ToolCall("read_file", {"path": "node_modules/pkg/index.js"}))

    assert "denied-content-8813" not in seen


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_write_file_over_an_unread_existing_file_is_refused_until_it_is_read(
    instance: Instance,
) -> None:
    # function: needs the workspace prepared before the run
    target = instance.write("notes.txt", "original\n")

    _file_run(instance, ToolCall("write_file", {"path": "notes.txt", "content": "clobbered\n"}))

    assert target.read_text(encoding="utf-8") == "original\n"


@defect(
    "`contenox run --policy <allow-all envelope>` with a scripted local_shell "
    "{command: echo, args: [from-the-shell-6612]} call: the tool result carries the echoed "
    "text — run serves local_shell itself (as contenox-cli.md `contenox run` says: 'the "
    "runtime serves local_fs and local_shell itself'). local.md: 'a local_fs or local_shell "
    "call comes back to the model as `tool local_shell not found`' — the two pages disagree"
)
def test_under_run_a_local_shell_call_comes_back_not_found(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    seen = _file_run(
        instance, ToolCall("local_shell", {"command": "echo", "args": ["from-the-shell-6612"]})
    )

    assert "tool local_shell not found" in seen


def _envelope(instance: Instance, name: str, body: str) -> str:
    with (instance.home / ".contenox" / "agents.toml").open("a", encoding="utf-8") as toml:
        toml.write(f'\n[envelopes.{name}]\ndescription = "e2e"\n{body}\n')
    return name


def _finish(*calls: ToolCall) -> Script:
    return Script(
        turns=[
            *[Turn(text="Working.", tool_calls=[call]) for call in calls],
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_local_fs_task_offers_exactly_its_five_tools(instance: Instance) -> None:
    # function: needs the roster read after the run
    _file_run(instance)

    assert offered_roster(instance, _first_run(instance))["local_fs"] == sorted(
        ["read_file", "write_file", "edit_file", "sed", "read_file_range"]
    )


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_local_shell_refuses_a_command_outside_the_allowed_commands(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    seen = _file_run(instance, ToolCall("local_shell", {"command": "id"}))

    assert "uid=" not in seen


def test_edit_file_replaces_a_unique_match_and_refuses_an_ambiguous_one(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    target = instance.write("notes.txt", "alpha\nbeta\nalpha\n")
    instance.init()
    open_envelope(instance)

    run_mission(
        instance,
        _finish(
            ToolCall("read_file", {"path": "notes.txt"}),
            ToolCall(
                "edit_file", {"path": "notes.txt", "old_string": "alpha", "new_string": "omega"}
            ),
            ToolCall(
                "edit_file", {"path": "notes.txt", "old_string": "zzz", "new_string": "omega"}
            ),
            ToolCall(
                "edit_file", {"path": "notes.txt", "old_string": "beta", "new_string": "gamma"}
            ),
        ),
        "edit",
    ).assert_success()

    assert target.read_text(encoding="utf-8") == "alpha\ngamma\nalpha\n"


def test_edit_file_with_replace_all_replaces_every_occurrence(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    target = instance.write("notes.txt", "alpha\nbeta\nalpha\n")
    instance.init()
    open_envelope(instance)

    run_mission(
        instance,
        _finish(
            ToolCall("read_file", {"path": "notes.txt"}),
            ToolCall(
                "edit_file",
                {
                    "path": "notes.txt",
                    "old_string": "alpha",
                    "new_string": "omega",
                    "replace_all": True,
                },
            ),
        ),
        "edit",
    ).assert_success()

    assert target.read_text(encoding="utf-8") == "omega\nbeta\nomega\n"


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_files_read_deny_in_the_envelope_refuses_read_file(instance: Instance) -> None:
    # function: needs the workspace prepared before the run
    instance.write("inside.txt", "inside-content-5530\n")
    instance.init()
    policy = _envelope(instance, "e2e_noread", 'default_action = "allow"\nfiles.read = "deny"')

    run_mission(
        instance, _finish(ToolCall("read_file", {"path": "inside.txt"})), "read", policy=policy
    )

    assert "inside-content-5530" not in model_view(instance)


def test_a_connected_tool_falls_to_the_envelopes_default_action(instance: Instance) -> None:
    # function: needs a server record read after the run
    instance.init()
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", "rec", "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    policy = _envelope(
        instance,
        "e2e_fs_only",
        'default_action = "deny"\nfiles.read = "allow"\nfiles.write = "allow"',
    )

    run_mission(
        instance,
        _finish(ToolCall("note", {"text": "hi", "tenant_id": "t"})),
        "note",
        policy=policy,
        timeout="40s",
    )

    assert _called(record) == []


def test_an_agent_declaration_without_a_tools_line_inherits_every_tool(instance: Instance) -> None:
    # function: needs a server record read after the run
    instance.init()
    open_envelope(instance)
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", "rec", "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    declaration = instance.home / ".contenox" / "agents" / "inherit.md"
    declaration.write_text(
        "---\nname: inherit\ndescription: An e2e agent that names no tools\n---\n\n"
        "You carry out one task.\n",
        encoding="utf-8",
    )
    instance.use_script(_finish(ToolCall("note", {"text": "from the agent", "tenant_id": "t"})))

    instance.must("run", "inherit", "--policy", OPEN_ENVELOPE, "--timeout", "90s", "note it")

    assert _called(record) == ["note"]


@pytest.mark.no_transcript(
    reason="its transcript differed between two clean runs on 2026-11-30 (a loopback port, "
    "a racy captured state): redact what is volatile, then drop this mark"
)
def test_a_tools_task_calls_one_remote_operation_with_no_model_and_routes_on_its_output_template(
    instance: Instance,
) -> None:
    # function: needs a server the harness starts
    from harness.servers import serve_http

    service = serve_http(instance)
    instance.init()
    open_envelope(instance)
    instance.must("tools", "add", "svc", "--url", service.url)
    chain = {
        "id": "direct",
        "tasks": [
            {
                "id": "weather",
                "handler": "tools",
                "tools": {"name": "svc", "tool_name": "get_weather", "args": {"city": "Oslo"}},
                "output_template": "{{.forecast}}",
                "transition": {
                    "branches": [
                        {"operator": "equals", "when": "sunny", "goto": "sunny"},
                        {"operator": "default", "goto": "other"},
                    ]
                },
            },
            {
                "id": "sunny",
                "handler": "noop",
                "transition": {"branches": [{"operator": "default", "goto": "end"}]},
            },
            {
                "id": "other",
                "handler": "noop",
                "transition": {"branches": [{"operator": "default", "goto": "end"}]},
            },
        ],
    }
    instance.write(".contenox/chain-agent-direct.json", json.dumps(chain))
    instance.use_script(Script(turns=["No model is asked."], runs_past_end=True))

    instance.contenox(
        "mission", "fire", "direct", "go", "--wait", "--policy", OPEN_ENVELOPE, "--timeout", "30s"
    )

    call = service.requests_to("/weather", "GET")[0]
    assert call.query["city"] == ("Oslo",)
    steps = probes.captured_steps(instance, _first_run(instance))
    assert [s.task for s in steps] == ["weather", "sunny"]


@defect(
    'a chain task with tools ["native-echo", "native-jq"] and hide_tools '
    '["native-echo.echo"] (and, tried by hand, ["echo"]): the model\'s `{{tools}}` manifest '
    'still lists {"native-echo":["echo"], …} and a scripted echo call executes '
    "('tool native-echo.echo execution failed: echo: unknown argument(s): text (allowed: input)' "
    "for a wrong argument name; it ran). specification/handlers.md, chat_completion: "
    "'execute_config.hide_tools — Tools to suppress (by namespaced name) from both the registry "
    "tools selected via tools and any client-passed tools'"
)
def test_hide_tools_suppresses_a_tool_the_allowlist_selected(instance: Instance) -> None:
    # function: needs the tool result read after the run
    chain = _chain(["native-echo", "native-jq"])
    chain["tasks"][0]["execute_config"]["hide_tools"] = ["native-echo.echo"]
    _fire_chain(instance, chain, ToolCall("echo", {"input": "hidden-echo-4410"}))

    assert "echo" not in offered_roster(instance, _first_run(instance)).get("native-echo", [])
    assert "tool echo not found" in model_view(instance)


@defect(
    "`contenox acp` (default envelope) with a scripted write_file {path: fresh.txt, content: "
    "'diff-line-7120\\n'}: the session/request_permission carries toolCall.content "
    "[{type: content, content: {type: text, text: 'fresh.txt'}}] and rawInput — no diff "
    "(no ACP 'diff' content, no '+diff-line-7120' anywhere in the request). local.md, Approval "
    "diff: 'the approval prompt carries a unified diff of the exact change … A new file (no "
    "prior content) shows as an addition.'"
)
def test_a_gated_write_asks_with_a_diff_that_shows_a_new_file_as_an_addition(
    instance: Instance,
) -> None:
    # function: needs an ACP client
    from harness import open_acp, route

    instance.init()
    instance.use_script(
        Script(
            turns=[
                route(),
                Turn(
                    text="Writing.",
                    tool_calls=[
                        ToolCall("write_file", {"path": "fresh.txt", "content": "diff-line-7120\n"})
                    ],
                ),
                "Done.",
            ]
        )
    )
    with open_acp(instance, permission="deny") as acp:
        turn = acp.prompt("write the file")

    [ask] = turn.permission_requests
    shown = json.dumps(ask.params)
    assert "+diff-line-7120" in shown, turn.describe()
    assert not (instance.work / "fresh.txt").exists()


SERVE_MOUNTS_NO_LOCAL_TOOLS = Case(
    name="doctor's roster says a serve host mounts neither local_fs nor local_shell",
    # The roster is long and names this machine's paths; the one line is the point.
    snapshot=False,
    steps=[
        step(
            "doctor",
            exit_code=None,
            stdout_has=["local_fs, local_shell — not mounted under `contenox serve`"],
        )
    ],
)
