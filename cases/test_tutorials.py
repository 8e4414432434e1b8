"""The tutorials of guide/tutorials/, followed step by step with a scripted model.

Each case writes the files a tutorial tells you to write, runs the commands it gives and
checks what it says you will see. A step that needs a hosted provider, a network service or
a wall-clock schedule is `unreachable` in the ledger; a step that no longer works is
quarantined with what contenox printed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from chains import UNASKED

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    mission_report,
    probe,
    probes,
    satisfies,
    step,
)
from harness.probes import missions

# ------------------------------------------------------------------ Your first agent

# `.contenox/agents/reviewer.md`, verbatim from guide/tutorials/first-agent.md.
REVIEWER = """\
---
name: reviewer
description: Reviews a Go file for correctness problems
tools: read_file, write_file
---

You are a Go code reviewer. Read the file you are asked about using the tools
you have, then list concrete correctness problems you can point at in the code
you actually read.

Ground every claim: quote the lines you rely on before drawing a conclusion. If
a tool returns nothing or errors, say so and stop rather than guessing. Be
brief.
"""


def declaration(name: str, tools: str, *extra: str) -> str:
    """An agent declaration with ``tools`` and any extra frontmatter lines."""
    front = "\n".join([f"name: {name}", "description: A tutorial agent", f"tools: {tools}", *extra])
    return f"---\n{front}\n---\n\nDo the work you are asked to do.\n"


def listed(name: str) -> re.Pattern[str]:
    """The `agent list` row the tutorial shows: NAME, SOURCE discovered, KIND chain, ENABLED."""
    return re.compile(rf"\s{re.escape(name)}\s+discovered\s+chain\s+true")


# docs disagree: first-agent.md:40/48 says its reviewer.md (tools: read_file, write_file) is
# the whole agent and lists as discovered; guide/agents.md:94-97 names the tool names that
# resolve out of the box (Read, Write, …) and says a declaration where none resolves fails.
# v1.0.0 does the latter: the case asserts the refusal; its control below only renames
# the tools to the ones agents.md lists, and the declaration is listed.
THE_FIRST_AGENT_IS_REFUSED = Case(
    name="first agent the reviewer file written in the tutorial is refused for its tool names",
    defect=Defect(
        title="the first agent tutorial's reviewer declaration is refused: read_file and "
        "write_file resolve to nothing",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: docs disagree. Saw: Fresh HOME+workspace, init; "
            ".contenox/agents/reviewer.md copied byte for byte from first-agent.md's "
            "markdown block (tools: read_file, write_file). `agent list` -> exit 0, and "
            "stderr prints 'refused  <W>/.contenox/agents/reviewer.md: agentdecl: none of "
            "this declaration's tools resolve to anything connected here: read_file, "
            "write_file. contenox hosts local_fs, local_shell, webtools and git; …'. The "
            "listed 'reviewer' row is the one init seeded in ~/.contenox/agents/reviewer.md "
            '(tools: "*", posture: read_only). Note: Reproduces, but other pages say the '
            "refusal is right. guide/agents.md:94-97: 'Tool names resolved out of the box: "
            "Read, Write, Edit, Bash, PowerShell, Glob, Grep, WebFetch. An unknown name is "
            "dropped and reported; … A declaration where no tool resolves fails.' "
            "guide/agen..."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; the tutorial's `.contenox/agents/reviewer.md` "
            "(tools: read_file, write_file); `contenox agent list` prints on stderr 'refused  "
            "…/.contenox/agents/reviewer.md: agentdecl: none of this declaration's tools "
            "resolve to anything connected here: read_file, write_file. contenox hosts "
            "local_fs, local_shell, webtools and git; …' — the `reviewer` row it lists is the "
            'one init seeded in ~/.contenox/agents/ (tools: "*", posture: read_only)'
        ),
        promised=(
            'guide/tutorials/first-agent.md:40 "That is the whole agent."\n'
            'guide/tutorials/first-agent.md:48 "reviewer  discovered"'
        ),
        observed="'refused  …/reviewer.md: … none of this declaration's tools resolve …'",
        bears_on=(
            'guide/agents.md:94-97 "Tool names resolved out of the box: Read, Write, Edit, Bash, '
            'PowerShell, Glob, Grep, WebFetch. … A declaration where no tool resolves fails."',
        ),
        docs_disagree=True,
    ),
    script=UNASKED,
    files={".contenox/agents/reviewer.md": REVIEWER},
    steps=[
        step(
            "agent",
            "list",
            notices_has=[
                "reviewer.md: agentdecl: none of this declaration's tools resolve to anything "
                "connected here: read_file, write_file"
            ],
        ),
    ],
)

# The control: the tutorial's file with only its tool names changed to two agents.md lists.
THE_FIRST_AGENT_WITH_RESOLVING_TOOLS_IS_LISTED = Case(
    name="first agent the tutorial s reviewer naming read and write is listed as discovered",
    script=UNASKED,
    files={
        ".contenox/agents/reviewer.md": REVIEWER.replace(
            "tools: read_file, write_file", "tools: Read, Write"
        )
    },
    steps=[
        step("agent", "list", stdout_has=[listed("reviewer")], notices_lacks=["refused"]),
    ],
)

# first-agent.md fires without --policy on a fresh home; the reference refuses
# a fire with neither --policy nor default-mission-policy, and so does the
# binary: the finding is for the tutorial.
THE_FIRST_AGENT_RUNS_AS_PRINTED = Case(
    name="first agent mission fire reviewer with wait as the tutorial prints it is refused for "
    "want of an envelope",
    files={".contenox/agents/reviewer.md": REVIEWER, "payments.go": "package payments\n"},
    steps=[
        step(
            "mission",
            "fire",
            "reviewer",
            "review payments.go",
            "--wait",
            "--timeout",
            "60s",
            exit_code=1,
            notices_has=["no mission envelope: pass --policy <policy>"],
        ),
        step("mission", "list", stdout_has=["No missions recorded"]),
    ],
    defect=Defect(
        title="first-agent.md fires the reviewer without --policy; the reference refuses a "
        "fire with no envelope",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: 'Error: no mission envelope:"
            " pass --policy <policy>, or set a default with …', exit 1; 'No "
            "missions recorded.' Note: Fresh home plus init, default-mission-"
            "policy empty. The binary keeps reference/contenox-cli.md:523 and "
            "guide/missions.md:44 ('the fire is refused rather than guessing'). "
            "guide/tutorials/first-agent.md:54 fires without --policy, and the "
            "page never sets the key. quickstart.md:135 does the same."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init` (no default-mission-policy set); `contenox "
            'mission fire reviewer "review payments.go" --wait --timeout 60s` exits 1 with '
            "'Error: no mission envelope: pass --policy <policy>, or set a default with "
            "`contenox config set default-mission-policy <policy>` — a mission must name the "
            "HITL policy that bounds it'; `contenox mission list`: 'No missions recorded.'"
        ),
        promised=(
            'reference/contenox-cli.md:523 "| `--policy` (`fire`)             | Envelope: the '
            "HITL policy bounding the unattended unit (default: `default-mission-policy` "
            'config) |"'
        ),
        observed="exit 1, 'Error: no mission envelope …', no mission",
        bears_on=(
            'guide/tutorials/first-agent.md:54 "contenox mission fire reviewer "review '
            'payments.go" --wait"',
            'guide/tutorials/first-agent.md:57 "Reading files is allowed under the default '
            'posture, so it runs without asking."',
            'guide/missions.md:44 "If neither is set, the fire is refused rather than guessing."',
        ),
        docs_disagree=True,
    ),
)

AGENTS_YOU_ALREADY_HAVE = Case(
    name="first agent a claude agent is found where it is prefixed and yours keeps its name",
    script=UNASKED,
    files={
        ".claude/agents/reviewer.md": declaration("reviewer", "Read, Write"),
        ".contenox/agents/mytriage.md": declaration("mytriage", "Read"),
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[listed("claude-code-reviewer"), listed("mytriage")],
            notices_lacks=["refused"],
        ),
    ],
)

A_TOOL_NOT_HOSTED_IS_NOT_CARRIED = Case(
    name="first agent a tool contenox does not host is not carried and the agent runs without it",
    script=UNASKED,
    files={".contenox/agents/searcher.md": declaration("searcher", "Read, WebSearch")},
    steps=[
        step(
            "agent",
            "list",
            stdout_has=[listed("searcher")],
            notices_has=[
                re.compile(
                    r"not carried\s+searcher: tools — resolves to nothing connected here; "
                    r"the agent runs without it"
                )
            ],
        ),
    ],
)


def _policy_of(name: str) -> Any:
    """What the tutorial shows of the policy behind agent ``name`` (its generated file)."""

    def read(instance: Instance) -> dict[str, Any]:
        path = instance.work / ".contenox" / ".generated" / f"hitl-policy-{name}.json"
        policy = json.loads(path.read_text(encoding="utf-8"))
        rules = policy["rules"]
        plain = {
            (r["tools"], r["tool"]): r["action"]
            for r in reversed(rules)  # the first unconditional rule wins
            if not r.get("when")
        }
        first = rules[0]
        return {
            "default_action": policy["default_action"],
            "first rule": (first["tools"], first["tool"], first["action"], first["when"]),
            "read_file": plain.get(("local_fs", "read_file")),
            "write_file": plain.get(("local_fs", "write_file")),
            "local_shell": plain.get(("local_shell", "local_shell")),
        }

    return read


CREDENTIALS = [{"key": "path", "op": "glob", "value": "**/{.ssh,.aws,.kube,.config/gcloud}/**"}]

THE_POLICY_BEHIND_IT = [
    Case(
        name=f"first agent the policy behind a declaration {how}",
        script=UNASKED,
        files={".contenox/agents/mine.md": declaration("mine", "Read, Write", *extra)},
        steps=[
            step("agent", "list", stdout_has=[listed("mine")]),
            probe(
                "the generated policy, as the tutorial shows it",
                _policy_of("mine"),
                expect={
                    "default_action": "approve",
                    "first rule": ("local_fs", "*", "deny", CREDENTIALS),
                    "read_file": "allow",
                    "write_file": write,
                    "local_shell": "approve",
                },
            ),
        ],
    )
    for how, extra, write in [
        ("denies credentials first allows reads and asks for writes and the shell", (), "approve"),
        (
            "with accept edits allows writes and still asks for the shell",
            ("permissionMode: acceptEdits",),
            "allow",
        ),
    ]
]

# ------------------------------------------------------------------- A recurring job

# `.contenox/agents/timesheet.md`, verbatim from guide/tutorials/recurring-work.md.
TIMESHEET = """\
---
name: timesheet
description: Files this week's tracked hours to the timesheet system
tools: read_file, write_file
---

