"""Every step type of a Case against the fake contenox (tests/fakes), and each build-time check.

The step types run in pytest subprocesses, as real cases are collected; the
build-time checks run in-process, since they fire before anything spawns.
"""

from __future__ import annotations

import re
import signal as _signal
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harness import (
    Case,
    CaseError,
    Script,
    acp_turn,
    await_ask,
    background,
    edit,
    edit_dialog,
    keys,
    link,
    probe,
    prompt,
    received,
    remove,
    respond,
    screen,
    serve,
    signal,
    step,
    wait,
    write,
)
from harness.case import mcp_arguments

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"


@pytest.fixture
def suite(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> pytest.Pytester:
    launcher = tmp_path / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef transcripts():\n    return True\n")
    return pytester


HEADER = """
import os
import re
import signal as sig
from harness import (Case, Script, Turn, await_ask, background, column, edit, edit_dialog,
    group,
    json_path, keys, probe, prompt, remove, respond, satisfies, screen, signal, step, wait,
    write)
from harness import probes

TWO = Script(turns=["one", "two"])
"""


def run_cases(suite: pytest.Pytester, body: str) -> pytest.RunResult:
    suite.makepyfile(test_steps_cases=HEADER + body)
    return suite.runpytest_subprocess("--snapshot-update", "-p", "no:randomly")


def test_a_command_captures_a_regex_group_and_a_later_step_uses_it(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
CAPTURED = Case(
    name="a capture fills a later step",
    script=TWO,
    steps=[
        step("run", "go", stdout_has=[re.compile(r"^tw")],
             capture={"mission": group(r"Mission (\\S+) finished", stream="notices")}),
        step("show-file", "dialog-{mission}.txt", exit_code="non-zero",
             stderr_has=["dialog-11111111-2222-3333-4444-555555555555.txt"]),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)
    snap = next(suite.path.rglob("test_a_capture_fills_a_later_step.yaml")).read_text()
    assert "[MISSION]" in snap, snap


def test_an_unmet_regex_and_a_zero_exit_where_non_zero_was_expected_are_named(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
WRONG = Case(
    name="wrong expectations fail",
    script=TWO,
    steps=[step("run", "go", exit_code="non-zero", stdout_has=[re.compile(r"thr+ee")])],
)
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*expected a non-zero exit code, got 0*", "*expected stdout to contain /thr+ee/*"]
    )


def test_a_background_run_waits_on_its_ask_and_a_second_approval_is_refused(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
TWICE = Case(
    name="approving twice is refused",
    script=TWO,
    steps=[
        background("run", "run", "go", env={"FAKE_ASK": "1"}),
        await_ask("ask", tool="native-echo.echo", kind="permission"),
        step("approvals", "list", capture={"listed": column("ID")}, stdout_has=["{ask}"]),
        respond("listed", "approve"),
        respond("ask", "approve", exit_code="non-zero", notices_has=["already answered"]),
        wait("run", stdout_has=["verdict: --approve"]),
        probe("pending", probes.approvals, expect=[]),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)
    snap = next(suite.path.rglob("test_approving_twice_is_refused.yaml")).read_text()
    assert "[ASK]" in snap and "ask raised" in snap, snap


def test_a_signal_reaches_a_background_run_and_wait_checks_its_end(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
INTERRUPTED = Case(
    name="an interrupted run ends",
    init=False,
    steps=[
        background("run", "run", "go", env={"FAKE_BLOCK": "1"}, ready="blocking"),
        signal("run", sig.SIGINT),
        wait("run", exit_code=130, notices_has=["interrupted"], timeout=20),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)


def test_a_background_run_can_be_ready_on_stdout(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
ON_STDOUT = Case(
    name="a host is ready on stdout",
    init=False,
    steps=[
        background(
            "run", "run", "go", env={"FAKE_BLOCK": "stdout"}, ready="blocking", ready_stream="stdout"
        ),
        signal("run", sig.SIGINT),
        wait("run", exit_code=130, stdout_has=["blocking until interrupted"], timeout=20),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)


def test_write_and_edit_dialog_change_files_between_steps(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
EDITED = Case(
    name="files change between steps",
    script=TWO,
    serves_all_turns=False,
    steps=[
        write("notes/hello.txt", "hi"),
        step("show-file", "notes/hello.txt", stdout_has=["hi"]),
        edit_dialog(Script(turns=["uno", "dos"])),
        step("run", "go", stdout_has=["dos"]),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)


def test_remove_deletes_a_file_between_steps_and_fails_naming_one_that_is_not_there(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
REMOVED = Case(
    name="a file is removed between steps",
    init=False,
    files={"notes/gone.txt": "bye"},
    home_files={"agents/biller.md": "x"},
    steps=[
        step("show-file", "notes/gone.txt", stdout_has=["bye"]),
        remove("notes/gone.txt"),
        step("show-file", "notes/gone.txt", exit_code="non-zero"),
        remove("agents/biller.md", under="contenox"),
        probe("biller.md is gone",
              lambda i: (i.home / ".contenox/agents/biller.md").exists(), expect=False),
    ],
)

MISSING = Case(
    name="removing a file that is not there fails",
    init=False,
    steps=[remove("never/made.txt")],
)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*remove 'never/made.txt' in the workspace: no such file*"])
    snap = next(suite.path.rglob("test_a_file_is_removed_between_steps.yaml")).read_text()
    assert "removed notes/gone.txt" in snap and "removed ~/.contenox/agents/biller.md" in snap, snap


def test_a_step_runs_in_the_cwd_it_names_and_a_run_is_ready_on_stdout(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
ELSEWHERE = Case(
    name="a step runs elsewhere",
    init=False,
    steps=[
        step("pwd", cwd="tmp/other-project", stdout_has=[re.compile(r"/tmp/other-project$", re.M)]),
        step("pwd", cwd="work/src/deep", stdout_has=["{work}/src/deep"]),
        step("show-file", "{tmp}/nothing-here", exit_code="non-zero"),
        background("beam", "beam", stdin="hi\\n", ready="fake beam", ready_stream="stdout"),
        wait("beam", stdout_has=["Hello from the fake: hi"]),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)
    snap = next(suite.path.rglob("test_a_step_runs_elsewhere.yaml")).read_text()
    assert "in tmp/other-project/" in snap and "[TMP]/other-project" in snap, snap


def test_edit_replaces_and_appends_and_fails_naming_a_regex_that_matches_nothing(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
EDITED = Case(
    name="a file is edited between steps",
    init=False,
    files={"conf.toml": 'allowed = "ls,git"\\n'},
    steps=[
        edit("conf.toml", replace={r'(?m)^allowed = ".*"$': 'allowed = ""'}, append="extra = 1\\n"),
        step("show-file", "conf.toml", stdout_has=['allowed = ""', "extra = 1"],
             stdout_lacks=["ls,git"]),
        edit("new/created.txt", append="made", executable=True),
        step("show-file", "new/created.txt", stdout_has=["made"]),
        probe("created.txt is executable",
              lambda i: os.access(i.work / "new/created.txt", os.X_OK), expect=True),
    ],
)

MISSED = Case(
    name="an edit whose regex matches nothing fails",
    init=False,
    files={"conf.toml": "x = 1\\n"},
    steps=[edit("conf.toml", replace={"nothing-like-this": "y"})],
)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        ["*edit 'conf.toml' in the workspace: 'nothing-like-this' matches*"]
    )


def test_a_json_path_capture_and_a_probe_predicate(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
JSON = Case(
    name="json capture",
    init=False,
    steps=[
        step("doctor", "--json", capture={"backend": json_path("backends.0.name")}),
        step("approvals", "respond", "{backend}", "--approve", exit_code=1,
             notices_has=["no ask scripted"]),
    ],
)
PREDICATE = Case(
    name="a predicate says why",
    init=False,
    steps=[],
    probes=[probe("pending", probes.approvals,
                  expect=satisfies(lambda v: len(v) == 1, "exactly one pending ask"))],
)
ONLY_PROBES = Case(
    name="only probes",
    init=False,
    probes=[probe("pending", probes.approvals, expect=[])],
)
""",
    )
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*probe 'pending': expected exactly one pending ask; got []*"])


def test_a_prompt_goes_over_an_acp_session_with_a_ruling(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
ACP = Case(
    name="prompts over acp",
    init=False,
    steps=[
        prompt("hello", text_has=["Hello"], permission_requests=0),
        prompt("write out.txt", permission="allow", files_written=["out.txt"],
               requests=["session/request_permission", "fs/write_text_file"],
               permission_requests=1),
        prompt("write denied.txt", permission="deny", files_written=[]),
    ],
)
WRONG = Case(
    name="a prompt expectation fails",
    init=False,
    steps=[prompt("hello", stop_reason="cancelled", text_has=["Goodbye"], permission_requests=1)],
)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*expected stop reason 'cancelled', got 'end_turn'*",
            "*expected the agent's text to contain 'Goodbye'*",
            "*expected 1 permission request(s), got 0*",
        ]
    )


def test_screen_and_keys_drive_a_program_under_a_terminal(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
BEAM = Case(
    name="a terminal session",
    init=False,
    steps=[
        screen("type / for commands", args=["beam"], timeout=20),
        keys("hi there"),
        screen("Hello from the fake: hi there", lacks=["Goodbye"], timeout=20),
        keys("/quit"),
        screen(exits=0, timeout=20),
    ],
)
""",
    )
    result.assert_outcomes(passed=1)
    snap = next(suite.path.rglob("test_a_terminal_session.yaml")).read_text()
    assert "Hello from the fake: hi there" in snap, snap


# --------------------------------------------------------------------------- build-time checks

TWO = Script(turns=["one", "two"])


def _case(*steps: object, **kw: object) -> Callable[[], object]:
    return lambda: Case(name="it runs", script=TWO, steps=steps, **kw)  # type: ignore[arg-type]


BAD: list[tuple[str, Callable[[], object], list[str]]] = [
    (
        "placeholder with no capture",
        _case(step("run"), step("mission", "show", "{mission}")),
        ["case 'it runs': steps[1] (step) args", "{mission} refers to no capture"],
    ),
    (
        "placeholder used before its capture",
        _case(
            step("mission", "show", "{ask}"),
            background("r", "run", "go"),
            await_ask("ask"),
            wait("r"),
        ),
        ["steps[0] (step) args", "{ask} refers to no capture"],
    ),
    (
        "placeholder in an expectation",
        _case(step("run", stdout_has=[re.compile(r"mission {mid}")])),
        ["steps[0] (step) stdout_has", "{mid}"],
    ),
    (
        "env value not a string",
        lambda: step("run", env={"N": 3}),
        ["step('run')", "env['N'] must be a string without NUL, got 3"],
    ),
    (
        "expectation not a string",
        lambda: step("run", stdout_has=[3]),
        ["step('run')", "stdout_has[0] must be a string without NUL, got 3"],
    ),
    (
        "exit code a word",
        lambda: step("run", exit_code="failure"),
        ["step('run')", 'exit_code must be a whole number or None (any exit code), or "non-zero"'],
    ),
    (
        "timeout a string",
        lambda: wait("r", timeout="10"),  # type: ignore[arg-type]
        ["Wait timeout must be a number of seconds, got '10'"],
    ),
    (
        "file outside the scratch root",
        _case(step("run"), files={"../escape.txt": "x"}),
        ["case 'it runs'", "files['../escape.txt']", "climbs out of the scratch dir"],
    ),
    (
        "home file absolute",
        _case(step("run"), home_files={"/etc/passwd": "x"}),
        ["case 'it runs'", "home_files['/etc/passwd']", "is absolute"],
    ),
    (
        "write outside the scratch root",
        lambda: write("../../x", "y"),
        ["Write path '../../x' leaves the scratch root"],
    ),
    (
        "permission requests not a count",
        lambda: prompt("hi", permission_requests=-1),
        ["Prompt permission_requests must be a count (0, 1, …), got -1"],
    ),
    (
        "edit that changes nothing",
        lambda: edit("agents.toml", under="contenox"),
        ["Edit append must be given (or replace={regex: text}): it changes nothing"],
    ),
    (
        "edit under an unknown root",
        lambda: edit("x", append="y", under="etc"),
        ["Edit under must be one of ['contenox', 'home', 'work'], got 'etc'"],
    ),
    (
        "wait for nothing started",
        _case(wait("run")),
        ["steps[0] (wait) name", "'run' is no background run started before"],
    ),
    (
        "signal to nothing started",
        _case(signal("run", _signal.SIGINT)),
        ["steps[0] (signal) name", "'run' is no background run"],
    ),
    (
        "background never waited",
        _case(background("run", "run", "go")),
        ["background run 'run' is never waited for", "wait('run'"],
    ),
    (
        "respond without an ask",
        _case(respond("ask", "approve")),
        ["steps[0] (respond) name", "'ask' is no ask captured before"],
    ),
    (
        "respond with two verdicts",
        lambda: respond("ask", "approve", answer="yes"),
        ["Respond answer give answer="],
    ),
    (
        "keys before a screen",
        _case(keys("hi")),
        ["steps[0] (keys) text", "keys() before any screen()"],
    ),
    (
        "screen with nothing to wait for",
        lambda: screen(),
        ["Screen shows give shows="],
    ),
    (
        "prompt with an unknown ruling",
        lambda: prompt("hi", permission="maybe"),
        ["Prompt permission must be allow, deny, defer or cancel"],
    ),
    (
        "edit an unknown dialog",
        _case(edit_dialog(TWO, backend="other")),
        ["steps[0] (edit_dialog) backend", "'other' is not one of ['scripted']"],
    ),
    (
        "a command step among the probes",
        _case(step("run"), probes=[step("mission", "list")]),
        ["case 'it runs'", "probes[0] must be a probe(...) or output_of(...)"],
    ),
    (
        "a cwd outside the scratch root",
        lambda: step("config", "list", cwd="../elsewhere"),
        ["Step cwd '../elsewhere' leaves the scratch root"],
    ),
    (
        "a ready stream that is no stream",
        lambda: background("r", "serve", ready="Relay", ready_stream="notices"),
        ['Background ready_stream must be "stdout" or "stderr"'],
    ),
    (
        "probe that reads nothing",
        lambda: probe("x", "approvals"),  # type: ignore[arg-type]
        ["Probe read must be a function of the instance"],
    ),
    (
        "a capture name that is not an identifier",
        lambda: step("run", capture={"the mission": "ID"}),
        ["Step capture a capture name must be an identifier"],
    ),
    (
        "a server of an unknown kind",
        lambda: serve("rec", "mcp"),  # type: ignore[arg-type]
        [
            "Serve server must be one of ('mcp-stdio', 'mcp-http', 'mcp-sse', 'openapi', "
            "'mcp-oauth', 'mcp-oauth-expiring', 'mcp-oauth-deny'), got 'mcp'"
        ],
    ),
    (
        "a server name that is not an identifier",
        lambda: serve("my-rec", "mcp-stdio"),
        ["Serve name must be an identifier", "'my-rec'"],
    ),
    (
        "tls for an MCP server",
        lambda: serve("rec", "mcp-http", tls=True),
        ["Serve tls is for an openapi service only, not 'mcp-http'"],
    ),
    (
        "a url of a stdio server",
        _case(serve("rec", "mcp-stdio"), step("mcp", "add", "rec", "--url", "{rec_url}")),
        ["steps[1] (step) args", "{rec_url} refers to no capture", "rec_args, rec_command"],
    ),
    (
        "a server started twice under one name",
        _case(serve("svc", "openapi"), serve("svc", "openapi")),
        ["steps[1] (serve) name", "'svc' is already a server's name"],
    ),
    (
        "a record read before its server started",
        _case(received("rec", "note calls", mcp_arguments("note")), serve("rec", "mcp-stdio")),
        ["steps[0] (received) server", "'rec' is no server a step before it started"],
    ),
    (
        "a turn read before any prompt",
        _case(acp_turn("cards", lambda turn: turn.update_kinds)),
        ["steps[0] (acp_turn) read", "acp_turn() before any prompt()"],
    ),
    (
        "a link placed outside the scratch root",
        lambda: link("../escape", "{home}"),
        ["Link path '../escape' leaves the scratch root"],
    ),
    (
        "a link with nowhere to point",
        lambda: link("out", ""),
        ["Link target must be a path, got ''"],
    ),
    (
        "an agent environment value that is not a string",
        lambda: prompt("hi", acp_env={"PATH": 3}),
        ["Prompt acp_env['PATH'] must be a string, got 3"],
    ),
    (
        "a probe capture that is not an identifier",
        lambda: probe("marker", lambda i: "x", capture="the marker"),
        ["Probe capture a capture name must be an identifier, got 'the marker'"],
    ),
    (
        "a turn reading that claims a capture",
        lambda: acp_turn("asks", len).__class__(name="asks", read=len, capture="n"),
        ["AcpTurn capture is for probe(...) only"],
    ),
    (
        "a file removed outside the scratch root",
        lambda: remove("../../etc/hosts", under="home"),
        ["Remove path '../../etc/hosts' leaves the scratch root"],
    ),
    (
        "client capabilities that are not a mapping",
        lambda: prompt("hi", acp_capabilities=["terminal"]),  # type: ignore[arg-type]
        ["Prompt acp_capabilities must be a mapping or None"],
    ),
    (
        "a record read with no reader",
        lambda: received("rec", "note calls", "note"),  # type: ignore[arg-type]
        ["Received read must be a function of the server's records"],
    ),
]


@pytest.mark.parametrize(("build", "names"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_a_bad_step_or_case_is_refused_when_built_naming_the_step_and_field(
    build: Callable[[], object], names: list[str]
) -> None:
    with pytest.raises(CaseError) as info:
        build()
    for name in names:
        assert name in str(info.value), str(info.value)


def test_a_case_of_probes_only_is_allowed() -> None:
    case = Case(name="nothing waits", probes=[probe("pending", lambda i: [], expect=[])])
    assert case.steps == ()


def test_a_served_service_is_reached_at_its_url_and_what_it_recorded_is_checked(
    suite: pytest.Pytester,
) -> None:
    result = run_cases(
        suite,
        """
from harness import received, serve

def _paths(service):
    return [r.path for r in service.requests()]

SERVED = Case(
    name="a served service",
    init=False,
    steps=[
        serve("svc", "openapi"),
        step("config", "set", "url", "{svc_url}", stdout_has=[re.compile(r"http://127\\.0\\.0\\.1:\\d+")]),
        received("svc", "paths", _paths, expect=[]),
    ],
)
WRONG = Case(
    name="a record that does not hold",
    init=False,
    steps=[serve("svc", "openapi"), received("svc", "paths", _paths, expect=["/openapi.json"])],
)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "server 'svc', paths: expected ['/openapi.json']; got []" in out, out
    assert "requests received by http://127.0.0.1:" in out, out


def test_acp_turn_reads_the_last_turn_and_link_makes_a_symlink(suite: pytest.Pytester) -> None:
    result = run_cases(
        suite,
        """
from harness import acp_turn, link

def _target(instance):
    return os.readlink(instance.work / "out")

TURN = Case(
    name="the last turn read",
    init=False,
    steps=[
        link("out", "{home}"),
        probe("out points at", _target, expect=satisfies(lambda t: t.endswith("/home"), "home")),
        prompt("write out.txt", permission="allow", acp_env={"E2E_MARK": "{work}"}),
        acp_turn("asks", lambda turn: len(turn.permission_requests), expect=1),
    ],
)
WRONG = Case(
    name="a turn expectation fails",
    init=False,
    steps=[prompt("hello"), acp_turn("asks", lambda turn: len(turn.permission_requests), expect=2)],
)
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "acp_turn 'asks': expected 2; got 0" in out, out


def test_a_probe_capture_is_a_placeholder_later_steps_may_use() -> None:
    case = Case(
        name="kept",
        init=False,
        steps=[
            probe("marker", lambda i: "m-1", capture="marker"),
            step("mission", "show", "{marker}"),
        ],
    )
    assert case.steps[0].defines() == {"marker"}
