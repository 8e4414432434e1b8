"""Which workspace a session is filed under, and what `session list` shows from where.

contenox-cli.md: `session list` lists "this workspace's sessions"; `list` and
`show` "default to the active scope", and `session list --all` shows every
session with the WORKSPACE it was filed under. The workspace is the nearest
directory holding `.contenox/` (its id in `.contenox/workspace.id`, which
`init` writes). A `serve` host files nothing offline: a session on a host is
opened by the app through the relay.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from dialogs import WORKED_RUN
from harness import (
    Case,
    Instance,
    Script,
    defect,
    open_terminal,
    probe,
    probes,
    prompt,
    route,
    step,
    write,
)

COMPOSER = "type / for commands"


def _workspace_id(folder: Path) -> str:
    """The id `init` wrote for the workspace at ``folder`` (what `--all` prints as WORKSPACE)."""
    marker = folder / ".contenox" / "workspace.id"
    return str(json.loads(marker.read_text(encoding="utf-8"))["id"])


def _listed(instance: Instance, cwd: Path) -> list[str]:
    """The names `session list` shows when run in ``cwd``."""
    result = instance.must("session", "list", cwd=cwd)
    return [s.name for s in probes.parse_sessions(result.stdout)]


def test_a_chat_session_is_listed_from_its_workspace_and_below_it_only(instance: Instance) -> None:
    # function: `session list` from four directories, which a step (always in the
    # workspace) cannot run in
    instance.init()
    instance.use_script(Script(turns=["Hi from chat."]))
    other = instance.root / "other"
    outside = instance.root / "outside"
    for folder in (instance.work / "sub", other, outside):
        folder.mkdir()
    instance.must("init", cwd=other)
    instance.must("session", "new", "mine")
    instance.must("chat", "hello")

    assert _listed(instance, instance.work) == ["mine"]
    assert _listed(instance, instance.work / "sub") == ["mine"]
    assert _listed(instance, other) == []
    assert _listed(instance, outside) == []
    [record] = probes.session_records(instance)
    assert record.workspace == _workspace_id(instance.work), record


def test_a_run_files_its_session_under_the_workspace_it_started_in(instance: Instance) -> None:
    # function: reads `.contenox/workspace.id` to name the workspace `--all` must print
    instance.init()
    instance.use_script(WORKED_RUN)

    instance.must("run", "--policy", "run", "report what you know")

    filed = [r.workspace for r in probes.session_records(instance)]
    assert filed == [_workspace_id(instance.work)], filed


@defect(
    "beam files its session outside the workspace it was started in: after `contenox init` "
    "in the workspace and one prompt in `beam --plain` there, `session list --all` prints the "
    "beam-<uuid> session under WORKSPACE 00000000-0000-0000-0000-000000000002 while "
    "`.contenox/workspace.id` (under which `run` and `chat` file theirs) holds another id, and "
    "`session list` in the workspace does not show it (v1.0.0, 2026-11-30). Contradicts "
    "contenox-cli.md: Workspace authority, '`contenox beam`, `contenox run` — the directory "
    "you started it in', and `session list` '# list this workspace's sessions'."
)
def test_beam_files_its_session_under_the_workspace_it_started_in(instance: Instance) -> None:
    # function: a terminal, then `.contenox/workspace.id` and `--all` read back
    instance.init()
    instance.use_script(Script(turns=[route(), "Hello from beam."]))
    term = open_terminal(instance, "beam", "--plain")
    term.wait_for(COMPOSER, timeout=30)
    term.send_line("say hello")
    term.wait_for("Hello from beam.", timeout=60)
    term.send_line("/quit")
    assert term.wait_exit(timeout=30) == 0

    [record] = probes.session_records(instance)
    assert record.workspace == _workspace_id(instance.work), record
    assert _listed(instance, instance.work) == [record.name]


def _other_workspace(instance: Instance) -> Path:
    other = instance.root / "other"
    other.mkdir(exist_ok=True)
    instance.must("init", cwd=other)
    return other


# function: a session made in one workspace, read from another directory
def test_session_show_by_id_opens_a_session_of_another_workspace(instance: Instance) -> None:
    instance.init()
    instance.use_script(Script(turns=["Hi from chat."]))
    instance.must("session", "new", "mine")
    instance.must("chat", "hello")
    [record] = probes.session_records(instance)
    other = _other_workspace(instance)

    by_id = instance.must("session", "show", record.id, cwd=other)
    by_name = instance.contenox("session", "show", "mine", cwd=other)

    assert "Hi from chat." in by_id.stdout, by_id
    assert "Hi from chat." not in by_name.stdout, by_name


# function: sessions in two workspaces, filtered from a third directory
def test_session_list_workspace_and_workspaces_read_the_whole_database(
    instance: Instance,
) -> None:
    instance.init()
    other = _other_workspace(instance)
    instance.must("session", "new", "alpha")
    instance.must("session", "new", "beta", cwd=other)
    here, there = _workspace_id(instance.work), _workspace_id(other)

    listed = instance.must("session", "list", "--workspace", there).stdout
    # `session workspaces` orders its rows by workspace id, which is random: recorded by name.
    with instance.recorder.probing():
        counts = instance.must("session", "workspaces", cwd=instance.root).stdout
    rows = sorted(counts.splitlines()[1:], key=lambda row: row.split()[1:])
    instance.recorder.note(f"session workspaces rows, by namespace: {rows}")

    assert "beta" in listed and "alpha" not in listed, listed
    assert here in counts and there in counts, counts


SESSION_SWITCH_MAKES_ANOTHER_SESSION_ACTIVE = Case(
    name="session switch makes the named session the active one",
    steps=[
        step("session", "new", "first"),
        step("session", "new", "second"),
        step("session", "switch", "first"),
        step("session", "list", stdout_has=[re.compile(r"(?m)^\* first")]),
        step("session", "list", stdout_has=[re.compile(r"(?m)^  second")]),
    ],
)

SESSION_DELETE_REMOVES_THE_SESSION = Case(
    name="session delete removes the session from the list",
    steps=[
        step("session", "new", "keep"),
        step("session", "new", "drop"),
        step("session", "delete", "drop"),
        step("session", "list", stdout_has=["keep"], stdout_lacks=["drop"]),
    ],
)

SESSION_SHOW_HEAD_PRINTS_ONLY_THE_FIRST_MESSAGES = Case(
    name="session show head prints only the first messages",
    script=Script(turns=["the answer"]),
    steps=[
        step("session", "new", "talk"),
        step("chat", "the question"),
        step(
            "session",
            "show",
            "--head",
            "1",
            stdout_has=["the question"],
            stdout_lacks=["the answer"],
        ),
    ],
)

SESSION_SHOW_NAME_TAIL_TAILS_A_NON_ACTIVE_SESSION = Case(
    name="session show with a name and tail tails a session that is not the active one",
    script=Script(turns=["the answer"]),
    steps=[
        step("session", "new", "earlier"),
        step("chat", "the question"),
        step("session", "new", "later"),
        step(
            "session",
            "show",
            "earlier",
            "--tail",
            "1",
            stdout_has=["the answer"],
            stdout_lacks=["the question"],
        ),
    ],
)

SESSION_FORK_COPIES_THE_ACTIVE_SESSION = Case(
    name="session fork copies the active session into a new active one",
    script=Script(turns=["the answer"]),
    steps=[
        step("session", "new", "trunk"),
        step("chat", "a question"),
        step("session", "fork", "branch"),
        step("session", "list", stdout_has=[re.compile(r"(?m)^\* branch"), "trunk"]),
        step("session", "show", stdout_has=["a question", "the answer"]),
    ],
)


# ------------------------------------------------------------------ w44: an editor's session

EDITOR_TURN = Script(turns=[route(), "Hi from the editor."])
TEAM = "11111111-2222-4333-8444-555555555555"


def _editor_workspaces(instance: Instance) -> list[str]:
    """The WORKSPACE `session list --all` files each editor session under."""
    return [r.workspace for r in probes.session_records(instance) if r.identity == "acp-client"]


ACP_WORKSPACE_ID_FILES_NEW_SESSIONS_UNDER_IT = Case(
    name="acp workspace id files a new editor session under the workspace named",
    script=EDITOR_TURN,
    steps=[
        prompt("hello", text_has=["Hi from the editor."], acp_args=["--workspace-id", "team-ws"]),
        step("session", "list", "--workspace", "team-ws", stdout_has=["contenoxe2e-"]),
    ],
    probes=[probe("editor sessions filed under", _editor_workspaces, expect=["team-ws"])],
)

ACP_DEFAULTS_TO_THE_WORKSPACE_ID_IN_THE_CONTENOX_HOME = Case(
    name="acp without workspace id files a new editor session under the id in the contenox home",
    script=EDITOR_TURN,
    steps=[
        write("workspace.id", json.dumps({"id": TEAM}), home=True),
        prompt("hello", text_has=["Hi from the editor."]),
    ],
    probes=[probe("editor sessions filed under", _editor_workspaces, expect=[TEAM])],
)


def _filed_where_the_cli_files(instance: Instance) -> list[bool]:
    """Per editor session: is it filed under the workspace `session new` uses in the same cwd?"""
    cli = _workspace_id(instance.work)
    return [ws == cli for ws in _editor_workspaces(instance)]


AN_EDITOR_SESSION_IS_FILED_UNDER_THE_PROJECT_THE_CLI_USES = Case(
    name="an editor session opened in a project is filed under the workspace the cli uses there",
    script=EDITOR_TURN,
    steps=[prompt("hello", text_has=["Hi from the editor."])],
    probes=[probe("filed where the CLI files", _filed_where_the_cli_files, expect=[True])],
    defect=(
        "an ACP session opened in an initialised project (session/new cwd = the workspace, "
        "`.contenox/workspace.id` there) is filed under WORKSPACE "
        "00000000-0000-0000-0000-000000000002 in `session list --all` (or under the id of "
        "`~/.contenox/workspace.id` when that file exists), not under the project's id that "
        "`session new`/`chat`/`run` in the same directory use, and `session list` there does not "
        "show it (v1.0.0, 2026-12-01). Contradicts contenox-cli.md `contenox init`: the marker "
        "'travels with the directory, so a project means one thing to the CLI and every ACP "
        "session alike', Workspace authority ('`contenox acp` — whatever the editor opened'), "
        "and `--workspace-id`'s '(default: … same as the CLI)'"
    ),
)
