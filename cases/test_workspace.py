"""Workspace authority (contenox-cli.md): one instance serves one workspace, fixed at launch.

What a `run` unit can read says which directory it was given; what `serve`
prints on startup says which one it serves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import Instance, Script, ToolCall, Turn, defect, mission_finish, mission_report
from harness.probes import captured_requests, captured_units
from harness.process import start_contenox


def _reads(path: str) -> Script:
    """A unit that reads ``path`` with local_fs, reports and lands."""
    return Script(
        turns=[
            Turn(text="Reading.", tool_calls=[ToolCall("read_file", {"path": path})]),
            Turn(tool_calls=[mission_report("result", f"read {path}")]),
            Turn(tool_calls=[mission_finish("landed")]),
            "Done.",
        ]
    )


def _tool_results(instance: Instance) -> list[str]:
    """Every tool result the model was sent, read back through `state show --raw`."""
    seen: list[str] = []
    for request in captured_requests(instance):
        for unit in captured_units(instance, request):
            for message in unit.output_messages:
                if message.role == "tool" and message.content not in seen:
                    seen.append(message.content)
    return seen


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_run_works_in_the_directory_it_was_started_in(instance: Instance) -> None:
    # function: needs a cwd other than the workspace root and the tool results afterwards
    instance.init()
    instance.write("here.txt", "the root copy\n")
    instance.write("sub/here.txt", "the copy in sub\n")
    instance.use_script(_reads("here.txt"))

    instance.must("run", "--policy", "run", "read here.txt", cwd=instance.work / "sub")

    results = _tool_results(instance)
    assert "the copy in sub\n" in results, results
    assert "the root copy\n" not in results, results


@pytest.mark.no_transcript(
    reason="it records the captured state or session of a run whose closing turn after "
    "mission_finish is served only sometimes, so that state differs from run to run"
)
def test_a_run_cannot_reach_above_the_directory_it_was_started_in(instance: Instance) -> None:
    # function: needs a cwd other than the workspace root and the tool results afterwards
    instance.init()
    instance.write("here.txt", "the root copy\n")
    (instance.work / "sub").mkdir()
    instance.use_script(_reads("../here.txt"))

    instance.must("run", "--policy", "run", "read ../here.txt", cwd=instance.work / "sub")

    results = _tool_results(instance)
    assert "the root copy\n" not in results, results
    assert any("escapes allowed directory" in r for r in results), results


@defect(
    '`cd .contenox && contenox run --policy run "read workspace.id"` with a scripted '
    '`read_file {"path": "workspace.id"}` exits 0 and the tool result the model is sent '
    '(`state show <id> --raw`) is the file\'s content `{"id":"<uuid>"}`: a run started in a '
    "workspace's `.contenox` serves it as its workspace. Contradicts contenox-cli.md, "
    "Workspace authority: 'The runtime's own control plane (`~/.contenox` and a workspace's "
    "`.contenox` — its config, database, and policies) is never a workspace, on any shape.'"
)
def test_a_workspaces_contenox_directory_is_never_a_workspace(instance: Instance) -> None:
    # function: needs a cwd inside the control plane and the tool results afterwards
    instance.init()
    instance.use_script(_reads("workspace.id"))
    marker = (instance.work / ".contenox" / "workspace.id").read_text(encoding="utf-8")

    control_plane = instance.work / ".contenox"
    instance.contenox("run", "--policy", "run", "read workspace.id", cwd=control_plane)

    results = _tool_results(instance)
    assert not any(marker.strip() in r for r in results), results


@defect(
    '`cd ~/.contenox && contenox run --policy run "read agents/README.md"` with a scripted '
    "`read_file` of `agents/README.md` exits 0 and the model is sent the file's content: a run "
    "started in `~/.contenox` serves it as its workspace (reading `agents.toml` there works "
    "too). Contradicts contenox-cli.md, Workspace authority: 'The runtime's own control plane "
    "(`~/.contenox` and a workspace's `.contenox` …) is never a workspace, on any shape.'"
)
def test_the_home_contenox_directory_is_never_a_workspace(instance: Instance) -> None:
    # function: needs a cwd inside the control plane and the tool results afterwards
    instance.init()
    instance.use_script(_reads("agents/README.md"))
    control_plane = instance.home / ".contenox"
    first_line = (control_plane / "agents" / "README.md").read_text(encoding="utf-8").splitlines()
    assert first_line, "init seeded an empty agents/README.md"

    instance.contenox("run", "--policy", "run", "read the agents readme", cwd=control_plane)

    results = _tool_results(instance)
    assert not any(first_line[0] in r for r in results), results


def _served_workspace(instance: Instance, *args: str) -> str:
    """Start `contenox serve <args>`, read the workspace its banner names, stop it."""
    host = start_contenox(instance, "serve", *args)
    banner = host.wait_for_output("Relay ", stream="stdout", timeout=60)
    host.interrupt()
    host.wait(timeout=60)
    [line] = [x for x in banner.splitlines() if x.strip().startswith("Workspace ")]
    return line.split("Workspace", 1)[1].strip()


def _serving(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=["unused"]))


def test_serve_serves_the_path_it_was_given(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)
    project = instance.work / "api"
    project.mkdir()

    assert Path(_served_workspace(instance, str(project))) == project


def test_serve_with_no_path_serves_the_home_directory(instance: Instance) -> None:
    # function: needs background (serve stays up until interrupted)
    _serving(instance)

    assert Path(_served_workspace(instance)) == instance.home