You file weekly timesheets.

Read the tracked hours for the current week. Present the week as a table —
date, project, hours, note — and wait for the person to approve it. Submit only
the rows they approved. When the submission succeeds, write a one-line
confirmation to `reports/timesheet-<week>.md`.

If the hours do not add up or a project code is missing, stop and say so
rather than guessing.
"""

THE_TIMESHEET_AGENT_IS_LISTED = Case(
    name="recurring job the timesheet agent saved in agents is listed with no build step",
    defect=Defect(
        title="the recurring-work tutorial's timesheet declaration is refused: read_file and "
        "write_file resolve to nothing",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: exit 0; 'refused /tmp/…/.contenox/agents/timesheet.md: agentdecl: "
            "none of this declaration's tools resolve to anything connected here: read_file, "
            "write_file. contenox hosts local_fs, local_shell, webtools and git; …'; the table "
            "lists triage, run, reviewer, researcher, chat, change, chain-acpx, chain-acp, "
            "agent-planner, and no timesheet Note: Reproduces as written. The nearest line for the"
            " binary is reference/agents-config.md:575-576 / guide/agents.md:101 (\"A declaration's"
            ' `tools:` line is read through this table"). The [tools] table `init` ships maps '
            "Read/Write/Edit/Bash… but has no bare read_file/write_file entry. Still, the same "
            "reference page calls read_file/write_file the canonical local_fs tools and says "
            '"Overlays merge, so na...'
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; the tutorial's `.contenox/agents/timesheet.md` "
            "(tools: read_file, write_file); `contenox agent list` lists no timesheet and "
            "prints 'refused  …/timesheet.md: agentdecl: none of this declaration's tools "
            "resolve to anything connected here: read_file, write_file. …'"
        ),
        promised=(
            'guide/tutorials/recurring-work.md:57 "That is the whole registration"\n'
            'guide/tutorials/recurring-work.md:66 "timesheet  discovered"'
        ),
        observed="'refused  …/timesheet.md: … none of this declaration's tools resolve …'",
        bears_on=(
            'guide/tutorials/recurring-work.md:70-71 "The names resolved out of the box are the '
            'local ones"',
        ),
    ),
    script=UNASKED,
    files={".contenox/agents/timesheet.md": TIMESHEET},
    steps=[step("agent", "list", stdout_has=[listed("timesheet")], notices_lacks=["refused"])],
)


SKILL = """\
---
name: timesheet
description: File this week's hours to the timesheet system
---

