"""The recorder: every layer writes to one transcript per instance, redacted by one redactor.

Against the fake binaries (tests/fakes, tests/peers): the mechanics, never contenox.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import Instance, Script, open_acp, open_terminal, probes, start_contenox, wait_until
from harness.recorder import recorded_probe

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"
AGENT = Path(__file__).parent / "peers" / "fake_agent.py"
ID = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def instance(tmp_path: Path) -> Instance:
    launcher = tmp_path / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    launcher.chmod(0o755)
    inst = Instance.create(tmp_path / "case", binary=launcher, timeout=20)
    yield inst
    inst.close()


def entries(instance: Instance) -> list[dict[str, object]]:
    transcript = instance.recorder.transcript()["transcript"]
    assert isinstance(transcript, list)
    return transcript


def test_a_command_records_argv_exit_stdout_and_notices(instance: Instance) -> None:
    instance.use_script(Script(turns=["one", "two"]))
    instance.contenox("run", "go")
    instance.contenox("nonsense", full_stderr=True)
    log = entries(instance)
    assert log[0] == {"dialog": "scripted", "turns": ["one", "two"]}
    # Setup commands show argv and exit only.
    assert log[1] == {
        "run": "contenox backend add scripted --type scripted-test --script [WORK]/dialog.json",
        "exit": 0,
    }
    assert log[4] == {
        "run": "contenox run go",
        "exit": 0,
        "stdout": "two\n",
        "notices": 'Mission fired at agent "run" under envelope "run".\n'
        "Mission [UUID1] finished: landed\n",
    }
    assert log[5] == {
        "run": "contenox nonsense",
        "exit": 2,
        "stderr": "fake contenox: unknown command ['nonsense']\n",
    }
    assert instance.recorder.demands()["scripted"].summary() == "2 of 2 turns served"


def test_a_background_process_records_its_start_and_its_end(instance: Instance) -> None:
    instance.use_script(Script(turns=["only"]))
    proc = start_contenox(instance, "run", "go")
    proc.wait(timeout=20)
    log = entries(instance)
    assert log[-2] == {"start": "contenox run go"}
    assert log[-1]["ended"] == "contenox run go"
    assert log[-1]["exit"] == 0 and log[-1]["stdout"] == "only\n"
    # Its stderr counts for model demand like a command's.
    assert instance.recorder.demands()["scripted"].served == 1


def test_the_environment_a_case_gives_a_command_is_recorded_with_it(instance: Instance) -> None:
    # A run that lands only because of a variable must say so where a reviewer reads it.
    instance.contenox("version", env={"CONTENOX_DEFAULT_MODEL": "named"})
    proc = start_contenox(instance, "version", env={"CONTENOX_DEFAULT_MODEL": "other"})
    proc.wait(timeout=20)
    log = entries(instance)
    assert log[0]["run"] == "contenox version"
    assert log[0]["env"] == {"CONTENOX_DEFAULT_MODEL": "named"}
    assert log[1] == {"start": "contenox version", "env": {"CONTENOX_DEFAULT_MODEL": "other"}}
    # The hermetic base environment is the harness's, not the case's: never recorded.
    instance.contenox("version")
    assert "env" not in entries(instance)[-1]


def test_beams_token_counter_is_left_out_of_a_recorded_screen(instance: Instance) -> None:
    # It appears a moment after the first reply, or not before the screen is read.
    status = "| contenox  beam-1a2b3c4d  0/131072 (0%)  probe-model - scripted-test"
    instance.recorder.screen(["contenox", "beam"], "exit 0", status)
    assert entries(instance)[-1]["screen"] == (
        "| contenox  beam-[BEAM1]  probe-model - scripted-test"
    )


def test_a_terminal_records_the_screen_at_each_checkpoint_and_at_exit(instance: Instance) -> None:
    term = open_terminal(
        instance, program=["sh", "-c", "echo ready; read x; echo got $x"], rows=5, cols=20
    )
    term.wait_for("ready", timeout=10)
    term.send_line("hi")
    term.wait_for("got hi", timeout=10)
    assert term.wait_exit(timeout=10) == 0
    screens = [(e["at"], e["screen"]) for e in entries(instance)]
    assert screens == [
        ("showing 'ready'", "ready"),
        ("showing 'got hi'", "ready\ngot hi"),
        ("exit 0", "ready\ngot hi"),
    ]


def test_an_acp_prompt_is_summarised_for_a_reader(tmp_path: Path) -> None:
    instance = Instance.create(tmp_path / "case", binary=Path(sys.executable))
    fake = instance.work / "fake_agent.py"
    fake.write_text(AGENT.read_text())
    with open_acp(instance, subcommand=str(fake), permission="deny", timeout=10) as acp:
        acp.prompt("hello")
        acp.prompt("write out.txt")
    log = entries(instance)
    assert log[0] == {"start": "contenox [WORK]/fake_agent.py"}
    assert log[1]["acp_prompt"] == "hello"
    assert log[1]["stop_reason"] == "end_turn"
    assert "requests" not in log[1]
    write = log[2]
    assert write["acp_prompt"] == "write out.txt"
    assert write["requests"] == [
        {"method": "session/request_permission", "title": "write_file", "ruling": "deny"}
    ]
    assert log[3]["ended"] == "contenox [WORK]/fake_agent.py" and log[3]["exit"] == 0


@dataclass(frozen=True)
class Widget:
    name: str
    id: str


@recorded_probe
def widgets(instance: Instance) -> list[Widget]:
    result = instance.must("run", "go")
    return [Widget(name=result.stdout.strip(), id=ID)]


def test_a_probe_records_its_typed_value_and_not_its_commands(instance: Instance) -> None:
    instance.use_script(Script(turns=["gear"]))
    widgets(instance)
    log = entries(instance)
    assert log[-1] == {"probe": "widgets", "value": [{"name": "gear", "id": "[UUID1]"}]}
    assert not any(e.get("run") == "contenox run go" for e in log)
    # Every public probe of harness.probes is recorded this way.
    assert hasattr(probes.missions, "__wrapped__") and hasattr(probes.approve, "__wrapped__")


def test_polling_is_not_recorded(instance: Instance) -> None:
    calls = []

    def ready() -> bool:
        calls.append(instance.contenox("version"))
        return len(calls) == 3

    wait_until(ready, timeout=20, interval=0.01)
    assert entries(instance) == []


def test_one_redactor_numbers_an_id_the_same_in_every_layer(instance: Instance) -> None:
    other = "99999999-8888-7777-6666-555555555555"
    instance.use_script(Script(turns=["one"]))
    instance.run(["echo", other])
    proc = start_contenox(instance, "run", "go")
    proc.wait(timeout=20)
    instance.run(["echo", ID])
    widgets(instance)
    log = entries(instance)
    text = str(log)
    assert "[UUID1]" in text and "[UUID2]" in text and "[UUID3]" not in text
    assert ID not in text and other not in text
    # The same id is the same placeholder in a background run, a command and a probe.
    assert "Mission [UUID2] finished" in str(log[-3]["notices"])
    assert log[-2]["stdout"] == "[UUID2]\n"
    assert log[-1]["value"] == [{"name": "one", "id": "[UUID2]"}]
    # A test can name a captured value instead.
    instance.recorder.name(ID, "[MISSION]")
    text = str(entries(instance))
    assert "[MISSION]" in text and "[UUID2]" not in text


def test_the_instance_repr_is_short(instance: Instance) -> None:
    assert repr(instance) == "<Instance case>"


def test_the_opt_out_marker_needs_a_reason(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_area="""
        import pytest

        @pytest.mark.no_transcript
        def test_a_race():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:randomly")
    assert result.ret != 0
    result.stderr.fnmatch_lines(["*no_transcript needs a reason*"])


