"""Ledger rows that were `uncovered`: reference/agents-config.md's rule order, guide/serve.md's
second instance.

What an envelope compiles to is read from its render in ``~/.contenox/.generated/``, as
cases/test_envelopes.py reads it; what a host serves is read off its status screen, as
cases/test_serve.py reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket

from test_agents_config_page import _generated as _page_generated
from test_agents_page import LANDS, _roster, _run
from test_agents_page import _decl as _page_decl
from test_envelopes import _render_case, _rendered, _rules
from test_external_state import _servers, _state_section
from test_serve import IDLE, REDACT_DATE, RUNNING
from test_trusted_binaries import _policy as _tb_policy
from test_trusted_binaries import _run_lands_unattended as _tb_lands
from test_trusted_binaries import _run_stops_for_approval as _tb_stops

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    background,
    edit,
    mission_finish,
    probe,
    signal,
    step,
    wait,
)
from harness.servers.valkey import serve_valkey


def _emitted(instance: Instance, name: str) -> list[str]:
    """Envelope ``name``'s rules in emission order, as ``toolset.tool action``."""
    return [f"{r['tools']}.{r['tool']} {r['action']}" for r in _rules(instance, name)]


# agents-config.md "#### Rule order" (items 1, 4, 5, 6, 7 and 9) with the axis keys' table:
# `files.read` is read_file, read_file_range and the directory probe; `files.write` is
# write_file, edit_file, sed; `missions.fire` is mission_start. One envelope sets every one
# of them to a grant of its own, so each rule says which key it came from by its action or
# tool, and the list is read in the order the renderer emitted it.
RULE_ORDER = _render_case(
    "one envelope s rules come out always deny tools always allow missions fire files read"
    " files write",
    "[envelopes.order]\n"
    'default_action = "deny"\n'
    'missions.fire = "deny"\n'
    'files.read = "allow"\n'
    'files.write = "approve"\n'
    "[envelopes.order.tools]\n"
    '"git.status" = "allow"\n'
    "[[envelopes.order.always_deny]]\n"
    'tools = "echo"\n'
    'tool = "echo"\n'
    "[[envelopes.order.always_allow]]\n"
    'tools = "jq"\n'
    'tool = "*"\n',
    probe(
        "rules of order, in order",
        _emitted,
        "order",
        expect=[
            "echo.echo deny",  # 1. always_deny
            "git.status allow",  # 4. tools patterns
            "jq.* allow",  # 5. always_allow
            "mission.mission_start deny",  # 6. missions.fire
            "local_fs.read_file allow",  # 7. files.read ...
            "local_fs.read_file_range allow",
            "local_fs.list_dir allow",  # the directory probe
            "native-fs-browse.grep allow",
            "native-fs-browse.find_files allow",
            "native-fs-browse.stat_file allow",
            "native-fs-browse.count_stats allow",
            "native-fs-browse.list_dir allow",
            "local_fs.write_file approve",  # ... then files.write
            "local_fs.edit_file approve",
            "local_fs.sed approve",
        ],
    ),
    # 9. default_action is no rule: the policy's own fallback, applied after every rule
    probe(
        "default action of order",
        lambda instance, name: _rendered(instance, name)["default_action"],
        "order",
        expect="deny",
    ),
)


# guide/serve.md "Serving a second workspace means starting a second instance, which is also how
# you say, in the process list, that it is a different thing." Two hosts of one home, started
# side by side on two directories: the second starts while the first still runs, and each
# screen names its own directory.
TWO_WORKSPACES_TWO_INSTANCES = Case(
    name="a second workspace is served by a second instance running beside the first",
    script=IDLE,
    redact=REDACT_DATE,
    files={"alpha/README": "the first workspace\n", "beta/README": "the second workspace\n"},
    steps=[
        background("alpha", "serve", "alpha", ready=RUNNING, ready_stream="stdout", timeout=90),
        background("beta", "serve", "beta", ready=RUNNING, ready_stream="stdout", timeout=90),
        signal("alpha"),
        signal("beta"),
        wait(
            "alpha",
            stdout_has=[re.compile(r"Workspace\s+\S+/work/alpha\n"), RUNNING],
            stdout_lacks=["/work/beta"],
        ),
        wait(
            "beta",
            stdout_has=[re.compile(r"Workspace\s+\S+/work/beta\n"), RUNNING],
            stdout_lacks=["/work/alpha"],
        ),
    ],
)