Read the tracked hours, present the week for approval, submit the approved
rows, then write the confirmation note.
"""

OFFICE = """\
---
name: office
description: Handles recurring office work
---

You handle recurring work.

{{skills}}
"""

FINISH = Script(turns=[Turn(tool_calls=[mission_finish("landed")]), "Mission finished."])


def _skills_block(instance: Instance) -> list[str]:
    """The lines of the office agent's system prompt from the skills preamble on."""
    for prompt in probes.system_prompts(instance):
        if "Skills are procedures" in prompt:
            tail = prompt[prompt.index("Skills are procedures") :]
            return [line for line in tail.splitlines() if line.strip()][:2]
    return []


SKILLS_IN_THE_PROMPT = [
    Case(
        name=f"recurring job a skill {how} is listed by the skills macro in the agent's prompt",
        script=FINISH,
        files={".contenox/agents/office.md": OFFICE, path: text},
        steps=[
            step("run", "office", "file my hours", "--policy", "default", "--timeout", "60s"),
            probe(
                "the skills catalogue in the office agent's prompt",
                _skills_block,
                expect=[
                    "Skills are procedures for repeated work. When a request matches one, "
                    "read its file before starting, then follow it.",
                    f"- timesheet: {description} — read {path}",
                ],
            ),
        ],
    )
    for how, path, text, description in [
        (
            "file with frontmatter",
            ".contenox/skills/timesheet.md",
            SKILL,
            "File this week's hours to the timesheet system",
        ),
        (
            "folder with a SKILL file",
            ".contenox/skills/timesheet/SKILL.md",
            SKILL,
            "File this week's hours to the timesheet system",
        ),
        (
            "without frontmatter",
            ".contenox/skills/timesheet.md",
            "File the week's hours.\n\nRead them, then submit.\n",
            "File the week's hours.",
        ),
    ]
]