def test_opted_out_tests_are_listed_in_the_summary(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_area="""
        import pytest

        @pytest.fixture
        def transcripts():
            return True

        @pytest.mark.no_transcript(reason="a race tried twelve times")
        def test_a_race(transcripts):
            pass
        """
    )
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*e2e tests that leave no transcript*", "*test_a_race", "*a race tried twelve times"]
    )


def test_the_head_reports_the_demand_the_check_computed(instance: Instance) -> None:
    # chat logs no operation lines: the check counts what the captured state shows,
    # and the head must say that count, not re-count the logs alone.
    from harness.case import check_demand, transcript_head

    instance.use_script(Script(turns=["one", "two"]))
    instance.contenox("run", "go")
    demands = check_demand(instance)
    assert instance.recorder.checked_demands is demands
    assert transcript_head(instance)["model_demand"] == {"scripted": "2 of 2 turns served"}
    served_once = {"scripted": dataclasses.replace(demands["scripted"], served=1)}
    instance.recorder.checked_demands = served_once
    assert transcript_head(instance)["model_demand"] == {"scripted": "1 of 2 turns served"}


# A program that prints what contenox prints around its paths: a message that
# names HOME, word-wrapped at a width (beam wraps its answers so), and a column
# padded to the longest path. Where it wraps and how far it pads depend on how
# long the path is, not on what it says.
_WRAPPING = """
import os, sys, textwrap
if sys.argv[1:2] and sys.argv[1].endswith(".py"):
    os.execv(sys.executable, [sys.executable, *sys.argv[1:]])
home, cwd = os.environ["HOME"], os.getcwd()
text = f"Stored in {home}/.contenox/relay.json — /unpair removes it, cwd {cwd} too."
print(textwrap.fill(text, 56))
width = max(len(home), len(cwd))
print(f"{home:<{width}}  home\\n{cwd:<{width}}  work")
print(textwrap.fill(text, 48), file=sys.stderr)
"""


