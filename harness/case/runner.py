"""Running a Case: one instance, its steps in order, the model demand, the transcript.

Running one: place its files, ``contenox init``, register its dialogs, run its
steps in order (each checks its own expectations and writes to the
recorder), check that the run consumed the whole dialog, read its probes,
and return the redacted transcript its snapshot holds. A background run, an
ACP session or a terminal a step opened is closed at the end.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..demand import Demand
from ..instance import Instance
from ..recorder import quiet
from . import containment
from .model import Case
from .run import Run

if TYPE_CHECKING:
    from ..probes import CapturedUnit

__all__ = ["Run", "Transcript", "check_demand", "run_case", "served_in_state", "transcript_head"]


@dataclass(frozen=True)
class Transcript:
    """What a case did, redacted: the document its snapshot holds."""

    data: Mapping[str, object]


def check_demand(instance: Instance, *, serves_all_turns: bool = True) -> dict[str, Demand]:
    """Fail unless every dialog the instance registered was served exactly; return the demands.

    A run past the end fails unless the Script says ``runs_past_end=True``; a
    turn left unserved fails unless it is ``optional`` (or ``serves_all_turns``
    is false, the old per-case switch).
    """
    __tracebackhide__ = True
    demands = instance.recorder.demands()
    if any(d.served < d.held for d in demands.values()):
        # chat and beam log no operation lines where the harness sees them: read
        # what the captured state says was served.
        demands = instance.recorder.demands(served_in_state(instance))
    scripts = {d.key: d.script for d in instance.recorder.dialogs}
    for name, d in demands.items():
        if d.exhausted_at is not None and not scripts[name].runs_past_end:
            raise AssertionError(d.problem())
        if serves_all_turns and d.exhausted_at is None and d.unserved:
            raise AssertionError(d.problem())
    instance.recorder.checked_demands = demands
    return demands


def served_in_state(instance: Instance) -> dict[str, int]:
    """Model name → the most scripted-test model calls one captured request made.

    ``state show <id> --raw`` names the provider type and model of every model
    call; surfaces that log no operation lines (``chat``) are counted this way.
    Read quietly: these commands are the harness's, not the case's.
    """
    from .. import probes

    served: dict[str, int] = {}
    with quiet():
        try:
            ids = probes.captured_requests(instance)
            for request_id in ids:
                units = probes.captured_units(instance, request_id)
                counts = served_counts(units)
                for model, count in counts.items():
                    served[model] = max(served.get(model, 0), count)
        except (AssertionError, ValueError):
            return served  # no state to read (no init, a refused backend): logs only
    return served


def served_counts(units: Sequence[CapturedUnit]) -> Counter[str]:
    """Model name → the scripted-test calls among ``units`` that were served.

    A unit that failed before its call (the tokenizer refusing the history, a
    closing call cancelled as the unit is torn down) names the model and the
    provider but was never served: it does not count.
    """
    return Counter(
        u.model_name for u in units if u.provider_type == "scripted-test" and not u.error
    )


def run_case(case: Case, instance: Instance) -> Transcript:
    """Run ``case`` in ``instance``; raise AssertionError on the first unmet promise.

    Everything it does lands in ``instance.recorder``; the returned
    :class:`Transcript` is that record, redacted.
    """
    __tracebackhide__ = True
    recorder = instance.recorder
    recorder.title = case.name
    for pattern, placeholder in case.redact.items():
        recorder.redact(pattern, placeholder)
    run = Run(case=case, instance=instance)
    for kind, base, files in (
        ("files", instance.work, case.files),
        ("home_files", instance.home / ".contenox", case.home_files),
    ):
        for rel, text in files.items():
            name = f"{kind}[{rel!r}]"
            with run.touching(name, rel, fill=False):
                path = run.path(name, rel, base, fill=False)
                containment.write(path, instance.root, text)
    if case.init:
        instance.init()
    for name, script in case.dialogs.items():
        if case.provider is not None:
            run.dialog_paths[name] = provider_hook(run, case, script)
            continue
        run.dialog_paths[name] = instance.use_script(
            script, name=name, filename=case.dialog_filename(name), make_default=False
        )
    run.captures.update(
        work=str(instance.work),
        home=str(instance.home),
        tmp=str(instance.tmp),
        root=str(instance.root),
    )
    for name, path in run.dialog_paths.items():
        run.captures[f"dialog_{name}"] = str(path)
    if case.dialogs and case.provider is None:
        default = case.default_backend or next(iter(case.dialogs))
        run.captures["dialog"] = str(run.dialog_paths[default])
        with recorder.setup():
            instance.must("config", "set", "default-provider", "scripted-test")
            instance.must("config", "set", "default-model", case.dialogs[default].model_name)

    try:
        for index, s in enumerate(case.steps):
            run.where = f"steps[{index}] ({s.kind})"
            s.execute(run)
    except BaseException:
        # The step's failure is the news: end the ACP session quietly.
        with contextlib.suppress(Exception):
            run.close()
        raise
    run.close()

    if case.provider is not None:
        provider_done(run, case)
    check_demand(instance, serves_all_turns=case.serves_all_turns)
    recorder.demand_checked = case.serves_all_turns
    for index, p in enumerate(case.probes):
        run.where = f"probes[{index}] ({p.kind})"
        p.execute(run)
    return Transcript(recorder.transcript(transcript_head(instance)))


def provider_hook(run: Run, case: Case, script: Any) -> Path:
    """Register the Case's provider stand-in as its page says; it is ``{provider}``'s server."""
    from ..servers.providers import Provider, register_provider

    assert isinstance(case.provider, Provider)
    run.servers["provider"] = register_provider(run.instance, case.provider, script)
    path = run.instance.work / case.dialog_filename("scripted")
    script.write(path)
    return path


def provider_done(run: Run, case: Case) -> None:
    """The provider's model demand, and what contenox sent it, into the transcript."""
    __tracebackhide__ = True
    from ..servers.providers import check_served, sent

    standin = run.servers["provider"]
    run.instance.recorder.probe(
        f"requests the {standin.protocol} stand-in received", [], sent(standin)
    )
    if case.serves_all_turns:
        check_served(standin)


def transcript_head(instance: Instance) -> dict[str, object]:
    """The lines above the transcript: what the test is, and the model demand."""
    recorder = instance.recorder
    head: dict[str, object] = {}
    if recorder.title:
        head["test"] = recorder.title
    demands = recorder.checked_demands
    if demands is None:
        demands = recorder.demands()
    if demands and recorder.demand_checked:
        # Only a checked demand is stable enough to snapshot.
        head["model_demand"] = {name: d.summary() for name, d in demands.items()}
    return head
