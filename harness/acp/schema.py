"""Every message the agent sends, checked against the ACP schema.

The schema is the one the ``agent-client-protocol`` package ships as typed
(pydantic) models in :mod:`acp.schema` — generated from the protocol's
``schema.json`` (:data:`SCHEMA_REF`, protocolVersion :data:`SCHEMA_PROTOCOL_VERSION`).
:func:`check` takes one message the agent sent, with the method of the request
it answers when it is a response, and returns what in it breaks the schema, one
:class:`Violation` per field::

    >>> check({"jsonrpc": "2.0", "method": "session/update",
    ...        "params": {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk",
    ...                                                "content": {"type": "foo"}}}})
    [Violation(method='session/update', path='params.update.content.type',
               problem="'foo' is not one of 'text', 'image', 'audio', 'resource_link', 'resource'")]

The check is strict where the package is lenient on purpose. Its models
*salvage* some malformed fields back to a default and *drop* malformed items
from some lists (the schema's ``x-deserialize-default-on-error`` /
``x-deserialize-skip-invalid-items``, a receiver's courtesy); a sender that
relies on it still sent a malformed message, and an editor loses what was in
that field. So while :func:`check` runs, those two helpers validate instead of
salvaging, and values are not coerced (``"1"`` is not an integer).

What the schema does not constrain is not flagged: fields it does not name
(JSON Schema allows them) and ``_meta`` contents. Extension methods (a name
starting with ``_``) carry whatever params they like.
"""

from __future__ import annotations

import contextvars
import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from pydantic import BaseModel, ValidationError

__all__ = [
    "KNOWN_VIOLATIONS",
    "SCHEMA_PROTOCOL_VERSION",
    "SCHEMA_REF",
    "KnownViolation",
    "Violation",
    "check",
    "known",
]

JSON: TypeAlias = Any

# The schema release the pinned package was generated from (acp/schema.py's header),
# and the protocolVersion of its acp.meta (tests/test_acp_schema.py holds the two equal).
SCHEMA_REF = "schema-v1.19.0"
SCHEMA_PROTOCOL_VERSION: int = 1


@dataclass(frozen=True)
class _Tables:
    """The package's models for each method, loaded on the first check.

    Importing ``acp`` builds a few hundred pydantic models (about a second of
    CPU); every pytest process imports the harness, and most never check an
    ACP message, so the package is imported only when one is checked.
    """

    # What the agent answers to each request the client may send (ACP's agent methods).
    responses: Mapping[str, type[BaseModel]]
    # The params of each request the agent may make of the client.
    requests: Mapping[str, type[BaseModel]]
    # The params of each notification the agent may send.
    notifications: Mapping[str, type[BaseModel]]
    # Client methods the schema names whose params this module does not model
    # (elicitation, MCP-over-ACP): their params are not checked, only the name.
    client_methods: frozenset[str]
    error: type[BaseModel]


@functools.cache
def _tables() -> _Tables:
    import acp._deserialize as _deserialize
    import acp.schema as _schema
    from acp.meta import CLIENT_METHODS

    _strict_off(_schema, _deserialize)
    return _Tables(
        responses={
            "initialize": _schema.InitializeResponse,
            "authenticate": _schema.AuthenticateResponse,
            "logout": _schema.LogoutResponse,
            "session/new": _schema.NewSessionResponse,
            "session/load": _schema.LoadSessionResponse,
            "session/list": _schema.ListSessionsResponse,
            "session/prompt": _schema.PromptResponse,
            "session/set_mode": _schema.SetSessionModeResponse,
            "session/set_config_option": _schema.SetSessionConfigOptionResponse,
            "session/fork": _schema.ForkSessionResponse,
            "session/resume": _schema.ResumeSessionResponse,
            "session/close": _schema.CloseSessionResponse,
            "session/delete": _schema.DeleteSessionResponse,
        },
        requests={
            "session/request_permission": _schema.RequestPermissionRequest,
            "fs/read_text_file": _schema.ReadTextFileRequest,
            "fs/write_text_file": _schema.WriteTextFileRequest,
            "terminal/create": _schema.CreateTerminalRequest,
            "terminal/output": _schema.TerminalOutputRequest,
            "terminal/release": _schema.ReleaseTerminalRequest,
            "terminal/wait_for_exit": _schema.WaitForTerminalExitRequest,
            "terminal/kill": _schema.KillTerminalRequest,
        },
        notifications={
            "session/update": _schema.SessionNotification,
            "$/cancel_request": _schema.CancelRequestNotification,
        },
        client_methods=frozenset(CLIENT_METHODS.values()),
        error=_schema.Error,
    )


@dataclass(frozen=True)
class Violation:
    """One field of one message that breaks the schema."""

    method: str
    path: str
    problem: str

    def __str__(self) -> str:
        return f"ACP schema: {self.method} {self.path}: {self.problem}"


