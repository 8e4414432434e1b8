"""reference/config.md, the promises test_config.py leaves: where the one database is by
default, and the autocomplete provider apart from ``default-provider``.

Every value is read back through contenox's own commands (``config get`` through ``--db``,
``autocomplete --stdio``).
"""

from __future__ import annotations

import json

from harness import Case, Instance, Script, step

FIM_REQUEST = (
    json.dumps(
        {"id": "1", "path": "main.go", "language": "go", "prefix": "func main() {\n\t"}
        | {"suffix": "\n}", "max_tokens": 64}
    )
    + "\n"
)


def _completion(text: str) -> str:
    return json.dumps({"id": "1", "completion": text}, separators=(",", ":"))


def test_the_default_database_is_local_db_under_the_home_contenox(instance: Instance) -> None:
    # function: the file's path is built from the scratch home
    instance.must("config", "set", "default-model", "kept-in-local-db")

    default_db = instance.home / ".contenox" / "local.db"
    through_it = instance.must("--db", default_db, "config", "get", "default-model")
    elsewhere = instance.must("--db", instance.tmp / "other.db", "config", "get", "default-model")

    assert "kept-in-local-db" in through_it.stdout, through_it.describe()
    assert "kept-in-local-db" not in elsewhere.stdout, elsewhere.describe()


AUTOCOMPLETE_PROVIDER_IS_ITS_OWN = Case(
    name=(
        "default-autocomplete-provider picks the completion provider apart from the chat default"
    ),
    backends={
        "completer": Script(model="completer-model", turns=["fmt.Println(1)"]),
    },
    steps=[
        # The chat default names a provider type with no backend at all.
        step("config", "set", "default-provider", "ollama"),
        step("config", "set", "default-autocomplete-model", "completer-model"),
        step("config", "set", "default-autocomplete-provider", "scripted-test"),
        step(
            "autocomplete",
            "--stdio",
            stdin=FIM_REQUEST,
            stdout_has=['{"id":"1","completion":"fmt.Println(1)"}'],
        ),
    ],
)

# The control: only default-autocomplete-provider is left unset, so the completion goes
# to default-provider, which has no backend.
AUTOCOMPLETE_WITHOUT_ITS_PROVIDER_USES_THE_CHAT_DEFAULT = Case(
    name="without default-autocomplete-provider the completion goes to default-provider",
    backends={
        "completer": Script(model="completer-model", turns=["fmt.Println(1)"]),
    },
    steps=[
        step("config", "set", "default-provider", "ollama"),
        step("config", "set", "default-autocomplete-model", "completer-model"),
        step(
            "autocomplete",
            "--stdio",
            stdin=FIM_REQUEST,
            stdout_has=['"error":"chat: client resolution failed'],
            stdout_lacks=["fmt.Println(1)"],
        ),
    ],
)
