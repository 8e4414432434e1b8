"""Models, read back through `model list`."""

from __future__ import annotations

from harness import Case, Script, probe, satisfies
from harness.probes import Model, models

DIALOG = Script(turns=["Hello."])
EMBEDDER = Script(
    model="tiny-embedder",
    context_length=4096,
    capabilities={"chat": False, "think": False, "vision": False},
    turns=["unused"],
)


def _only_default_with_every_capability(listed: list[Model]) -> bool:
    [only] = listed
    return (only.backend, only.name, only.default) == ("scripted", "scripted-test", True) and all(
        (only.chat, only.embed, only.prompt, only.think, only.vision)
    )


def _tiny_as_declared(listed: list[Model]) -> bool:
    tiny = {m.name: m for m in listed}.get("tiny-embedder")
    return tiny is not None and (
        (tiny.backend, tiny.default, tiny.context, tiny.chat, tiny.embed, tiny.think, tiny.vision)
        == ("embedder", False, 4096, False, True, False, False)
    )


MODEL_LIST_IS_EMPTY = Case(
    name="model list is empty when no backend is registered",
    init=False,
    probes=[probe("models", models, expect=[])],
)

MODEL_LIST_MARKS_THE_SCRIPTED_MODEL_AS_THE_DEFAULT = Case(
    name="model list marks the scripted model as the default with every capability",
    init=False,
    script=DIALOG,
    probes=[
        probe(
            "models",
            models,
            expect=satisfies(
                _only_default_with_every_capability,
                "one model, scripted-test on backend scripted, the default, every capability",
            ),
        )
    ],
)

MODEL_LIST_SHOWS_WHAT_A_SCRIPT_DECLARES = Case(
    name="model list shows the capabilities and context a script declares",
    init=False,
    backends={"scripted": DIALOG, "embedder": EMBEDDER},
    probes=[
        probe(
            "models",
            models,
            expect=satisfies(
                _tiny_as_declared,
                "tiny-embedder on backend embedder, not default, context 4096, embed only",
            ),
        )
    ],
)
