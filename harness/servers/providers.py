"""Model-provider stand-ins: the typed ``Script`` served in a real provider's wire format.

The scripted-test backend replaces the model *inside* contenox, so its provider
clients never run. A stand-in replaces the model *outside*: it listens on
loopback, answers the listing calls contenox makes (``/v1/models``;
``/api/tags`` and ``/api/show``; ``/v1beta/models``) and serves the same
:class:`~harness.dialog.Script` the scripted backend replays, one turn per chat
request, streamed the way that provider streams::

    standin = start_provider("openai", Script(turns=[Turn(text="Hello there.")]))
    # contenox backend add oai --type openai --url {standin.base_url} --api-key-env KEY
    [chat] = standin.chat_requests()
    assert chat.json()["stream"] is True

================  ===============================  ====================================
protocol          chat endpoint                    stream
================  ===============================  ====================================
``openai``        ``POST /v1/chat/completions``    SSE ``data:`` chunks, ``[DONE]``
``vllm``          (the same protocol; base URL without ``/v1``)
``ollama``        ``POST /api/chat``               NDJSON, one object a line
``gemini``        ``POST /v1beta/models/M:streamGenerateContent?alt=sse``   SSE
``anthropic``     ``POST /v1/messages``            SSE ``event:``/``data:`` pairs
``vertex``        ``POST …/publishers/google/models/M:streamGenerateContent``  SSE
                  (and ``POST /token``, the OAuth JWT-bearer exchange)
``bedrock``       ``POST /model/M/converse-stream``  AWS event-stream binary frames
================  ===============================  ====================================

A turn's text goes out in word-sized chunks, its thinking where the protocol
has a place for it (``reasoning_content``; Ollama's ``thinking``; a Gemini
``thought`` part; an Anthropic ``thinking`` block), its tool calls with their
ids and arguments (the id is ``call_<turn>_<n>`` / ``toolu_…`` when the Script
gives none), its finish reason (or the protocol's own for text / tool calls)
and its usage. Every request is recorded — method, path, query, headers, body —
and :meth:`ProviderRequest.shown` is its transcript form, with the key headers
as ``[SECRET]``.

A :class:`Fault` turns a chat request into an error path: an HTTP status
(401/429/500, in the protocol's error body), a stream cut mid-turn, a malformed
chunk, or a slow first byte. A faulted request never consumes its turn: the
turn goes to the next request that is not faulted.

Built on ``pytest-httpserver`` (werkzeug's threaded server) like
:mod:`harness.servers.http_service`: a real HTTP/1.1 stack parses what contenox
sends and frames the stream (chunked transfer encoding, a flush per chunk),
so the stand-in is routing and wire format, not a protocol implementation of
our own.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias
from urllib.parse import parse_qsl

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from ..dialog import Script, ToolCall, Turn
from ..probes.sessions import CLOSING_CALL, MISSION_FINISHED
from . import eventstream
from .loopback import QuickStopServer, require_loopback

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "DEFAULT_MODELS",
    "PROTOCOLS",
    "SECRET_HEADERS",
    "Fault",
    "FaultKind",
    "Protocol",
    "ProviderError",
    "ProviderRequest",
    "ProviderStandIn",
    "serve_provider",
    "start_provider",
]

Protocol: TypeAlias = Literal[
    "openai", "vllm", "ollama", "gemini", "anthropic", "vertex", "bedrock"
]
PROTOCOLS: tuple[Protocol, ...] = (
    "openai",
    "vllm",
    "ollama",
    "gemini",
    "anthropic",
    "vertex",
    "bedrock",
)
FaultKind: TypeAlias = Literal["status", "cut", "malformed", "slow"]
FAULT_KINDS: tuple[FaultKind, ...] = ("status", "cut", "malformed", "slow")

# The model a stand-in lists when the Script names none.
DEFAULT_MODELS: Mapping[str, str] = {
    "openai": "gpt-e2e",
    "vllm": "vllm-e2e",
    "ollama": "qwen-e2e:8b",
    "gemini": "gemini-e2e",
    "anthropic": "claude-e2e",
    "vertex": "gemini-e2e-vertex",
    "bedrock": "anthropic.claude-e2e-v1:0",
}
# The GCP project and location of a Vertex stand-in's backend URL, and the access
# token its token endpoint mints (contenox sends it back as ``Authorization: Bearer``).
VERTEX_PROJECT = "e2e-project"
VERTEX_LOCATION = "global"
VERTEX_TOKEN = "ya29.e2e-vertex-access-token"
# Form fields of an OAuth token request that carry a credential: shown as [SECRET].
SECRET_FORM = frozenset({"assertion", "refresh_token", "client_secret"})
# Headers (lower-case) and query parameters that carry a key: shown as [SECRET].
SECRET_HEADERS = frozenset({"authorization", "x-api-key", "x-goog-api-key", "api-key"})
SECRET_QUERY = frozenset({"key"})
SECRET = "[SECRET]"


class ProviderError(ValueError):
    """A stand-in asked for something it cannot serve; nothing was started."""


@dataclass(frozen=True)
class Fault:
    """An error path for chat requests, from the ``turn``-th turn on.

    - ``status``: answer HTTP ``status`` (401, 429, 500, …) with the protocol's
      error body (and ``Retry-After: 0`` on 429);
    - ``cut``: stream ``after`` chunks of the turn, then drop the connection
      (no terminating chunk, no ``[DONE]``/``done``/``message_stop``);
    - ``malformed``: stream ``after`` chunks, then one that is not JSON, then
      the rest of the turn;
    - ``slow``: send nothing, not even the headers, for ``delay`` seconds,
      then the turn as usual (it consumes the turn).

    ``times`` requests are faulted (``None``: every one from ``turn`` on).
    ``code`` names the error the way the protocol does, where it has a name for
    it: Bedrock's ``x-amzn-ErrorType`` (``AccessDeniedException``), Google's
    ``status`` (``PERMISSION_DENIED``); None picks the usual one for ``status``.
    """

    kind: FaultKind
    turn: int = 0
    status: int = 500
    after: int = 1
    delay: float = 0.0
    times: int | None = 1
    code: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ProviderError(f"Fault kind must be one of {FAULT_KINDS}, got {self.kind!r}")
        if isinstance(self.turn, bool) or not isinstance(self.turn, int) or self.turn < 0:
            raise ProviderError(f"Fault turn must be a turn index (0, 1, …), got {self.turn!r}")
        if self.kind == "status" and not (
            isinstance(self.status, int) and 400 <= self.status < 600
        ):
            raise ProviderError(
                f"Fault status must be an HTTP error (400-599), got {self.status!r}"
            )
        if isinstance(self.after, bool) or not isinstance(self.after, int) or self.after < 0:
            raise ProviderError(f"Fault after must be a chunk count (0, 1, …), got {self.after!r}")
        if self.kind == "slow" and not (isinstance(self.delay, (int, float)) and self.delay > 0):
            raise ProviderError(f"a slow Fault needs delay > 0 seconds, got {self.delay!r}")
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ProviderError(f"Fault times must be at least 1 or None, got {self.times!r}")
        if self.code is not None and not (isinstance(self.code, str) and self.code.strip()):
            raise ProviderError(f"Fault code must be an error name or None, got {self.code!r}")

    @property
    def consumes_turn(self) -> bool:
        return self.kind == "slow"


@dataclass(frozen=True)
class ProviderRequest:
    """One request a stand-in received. Header names are lower-cased."""

    method: str
    path: str
    query: Mapping[str, tuple[str, ...]]
    headers: Mapping[str, str]
    body: str
    # The turn it was served (None: a listing call, a fault, or past the end).
    turn: int | None = None
    fault: str | None = None

    def json(self) -> Any:
        """The body parsed as JSON (fails with the body if it is not JSON)."""
        try:
            return json.loads(self.body)
        except ValueError as err:
            raise AssertionError(
                f"{self.method} {self.path}: body is not JSON ({err}): {self.body!r}"
            ) from err

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def shown(self, *, keep_headers: Sequence[str] = ()) -> dict[str, Any]:
        """The request as a transcript shows it: key headers and ``?key=`` as ``[SECRET]``.

        Only the headers that carry a key, name a protocol version or a content
        type are kept (plus ``keep_headers``): the rest (``Host`` with its port,
        ``User-Agent``) say nothing about contenox's promise.
        """
        kept = {"anthropic-version", "content-type", "accept", *(h.lower() for h in keep_headers)}
        headers = {
            k: (SECRET if k in SECRET_HEADERS else v)
            for k, v in sorted(self.headers.items())
            if k in SECRET_HEADERS or k in kept
        }
        out: dict[str, Any] = {"request": f"{self.method} {self.path}"}
        if self.query:
            out["query"] = {
                k: [SECRET] * len(v) if k in SECRET_QUERY else list(v)
                for k, v in sorted(self.query.items())
            }
        out["headers"] = headers
        retried = _sdk_retry(self.headers.get("amz-sdk-request", ""))
        if retried:
            out["retry"] = retried
        if self.body and self.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"
        ):
            out["body"] = {
                k: SECRET if k in SECRET_FORM else v
                for k, v in sorted(parse_qsl(self.body, keep_blank_values=True))
            }
        elif self.body:
            try:
                out["body"] = json.loads(self.body)
            except ValueError:
                out["body"] = self.body
        return out


def _sdk_retry(header: str) -> str:
    """What an ``amz-sdk-request`` header says when it is not a first attempt, else "".

    The AWS SDK numbers its attempts (``attempt=2; max=3``) and retries on its own
    a transport failure or a retryable status; a transcript whose listing gained a
    request then says which one was the SDK's retry, not contenox's.

    >>> _sdk_retry("attempt=1; max=3")
    ''
    >>> _sdk_retry("attempt=2; max=3")
    'AWS SDK attempt 2 of 3: the SDK retried the request before it'
    """
    fields = dict(part.strip().partition("=")[::2] for part in header.split(";") if "=" in part)
    attempt, most = fields.get("attempt", "1"), fields.get("max", "?")
    if attempt in ("", "1"):
        return ""
    return f"AWS SDK attempt {attempt} of {most}: the SDK retried the request before it"


# --------------------------------------------------------------------------- pieces


def chunks(text: str) -> list[str]:
    """``text`` cut into word-sized pieces that join back to it (none empty).

    >>> chunks("Hello there, world.")
    ['Hello ', 'there, ', 'world.']
    """
    return re.findall(r"\s*\S+\s*|\s+", text) or ([text] if text else [])


def _arguments_text(call: ToolCall) -> str:
    if isinstance(call.arguments, str):
        return call.arguments
    return json.dumps(dict(call.arguments or {}), separators=(",", ":"), sort_keys=True)


def _arguments_object(call: ToolCall) -> Any:
    """The arguments as an object, for protocols that carry one (a raw string stays a string)."""
    if isinstance(call.arguments, str):
        try:
            return json.loads(call.arguments)
        except ValueError:
            return call.arguments
    return dict(call.arguments or {})


def _halves(text: str) -> list[str]:
    """A JSON text in two fragments, as providers stream tool arguments."""
    if len(text) < 2:
        return [text]
    middle = len(text) // 2
    return [text[:middle], text[middle:]]


def _usage(turn: Turn) -> tuple[int, int, int]:
    usage = turn.usage
    prompt = usage.prompt_tokens if usage and usage.prompt_tokens is not None else 10
    completion = usage.completion_tokens if usage and usage.completion_tokens is not None else 5
    total = usage.total_tokens if usage and usage.total_tokens is not None else prompt + completion
    return prompt, completion, total


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _ndjson(data: Any) -> bytes:
    return (json.dumps(data, ensure_ascii=False) + "\n").encode()


# --------------------------------------------------------------------------- the stand-in


class ProviderStandIn:
    """A running stand-in: its URLs, its requests, what it served, and stop."""

    def __init__(
        self,
        protocol: Protocol,
        script: Script,
        server: HTTPServer,
        *,
        fault: Fault | None = None,
        token_error: str | None = None,
    ) -> None:
        self.protocol = protocol
        # Vertex: the OAuth error the token endpoint answers every grant with (None: it mints),
        # and the location its backend URL names.
        self.token_error = token_error
        self.location = VERTEX_LOCATION
        self.script = script
        self.fault = fault
        self.model = script.model or DEFAULT_MODELS[protocol]
        self._server = server
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: list[ProviderRequest] = []
        self._next_turn = 0
        self._faulted = 0
        self.exhausted = 0
        # Set once the server listens (its port is picked by the OS at start).
        self.url = ""

    # ------------------------------------------------------------------ reading

    @property
    def base_url(self) -> str:
        """The ``--url`` the provider page tells a user to give for this protocol."""
        if self.protocol == "openai":
            return f"{self.url}/v1"
        if self.protocol == "vertex":
            return f"{self.url}/v1/projects/{VERTEX_PROJECT}/locations/{self.location}"
        return self.url

    @property
    def token_uri(self) -> str:
        """The Vertex stand-in's OAuth token endpoint (a service account's ``token_uri``)."""
        return f"{self.url}/token"

    @property
    def served(self) -> int:
        """How many turns of the Script were served."""
        with self._lock:
            return self._next_turn

    def requests(self) -> list[ProviderRequest]:
        """Every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def chat_requests(self) -> list[ProviderRequest]:
        """The chat (generation) requests, oldest first."""
        return [r for r in self.requests() if _is_chat(self.protocol, r.method, r.path)]

    def shown(self) -> list[dict[str, Any]]:
        """Every request in its transcript form (:meth:`ProviderRequest.shown`)."""
        return [r.shown() for r in self.requests()]

    def unserved(self) -> list[int]:
        """Turns not served that the case must see served (trailing optional ones excepted)."""
        needed = len(self.script.turns) - self.script.optional_turns
        return list(range(self.served, needed))

    def problem(self) -> str | None:
        """Why the dialog was not served exactly (None: it was)."""
        if self.exhausted and not self.script.runs_past_end:
            return (
                f"the {self.protocol} stand-in was asked for a turn {self.exhausted} time(s) "
                f"after its {len(self.script.turns)} turn(s) ran out; add the turn contenox "
                f"asked for, or pass runs_past_end=True\n{self.describe()}"
            )
        if self.unserved():
            return (
                f"the {self.protocol} stand-in served {self.served} of "
                f"{len(self.script.turns)} turn(s); turn(s) {self.unserved()} were never asked "
                f"for\n{self.describe()}"
            )
        return None

    def describe(self) -> str:
        """Every request so far, one per line, for a failure message."""
        rows = [
            f"  {r.method} {r.path} turn={r.turn} fault={r.fault} {r.shown()['headers']} "
            f"{r.body[:300]!r}"
            for r in self.requests()
        ]
        return f"requests received by the {self.protocol} stand-in at {self.url}:\n" + (
            "\n".join(rows) or "  (none)"
        )

    def stop(self) -> None:
        """Stop serving (idempotent); a slow first byte still waiting is released."""
        self._stopping.set()
        if self._server.is_running():
            self._server.stop()

    # ------------------------------------------------------------------ handling

    def _record(self, request: Request, body: str, turn: int | None, fault: str | None) -> None:
        self._requests.append(
            ProviderRequest(
                method=request.method,
                path=request.path,
                query={k: tuple(request.args.getlist(k)) for k in request.args},
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body,
                turn=turn,
                fault=fault,
            )
        )

    def _handle(self, request: Request) -> Response:
        body = request.get_data(as_text=True)
        if not _is_chat(self.protocol, request.method, request.path):
            with self._lock:
                self._record(request, body, None, None)
            return self._listing(request, body)
        with self._lock:
            index = self._next_turn
            fault = self.fault
            faulted = (
                fault is not None
                and index >= fault.turn
                and (fault.times is None or self._faulted < fault.times)
            )
            if faulted:
                assert fault is not None
                self._faulted += 1
            if index >= len(self.script.turns):
                self.exhausted += 1
                self._record(request, body, None, "exhausted")
                return self._error(
                    500, f"e2e stand-in: the script's {len(self.script.turns)} turns ran out"
                )
            if faulted and fault is not None and not fault.consumes_turn:
                self._record(request, body, None, fault.kind)
                if fault.kind == "status":
                    return self._error(
                        fault.status,
                        f"e2e stand-in: fault {fault.code or fault.status}",
                        fault.code,
                    )
            else:
                self._next_turn += 1
                self._record(request, body, index, fault.kind if faulted and fault else None)
        turn = self.script.turns[index]
        assert isinstance(turn, Turn)
        stream = self._wants_stream(request, body)
        pieces: list[bytes | BaseException] = (
            list(self._stream(turn, index)) if stream else [self._whole(turn, index)]
        )
        if faulted and fault is not None:
            pieces = self._faulty(pieces, fault)
        kind = {
            "ollama": "application/x-ndjson",
            "bedrock": "application/vnd.amazon.eventstream",
        }.get(self.protocol, "text/event-stream")
        if not stream:
            kind = "application/json"
        response = Response(self._flow(pieces, fault if faulted else None), content_type=kind)
        if self.protocol == "bedrock" and all(isinstance(p, bytes) for p in pieces):
            # Bedrock's SDK closes the stream on the last event; a chunked body whose
            # terminating chunk is still in flight then reads as "use of closed network
            # connection". A known length ends the body with its last frame, as AWS's does.
            response.headers["Content-Length"] = str(
                sum(len(p) for p in pieces if isinstance(p, bytes))
            )
        return response

    def _flow(self, pieces: list[bytes | BaseException], fault: Fault | None) -> Iterator[bytes]:
        if fault is not None and fault.kind == "slow":
            self._stopping.wait(fault.delay)
        for piece in pieces:
            if isinstance(piece, BaseException):
                raise piece
            yield piece

    def _faulty(
        self, pieces: list[bytes | BaseException], fault: Fault
    ) -> list[bytes | BaseException]:
        out: list[bytes | BaseException] = list(pieces)
        if fault.kind == "cut":
            # werkzeug treats a ConnectionError as the peer gone: it closes the
            # socket without the terminating chunk, which is a cut stream to the client.
            out = [*pieces[: fault.after], ConnectionResetError("e2e stand-in: stream cut")]
        elif fault.kind == "malformed":
            bad = {
                "ollama": b"{not json\n",
                "bedrock": eventstream.encode(
                    {
                        ":event-type": "contentBlockDelta",
                        ":content-type": "application/json",
                        ":message-type": "event",
                    },
                    b"{not json",
                ),
            }.get(self.protocol, b"data: {not json\n\n")
            out = [*pieces[: fault.after], bad, *pieces[fault.after :]]
        return out

    def _wants_stream(self, request: Request, body: str) -> bool:
        if self.protocol in ("gemini", "vertex"):
            return request.path.endswith(":streamGenerateContent")
        if self.protocol == "bedrock":
            return request.path.endswith("/converse-stream")
        try:
            doc = json.loads(body or "{}")
        except ValueError:
            return False
        stream = doc.get("stream") if isinstance(doc, dict) else None
        if self.protocol == "ollama":
            return stream is not False  # Ollama streams unless told not to
        return stream is True

    # ------------------------------------------------------------------ listings and errors

    def _listing(self, request: Request, body: str) -> Response:
        path, method = request.path, request.method
        p = self.protocol
        if p in ("openai", "vllm", "anthropic") and method == "GET" and path == "/v1/models":
            if p == "anthropic":
                row = {
                    "type": "model",
                    "id": self.model,
                    "display_name": self.model,
                    "created_at": "2025-01-01T00:00:00Z",
                }
                data: dict[str, Any] = {
                    "data": [row],
                    "has_more": False,
                    "first_id": self.model,
                    "last_id": self.model,
                }
                return _json(data)
            model = {"id": self.model, "object": "model", "created": 1735689600, "owned_by": "e2e"}
            if p == "vllm" and self.script.context_length:
                model["max_model_len"] = self.script.context_length
            return _json({"object": "list", "data": [model]})
        if p == "ollama" and path == "/api/tags":
            return _json({"models": [self._ollama_tag()]})
        if p == "ollama" and path == "/api/show" and method == "POST":
            asked = _field(body, "model") or _field(body, "name")
            if asked not in (self.model, f"{self.model}:latest"):
                return _json({"error": f"model '{asked}' not found"}, 404)
            return _json(self._ollama_show())
        if p == "ollama" and path == "/api/version":
            return _json({"version": "0.12.0"})
        if p == "ollama" and path == "/api/ps":
            return _json({"models": []})
        if p == "gemini" and method == "GET" and path == "/v1beta/models":
            return _json({"models": [self._gemini_model()]})
        if p == "gemini" and method == "GET" and path == f"/v1beta/models/{self.model}":
            return _json(self._gemini_model())
        if p == "vertex" and method == "POST" and path == "/token" and self.token_error:
            refusal = {"error": self.token_error, "error_description": "e2e stand-in refusal"}
            return _json(refusal, 400)
        if p == "vertex" and method == "POST" and path == "/token":
            token = {"access_token": VERTEX_TOKEN, "token_type": "Bearer", "expires_in": 3600}
            return _json(token)
        if p == "vertex" and method == "GET" and path.endswith("/publishers/google/models"):
            return _json({"publisherModels": [self._vertex_model()]})
        if p == "bedrock" and method == "GET" and path == "/foundation-models":
            return _json({"modelSummaries": [self._bedrock_model()]})
        if p == "bedrock" and method == "GET" and path == "/inference-profiles":
            return _json({"inferenceProfileSummaries": []})
        return self._error(404, f"e2e stand-in: no route {method} {path}")

    def _error(self, status: int, message: str, code: str | None = None) -> Response:
        p = self.protocol
        if p == "anthropic":
            kinds = {401: "authentication_error", 429: "rate_limit_error", 500: "api_error"}
            kind = kinds.get(status, "invalid_request_error")
            data: Any = {"type": "error", "error": {"type": kind, "message": message}}
        elif p in ("gemini", "vertex"):
            statuses = {
                401: "UNAUTHENTICATED",
                403: "PERMISSION_DENIED",
                429: "RESOURCE_EXHAUSTED",
                404: "NOT_FOUND",
            }
            state = code or statuses.get(status, "INTERNAL")
            data = {"error": {"code": status, "message": message, "status": state}}
        elif p == "bedrock":
            kinds = {
                400: "ValidationException",
                401: "UnrecognizedClientException",
                403: "AccessDeniedException",
                404: "ResourceNotFoundException",
                429: "ThrottlingException",
            }
            kind = code or kinds.get(status, "InternalServerException")
            response = _json({"message": message}, status)
            response.headers["x-amzn-ErrorType"] = kind
            response.headers["x-amzn-RequestId"] = "e2e-request"
            if status == 429:
                response.headers["Retry-After"] = "0"
            return response
        elif p == "ollama":
            data = {"error": message}
        else:
            kinds = {401: "invalid_request_error", 429: "rate_limit_exceeded"}
            codes = {401: "invalid_api_key", 429: "rate_limit_exceeded"}
            data = {
                "error": {
                    "message": message,
                    "type": kinds.get(status, "server_error"),
                    "param": None,
                    "code": codes.get(status),
                }
            }
        response = _json(data, status)
        if status == 429:
            response.headers["Retry-After"] = "0"
        return response

    def _ollama_tag(self) -> dict[str, Any]:
        return {
            "name": self.model,
            "model": self.model,
            "modified_at": "2025-01-01T00:00:00Z",
            "size": 1000,
            "digest": "e2e0" * 16,
            "details": {"format": "gguf", "family": "e2e", "parameter_size": "8B"},
        }

    def _ollama_show(self) -> dict[str, Any]:
        caps = ["completion", "tools"]
        flags = self.script.capabilities
        if flags is not None and getattr(flags, "think", None):
            caps.append("thinking")
        if flags is not None and getattr(flags, "vision", None):
            caps.append("vision")
        if flags is not None and getattr(flags, "embed", None):
            caps.append("embedding")
        info: dict[str, Any] = {"general.architecture": "e2e"}
        if self.script.context_length:
            info["e2e.context_length"] = self.script.context_length
        return {
            "modelfile": "",
            "template": "",
            "details": {"format": "gguf", "family": "e2e", "parameter_size": "8B"},
            "model_info": info,
            "capabilities": caps,
        }

    def _gemini_model(self) -> dict[str, Any]:
        return {
            "name": f"models/{self.model}",
            "displayName": self.model,
            "inputTokenLimit": self.script.context_length or 32768,
            "outputTokenLimit": self.script.max_output_tokens or 8192,
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
            "thinking": bool(self.script.capabilities and self.script.capabilities.think),  # type: ignore[union-attr]
        }

    # ------------------------------------------------------------------ a turn, per protocol

    def _stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        return {
            "openai": self._openai_stream,
            "vllm": self._openai_stream,
            "ollama": self._ollama_stream,
            "gemini": self._gemini_stream,
            "anthropic": self._anthropic_stream,
            "vertex": self._gemini_stream,
            "bedrock": self._bedrock_stream,
        }[self.protocol](turn, index)

    def _whole(self, turn: Turn, index: int) -> bytes:
        return json.dumps(
            {
                "openai": self._openai_whole,
                "vllm": self._openai_whole,
                "ollama": self._ollama_whole,
                "gemini": self._gemini_whole,
                "anthropic": self._anthropic_whole,
                "vertex": self._gemini_whole,
                "bedrock": self._bedrock_whole,
            }[self.protocol](turn, index),
            ensure_ascii=False,
        ).encode()

    def _call_id(self, call: ToolCall, index: int, n: int) -> str:
        if call.id:
            return call.id
        prefix = {"anthropic": "toolu", "bedrock": "tooluse"}.get(self.protocol, "call")
        return f"{prefix}_e2e_{index}_{n}"

    # OpenAI chat completions (and vLLM) ------------------------------------------------

    def _openai_finish(self, turn: Turn) -> str:
        return turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")

    def _openai_stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        base = {
            "id": f"chatcmpl-e2e-{index}",
            "object": "chat.completion.chunk",
            "created": 1735689600,
            "model": self.model,
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish}
            return _sse({**base, "choices": [choice]})

        yield chunk({"role": "assistant", "content": ""})
        for piece in chunks(turn.thinking or ""):
            yield chunk({"reasoning_content": piece})
        for piece in chunks(turn.text or ""):
            yield chunk({"content": piece})
        for n, call in enumerate(turn.tool_calls):
            head = {
                "index": n,
                "id": self._call_id(call, index, n),
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [head]})
            for part in _halves(_arguments_text(call)):
                yield chunk({"tool_calls": [{"index": n, "function": {"arguments": part}}]})
        yield chunk({}, self._openai_finish(turn))
        prompt, completion, total = _usage(turn)
        usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": total}
        yield _sse({**base, "choices": [], "usage": usage})
        yield b"data: [DONE]\n\n"

    def _openai_whole(self, turn: Turn, index: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
        if turn.thinking:
            message["reasoning_content"] = turn.thinking
        if turn.tool_calls:
            message["tool_calls"] = [
                {
                    "id": self._call_id(call, index, n),
                    "type": "function",
                    "function": {"name": call.name, "arguments": _arguments_text(call)},
                }
                for n, call in enumerate(turn.tool_calls)
            ]
        prompt, completion, total = _usage(turn)
        return {
            "id": f"chatcmpl-e2e-{index}",
            "object": "chat.completion",
            "created": 1735689600,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": self._openai_finish(turn)}
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": total,
            },
        }

    # Ollama /api/chat -----------------------------------------------------------------

    def _ollama_calls(self, turn: Turn, index: int) -> list[dict[str, Any]]:
        return [
            {
                "id": self._call_id(call, index, n),
                "function": {"index": n, "name": call.name, "arguments": _arguments_object(call)},
            }
            for n, call in enumerate(turn.tool_calls)
        ]

    def _ollama_final(self, turn: Turn) -> dict[str, Any]:
        prompt, completion, _ = _usage(turn)
        return {
            "model": self.model,
            "created_at": "2025-01-01T00:00:00Z",
            "done": True,
            "done_reason": turn.finish_reason or "stop",
            "total_duration": 1000,
            "load_duration": 10,
            "prompt_eval_count": prompt,
            "prompt_eval_duration": 100,
            "eval_count": completion,
            "eval_duration": 100,
        }

    def _ollama_stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        def line(message: dict[str, Any]) -> bytes:
            return _ndjson(
                {
                    "model": self.model,
                    "created_at": "2025-01-01T00:00:00Z",
                    "message": {"role": "assistant", "content": "", **message},
                    "done": False,
                }
            )

        for piece in chunks(turn.thinking or ""):
            yield line({"thinking": piece})
        for piece in chunks(turn.text or ""):
            yield line({"content": piece})
        if turn.tool_calls:
            yield line({"tool_calls": self._ollama_calls(turn, index)})
        final = self._ollama_final(turn)
        final["message"] = {"role": "assistant", "content": ""}
        yield _ndjson(final)

    def _ollama_whole(self, turn: Turn, index: int) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
        if turn.thinking:
            message["thinking"] = turn.thinking
        if turn.tool_calls:
            message["tool_calls"] = self._ollama_calls(turn, index)
        return {**self._ollama_final(turn), "message": message}

    # Gemini generateContent -----------------------------------------------------------

    def _gemini_call(self, call: ToolCall, index: int, n: int) -> dict[str, Any]:
        args = _arguments_object(call)
        return {
            "functionCall": {
                "id": self._call_id(call, index, n),
                "name": call.name,
                "args": args if isinstance(args, dict) else {},
            }
        }

    def _gemini_usage(self, turn: Turn) -> dict[str, int]:
        prompt, completion, total = _usage(turn)
        return {
            "promptTokenCount": prompt,
            "candidatesTokenCount": completion,
            "totalTokenCount": total,
        }

    def _gemini_stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        def event(parts: list[dict[str, Any]], finish: str | None = None) -> bytes:
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
            if finish is not None:
                candidate["finishReason"] = finish
            data: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model}
            if finish is not None:
                data["usageMetadata"] = self._gemini_usage(turn)
            return _sse(data)

        for piece in chunks(turn.thinking or ""):
            yield event([{"text": piece, "thought": True}])
        for piece in chunks(turn.text or ""):
            yield event([{"text": piece}])
        calls = [self._gemini_call(c, index, n) for n, c in enumerate(turn.tool_calls)]
        if calls:
            yield event(calls)
        yield event([{"text": ""}], turn.finish_reason or "STOP")

    def _gemini_whole(self, turn: Turn, index: int) -> dict[str, Any]:
        parts: list[dict[str, Any]] = []
        if turn.thinking:
            parts.append({"text": turn.thinking, "thought": True})
        if turn.text:
            parts.append({"text": turn.text})
        parts += [self._gemini_call(c, index, n) for n, c in enumerate(turn.tool_calls)]
        return {
            "candidates": [
                {
                    "content": {"role": "model", "parts": parts},
                    "finishReason": turn.finish_reason or "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": self._gemini_usage(turn),
            "modelVersion": self.model,
        }

    # Vertex AI (Gemini on GCP): the Gemini wire format under the project path ---------

    def _vertex_model(self) -> dict[str, Any]:
        return {
            "name": f"publishers/google/models/{self.model}",
            "versionId": "001",
            "openSourceCategory": "PROPRIETARY",
            "launchStage": "GA",
        }

    # Bedrock Converse / ConverseStream --------------------------------------------------

    def _bedrock_model(self) -> dict[str, Any]:
        return {
            "modelArn": f"arn:aws:bedrock:us-east-1::foundation-model/{self.model}",
            "modelId": self.model,
            "modelName": self.model,
            "providerName": "Anthropic",
            "inputModalities": ["TEXT"],
            "outputModalities": ["TEXT"],
            "responseStreamingSupported": True,
            "customizationsSupported": [],
            "inferenceTypesSupported": ["ON_DEMAND"],
            "modelLifecycle": {"status": "ACTIVE"},
        }

    def _bedrock_stop(self, turn: Turn) -> str:
        return turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn")

    def _bedrock_usage(self, turn: Turn) -> dict[str, int]:
        prompt, completion, total = _usage(turn)
        return {"inputTokens": prompt, "outputTokens": completion, "totalTokens": total}

    def _bedrock_stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        event = eventstream.encode_event
        delta: dict[str, Any]
        yield event("messageStart", {"role": "assistant"})
        block = 0
        if turn.thinking:
            for piece in chunks(turn.thinking):
                delta = {"reasoningContent": {"text": piece}}
                yield event("contentBlockDelta", {"contentBlockIndex": block, "delta": delta})
            signature = {"reasoningContent": {"signature": "e2e-signature"}}
            yield event("contentBlockDelta", {"contentBlockIndex": block, "delta": signature})
            yield event("contentBlockStop", {"contentBlockIndex": block})
            block += 1
        if turn.text:
            for piece in chunks(turn.text):
                delta = {"text": piece}
                yield event("contentBlockDelta", {"contentBlockIndex": block, "delta": delta})
            yield event("contentBlockStop", {"contentBlockIndex": block})
            block += 1
        for n, call in enumerate(turn.tool_calls):
            start = {"toolUse": {"toolUseId": self._call_id(call, index, n), "name": call.name}}
            yield event("contentBlockStart", {"contentBlockIndex": block, "start": start})
            for part in _halves(_arguments_text(call)):
                delta = {"toolUse": {"input": part}}
                yield event("contentBlockDelta", {"contentBlockIndex": block, "delta": delta})
            yield event("contentBlockStop", {"contentBlockIndex": block})
            block += 1
        yield event("messageStop", {"stopReason": self._bedrock_stop(turn)})
        yield event("metadata", {"usage": self._bedrock_usage(turn), "metrics": {"latencyMs": 1}})

    def _bedrock_whole(self, turn: Turn, index: int) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if turn.thinking:
            reasoning = {"reasoningText": {"text": turn.thinking, "signature": "e2e-signature"}}
            content.append({"reasoningContent": reasoning})
        if turn.text:
            content.append({"text": turn.text})
        content += [
            {
                "toolUse": {
                    "toolUseId": self._call_id(call, index, n),
                    "name": call.name,
                    "input": _arguments_object(call),
                }
            }
            for n, call in enumerate(turn.tool_calls)
        ]
        return {
            "output": {"message": {"role": "assistant", "content": content}},
            "stopReason": self._bedrock_stop(turn),
            "usage": self._bedrock_usage(turn),
            "metrics": {"latencyMs": 1},
        }

    # Anthropic messages ---------------------------------------------------------------

    def _anthropic_stop(self, turn: Turn) -> str:
        return turn.finish_reason or ("tool_use" if turn.tool_calls else "end_turn")

    def _anthropic_stream(self, turn: Turn, index: int) -> Iterator[bytes]:
        prompt, completion, _ = _usage(turn)
        start: dict[str, Any] = {
            "id": f"msg_e2e_{index}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": 1},
        }
        yield _sse({"type": "message_start", "message": start}, "message_start")
        block = 0

        def open_block(content: dict[str, Any]) -> bytes:
            data = {"type": "content_block_start", "index": block, "content_block": content}
            return _sse(data, "content_block_start")

        def delta(content: dict[str, Any]) -> bytes:
            data = {"type": "content_block_delta", "index": block, "delta": content}
            return _sse(data, "content_block_delta")

        def close_block() -> bytes:
            return _sse({"type": "content_block_stop", "index": block}, "content_block_stop")

        if turn.thinking:
            yield open_block({"type": "thinking", "thinking": ""})
            for piece in chunks(turn.thinking):
                yield delta({"type": "thinking_delta", "thinking": piece})
            yield delta({"type": "signature_delta", "signature": "e2e-signature"})
            yield close_block()
            block += 1
        if turn.text:
            yield open_block({"type": "text", "text": ""})
            for piece in chunks(turn.text):
                yield delta({"type": "text_delta", "text": piece})
            yield close_block()
            block += 1
        for n, call in enumerate(turn.tool_calls):
            yield open_block(
                {
                    "type": "tool_use",
                    "id": self._call_id(call, index, n),
                    "name": call.name,
                    "input": {},
                }
            )
            for part in _halves(_arguments_text(call)):
                yield delta({"type": "input_json_delta", "partial_json": part})
            yield close_block()
            block += 1
        stop = {"stop_reason": self._anthropic_stop(turn), "stop_sequence": None}
        yield _sse(
            {"type": "message_delta", "delta": stop, "usage": {"output_tokens": completion}},
            "message_delta",
        )
        yield _sse({"type": "message_stop"}, "message_stop")

    def _anthropic_whole(self, turn: Turn, index: int) -> dict[str, Any]:
        prompt, completion, _ = _usage(turn)
        content: list[dict[str, Any]] = []
        if turn.thinking:
            content.append(
                {"type": "thinking", "thinking": turn.thinking, "signature": "e2e-signature"}
            )
        if turn.text:
            content.append({"type": "text", "text": turn.text})
        content += [
            {
                "type": "tool_use",
                "id": self._call_id(call, index, n),
                "name": call.name,
                "input": _arguments_object(call),
            }
            for n, call in enumerate(turn.tool_calls)
        ]
        return {
            "id": f"msg_e2e_{index}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self._anthropic_stop(turn),
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }


def _is_chat(protocol: str, method: str, path: str) -> bool:
    if method != "POST":
        return False
    if protocol in ("openai", "vllm"):
        return path == "/v1/chat/completions"
    if protocol == "ollama":
        return path == "/api/chat"
    if protocol == "gemini":
        return bool(re.fullmatch(r"/v1beta/models/[^/]+:(stream)?[gG]enerateContent", path))
    if protocol == "vertex":
        return bool(
            re.fullmatch(
                r"/v1/projects/[^/]+/locations/[^/]+/publishers/google/models/[^/]+"
                r":(stream)?[gG]enerateContent",
                path,
            )
        )
    if protocol == "bedrock":
        return bool(re.fullmatch(r"/model/[^/]+/converse(-stream)?", path))
    return path == "/v1/messages"


def _field(body: str, name: str) -> str:
    try:
        doc = json.loads(body or "{}")
    except ValueError:
        return ""
    value = doc.get(name) if isinstance(doc, dict) else None
    return value if isinstance(value, str) else ""


def _json(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status=status, content_type="application/json")


# --------------------------------------------------------------------------- starting


def start_provider(
    protocol: Protocol,
    script: Script,
    *,
    host: str = "127.0.0.1",
    fault: Fault | None = None,
    token_error: str | None = None,
) -> ProviderStandIn:
    """Start the ``protocol`` stand-in serving ``script`` on ``host`` at an OS-picked port.

    Refuses a non-loopback ``host`` (:class:`~harness.servers.NotLoopback`), an
    unknown protocol, or a fault that is not a :class:`Fault`, before binding anything.
    ``token_error`` (Vertex only): the token endpoint answers every grant with HTTP 400
    and that OAuth error (``invalid_grant``) instead of a token.
    """
    require_loopback(host)
    if protocol not in PROTOCOLS:
        raise ProviderError(
            f"no stand-in for protocol {protocol!r}; the harness has {', '.join(PROTOCOLS)}"
        )
    if not isinstance(script, Script):
        raise ProviderError(f"a stand-in serves a Script, got {type(script).__name__}")
    if fault is not None and not isinstance(fault, Fault):
        raise ProviderError(f"fault must be a Fault, got {fault!r}")
    if token_error is not None and (protocol != "vertex" or not isinstance(token_error, str)):
        raise ProviderError(
            f"token_error is an OAuth error name for the vertex stand-in, got {token_error!r} "
            f"for {protocol!r}"
        )
    server = QuickStopServer(host=host, port=0, threaded=True, startup_timeout=10.0)
    standin = ProviderStandIn(protocol, script, server, fault=fault, token_error=token_error)
    server.expect_request(re.compile(".*")).respond_with_handler(standin._handle)
    server.start()
    # start() probes the server with a GET / of its own: not a request contenox made.
    with standin._lock:
        standin._requests.clear()
    standin.url = server.url_for("/").rstrip("/")
    return standin


def serve_provider(
    instance: Instance,
    protocol: Protocol,
    script: Script,
    *,
    fault: Fault | None = None,
    token_error: str | None = None,
) -> ProviderStandIn:
    """Start a stand-in for this case; it is stopped when the case ends."""
    standin = start_provider(protocol, script, fault=fault, token_error=token_error)

    def stop() -> None:
        standin.stop()

    instance.cleanups.append(stop)
    return standin


# --------------------------------------------------------------------------- a Case's provider

# The environment variable a case's key travels in, and the key (a fake: only the
# stand-in ever sees it, and the transcript shows it as [SECRET]).
KEY_ENV = "E2E_PROVIDER_KEY"
KEY = "sk-e2e-provider-key-0000"
# How each provider page registers it: backend name, --type, and whether a key is given.
_REGISTRATION: Mapping[str, tuple[str, str, bool]] = {
    "openai": ("openai", "openai", True),
    "vllm": ("myvllm", "vllm", False),
    "ollama": ("ollama", "ollama", False),
    "gemini": ("gemini", "gemini", True),
    "anthropic": ("anthropic", "anthropic", True),
    # Vertex and Bedrock authenticate from the ambient chain unless a key is given:
    # ADC (a service-account file in the scratch home) and ~/.aws/{credentials,config}.
    "vertex": ("vertex", "vertex-google", False),
    "bedrock": ("bedrock", "bedrock", False),
}
# The env var each page puts a key in, where the page names one.
_KEY_ENVS: Mapping[str, str] = {"vertex": "VERTEX_SA_JSON", "bedrock": "AWS_BEDROCK_CREDS"}
# Fake AWS credentials: the ambient pair in ~/.aws/credentials, the pinned pair in
# the --api-key-env JSON blob. Only the access key ids are shown; secrets read [SECRET].
AWS_REGION = "us-east-1"
AWS_AMBIENT_KEY_ID = "AKIAE2EAMBIENT00000"
AWS_PINNED_KEY_ID = "AKIAE2EPINNED000000"
AWS_SECRET = "e2e-aws-secret-access-key-0000"
SERVICE_ACCOUNT = "contenox-e2e@e2e-project.iam.gserviceaccount.com"


@functools.cache
def _rsa_private_key() -> str:
    """A throwaway RSA key (PKCS#8 PEM) for the fake service account, made once a process."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()


def service_account_json(token_uri: str, *, key_id: str = "e2e-key-1") -> str:
    """A GCP service-account key file whose ``token_uri`` is ``token_uri`` (a stand-in's).

    The JWT-bearer exchange the Google client makes goes there; the private key
    is a throwaway generated on this machine, never a real credential.
    """
    return json.dumps(
        {
            "type": "service_account",
            "project_id": VERTEX_PROJECT,
            "private_key_id": key_id,
            "private_key": _rsa_private_key(),
            "client_email": SERVICE_ACCOUNT,
            "client_id": "100000000000000000000",
            "auth_uri": "http://127.0.0.1:9/auth",
            "token_uri": token_uri,
        },
        indent=2,
    )


def aws_credentials_blob(key_id: str = AWS_PINNED_KEY_ID) -> str:
    """The JSON blob bedrock.md puts in ``AWS_BEDROCK_CREDS`` to pin credentials."""
    return json.dumps(
        {"access_key_id": key_id, "secret_access_key": AWS_SECRET, "session_token": ""}
    )


def provider_key(standin: ProviderStandIn) -> tuple[str, str]:
    """The env var and value a Case passes ``--api-key-env`` for this stand-in's protocol."""
    if standin.protocol == "vertex":
        return _KEY_ENVS["vertex"], service_account_json(standin.token_uri)
    if standin.protocol == "bedrock":
        return _KEY_ENVS["bedrock"], aws_credentials_blob()
    return KEY_ENV, KEY


def _ambient_credentials(instance: Instance, standin: ProviderStandIn) -> None:
    """The credential chain a cloud SDK reads from the scratch home (never the real one)."""
    recorder = instance.recorder
    if standin.protocol == "vertex":
        path = instance.home / ".config" / "gcloud" / "application_default_credentials.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(service_account_json(standin.token_uri), encoding="utf-8")
        recorder.note(
            "ADC: [HOME]/.config/gcloud/application_default_credentials.json holds a "
            f"service-account key for {SERVICE_ACCOUNT}, token_uri [PROVIDER_URL]/token"
        )
    elif standin.protocol == "bedrock":
        aws = instance.home / ".aws"
        aws.mkdir(parents=True, exist_ok=True)
        (aws / "credentials").write_text(
            f"[default]\naws_access_key_id = {AWS_AMBIENT_KEY_ID}\n"
            f"aws_secret_access_key = {AWS_SECRET}\n",
            encoding="utf-8",
        )
        # contenox sends the control-plane listing (ListFoundationModels) to
        # bedrock.<region>.amazonaws.com whatever --url says; the SDK's shared-config
        # endpoint_url keeps every call on loopback (it never resolves an AWS host).
        (aws / "config").write_text(
            f"[default]\nregion = {AWS_REGION}\nendpoint_url = {standin.url}\n",
            encoding="utf-8",
        )
        recorder.note(
            f"AWS shared files: [HOME]/.aws/credentials ([default] {AWS_AMBIENT_KEY_ID}), "
            f"[HOME]/.aws/config ([default] region = {AWS_REGION}, "
            "endpoint_url = [PROVIDER_URL])"
        )


@dataclass(frozen=True)
class Provider:
    """Which protocol serves a Case's dialog: ``Case(provider=Provider("openai", fault=…))``.

    ``key=False`` registers it without ``--api-key-env`` (an Ollama or vLLM
    server needs none); the default follows the provider page.
    """

    protocol: Protocol
    fault: Fault | None = None
    key: bool | None = None
    # Vertex: the token endpoint refuses every grant with this OAuth error.
    token_error: str | None = None
    # Vertex: the location of the backend URL (None: ``global``), e.g. ``europe-west4``.
    location: str | None = None

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise ProviderError(
                f"provider {self.protocol!r} has no stand-in; give one of {', '.join(PROTOCOLS)}"
            )
        if self.fault is not None and not isinstance(self.fault, Fault):
            raise ProviderError(f"provider fault must be a Fault, got {self.fault!r}")
        if self.key is not None and not isinstance(self.key, bool):
            raise ProviderError(f"provider key must be True, False or None, got {self.key!r}")
        if self.location is not None and (
            self.protocol != "vertex" or not re.fullmatch(r"[a-z0-9-]+", str(self.location))
        ):
            raise ProviderError(
                f"provider location is a Vertex location such as 'europe-west4', for the "
                f"vertex stand-in; got {self.location!r} for {self.protocol!r}"
            )
        if self.token_error is not None and self.protocol != "vertex":
            raise ProviderError(
                f"provider token_error is for the vertex stand-in, not {self.protocol!r}"
            )

    @property
    def backend(self) -> str:
        """The backend name the provider page registers (``openai``, ``myvllm``, …)."""
        return _REGISTRATION[self.protocol][0]

    @property
    def with_key(self) -> bool:
        return _REGISTRATION[self.protocol][2] if self.key is None else self.key


def as_provider(value: object, case: str) -> Provider:
    """A Case's ``provider`` field as a :class:`Provider`, or a CaseError-worthy message."""
    if isinstance(value, Provider):
        return value
    if isinstance(value, str):
        try:
            return Provider(value)  # type: ignore[arg-type]
        except ProviderError as err:
            raise ProviderError(f"case {case!r}: {err}") from None
    raise ProviderError(
        f"case {case!r}: provider must be a protocol name ({', '.join(PROTOCOLS)}) or a "
        f"Provider(...), got {value!r}"
    )


def _turn_line(turn: Turn) -> str:
    parts = []
    if turn.thinking:
        parts.append(f"(thinking) {turn.thinking}")
    if turn.text:
        parts.append(turn.text)
    for call in turn.tool_calls:
        parts.append(f"-> {call.name} {_arguments_text(call)}")
    return " | ".join(parts)


def register_provider(instance: Instance, provider: Provider, script: Script) -> ProviderStandIn:
    """Start ``provider``'s stand-in serving ``script`` and register it as its page says.

    ``contenox backend add <name> --type <type> --url <stand-in> [--api-key-env VAR]``,
    then ``config set default-provider`` and ``default-model``. The URL and the key
    read as ``[PROVIDER_URL]`` and ``[SECRET]`` in the transcript.
    """
    __tracebackhide__ = True
    standin = serve_provider(
        instance, provider.protocol, script, fault=provider.fault, token_error=provider.token_error
    )
    if provider.location is not None:
        standin.location = provider.location
    recorder = instance.recorder
    recorder.name(standin.url, "[PROVIDER_URL]")
    recorder.name(KEY, SECRET)
    recorder.entries.append(
        {
            "provider": f"{provider.protocol} stand-in",
            "model": standin.model,
            "fault": _fault_line(provider.fault)
            + (f"; /token answers {provider.token_error}" if provider.token_error else ""),
            "turns": [_turn_line(t) for t in script.turns if isinstance(t, Turn)],
        }
    )
    name, kind, _ = _REGISTRATION[provider.protocol]
    args = ["backend", "add", name, "--type", kind, "--url", standin.base_url]
    env = None
    if provider.protocol == "bedrock" or (provider.protocol == "vertex" and not provider.with_key):
        # Bedrock's region and endpoint come from ~/.aws/config even with a pinned key.
        recorder.name(AWS_SECRET, SECRET)
        _ambient_credentials(instance, standin)
    if provider.with_key:
        var, value = provider_key(standin)
        recorder.name(value, SECRET)
        if provider.protocol == "vertex":
            # The env value is shown after the URL is named, so name the key itself too,
            # as it reads inside the JSON text (its newlines escaped).
            recorder.name(json.dumps(_rsa_private_key())[1:-1], SECRET)
        args += ["--api-key-env", var]
        env = {var: value}
    with recorder.setup():
        instance.must(*args, env=env)
        instance.must("config", "set", "default-provider", kind)
        instance.must("config", "set", "default-model", standin.model)
    return standin


def _fault_line(fault: Fault | None) -> str:
    if fault is None:
        return "none"
    detail = {
        "status": f"HTTP {fault.status}",
        "cut": f"stream cut after {fault.after} chunk(s)",
        "malformed": f"a malformed chunk after {fault.after}",
        "slow": f"first byte after {fault.delay}s",
    }[fault.kind]
    times = "every request" if fault.times is None else f"{fault.times} request(s)"
    return f"{detail} from turn {fault.turn}, {times}"


# contenox v1.0.0 carries a provider's tool-call id back with a random suffix of its
# own (``call_e2e_0_0`` comes back as ``call_e2e_0_0-8508``): shown as ``-[SUFFIX]``.
_ID_SUFFIX = re.compile(r"\b((?:call|toolu|tooluse)_e2e_\d+_\d+)-[0-9a-f]{4}\b")


def _unsuffixed(value: Any) -> Any:
    if isinstance(value, str):
        return _ID_SUFFIX.sub(r"\1-[SUFFIX]", value)
    if isinstance(value, list):
        return [_unsuffixed(v) for v in value]
    if isinstance(value, dict):
        return {k: _unsuffixed(v) for k, v in value.items()}
    return value


def sent(standin: ProviderStandIn) -> list[dict[str, Any]]:
    """What contenox sent the stand-in, as a transcript shows it.

    Listing calls by method and path; each chat request with its headers (keys as
    ``[SECRET]``) and body, the system prompt as ``[system prompt]`` (it carries
    the date), the tools offered by name, and ``prompt_cache_key`` as ``[CACHE KEY]``.

    A chat request whose history ends on the ``mission_finish`` result is the closing
    call that races the unit's teardown (v1.0.0 sends it, cancels it or never asks for
    it, run to run): it is named, not recorded, and named too when the teardown came
    first, so the transcript is the same either way.
    """
    out: list[dict[str, Any]] = []
    finished = closed = False
    for request in standin.requests():
        shown = request.shown()
        if not _is_chat(standin.protocol, request.method, request.path):
            out.append({k: v for k, v in shown.items() if k != "body"} | _listing_body(shown))
            continue
        body = shown.get("body")
        if _ends_on_mission_finished(body):
            if not closed:
                out.append({"request": shown.get("request"), "closing": CLOSING_CALL})
            closed = True
            continue
        if isinstance(body, dict):
            shown["body"] = _unsuffixed(_chat_body(body))
        shown["served"] = request.turn if request.turn is not None else request.fault
        finished = finished or _calls_mission_finish(standin.script, request.turn)
        out.append(shown)
    if finished and not closed:
        out.append({"request": _closing_request(out), "closing": CLOSING_CALL})
    return out


def _ends_on_mission_finished(body: Any) -> bool:
    """Whether a chat body's last message is a ``mission_finish`` result (any protocol)."""
    if not isinstance(body, dict):
        return False
    history = body.get("messages", body.get("contents"))
    if not isinstance(history, list) or not history:
        return False
    return MISSION_FINISHED in json.dumps(history[-1], ensure_ascii=False)


def _calls_mission_finish(script: Script, turn: int | None) -> bool:
    if turn is None or not 0 <= turn < len(script.turns):
        return False
    served = script.turns[turn]
    calls = served.tool_calls if isinstance(served, Turn) else ()
    return any(call.name.rsplit(".", 1)[-1] == "mission_finish" for call in calls)


def _closing_request(shown: Sequence[Mapping[str, Any]]) -> object:
    """The method and path a closing call would have used: the last chat request's."""
    chats = [r for r in shown if "served" in r]
    return chats[-1].get("request") if chats else None


def _listing_body(shown: Mapping[str, Any]) -> dict[str, Any]:
    body = shown.get("body")
    return {"body": body} if body else {}


def _tool_names(tools: Any) -> list[str]:
    names: list[str] = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        if "function" in tool and isinstance(tool["function"], dict):
            names.append(str(tool["function"].get("name")))
        elif "name" in tool:
            names.append(str(tool["name"]))
        elif isinstance(tool.get("toolSpec"), dict):  # Bedrock Converse
            names.append(str(tool["toolSpec"].get("name")))
        for key in ("functionDeclarations", "function_declarations"):
            names += [str(f.get("name")) for f in tool.get(key, []) if isinstance(f, dict)]
    return names


def _chat_body(body: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in body.items():
        if key == "tools":
            out[key] = _tool_names(value)
        elif key == "toolConfig" and isinstance(value, dict):
            out[key] = {**value, "tools": _tool_names(value.get("tools"))}
        elif key == "prompt_cache_key":
            out[key] = "[CACHE KEY]"
        elif key in ("system", "system_instruction", "systemInstruction"):
            out[key] = "[system prompt]"
        elif key in ("messages", "contents") and isinstance(value, list):
            out[key] = [
                {**m, "content": "[system prompt]"}
                if isinstance(m, dict) and m.get("role") == "system"
                else m
                for m in value
            ]
        else:
            out[key] = value
    return out


def check_served(standin: ProviderStandIn) -> None:
    """Fail unless the stand-in served its dialog exactly (the provider's model demand)."""
    __tracebackhide__ = True
    problem = standin.problem()
    if problem is not None:
        raise AssertionError(problem)
