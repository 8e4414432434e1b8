"""Typed scripted-test dialogs.

The dataclass field names are the JSON field names of
contenox-docs/development/scripted-test-backend.md, so a dialog reads in
Python as it does on disk::

    Script(turns=[
        Turn(text="Let me look.", tool_calls=[ToolCall(name="git_diff", arguments={"path": "."})]),
        "Two files changed.",          # a plain string is a text-only turn
    ])

Every dialog is checked twice before it can reach contenox: by the
constructors (which name the turn and field that is wrong) and by the JSON
Schema shipped beside this module.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias

import jsonschema

__all__ = [
    "Capabilities",
    "DialogError",
    "Script",
    "ToolCall",
    "Turn",
    "Usage",
    "mission_finish",
    "mission_report",
    "route",
    "turn_line",
    "validate_dialog",
]

JSON: TypeAlias = Any


class DialogError(ValueError):
    """A dialog that contenox would refuse, or that would prove nothing.

    The message names where (``turns[2].usage.total_tokens``) and what to do.
    """


def _where(turn: int | None, fieldname: str) -> str:
    return fieldname if turn is None else f"turns[{turn}].{fieldname}"


def _check_count(value: object, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DialogError(f"{where} must be a whole number, got {value!r}")
    if value < 0:
        raise DialogError(f"{where} must not be negative, got {value}")


def _check_positive(value: object, where: str) -> None:
    _check_count(value, where)
    assert isinstance(value, int)
    if value == 0:
        raise DialogError(f"{where} must be at least 1, got 0")


# Deeper than this is no tool's arguments; it is a generator gone wrong, and
# json would die of RecursionError on it mid-case.
MAX_DEPTH = 64
# Python refuses to print an int of more digits than this (sys.int_info), so
# json.dumps would die of ValueError on it mid-case.
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300


def _check_text(value: str, where: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise DialogError(
            f"{where} is not valid text: {err.reason} at character {err.start} "
            f"({value[err.start : err.end]!r}); a dialog file is UTF-8"
        ) from None


def _check_json(value: object, where: str, depth: int = 0) -> None:
    """Refuse anything ``json.dumps(..., sort_keys=True)`` would die on, naming where."""
    if depth > MAX_DEPTH:
        raise DialogError(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int):
        try:
            str(value)
        except ValueError:
            raise DialogError(
                f"{where} is an integer of more than {MAX_INT_DIGITS} digits, which Python "
                "cannot write as JSON; no tool takes one"
            ) from None
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise DialogError(
                f"{where} is {value!r}, which JSON cannot hold (not JSON-serialisable); "
                "use a finite number"
            )
        return
    if isinstance(value, str):
        _check_text(value, where)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise DialogError(
                    f"{where} has the key {key!r} ({type(key).__name__}); JSON object keys "
                    "are strings (not JSON-serialisable as written)"
                )
            _check_text(key, f"{where} key {key!r}")
            _check_json(item, f"{where}.{key}", depth + 1)
        return
    if isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            _check_json(item, f"{where}[{index}]", depth + 1)
        return
    raise DialogError(
        f"{where} holds {value!r} ({type(value).__name__}), which is not JSON-serialisable; "
        "use plain dicts, lists, strings, numbers, booleans and None"
    )


@dataclass(frozen=True)
class Usage:
    """A turn's token accounting, reported instead of the estimating tokenizer's."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None

    def check(self, turn: int | None = None) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None:
                _check_count(value, _where(turn, f"usage.{f.name}"))

    def to_json(self) -> dict[str, int]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class Capabilities:
    """Per-capability overrides; unset means contenox's default (``true``)."""

    chat: bool | None = None
    stream: bool | None = None
    prompt: bool | None = None
    embed: bool | None = None
    think: bool | None = None
    vision: bool | None = None
    audio: bool | None = None

    @classmethod
    def from_mapping(cls, data: Mapping[str, object]) -> Capabilities:
        known = {f.name for f in fields(cls)}
        for key, value in data.items():
            if key not in known:
                raise DialogError(
                    f"capabilities.{key} is not a capability; the backend knows "
                    f"{', '.join(sorted(known))}"
                )
            if not isinstance(value, bool):
                raise DialogError(f"capabilities.{key} must be true or false, got {value!r}")
        return cls(**data)  # type: ignore[arg-type]

    def to_json(self) -> dict[str, bool]:
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a turn. ``arguments`` is an object, or a raw JSON string."""

    name: str
    arguments: Mapping[str, JSON] | str | None = None
    id: str | None = None

    def check(self, turn: int | None, index: int) -> None:
        where = _where(turn, f"tool_calls[{index}]")
        if not isinstance(self.name, str) or not self.name.strip():
            raise DialogError(f"{where}.name must name a tool (e.g. 'list_dir'), got {self.name!r}")
        if self.id is not None and (not isinstance(self.id, str) or not self.id):
            raise DialogError(f"{where}.id must be a non-empty string or left out, got {self.id!r}")
        if self.arguments is not None and not isinstance(self.arguments, (str, Mapping)):
            raise DialogError(
                f"{where}.arguments must be an object or a raw JSON string, "
                f"got {type(self.arguments).__name__}"
            )
        _check_text(self.name, f"{where}.name")
        if isinstance(self.arguments, Mapping):
            _check_json(dict(self.arguments), f"{where}.arguments")
        elif isinstance(self.arguments, str):
            _check_text(self.arguments, f"{where}.arguments")

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {}
        if self.id is not None:
            out["id"] = self.id
        out["name"] = self.name
        if self.arguments is not None:
            out["arguments"] = (
                self.arguments if isinstance(self.arguments, str) else dict(self.arguments)
            )
        return out


@dataclass(frozen=True)
class Turn:
    """One model turn: text, a thinking trace, tool calls, or a mix.

    ``optional=True`` marks a closing turn contenox may or may not ask for
    (the text after ``mission_finish``): the model-demand check accepts a run
    that leaves it unserved. It is the harness's word, not a dialog field:
    it is never written into the JSON contenox reads.
    """

    text: str | None = None
    thinking: str | None = None
    tool_calls: Sequence[ToolCall] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    optional: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        # Anything but a list is left as it is for check() to refuse with the
        # turn's index, which only the Script knows.
        if isinstance(self.tool_calls, (list, tuple)):
            object.__setattr__(self, "tool_calls", tuple(self.tool_calls))

    @property
    def is_plain_text(self) -> bool:
        """A turn that ends a chat loop: visible text and no tool call."""
        return bool(self.text) and not self.tool_calls

    def check(self, turn: int | None = None) -> None:
        for name in ("text", "thinking", "finish_reason"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise DialogError(f"{_where(turn, name)} must be a string, got {value!r}")
            if isinstance(value, str):
                _check_text(value, _where(turn, name))
        if not isinstance(self.tool_calls, tuple):
            raise DialogError(
                f"{_where(turn, 'tool_calls')} must be a list of ToolCall, got "
                f"{self.tool_calls!r}; leave it out for a turn without tool calls"
            )
        if self.finish_reason == "":
            raise DialogError(f"{_where(turn, 'finish_reason')} must not be empty; leave it out")
        if self.text is None and self.thinking is None and not self.tool_calls:
            raise DialogError(
                f"{'turn' if turn is None else f'turns[{turn}]'} is empty: give it text, "
                "thinking or tool_calls (contenox rejects an empty turn when the script loads)"
            )
        for index, call in enumerate(self.tool_calls):
            if not isinstance(call, ToolCall):
                raise DialogError(
                    f"{_where(turn, f'tool_calls[{index}]')} must be a ToolCall, got {call!r}"
                )
            call.check(turn, index)
        if self.usage is not None:
            if not isinstance(self.usage, Usage):
                raise DialogError(f"{_where(turn, 'usage')} must be a Usage, got {self.usage!r}")
            self.usage.check(turn)

    def to_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.thinking is not None:
            out["thinking"] = self.thinking
        if self.tool_calls:
            out["tool_calls"] = [call.to_json() for call in self.tool_calls]
        if self.finish_reason is not None:
            out["finish_reason"] = self.finish_reason
        if self.usage is not None:
            out["usage"] = self.usage.to_json()
        return out

    def line(self) -> str:
        """The turn on one line, as a transcript shows it: its text, then each tool call
        as ``name {args}`` (`` (optional)`` after a turn contenox may not ask for)."""
        data = self.to_json()
        parts = []
        if "thinking" in data:
            parts.append(f"(thinking) {data['thinking']}")
        if "text" in data:
            parts.append(str(data["text"]))
        for call in data.get("tool_calls") or ():
            args = call.get("arguments")
            shown = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)
            parts.append(f"-> {call['name']} {shown}" if args is not None else f"-> {call['name']}")
        line = " | ".join(parts)
        return line + " (optional)" if self.optional else line

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Turn:
        usage = data.get("usage")
        return cls(
            text=data.get("text"),
            thinking=data.get("thinking"),
            tool_calls=tuple(
                ToolCall(name=c.get("name"), arguments=c.get("arguments"), id=c.get("id"))
                for c in data.get("tool_calls") or ()
            ),
            finish_reason=data.get("finish_reason"),
            usage=Usage(**usage) if usage is not None else None,
        )


TurnLike: TypeAlias = Turn | str


def turn_line(turn: TurnLike) -> str:
    """A turn on one line, as a transcript shows it (:meth:`Turn.line`; a bare string is text)."""
    return (Turn(text=turn) if isinstance(turn, str) else turn).line()


@dataclass(frozen=True)
class Script:
    """A whole dialog. Refused at construction if contenox would refuse it.

    The last turn must be plain text: after a tool result the chat loop asks
    the model again, so a dialog ending on a tool call is one turn short and
    the run dies "exhausted". Pass ``runs_past_end=True`` when that is what
    the case is about.

    >>> Script(turns=["hello"]).to_json()
    {'turns': [{'text': 'hello'}]}
    """

    turns: Sequence[TurnLike]
    model: str | None = None
    context_length: int | None = None
    max_output_tokens: int | None = None
    embed_dimensions: int | None = None
    capabilities: Capabilities | Mapping[str, bool] | None = None
    # Not a JSON field: the case's explicit word that the run goes past the end.
    runs_past_end: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.turns, (str, bytes)) or not isinstance(self.turns, Sequence):
            raise DialogError(
                f"turns must be a list of Turn (or strings), got {type(self.turns).__name__}"
            )
        turns = tuple(Turn(text=t) if isinstance(t, str) else t for t in self.turns)
        object.__setattr__(self, "turns", turns)
        if self.capabilities is not None and not isinstance(self.capabilities, Capabilities):
            if not isinstance(self.capabilities, Mapping):
                raise DialogError(
                    f"capabilities must be a Capabilities or a mapping, got {self.capabilities!r}"
                )
            object.__setattr__(self, "capabilities", Capabilities.from_mapping(self.capabilities))
        self._check()

    def _check(self) -> None:
        if not self.turns:
            raise DialogError(
                "turns is empty: a script needs at least one turn, and its last one "
                "should be plain text, e.g. Script(turns=['done'])"
            )
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise DialogError(f"model must be a non-empty string or left out, got {self.model!r}")
        for name in ("context_length", "max_output_tokens", "embed_dimensions"):
            value = getattr(self, name)
            if value is not None:
                _check_positive(value, name)
        for index, turn in enumerate(self.turns):
            if not isinstance(turn, Turn):
                raise DialogError(f"turns[{index}] must be a Turn or a string, got {turn!r}")
            turn.check(index)
        optional = [i for i, t in enumerate(self.turns) if isinstance(t, Turn) and t.optional]
        if optional and optional != list(range(len(self.turns) - len(optional), len(self.turns))):
            raise DialogError(
                f"turns{optional} are optional but not all at the end: contenox serves turns "
                "in order, so only trailing turns (the closing text after mission_finish) "
                "can be left unserved; drop optional=True from the earlier ones"
            )
        last = self.turns[-1]
        assert isinstance(last, Turn)
        if not last.is_plain_text and not self.runs_past_end:
            raise DialogError(
                f"turns[{len(self.turns) - 1}] is the last turn and it is not plain text. "
                "After a tool result the chat loop asks the model again, so this run "
                "would die one turn short with the script exhausted. Close the dialog "
                "with a text turn such as Turn(text='Done.'), or pass runs_past_end=True "
                "if running past the end is what the case checks."
            )

    def to_json(self) -> dict[str, JSON]:
        """The document as contenox reads it; only the fields that were set."""
        out: dict[str, JSON] = {}
        for name in ("model", "context_length", "max_output_tokens", "embed_dimensions"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if isinstance(self.capabilities, Capabilities):
            out["capabilities"] = self.capabilities.to_json()
        out["turns"] = [t.to_json() for t in self.turns if isinstance(t, Turn)]
        validate_dialog(out)
        return out

    def dumps(self) -> str:
        """Indented JSON with sorted keys and a trailing newline (stable diffs)."""
        return json.dumps(self.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

    def write(self, path: Path) -> Path:
        """Validate, then write the dialog to ``path``."""
        path.write_text(self.dumps(), encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: Path | str, *, runs_past_end: bool = False) -> Script:
        """Read a dialog file (an object with ``turns``, or a bare array of turns)."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise DialogError(f"cannot read dialog {path}: {err}") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise DialogError(
                f"cannot read dialog {path}: it is not UTF-8 ({err.reason} at byte {err.start}); "
                "save it as UTF-8"
            ) from None
        try:
            data = json.loads(text)
        except RecursionError:
            raise DialogError(
                f"cannot read dialog {path}: it is nested too deeply to parse"
            ) from None
        except ValueError as err:  # JSONDecodeError, and an integer of too many digits
            raise DialogError(f"cannot read dialog {path}: {err}") from None
        return cls.from_json(data, runs_past_end=runs_past_end, source=str(path))

    @classmethod
    def from_json(
        cls, data: JSON, *, runs_past_end: bool = False, source: str = "dialog"
    ) -> Script:
        try:
            validate_dialog(data, source=source)
        except RecursionError:
            raise DialogError(f"{source} is nested too deeply to check") from None
        doc: dict[str, JSON] = {"turns": data} if isinstance(data, list) else dict(data)
        caps = doc.get("capabilities")
        return cls(
            turns=[Turn.from_json(t) for t in doc["turns"]],
            model=doc.get("model"),
            context_length=doc.get("context_length"),
            max_output_tokens=doc.get("max_output_tokens"),
            embed_dimensions=doc.get("embed_dimensions"),
            capabilities=Capabilities.from_mapping(caps) if caps is not None else None,
            runs_past_end=runs_past_end,
        )

    def optional_from(self, index: int) -> Script:
        """This dialog with every turn from ``index`` on marked optional.

        For a run that ends at an ask on purpose (torn down by ``--timeout``,
        ``mission stop``, an expiry): the turns after the ask are never asked
        for, and the model demand still checks every turn before it.

        >>> Script(turns=["a", "b", "c"]).optional_from(1).optional_turns
        2
        """
        if not isinstance(index, int) or isinstance(index, bool) or not 0 < index < len(self.turns):
            raise DialogError(
                f"optional_from({index!r}): index must be an int from 1 to {len(self.turns) - 1} "
                f"(this dialog has {len(self.turns)} turns); turn 0 is always asked for"
            )
        turns = [
            dataclasses.replace(t, optional=True) if i >= index and isinstance(t, Turn) else t
            for i, t in enumerate(self.turns)
        ]
        return dataclasses.replace(self, turns=turns)

    @property
    def optional_turns(self) -> int:
        """How many trailing turns are ``optional``.

        A plain closing text turn right after a ``mission_finish`` call counts
        as optional even unmarked: contenox v1.0.0 tears the unit down after
        ``mission_finish`` and serves that turn only sometimes (a known race,
        recorded in the scripted-test backend's ledger), so no case can demand it.
        """
        marked = sum(1 for t in self.turns if isinstance(t, Turn) and t.optional)
        if marked or len(self.turns) < 2:
            return marked
        last, before = self.turns[-1], self.turns[-2]
        closing = isinstance(last, Turn) and not last.tool_calls
        finishing = isinstance(before, Turn) and any(
            c.name == "mission_finish" for c in before.tool_calls
        )
        return 1 if closing and finishing else 0

    @property
    def model_name(self) -> str:
        """The model name the backend exposes (``scripted-test`` when unset)."""
        return self.model or "scripted-test"


