"""Units of the recurring-work and vault-agent tutorials no other case asserted.

The recurring job's declared OpenAPI service and its skills catalogue; the vault tutorial's
envelope `version` field. Each case is one sentence of guide/tutorials/; its ledger row
quotes it.
"""

from __future__ import annotations

import json
import re

from chains import UNASKED
from test_agents_page import LANDS, OFFICE, _run
from test_remote import DISCOVERED, _tools_shown
from test_tools import _ADD_REC, _finish, _rec_calls
from test_tutorials import (
    ACTIVATE,
    CUT_PATH,
    FIRE_VAULT,
    FIRED,
    LS_INBOX,
    NOTE_PATH,
    READ_MEETING,
    VAULT_FILES,
    VAULT_POLICY,
    WRITE_NOTE,
    listing,
)

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    defect,
    mission_finish,
    probe,
    probes,
    satisfies,
    serve,
    step,
    write,
)

# ------------------------------------------------------------------- A recurring job

# recurring-work.md's remoteTools declaration, its URL the loopback service's.
TIMESHEET_BRINGS = """\
---
name: timesheet
description: Files this week's tracked hours to the timesheet system
tools: Read
remoteTools:
  timesheet:
    url: {svc_url}
    spec: {svc_url}/openapi.json
---

You file weekly timesheets.
"""

EVERY_OPERATION_IS_A_TOOL = Case(
    name="recurring job every operation of the spec a declaration names becomes a tool",
    steps=[
        serve("svc", "openapi"),
        write(".contenox/agents/timesheet.md", TIMESHEET_BRINGS),
        step("agent", "list", notices_lacks=["refused"]),
        # `tools show` lists the discovered tools in no stable order: the probe sorts them.
        probe(
            "the tools `tools show decl-timesheet-timesheet` lists",
            _tools_shown,
            "decl-timesheet-timesheet",
            expect=DISCOVERED,
        ),
    ],
)


