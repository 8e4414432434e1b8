"""`contenox init [provider]`: what it seeds and where, the workspace marker, and every variant."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

from harness import Case, Instance, Script, defect, open_acp, route, step

STALE_POLICY = json.dumps({"version": 1, "default_action": "approve", "rules": []})
SHIPPED_CHAIN = re.compile(r"^chain-[a-z]+-[a-z0-9]+\.json$")
# The envelopes the shipped agents.toml declares ([envelopes.<name>]).
ENVELOPES = ("acpx", "ask_always", "auto_edit", "default", "oracle", "read_only", "serve", "strict")


def _marker(directory: Path) -> dict[str, str]:
    data = json.loads((directory / ".contenox" / "workspace.id").read_text(encoding="utf-8"))
    assert isinstance(data, dict), data
    return data


def _global(instance: Instance) -> Path:
    return instance.home / ".contenox"


def test_init_writes_the_workspace_marker_with_a_workspace_uuid(instance: Instance) -> None:
    # function: needs the marker file read back
    result = instance.must("init")
    marker = _marker(instance.work)
    assert uuid.UUID(marker["id"]), marker
    assert not (instance.work / ".contenox" / "agents.toml").exists(), result.describe()


def test_init_seeds_agents_toml_agents_and_the_shipped_chains_under_the_home(
    instance: Instance,
) -> None:
    # function: needs the seeded tree listed
    instance.must("init")
    home = _global(instance)
    assert (home / "agents.toml").is_file()
    assert (home / "agents").is_dir() and list((home / "agents").rglob("*.md"))
    system = sorted(p.name for p in (home / "system").glob("*.json"))
    assert "chain-oracle-default.json" in system, system
    assert system and all(SHIPPED_CHAIN.match(n) for n in system), system


def test_init_seeds_no_approval_policy_copy_at_the_top_level(instance: Instance) -> None:
    # function: needs the seeded tree listed
    instance.must("init")
    for where in (_global(instance), instance.work / ".contenox"):
        assert not list(where.glob("hitl-policy-*.json")), sorted(p.name for p in where.iterdir())


RENDERS_ENVELOPES = Case(
    name="init renders every declared envelope into generated and prints each one",
    init=False,
    steps=[
        step(
            "init",
            stdout_has=[f".generated/hitl-policy-{name}.json" for name in ENVELOPES],
        )
    ],
)


def test_an_envelope_added_after_init_is_rendered_by_the_next_run(instance: Instance) -> None:
    # function: needs agents.toml edited between commands
    instance.must("init")
    toml = _global(instance) / "agents.toml"
    toml.write_text(
        toml.read_text(encoding="utf-8") + '\n[envelopes.mine]\nextends = "strict"\n',
        encoding="utf-8",
    )
    rendered = _global(instance) / ".generated" / "hitl-policy-mine.json"
    assert not rendered.exists()
    # No model is configured, so the run itself fails; the render happens first.
    instance.contenox("run", "--policy", "mine", "say hi", timeout=60)
    assert rendered.is_file(), "the new envelope was not rendered by `contenox run`"


def _own_policy_after(instance: Instance, *flags: str) -> str:
    """Write a top-level policy after init, run ``init <flags>``, return the file's text."""
    instance.must("init")
    mine = _global(instance) / "hitl-policy-default.json"
    mine.write_text(STALE_POLICY, encoding="utf-8")
    instance.must("init", *flags)
    return mine.read_text(encoding="utf-8")


def test_a_policy_file_written_at_the_top_level_is_never_rewritten_by_init(
    instance: Instance,
) -> None:
    # function: needs a file placed after init and compared byte for byte
    assert _own_policy_after(instance) == STALE_POLICY
    assert _own_policy_after(instance, "--update") == STALE_POLICY


@defect(
    "`contenox init` then writing ~/.contenox/hitl-policy-default.json by hand, then "
    "`contenox init --force` prints 'Refreshed …/hitl-policy-default.json' and replaces the "
    "file with this build's policy; contenox-cli.md `contenox init`: 'A "
    "`hitl-policy-<name>.json` you write at the top level of `.contenox/` or `~/.contenox/` "
    "shadows the render and is never rewritten.' (guide/chains/naming.md lists top-level "
    "policy copies among what `init --force` never touches)"
)
def test_a_policy_file_written_at_the_top_level_is_not_rewritten_by_init_force(
    instance: Instance,
) -> None:
    # function: needs a file placed after init and compared byte for byte
    assert _own_policy_after(instance, "--force") == STALE_POLICY