@dataclass(frozen=True)
class KnownViolation:
    """A violation contenox v1.0.0 is known to commit, let through so the rest stays checked.

    ``methods`` are the messages it may appear in (``session/new response``);
    ``path`` is a regex matched against the whole path; ``values`` the
    offending values it covers (a new value at the same place still fails).
    ``finding`` says what was observed, ``spec`` the line it breaks, and
    ``case`` the quarantined case that fails on it until it is fixed.
    """

    methods: tuple[str, ...]
    path: str
    values: tuple[str, ...]
    finding: str
    spec: str
    case: str

    def covers(self, violation: Violation, value: JSON) -> bool:
        return (
            violation.method in self.methods
            and re.fullmatch(self.path, violation.path) is not None
            and value in self.values
        )


# Every entry names its finding and the case quarantined on it
# (cases/test_acp_client.py checks a whole session with no allowance).
KNOWN_VIOLATIONS: tuple[KnownViolation, ...] = (
    KnownViolation(
        # The same options come back with a loaded or resumed session.
        methods=("session/new response", "session/load response", "session/resume response"),
        path=r"result\.configOptions\[\d+\]\.category",
        values=("context", "agent"),
        finding=(
            "session/new's (and session/load's) configOptions 'token-limit' and 'agent' carry "
            "categories 'context' "
            "and 'agent': neither is a category of the schema nor an extension name "
            "(its 'hitl-policy' option rightly uses '_hitl_policy')"
        ),
        spec=(
            "ACP schema (schema-v1.19.0), SessionConfigOptionCategory: 'mode', 'model', "
            "'model_config', 'thought_level'; \"Values beginning with `_` are reserved for "
            "implementation-specific extensions. Unknown values that do not begin with `_` are "
            'reserved for future ACP variants."'
        ),
        case="cases/test_acp_client.py::test_every_message_of_an_editor_session_conforms_to_the_acp_schema",
    ),
)


def known(
    violation: Violation,
    message: Mapping[str, JSON],
    allowed: Sequence[KnownViolation] = KNOWN_VIOLATIONS,
) -> KnownViolation | None:
    """The entry of ``allowed`` that covers ``violation`` in ``message``, if one does."""
    value = _at(message, violation.path)
    return next((k for k in allowed if k.covers(violation, value)), None)


def _at(message: Mapping[str, JSON], path: str) -> JSON:
    here: JSON = message
    for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        if index:
            here = here[int(index)] if isinstance(here, list) and int(index) < len(here) else None
        else:
            here = here.get(key) if isinstance(here, Mapping) else None
    return here


# -- strict validation: the package's salvaging helpers, switched off -------

_STRICT: contextvars.ContextVar[bool] = contextvars.ContextVar("acp_schema_strict", default=False)


def _strict_off(schema: Any, helpers: Any) -> None:
    """Make the package's salvaging helpers validate instead, while check() runs.

    The generated validators look ``salvage_on_error`` and ``skip_invalid_items``
    (acp._deserialize's, imported by name) up in acp.schema's globals at call
    time; outside check() the replacements behave exactly as the package's own.
    """
    salvage = helpers.salvage_on_error
    skip = helpers.skip_invalid_items

    def strict_salvage(
        value: Any, handler: Callable[[Any], Any], fallback: Callable[[], Any]
    ) -> Any:
        return handler(value) if _STRICT.get() else salvage(value, handler, fallback)

    def strict_skip(value: Any, handler: Callable[[Any], Any]) -> Any:
        return handler(value) if _STRICT.get() else skip(value, handler)

    schema.salvage_on_error = strict_salvage
    schema.skip_invalid_items = strict_skip


def _validate(model: type[BaseModel], value: JSON) -> ValidationError | None:
    from pydantic import ValidationError

    token = _STRICT.set(True)
    try:
        # JSON mode, strict: the value as it crossed the wire, no coercion.
        model.model_validate_json(json.dumps(value), strict=True)
    except ValidationError as error:
        return error
    finally:
        _STRICT.reset(token)
    return None


# -- errors, as a path into the message and a sentence ----------------------


def _json_path(root: str, value: JSON, loc: tuple[int | str, ...]) -> tuple[str, JSON]:
    """pydantic's loc as a path into the message, and the value found there.

    A loc also names union branches (``agent_message_chunk``, ``str``); a step
    that is not a key or index of the value at hand is one of those and is
    skipped.
    """
    path, here = root, value
    for step in loc:
        if isinstance(here, Mapping) and isinstance(step, str) and step in here:
            path, here = f"{path}.{step}", here[step]
        elif isinstance(here, list) and isinstance(step, int) and 0 <= step < len(here):
            path, here = f"{path}[{step}]", here[step]
    return path, here


def _shown(value: JSON) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "…"


def _discriminator(ctx: Mapping[str, Any]) -> str:
    # "'session_update' | 'sessionUpdate'": the field's name and its alias; the wire has the alias.
    return str(ctx.get("discriminator", "")).split("|")[-1].strip().strip("'")