def _skill(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n\nBODY-OF-{name.upper()}.\n"


SKILLS = {
    "expenses": "File the month's expenses",
    "leave": "Book a day off",
    "timesheet": "File this week's hours",
}


def _catalogue(instance: Instance) -> dict[str, object]:
    """The index lines under the skills preamble of the office agent's prompt, and any body."""
    for prompt in probes.system_prompts(instance):
        if "Skills are procedures" in prompt:
            tail = prompt[prompt.index("Skills are procedures") :]
            lines = sorted(line for line in tail.splitlines() if line.startswith("- "))
            return {
                "index lines": lines,
                "bodies": [b for b in SKILLS if f"BODY-OF-{b.upper()}" in prompt],
            }
    return {}


THREE_SKILLS_THREE_LINES = Case(
    name="recurring job three skills are three index lines and none of their bodies",
    script=LANDS,
    files={
        ".contenox/agents/office.md": OFFICE,
        **{f".contenox/skills/{n}.md": _skill(n, d) for n, d in SKILLS.items()},
    },
    steps=[_run("office")],
    probes=[
        probe(
            "the skills catalogue in the office agent's prompt (sorted: no order is promised)",
            _catalogue,
            expect={
                "index lines": [
                    f"- {n}: {d} — read .contenox/skills/{n}.md" for n, d in SKILLS.items()
                ],
                "bodies": [],
            },
        )
    ],
)


# ----------------------------------------------------- An agent that files notes into Obsidian


def _vault_envelope(version: str) -> str:
    """The vault tutorial's envelope with a `version` field written as ``version``."""
    return VAULT_POLICY.replace(
        '"default_action": "deny",', f'"version": {version},\n  "default_action": "deny",'
    )


# vault-agent.md:321-323: the draft's `"version": "v1"` is wrong, the field is an integer. The
# control is the same envelope with the integer: only the field's type changes, and it passes.
THE_VERSION_FIELD_IS_AN_INTEGER = [
    Case(
        name=f"vault agent the envelope with version {how}",
        script=UNASKED,
        files={".contenox/hitl-policy-vault.json": _vault_envelope(version)},
        steps=[step("vet", ".contenox/hitl-policy-vault.json", **expect)],
    )
    for how, version, expect in [
        (
            "v1 as a string is refused naming the integer field",
            '"v1"',
            {
                "exit_code": 1,
                "stdout_has": [
                    "FAIL .contenox/hitl-policy-vault.json",
                    "Policy.version of type int",
                ],
            },
        ),
        (
            "1 as an integer passes vet",
            "1",
            {"stdout_has": ["ok   .contenox/hitl-policy-vault.json"]},
        ),
    ]
]


def _tool_results(instance: Instance, *, whole: bool = False) -> list[str]:
    """The first sentence (or, ``whole``, all) of each tool result the model was sent, in order.

    Every chat unit's output holds the history so far: the longest is the whole run's.
    """
    longest: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            results = [
                m.content.strip() if whole else m.content.strip().split("\n")[0].split(". ")[0]
                for m in unit.output_messages
                if m.role == "tool"
            ]
            if len(results) > len(longest):
                longest = results
    return longest


# The tutorial's chain and envelope, the envelope in ~/.contenox where a unit loads a policy
# file (the workspace copy the page writes is never read: test_envelopes.py quarantines that).
# One dialog tries each of the envelope's decisions: the shell's `ls` (allowed) and `cat` (no
# rule: default_action deny), a read, a write into vault/ (allowed), a write into inbox/ (the
# deny rule) and `edit_file`, which no rule names (default_action deny).
DENIED = "Denied by the active policy hitl-policy-vault.json"

THE_FENCE_DECIDES = Case(
    redact=CUT_PATH,
    name="vault agent with the envelope in the home each call meets the rule the page says",
    script=Script(
        turns=[
            Turn(text="Listing the inbox.", tool_calls=[LS_INBOX]),
            Turn(
                text="Printing it.",
                tool_calls=[
                    ToolCall("local_shell", {"command": "cat", "args": ["inbox/meeting-notes.txt"]})
                ],
            ),
            Turn(text="Reading it.", tool_calls=[READ_MEETING]),
            Turn(text="Filing it.", tool_calls=[WRITE_NOTE]),
            Turn(
                text="Drafting.",
                tool_calls=[ToolCall("write_file", {"path": "inbox/draft.md", "content": "hello"})],
            ),
            Turn(
                text="Editing.",
                tool_calls=[
                    ToolCall(
                        "edit_file",
                        {"path": "inbox/meeting-notes.txt", "old": "Dana", "new": "Dan"},
                    )
                ],
            ),
            "Filed 1 note; the other two calls were refused.",
        ],
        # The chain has no mission tools: after the reply the drive loop asks again.
        runs_past_end=True,
    ),
    files={k: v for k, v in VAULT_FILES.items() if "hitl-policy" not in k},
    home_files={"hitl-policy-vault.json": VAULT_POLICY},
    steps=[ACTIVATE, step(*FIRE_VAULT, exit_code=None, stdout_has=[FIRED])],
    probes=[
        probe("vault/", listing("vault"), expect=[NOTE_PATH.removeprefix("vault/")]),
        probe("inbox/", listing("inbox"), expect=["meeting-notes.txt"]),
        probe(
            "inbox/meeting-notes.txt is unchanged",
            lambda i: "Dana" in (i.work / "inbox" / "meeting-notes.txt").read_text(),
            expect=True,
        ),
        probe(
            "the first sentence of each tool result",
            _tool_results,
            expect=satisfies(
                lambda rs: (
                    len(rs) == 6
                    and '"success":true' in rs[0]
                    and rs[1] == DENIED
                    and rs[2] == "Call with Dana, 3 March."
                    and '"written":true' in rs[3]
                    and rs[4:] == [f"{DENIED} (rule 3)", DENIED]
                ),
                "ls runs and cat meets default_action deny; the read and the vault write run; "
                "the inbox write meets rule 3 (the deny); edit_file, which no rule names, meets "
                "default_action deny",
            ),
        ),
    ],
)


# vault-agent.md:95-97: discovery names the agent by the chain's `id`, not its filename. The
# tutorial's file is `chain-agent-vaultfiler.json` with id `vaultfiler`, where the two agree:
# here the same chain is saved as `chain-agent-notes.json`.
THE_ID_NAMES_THE_AGENT = Case(
    name="vault agent the chain saved under another filename is the agent its id names",
    script=UNASKED,
    files={
        ".contenox/chain-agent-notes.json": VAULT_FILES[".contenox/chain-agent-vaultfiler.json"]
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[re.compile(r"\svaultfiler\s+discovered\s+chain\s+true")],
            stdout_lacks=[re.compile(r"\s(chain-agent-)?notes\s")],
        )
    ],
)