@recorded_probe
def said(instance: Instance) -> dict[str, str]:
    return {"stdout": instance.must("say").stdout, "home": str(instance.home)}


def _every_layer(origin: Path, program: Path, *, fixed_length: bool) -> dict[str, object]:
    inst = Instance.create(origin, binary=program, timeout=20, fixed_length=fixed_length)
    try:
        inst.contenox("say", full_stderr=True)
        start_contenox(inst, "say").wait(timeout=20)
        term = open_terminal(inst, "say", rows=12, cols=60)
        assert term.wait_exit(timeout=20) == 0
        said(inst)
        fake = inst.work / "fake_agent.py"
        fake.write_text(AGENT.read_text())
        with open_acp(inst, subcommand=str(fake), timeout=20) as acp:
            acp.prompt("run " + json.dumps([str(program), "say"]))
        assert inst.close() == []
        return inst.recorder.transcript()
    finally:
        inst.remove()


def test_every_layer_records_the_same_transcript_whatever_the_roots_length(
    tmp_path: Path,
) -> None:
    # The suite's instances: --basetemp 1 and 80 characters longer, the same text in
    # every layer (command, background, pty screen, probe, ACP), wraps and padding too.
    program = tmp_path / "contenox"
    program.write_text(f"#!{sys.executable}\n{_WRAPPING}")
    program.chmod(0o755)
    roots = [tmp_path / "a", tmp_path / "bb", tmp_path / ("c" * 80)]
    transcripts = [_every_layer(root, program, fixed_length=True) for root in roots]
    layers = {next(iter(e)) for e in transcripts[0]["transcript"]}  # type: ignore[attr-defined]
    assert {"run", "start", "ended", "terminal", "probe", "acp_prompt"} <= layers
    assert "[HOME]" in str(transcripts[0]) and "Stored in" in str(transcripts[0])
    assert transcripts[1] == transcripts[0]
    assert transcripts[2] == transcripts[0]
    # What the fixed length buys: the same roots given as they are wrap elsewhere.
    given = [_every_layer(root, program, fixed_length=False) for root in roots[::2]]
    assert given[0] != given[1]


def test_a_fixed_root_is_as_long_whatever_it_is_made_for_and_is_reaped_once_its_origin_goes(
    tmp_path: Path,
) -> None:
    from harness.instance import fixed_root

    base = tmp_path / "base"
    base.mkdir()
    short, long = tmp_path / "o", tmp_path / ("o" * 90)
    a, b = fixed_root(short, base), fixed_root(long, base)
    assert len(str(a)) == len(str(b)) and a != b
    assert (short / "scratch").resolve() == a and (long / "scratch").resolve() == b
    # A run killed before it removed its roots: the next run (a new process) reaps
    # the roots whose origin pytest has since removed, and only those.
    import harness.instance as module

    shutil.rmtree(long)
    module._reaped.discard(base)
    c = fixed_root(tmp_path / "p", base)
    assert a.is_dir() and c.is_dir() and not b.exists()
    assert sorted(p.name for p in base.iterdir()) == sorted(
        [a.name, a.name + ".origin", c.name, c.name + ".origin"]
    )


def test_the_suites_instance_lives_at_a_fixed_length_root_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    inst = Instance.create(tmp_path / "case", binary=Path("x"), fixed_length=True)
    assert len(str(inst.root)) == len("/tmp/cxe_") + 8 and inst.home.is_dir()
    assert inst.origin == (tmp_path / "case").resolve()
    assert "[ROOT]" in inst.recorder.redactor()(f"{inst.root}")
    inst.remove()
    assert not inst.root.exists() and not (tmp_path / "case" / "scratch").exists()
    assert not Path(f"{inst.root}.origin").exists()