# ----------------------------------------------------- An agent that files notes into Obsidian

# `.contenox/chain-agent-vaultfiler.json` and `.contenox/hitl-policy-vault.json`, verbatim from
# guide/tutorials/vault-agent.md (a long line continues with a backslash).
VAULT_CHAIN = """\
{
  "$schema": "https://contenox.com/schema/task-chain.schema.json",
  "id": "vaultfiler",
  "description": "Reads every file in inbox/ and files each one into an Obsidian vault as \
a note.",
  "token_limit": 131072,
  "tasks": [
    {
      "id": "file_notes",
      "handler": "chat_completion",
      "system_instruction": "You file raw notes into an Obsidian vault.\\n\\nThe folder \
`inbox/` holds raw text files. The folder `vault/` is an Obsidian vault.\\n\\nDo this, \
using your tools:\\n1. Run `ls inbox` over the shell to see every file.\\n2. For EACH \
file: read it, then write ONE note into `vault/`.\\n\\nEach note you write must be a \
markdown file named after its topic in Title Case (e.g. `vault/Connection Pool \
Exhaustion.md`) and must contain, in this order:\\n- YAML frontmatter delimited by --- \
lines, with `source:` set to the inbox filename it came from, and `tags:` as a YAML list \
of 2-4 lowercase topic tags.\\n- An `## Summary` section: two or three sentences in your \
own words.\\n- An `## Details` section: the concrete facts, as bullets. Keep names, \
numbers and settings exactly as written.\\n- An `## Open questions` section, only when \
the source leaves something genuinely unresolved.\\n\\nWrite one note per inbox file. Do \
not modify anything in `inbox/`. When every file has a note, reply with a one-line \
summary of what you filed and stop.",
      "execute_config": {
        "model": "{{var:model}}",
        "provider": "{{var:provider}}",
        "tools": ["local_fs", "local_shell"],
        "tools_policies": {
          "local_fs": { "_allowed_dir": ".", "_max_read_bytes": "262144" }
        },
        "max_tokens": 8192
      },
      "transition": {
        "branches": [
          { "operator": "edge_traversed_at_least", "edge": "file_notes->run_tools", \
"when": "24", "goto": "end" },
          { "operator": "equals", "when": "tool_call", "goto": "run_tools" },
          { "operator": "default", "when": "", "goto": "end" }
        ]
      }
    },
    {
      "id": "run_tools",
      "handler": "execute_tool_calls",
      "transition": {
        "branches": [ { "operator": "default", "when": "", "goto": "file_notes" } ]
      }
    }
  ]
}
"""

VAULT_POLICY = """\
{
  "$schema": "https://contenox.com/schema/hitl-policy-v1.schema.json",
  "default_action": "deny",
  "rules": [
    { "tools": "local_fs", "tool": "read_file",  "action": "allow" },

    { "tools": "local_shell", "tool": "local_shell", "action": "allow",
      "when": [ { "key": "command", "op": "command_prefix_allowlist", "value": "ls" } ] },

    { "tools": "local_fs", "tool": "write_file", "action": "allow",
      "when": [ { "key": "path", "op": "glob", "value": "**/vault/**" } ] },

    { "tools": "local_fs", "tool": "write_file", "action": "deny" }
  ],
  "compute": { "maxToolCalls": 40, "maxTokens": 400000, "onExhausted": "finish_stuck" }
}
"""

# The mission envelope of guide/tutorials/mission-agent.md, step 5.
MISSION_POLICY = """\
{
  "$schema": "https://contenox.com/schema/hitl-policy-v1.schema.json",
  "default_action": "deny",
  "rules": [
    { "tools": "mission",  "tool": "*",          "action": "allow" },
    { "tools": "local_fs", "tool": "read_file",  "action": "allow" },
    { "tools": "local_shell", "tool": "local_shell", "action": "allow",
      "when": [ { "key": "command", "op": "command_prefix_allowlist", "value": "ls" } ] },
    { "tools": "local_fs", "tool": "write_file", "action": "allow",
      "when": [ { "key": "path", "op": "glob", "value": "**/vault/**" } ] },
    { "tools": "local_fs", "tool": "write_file", "action": "deny" }
  ],
  "compute":   { "maxToolCalls": 40, "maxTokens": 400000, "onExhausted": "finish_stuck" },
  "attention": { "allowAgentAnswers": true, "maxAgentAnswers": 3 }
}
"""