# agents-config.md "**Host capabilities that do not exist** — `Skill`, `TodoWrite`, `Task`,
# `manage_task`." (what resolves to nothing): a declaration naming all four besides Read is
# listed, each dropped name is reported, and the run offers the model only what Read brought.
_HOST_CAPS = {"Skill", "TodoWrite", "Task", "manage_task"}
HOST_CAPABILITIES_RESOLVE_TO_NOTHING = Case(
    name="host capabilities that do not exist resolve to nothing and the agent runs with read",
    script=LANDS,
    files={
        ".contenox/agents/hostcaps.md": _page_decl(
            "hostcaps", "tools: Read, Skill, TodoWrite, Task, manage_task"
        )
    },
    steps=[
        step(
            "agent",
            "list",
            notices_has=["not carried  hostcaps: tools — resolves to nothing connected here"],
            stdout_has=[re.compile(r"\bhostcaps\s+discovered")],
        ),
        _run("hostcaps"),
    ],
    probes=[
        _roster(
            lambda r: set(r) == {"local_fs", "mission"} and not _HOST_CAPS & set(r["local_fs"]),
            "only Read's local_fs and the mission tools",
        )
    ],
    serves_all_turns=True,
)


# agents-config.md:105-107 "The model the declaration named is kept in provenance either way."
# and :617-618 "… the raw name is kept in provenance." `contenox agent show` is where
# contenox-cli.md:264 prints an agent's provenance, so the declared name must appear there for
# an agent whose pinned model no [models] entry maps.
MODEL_IN_PROVENANCE = Case(
    name="the model a declaration names is kept in the provenance agent show prints",
    files={
        ".contenox/agents/named.md": _page_decl("named", "tools: Read\nmodel: mystery-model"),
        ".contenox/agents.toml": "[agents.named.routing]\npin_model = true\n",
    },
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"\bnamed\s+discovered")]),
        step("agent", "show", "named", stdout_has=["Source:", "mystery-model"]),
    ],
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME/workspace; .contenox/agents/named.md with `model: "
            "mystery-model`, .contenox/agents.toml `[agents.named.routing] pin_model = true`; "
            "`contenox init`; `contenox agent show named` -> 'Name: named', 'ID: 0714…', 'Kind: "
            "chain', 'Enabled: true', 'Source: discovered', config_json {\"path\": "
            '…/.contenox/.generated/chain-agent-named.json, "chainId": "named"}; rc=0; `agent '
            "show named --raw` likewise. grep -rl mystery over the workspace and HOME finds only "
            '.contenox/agents/named.md; chain-agent-named.json models are only "{{var:model}}", '
            '"{{var:alt_model|var:default_model}}", "". sqlite scan of ~/.contenox/local.db '
            "(agents table columns id,name,kind,enabled,config_json,harness_id,workspace_id,sourc"
            "e,registry_id,registry_version,…): 0 rows containing 'mystery'. Same without "
            "pin_model. `agent show --help`: 'Provenance (source, registry id/version) is system-"
            "managed.' Note: reference/agents-config.md:106-107 'The model the declaration named "
            "is kept in provenance either way' and :617-618 'An unrecognised name is not an "
            "error: routing stays templated and the raw name is kept in provenance.' "
            "reference/contenox-cli.md:264 names `agent show` as the provenance view. The name is"
            " kept in no provenance the binary exposes or stores (not in agent show, not in "
            ".generated/, not in local.db). Routing half of the promise holds (templated, no "
            "error). grep -rn provenance/registry id/'agent show' in the docs finds only these "
            "three lines; no page says provenance is just source/registry id/version (that "
            "wording is the binary's own --help, not a doc page), so not 'docs disagree'."
        ),
        title=(
            "the model a declaration names is kept in no provenance: agent show prints only"
            " name, id, kind, enabled, source and the chain path"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; mkdir -p .contenox/agents\n'
            "printf -- '---\\nname: named\\ndescription: Checks one thing\\ntools: Read\\n"
            "model: mystery-model\\n---\\n\\nbody\\n' > .contenox/agents/named.md\n"
            "printf '[agents.named.routing]\\npin_model = true\\n' > .contenox/agents.toml\n"
            "contenox init; contenox agent show named   # no mystery-model anywhere"
        ),
        promised=(
            'reference/agents-config.md:106-107 "The model the declaration named is kept in '
            'provenance either way."\n'
            'reference/agents-config.md:617-618 "An unrecognised name is not an error: routing '
            'stays templated and the raw name is kept in provenance."'
        ),
        observed=(
            "agent show prints 'Name: named', 'ID: …', 'Kind: chain', 'Enabled: true', "
            "'Source: discovered' and config_json {\"path\": …/chain-agent-named.json, "
            '"chainId": "named"}; the name mystery-model is in neither, nor in any file '
            "under .contenox/.generated/ or ~/.contenox/ (grep), nor in local.db; `agent show "
            "--help` says 'Provenance (source, registry id/version) is system-managed.'"
        ),
        bears_on=(
            'reference/contenox-cli.md:264 "contenox agent show agent-reviewer        # '
            'provenance + config_json"',
        ),
    ),
)


