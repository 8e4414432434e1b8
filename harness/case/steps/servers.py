"""Servers: what a Case points contenox at, started by a step, read back by a probe.

::

    HTTP_CALL = Case(
        name="a streamable http server receives the model's call",
        script=ADD_THEN_FINISH,
        steps=[
            open_envelope_step(),
            serve("rec", "mcp-http"),
            step("mcp", "add", "rec", "--transport", "http", "--url", "{rec_url}"),
            step("run", "--policy", "e2e_open", "add"),
            received("rec", "add calls", mcp_arguments("add"), expect=[{"a": 2, "b": 40}]),
            model_saw('{"result":"sum=42"}'),
        ],
    )

- :class:`Serve` (``serve(name, kind)``) starts one of the harness's recording
  servers (``harness/servers/``) under ``name`` and defines ``{<name>_url}``
  — or, for ``mcp-stdio``, which contenox spawns itself, ``{<name>_command}``
  and ``{<name>_args}`` (the comma-joined ``--args`` of ``mcp add``). The
  server is stopped when the case ends.
- :class:`Received` (``received(name, what, read, expect=…)``) is a probe of
  what that server recorded: ``read`` gets the server's handle
  (:class:`~harness.servers.McpRecord` for stdio,
  :class:`~harness.servers.McpServer` for sse/http,
  :class:`~harness.servers.HttpService` for openapi) and returns a value
  stable enough for the transcript (no pids, no ports).
- :func:`model_saw` is whether the model was sent a text (``state show --raw``
  of every captured run), and :func:`open_envelope_step` adds the envelope
  under which every tool runs unasked.

Checked when the Case is built: the server name is an identifier used once,
the kind is one of :data:`SERVER_KINDS`, ``tls`` is for ``openapi`` only, and a
``received`` names a server a step before it started.
"""

from __future__ import annotations

import re
import socket
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias

from filelock import FileLock, Timeout

from ...command import run as run_command
from ...process import wait_until
from ..action import Action, CaseError, _builds
from .files import Edit, edit
from .probes import _NOTHING, Probe, probe, unmet

if TYPE_CHECKING:
    from ...instance import Instance
    from ...servers import HttpService, McpRecord
    from ..run import Run

__all__ = [
    "SERVER_KINDS",
    "Received",
    "Serve",
    "ServerKind",
    "header_values",
    "mcp_arguments",
    "model_saw",
    "open_envelope_step",
    "received",
    "serve",
]

ServerKind: TypeAlias = (
    'Literal["mcp-stdio", "mcp-http", "mcp-sse", "openapi", '
    '"mcp-oauth", "mcp-oauth-expiring", "mcp-oauth-deny"]'
)
SERVER_KINDS = (
    "mcp-stdio",
    "mcp-http",
    "mcp-sse",
    "openapi",
    "mcp-oauth",
    "mcp-oauth-expiring",
    "mcp-oauth-deny",
)
# The OAuth kinds: access token lifetime and whether the "user" denies the authorization.
_OAUTH = {
    "mcp-oauth": (3600, False),
    "mcp-oauth-expiring": (1, False),
    "mcp-oauth-deny": (3600, True),
}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# How long an OAuth case waits for another one to free the callback port.
_CALLBACK_WAIT = 300.0


