"""A tiny foreign ACP agent that probes the sandbox wall from inside it.

contenox confines an ``external_acp`` agent (code it did not write) behind a
wall: Landlock for files and exec, a scrubbed environment, and an optional
network namespace. This program is such an agent. It speaks just enough ACP
over stdio (``initialize``, ``session/new``, ``session/prompt``) and reads
each prompt as a JSON list of probes; it runs them and replies with a JSON
list, as its message text, saying what each probe saw::

    [{"probe": "write", "path": "/elsewhere/x"},
     {"probe": "read", "path": "~/.ssh/id_rsa"},
     {"probe": "exec", "argv": ["/usr/bin/id"]},
     {"probe": "env", "names": ["HOME", "MY_API_TOKEN"]},
     {"probe": "connect", "host": "127.0.0.1", "port": 8080},
     {"probe": "exists", "path": "/elsewhere/x"},
     {"probe": "uid", "expect": 1000},
     {"probe": "tool_read", "path": "/elsewhere/x"}]

Each result is ``{"probe": ..., "ok": bool, "detail": str}``: ``ok`` true
when the operation succeeded; ``detail`` the content read, the program's
output, the named variables (null: unset), ``present``/``absent``, ``same``/``differs``
(the agent's uid against ``expect``), or the OS error's name (``EACCES``). ``tool_read``
asks the ACP client (contenox, relaying to the editor) for the file instead of opening it.

It uses only the standard library and reads no file of its own, so the wall
need not let it read the suite's tree: the harness passes this file's source
as ``python3 -c`` (see :func:`harness.agents_store.wall_agent_argv`).
"""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
from typing import Any


def _errname(error: OSError) -> str:
    return errno.errorcode.get(error.errno or 0, type(error).__name__)


def _expand(path: str) -> str:
    return os.path.expanduser(path)


def _probe(spec: dict[str, Any]) -> dict[str, Any]:
    kind = spec.get("probe")
    out: dict[str, Any] = {"probe": kind}
    try:
        if kind == "write":
            with open(_expand(spec["path"]), "w", encoding="utf-8") as handle:
                handle.write(spec.get("text", "written by the walled agent\n"))
            out.update(ok=True, detail="written")
        elif kind == "read":
            with open(_expand(spec["path"]), encoding="utf-8") as handle:
                out.update(ok=True, detail=handle.read())
        elif kind == "list":
            out.update(ok=True, detail=" ".join(sorted(os.listdir(_expand(spec["path"])))))
        elif kind == "exec":
            done = subprocess.run(
                spec["argv"], capture_output=True, text=True, timeout=20, check=False
            )
            out.update(ok=done.returncode == 0, detail=(done.stdout + done.stderr).strip())
        elif kind == "exists":
            # stat, not open: a path the wall hides is absent, one it denies is present.
            there = os.path.lexists(_expand(spec["path"]))
            out.update(ok=True, detail="present" if there else "absent")
        elif kind == "uid":
            out.update(ok=True, detail="same" if os.getuid() == int(spec["expect"]) else "differs")
        elif kind == "tool_read":
            # The ACP client's own file tool, which contenox relays to the editor.
            answer = _ask_client(
                "fs/read_text_file", {"sessionId": _SESSION, "path": _expand(spec["path"])}
            )
            if "result" in answer:
                out.update(ok=True, detail=str(answer["result"].get("content")))
            else:
                out.update(ok=False, detail=str(answer.get("error")))
        elif kind == "env":
            # Only the names asked about: the rest (LC_*) differs machine to machine.
            seen = {name: os.environ.get(name) for name in spec["names"]}
            out.update(ok=True, detail=json.dumps(seen, sort_keys=True))
        elif kind == "connect":
            with socket.create_connection((spec["host"], int(spec["port"])), timeout=10) as conn:
                conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
                out.update(ok=True, detail=conn.recv(200).decode("utf-8", "replace"))
        else:
            out.update(ok=False, detail=f"unknown probe {kind!r}")
    except OSError as error:
        out.update(ok=False, detail=_errname(error))
    except (KeyError, ValueError, TypeError, subprocess.SubprocessError) as error:
        out.update(ok=False, detail=f"{type(error).__name__}: {error}")
    return out


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


_SESSION = "wall-probe-1"
_asked = 0


def _ask_client(method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request to the client (contenox) and wait for its answer on stdin."""
    global _asked
    _asked += 1
    ident = f"probe-{_asked}"
    _send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    while True:
        line = sys.stdin.readline()
        if not line:
            return {"error": "stdin closed before the client answered"}
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == ident and "method" not in message:
            return message


def _answer(request: dict[str, Any]) -> None:
    method = request.get("method")
    ident = request.get("id")
    params = request.get("params") or {}
    if method == "initialize":
        _send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": False},
                    "agentInfo": {"name": "wall-probe", "version": "0"},
                    "authMethods": [],
                },
            }
        )
    elif method == "session/new":
        _send({"jsonrpc": "2.0", "id": ident, "result": {"sessionId": _SESSION}})
    elif method == "session/prompt":
        text = "".join(
            block.get("text", "") for block in params.get("prompt", []) if isinstance(block, dict)
        )
        try:
            probes = json.loads(text)
        except ValueError as error:
            probes = f"{error}"
        if isinstance(probes, list) and all(isinstance(p, dict) for p in probes):
            reply = json.dumps([_probe(p) for p in probes], sort_keys=True)
        else:
            reply = json.dumps({"error": f"the prompt is not a JSON list of probes: {probes}"})
        _send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": params.get("sessionId"),
                    "update": {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": reply},
                    },
                },
            }
        )
        _send({"jsonrpc": "2.0", "id": ident, "result": {"stopReason": "end_turn"}})
    elif ident is not None:
        _send(
            {
                "jsonrpc": "2.0",
                "id": ident,
                "error": {"code": -32601, "message": f"wall-probe: no method {method}"},
            }
        )


def main() -> None:
    """Serve ACP on stdin/stdout until stdin closes."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and "method" in message:
            _answer(message)


if __name__ == "__main__":
    main()
