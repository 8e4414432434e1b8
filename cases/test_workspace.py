"""Workspace authority (contenox-cli.md): one instance serves one workspace, fixed at launch.

What a `run` unit can read says which directory it was given; what `serve`
prints on startup says which one it serves.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from harness import (
    Case,
    Defect,
    Instance,
    Probe,
    Script,
    ToolCall,
    Turn,
    background,
    mission_finish,
    mission_report,
    probe,
    satisfies,
    signal,
    step,
    wait,
    write,
)
from harness.case import Action
from harness.probes import captured_requests, captured_units


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


def _results(promise: str, check: Callable[[list[str]], bool]) -> Probe:
    return probe("tool results", _tool_results, expect=satisfies(check, promise))


A_RUN_WORKS_WHERE_IT_WAS_STARTED = Case(
    name="a run works in the directory it was started in",
    files={"here.txt": "the root copy\n", "sub/here.txt": "the copy in sub\n"},
    script=_reads("here.txt"),
    steps=[step("run", "--policy", "run", "read here.txt", cwd="work/sub")],
    probes=[
        _results(
            "the copy in sub was read, the root copy was not",
            lambda rs: "the copy in sub\n" in rs and "the root copy\n" not in rs,
        )
    ],
)

A_RUN_CANNOT_REACH_ABOVE_WHERE_IT_STARTED = Case(
    name="a run cannot reach above the directory it was started in",
    files={"here.txt": "the root copy\n"},
    script=_reads("../here.txt"),
    steps=[step("run", "--policy", "run", "read ../here.txt", cwd="work/sub")],
    probes=[
        _results(
            "the root copy was not read: the read escapes the allowed directory",
            lambda rs: (
                "the root copy\n" not in rs and any("escapes allowed directory" in r for r in rs)
            ),
        )
    ],
)


def _marker_read(instance: Instance) -> bool:
    marker = (instance.work / ".contenox" / "workspace.id").read_text(encoding="utf-8").strip()
    return any(marker in r for r in _tool_results(instance))


A_WORKSPACES_CONTENOX_IS_NEVER_A_WORKSPACE = Case(
    name="a workspaces contenox directory is never a workspace",
    script=_reads("workspace.id"),
    steps=[
        step("run", "--policy", "run", "read workspace.id", cwd="work/.contenox", exit_code=None)
    ],
    probes=[probe("the marker reached the model", _marker_read, expect=False)],
    defect=Defect(
        title="a run started in a workspace's .contenox serves it as its workspace",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: run from inside .contenox: the "
            'read_file tool result sent to the model is \'{"id":"931453a8-…"}\\n\', '
            "the workspace.id content Note: I used the dialog as written "
            "(read_file, then a text reply). My run ended derailed with exit 1, "
            "not 0, because the dialog ran out (the unit wants mission_finish), "
            "but the workspace.id read had already gone to the model. That breaks"
            " contenox-cli.md:142."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            '# dialog: read_file {"path": "workspace.id"}, then a reply\n'
            'cd .contenox && contenox run --policy run "read workspace.id"; echo '
            '"exit $?"   # exit 0\n'
            "contenox state show <request> --raw   # the tool result is "
            '{"id":"<uuid>"}'
        ),
        promised='reference/contenox-cli.md:142 "is never a workspace, on any shape"',
        observed="the file is read and sent to the model",
    ),
)


def _readme_read(instance: Instance) -> bool:
    readme = instance.home / ".contenox" / "agents" / "README.md"
    lines = readme.read_text(encoding="utf-8").splitlines()
    assert lines, "init seeded an empty agents/README.md"
    return any(lines[0] in r for r in _tool_results(instance))


THE_HOME_CONTENOX_IS_NEVER_A_WORKSPACE = Case(
    name="the home contenox directory is never a workspace",
    script=_reads("agents/README.md"),
    steps=[
        step(
            "run", "--policy", "run", "read the agents readme", cwd="home/.contenox", exit_code=None
        )
    ],
    probes=[probe("agents/README.md reached the model", _readme_read, expect=False)],
    defect=Defect(
        title="a run started in ~/.contenox serves it as its workspace",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, init, scripted default. Dialog: "
            "read_file{path:'agents/README.md'}, read_file{path:'agents.toml'}, "
            "mission_report, mission_finish landed, text. `cd ~/.contenox && contenox run "
            '--policy run --timeout 90s "read agents/README.md"` exited 0 (\'Mission … '
            "finished: landed'). `state show <req> --raw` has the read_file tool result '# "
            "Agents\\n\\nEvery `.md` file here is one agent. The format is Markdown with a "
            "YAML\\nfrontmatter header…', which is the content of "
            "~/.contenox/agents/README.md, sent back to the model. Note: "
            "contenox-cli.md:142 says the runtime's control plane (~/.contenox) is never a "
            "workspace, on any shape, with no setting to turn this off. Started inside "
            "~/.contenox, run serves it as the workspace and reads its files. I did not "
            "confirm the agents.toml read: the captured ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            '# dialog: read_file {"path": "agents/README.md"}, then a reply\n'
            'cd ~/.contenox && contenox run --policy run "read agents/README.md"; '
            'echo "exit $?"   # exit 0\n'
            "contenox state show <request> --raw   # the tool result is the file's "
            "content (agents.toml reads too)"
        ),
        promised='reference/contenox-cli.md:142 "is never a workspace, on any shape"',
        observed="the file is read and sent to the model",
    ),
)


def _serve_names_workspace(*args: str, workspace: str) -> list[Action]:
    """Start `contenox serve <args>`, stop it at its ready banner: it names ``workspace``."""
    return [
        background("serve", "serve", *args, ready="Relay ", ready_stream="stdout", timeout=60),
        signal("serve"),
        wait(
            "serve",
            exit_code=None,
            timeout=60,
            stdout_has=[re.compile(rf"^ *Workspace +{workspace} *$", re.M)],
        ),
    ]


# serve stays up until interrupted; its dialog is registered, never asked for.
SERVE_SERVES_THE_PATH_GIVEN = Case(
    name="serve serves the path it was given",
    script=Script(turns=["unused"]),
    steps=[
        write("api/README.md", "the api project\n"),
        *_serve_names_workspace("{work}/api", workspace="{work}/api"),
    ],
)

SERVE_WITH_NO_PATH_SERVES_THE_HOME = Case(
    name="serve with no path serves the home directory",
    script=Script(turns=["unused"]),
    steps=_serve_names_workspace(workspace="{home}"),
)
