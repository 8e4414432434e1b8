"""Transcript snapshots: one readable YAML file per case, through syrupy.

Multi-line text is written as literal block scalars and keys keep the order
a terminal session has (argv, exit, stdout, notices), so a PR diff of a
snapshot reads like the session it records. ``--snapshot-update`` rewrites
them; unused snapshots fail the run (syrupy's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

__all__ = ["TranscriptExtension", "to_yaml"]


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        # Trailing blanks would force PyYAML into a quoted scalar; they carry
        # nothing a reviewer needs (table padding), so drop them.
        value = "\n".join(line.rstrip() for line in value.split("\n"))
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def to_yaml(data: Mapping[str, Any]) -> str:
    """The transcript as YAML: insertion order kept, multi-line text as blocks."""
    return yaml.dump(
        dict(data),
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        default_flow_style=False,
        width=100,
    )


class TranscriptExtension(SingleFileSnapshotExtension):
    """One ``.yaml`` file per case under ``cases/__snapshots__/<module>/``."""

    file_extension = "yaml"
    _write_mode = WriteMode.TEXT

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if isinstance(data, str):
            return data
        return to_yaml(data)