def test_a_second_init_keeps_the_marker_and_an_edited_seeded_file(instance: Instance) -> None:
    # function: needs a seeded file edited between two inits
    instance.must("init")
    first = _marker(instance.work)
    edited = _global(instance) / "system" / "chain-fim-default.json"
    edited.write_text('{"mine": true}\n', encoding="utf-8")
    again = instance.must("init")
    assert _marker(instance.work) == first
    assert edited.read_text(encoding="utf-8") == '{"mine": true}\n'
    assert "chain-fim-default.json already exists" in again.stdout, again.describe()


def test_init_force_overwrites_an_edited_seeded_file(instance: Instance) -> None:
    # function: needs a seeded file edited between two inits
    instance.must("init")
    edited = _global(instance) / "system" / "chain-fim-default.json"
    edited.write_text('{"mine": true}\n', encoding="utf-8")
    instance.must("init", "--force")
    assert json.loads(edited.read_text(encoding="utf-8")).get("tasks"), edited.read_text()


def test_init_update_skips_an_edited_seeded_file_and_says_so(instance: Instance) -> None:
    # function: needs a seeded file edited between two inits
    instance.must("init")
    edited = _global(instance) / "system" / "chain-fim-default.json"
    edited.write_text('{"mine": true}\n', encoding="utf-8")
    result = instance.must("init", "--update")
    assert edited.read_text(encoding="utf-8") == '{"mine": true}\n'
    assert "chain-fim-default.json (has been modified)" in result.stdout, result.describe()


UPDATE_UNCHANGED = Case(
    name="init update does not call a file init just seeded modified",
    init=False,
    steps=[step("init"), step("init", "--update", stdout_lacks=["has been modified"])],
    defect=(
        "on a fresh home, `contenox init` then `contenox init --update` prints "
        "'Skipped …/system/chain-compact-default.json (has been modified)' (and the same for "
        "chain-fim, chain-planner, chain-oracle) though nobody touched them; contenox-cli.md "
        "`contenox init`: '`--update` | Refresh unchanged default files to the latest embedded "
        "versions'"
    ),
)


