"""Pointing contenox at the harness's servers, and reading what the model was shown.

Small helpers the tool cases share:

- :func:`open_envelope` adds an envelope under which every tool runs unasked, so a
  ``contenox run`` reaches a connected tool without an approval nobody answers (a
  connected tool falls to ``default_action``, which is ``approve`` in every shipped
  envelope).
- :func:`run_mission` registers a dialog and fires ``contenox run`` under it.
- :func:`model_view` is everything the model was sent or produced in the captured
  runs (``state show <id> --raw``); a hidden value must not appear in it.
- :func:`offered_roster` reads the ``{{tools}}`` manifest the model was given in its
  system prompt: toolset name → tool names, i.e. what it was offered.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from .. import probes
from ..command import Result
from ..dialog import Script

if TYPE_CHECKING:
    from ..instance import Instance

__all__ = [
    "OPEN_ENVELOPE",
    "OPEN_ENVELOPE_TOML",
    "model_view",
    "offered_roster",
    "open_envelope",
    "run_mission",
]

OPEN_ENVELOPE = "e2e_open"
OPEN_ENVELOPE_TOML = f"""

# Added by the e2e harness (harness/servers/wiring.py): every tool runs unasked.
[envelopes.{OPEN_ENVELOPE}]
description = "e2e: every tool runs without asking"
default_action = "allow"
"""
# How the shipped run agent's system prompt introduces the {{tools}} manifest.
_MANIFEST = re.compile(r"Available tools \(tools -> function names\):\s*(\{.*?\})\s*$", re.M)


def open_envelope(instance: Instance) -> str:
    """Append the :data:`OPEN_ENVELOPE` envelope to ``~/.contenox/agents.toml``; return its name.

    Needs ``contenox init`` first (it writes agents.toml).
    """
    path = instance.home / ".contenox" / "agents.toml"
    if not path.exists():
        raise FileNotFoundError(
            f"{path} does not exist: run instance.init() before open_envelope()"
        )
    with path.open("a", encoding="utf-8") as toml:
        toml.write(OPEN_ENVELOPE_TOML)
    return OPEN_ENVELOPE


def run_mission(
    instance: Instance,
    script: Script,
    task: str,
    *,
    policy: str = OPEN_ENVELOPE,
    timeout: str = "90s",
) -> Result:
    """Register ``script`` as the model and run ``contenox run --policy <policy> <task>``."""
    instance.use_script(script)
    return instance.contenox("run", "--policy", policy, "--timeout", timeout, task)


def model_view(instance: Instance) -> str:
    """The raw captured state of every run in this instance: all the model was sent and said.

    Message contents are JSON strings inside that JSON, so their quotes come escaped;
    the text is returned twice, as printed and with ``\\"`` read as ``"``, so a case
    can look for ``{"result":"sum=42"}`` as the model saw it.
    """
    rids = probes.captured_requests(instance)
    # Recorded as the compact units (one line per step), not as the raw JSON: the raw
    # text holds the closing call after mission_finish, which v1.0.0 serves, cancels or
    # never asks for as the run's teardown races it.
    for rid in rids:
        probes.captured_units(instance, rid)
    with instance.recorder.probing():
        raw = "\n".join(instance.must("state", "show", rid, "--raw").stdout for rid in rids)
    return raw + "\n" + raw.replace('\\"', '"')


def offered_roster(instance: Instance, request_id: str | None = None) -> dict[str, list[str]]:
    """The tool manifests in the model's system prompts: toolset → tool names.

    Every captured run is read unless ``request_id`` names one (a ``run`` leaves more
    than one), and the manifests found are merged: what the model was offered at all.
    Fails with the prompts when no manifest is there (a chain without ``{{tools}}``).
    """
    ids = [request_id] if request_id is not None else probes.captured_requests(instance)
    prompts = [p for rid in ids for p in probes.system_prompts(instance, rid)]
    roster: dict[str, list[str]] = {}
    found = False
    for prompt in prompts:
        for match in _MANIFEST.finditer(prompt):
            found = True
            for toolset, tools in json.loads(match.group(1)).items():
                roster[toolset] = sorted(set(roster.get(toolset, [])) | set(tools))
    if not found:
        raise AssertionError(
            "no 'Available tools (tools -> function names):' manifest in the system prompts "
            "the model was sent:\n" + "\n---\n".join(prompts)
        )
    return roster
