"""`contenox autocomplete --stdio` (contenox-cli.md): completions over a JSON-lines stdio protocol.

Driven from the editor's seat: one JSON request per line on stdin, stdin
closed, and every line it answered on stdout read back as JSON. A scripted
model stands in for the completion model (`default-autocomplete-model`); its
reply is the completion. Several requests in flight are answered concurrently,
so the cases that send more than one match answers by id, as the page says a
client must.
"""

from __future__ import annotations

import json
import re

import pytest

from harness import Case, Instance, Script, step

COMPLETION = 'fmt.Println("hello")'
CODER = Script(model="coder", turns=[COMPLETION])
# The page's own request line.
REQUEST = {
    "id": "1",
    "path": "main.go",
    "language": "go",
    "prefix": "func main() {\n\t",
    "suffix": "\n}",
    "max_tokens": 64,
}
# What it answers with no autocomplete model: the fix, by name (JSON may escape `<` `>`).
NO_MODEL = re.compile(
    r'"error":"no autocomplete model is configured; set one with: '
    r"contenox config set default-autocomplete-model (<|\\u003c)name(>|\\u003e)"
)
# Point the autocomplete role at the scripted model the case registered.
# The long sides of the truncation cases, shortened in their transcripts.
LONG_SIDES = {r"a{1000,}": "[PREFIX: a×N]", r"b{1000,}": "[SUFFIX: b×N]"}
USE_CODER = [
    step("config", "set", "default-autocomplete-model", "coder"),
    step("config", "set", "default-autocomplete-provider", "scripted-test"),
]


def _lines(*requests: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in requests)


def _answers(stdout: str) -> list[dict[str, str]]:
    """Every line the server answered, parsed: a line that is not JSON fails the case."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


WITH_NO_MODEL_IT_STARTS_AND_ANSWERS_THE_REQUEST_WITH_THE_FIX = Case(
    name="with no autocomplete model it starts, exits 0 and answers the request with the fix",
    steps=[
        step(
            "autocomplete",
            "--stdio",
            stdin=_lines(REQUEST),
            exit_code=0,
            stdout_has=['{"id":"1",', NO_MODEL],
            stdout_lacks=['"completion"'],
            notices_has=["no autocomplete model is configured"],
        ),
    ],
)

A_MALFORMED_LINE_IS_ANSWERED_WITH_AN_EMPTY_ID = Case(
    name="a malformed line is answered with an error under an empty id",
    script=CODER,
    steps=[
        *USE_CODER,
        step(
            "autocomplete",
            "--stdio",
            stdin=_lines("this is not json"),
            exit_code=0,
            stdout_has=[re.compile(r'^\{"id":"","error":"[^"]+"\}$', re.M)],
        ),
    ],
)

A_REQUEST_IS_ANSWERED_WITH_THE_MODELS_COMPLETION = Case(
    name="a request is answered with the model's completion under its id",
    script=CODER,
    steps=[
        *USE_CODER,
        step(
            "autocomplete",
            "--stdio",
            stdin=_lines(REQUEST),
            exit_code=0,
            stdout_has=['{"id":"1","completion":"fmt.Println(\\"hello\\")"}'],
        ),
    ],
)

A_SIDE_OVER_16_KIB_IS_TRUNCATED_AND_NOTED_ON_STDERR = Case(
    name="a side over 16 KiB is truncated and noted on stderr, and still answered",
    script=CODER,
    redact=LONG_SIDES,
    steps=[
        *USE_CODER,
        step(
            "autocomplete",
            "--stdio",
            stdin=_lines({"id": "big", "prefix": "a" * 17000, "suffix": "b" * 17000}),
            exit_code=0,
            stdout_has=['{"id":"big","completion":'],
            notices_has=[re.compile(r"request big exceeded 16384 bytes per side; .*truncated")],
        ),
    ],
)

A_SIDE_OF_16_KIB_IS_NOT_TRUNCATED = Case(
    name="a side of exactly 16 KiB is accepted without a truncation note",
    script=CODER,
    redact=LONG_SIDES,
    steps=[
        *USE_CODER,
        step(
            "autocomplete",
            "--stdio",
            stdin=_lines({"id": "edge", "prefix": "a" * 16384, "suffix": "b" * 16384}),
            exit_code=0,
            stdout_has=['{"id":"edge","completion":'],
            notices_lacks=["truncated"],
        ),
    ],
)

WITHOUT_STDIO_IT_REFUSES_AND_NAMES_THE_FLAG = Case(
    name="autocomplete without stdio refuses and names the one mode it has",
    init=False,
    steps=[
        step(
            "autocomplete",
            exit_code="non-zero",
            notices_has=["contenox autocomplete --stdio"],
        ),
    ],
)


# function: several requests in flight are answered concurrently, in an order
# that differs from run to run; the answers are matched by id, as a client must.
@pytest.mark.no_transcript(reason="concurrent answers arrive in a different order each run")
def test_with_no_model_it_warns_once_and_answers_every_request_by_id(instance: Instance) -> None:
    instance.init()
    requests = [dict(REQUEST, id=str(n)) for n in range(1, 4)]

    result = instance.must("autocomplete", "--stdio", stdin=_lines(*requests))

    answers = _answers(result.stdout)
    assert sorted(a["id"] for a in answers) == ["1", "2", "3"], result.stdout
    assert all(NO_MODEL.search(json.dumps(a, separators=(",", ":"))) for a in answers), answers
    warnings = [n for n in result.notices.splitlines() if "no autocomplete model" in n]
    assert len(warnings) == 1, result.notices


# function: concurrent answers come back in any order; each id must be answered once.
@pytest.mark.no_transcript(reason="concurrent answers arrive in a different order each run")
def test_every_request_in_flight_is_answered_once_under_its_own_id(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(model="coder", turns=["one", "two", "three"]))
    for args in USE_CODER:
        instance.must(*args.args)
    requests = [dict(REQUEST, id=name) for name in ("a", "b", "c")]

    result = instance.must("autocomplete", "--stdio", stdin=_lines(*requests))

    answers = _answers(result.stdout)
    assert sorted(a["id"] for a in answers) == ["a", "b", "c"], result.stdout
    assert sorted(a["completion"] for a in answers) == ["one", "three", "two"], result.stdout
