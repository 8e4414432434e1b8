"""A paired `contenox serve` reached through the relay, as the app reaches it (guide/serve.md).

The host is paired with the harness's loopback relay (harness/servers/relay.py) and
left running; the case then stands where the contenox app stands — behind the relay,
on an attachment of the host's link — and speaks ACP to it: it discovers the
sessions the host holds, starts one, reads its transcript back, answers (or walks
away from) an ask. What it checks is what the app would see, what the MCP server
the host was given received, and what `contenox approvals` / `contenox pair` say.

Every case is a function: it drives the relay, which no step type can express.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import Instance, Script, ToolCall, Turn, route
from harness.process import Process, start_contenox, wait_until
from harness.servers import read_mcp_records, stdio_command
from harness.servers.relay import Attachment, Link, Relay, serve_relay

INSTANCE_ID = "inst-e2e"
RUNNING = "Running. Press Ctrl-C to stop."
INIT = {"protocolVersion": 1, "clientCapabilities": {}}
# The host's ACP chain is a router: its first model turn is the classifier label.
GREETING = Script(turns=[route("general"), "Hello from the host."])
NOTE = {"tenant_id": "t1", "text": "from the app"}
NOTE_IT = Script(
    turns=[route("general"), Turn(text="Noting.", tool_calls=[ToolCall("note", NOTE)]), "Noted."]
)


def _paired(instance: Instance) -> Relay:
    """A relay for this case and this machine paired with it; `init` done."""
    relay = serve_relay(instance)
    instance.must("pair", relay.mint_key(instance_id=INSTANCE_ID), relay.url, env=relay.env)
    instance.init()
    return relay


def _with_note_server(instance: Instance) -> Path:
    """Attach the recording MCP server as `rec` (`note`, `count`, `add`); its record file."""
    record = instance.tmp / "rec.jsonl"
    command, args = stdio_command(record)
    instance.must(
        "mcp", "add", "rec", "--transport", "stdio", "--command", command, "--args", ",".join(args)
    )
    return record


def _host(instance: Instance, relay: Relay, *args: str) -> tuple[Process, str]:
    """Start `contenox serve <args>`; return it and its status screen up to "Running."."""
    host = start_contenox(instance, "serve", *args, env=relay.env)
    return host, host.wait_for_output(RUNNING, stream="stdout", timeout=60)


def _stop(host: Process) -> str:
    """Ctrl-C the host as its operator would; what it printed."""
    host.interrupt()
    return host.wait(timeout=60).stdout


def _app(link: Link) -> Attachment:
    """The app attached behind the relay, initialized."""
    app = link.attach()
    app.request("initialize", INIT)
    return app


def _new_session(app: Attachment, cwd: Path) -> str:
    new = app.request("session/new", {"cwd": str(cwd), "mcpServers": []})
    result = new.get("result")
    assert isinstance(result, dict) and isinstance(result.get("sessionId"), str), new
    return result["sessionId"]


def _prompt(sid: str, text: str) -> dict[str, object]:
    return {"sessionId": sid, "prompt": [{"type": "text", "text": text}]}


def _texts(messages: list[dict[str, object]], kind: str = "agent_message_chunk") -> list[str]:
    """The text of every ``session/update`` of ``kind`` among ``messages``."""
    out = []
    for message in messages:
        params = message.get("params")
        update = params.get("update") if isinstance(params, dict) else None
        if isinstance(update, dict) and update.get("sessionUpdate") == kind:
            content = update.get("content")
            if isinstance(content, dict) and isinstance(content.get("text"), str):
                out.append(content["text"])
    return out


def _seen(instance: Instance, app: Attachment, what: str = "what the app saw") -> dict[str, object]:
    """What the runtime sent the app, summarised, into the transcript.

    The order of an ask and the updates around it varies from run to run, so this
    keeps what does not: the asks, what the agent said, each tool call's last
    status and the start of its result, and the stop reason.
    """
    asks, said, stops = [], [], []
    titles: dict[str, str] = {}
    last: dict[str, str] = {}
    for message in app.messages():
        method = message.get("method")
        params = message.get("params")
        if not isinstance(params, dict):
            params = {}
        if method == "session/request_permission":
            call = params.get("toolCall")
            title = call.get("title") if isinstance(call, dict) else None
            options = [o.get("optionId") for o in params.get("options", []) if isinstance(o, dict)]
            asks.append(f"{title} {options}")
        elif method == "session/update" and isinstance(params.get("update"), dict):
            update = params["update"]
            kind = update.get("sessionUpdate")
            content = update.get("content")
            if kind == "agent_message_chunk" and isinstance(content, dict):
                said.append(str(content.get("text")))
            elif kind in ("tool_call", "tool_call_update"):
                cid = str(update.get("toolCallId"))
                titles.setdefault(cid, str(update.get("title", "")))
                out = str(update.get("rawOutput", ""))[:120]
                last[cid] = f"{update.get('status')} {out}".rstrip()
        elif method is None and isinstance(message.get("result"), dict):
            if "stopReason" in message["result"]:
                stops.append(message["result"]["stopReason"])
    seen: dict[str, object] = {
        "asks": asks,
        "agent said": "".join(said),
        "tool calls": [f"{titles[cid]}: {status}" for cid, status in last.items()],
        "stop": stops,
    }
    instance.recorder.probe(what, (), seen)
    return seen


def _notes(instance: Instance, record: Path) -> list[object]:
    """The `note` calls the MCP server received, into the transcript."""
    calls = [c.arguments for c in read_mcp_records(record) if c.method == "tools/call"]
    instance.recorder.probe("note calls the MCP server received", (), calls)
    return calls


def _allow(request: dict[str, object]) -> dict[str, object]:
    """The app's person taps Allow on the ask."""
    assert request.get("method") == "session/request_permission", request
    return {"outcome": {"outcome": "selected", "optionId": "allow"}}


