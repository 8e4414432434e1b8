"""A fake ACP agent for the client's own tests: newline-delimited JSON-RPC on stdio.

The prompt's text picks the behaviour, so one agent serves a whole test:

``hello``            two message chunks, a usage update, end_turn, then one
                     more chunk *after* the response (the client must linger)
``write <path>``     ask permission; if allowed, fs/write_text_file <path>
                     ("written by the fake"); say what the client answered
``read <path>``      fs/read_text_file <path>; say the content or the error
``run <json argv>``  terminal/create, wait_for_exit, output, release; say it
``ask``              ask permission and wait up to 10s for an answer or for
                     the file named by FAKE_RELEASE to appear (the "other
                     process" answering); a cancelled ask ends "cancelled"
``silence``          never answer
``garbage``          write a line that is not JSON-RPC
``malformed``        a message chunk whose content type the ACP schema lacks
anything else        end_turn with "unknown prompt"

``session/list`` returns the one session; stderr carries a log line and a notice.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time

_inbox: queue.Queue[dict] = queue.Queue()  # type: ignore[type-arg]
_next = [100]
_session = "fake-session-1"
_cwd = [""]
_cancelled = threading.Event()


def send(obj: dict) -> None:  # type: ignore[type-arg]
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def update(kind: str, **fields: object) -> None:
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": _session, "update": {"sessionUpdate": kind, **fields}},
        }
    )


def say(text: str) -> None:
    update("agent_message_chunk", content={"type": "text", "text": text})


def ask_client(method: str, params: dict, wait: float = 10.0) -> dict | None:  # type: ignore[type-arg]
    """Send a request and wait for its response; other messages are handled meanwhile."""
    _next[0] += 1
    rid = _next[0]
    send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            msg = _inbox.get(timeout=0.05)
        except queue.Empty:
            release = os.environ.get("FAKE_RELEASE")
            if method == "session/request_permission" and release and os.path.exists(release):
                send({"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": rid}})
                return {"result": {"outcome": {"outcome": "selected", "optionId": "released"}}}
            continue
        if msg.get("id") == rid and "method" not in msg:
            return msg
        if msg.get("method") == "session/cancel":
            _cancelled.set()
    return None


def permission() -> dict | None:  # type: ignore[type-arg]
    return ask_client(
        "session/request_permission",
        {
            "sessionId": _session,
            "toolCall": {"toolCallId": "call-1", "title": "write_file", "status": "pending"},
            "options": [
                {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                {"optionId": "no", "name": "Deny", "kind": "reject_once"},
            ],
            "_meta": {"askId": "ask-1"},
        },
    )


def prompt(rid: object, text: str) -> None:
    words = text.split()
    head = words[0] if words else ""
    stop = "end_turn"
    if head == "hello":
        say("Hello, ")
        say("world.")
        update("usage_update", used=10, size=100)
    elif head == "write":
        answer = permission()
        outcome = ((answer or {}).get("result") or {}).get("outcome") or {}
        if outcome.get("optionId") != "yes":
            say(f"not allowed: {json.dumps(outcome)}")
        else:
            update("tool_call", toolCallId="call-1", title="write", status="pending")
            reply = ask_client(
                "fs/write_text_file",
                {"sessionId": _session, "path": words[1], "content": "written by the fake\n"},
            )
            status = "failed" if reply is None or "error" in reply else "completed"
            update(
                "tool_call_update",
                toolCallId="call-1",
                status=status,
                rawOutput=json.dumps(reply),
            )
            say(f"write {status}")
    elif head == "read":
        reply = ask_client("fs/read_text_file", {"sessionId": _session, "path": words[1]}) or {}
        if "error" in reply:
            say(f"read error: {reply['error']['message']}")
        else:
            say(f"read: {reply['result']['content']}")
    elif head == "run":
        words = ["run", *json.loads(text[len("run ") :])]
        created = (
            ask_client(
                "terminal/create",
                {"sessionId": _session, "command": words[1], "args": words[2:], "cwd": _cwd[0]},
            )
            or {}
        )
        tid = created["result"]["terminalId"]
        exited = ask_client("terminal/wait_for_exit", {"sessionId": _session, "terminalId": tid})
        output = ask_client("terminal/output", {"sessionId": _session, "terminalId": tid})
        ask_client("terminal/release", {"sessionId": _session, "terminalId": tid})
        say(f"ran: {json.dumps(output['result'])} exit {json.dumps(exited['result'])}")  # type: ignore[index]
    elif head == "ask":
        answer = permission()
        outcome = ((answer or {}).get("result") or {}).get("outcome") or {}
        if outcome.get("outcome") == "cancelled" or _cancelled.is_set():
            stop = "cancelled"
        say(f"ruled: {json.dumps(outcome)}")
    elif head == "silence":
        return
    elif head == "malformed":
        update("agent_message_chunk", content={"type": "foo", "text": "?"})
    elif head == "garbage":
        sys.stdout.write("this is not json\n")
        sys.stdout.flush()
    else:
        say("unknown prompt")
    send({"jsonrpc": "2.0", "id": rid, "result": {"stopReason": stop}})
    if head == "hello":
        time.sleep(0.05)
        say(" (late)")


def main() -> None:
    print("time=2026-01-01T00:00:00Z level=INFO msg=fake agent up", file=sys.stderr, flush=True)
    print("fake agent: a notice for a person", file=sys.stderr, flush=True)

    def reader() -> None:
        for line in sys.stdin:
            if line.strip():
                _inbox.put(json.loads(line))
        _inbox.put({"eof": True})

    threading.Thread(target=reader, daemon=True).start()
    while True:
        msg = _inbox.get()
        if msg.get("eof"):
            sys.exit(0)
        method, rid, params = msg.get("method"), msg.get("id"), msg.get("params") or {}
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": 1,
                        "agentCapabilities": {},
                        "_meta": {"sawCapabilities": params.get("clientCapabilities")},
                    },
                }
            )
        elif method == "session/new":
            _cwd[0] = params.get("cwd", "")
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessionId": _session}})
        elif method == "session/list":
            sessions = [{"sessionId": _session, "cwd": _cwd[0]}]
            send({"jsonrpc": "2.0", "id": rid, "result": {"sessions": sessions}})
        elif method == "session/prompt":
            prompt(rid, params["prompt"][0]["text"])
        elif rid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "nope"}})


if __name__ == "__main__":
    main()
