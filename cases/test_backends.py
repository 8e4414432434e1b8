"""Backends, read back through `backend list` and `backend show`."""

from __future__ import annotations

import pytest

from harness import Instance, Script
from harness.probes import ProbeError, backend, backends

DIALOG = Script(turns=["Hello."])


def test_backend_list_is_empty_on_a_fresh_instance(instance: Instance) -> None:
    assert backends(instance) == []


def test_a_scripted_backend_is_listed_with_its_script_as_the_url(instance: Instance) -> None:
    path = instance.use_script(DIALOG, name="scripted")

    [only] = backends(instance)

    assert (only.name, only.type, only.url) == ("scripted", "scripted-test", str(path))


def test_backend_show_prints_the_record_of_the_named_backend(instance: Instance) -> None:
    path = instance.use_script(DIALOG, name="scripted")
    instance.use_script(DIALOG, name="other", filename="other.json", make_default=False)

    shown = backend(instance, "scripted")

    assert (shown.name, shown.type, shown.base_url) == ("scripted", "scripted-test", str(path))
    assert shown.id


def test_backend_show_of_an_unknown_name_fails_naming_it(instance: Instance) -> None:
    with pytest.raises(ProbeError, match='backend "nope" not found'):
        backend(instance, "nope")