# docs disagree: vault-agent.md:58-61 offers `ln -s ~/Documents/MyVault vault` as the vault;
# comparison.md:94 says path containment resolves symlinks and refuses an escape. The chain's
# `_allowed_dir: "."` is the workspace, the link's target lies outside it, and v1.0.0 does as
# comparison.md says: the write into the linked vault is refused and nothing lands there.
@defect(
    Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: fresh HOME; ~/Documents/MyVault; workspace with "
            "inbox/meeting-notes.txt, `ln -s ~/Documents/MyVault vault`, `contenox init`, the "
            "tutorial's chain (extracted verbatim from vault-agent.md) as .contenox/chain-agent-"
            "vaultfiler.json (vet: ok), the tutorial's envelope as ~/.contenox/hitl-policy-"
            "vault.json, `config set default-mission-policy hitl-policy-vault.json`, scripted "
            "dialog [write_file {path: 'vault/Postgres Connection Pool Exhaustion.md', ...}; "
            "'Filed one note.']. `contenox mission fire vaultfiler 'File everything in inbox/ "
            "into the vault.' --wait --timeout 60s` rc=1; state --raw and stderr: 'tool "
            "local_fs.write_file execution failed: local_fs: path vault/Postgres Connection Pool "
            "Exhaustion.md escapes allowed directory /tmp/tmp.7l0FcGw2jC (recoverable: adjust "
            "parameters and retry)'; ~/Documents/MyVault stays empty. (The unit then ended on a "
            "scripted-test error, which has nothing to do with the refusal.) Note: "
            "guide/tutorials/vault-agent.md:58-61 tells you to use a real vault with `ln -s "
            "~/Documents/MyVault vault` under a chain whose local_fs _allowed_dir is '.' (vault-"
            "agent.md:115). guide/comparison.md:94 says the binary is right to refuse it: 'A "
            "single package resolves symlinks and decides whether a candidate path lies under a "
            "root ... so an escape is refused structurally'. The binary keeps comparison.md's "
            "promise; the tutorial's symlink option can never write into the vault."
        ),
        title="vault-agent.md links a real vault in with ln -s; its chain's _allowed_dir refuses "
        "the linked path as an escape, as comparison.md says containment does",
        reproduce=(
            "in a scratch HOME, `mkdir -p ~/Documents/MyVault`; a workspace with the vault "
            "tutorial's `inbox/meeting-notes.txt` and `.contenox/chain-agent-vaultfiler.json` "
            '(`_allowed_dir: "."`); `ln -s ~/Documents/MyVault vault`; `contenox init`; the '
            "tutorial's envelope as `~/.contenox/hitl-policy-vault.json`; `contenox config set "
            "default-mission-policy hitl-policy-vault.json`; a scripted-test default backend "
            'whose dialog calls `write_file {path: "vault/Postgres Connection Pool '
            'Exhaustion.md", …}` then replies; `contenox mission fire vaultfiler "File '
            'everything in inbox/ into the vault." --wait --timeout 60s`: `contenox state show '
            "<request id> --raw` holds the tool result 'tool local_fs.write_file execution "
            "failed: local_fs: path vault/Postgres Connection Pool Exhaustion.md escapes allowed "
            "directory <workspace> (recoverable: adjust parameters and retry)'; "
            "~/Documents/MyVault stays empty"
        ),
        promised=(
            'guide/comparison.md:94 "A single package resolves symlinks and decides whether a '
            "candidate path lies under a root, and the filesystem and git tools route through "
            'it — so an escape is refused structurally"'
        ),
        observed="'… escapes allowed directory <workspace> …'; nothing written in the linked vault",
        bears_on=(
            'guide/tutorials/vault-agent.md:58 "For the vault, either use a real one:"',
            'guide/tutorials/vault-agent.md:61 "ln -s ~/Documents/MyVault vault"',
            'guide/tutorials/vault-agent.md:115 ""local_fs": { "_allowed_dir": ".", '
            '"_max_read_bytes": "262144" }"',
            'integrations/tools/local.md:78 "Override the allowed filesystem root for this task."',
        ),
        docs_disagree=True,
    )
)
def test_vault_agent_a_real_vault_linked_in_with_ln_s_is_refused_as_an_escape(
    instance: Instance,
) -> None:
    # function: vault/ is a symlink (`ln -s ~/Documents/MyVault vault`), which a Case's files
    # cannot make
    vault = instance.home / "Documents" / "MyVault"
    vault.mkdir(parents=True)
    for path, text in VAULT_FILES.items():
        if "hitl-policy" not in path and not path.startswith("vault/"):
            instance.write(path, text)
    (instance.work / "vault").symlink_to(vault)
    instance.init()
    # The envelope where a unit reads it (the workspace copy is never read, test_envelopes.py).
    (instance.home / ".contenox" / "hitl-policy-vault.json").write_text(VAULT_POLICY)
    instance.use_script(
        Script(
            turns=[Turn(text="Filing it.", tool_calls=[WRITE_NOTE]), "Filed 1 note."],
            runs_past_end=True,
        )
    )
    instance.must("config", "set", "default-mission-policy", "hitl-policy-vault.json")
    fired = instance.contenox(*FIRE_VAULT)
    assert FIRED in fired.stdout, fired.describe()
    results = _tool_results(instance)
    filed = sorted(p.name for p in vault.iterdir())
    instance.recorder.probe("~/Documents/MyVault", (), filed)
    instance.recorder.probe("the write's tool result", (), results)
    assert filed == [], fired.describe()
    assert len(results) == 1 and "escapes allowed directory" in results[0], results


