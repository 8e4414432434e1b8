"""Models, read back through `model list`."""

from __future__ import annotations

from harness import Instance, Script
from harness.probes import models

DIALOG = Script(turns=["Hello."])
EMBEDDER = Script(
    model="tiny-embedder",
    context_length=4096,
    capabilities={"chat": False, "think": False, "vision": False},
    turns=["unused"],
)


def test_model_list_is_empty_when_no_backend_is_registered(instance: Instance) -> None:
    assert models(instance) == []


def test_model_list_marks_the_scripted_model_as_the_default_with_every_capability(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG)

    [only] = models(instance)

    assert (only.backend, only.name, only.default) == ("scripted", "scripted-test", True)
    assert all((only.chat, only.embed, only.prompt, only.think, only.vision))


def test_model_list_shows_the_capabilities_and_context_a_script_declares(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG)
    instance.use_script(EMBEDDER, name="embedder", filename="embedder.json", make_default=False)

    listed = {m.name: m for m in models(instance)}

    tiny = listed["tiny-embedder"]
    assert (tiny.backend, tiny.default, tiny.context) == ("embedder", False, 4096)
    assert (tiny.chat, tiny.embed, tiny.think, tiny.vision) == (False, True, False, False)