# agents-config.md:499-506 "Three postures are required and validated" and the posture keys'
# table (`local_fs_read` takes `allow` | `approve` | `deny`). An envelope axis given "maybe" is
# refused at the session start, naming it (the control, in the same case); a posture given the
# same word must be refused the same way.
_POSTURE = '[policy.postures.auto_edit]\nlocal_fs_read = "allow"'
POSTURE_VALIDATED = Case(
    name="a posture key given an action outside allow approve deny is refused",
    steps=[
        edit("agents.toml", append='\n[envelopes.bad]\nfiles.read = "maybe"\n', under="contenox"),
        step("acp", stdin="", notices_has=['files.read: unknown action "maybe"']),
        edit(
            "agents.toml",
            replace={
                re.escape('files.read = "maybe"'): 'files.read = "deny"',
                re.escape(_POSTURE): _POSTURE.replace('"allow"', '"maybe"'),
            },
            under="contenox",
        ),
        step("acp", stdin="", notices_has=['unknown action "maybe"']),
    ],
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh HOME; `contenox init`; sed made ~/.contenox/agents.toml:173"
            ' `local_fs_read = "maybe"` under [policy.postures.auto_edit]. `contenox acp '
            "</dev/null` -> only 'contenox acp: no default-model configured; serving setup-"
            "only…', rc=0. `contenox agent list` -> normal table (+ the usual 'not carried "
            "chain-acpx' note), rc=0. `contenox vet --all` -> rc=0, no line mentioning "
            "maybe/posture. `contenox doctor` -> nothing about it. Same with "
            "[envelopes.read_only]..[envelopes.auto_edit] cut from ~/.contenox/agents.toml plus"
            " a declared agent `posture: auto_edit`: still silent, rc=0, "
            "~/.contenox/.generated/hitl-policy-auto_edit.json still stamped 'Rendered from "
            "[envelopes.auto_edit] in agents.toml' (compiled-in envelope). Contrast: appending "
            '`[envelopes.bad] files.read = "maybe"` -> \'contenox acp: rendering envelopes: '
            'agentdecl: [envelopes.bad]: files.read: unknown action "maybe" (want allow, '
            "approve or deny)' (acp still exits 0, but the word is given). Note: "
            "reference/agents-config.md:499-500 'Three postures are required and validated' and"
            " :504 restricts local_fs_read to allow|approve|deny; reference/agents-"
            "config.md:31-33 adds 'A malformed one is an error rather than a silent fall back "
            "to shipped values'. :515-518 says the block is only *consulted* when no envelope "
            "of that name exists (and since the shipped envelopes are compiled in, it "
            "effectively never is), but no page says an unconsulted posture block escapes "
            "validation; guide/hitl.md:322-331 and guide/agents.md:52-53 only describe postures"
            " resolving through the envelopes. Searched docs for "
            "posture/policy.postures/validat: no page says the silent acceptance is right. "
            "Nuance for the reader: the bad value has no effect on any rendered policy; the "
            "defect is the missing validation/report, not a widened grant."
        ),
        title=(
            "a posture key given an action outside allow, approve, deny is accepted without a word"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            'sed -i \'/^\\[policy.postures.auto_edit\\]/{n;s/"allow"/"maybe"/}\' '
            '~/.contenox/agents.toml   # local_fs_read = "maybe"\n'
            "contenox acp </dev/null; echo $?   # no word of it, 0\n"
            "contenox agent list                # no word of it, 0\n"
            "printf '\\n[envelopes.bad]\\nfiles.read = \"maybe\"\\n' >> ~/.contenox/agents.toml\n"
            'contenox acp </dev/null   # by contrast: \'files.read: unknown action "maybe" (want '
            "allow, approve or deny)'"
        ),
        promised=(
            'reference/agents-config.md:499-500 "Three postures are required and validated: '
            '`read_only`, `ask_always`, `auto_edit`."\n'
            'reference/agents-config.md:504 "`local_fs_read` | `allow` \\| `approve` \\| `deny`"'
        ),
        observed=(
            'with `local_fs_read = "maybe"` under the shipped [policy.postures.auto_edit], '
            "`contenox acp` prints only its 'no default-model configured' notice and `agent list` "
            "nothing; also so with the three posture envelopes cut from ~/.contenox/agents.toml "
            "(hitl-policy-auto_edit.json still says 'Rendered from [envelopes.auto_edit]', the "
            "shipped envelope underneath). The same word on an envelope axis is refused: "
            "'rendering envelopes: agentdecl: [envelopes.bad]: files.read: unknown action "
            '"maybe" (want allow, approve or deny)\'.'
        ),
        bears_on=(
            'reference/agents-config.md:515-518 "a `[policy.postures.*]` block is consulted only '
            'when no envelope of that name is declared"',
        ),
    ),
)


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# config.md's accepted forms: "`nats://host:4222` (also `tls://`, `ws://`, `wss://`);
# comma-separate a server list" and "… or a bare `host:6379`". A NATS list whose first server
# nobody runs still reaches the second, and a bare host:port reaches a Valkey with no password
# (the suite's shared Valkey has one, so this case starts a second without). Controls: the
# list of the dead server alone, and the bare form against the password-protected server,
# each stop doctor naming the variable.
def test_a_comma_separated_nats_list_and_a_bare_valkey_host_port_are_reached(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    open_valkey = serve_valkey(instance.tmp / "valkey-open")
    bare = open_valkey.__enter__()
    instance.cleanups.append(lambda: open_valkey.__exit__(None, None, None))
    dead = _closed_port()
    instance.recorder.name(f"127.0.0.1:{dead}", "[NOBODY]")
    instance.recorder.name(f"{bare.host}:{bare.port}", "[OPEN_VALKEY]")
    listed = f"nats://127.0.0.1:{dead},{servers.nats.url}"
    env = {
        **servers.env(),
        "CONTENOX_NATS_URL": listed,
        "CONTENOX_VALKEY_URL": f"{bare.host}:{bare.port}",
    }
    doctor = instance.must("doctor", env=env)
    section = _state_section(doctor.stdout)
    assert section.count("Status: reachable") == 3, doctor.describe()
    assert f"message bus: NATS ({listed}, from CONTENOX_NATS_URL)" in section, doctor.describe()
    # Controls: the dead server alone is no message bus; the bare form sends no password.
    alone = instance.contenox(
        "doctor", env={**env, "CONTENOX_NATS_URL": f"nats://127.0.0.1:{dead}"}
    )
    assert alone.exit_code == 1, alone.describe()
    assert "CONTENOX_NATS_URL" in alone.stderr, alone.describe()
    vk = servers.valkey
    no_auth = instance.contenox(
        "doctor", env={**env, "CONTENOX_VALKEY_URL": f"{vk.host}:{vk.port}"}
    )
    assert no_auth.exit_code == 1, no_auth.describe()
    assert "CONTENOX_VALKEY_URL: cannot reach the Valkey server it names" in no_auth.stderr, (
        no_auth.describe()
    )


# config.md "Nothing else changes: the same commands, the same schema, the same event log, and the
# same workspace layout on disk." The same commands, run once on the SQLite file and once against
# the three servers, answer in the same shape; the workspace gains nothing the SQLite run did not.
def test_opting_in_to_external_state_leaves_the_commands_the_event_log_and_the_workspace_alike(
    instance: Instance,
) -> None:
    # function: drives the servers
    servers = _servers(instance)
    layout: list[list[str]] = []
    said: list[list[str]] = []
    for env in ({}, servers.env()):
        said.append(
            [
                instance.must(*command, env=env).stdout
                for command in (
                    ("session", "new", "same-shape"),
                    ("session", "list"),
                    ("events", "list"),
                    ("state", "list"),
                )
            ]
        )
        layout.append(sorted(str(p.relative_to(instance.work)) for p in instance.work.rglob("*")))
    assert "same-shape" in said[1][1], said
    assert said[0] == said[1], said
    assert layout[0] == layout[1], layout


def _max_turns_of(instance: Instance, agent: str) -> object:
    """`compute.maxTurns` of the policy emitted for ``agent`` (None when none is emitted)."""
    return _page_generated(instance, f"hitl-policy-{agent}.json")["compute"].get("maxTurns")


# agents-config.md:161-166 "`max_turns` applies to a mission-role agent only …" and "A primary
# agent never gets one: its turns are the operator's own prompts." Under one
# `[policy.compute] max_turns = 1`, the declaration `run` fires missions at is emitted with it
# and `acp`, the agent an editor's session prompts turn by turn, is emitted without.
MAX_TURNS_MISSION_ROLE_ONLY = Case(
    name="max_turns reaches a mission role agent s policy and not the acp agent s",
    files={
        ".contenox/agents/plain.md": _page_decl("plain"),
        ".contenox/agents.toml": "[policy.compute]\nmax_turns = 1\n",
    },
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"\bplain\s+discovered")]),
        probe("maxTurns emitted for plain", _max_turns_of, "plain", expect=1),
        probe("maxTurns emitted for acp", _max_turns_of, "acp", expect=None),
    ],
)


