"""Backends, read back: ``backend list`` and ``backend show``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..instance import Instance
from ..table import read_table
from ._common import ProbeError, _json, _probe, _source, record_probes

__all__ = [
    "Backend",
    "BackendDetail",
    "backend",
    "backends",
    "parse_backend",
    "parse_backends",
]


@dataclass(frozen=True)
class Backend:
    """One row of ``contenox backend list``."""

    name: str
    type: str
    url: str


@dataclass(frozen=True)
class BackendDetail:
    """``contenox backend show <name>`` (it prints JSON)."""

    id: str
    name: str
    type: str
    base_url: str
    created_at: str
    updated_at: str
    raw: Mapping[str, Any] = field(compare=False, repr=False)


_NO_BACKENDS = ("No backends registered.",)


def parse_backends(text: str, source: str = "contenox backend list") -> list[Backend]:
    rows = read_table(text, ["NAME", "TYPE", "URL"], empty=_NO_BACKENDS, source=source)
    return [Backend(r["NAME"], r["TYPE"], r["URL"]) for r in rows]


def backends(instance: Instance) -> list[Backend]:
    """``contenox backend list``: every registered backend, ``[]`` when none.

    >>> [b.name for b in backends(instance)]
    ['scripted']
    """
    return parse_backends(_probe(instance, "backend", "list").stdout)


def parse_backend(text: str, source: str = "contenox backend show") -> BackendDetail:
    data = _json(text, source)
    try:
        return BackendDetail(
            id=data["id"],
            name=data["name"],
            type=data["type"],
            base_url=data.get("baseUrl", ""),
            created_at=data.get("createdAt", ""),
            updated_at=data.get("updatedAt", ""),
            raw=data,
        )
    except (KeyError, TypeError) as err:
        raise ProbeError(f"{source}: no {err} in the backend record:\n{text}") from None


def backend(instance: Instance, name: str) -> BackendDetail:
    """``contenox backend show <name>``; fails (with the output) when there is none.

    >>> backend(instance, "scripted").type
    'scripted-test'
    """
    args = ("backend", "show", name)
    return parse_backend(_probe(instance, *args).stdout, _source(*args))


record_probes(globals(), __all__)
