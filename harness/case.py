"""Cases as data: a frozen dataclass a maintainer fills in, run as its own pytest item.

::

    WORKED_RUN = Case(
        name="the worked run lands and prints its report",
        script=Script(turns=[
            Turn(text="Filing.", tool_calls=[mission_report("result", "reporting home")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Mission finished.",
        ]),
        steps=[
            step("run", "--policy", "run", "report what you know",
                 stdout_has=["reporting home"], notices_has=["finished: landed"]),
        ],
        probes=[output_of("mission", "list")],
    )

Any module-level ``Case`` (or list of them, for variants) in ``cases/`` is
collected as a pytest item named after it. Running one: place its files,
``contenox init``, register its dialogs, run its steps checking each one's
expectations, check that the run consumed the whole dialog, capture its
probes, and compare the redacted transcript with its snapshot.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from .checks import check_case, check_step
from .command import Result
from .demand import Demand
from .dialog import DialogError, Script
from .instance import Instance
from .recorder import quiet

__all__ = [
    "DEFECT_PREFIX",
    "Case",
    "CaseError",
    "Probe",
    "Step",
    "Transcript",
    "defect",
    "output_of",
    "probe",
    "run_case",
    "step",
]

DEFECT_PREFIX = "confirmed defect: "


class CaseError(ValueError):
    """A case that cannot be run as written; the message says what to change."""


def defect(observed: str) -> pytest.MarkDecorator:
    """Quarantine a plain test as a confirmed defect: a strict xfail.

    ``observed`` says what contenox did, and where (command, output, the doc
    line it contradicts). If the test starts passing, the run fails with
    "defect fixed? remove the quarantine".
    """
    if not observed.strip():
        raise CaseError("a defect needs what was observed and where; it was empty")
    return pytest.mark.xfail(strict=True, reason=DEFECT_PREFIX + observed.strip())


@dataclass(frozen=True)
class Step:
    """One contenox command and what must hold of it.

    ``exit_code=None`` accepts any exit code. ``*_has`` must appear and
    ``*_lacks`` must not, in stdout, full stderr, or notices (stderr without
    the structured log lines). ``full_stderr`` puts the whole redacted stderr
    in the transcript, not only the notices.
    """

    args: Sequence[str]
    stdin: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: float | None = None
    exit_code: int | None = 0
    stdout_has: Sequence[str] = ()
    stdout_lacks: Sequence[str] = ()
    stderr_has: Sequence[str] = ()
    stderr_lacks: Sequence[str] = ()
    notices_has: Sequence[str] = ()
    notices_lacks: Sequence[str] = ()
    full_stderr: bool = False

    def __post_init__(self) -> None:
        check_step(self, CaseError)
        if isinstance(self.args, str):
            raise CaseError(
                f"Step args must be a list of arguments, not one string {self.args!r}; "
                "write step('run', '--policy', 'run', 'the task')"
            )
        for name in (
            "args",
            *(f.name for f in dataclasses.fields(self) if f.name.endswith(("_has", "_lacks"))),
        ):
            value = getattr(self, name)
            if isinstance(value, str):
                raise CaseError(f"Step {name} must be a list of strings, not the string {value!r}")
            object.__setattr__(self, name, tuple(value))
        if not self.args:
            raise CaseError("a Step needs a contenox command, e.g. step('mission', 'list')")
        if self.timeout is not None and self.timeout <= 0:
            raise CaseError(f"Step timeout must be positive seconds, got {self.timeout!r}")

    def unmet(self, result: Result) -> list[str]:
        """Every expectation ``result`` does not meet, as sentences."""
        problems = []
        if self.exit_code is not None and result.exit_code != self.exit_code:
            problems.append(f"expected exit code {self.exit_code}, got {result.exit_code}")
        streams = {"stdout": result.stdout, "stderr": result.stderr, "notices": result.notices}
        for stream, text in streams.items():
            for needle in getattr(self, f"{stream}_has"):
                if needle not in text:
                    problems.append(f"expected {stream} to contain {needle!r}")
            for needle in getattr(self, f"{stream}_lacks"):
                if needle in text:
                    problems.append(f"expected {stream} not to contain {needle!r}")
        return problems


def step(*args: str, **expect: Any) -> Step:
    """A :class:`Step` for ``contenox <args>``; keywords are its expectations."""
    return Step(args=args, **expect)


@dataclass(frozen=True)
class Probe:
    """State captured after the steps, by running contenox's own commands."""

    name: str
    read: Callable[[Instance], object]


def probe(name: str, read: Callable[[Instance], object]) -> Probe:
    """A named probe; ``read(instance)`` returns text, a dataclass, or a list of them."""
    return Probe(name=name, read=read)


def output_of(*args: str) -> Probe:
    """The stdout of ``contenox <args>`` (which must exit 0), as captured state."""

    def read(instance: Instance) -> object:
        return instance.must(*args).stdout

    return Probe(name=" ".join(args), read=read)


def _slug(name: str) -> str:
    slug = re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower()
    return slug