# A planted `echo` that, on its first run, rewrites its own bytes to others of the same length
# and, when RESTORE is set, puts its modification time back (touch -r a copy of the original).
_SELF_REWRITING = (
    "#!/bin/sh\n"
    "# generation: A\n"
    'echo ran >> "$MARK"\n'
    'if [ ! -e "$DONE" ]; then\n'
    "  sed -i 's/^# generation: A$/# generation: B/' \"$SELF\"\n"
    '  if [ -n "$RESTORE" ]; then touch -r "$REF" "$SELF"; fi\n'
    '  : > "$DONE"\n'
    "fi\n"
    "echo rewritten\n"
)
_TWICE = Script(
    turns=[
        Turn(
            text="First.",
            tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["one"]})],
        ),
        Turn(
            text="Second.",
            tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["two"]})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)


def _self_rewriting_run(instance: Instance, *, restore: bool) -> int:
    """One run calling a hash-pinned planted echo twice (the first call rewrites it); how
    many times the planted echo ran."""
    planted = instance.write("bin/echo", _SELF_REWRITING)
    planted.chmod(0o755)
    ref = instance.write("ref", "")
    st = planted.stat()
    os.utime(ref, ns=(st.st_atime_ns, st.st_mtime_ns))
    digest = hashlib.sha256(planted.read_bytes()).hexdigest()
    instance.init()
    policy = _tb_policy({"hashes": {str(planted): digest}})
    (instance.home / ".contenox" / "hitl-policy-pinned.json").write_text(json.dumps(policy))
    instance.use_script(_TWICE)
    mark = instance.work / "ran"
    env = {
        "PATH": f"{planted.parent}:{os.environ['PATH']}",
        "MARK": str(mark),
        "DONE": str(instance.work / "done"),
        "SELF": str(planted),
        "REF": str(ref),
        "RESTORE": "1" if restore else "",
    }
    if restore:
        _tb_lands(instance, env)
    else:
        _tb_stops(instance, env)
    rewritten = hashlib.sha256(planted.read_bytes()).hexdigest() != digest
    instance.recorder.probe("the planted echo rewritten by its first run", (), rewritten)
    assert rewritten, "the echo was not rewritten"
    runs = mark.read_text().count("ran")
    instance.recorder.probe("runs of the planted echo", (), runs)
    return runs


