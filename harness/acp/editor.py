"""The editor's side of ACP: what the agent asks of an editor, done for real.

:class:`Editor` answers the agent's requests inside the case's scratch dirs:
``fs/read_text_file`` and ``fs/write_text_file``, ``terminal/*`` (commands run
to completion through :mod:`harness.process`, like every child), and
``session/request_permission`` ruled as the case chose — ``allow``, ``deny``,
``defer`` (never answered, so another process can answer with ``approvals
respond``) or ``cancel`` (the user cancels the turn).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

from ..process import Process, start
from ..result import CommandTimeout
from .turn import RULINGS, AgentRequest, PermissionAsk, Ruling
from .wire import AcpError, WireMessage

__all__ = [
    "FULL_CAPABILITIES",
    "Editor",
]

JSON: TypeAlias = Any

# What an editor offers: both file operations and terminals.
FULL_CAPABILITIES: Mapping[str, JSON] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
}

# JSON-RPC / ACP error codes the client answers with.
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602
_INTERNAL = -32603
_RESOURCE_NOT_FOUND = -32002


@dataclass
class _Terminal:
    """A command the agent runs in the editor's terminal: one stream (stdout and stderr
    merged, as a terminal shows them) and the byte limit the agent asked for."""

    proc: Process
    limit: int | None


def _exit_status(returncode: int) -> dict[str, JSON]:
    if returncode < 0:
        return {"exitCode": None, "signal": signal.Signals(-returncode).name}
    return {"exitCode": returncode, "signal": None}


def _error(code: int, message: str) -> dict[str, JSON]:
    return {"error": {"code": code, "message": message}}


class Editor:
    """The editor-side handlers: files, terminals and permission rulings.

    ``cancel(session_id)`` is how a ``cancel`` ruling stops the turn;
    ``fail(what)`` builds the error (with the transcript) a ruling that cannot
    be carried out raises.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        roots: Iterable[Path] | None = None,
        env: Mapping[str, str] | None = None,
        permission: Ruling | Callable[[PermissionAsk], Ruling] = "allow",
        refuse_writes: bool = False,
        unreadable: Iterable[str | os.PathLike[str]] = (),
        timeout: float,
        cancel: Callable[[str | None], None],
        fail: Callable[[str], AcpError],
    ) -> None:
        self.workspace = Path(workspace).resolve()
        self.roots = tuple(Path(r).resolve() for r in (roots or (self.workspace,)))
        self.permission = permission
        self.refuse_writes = refuse_writes
        self.unreadable = {self._resolve(p) for p in unreadable}
        self.timeout = timeout
        # Every ruling made, in order; a turn reads its own slice.
        self.rulings: list[Ruling] = []
        self._env = dict(env) if env is not None else dict(os.environ)
        self._cancel = cancel
        self._fail = fail
        self._terminals: dict[str, _Terminal] = {}

    def answer(self, message: WireMessage) -> Mapping[str, JSON] | None:
        """The reply to one request of the agent's (None: leave it unanswered)."""
        method = str(message.method)
        params: Mapping[str, JSON] = message.payload.get("params") or {}
        handler = {
            "session/request_permission": self._on_permission,
            "fs/read_text_file": self._on_read,
            "fs/write_text_file": self._on_write,
            "terminal/create": self._on_terminal_create,
            "terminal/output": self._on_terminal_output,
            "terminal/wait_for_exit": self._on_terminal_wait,
            "terminal/kill": self._on_terminal_kill,
            "terminal/release": self._on_terminal_release,
        }.get(method)
        if handler is None:
            reply: Mapping[str, JSON] | None = _error(
                _METHOD_NOT_FOUND, f"the e2e client does not implement {method}"
            )
        else:
            reply = handler(params)
        return reply

    def _on_permission(self, params: Mapping[str, JSON]) -> Mapping[str, JSON] | None:
        ask = PermissionAsk(AgentRequest(None, "session/request_permission", params, None), "defer")
        ruling = self.permission(ask) if callable(self.permission) else self.permission
        if ruling not in RULINGS:
            raise AcpError(f"permission ruling must be one of {RULINGS}, got {ruling!r}")
        self.rulings.append(ruling)
        if ruling == "defer":
            return None
        if ruling == "cancel":
            self._cancel(params.get("sessionId"))
            return {"result": {"outcome": {"outcome": "cancelled"}}}
        wanted = (
            ("allow_once", "allow_always")
            if ruling == "allow"
            else ("reject_once", "reject_always")
        )
        for kind in wanted:
            for option in ask.options:
                if option.get("kind") == kind:
                    return {
                        "result": {
                            "outcome": {"outcome": "selected", "optionId": option["optionId"]}
                        }
                    }
        raise self._fail(
            f"cannot {ruling}: the permission request offers no {' or '.join(wanted)} option "
            f"(options: {json.dumps(ask.options)})"
        )

    def _resolve(self, path: str | os.PathLike[str]) -> Path:
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.workspace / candidate
        return candidate.resolve()

    def _outside(self, path: Path) -> bool:
        return not any(path == root or root in path.parents for root in self.roots)

    def _on_read(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        path = self._resolve(str(params.get("path", "")))
        if self._outside(path):
            return _error(_INVALID_PARAMS, f"{path} is outside the case's scratch dirs")
        if path in self.unreadable:
            return _error(_INTERNAL, f"permission denied: {path} is not readable")
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return _error(_RESOURCE_NOT_FOUND, f"no such file: {path}")
        except OSError as err:
            return _error(_INTERNAL, f"cannot read {path}: {err}")
        line, limit = params.get("line"), params.get("limit")
        if isinstance(line, int) or isinstance(limit, int):
            lines = text.splitlines(keepends=True)
            first = max((line if isinstance(line, int) else 1) - 1, 0)
            last = first + limit if isinstance(limit, int) else len(lines)
            text = "".join(lines[first:last])
        return {"result": {"content": text}}

    def _on_write(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        path = self._resolve(str(params.get("path", "")))
        if self._outside(path):
            return _error(_INVALID_PARAMS, f"{path} is outside the case's scratch dirs")
        if self.refuse_writes:
            return _error(_INTERNAL, f"the client refused to write {path}")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(str(params.get("content", "")), encoding="utf-8")
        except OSError as err:
            return _error(_INTERNAL, f"cannot write {path}: {err}")
        return {"result": None}

    def _on_terminal_create(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        cwd = self._resolve(str(params.get("cwd") or self.workspace))
        if self._outside(cwd):
            return _error(_INVALID_PARAMS, f"terminal cwd {cwd} is outside the case's scratch dirs")
        env = dict(self._env)
        for var in params.get("env") or []:
            env[str(var.get("name"))] = str(var.get("value"))
        argv = [str(params.get("command")), *map(str, params.get("args") or [])]
        try:
            proc = start(argv, env=env, cwd=cwd, stdin=False, merge_stderr=True)
        except OSError as err:
            return _error(_INTERNAL, f"cannot start {shlex.join(argv)}: {err}")
        limit = params.get("outputByteLimit")
        term = _Terminal(proc, limit if isinstance(limit, int) else None)
        terminal_id = f"term-{len(self._terminals) + 1}"
        self._terminals[terminal_id] = term
        return {"result": {"terminalId": terminal_id}}

    def _terminal(self, params: Mapping[str, JSON]) -> _Terminal | None:
        return self._terminals.get(str(params.get("terminalId")))

    def _on_terminal_output(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        returncode = term.proc.exit_code
        if returncode is not None:
            term.proc.drain()
        data = term.proc.output()
        truncated = term.limit is not None and len(data) > term.limit
        if truncated and term.limit is not None:
            data = data[len(data) - term.limit :]
        result: dict[str, JSON] = {
            "output": data.decode("utf-8", errors="replace"),
            "truncated": truncated,
        }
        if returncode is not None:
            result["exitStatus"] = _exit_status(returncode)
        return {"result": result}

    def _on_terminal_wait(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        try:
            returncode = term.proc.wait(timeout=self.timeout).exit_code
        except CommandTimeout as overrun:
            # An editor would wait forever; a case may not: its group was killed.
            returncode = overrun.result.exit_code
        return {"result": _exit_status(returncode)}

    def _on_terminal_kill(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminal(params)
        if term is None:
            return _error(_INVALID_PARAMS, f"unknown terminal {params.get('terminalId')!r}")
        term.proc.kill()
        return {"result": None}

    def _on_terminal_release(self, params: Mapping[str, JSON]) -> Mapping[str, JSON]:
        term = self._terminals.pop(str(params.get("terminalId")), None)
        if term is not None:
            term.proc.kill()
        return {"result": None}

    def release_terminals(self) -> str | None:
        """Kill every terminal command the agent left; None if none was running, else what."""
        left = [shlex.join(t.proc.argv) for t in self._terminals.values() if t.proc.running]
        for term in self._terminals.values():
            term.proc.kill()
        self._terminals.clear()
        if left:
            return f"terminal command(s) the agent never released were still running: {left}"
        return None