MEETING = """\
Call with Dana, 3 March.
Postgres connection pool is exhausting under load - pgbouncer sits in session mode,
should be transaction mode. Dana owns the change, wants it behind a flag.
Also: the nightly backup job overlaps the ETL window. Move backup to 02:00 UTC.
"""
NOTE_PATH = "vault/Postgres Connection Pool Exhaustion.md"
NOTE = "---\nsource: meeting-notes.txt\ntags:\n  - postgres\n---\n\n## Summary\nPool.\n"

VAULT_FILES = {
    "inbox/meeting-notes.txt": MEETING,
    "vault/.keep": "",
    ".contenox/chain-agent-vaultfiler.json": VAULT_CHAIN,
    ".contenox/hitl-policy-vault.json": VAULT_POLICY,
}
LS_INBOX = ToolCall("local_shell", {"command": "ls", "args": ["inbox"]})
READ_MEETING = ToolCall("read_file", {"path": "inbox/meeting-notes.txt"})
WRITE_NOTE = ToolCall("write_file", {"path": NOTE_PATH, "content": NOTE})


def listing(folder: str) -> Any:
    """The names in a workspace folder, as `ls` shows them."""

    def read(instance: Instance) -> list[str]:
        return sorted(p.name for p in (instance.work / folder).iterdir() if p.name != ".keep")

    return read


ACTIVATE = step(
    "config",
    "set",
    "default-mission-policy",
    "hitl-policy-vault.json",
    stdout_has=["default-mission-policy = hitl-policy-vault.json"],
)

# vault-agent.md prints `(workspace)`; config.md (the reference) lists
# default-mission-policy as a global key. The binary says `(global)`, as the
# reference does: the finding is for the tutorial.
THE_ENVELOPE_IS_ACTIVATED_FOR_THE_WORKSPACE = Case(
    name="vault agent activating the envelope sets the global default mission policy",
    script=UNASKED,
    files=VAULT_FILES,
    steps=[
        step(
            "config",
            "set",
            "default-mission-policy",
            "hitl-policy-vault.json",
            stdout_has=[
                re.compile(r"default-mission-policy = hitl-policy-vault\.json\s+\(global\)")
            ],
        )
    ],
    defect=Defect(
        title="vault-agent.md says default-mission-policy is set for the workspace; config.md "
        "lists it as a global key",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: '✓  default-mission-policy ="
            " hitl-policy-vault.json  (global)' Note: Reproduced as written. The "
            "binary agrees with reference/config.md:115 ('| `default-mission-"
            "policy` | global |') and reference/contenox-cli.md:425 (it is listed"
            " under 'Valid global keys'). Only guide/tutorials/vault-"
            "agent.md:224/227 show '(workspace)'."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init` in the workspace; `contenox config set "
            "default-mission-policy hitl-policy-vault.json` prints '✓  default-mission-policy "
            "= hitl-policy-vault.json  (global)'"
        ),
        promised=(
            'reference/config.md:115 "| `default-mission-policy` | global | Envelope (HITL '
            "policy) both `/mission` and `contenox mission fire --policy` fall back to when "
            'none is named |"'
        ),
        observed="'✓  default-mission-policy = hitl-policy-vault.json  (global)'",
        bears_on=(
            'guide/tutorials/vault-agent.md:224 "✓  default-mission-policy = '
            'hitl-policy-vault.json  (workspace)"',
            'guide/tutorials/vault-agent.md:227 "`(workspace)` confirms it applies here and '
            'not to your other projects."',
        ),
        docs_disagree=True,
    ),
)

THE_VAULT_FILES_PASS_VET = Case(
    name="vault agent the chain and the envelope pass vet",
    script=UNASKED,
    files=VAULT_FILES,
    steps=[
        step("vet", ".contenox/chain-agent-vaultfiler.json", stdout_has=["ok"]),
        step("vet", ".contenox/hitl-policy-vault.json", stdout_has=["ok"]),
    ],
)

THE_VAULT_AGENT_IS_DISCOVERED = Case(
    name="vault agent the chain saved as chain agent vaultfiler is the agent vaultfiler",
    script=UNASKED,
    files=VAULT_FILES,
    steps=[step("agent", "list", stdout_has=[listed("vaultfiler")])],
)