# guide/confinement/trusted-binaries.md "a digest is cached and recomputed only when the file's
# size or modification time changes": within one run the first call rewrites the pinned file to
# other bytes of the same size and restores its mtime, so the second call is judged on the cached
# digest and runs unattended; the control moves the mtime and the second call stops for approval.
def test_a_same_size_rewrite_with_its_mtime_restored_is_judged_on_the_cached_digest(
    instance: Instance,
) -> None:
    assert _self_rewriting_run(instance, restore=True) == 2


def test_a_same_size_rewrite_that_moves_the_mtime_is_rehashed_and_stops_for_approval(
    instance: Instance,
) -> None:
    assert _self_rewriting_run(instance, restore=False) == 1


# guide/confinement/guardrails.md "A `native-` or `decl-` prefix is a namespace that stops a
# declared source from colliding with an in-process toolset." An agent bringing a server it
# calls `git` gets it as `decl-gitter-git`, and the in-process `native-git` is still the roster's.
DECLARED_GIT_BESIDE_NATIVE_GIT = Case(
    name="a server an agent brings named git is namespaced apart from the in process native git",
    files={
        ".contenox/agents/gitter.md": _page_decl(
            "gitter", "tools: Read\nmcpServers:\n  git:\n    command: /bin/true"
        )
    },
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"\bgitter\s+discovered")]),
        step(
            "mcp",
            "list",
            stdout_has=[re.compile(r"decl-gitter-git\s+stdio\s+/bin/true\s+declaration")],
            stdout_lacks=[re.compile(r"(?m)^\s*(native-)?git\s")],
        ),
        step("doctor", stdout_has=["git_status — native-git — local (in-process)"]),
    ],
)


