"""Transcript and dialog snapshots, through syrupy.

Transcripts: one readable YAML file per test.

Multi-line text is written as literal block scalars and keys keep the order
a terminal session has (argv, exit, stdout, notices), so a PR diff of a
snapshot reads like the session it records. ``--snapshot-update`` rewrites
them; unused snapshots fail the run (syrupy's default).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation

__all__ = ["DialogExtension", "TranscriptExtension", "to_yaml"]


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


class DialogExtension(SingleFileSnapshotExtension):
    """Each dialog a test registers, as ``dialogs/<module>/<test>.json``.

    A test that registers several has one ``<test>[<backend>].json`` each. The content is
    exactly the JSON contenox reads (``Script.dumps()``), so a PR diff shows
    what the model says. Kept by ``--snapshot-update`` like the transcripts.
    """

    file_extension = "json"
    _write_mode = WriteMode.TEXT

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        module = Path(test_location.filepath)
        # dialogs/ sits beside cases/ (or beside a test module outside a cases/ dir).
        base = module.parent.parent if module.parent.name == "cases" else module.parent
        # Named after the module, as cases/__snapshots__/<module>/ is: syrupy
        # relates a snapshot to its test (and finds unused ones) by that name.
        return str(base / "dialogs" / module.stem)

    @classmethod
    def discovery_dirname(cls, *, test_location: PyTestLocation) -> str:
        return cls.dirname(test_location=test_location)

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return str(data)
