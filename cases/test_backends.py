"""Backends, read back through `backend list` and `backend show`."""

from __future__ import annotations

from harness import Case, Script, probe, satisfies, step
from harness.probes import backend, backends

DIALOG = Script(turns=["Hello."])

BACKEND_LIST_IS_EMPTY = Case(
    name="backend list is empty on a fresh instance",
    init=False,
    probes=[probe("backends", backends, expect=[])],
)

LISTED_WITH_ITS_SCRIPT_AS_THE_URL = Case(
    name="a scripted backend is listed with its script as the url",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "backends",
            backends,
            expect=satisfies(
                lambda bs: (
                    [(b.name, b.type) for b in bs] == [("scripted", "scripted-test")]
                    and bs[0].url.endswith(
                        "/work/a_scripted_backend_is_listed_with_its_script_as_the_url.json"
                    )
                ),
                "one backend, scripted, of type scripted-test, its URL the dialog's path",
            ),
        )
    ],
)

BACKEND_SHOW_PRINTS_THE_RECORD = Case(
    name="backend show prints the record of the named backend",
    init=False,
    backends={"scripted": DIALOG, "other": DIALOG},
    probes=[
        probe(
            "backend",
            backend,
            "scripted",
            expect=satisfies(
                lambda b: (
                    (b.name, b.type) == ("scripted", "scripted-test")
                    and b.base_url.endswith(
                        "/work/backend_show_prints_the_record_of_the_named_backend.scripted.json"
                    )
                    and bool(b.id)
                ),
                "the scripted backend's name, type, dialog path and an id",
            ),
        )
    ],
)

BACKEND_SHOW_OF_AN_UNKNOWN_NAME = Case(
    name="backend show of an unknown name fails naming it",
    init=False,
    steps=[
        step(
            "backend", "show", "nope", exit_code="non-zero", stderr_has=['backend "nope" not found']
        )
    ],
)