def _deny(request: dict[str, object]) -> dict[str, object]:
    assert request.get("method") == "session/request_permission", request
    return {"outcome": {"outcome": "selected", "optionId": "deny"}}


# ---------------------------------------------------------------- one workspace, discovered


def test_a_host_refuses_a_session_the_app_asks_for_outside_the_workspace_it_was_launched_with(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    elsewhere = app.request("session/new", {"cwd": str(instance.home), "mcpServers": []})
    here = app.request("session/new", {"cwd": str(instance.work), "mcpServers": []})
    _stop(host)
    instance.recorder.probe("session/new for the home directory", (), elsewhere)
    error = elsewhere.get("error")
    assert isinstance(error, dict), elsewhere
    assert "not under any configured workspace root" in str(error.get("message")), elsewhere
    # Control: the workspace the host was launched with opens.
    assert isinstance(here.get("result"), dict) and "sessionId" in here["result"], here


def test_the_app_is_offered_no_workspace_to_choose_only_the_session_s_own_options(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    new = app.request("session/new", {"cwd": str(instance.work), "mcpServers": []})
    _stop(host)
    result = new.get("result")
    assert isinstance(result, dict), new
    options = result.get("configOptions")
    assert isinstance(options, list), new
    ids = sorted(str(o.get("id")) for o in options if isinstance(o, dict))
    instance.recorder.probe("the session's config options", (), ids)
    assert ids == ["agent", "hitl-policy", "model", "think", "token-limit"], new


def test_the_app_discovers_the_instance_and_the_sessions_it_already_holds_through_the_relay(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    link = relay.wait_link()
    first = _app(link)
    sid = _new_session(first, instance.work)
    first.request("session/prompt", _prompt(sid, "say hello"), timeout=90)
    # A second client (the app on another device) attaches and discovers.
    second = _app(link)
    listed = second.request("session/list", {})
    _stop(host)
    assert link.instance == INSTANCE_ID, link.describe()
    result = listed.get("result")
    assert isinstance(result, dict), listed
    sessions = [
        (s.get("sessionId"), s.get("cwd"), s.get("title"))
        for s in result.get("sessions", [])
        if isinstance(s, dict)
    ]
    instance.recorder.probe("session/list from the second client", (), sessions)
    assert sessions == [(sid, str(instance.work), "say hello")], listed


# ---------------------------------------------------------------- driving it through the relay


def test_the_app_starts_a_session_on_a_host_and_reads_its_transcript_back_through_the_relay(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    link = relay.wait_link()
    app = _app(link)
    sid = _new_session(app, instance.work)
    done = app.request("session/prompt", _prompt(sid, "say hello"), timeout=90)
    reader = _app(link)
    loaded = reader.request(
        "session/load", {"sessionId": sid, "cwd": str(instance.work), "mcpServers": []}
    )
    _stop(host)
    _seen(instance, app, "what the app that started the session saw")
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert "".join(_texts(app.messages())) == "Hello from the host.", app.messages()
    assert "result" in loaded, loaded
    replay = {
        "user": _texts(reader.messages(), "user_message_chunk"),
        "agent": _texts(reader.messages()),
    }
    instance.recorder.probe("the transcript session/load replayed to the reader", (), replay)
    assert replay == {"user": ["say hello"], "agent": ["Hello from the host."]}, reader.messages()


def test_a_host_s_capability_is_the_mcp_server_attached_not_the_disk_it_runs_on(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    record = _with_note_server(instance)
    (instance.work / "secret.txt").write_text("THE-DISK-CONTENT\n", encoding="utf-8")
    instance.use_script(
        Script(
            turns=[
                route("general"),
                Turn(
                    text="Reading.",
                    tool_calls=[ToolCall("read_file", {"path": "secret.txt"})],
                ),
                Turn(text="Noting.", tool_calls=[ToolCall("note", NOTE)]),
                "Done.",
            ]
        )
    )
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    sid = _new_session(app, instance.work)
    done = app.request("session/prompt", _prompt(sid, "read then note"), timeout=90, answer=_allow)
    _stop(host)
    assert done.get("result") == {"stopReason": "end_turn"}, done
    seen = _seen(instance, app)
    calls = seen["tool calls"]
    assert isinstance(calls, list) and calls[0].startswith("read_file: failed"), seen
    assert "THE-DISK-CONTENT" not in str(app.messages()), app.messages()
    assert _notes(instance, record) == [NOTE], app.messages()


def _answer_the_host_s_ask(
    instance: Instance, answer: Any
) -> tuple[list[dict[str, Any]], dict[str, Any], list[Any], list[dict[str, Any]]]:
    """A host's note call asks the app through the relay, answered by ``answer``.

    Returns the permission requests the app saw, the prompt's response, the
    notes the server received and every message of the app.
    """
    relay = _paired(instance)
    record = _with_note_server(instance)
    instance.use_script(NOTE_IT)
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    sid = _new_session(app, instance.work)
    done = app.request("session/prompt", _prompt(sid, "note it"), timeout=90, answer=answer)
    _stop(host)
    _seen(instance, app)
    asks = [m for m in app.messages() if m.get("method") == "session/request_permission"]
    return asks, done, _notes(instance, record), app.messages()


def test_the_app_answers_a_host_s_ask_through_the_relay_and_the_approved_call_runs(
    instance: Instance,
) -> None:
    # function: drives the relay
    asks, done, notes, messages = _answer_the_host_s_ask(instance, _allow)
    assert len(asks) == 1, messages
    assert asks[0]["params"]["toolCall"]["title"] == "rec.note", asks
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert notes == [NOTE], messages


def test_the_app_denying_a_host_s_ask_through_the_relay_keeps_the_call_from_running(
    instance: Instance,
) -> None:
    # function: drives the relay (the control above: only the answer differs)
    asks, done, notes, messages = _answer_the_host_s_ask(instance, _deny)
    assert len(asks) == 1, messages
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert notes == [], messages


def test_naming_a_server_under_envelopes_serve_tools_lets_its_call_run_in_a_host_unasked(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    record = _with_note_server(instance)
    with (instance.home / ".contenox" / "agents.toml").open("a", encoding="utf-8") as toml:
        toml.write('\n[envelopes.serve.tools]\n"rec.note" = "allow"\n')
    instance.use_script(NOTE_IT)
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    sid = _new_session(app, instance.work)
    # No ask is expected: one arriving is handed back unanswered and fails below.
    done = app.request("session/prompt", _prompt(sid, "note it"), timeout=90, answer=lambda r: None)
    _stop(host)
    _seen(instance, app)
    assert done.get("method") is None, f"the host asked: {done}"
    assert done.get("result") == {"stopReason": "end_turn"}, done
    assert _notes(instance, record) == [NOTE], app.messages()


def test_an_ask_left_pending_when_the_host_stops_is_answered_later_and_the_run_resumes(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    record = _with_note_server(instance)
    instance.use_script(NOTE_IT)
    host, _ = _host(instance, relay, ".")
    app = _app(relay.wait_link())
    sid = _new_session(app, instance.work)
    ask = app.request("session/prompt", _prompt(sid, "note it"), timeout=90, answer=lambda r: None)
    assert ask.get("method") == "session/request_permission", ask
    ask_id = ask["params"]["_meta"]["askId"]  # type: ignore[index]
    instance.recorder.name(str(ask_id), "[ASK]")
    _stop(host)
    pending = instance.must("approvals", "list")
    assert str(ask_id) in pending.stdout, pending.describe()
    assert _notes(instance, record) == [], "the call ran before anyone answered"
    answered = instance.must("approvals", "respond", str(ask_id), "--approve", timeout=120)
    assert "resumed" in answered.stdout, answered.describe()
    assert _notes(instance, record) == [NOTE], answered.describe()
    after = instance.must("approvals", "list")
    assert str(ask_id) not in after.stdout, after.describe()


# ---------------------------------------------------------------- paired, stopped, unpaired


def test_a_paired_host_never_prints_its_instance_token_on_screen_stderr_or_in_its_logs(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    token = relay.token_of(INSTANCE_ID)
    host, banner = _host(instance, relay, ".")
    link = relay.wait_link()
    host.interrupt()
    ended = host.wait(timeout=60)
    assert link.bearer == token, "the host holds the token: it dialled with it"
    lines = [" ".join(line.split()) for line in banner.splitlines()]
    assert f"Relay attached to {relay.url}" in lines, banner
    assert f"Instance {INSTANCE_ID}" in lines, banner
    assert f"App {relay.url}" in lines, banner
    logs = "".join(
        p.read_text(encoding="utf-8") for p in (instance.home / ".contenox" / "logs").glob("*.log")
    )
    assert logs, "the host wrote no log"
    for where, text in (("stdout", ended.stdout), ("stderr", ended.stderr), ("logs", logs)):
        assert token not in text, f"the instance token is in the host's {where}"


def test_stopping_a_paired_host_leaves_the_machine_paired_and_the_next_host_dials_again(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    first = relay.wait_link()
    _stop(host)
    status = instance.must("pair", env=relay.env)
    assert f"Instance {INSTANCE_ID}, account" in status.stdout, status.describe()
    again, banner = _host(instance, relay, ".")
    second = relay.wait_link(1)
    _stop(again)
    assert "attached to" in banner, banner
    assert second.bearer == first.bearer == relay.token_of(INSTANCE_ID), relay.describe()


def test_unpair_detaches_the_machine_so_the_next_host_never_dials_the_relay(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.use_script(GREETING)
    host, _ = _host(instance, relay, ".")
    relay.wait_link()
    _stop(host)
    instance.must("unpair")
    again, banner = _host(instance, relay, ".")
    # A paired host dials right after it has discovered its chain agents (the
    # first host's log shows it): wait until this one is past that point.
    wait_until(
        lambda: _host_log(instance).count(DISCOVERED) >= 2,
        60,
        what="the second host to finish discovering its chain agents",
        context=lambda: _host_log(instance)[-3000:],
    )
    _stop(again)
    assert "not paired — reachable on this machine only" in banner, banner
    dials = _host_log(instance).count('msg="Operation started" operation=connect subject=relay')
    assert dials == 1, "the host dialled after unpair"
    assert len(relay.links()) == 1, relay.describe()


DISCOVERED = 'msg="Operation completed" operation=discover subject=chain_agents'


def _host_log(instance: Instance) -> str:
    folder = instance.home / ".contenox" / "logs"
    return "".join(p.read_text(encoding="utf-8") for p in sorted(folder.glob("serve-*.log")))