@dataclass(frozen=True, kw_only=True)
class Serve(Action):
    """Start a recording server under ``name`` for the rest of the case.

    ``kind``: ``mcp-stdio`` (contenox spawns it from ``{name_command}`` and
    ``{name_args}``; the harness only reads its record), ``mcp-http`` or
    ``mcp-sse`` (the SDK's MCP server on 127.0.0.1, at ``{name_url}``), or
    ``openapi`` (the OpenAPI service, at ``{name_url}``; ``tls=True``: HTTPS
    with a fresh self-signed certificate), or ``mcp-oauth`` (an HTTP MCP server
    behind the OAuth authorization server of :mod:`harness.servers.oauth` on one
    origin, at ``{name_url}``, with ``{name_bin}`` a directory holding the stand-in
    browser to put on contenox's PATH; ``-expiring`` issues 1 s access tokens,
    ``-deny`` refuses every authorization). An OAuth kind's handle is the
    :class:`~harness.servers.oauth.OAuthServer`; its ``resource`` the MCP server.
    """

    kind: ClassVar[str] = "serve"
    name: str
    server: ServerKind
    tls: bool = False

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.name, str) or not _IDENTIFIER.fullmatch(self.name):
            raise problem(
                "name",
                f"must be an identifier (it names the captures {{<name>_url}} …), "
                f"got {self.name!r}",
            )
        if self.server not in SERVER_KINDS:
            raise problem("server", f"must be one of {SERVER_KINDS}, got {self.server!r}")
        if type(self.tls) is not bool:
            raise problem("tls", f"must be True or False, got {self.tls!r}")
        if self.tls and self.server != "openapi":
            raise problem("tls", f"is for an openapi service only, not {self.server!r}")

    def defines(self) -> set[str]:
        if self.server == "mcp-stdio":
            return {f"{self.name}_command", f"{self.name}_args"}
        if self.server in _OAUTH:
            return {f"{self.name}_url", f"{self.name}_bin"}
        return {f"{self.name}_url"}

    def serves(self) -> str | None:
        return self.name

    def execute(self, run: Run) -> None:
        from ...servers import McpRecord, serve_http, serve_mcp, stdio_command

        instance = run.instance
        record = instance.tmp / f"{self.name}.jsonl"
        if self.server == "mcp-stdio":
            command, args = stdio_command(record)
            run.servers[self.name] = McpRecord(record)
            run.captures[f"{self.name}_command"] = command
            run.captures[f"{self.name}_args"] = ",".join(args)
            said = f"an MCP stdio server contenox spawns, recording to {record}"
        elif self.server == "openapi":
            service = serve_http(instance, tls=self.tls)
            run.servers[self.name] = service
            run.captures[f"{self.name}_url"] = service.url
            said = f"the OpenAPI service at {service.url}"
        elif self.server in _OAUTH:
            said = self._serve_oauth(run, record)
        else:
            transport: Literal["http", "sse"] = "http" if self.server == "mcp-http" else "sse"
            server = serve_mcp(instance, transport, record=record)
            run.servers[self.name] = server
            run.captures[f"{self.name}_url"] = server.url
            said = f"an MCP {transport} server at {server.url}"
        instance.recorder.note(f"serving {self.name}: {said}")

    def _serve_oauth(self, run: Run, record: Path) -> str:
        from urllib.parse import urlsplit

        from ...servers import serve_mcp
        from ...servers.oauth import start_oauth_server, write_browser

        instance = run.instance
        # contenox's `mcp auth` always waits on 127.0.0.1:49152 (a fixed callback
        # port), so two OAuth cases at once (xdist workers) would take each other's
        # redirect: one case at a time on the machine holds the port's lock.
        # One lock object per process, reentrant: the "recorded twice" rerun serves the port
        # again while the first run's cleanups (its release) are still pending, in this process.
        callback = _CALLBACK_LOCK
        try:
            callback.acquire(timeout=_CALLBACK_WAIT)
        except Timeout:
            raise CaseError(
                f"serve {self.name!r}: another case held contenox's OAuth callback port "
                f"49152 for over {_CALLBACK_WAIT:.0f} s (lock {callback.lock_file}); "
                "is a stuck run still alive?"
            ) from None

        def release() -> None:
            callback.release()

        instance.cleanups.append(release)
        # The lock keeps other OAuth cases off the port, not every other socket:
        # a server or connection of another case may have been given 49152 as its
        # ephemeral port (seen at six workers: `bind: address already in use`).
        wait_until(
            lambda: _callback_port_free() or None,
            timeout=_CALLBACK_WAIT,
            what=f"contenox's fixed OAuth callback port 127.0.0.1:{CALLBACK_PORT} to be free",
            context=_callback_port_holders,
        )
        mcp = serve_mcp(instance, "http", record=record)
        origin = urlsplit(mcp.url)
        ttl, deny = _OAUTH[self.server]
        auth = start_oauth_server(
            access_ttl=ttl, deny=deny, upstream=f"{origin.scheme}://{origin.netloc}"
        )
        auth.resource = mcp
        instance.cleanups.append(auth.stop)
        run.servers[self.name] = auth
        run.captures[f"{self.name}_url"] = auth.url + origin.path
        run.captures[f"{self.name}_bin"] = str(write_browser(instance.tmp / f"{self.name}-bin"))
        return f"an MCP http server behind an OAuth server at {auth.url}"


_CALLBACK_LOCK = FileLock(Path(tempfile.gettempdir()) / "contenox-e2e-oauth-callback-49152.lock")
CALLBACK_PORT = 49152