# recurring-work.md:215-217: the agent reads a skill with local_fs.read_file, "same call, same
# policy rules". The gate is the envelope's read_file rule; the control changes only its action.
def _skill_read_envelope(action: str) -> str:
    return json.dumps(
        {
            "default_action": "deny",
            "rules": [
                {"tools": "mission", "tool": "*", "action": "allow"},
                {"tools": "local_fs", "tool": "read_file", "action": action},
            ],
        }
    )


READS_THE_SKILL = Script(
    turns=[
        Turn(
            text="Reading the procedure.",
            tool_calls=[ToolCall("read_file", {"path": ".contenox/skills/timesheet.md"})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        Turn(text="Mission finished.", optional=True),
    ]
)

A_SKILL_IS_READ_LIKE_ANY_FILE = [
    Case(
        name=f"recurring job a skill file is read with read_file and {how}",
        script=READS_THE_SKILL,
        files={
            ".contenox/agents/office.md": OFFICE,
            ".contenox/skills/timesheet.md": _skill("timesheet", "File this week's hours"),
        },
        home_files={"hitl-policy-skillread.json": _skill_read_envelope(action)},
        steps=[_run("office", policy="skillread")],
        probes=[
            probe(
                "the tool results the model was sent",
                lambda i: _tool_results(i, whole=True),
                expect=satisfies(
                    lambda rs, r=result: bool(rs) and r in rs[0], f"the read's: {result!r}"
                ),
            )
        ],
    )
    for how, action, result in [
        ("its body comes back where the envelope allows reads", "allow", "BODY-OF-TIMESHEET."),
        (
            "refused by the same rule as any read where the envelope denies them",
            "deny",
            "Denied by the active policy skillread (rule 1)",
        ),
    ]
]


# vault-agent.md:351-354: an MCP server's tools are policy-scoped like any other, and "the
# envelope in this tutorial does not change shape — only the tool names in the rules do". The
# envelope is the vault's shape (default deny, rules by tools/tool); the gate is one rule
# naming the server's tool, and the control drops only that rule.
def _mcp_envelope(*rules: dict[str, str]) -> str:
    mission = {"tools": "mission", "tool": "*", "action": "allow"}
    return json.dumps({"default_action": "deny", "rules": [mission, *rules]})


AN_MCP_TOOL_IN_THE_VAULT_ENVELOPE = [
    Case(
        name=f"vault agent an mcp server's tool {how}",
        script=_finish(ToolCall("note", {"text": "hi", "tenant_id": "t"})),
        home_files={"hitl-policy-vaultmcp.json": _mcp_envelope(*rules)},
        steps=[
            _ADD_REC,
            step("run", "--policy", "vaultmcp", "--timeout", "40s", "note", exit_code=None),
            probe("calls the server received", _rec_calls, expect=calls),
        ],
    )
    for how, rules, calls in [
        (
            "runs where a rule of the envelope names it",
            [{"tools": "rec", "tool": "note", "action": "allow"}],
            ["note"],
        ),
        ("meets default_action deny where no rule names it", [], []),
    ]
]
