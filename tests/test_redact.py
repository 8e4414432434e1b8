"""Redaction: volatile text becomes stable placeholders, ids numbered by first appearance."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.redact import Redactor


def test_paths_become_placeholders_longest_first() -> None:
    r = Redactor(paths={"[ROOT]": Path("/tmp/r"), "[WORK]": Path("/tmp/r/work")})
    assert r("cd /tmp/r/work/d.json and /tmp/r/home") == "cd [WORK]/d.json and [ROOT]/home"


def test_uuids_are_numbered_by_first_appearance_and_stay_the_same() -> None:
    a = "9d4e1209-e78f-46fe-87a1-0fb6a6a0d8c6"
    b = "5b0f6307-42a3-45ca-b4d8-533b5a508b31"
    r = Redactor()
    assert r(f"Mission {a} (instance {b}) … Mission {a}") == (
        "Mission [UUID1] (instance [UUID2]) … Mission [UUID1]"
    )
    # The numbering carries across calls within one transcript.
    assert r(f"contenox mission reports {b}") == "contenox mission reports [UUID2]"
    # A new transcript starts again at 1.
    assert Redactor()(b) == "[UUID1]"


def test_other_generated_ids() -> None:
    r = Redactor()
    text = (
        "request_id=cli-5765c46c8a0430a0 call scripted-test-0-0-21dd "
        "op_id=op-20261130-090241.709-1 session 9f2c1a4e again cli-5765c46c8a0430a0"
    )
    assert r(text) == "request_id=[REQ1] call [CALL1] op_id=[OP1] session [HEX1] again [REQ1]"


def test_a_hex_id_cut_with_an_ellipsis_is_an_id_even_when_all_digits() -> None:
    # contenox prints a session id's first eight hex digits and "…": all digits in
    # about one run in forty, which the mixed-characters shape alone would miss.
    r = Redactor()
    assert r('to session "31520946…" and "9f2c1a4e…" then "31520946…"') == (
        'to session "[HEX1]…" and "[HEX2]…" then "[HEX1]…"'
    )


def test_an_event_request_id_is_numbered_in_order_even_when_all_digits() -> None:
    # `events dispatch` prints request=evt-<16 hex>: all digits in some runs.
    r = Redactor()
    text = "request=evt-4681911933364760\nrequest=evt-0b4c2d9e8f7a6b5c\nevt-4681911933364760"
    assert r(text) == "request=evt-[HEX1]\nrequest=evt-[HEX2]\nevt-[HEX1]"


def test_words_and_plain_numbers_are_not_ids() -> None:
    r = Redactor()
    assert r("deadbeef 12345678 feedface landed 32768") == "deadbeef 12345678 feedface landed 32768"


def test_timestamps_durations_and_versions() -> None:
    r = Redactor()
    assert r("time=2026-11-30T09:02:41.709Z at 2026-11-30 09:02:41.762945517 +0000 UTC") == (
        "time=[TIME] at [TIME]"
    )
    assert r("took 71.295864ms, waited 2s, timeout 30m0s, 54.562µs") == (
        "took [DURATION], waited [DURATION], timeout [DURATION], [DURATION]"
    )
    assert r("contenox version v1.0.0 built with go1.26.8") == (
        "contenox version [VERSION] built with [GOVERSION]"
    )
    assert r("turns[2] v1 2 files s3") == "turns[2] v1 2 files s3"


def test_a_case_can_add_its_own_redactions() -> None:
    r = Redactor(extra={r"token-\d+": "[TOKEN]"})
    assert r("got token-42") == "got [TOKEN]"


def test_a_loopback_port_is_numbered_like_an_id() -> None:
    r = Redactor()
    text = "mcp at http://127.0.0.1:41235/mcp, api at localhost:5123, again 127.0.0.1:41235"
    assert (
        r(text)
        == "mcp at http://127.0.0.1:[PORT1]/mcp, api at localhost:[PORT2], again 127.0.0.1:[PORT1]"
    )
    assert r("[::1]:8080 and 10.0.0.1:8080") == "[::1]:[PORT3] and 10.0.0.1:8080"


def test_a_tool_results_duration_in_json_is_redacted() -> None:
    r = Redactor()
    assert r('{"success":true,"duration_seconds":0.008617097,"command":"ls"}') == (
        '{"success":true,"duration_seconds":[DURATION],"command":"ls"}'
    )
    assert r('{\\"duration_seconds\\": 1e-05}') == '{\\"duration_seconds\\": [DURATION]}'


def test_a_captured_steps_duration_in_raw_json_is_redacted() -> None:
    assert Redactor()('{"transition": "tool_call", "duration": 97589992,') == (
        '{"transition": "tool_call", "duration": [DURATION],'
    )


def test_the_padding_after_a_duration_in_a_table_is_two_spaces() -> None:
    r = Redactor()
    assert r("summarise  noop     0      1.2s    noop") == r(
        "summarise  noop     0      12.345ms  noop"
    )


def test_a_beam_session_id_is_numbered_even_when_all_digits() -> None:
    assert Redactor()("beam-60254097 then beam-1a2b3c4d, beam-60254097") == (
        "beam-[BEAM1] then beam-[BEAM2], beam-[BEAM1]"
    )


# Adversarial shapes, 1 MB each: base64 (the 76 s case), slashes, digit runs,
# ellipses, basetemp anchors without and with their end, a cut root repeated.
_SHAPES = {
    "QUJD/": "QUJD/",
    "/a": "/a",
    "digits": "1234567890",
    "ellipses": "…",
    "cut root": "/tmp/cxe-gh…",
    "anchor": "/pytest-of-r/",
    "basetemp": "/pytest-of-r/pytest-1",
    "cut basetemp": "/pytest-of-r/pytest-1…",
    "empty segments": "a//",
    "ports": "127.0.0.1:",
}


@pytest.mark.parametrize("shape", list(_SHAPES))
def test_a_megabyte_of_adversarial_text_redacts_in_linear_time(
    shape: str, record_property: Callable[[str, object], None]
) -> None:
    # The bound is on CPU time (time.process_time), not wall time, so two busy
    # neighbours on a shared machine cannot make it flaky; and it is generous
    # (a linear pass takes well under a second). The patterns it replaces
    # backtracked quadratically: 76 s on 80 KB, hours on a megabyte, so a
    # regression is off by orders of magnitude, not by a factor a slow CI hides.
    unit = _SHAPES[shape]
    text = unit * (1_000_000 // len(unit))
    r = Redactor(paths={"[ROOT]": Path("/tmp/cxe-ghjkmnpq")})
    started = time.process_time()
    out = r(text)
    seconds = time.process_time() - started
    record_property("redact_seconds", round(seconds, 3))
    print(f"{shape}: {len(text)} characters in {seconds:.3f}s CPU")
    expected = {
        "cut root": "[ROOT]…" * (len(text) // len(unit)),
        "basetemp": "[BASETEMP]" * (len(text) // len(unit)),
        "cut basetemp": "[ROOT]…" * (len(text) // len(unit)),
    }.get(shape)
    if expected is not None:
        assert out == expected
    elif shape == "ports":
        assert out.startswith("127.0.0.1:[PORT1].0.0.1:")
    else:
        assert out == text
    assert seconds < 5.0, f"{shape}: {seconds:.1f}s CPU for 1 MB"


@pytest.mark.parametrize("extra", [0, 1, 7, 23, 40, 41, 90])
def test_a_root_cut_with_an_ellipsis_anywhere_is_redacted_at_any_root_length(extra: int) -> None:
    # contenox cuts a long message at a fixed width, so where its path is cut
    # moves with the root's length: wherever the cut falls in the path — inside the
    # root, at its slash, in [WORK] or in the file name under it — the reader sees
    # [ROOT]…, the same at every root length.
    root = Path("/tmp/pytest-of-root/pytest-12/popen-gw0/" + "x" * extra + "case0")
    paths = {"[ROOT]": root, "[WORK]": root / "work", "[HOME]": root / "home"}
    full = f"{root}/work/dialog.json"
    for k in range(2, len(full)):
        message = f'chat failed: scripted-test script "{full[:k]}…'
        got = Redactor(paths=paths)(message)
        head = 'chat failed: scripted-test script "'
        assert got == head + "[ROOT]…", k
        assert "pytest-of" not in got and "/tmp" not in got, got
    # A path the cut spares is shown whole, and the cut after it is contenox's text.
    whole = f'script "{full}" is exhau…'
    assert Redactor(paths=paths)(whole) == 'script "[WORK]/dialog.json" is exhau…'


def test_a_cut_path_of_another_root_under_the_basetemp_is_redacted() -> None:
    r = Redactor()
    assert r('script "/tmp/pytest-of-root/pytest-3/popen-gw1/other0/wo…" then') == (
        'script "[ROOT]…" then'
    )
    assert r("at /var/t/pytest-of-u/pytest-3/popen-gw1/x and --dir=/a/pytest-of-u/pytest-9") == (
        "at [BASETEMP]/x and --dir=[BASETEMP]"
    )


def test_a_fragment_inside_a_longer_word_or_a_relative_path_is_not_a_cut_root() -> None:
    r = Redactor(paths={"[ROOT]": Path("/tmp/cxe-ghjkmnpq"), "[BIN]": Path("contenox")})
    assert r("see a/tmp/cx… and co… and /…") == "see a/tmp/cx… and co… and /…"
    assert r("at /tmp/cx… and (/tmp/cxe-ghj…)") == "at [ROOT]… and ([ROOT]…)"


def test_a_cut_fragment_that_begins_the_root_and_the_venv_alike_reads_as_the_root() -> None:
    # CI's venv (/tmp/ci/.tox/py) and the scratch root (/tmp/…) share "/tmp/": a cut
    # there is the case's path, not the machine's, whatever their lengths.
    from harness.redact import _cut_paths

    root = Path("/tmp/pytest-of-root/pytest-12/popen-gw0/case0")
    venv = {"[VENV]": Path("/tmp/ci/.tox/py")}
    assert _cut_paths('s "/tmp/…', {"[ROOT]": root}, venv) == 's "[ROOT]…'
    assert _cut_paths('s "/tmp/ci/.t…', {"[ROOT]": root}, venv) == 's "[VENV]…'