FIRE_VAULT = (
    "mission",
    "fire",
    "vaultfiler",
    "File everything in inbox/ into the vault.",
    "--wait",
    "--timeout",
    "60s",
)
FIRED = 'Mission fired at agent "vaultfiler" under envelope "hitl-policy-vault.json"'
# contenox cuts the exhausted script's path at a width, so the scratch root's length decides
# where: the cut path is redacted whole.
CUT_PATH = {r'script "[^"\n]*…': 'script "[CUT PATH]…'}
FILES_THE_NOTE = Script(
    turns=[
        Turn(text="Listing the inbox.", tool_calls=[LS_INBOX]),
        Turn(text="Reading it.", tool_calls=[READ_MEETING]),
        Turn(text="Filing it.", tool_calls=[WRITE_NOTE]),
        "Filed 1 note: Postgres Connection Pool Exhaustion.",
    ],
    # The chain has no mission tools: after the reply the mission drive loop asks again.
    runs_past_end=True,
)

THE_VAULT_AGENT_FILES_A_NOTE = Case(
    name="vault agent fired under the activated envelope writes its note into the vault",
    script=FILES_THE_NOTE,
    redact=CUT_PATH,
    files=VAULT_FILES,
    steps=[ACTIVATE, step(*FIRE_VAULT, exit_code=None, stdout_has=[FIRED])],
    probes=[
        probe("vault/", listing("vault"), expect=["Postgres Connection Pool Exhaustion.md"]),
        probe("inbox/", listing("inbox"), expect=["meeting-notes.txt"]),
    ],
)


def _vault_mission_status(instance: Instance) -> list[str]:
    return [m.status for m in missions(instance)]


# vault-agent.md step 6 shows the vaultfiler mission (no mission toolset) reach
# `landed`; mission-agent.md says the same chain without `mission` stays open.
# It cannot call mission_finish, so it does not land: after its reply the drive
# loop prompts it again (the scripted dialog is then exhausted and the mission
# ends derailed). The case asserts that it does not land.
THE_VAULT_MISSION_LANDS = Case(
    name="vault agent fired with wait does not land without the mission toolset",
    script=FILES_THE_NOTE,
    redact=CUT_PATH,
    files=VAULT_FILES,
    steps=[
        ACTIVATE,
        step(*FIRE_VAULT, exit_code=None, stdout_has=[FIRED], stdout_lacks=["landed"]),
    ],
    probes=[
        probe(
            "mission statuses",
            _vault_mission_status,
            expect=satisfies(lambda st: len(st) == 1 and st[0] != "landed", "one, not landed"),
        )
    ],
    defect=Defect(
        title="vault-agent.md shows the vaultfiler mission landed; mission-agent.md says the "
        "same chain without the mission toolset never ends",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: docs disagree. Saw: vault tutorial files "
            "verbatim (vet ok), dialog ls/read/write/'Filed 1 note…': "
            "vault/meeting-notes.md written, then 'finished: derailed — unit turn"
            " failed: … scripted-test script … is exhausted: chat asked for turn "
            "4 but the script holds 4 turn(s)', exit 1 Note: Added --timeout 60s;"
            " config set default-mission-policy landed in global scope here (the "
            "tutorial shows workspace). The chain's tools are [local_fs, "
            "local_shell], so it has no mission_finish and cannot land: the "
            "binary follows mission-agent.md:105; vault-agent.md:242 'Status: "
            "landed' disagrees."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; the vault tutorial's files "
            "(`.contenox/chain-agent-vaultfiler.json`, tools local_fs and local_shell, no "
            "mission toolset; `.contenox/hitl-policy-vault.json`; inbox/meeting-notes.txt); "
            "`contenox config set default-mission-policy hitl-policy-vault.json`; a "
            "scripted-test default backend whose dialog lists the inbox, reads the note, "
            "writes the vault note and replies 'Filed 1 note…'; `contenox mission fire "
            'vaultfiler "File everything in inbox/ into the vault." --wait --timeout 60s`: the '
            "note is written, then the drive loop prompts the unit again; with the dialog "
            "exhausted it ends 'finished: derailed — unit turn failed: … is exhausted', exit 1 "
            "— never landed"
        ),
        promised=(
            'guide/tutorials/mission-agent.md:105 "**A mission with no `mission_finish` never '
            'ends.** It sits at `open` with a"'
        ),
        observed="the mission does not land (derailed once the scripted dialog runs out)",
        bears_on=('guide/tutorials/vault-agent.md:242 "Status: landed  (18s)"',),
        docs_disagree=True,
    ),
)

