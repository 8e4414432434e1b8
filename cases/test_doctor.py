"""`contenox doctor` and `contenox doctor --json`: readiness as a person and a program read it."""

from __future__ import annotations

from harness import Case, Instance, Script, probe, satisfies
from harness.probes import Doctor, DoctorReport, doctor, doctor_json

DIALOG = Script(turns=["Hello."])


def _skip_cycle(instance: Instance) -> Doctor:
    return doctor(instance, skip_cycle=True)


def _both(instance: Instance) -> tuple[Doctor, DoctorReport]:
    return doctor(instance), doctor_json(instance)


def _not_ready(r: Doctor) -> bool:
    return (
        r.ready is False
        and "No default model is set" in r.verdict
        and (r.default_model, r.default_provider) == ("", "")
        and any(i.severity == "error" and "default model" in i.message for i in r.issues)
    )


def _ready(r: Doctor) -> bool:
    return (
        r.ready is True
        and (r.default_model, r.default_provider) == ("scripted-test", "scripted-test")
        and (r.backends_registered, r.backends_reachable) == (1, 1)
        and [b.name for b in r.backends] == ["scripted"]
    )


def _agree(pair: tuple[Doctor, DoctorReport]) -> bool:
    text, data = pair
    return (
        (text.default_model, text.default_provider) == (data.default_model, data.default_provider)
        and (text.backends_registered, text.backends_reachable)
        == (data.backend_count, data.reachable_backend_count)
        and {i.message for i in text.issues} == {i.message for i in data.issues}
    )


def _roster(r: Doctor) -> bool:
    for tool, toolset in [("echo", "native-echo"), ("list_dir", "native-fs-browse")]:
        entry = r.tool(tool)
        if entry is None or (entry.toolset, entry.origin) != (toolset, "local (in-process)"):
            return False
    read_file = r.tool("read_file")
    return read_file is not None and read_file.origin.startswith("needs client capability")


DOCTOR_IS_NOT_READY_ON_AN_EMPTY_INSTANCE = Case(
    name="doctor is not ready on an empty instance and names the missing default",
    init=False,
    probes=[
        probe(
            "doctor --skip-cycle",
            _skip_cycle,
            expect=satisfies(
                _not_ready, "not ready, 'No default model is set', an error naming it"
            ),
        )
    ],
)

DOCTOR_IS_READY_ONCE_THE_SCRIPTED_BACKEND_IS_THE_DEFAULT = Case(
    name="doctor is ready once the scripted backend is the default",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "doctor",
            doctor,
            expect=satisfies(_ready, "ready, scripted-test defaults, 1 of 1 backend reachable"),
        )
    ],
)

DOCTOR_WARNS_THAT_THE_SCRIPTED_BACKEND_CALLS_NO_MODEL = Case(
    name="doctor warns that the scripted backend calls no model",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "doctor",
            doctor,
            expect=satisfies(
                lambda r: any(
                    i.severity == "warning" and "NO model is called" in i.message for i in r.issues
                ),
                "a warning that NO model is called",
            ),
        )
    ],
)

DOCTOR_JSON_REPORTS_THE_SCRIPTED_BACKEND_REACHABLE = Case(
    name="doctor json reports the scripted backend reachable with its chat model",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "doctor --json",
            doctor_json,
            expect=satisfies(
                lambda r: (
                    [(c.name, c.type, c.reachable, c.chat_models) for c in r.backend_checks]
                    == [("scripted", "scripted-test", True, ("scripted-test",))]
                ),
                "one check: scripted, scripted-test, reachable, chat model scripted-test",
            ),
        )
    ],
)

DOCTOR_TEXT_AND_JSON_AGREE = Case(
    name="doctor text and json agree on the defaults and the backend counts",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "doctor and doctor --json",
            _both,
            expect=satisfies(_agree, "the same defaults, backend counts and issue messages"),
        )
    ],
)

DOCTOR_ROSTER_LISTS_THE_IN_PROCESS_TOOLS = Case(
    name="doctor roster lists the in process tools an unattended run can call",
    init=False,
    probes=[
        probe(
            "doctor --skip-cycle",
            _skip_cycle,
            expect=satisfies(
                _roster,
                "echo and list_dir local (in-process); read_file needs a client capability",
            ),
        )
    ],
)


# function: registers a backend without making it the default, which a Case always does
def test_doctor_is_not_ready_while_a_backend_is_registered_but_no_default_is_set(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG, make_default=False)

    report = doctor(instance)

    assert report.ready is False, report
    assert "No default model is set" in report.verdict
    assert report.backends_registered == 1
