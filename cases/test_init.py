"""`contenox init [provider]`: what it seeds and where, the workspace marker, and every variant."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path

from dialogs import workspace_file
from harness import Case, Defect, Instance, Probe, Script, edit, probe, prompt, route, step, write
from harness.case import Action

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


def _holds(promise: str, check: Callable[[Instance], bool]) -> Probe:
    """A probe of the scratch trees that must read True: ``promise`` says what it checks."""
    return probe(promise, check, expect=True)


def _home_text(rel: str, *, expect: object) -> Probe:
    """The text of ``~/.contenox/<rel>``, as the user finds it on disk."""
    return probe(
        f"~/.contenox/{rel}",
        lambda i: (_global(i) / rel).read_text(encoding="utf-8"),
        expect=expect,
    )


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


INIT_WRITES_THE_MARKER = Case(
    name="init writes the workspace marker with a workspace uuid",
    init=False,
    steps=[
        step("init"),
        _holds("the marker's id is a UUID", lambda i: _is_uuid(_marker(i.work)["id"])),
        _holds(
            "no agents.toml in the workspace",
            lambda i: not (i.work / ".contenox" / "agents.toml").exists(),
        ),
    ],
)


def _seeded_under_the_home(instance: Instance) -> dict[str, bool]:
    home = _global(instance)
    system = sorted(p.name for p in (home / "system").glob("*.json"))
    return {
        "agents.toml": (home / "agents.toml").is_file(),
        "agents/*.md": (home / "agents").is_dir() and bool(list((home / "agents").rglob("*.md"))),
        "system/chain-oracle-default.json": "chain-oracle-default.json" in system,
        "system/ holds shipped chains only": bool(system)
        and all(bool(SHIPPED_CHAIN.match(n)) for n in system),
    }


INIT_SEEDS_THE_HOME = Case(
    name="init seeds agents toml agents and the shipped chains under the home",
    init=False,
    steps=[step("init")],
    probes=[
        probe(
            "seeded under ~/.contenox",
            _seeded_under_the_home,
            expect={
                "agents.toml": True,
                "agents/*.md": True,
                "system/chain-oracle-default.json": True,
                "system/ holds shipped chains only": True,
            },
        )
    ],
)

INIT_SEEDS_NO_POLICY_COPY = Case(
    name="init seeds no approval policy copy at the top level",
    init=False,
    steps=[step("init")],
    probes=[
        probe(
            "hitl-policy-*.json at the top of ~/.contenox and .contenox",
            lambda i: [
                p.name
                for where in (_global(i), i.work / ".contenox")
                for p in where.glob("hitl-policy-*.json")
            ],
            expect=[],
        )
    ],
)


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


def _rendered_mine(instance: Instance) -> bool:
    return (_global(instance) / ".generated" / "hitl-policy-mine.json").is_file()


AN_ENVELOPE_ADDED_AFTER_INIT = Case(
    name="an envelope added after init is rendered by the next run",
    init=False,
    steps=[
        step("init"),
        edit("agents.toml", append='\n[envelopes.mine]\nextends = "strict"\n', under="contenox"),
        probe("~/.contenox/.generated/hitl-policy-mine.json exists", _rendered_mine, expect=False),
        # No model is configured, so the run itself fails; the render happens first.
        step("run", "--policy", "mine", "say hi", timeout=60, exit_code=None),
        probe("~/.contenox/.generated/hitl-policy-mine.json exists", _rendered_mine, expect=True),
    ],
)


def _own_policy_after(*flags: str) -> list[Action]:
    """Init, write a top-level policy by hand, run ``init <flags>``: the file is still ours."""
    return [
        step("init"),
        write("hitl-policy-default.json", STALE_POLICY, home=True),
        step("init", *flags),
        _home_text("hitl-policy-default.json", expect=STALE_POLICY),
    ]


A_TOP_LEVEL_POLICY_IS_NEVER_REWRITTEN = Case(
    name="a policy file written at the top level is never rewritten by init",
    init=False,
    steps=[*_own_policy_after(), *_own_policy_after("--update")],
)

A_TOP_LEVEL_POLICY_SURVIVES_INIT_FORCE = Case(
    name="a policy file written at the top level is not rewritten by init force",
    init=False,
    steps=_own_policy_after("--force"),
    defect=Defect(
        title="`init --force` rewrites a policy file written by hand at the top level",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: init --force printed 'Refreshed "
            "…/.contenox/hitl-policy-default.json' and the file I had written "
            "('default_action':'deny', no rules) became this build's policy "
            "($schema … //compute …) Note: Reproduced as written; before my echo "
            "no top-level hitl-policy-default.json existed, so the file was "
            "purely hand-written. guide/chains/naming.md:86 also lists 'top-level"
            " policy copies' under what init --force never touches."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            'echo \'{"version":1,"default_action":"deny","rules":[]}\' > '
            "~/.contenox/hitl-policy-default.json\n"
            "contenox init --force\n"
            "# prints: Refreshed …/hitl-policy-default.json\n"
            "cat ~/.contenox/hitl-policy-default.json   # this build's policy, not "
            "the file written"
        ),
        promised=('reference/contenox-cli.md:319 "shadows the render and is never rewritten"'),
        observed="init --force replaces the hand-written file with this build's policy",
        bears_on=('guide/chains/naming.md:86 "init --force"',),
    ),
)


def _marker_text(instance: Instance) -> str:
    """The workspace marker, as written on disk (kept to compare after a later init)."""
    return (instance.work / ".contenox" / "workspace.id").read_text(encoding="utf-8")


def _marker_kept(before: str) -> Probe:
    return probe(
        "the workspace marker is unchanged",
        lambda i, was: json.loads(_marker_text(i)) == json.loads(was),
        before,
        expect=True,
    )


_READ_THE_MARKER = probe("the workspace marker", _marker_text, capture="marker")

A_SECOND_INIT_KEEPS_WHAT_IS_THERE = Case(
    name="a second init keeps the marker and an edited seeded file",
    init=False,
    steps=[
        step("init"),
        _READ_THE_MARKER,
        write("system/chain-fim-default.json", '{"mine": true}\n', home=True),
        step("init", stdout_has=["chain-fim-default.json already exists"]),
        _marker_kept("{marker}"),
        _home_text("system/chain-fim-default.json", expect='{"mine": true}\n'),
    ],
)


EDITED_FIM_CHAIN = "system/chain-fim-default.json"
EDIT_THE_FIM_CHAIN = write(EDITED_FIM_CHAIN, '{"mine": true}\n', home=True)

INIT_FORCE_OVERWRITES_AN_EDITED_FILE = Case(
    name="init force overwrites an edited seeded file",
    init=False,
    steps=[step("init"), EDIT_THE_FIM_CHAIN, step("init", "--force")],
    probes=[
        _holds(
            f"~/.contenox/{EDITED_FIM_CHAIN} is a chain with tasks again",
            lambda i: bool(
                json.loads((_global(i) / EDITED_FIM_CHAIN).read_text(encoding="utf-8")).get("tasks")
            ),
        )
    ],
)

INIT_UPDATE_SKIPS_AN_EDITED_FILE = Case(
    name="init update skips an edited seeded file and says so",
    init=False,
    steps=[
        step("init"),
        EDIT_THE_FIM_CHAIN,
        step("init", "--update", stdout_has=["chain-fim-default.json (has been modified)"]),
    ],
    probes=[_home_text(EDITED_FIM_CHAIN, expect='{"mine": true}\n')],
)


UPDATE_UNCHANGED = Case(
    name="init update does not call a file init just seeded modified",
    init=False,
    steps=[step("init"), step("init", "--update", stdout_lacks=["has been modified"])],
    defect=Defect(
        title="`init --update` calls files init just seeded 'modified'",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: Skipped …/.contenox/system/chain-"
            "compact-default.json (has been modified) — and chain-fim-default, "
            "chain-planner-default, chain-oracle-default, right after a fresh "
            "init Note: Reproduced exactly as written; nothing added. Nothing in "
            "the docs says freshly seeded files count as modified."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"\n'
            "contenox init\n"
            "contenox init --update\n"
            "# Skipped …/system/chain-compact-default.json (has been modified)   "
            "(and chain-fim, chain-planner, chain-oracle)"
        ),
        promised=(
            'reference/contenox-cli.md:339 "Refresh unchanged default files to the '
            'latest embedded versions"'
        ),
        observed="four untouched seeded chains are skipped as modified",
    ),
)


INIT_UPDATE_RENAMES_LEGACY_CHAINS = Case(
    name="init update renames pre v0 38 chain names byte for byte in both places",
    init=False,
    home_files={"chain-compact.json": '{"id":"old-compact","tasks":[]}\n'},
    files={".contenox/default-acp-chain.json": "ws\n"},
    steps=[step("init", "--update")],
    probes=[
        _holds(
            "the old names are gone",
            lambda i: (
                not (_global(i) / "chain-compact.json").exists()
                and not (i.work / ".contenox" / "default-acp-chain.json").exists()
            ),
        ),
        _home_text("chain-compact-default.json", expect='{"id":"old-compact","tasks":[]}\n'),
        workspace_file(".contenox/chain-agent-acp.json", expect="ws\n"),
    ],
)

INIT_LOCAL_SEEDS_THE_WORKSPACE = Case(
    name="init local seeds the workspace instead of the home",
    init=False,
    steps=[step("init", "--local")],
    probes=[
        _holds(
            "agents.toml, agents/ and the oracle chain in the workspace's .contenox",
            lambda i: (
                (i.work / ".contenox" / "agents.toml").is_file()
                and (i.work / ".contenox" / "agents").is_dir()
                and (i.work / ".contenox" / "chain-oracle-default.json").is_file()
            ),
        ),
        probe(
            "agents.toml and chains under ~/.contenox",
            lambda i: sorted(
                str(p.relative_to(_global(i)))
                for p in [*_global(i).glob("agents.toml"), *_global(i).rglob("chain-*.json")]
            ),
            expect=[],
        ),
    ],
)


def _shipped_compact(instance: Instance) -> str:
    return (_global(instance) / "system" / "chain-compact-default.json").read_text(encoding="utf-8")


A_WORKSPACE_COPY_IS_NOTED = Case(
    name="init notes a workspace copy that overrides a global one by name",
    init=False,
    steps=[
        step("init"),
        probe("the shipped chain-compact-default.json", _shipped_compact, capture="shipped"),
        write(".contenox/chain-compact-default.json", "{shipped}"),
        step("init", stdout_has=[".contenox/chain-compact-default.json shadows this file"]),
    ],
)


def _no_marker_at(rel: str) -> Probe:
    return _holds(f"no .contenox in {rel}", lambda i: not (i.work / rel / ".contenox").exists())


NESTED_INIT_REUSES_THE_WORKSPACE = Case(
    name="init in a subdirectory reuses the ancestors workspace",
    init=False,
    steps=[
        step("init"),
        _READ_THE_MARKER,
        step("init", cwd="work/pkg/deeper"),
        _no_marker_at("pkg/deeper"),
        _no_marker_at("pkg"),
        _marker_kept("{marker}"),
    ],
)


INIT_PROJECT_MARKS_A_FRESH_WORKSPACE = Case(
    name="init project marks a fresh workspace named after its directory",
    init=False,
    steps=[
        step("init"),
        step(
            "init", "--project", cwd="work/api-service", stdout_has=['Marked project "api-service"']
        ),
    ],
    probes=[
        probe(
            "the nested marker: a new id?, its name",
            lambda i: (
                _marker(i.work / "api-service")["id"] != _marker(i.work)["id"],
                _marker(i.work / "api-service").get("name"),
            ),
            expect=(True, "api-service"),
        )
    ],
)

INIT_PROJECT_NAME_NAMES_THE_MARKER = Case(
    name="init project name gives the marker a friendly name",
    init=False,
    steps=[step("init", "--project", "--name", "API")],
    probes=[probe("the marker's name", lambda i: _marker(i.work).get("name"), expect="API")],
)


# function: moves the project directory between two commands
def test_a_project_moved_elsewhere_keeps_its_workspace_id(instance: Instance) -> None:
    project = instance.work / "proj"
    project.mkdir()
    instance.must("init", "--project", cwd=project)
    first = _marker(project)["id"]
    moved = project.rename(instance.work / "moved")
    instance.must("init", cwd=moved)
    assert _marker(moved)["id"] == first


INIT_REFRESH_POLICIES_REWRITES_ONLY_COPIES = Case(
    name="init refresh policies rewrites only copies already there",
    init=False,
    steps=[
        step("init"),
        write("hitl-policy-default.json", STALE_POLICY, home=True),
        write(".generated/hitl-policy-strict.json", STALE_POLICY, home=True),
        EDIT_THE_FIM_CHAIN,
        step("init", "--refresh-policies"),
    ],
    probes=[
        _holds(
            "the top-level copy is refreshed: not ours any more, and has rules",
            lambda i: (
                (text := (_global(i) / "hitl-policy-default.json").read_text()) != STALE_POLICY
                and bool(json.loads(text)["rules"])
            ),
        ),
        probe(
            "hitl-policy-*.json at the top of ~/.contenox",
            lambda i: sorted(p.name for p in _global(i).glob("hitl-policy-*.json")),
            expect=["hitl-policy-default.json"],
        ),
        # It touched neither .generated/ nor a chain.
        _home_text(".generated/hitl-policy-strict.json", expect=STALE_POLICY),
        _home_text(EDITED_FIM_CHAIN, expect='{"mine": true}\n'),
    ],
)


# Second readings of the preset quarantine, per provider read (the others are not yet).
_PRESET_READINGS = {
    "gemini": (
        "2026-12-03, a second reader with only this text and the docs, in a fresh scratch home: "
        "real. Saw: Fresh HOME + empty workspace. `init gemini` -> exit 0. It seeds the chains "
        "and renders the envelopes, then prints 'Google Gemini API key not found' and 'Next "
        "steps: … contenox backend add gemini … contenox config set default-provider gemini … "
        "config set default-model gemini-flash-latest'. `config get default-provider` -> empty "
        "('  (global)'). `config list`: default-model and default-provider unset. No backend "
        "was registered. Note: Reproduces. contenox-cli.md:323 says 'You can optionally specify "
        "a provider to pre-configure defaults', and :327-328 gloss `init gemini` as "
        "'pre-configure for Gemini'. The binary sets nothing and only prints the commands. "
        "`init --help` does not document the provider argument's effect, and no page says it "
        "only prints instructions. This one is close to the line: '..."
    ),
    "openai": (
        "2026-12-02, a second reader with only this text and the docs, in a "
        "fresh scratch home: real. Saw: fresh HOME: 'contenox init openai' "
        "prints 'Register the OpenAI backend and set defaults: contenox "
        "config set default-provider openai …'; then 'config get default-"
        "provider' -> empty '(global)' Note: Nothing added. No other doc page"
        " says init [provider] only prints instructions; contenox-cli.md:323 "
        "says it pre-configures defaults."
    ),
}


PROVIDER_PRESETS = [
    Case(
        name=f"init {provider} pre configures the {provider} defaults",
        init=False,
        steps=[
            step("init", provider),
            step("config", "get", "default-provider", stdout_has=[provider]),
        ],
        defect=Defect(
            title=f"`contenox init {provider}` pre-configures nothing",
            second_reading=_PRESET_READINGS.get(provider, ""),
            reproduce=(
                'export HOME=$(mktemp -d); cd "$(mktemp -d)"\n'
                f"contenox init {provider}        # prints the commands to type: "
                f"contenox config set default-provider {provider} …\n"
                "contenox config get default-provider   # empty\n"
                "contenox config list                    # every key unset"
            ),
            promised=(
                'reference/contenox-cli.md:323 "You can optionally specify a provider to '
                'pre-configure defaults."'
            ),
            observed="no default is set; init only prints the commands to type",
        ),
    )
    for provider in ("openai", "gemini")
]


HOME_MARKER = "11111111-2222-4333-8444-555555555555"


def _session_workspaces(instance: Instance) -> list[str]:
    """`session workspaces`' ids, the project's marker and the home's by their names."""
    listed = instance.must("session", "workspaces").stdout.splitlines()[1:]
    named = {_marker(instance.work)["id"]: "the project's marker", HOME_MARKER: "the home marker"}
    return sorted(named.get(line.split()[0], line.split()[0]) for line in listed if line.strip())