THE_VAULT_FENCE_HOLDS = Case(
    name="vault agent a write into the inbox is denied by the envelope and nothing is written",
    redact=CUT_PATH,
    script=Script(
        turns=[
            Turn(
                text="Writing it.",
                tool_calls=[ToolCall("write_file", {"path": "inbox/draft.md", "content": "hello"})],
            ),
            "The write_file call for inbox/draft.md was denied by the active policy.",
        ],
        runs_past_end=True,
    ),
    files=VAULT_FILES,
    steps=[
        ACTIVATE,
        step(
            "mission",
            "fire",
            "vaultfiler",
            "Write a file named draft.md directly inside the inbox folder with the text hello.",
            "--wait",
            "--timeout",
            "60s",
            exit_code=None,
            stdout_has=[FIRED],
        ),
    ],
    probes=[probe("inbox/", listing("inbox"), expect=["meeting-notes.txt"])],
)

# -------------------------------------------------------------------- A mission agent

UNATTENDED = """

You are running UNATTENDED: nobody is reading this conversation, so prose
reaches no one. You reach your operator only through your mission tools.

When every file has a note, call mission.mission_report with a `result` naming
each note you wrote, then call mission.mission_finish with `landed`. If you
cannot finish, call mission.mission_finish with `derailed` or `stuck` and say why.
"""


def mission_chain() -> str:
    """The vault chain with the mission toolset granted and the unattended instruction."""
    chain = json.loads(VAULT_CHAIN)
    task = chain["tasks"][0]
    task["execute_config"]["tools"] = ["local_fs", "local_shell", "mission"]
    task["system_instruction"] += UNATTENDED
    return json.dumps(chain, indent=2)


def _refusals(instance: Instance) -> list[str]:
    """The first four sentences of each policy refusal a tool call got, across every run."""
    seen: list[str] = []
    for run in probes.captured_requests(instance):
        for unit in probes.captured_units(instance, run):
            for message in unit.output_messages:
                text = message.content
                if message.role == "tool" and "Denied by the active policy" in text:
                    start = text.index("Denied by the active policy")
                    sentences = text[start:].split(". ")[:4]
                    if ". ".join(sentences) + "." not in seen:
                        seen.append(". ".join(sentences) + ".")
    return seen


MISSION_FILES = {
    **VAULT_FILES,
    ".contenox/chain-agent-vaultfiler.json": mission_chain(),
    ".contenox/hitl-policy-vault.json": MISSION_POLICY,
}
FIRE_MISSION = ("mission", "fire", "vaultfiler")
WITH_POLICY = ("--policy", "hitl-policy-vault.json", "--wait", "--timeout", "60s")

THE_MISSION_AGENT_LANDS = Case(
    name="mission agent with the mission toolset files its note reports and lands",
    script=Script(
        turns=[
            Turn(text="Filing it.", tool_calls=[WRITE_NOTE]),
            Turn(
                text="Reporting.",
                tool_calls=[mission_report("result", f"wrote {NOTE_PATH}")],
            ),
            Turn(tool_calls=[mission_finish("landed")]),
            "Mission finished.",
        ]
    ),
    files=MISSION_FILES,
    steps=[
        step(
            *FIRE_MISSION,
            "File every file in inbox/ into the vault as a note",
            *WITH_POLICY,
            stdout_has=[FIRED, "landed", f"wrote {NOTE_PATH}"],
        ),
        step(
            "mission",
            "list",
            stdout_has=[re.compile(r"vaultfiler\s+hitl-policy-vault\.json\s+landed")],
        ),
    ],
    probes=[probe("vault/", listing("vault"), expect=["Postgres Connection Pool Exhaustion.md"])],
)

FENCE_SCRIPT = Script(
    turns=[
        Turn(
            text="Attempting the write.",
            tool_calls=[ToolCall("write_file", {"path": "escape.md", "content": "out"})],
        ),
        Turn(tool_calls=[mission_finish("stuck")]),
        "Mission finished.",
    ]
)
FENCE_STEP = step(
    *FIRE_MISSION,
    "Write a file named escape.md in the workspace root, NOT inside vault/. Attempt the write.",
    *WITH_POLICY,
    exit_code=None,
    stdout_has=[FIRED, "stuck"],
)

THE_MISSION_FENCE_HOLDS = Case(
    name="mission agent a write outside the vault is denied and the file is not created",
    script=FENCE_SCRIPT,
    files=MISSION_FILES,
    steps=[FENCE_STEP],
    probes=[probe("workspace root", lambda i: (i.work / "escape.md").exists(), expect=False)],
)

# mission-agent.md's refusal, as the page prints it (rules numbered from 0: the
# fifth rule, write_file deny, is rule 4). v1.0.0 adds a second full stop.
_CATEGORICAL_DENY = (
    "Denied by the active policy hitl-policy-vault.json (rule 4). This is the envelope "
    "refusing the capability, not a transient error and not a judgement about this "
    "particular call. Do not retry it and do not attempt another route to the same effect. "
    "Either continue with the work you can still do, or stop and report that you are "
    "blocked on this."
)