def _shell_grants(instance: Instance) -> dict[str, list[str]]:
    """The unconditional local_shell actions of the policies emitted for `one` and `two`."""
    return {
        agent: [
            r["action"]
            for r in _page_generated(instance, f"hitl-policy-{agent}.json")["rules"]
            if r["tools"] == "local_shell" and "when" not in r
        ]
        for agent in ("one", "two")
    }


_AUTO_EDIT = 'description = "Edit without asking; run nothing without asking."'
# agents-config.md "Loosening a posture here loosens it for every agent that uses it." Two
# declarations whose `permissionMode: acceptEdits` maps to `auto_edit`; the posture ships as an
# envelope, which wins (:515), so the loosening is written there: `shell = "allow"` in the home
# file's [envelopes.auto_edit]. Both agents' emitted shell grant goes from approve to allow.
LOOSENING_A_POSTURE = Case(
    name="loosening the auto edit posture loosens it for every agent that uses it",
    files={
        f".contenox/agents/{agent}.md": _page_decl(
            agent, "tools: Read, Bash\npermissionMode: acceptEdits"
        )
        for agent in ("one", "two")
    },
    steps=[
        step("agent", "list", stdout_has=[re.compile(r"\bone\s+discovered")]),
        probe(
            "shell grants before", _shell_grants, expect={"one": ["approve"], "two": ["approve"]}
        ),
        edit(
            "agents.toml",
            replace={re.escape(_AUTO_EDIT): _AUTO_EDIT + '\nshell = "allow"'},
            under="contenox",
        ),
        step("agent", "list", stdout_has=[re.compile(r"\btwo\s+discovered")]),
        probe("shell grants after", _shell_grants, expect={"one": ["allow"], "two": ["allow"]}),
    ],
)
