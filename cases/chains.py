"""Building blocks for the chain cases: a chain file's text, its tasks and transitions, and
the probe that reads back which tasks ran (`state show --raw`)."""

from __future__ import annotations

import json
from typing import Any

from harness import Instance, Probe, Script, probe, probes

MODEL = {"model": "{{var:model}}", "provider": "{{var:provider}}"}
# A model no backend serves: a chat step that names it fails before any model is asked.
NO_MODEL = {"model": "no-such-model", "provider": "scripted-test"}
# Registered as the default model for chains that never ask one (`{{var:model}}` must resolve).
UNASKED = Script(turns=["no model is asked"])
END = {"branches": [{"operator": "default", "when": "", "goto": "end"}]}


def chain(*tasks: dict[str, Any], chain_id: str = "mine", token_limit: int = 8192) -> str:
    """A chain file's text: ``tasks`` in order, a token budget set (see specification/index)."""
    return json.dumps({"id": chain_id, "token_limit": token_limit, "tasks": list(tasks)}, indent=2)


def task(task_id: str, handler: str = "chat_completion", **fields: Any) -> dict[str, Any]:
    """One task; a chat_completion task gets the default model unless ``fields`` say otherwise."""
    out: dict[str, Any] = {"id": task_id, "handler": handler}
    if handler in ("chat_completion", "route") and "execute_config" not in fields:
        out["execute_config"] = dict(MODEL)
    out.update(fields)
    return out


def branches(
    *rules: tuple[str, str, str] | dict[str, str], on_failure: str | None = None
) -> dict[str, Any]:
    """A transition from ``(operator, when, goto)`` rules (or whole branches), top to bottom."""
    out: dict[str, Any] = {
        "branches": [
            rule
            if isinstance(rule, dict)
            else {"operator": rule[0], "when": rule[1], "goto": rule[2]}
            for rule in rules
        ]
    }
    if on_failure is not None:
        out["on_failure"] = on_failure
    return out


def _ran(instance: Instance) -> list[str]:
    """Each step of the one captured run, in order: ``task: eval`` or ``task: ERROR``."""
    run = probes.the_captured_run(instance)
    return [
        f"{u.task}: ERROR" if u.error else f"{u.task}: {u.transition}"
        for u in probes.captured_units(instance, run)
    ]


def ran(*expected: str) -> Probe:
    """The tasks that ran and what each evaluated to, read back with `state show --raw`."""
    return probe("the steps that ran (task: eval)", _ran, expect=list(expected))