def _sentence(error: Mapping[str, Any], path: str) -> tuple[str, str]:
    kind = error.get("type")
    ctx = error.get("ctx") or {}
    value = error.get("input")
    loc = tuple(error.get("loc") or ())
    if kind == "union_tag_invalid":
        where = f"{path}.{_discriminator(ctx)}"
        return where, f"{_shown(ctx.get('tag'))} is not one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return f"{path}.{_discriminator(ctx)}", "required field is missing"
    if kind == "literal_error":
        return path, f"{_shown(value)} is not one of {ctx.get('expected')}"
    if kind == "missing":
        return (f"{path}.{loc[-1]}" if loc else path), "required field is missing"
    return path, f"{error.get('msg')} (got {_shown(value)})"


# The schema's "custom or future" catch-all: a string outside the named values.
# The package's codegen collapses that member into an object
# (scripts/gen_schema.py, _collapse_catchall_member), so its model refuses
# every string category; the schema allows one that starts with '_'.
_CATEGORY = re.compile(r".*\.configOptions\[\d+\]\.category")
_RESERVED = (
    " is not one of {named}, nor an extension value (one starting with '_'); "
    "unknown values without '_' are reserved for future ACP variants"
)


def _catchall(where: str, value: JSON, problems: list[str]) -> list[str]:
    if not (_CATEGORY.fullmatch(where) and isinstance(value, str)):
        return problems
    if value.startswith("_"):
        return []
    named = ", ".join(p.split(" is not one of ", 1)[1] for p in problems if " is not one of " in p)
    return [_shown(value) + _RESERVED.format(named=named)]


def _violations(method: str, root: str, value: JSON, error: ValidationError) -> Iterator[Violation]:
    # A union reports one error per branch at the same path; one line per path
    # reads better ("-1 is not one of -32700, -32600, … / should be an integer").
    problems: dict[str, list[str]] = {}
    values: dict[str, JSON] = {}
    for item in error.errors(include_url=False):
        path, _ = _json_path(root, value, tuple(item["loc"]))
        if item.get("type") == "missing" and item["loc"]:
            path, _ = _json_path(root, value, tuple(item["loc"])[:-1])
        where, problem = _sentence(item, path)
        values.setdefault(where, item.get("input"))
        listed = problems.setdefault(where, [])
        if problem not in listed:
            listed.append(problem)
    for where, listed in problems.items():
        listed = _catchall(where, values.get(where), listed)
        if listed:
            yield Violation(method, where, _merged(listed))


def _merged(problems: list[str]) -> str:
    if len(problems) == 1:
        return problems[0]
    shown = problems[0].split(" is not one of ", 1)[0]
    allowed = [p.split(" is not one of ", 1)[1] for p in problems if " is not one of " in p]
    others = [p for p in problems if " is not one of " not in p]
    parts = ([f"{shown} is not one of {', '.join(allowed)}"] if allowed else []) + others
    return " / ".join(parts)


# -- the message ------------------------------------------------------------


def _is_id(value: JSON) -> bool:
    return value is None or (isinstance(value, (int, str)) and not isinstance(value, bool))


def check(message: Mapping[str, JSON], answers: str | None = None) -> list[Violation]:
    """What in one message the agent sent breaks the ACP schema (empty: nothing).

    ``answers`` is the method of the client's request a response answers
    (None when the client sent no such request, or the message is not a
    response). The JSON-RPC 2.0 envelope is checked too.
    """
    method = message.get("method")
    if isinstance(method, str):
        return _check_call(message, method)
    label = f"{answers} response" if answers else "response"
    if not _is_id(message.get("id")):
        return [Violation(label, "id", f"{_shown(message.get('id'))} is not a string or integer")]
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        return [Violation(label, "(message)", "a response carries exactly one of result, error")]
    if has_error:
        error = _validate(_tables().error, message["error"])
        return list(_violations(label, "error", message["error"], error)) if error else []
    model = _tables().responses.get(answers or "")
    if model is None:
        return []
    error = _validate(model, message["result"])
    return list(_violations(label, "result", message["result"], error)) if error else []


def _check_call(message: Mapping[str, JSON], method: str) -> list[Violation]:
    params = message.get("params")
    is_request = "id" in message
    if is_request and not _is_id(message["id"]):
        return [Violation(method, "id", f"{_shown(message.get('id'))} is not a string or integer")]
    if method.startswith("_"):
        return []  # an extension method: the schema leaves its params to it
    tables = _tables()
    requests, notifications = tables.requests, tables.notifications
    table, other = (requests, notifications) if is_request else (notifications, requests)
    model = table.get(method)
    if model is None and method in other:
        sent, expected = ("request", "notification") if is_request else ("notification", "request")
        return [Violation(method, "id", f"sent as a {sent}; the schema makes it a {expected}")]
    if model is None:
        if method in tables.client_methods:
            return []
        kind = "request" if is_request else "notification"
        return [
            Violation(
                method,
                "method",
                f"not a client {kind} of the ACP schema ({SCHEMA_REF}), "
                "nor an extension method (a name starting with '_')",
            )
        ]
    error = _validate(model, params if params is not None else {})
    return list(_violations(method, "params", params, error)) if error else []
