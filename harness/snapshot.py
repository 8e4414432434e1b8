"""Transcript and dialog snapshots, through syrupy.

Transcripts: one readable YAML file per test.

Multi-line text is written as literal block scalars and keys keep the order
a terminal session has (argv, exit, stdout, notices), so a PR diff of a
snapshot reads like the session it records. ``--snapshot-update`` rewrites
them.

Which snapshot belongs to which test, and when one may go, is decided here
and in harness.plugin, not by syrupy's unused-snapshot check: that check
re-reads ``-k`` against snapshot names (case-sensitively, never against
module or marker names) and counts a test ``-x`` or Ctrl-C never reached as
one that used nothing, so it deleted goldens of tests that never ran. Here a
snapshot is deleted only when its own test ran to a passing verdict (call and
teardown) without recording it. A snapshot whose test is gone altogether is
found by tests/test_transcripts.py, from the catalog of cases.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

if TYPE_CHECKING:
    from syrupy.location import PyTestLocation

__all__ = [
    "DialogExtension",
    "TranscriptExtension",
    "first_difference",
    "owned_by",
    "to_yaml",
]


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


def owned_by(name: str, stem: str, *, indexed: bool) -> bool:
    """Whether a snapshot file ``<stem>.<ext>`` belongs to the test whose snapshot name is ``name``.

    A transcript is ``<name>.yaml``; a dialog ``<name>.json``, or ``<name>[<backend>].json``
    when the test registers several (``indexed``).
    """
    if stem == name:
        return True
    return indexed and stem.startswith(name + "[") and stem.endswith("]")


def first_difference(first: str, second: str) -> str:
    """The first line two recordings of one test differ at, both ways, for a refusal."""
    a, b = first.splitlines(), second.splitlines()
    for number, (left, right) in enumerate(zip(a, b, strict=False), start=1):
        if left != right:
            return f"line {number}:\n    first run:  {left!r}\n    second run: {right!r}"
    number = min(len(a), len(b)) + 1
    left = a[number - 1] if len(a) >= number else "(the end)"
    right = b[number - 1] if len(b) >= number else "(the end)"
    return f"line {number}:\n    first run:  {left!r}\n    second run: {right!r}"