def _callback_port_free() -> bool:
    """Whether contenox could listen on the callback port now (Go sets SO_REUSEADDR too)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", CALLBACK_PORT))
        except OSError:
            return False
    return True


def _callback_port_holders() -> str:
    """Who holds the callback port, as `ss` tells it (for the failure message)."""
    try:
        out = run_command(["ss", "-tanp", f"( sport = :{CALLBACK_PORT} )"], timeout=10).stdout
    except (OSError, AssertionError) as err:
        return f"(could not run ss: {err})"
    return out or "(ss shows no socket on the port)"


@_builds(Serve)
def serve(name: str, server: ServerKind, *, tls: bool = False) -> Serve:
    """Start a recording server: ``serve("rec", "mcp-stdio")``, ``serve("svc", "openapi")``."""
    return Serve(name=name, server=server, tls=tls)


@dataclass(frozen=True, kw_only=True)
class Received(Probe):
    """What the server started as ``server`` recorded, read by ``read(handle)``.

    Its value lands in the transcript as a probe named ``name``; ``expect``
    is a value it must equal, or :func:`~harness.case.satisfies`.
    """

    kind: ClassVar[str] = "received"
    server: str

    def check(self, problem: Callable[[str, str], CaseError]) -> None:
        if not isinstance(self.server, str) or not _IDENTIFIER.fullmatch(self.server):
            raise problem("server", f"must name a serve(...) step's server, got {self.server!r}")
        if not callable(self.read):
            raise problem("read", f"must be a function of the server's records, got {self.read!r}")
        if self.capture is not None:
            raise problem("capture", "is for probe(...) only: this reading is not kept")
        super().check(problem)

    def needs_server(self) -> str | None:
        return self.server

    def texts(self) -> Iterator[tuple[str, object]]:
        return iter(())

    def execute(self, run: Run) -> None:
        __tracebackhide__ = True
        handle = run.servers[self.server]
        value = self.read(handle)
        run.instance.recorder.probe(f"{self.name} ({self.server})", [], value)
        wanted = unmet(self.expect, value)
        if wanted is not None:
            raise AssertionError(
                f"server {self.server!r}, {self.name}: expected {wanted}; got {value!r}\n"
                f"{handle.describe()}"
            )


@_builds(Received)
def received(
    server: str, name: str, read: Callable[[Any], object], *, expect: object = _NOTHING
) -> Received:
    """A probe of what ``server`` recorded: ``received("rec", "note calls", mcp_arguments("note"),
    expect=[{"text": "hi"}])``."""
    return Received(name=name, read=read, server=server, expect=expect)


# --------------------------------------------------------------------------- readers


def mcp_arguments(tool: str) -> Callable[[McpRecord], list[dict[str, Any]]]:
    """A reader: the arguments of every ``tools/call`` of ``tool`` the MCP server received."""

    def read(server: McpRecord) -> list[dict[str, Any]]:
        return [dict(call.arguments) for call in server.calls(tool)]

    return read


def header_values(header: str) -> Callable[[McpRecord | HttpService], list[str]]:
    """A reader: the distinct values of ``header`` on every HTTP request the server received.

    A request without it counts as ``"(absent)"``; MCP messages over stdio (no
    headers at all) are not requests and are passed over.
    """
    name = header.lower()

    def read(server: McpRecord | HttpService) -> list[str]:
        from ...servers import HttpService

        if isinstance(server, HttpService):
            headers: list[Mapping[str, str]] = [r.headers for r in server.requests()]
        else:
            headers = [r.headers for r in server.records() if r.headers is not None]
        return sorted({h.get(name, "(absent)") for h in headers})

    return read


# --------------------------------------------------------------------------- model and envelope


def model_saw(text: str, seen: bool = True) -> Probe:
    """Whether the model was sent ``text`` (its whole captured state, ``state show --raw``)."""

    def read(instance: Instance) -> bool:
        from ...servers.wiring import model_view

        return text in model_view(instance)

    what = "the model saw" if seen else "the model never saw"
    return probe(f"{what} {text!r}", read, expect=seen)


def open_envelope_step() -> Edit:
    """Append the ``e2e_open`` envelope (every tool runs unasked) to ``~/.contenox/agents.toml``.

    A connected tool falls to ``default_action``; under this envelope a ``run``
    reaches it without an approval nobody answers.
    """
    from ...servers.wiring import OPEN_ENVELOPE_TOML

    return edit("agents.toml", append=OPEN_ENVELOPE_TOML, under="contenox")
