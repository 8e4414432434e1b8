"""Running a Case: one instance, its steps in order, the model demand, the transcript.

Running one: place its files, ``contenox init``, register its dialogs, run its
steps in order (each checks its own expectations and writes to the
recorder), check that the run consumed the whole dialog, read its probes,
and return the redacted transcript its snapshot holds. A background run, an
ACP session or a terminal a step opened is closed at the end.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..command import Result
from ..demand import Demand
from ..instance import Instance
from ..recorder import quiet
from . import containment
from .containment import Escape, Kind
from .model import Case
from .steps import Expect, Prompt, fill

if TYPE_CHECKING:
    from ..acp import AcpClient, PromptTurn
    from ..probes import CapturedUnit
    from ..process import Process
    from ..terminal import Terminal

__all__ = ["Run", "Transcript", "check_demand", "run_case", "served_in_state", "transcript_head"]


@dataclass
class Run:
    """One Case's run in progress: what its steps captured and opened."""

    case: Case
    instance: Instance
    captures: dict[str, str] = field(default_factory=dict)
    processes: dict[str, Process] = field(default_factory=dict)
    last_background: str | None = None
    dialog_paths: dict[str, Path] = field(default_factory=dict)
    client: AcpClient | None = None
    term: Terminal | None = None
    # serve(...)'s servers by name: their handles, for received(...) to read.
    servers: dict[str, Any] = field(default_factory=dict)
    # The turn the last prompt(...) returned, for acp_turn(...) to read.
    last_turn: PromptTurn | None = None
    # The step running, as a refusal names it: "steps[3] (write)".
    where: str = "setup"

    def path(
        self, name: str, template: str, base: Path, kind: Kind = "file", *, fill: bool = True
    ) -> Path:
        """Where the path field ``name`` (``template``, filled) really is, inside the root.

        Resolved now, after the placeholders are filled, following links
        (:func:`harness.case.containment.resolve`); anything outside the
        case's scratch root fails the case, naming the step, the field, the
        filled value and where it led.
        """
        value = self.fill(template) if fill else template
        try:
            return containment.resolve(self.instance.root, base, value, kind)
        except Escape as err:
            raise self.refusal(name, template, value, err.reason, err.resolved) from None

    @contextlib.contextmanager
    def touching(self, name: str, template: str, *, fill: bool = True) -> Iterator[None]:
        """Turn a refusal or an OS error of a file operation into the case's failure."""
        __tracebackhide__ = True
        try:
            yield
        except Escape as err:
            value = self.fill(template) if fill else template
            raise self.refusal(name, template, value, err.reason, err.resolved) from None
        except (OSError, ValueError) as err:
            value = self.fill(template) if fill else template
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            raise self.refusal(name, template, value, f"cannot be used: {reason}", None) from None

    def refusal(
        self, name: str, template: str, value: str, reason: str, resolved: str | None
    ) -> AssertionError:
        """The failure of a step whose path field ``name`` cannot be touched."""
        shown = repr(value) if value == template else f"{template!r} (filled: {value!r})"
        led = f" (it resolves to {resolved})" if resolved is not None else ""
        return AssertionError(
            f"case {self.case.name!r}: {self.where} {name} {shown} {reason}{led}; refused: "
            f"a step touches only what lies inside the case's scratch root {self.instance.root}"
        )

    def fill(self, text: str) -> str:
        """``text`` with its ``{capture}`` placeholders filled."""
        return fill(text, self.captures)

    def remember(self, name: str, value: str) -> None:
        """Keep a captured value; an id-like one reads as ``[NAME]`` in the transcript."""
        known = value in self.captures.values()
        self.captures[name] = value
        if not known and len(value) >= 8 and re.fullmatch(r"[\w.:-]+", value):
            self.instance.recorder.name(value, f"[{name.upper()}]")

    def check(self, expect: Expect, result: Result) -> None:
        """Fail unless ``result`` meets ``expect``; then keep what it captures."""
        __tracebackhide__ = True
        problems = expect.unmet(result, self.captures)
        if problems:
            raise AssertionError(
                "step failed:\n  - "
                + "\n  - ".join(problems)
                + f"\n{result.describe()}{self.demand_note()}"
            )
        for name, value in expect.captured(result).items():
            self.remember(name, value)

    def demand_note(self) -> str:
        return "".join(
            f"\n  model demand ({n}): {d.summary()}"
            for n, d in self.instance.recorder.demands().items()
        )

    def acp(self, first: Prompt) -> AcpClient:
        """The case's ACP session, opened by the first prompt."""
        if self.client is None:
            from ..acp import open_acp

            self.client = open_acp(
                self.instance,
                *first.acp_args,
                subcommand=first.acp_command,
                refuse_writes=first.refuse_writes,
                env={k: self.fill(v) for k, v in first.acp_env.items()} or None,
                capabilities=first.acp_capabilities,
            )
        return self.client

    def terminal(self, args: Sequence[str]) -> Terminal:
        """The case's terminal, opened (``contenox <args>``) by the first screen step."""
        if self.term is None:
            from ..terminal import open_terminal

            self.term = open_terminal(self.instance, *args)
        return self.term

    def close(self) -> None:
        """Close the ACP session as an editor quitting does (its exit lands in the transcript)."""
        if self.client is not None:
            client, self.client = self.client, None
            code = client.close()
            if code != 0:
                raise AssertionError(
                    f"the ACP agent exited {code} when the editor closed it\n{client.describe()}"
                )


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
            run.dialog_paths[name] = provider_hook(run, script)
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
        provider_done(run)
    check_demand(instance, serves_all_turns=case.serves_all_turns)
    recorder.demand_checked = case.serves_all_turns
    for index, p in enumerate(case.probes):
        run.where = f"probes[{index}] ({p.kind})"
        p.execute(run)
    return Transcript(recorder.transcript(transcript_head(instance)))


def provider_hook(run: Run, script: Any) -> Path:
    """Register the Case's provider stand-in as its page says; it is ``{provider}``'s server."""
    from ..servers.providers import Provider, register_provider

    assert isinstance(run.case.provider, Provider)
    run.servers["provider"] = register_provider(run.instance, run.case.provider, script)
    path = run.instance.work / run.case.dialog_filename("scripted")
    script.write(path)
    return path


def provider_done(run: Run) -> None:
    """The provider's model demand, and what contenox sent it, into the transcript."""
    __tracebackhide__ = True
    from ..servers.providers import check_served, sent

    standin = run.servers["provider"]
    run.instance.recorder.probe(
        f"requests the {standin.protocol} stand-in received", [], sent(standin)
    )
    if run.case.serves_all_turns:
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