@dataclass(frozen=True)
class Case:
    """An e2e case as data. ``name`` is the promise, as a sentence.

    Give ``script`` (one backend called ``scripted``) or ``backends`` (several
    named ones; ``default_backend`` names the one the defaults point at,
    else the first). ``files`` are placed in the workspace, ``home_files``
    in the scratch ``~/.contenox``, before ``contenox init`` (``init=False``
    skips it). ``defect`` quarantines the case as a strict xfail.
    ``serves_all_turns=False`` accepts a run that leaves turns unserved.
    """

    name: str
    steps: Sequence[Step]
    script: Script | None = None
    backends: Mapping[str, Script] = field(default_factory=dict)
    default_backend: str | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    home_files: Mapping[str, str] = field(default_factory=dict)
    init: bool = True
    probes: Sequence[Probe] = ()
    defect: str | None = None
    serves_all_turns: bool = True
    redact: Mapping[str, str] = field(default_factory=dict)
    snapshot: bool = True

    def __post_init__(self) -> None:
        check_case(self, CaseError)
        if not isinstance(self.name, str) or not _slug(self.name):
            raise CaseError(f"a Case needs a name that states the promise, got {self.name!r}")
        object.__setattr__(self, "steps", tuple(self.steps))
        object.__setattr__(self, "probes", tuple(self.probes))
        if not self.steps:
            raise CaseError(f"case {self.name!r} has no steps; add step(...) commands to run")
        for index, s in enumerate(self.steps):
            if not isinstance(s, Step):
                raise CaseError(f"case {self.name!r}: steps[{index}] must be a Step, got {s!r}")
        if self.script is not None and self.backends:
            raise CaseError(f"case {self.name!r}: give script or backends, not both")
        for name, script in self.dialogs.items():
            if not isinstance(script, Script):
                raise DialogError(f"case {self.name!r}: backend {name!r} needs a Script")
        if self.default_backend is not None and self.default_backend not in self.dialogs:
            raise CaseError(
                f"case {self.name!r}: default_backend {self.default_backend!r} is not one of "
                f"{sorted(self.dialogs)}"
            )
        if self.defect is not None and not self.defect.strip():
            raise CaseError(f"case {self.name!r}: a defect needs what was observed and where")

    @property
    def test_name(self) -> str:
        """The pytest item name: the promise, snake_cased, prefixed ``test_``."""
        slug = _slug(self.name)
        return slug if slug.startswith("test_") else f"test_{slug}"

    @property
    def dialogs(self) -> dict[str, Script]:
        """Backend name → dialog."""
        if self.script is not None:
            return {"scripted": self.script}
        return dict(self.backends)

    def dialog_filename(self, backend: str) -> str:
        """The dialog's file name, in the workspace and under ``dialogs/<area>/``."""
        base = self.test_name.removeprefix("test_")
        return f"{base}.json" if self.script is not None else f"{base}.{backend}.json"


@dataclass(frozen=True)
class Transcript:
    """What a case did, redacted: the document its snapshot holds."""

    data: Mapping[str, object]


def _check_step(s: Step, result: Result, demands: str) -> None:
    __tracebackhide__ = True
    problems = s.unmet(result)
    if problems:
        raise AssertionError(
            "step failed:\n  - " + "\n  - ".join(problems) + f"\n{result.describe()}{demands}"
        )


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
    return demands


def served_in_state(instance: Instance) -> dict[str, int]:
    """Model name → the most scripted-test model calls one captured request made.

    ``state show <id> --raw`` names the provider type and model of every model
    call; surfaces that log no operation lines (``chat``) are counted this way.
    Read quietly: these commands are the harness's, not the case's.
    """
    from . import probes

    served: dict[str, int] = {}
    with quiet():
        try:
            ids = probes.captured_requests(instance)
            for request_id in ids:
                units = probes.captured_units(instance, request_id)
                counts = Counter(u.model_name for u in units if u.provider_type == "scripted-test")
                for model, count in counts.items():
                    served[model] = max(served.get(model, 0), count)
        except (AssertionError, ValueError):
            return served  # no state to read (no init, a refused backend): logs only
    return served


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
    for rel, text in case.files.items():
        instance.write(rel, text)
    for rel, text in case.home_files.items():
        path = instance.home / ".contenox" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if case.init:
        instance.init()
    for name, script in case.dialogs.items():
        instance.use_script(
            script, name=name, filename=case.dialog_filename(name), make_default=False
        )
    if case.dialogs:
        default = case.default_backend or next(iter(case.dialogs))
        with recorder.setup():
            instance.must("config", "set", "default-provider", "scripted-test")
            instance.must("config", "set", "default-model", case.dialogs[default].model_name)

    def demand_note() -> str:
        return "".join(
            f"\n  model demand ({n}): {d.summary()}" for n, d in recorder.demands().items()
        )

    for s in case.steps:
        result = instance.contenox(
            *s.args, stdin=s.stdin, env=s.env, timeout=s.timeout, full_stderr=s.full_stderr
        )
        _check_step(s, result, demand_note())

    check_demand(instance, serves_all_turns=case.serves_all_turns)
    recorder.demand_checked = case.serves_all_turns
    for p in case.probes:
        with recorder.probing():
            value = p.read(instance)
        recorder.probe(p.name, (), value)
    return Transcript(recorder.transcript(transcript_head(instance)))


def transcript_head(instance: Instance) -> dict[str, object]:
    """The lines above the transcript: what the test is, and the model demand."""
    recorder = instance.recorder
    head: dict[str, object] = {}
    if recorder.title:
        head["test"] = recorder.title
    demands = recorder.demands()
    if demands and recorder.demand_checked:
        # Only a checked demand is stable enough to snapshot.
        head["model_demand"] = {name: d.summary() for name, d in demands.items()}
    return head


def _quote(arg: str) -> str:
    return arg if re.fullmatch(r"[\w@%+=:,./-]+", arg) else "'" + arg.replace("'", "'\\''") + "'"