@cache
def _schema() -> dict[str, JSON]:
    text = resources.files("harness").joinpath("dialog.schema.json").read_text(encoding="utf-8")
    schema: dict[str, JSON] = json.loads(text)
    jsonschema.Draft202012Validator.check_schema(schema)
    return schema


def _path(parts: Sequence[object]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out.lstrip(".")


def validate_dialog(data: JSON, *, source: str = "dialog") -> None:
    """Check a dialog document against the shipped JSON Schema (Draft 2020-12).

    The error names each place that is wrong (``turns[1].tool_calls[0].name``).
    """
    schema = _schema()
    # Validate against the branch the document's own shape picks, so errors
    # point into it instead of at the root's "not valid under any of oneOf".
    if isinstance(data, list):
        branch, prefix = "turns", ["turns"]
    elif isinstance(data, dict):
        branch, prefix = "document", []
    else:
        raise DialogError(
            f'{source} must be an object with "turns" or an array of turns, '
            f"got {type(data).__name__}"
        )
    rooted = {k: v for k, v in schema.items() if k != "oneOf"}
    rooted["$ref"] = f"#/$defs/{branch}"
    validator = jsonschema.Draft202012Validator(rooted)
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return
    lines = []
    for err in errors[:5]:
        where = _path([*prefix, *err.absolute_path]) or "(document)"
        message = err.message
        if err.validator == "anyOf":  # the schema's only anyOf: what a turn must hold
            message = f"{message}; a turn needs text, thinking or tool_calls"
        lines.append(f"  {where}: {message}")
    raise DialogError(f"{source} does not match the dialog schema:\n" + "\n".join(lines))


def mission_report(kind: str, summary: str, **extra: JSON) -> ToolCall:
    """A ``mission_report`` call, e.g. ``mission_report("result", "what I found")``."""
    return ToolCall(name="mission_report", arguments={"kind": kind, "summary": summary, **extra})


def mission_finish(status: str, **extra: JSON) -> ToolCall:
    """A ``mission_finish`` call, e.g. ``mission_finish("landed")``."""
    return ToolCall(name="mission_finish", arguments={"status": status, **extra})


def route(label: str = "general") -> Turn:
    """The opening turn the ``acp`` router chain reads as a classifier label."""
    return Turn(text=label)
