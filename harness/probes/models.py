"""``contenox model list``."""

from __future__ import annotations

from dataclasses import dataclass

from ..instance import Instance
from ..table import TableError, read_table
from ._common import _int, _probe, record_probes
from .backends import _NO_BACKENDS

__all__ = [
    "Model",
    "models",
    "parse_models",
]


@dataclass(frozen=True)
class Model:
    """One row of ``contenox model list``. ``default`` is the ``*`` after the name."""

    backend: str
    name: str
    default: bool
    chat: bool
    embed: bool
    prompt: bool
    think: bool
    vision: bool
    context: int


_MODEL_COLUMNS = ["BACKEND", "MODEL", "CHAT", "EMBED", "PROMPT", "THINK", "VISION", "CTX"]


def _mark(value: str, column: str, source: str) -> bool:
    if value == "✓":
        return True
    if value in ("-", ""):
        return False
    raise TableError(f"{source}: {column} should be '✓' or '-', got {value!r}")


def parse_models(text: str, source: str = "contenox model list") -> list[Model]:
    rows = read_table(text, _MODEL_COLUMNS, empty=_NO_BACKENDS, source=source)
    out: list[Model] = []
    for r in rows:
        name = r["MODEL"]
        default = name.endswith(" *")
        out.append(
            Model(
                backend=r["BACKEND"],
                name=name.removesuffix(" *").strip(),
                default=default,
                chat=_mark(r["CHAT"], "CHAT", source),
                embed=_mark(r["EMBED"], "EMBED", source),
                prompt=_mark(r["PROMPT"], "PROMPT", source),
                think=_mark(r["THINK"], "THINK", source),
                vision=_mark(r["VISION"], "VISION", source),
                context=_int(r["CTX"], "CTX", source) if r["CTX"] else 0,
            )
        )
    return out


def models(instance: Instance) -> list[Model]:
    """``contenox model list``: every model the registered backends expose now.

    >>> [(m.name, m.default) for m in models(instance)]
    [('scripted-test', True)]
    """
    return parse_models(_probe(instance, "model", "list").stdout)


record_probes(globals(), __all__)