# docs disagree: contenox-cli.md:317 (the marker travels with the directory, so a project
# means one thing to the CLI and every ACP session alike) against the same page's :712
# (`acp --workspace-id` defaults to the workspace in ~/.contenox/workspace.id). v1.0.0
# files the CLI's session under the project's marker and the editor's under the home
# marker, as :712 says (with no home marker, under 00000000-…-000000000002, which no page
# names).
CLI_AND_ACP_SHARE_THE_MARKERS_WORKSPACE = Case(
    name="the cli files its session under the project marker and an acp session under the home one",
    script=Script(turns=[route(), "Hello."]),
    steps=[
        write("workspace.id", json.dumps({"id": HOME_MARKER}), home=True),
        step("session", "new", "from the cli"),
        prompt("hello"),
    ],
    probes=[
        probe(
            "session workspaces",
            _session_workspaces,
            expect=["the home marker", "the project's marker"],
        )
    ],
    defect=Defect(
        title=(
            "an ACP session is filed under another workspace than the CLI's in the same project"
        ),
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            'home: docs disagree. Saw: marker {"id":"ed0c27a9-…"}. session workspaces: '
            "'00000000-0000-0000-0000-000000000002 rrg acp-client 1 2' and 'ed0c27a9-… from the "
            'cli local-user 1 0\'. After I wrote ~/.contenox/workspace.id {"id":"11111111-…"}, a '
            "second ACP session was filed under 11111111-…. In no case was it filed under the "
            "project marker Note: Reproduces exactly. But the same reference page at :712 says ACP"
            " sessions default to the workspace in ~/.contenox/workspace.id, not the project "
            "marker, and that is what the binary does when that file exists. With no home marker "
            "it falls back to the …0002 id, which no page mentions. :317 and :712 contradict each "
            "other, so this is a docs finding. Same defect as G7."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# dialog.json: the turns below, as scripted-test-backend.md writes a "
            "dialog\n"
            "contenox backend add scripted --type scripted-test --script "
            "./dialog.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model scripted-test\n"
            'cat .contenox/workspace.id         # {"id": "<uuid>"}\n'
            "contenox session new 'from the cli'\n"
            "contenox acp   # ACP client: initialize, session/new {cwd: <this "
            "directory>}\n"
            "contenox session workspaces\n"
            "# the CLI session under <uuid>; the ACP session under another id "
            "(00000000-0000-0000-0000-000000000002 here)"
        ),
        promised=(
            'reference/contenox-cli.md:317 "so a project means one thing to the CLI '
            'and every ACP session alike"'
        ),
        observed=(
            "the ACP session is not filed under the marker's workspace id: with "
            '~/.contenox/workspace.id present (`echo \'{"id": "<id>"}\' > '
            "~/.contenox/workspace.id` before the acp), under that id, as :712 says; without "
            "it, under 00000000-0000-0000-0000-000000000002"
        ),
        bears_on=(
            'reference/contenox-cli.md:138 "| [`contenox acp`](#contenox-acp--contenox-acpx) '
            '| whatever the editor opened — per the protocol, the client owns the cwd |"',
            'reference/contenox-cli.md:712 "(default: the stable workspace from '
            '`~/.contenox/workspace.id`, same as the CLI)"',
        ),
        docs_disagree=True,
    ),
)