# The tutorial writes its policy as the workspace's .contenox/hitl-policy-vault.json
# (vault-agent.md:173). A unit never loads it there: it gates on the default
# envelope and the write's refusal is the unattended answerer's. The control is
# the same file in ~/.contenox, where the categorical deny comes back.
THE_REFUSAL_NAMES_THE_ENVELOPE = [
    Case(
        name=name,
        script=FENCE_SCRIPT,
        files={k: v for k, v in MISSION_FILES.items() if not (home and "hitl-policy" in k)},
        home_files={"hitl-policy-vault.json": MISSION_POLICY} if home else {},
        steps=[
            FENCE_STEP,
            probe(
                "the refusal the model was sent",
                _refusals,
                expect=satisfies(
                    lambda rs: len(rs) == 1 and _CATEGORICAL_DENY in rs[0],
                    "one refusal: the categorical deny of rule 4",
                ),
            ),
        ],
        **extra,
    )
    for name, home, extra in (
        (
            "mission agent a denied call comes back naming the envelope and saying not to retry",
            False,
            {
                "defect": Defect(
                    title="a hand-written policy in the workspace .contenox/ is not what a "
                    "mission unit gates on; its refusal is the unattended answerer's",
                    second_reading=(
                        "2026-12-01, a second reader with only this text and the docs, in a fresh "
                        "scratch home: docs disagree. Saw: workspace: unit log 'hitl: policy "
                        '"hitl-policy-vault.json" unreadable, gating on default '
                        '"hitl-policy-default.json" instead: … open '
                        "<HOME>/.contenox/.generated/hitl-policy-vault.json: no such file'; "
                        "acp_permission outcome=selected option_id=deny; state show --raw: 'User "
                        "denied the operation. Please ask for clarification or try a different, "
                        "less destructive approach.'; escape.md not created; finished: stuck. "
                        "Control: change_data=hitl-policy-vault.json, 'Denied by the active "
                        "policy hitl-policy-... Note: The resolution defect itself is clear "
                        "against the reference: the unit never searches the workspace .contenox/ "
                        "(the log names only ~/.contenox/.generated). But the same tutorial's "
                        "step 7 (lines 268-274) describes the ask-then-deny outcome the report "
                        "calls wrong. Lines 120-129 and 268-274 disagree with each other, and "
                        "config.md:135 sides with the report on resolution. I give 'docs "
                        "disagree' becau..."
                    ),
                    reproduce=(
                        "in a scratch HOME, `contenox init`; the workspace's "
                        "`.contenox/hitl-policy-vault.json` holding mission-agent.md's policy "
                        "(default deny; rules: mission * allow, local_fs read_file allow, "
                        "local_shell allow when command_prefix_allowlist ls, local_fs "
                        "write_file allow when path glob **/vault/**, local_fs write_file "
                        "deny); the tutorial's `.contenox/chain-agent-vaultfiler.json` with the "
                        "mission toolset; a scripted-test default backend whose dialog calls "
                        "`write_file {path: escape.md, content: out}`, then `mission_finish "
                        'stuck`, a text turn; `contenox mission fire vaultfiler "Write a file '
                        'named escape.md in the workspace root…" --policy '
                        "hitl-policy-vault.json --wait --timeout 60s`: `contenox state show "
                        "<request id> --raw` shows the tool result 'User denied the operation. "
                        "Please ask for clarification or try a different, less destructive "
                        "approach.' The same file as ~/.contenox/hitl-policy-vault.json: 'Denied "
                        "by the active policy hitl-policy-vault.json (rule 4). …'"
                    ),
                    promised=(
                        'guide/tutorials/mission-agent.md:120-121 "A categorical deny tells '
                        "the agent which envelope decided, and that a workaround is not "
                        'available:"'
                    ),
                    observed="'User denied the operation. Please ask for clarification or "
                    "try a different, less destructive approach.'",
                    bears_on=(
                        'guide/tutorials/vault-agent.md:173 "`.contenox/hitl-policy-vault.json`:"',
                        'guide/hitl.md:379-380 "A top-level hitl-policy-<name>.json in the '
                        'workspace .contenox/, then ~/.contenox/, wins if it is there."',
                        # The reference, the contract: the workspace copy is read first.
                        'reference/config.md:135-136 "**Your own file** — a top-level '
                        "`hitl-policy-<name>.json` in the workspace `.contenox/`, then "
                        '`~/.contenox/`."',
                        # The tutorial's own step 7 prints the ask-then-deny this case
                        # observes; its second reader read that as docs disagree, but the
                        # reference above sides with the categorical deny.
                        'guide/tutorials/mission-agent.md:271-272 "hitl "ask raised"      '
                        'tool=write_file hitl acp_permission    outcome=selected  option_id=deny"',
                    ),
                )
            },
        ),
        (
            "mission agent with the policy in the home a denied call names the envelope and "
            "says not to retry",
            True,
            {},
        ),
    )
]
