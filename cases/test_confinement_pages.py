"""Cases for promises of guide/confinement/guardrails.md that no other file shows.

Each pair is its own control: only the gate (the granted name, the classifier's label)
changes between its two cases.
"""

from __future__ import annotations

import json

from test_confinement import (
    _SHELL_NOT_FOUND,
    _authored_shell,
    _envelope,
    _refused,
    _result,
    _unasked,
)

from harness import Case, Script, satisfies, step

# --- "name" grants exactly that toolset

# Control: the same chain granting local_shell by name, where pwd runs.
NAMED_GRANT = [
    _authored_shell(
        "an authored task granting local_shell by name reaches local_shell",
        {"tools": ["local_shell"]},
        satisfies(lambda r: "[WORK]" in r, "pwd printing the workspace"),
    ),
    _authored_shell(
        "an authored task granting another toolset by name does not reach local_shell",
        {"tools": ["native-echo"]},
        _SHELL_NOT_FOUND,
    ),
]


# --- output moderation: the same route task after the generating task


def _output_moderated_chain() -> str:
    chat = {
        "id": "simple-chat",
        "handler": "chat_completion",
        "system_instruction": "The simple-chat step.",
        "execute_config": {"model": "expensive", "provider": "scripted-test", "tools": []},
        "transition": {"branches": [{"operator": "default", "when": "", "goto": "moderate"}]},
    }
    moderate = {
        "id": "moderate",
        "handler": "route",
        "system_instruction": "The moderate step.",
        "execute_config": {"model": "classifier", "provider": "scripted-test", "tools": []},
        "transition": {
            "branches": [
                {"operator": "equals", "when": "safe", "goto": "end"},
                {"operator": "equals", "when": "unsafe", "goto": "reject_request"},
                {"operator": "default", "when": "", "goto": "end"},
            ]
        },
    }
    reject = {"id": "reject_request", "handler": "raise_error"}
    chain = {
        "id": "output-moderated",
        "description": "a moderation gate behind the real chat",
        "tasks": [chat, moderate, reject],
    }
    return json.dumps(chain, indent=2) + "\n"


def _output_moderation_case(label: str, passes: bool) -> Case:
    verdict = "is printed" if passes else "is withheld"
    answer = "The expensive model's answer."
    return Case(
        name=f"an answer the route task after the chat labels {label} {verdict}",
        backends={
            "classifier": Script(turns=[label], model="classifier"),
            "expensive": Script(turns=[answer], model="expensive"),
        },
        files={"output-moderated-chain.json": _output_moderated_chain()},
        steps=[
            step(
                "chat",
                "--chain",
                "output-moderated-chain.json",
                "tell me something",
                exit_code=0 if passes else 1,
                **({"stdout_has": [answer]} if passes else {"stdout_lacks": [answer]}),
            )
        ],
    )


# The pair is its own control: only the classifier's label differs. The rejected answer
# stays off stdout; the rejection's error names it, as handlers.md:215 documents
# raise_error ("halts the chain with the input string as the error message").
OUTPUT_MODERATION = [
    _output_moderation_case("safe", True),
    _output_moderation_case("unsafe", False),
]


# --- the credential quarantine cannot be consented away

# An envelope that extends the most permissive posture and restates files.read as an
# allow with an empty deny list: the widest read grant the grammar can write.
_WIDENED = _envelope(
    "[envelopes.widened]\n"
    'extends = "auto_edit"\n'
    'files.read = { grant = "allow", deny_paths = [], approve_paths = [] }\n'
)

# The pair differs only in the directory: .ssh/ (quarantined) against ssh/ (not).
NO_CONSENT = [
    _unasked(
        "an envelope widening every read still cannot read a key under a workspace .ssh"
        if quarantined
        else "an envelope widening every read reads the same key outside .ssh",
        "widened",
        "read_file",
        {"path": f"{directory}/deploy-key"},
        files={f"{directory}/deploy-key": "PRIVATE-KEY-MATERIAL\n"},
        before=[_WIDENED],
        after=[
            _result(
                (lambda r: _refused(r) and "PRIVATE-KEY-MATERIAL" not in r)
                if quarantined
                else (lambda r: "PRIVATE-KEY-MATERIAL" in r),
                "a refusal, the key withheld" if quarantined else "the key's text",
            )
        ],
    )
    for directory, quarantined in ((".ssh", True), ("ssh", False))
]