def test_init_update_renames_pre_v0_38_chain_names_byte_for_byte_in_both_places(
    instance: Instance,
) -> None:
    # function: needs legacy files placed and their renamed bytes compared
    home_old = _global(instance) / "chain-compact.json"
    work_old = instance.work / ".contenox" / "default-acp-chain.json"
    for path, text in ((home_old, '{"id":"old-compact","tasks":[]}\n'), (work_old, "ws\n")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    instance.must("init", "--update")
    assert not home_old.exists() and not work_old.exists()
    home_new = _global(instance) / "chain-compact-default.json"
    work_new = instance.work / ".contenox" / "chain-agent-acp.json"
    assert home_new.read_text(encoding="utf-8") == '{"id":"old-compact","tasks":[]}\n'
    assert work_new.read_text(encoding="utf-8") == "ws\n"


def test_init_local_seeds_the_workspace_instead_of_the_home(instance: Instance) -> None:
    # function: needs both trees listed
    instance.must("init", "--local")
    ws = instance.work / ".contenox"
    assert (ws / "agents.toml").is_file() and (ws / "agents").is_dir()
    assert (ws / "chain-oracle-default.json").is_file()
    home = _global(instance)
    assert not (home / "agents.toml").exists()
    assert not list(home.rglob("chain-*.json")), sorted(map(str, home.rglob("*")))


def test_init_notes_a_workspace_copy_that_overrides_a_global_one_by_name(
    instance: Instance,
) -> None:
    # function: needs a workspace copy placed after the first init
    instance.must("init")
    shipped = _global(instance) / "system" / "chain-compact-default.json"
    (instance.work / ".contenox" / shipped.name).write_bytes(shipped.read_bytes())
    again = instance.must("init")
    assert f".contenox/{shipped.name} shadows this file" in again.stdout, again.describe()


def test_init_in_a_subdirectory_reuses_the_ancestors_workspace(instance: Instance) -> None:
    # function: needs init run in a nested cwd
    instance.must("init")
    first = _marker(instance.work)
    nested = instance.work / "pkg" / "deeper"
    nested.mkdir(parents=True)
    instance.must("init", cwd=nested)
    assert not (nested / ".contenox").exists()
    assert not (instance.work / "pkg" / ".contenox").exists()
    assert _marker(instance.work) == first


def test_init_project_marks_a_fresh_workspace_named_after_its_directory(
    instance: Instance,
) -> None:
    # function: needs init run in a nested cwd and both markers read
    instance.must("init")
    outer = _marker(instance.work)
    nested = instance.work / "api-service"
    nested.mkdir()
    result = instance.must("init", "--project", cwd=nested)
    inner = _marker(nested)
    assert inner["id"] != outer["id"], (inner, outer)
    assert inner.get("name") == "api-service", inner
    assert 'Marked project "api-service"' in result.stdout, result.describe()


def test_init_project_name_gives_the_marker_a_friendly_name(instance: Instance) -> None:
    # function: needs the marker read back
    instance.must("init", "--project", "--name", "API")
    assert _marker(instance.work).get("name") == "API"


def test_a_project_moved_elsewhere_keeps_its_workspace_id(instance: Instance) -> None:
    # function: needs the project directory moved between commands
    project = instance.work / "proj"
    project.mkdir()
    instance.must("init", "--project", cwd=project)
    first = _marker(project)["id"]
    moved = project.rename(instance.work / "moved")
    instance.must("init", cwd=moved)
    assert _marker(moved)["id"] == first


def test_init_refresh_policies_rewrites_only_copies_already_there(instance: Instance) -> None:
    # function: needs policy files placed after init and compared
    instance.must("init")
    home = _global(instance)
    mine = home / "hitl-policy-default.json"
    mine.write_text(STALE_POLICY, encoding="utf-8")
    rendered = home / ".generated" / "hitl-policy-strict.json"
    rendered.write_text(STALE_POLICY, encoding="utf-8")
    chain = home / "system" / "chain-fim-default.json"
    chain.write_text('{"mine": true}\n', encoding="utf-8")
    result = instance.must("init", "--refresh-policies")
    assert mine.read_text(encoding="utf-8") != STALE_POLICY, result.describe()
    assert json.loads(mine.read_text(encoding="utf-8"))["rules"], "refreshed copy has no rules"
    assert sorted(p.name for p in home.glob("hitl-policy-*.json")) == [mine.name]
    assert rendered.read_text(encoding="utf-8") == STALE_POLICY, "it touched .generated/"
    assert chain.read_text(encoding="utf-8") == '{"mine": true}\n', "it touched a chain"


PROVIDER_PRESETS = [
    Case(
        name=f"init {provider} pre configures the {provider} defaults",
        init=False,
        steps=[
            step("init", provider),
            step("config", "get", "default-provider", stdout_has=[provider]),
        ],
        defect=(
            f"`contenox init {provider}` on a fresh home sets nothing: `contenox config get "
            "default-provider` prints an empty value afterwards, and `config list` shows every "
            "key unset; init only prints the commands to type (`contenox config set "
            f"default-provider {provider}` …); contenox-cli.md `contenox init`: 'You can "
            f"optionally specify a provider to pre-configure defaults.' / 'contenox init "
            f"{provider}  # pre-configure for …'"
        ),
    )
    for provider in ("openai", "gemini")
]


@defect(
    "after `contenox init` (marker {\"id\": <uuid>}) and `contenox session new 'from the cli'`, "
    "an ACP client started in the same directory (session/new cwd = the workspace) gets its "
    "session filed under workspace 00000000-0000-0000-0000-000000000002 (namespace "
    "contenoxe2e), per `contenox session workspaces`; the CLI session is under the marker's "
    "id; contenox-cli.md `contenox init`: 'It travels *with* the directory, so a project means "
    "one thing to the CLI and every ACP session alike.'"
)
def test_the_cli_and_an_acp_session_file_their_sessions_under_the_markers_workspace(
    instance: Instance,
) -> None:
    # function: needs an ACP client beside CLI commands
    instance.must("init")
    workspace = _marker(instance.work)["id"]
    instance.must("session", "new", "from the cli")
    instance.use_script(Script(turns=[route(), "Hello."]))
    with open_acp(instance) as acp:
        acp.prompt("hello")
    listed = instance.must("session", "workspaces").stdout.splitlines()[1:]
    assert [line.split()[0] for line in listed if line.strip()] == [workspace], listed
