"""agents.toml, the contract page: contenox-docs/reference/agents-config.md, read line by line.

What a layer of agents.toml did is read from what contenox compiled out of it:
the chain (`.contenox/.generated/chain-agent-<name>.json`) and the policy
(`.contenox/.generated/hitl-policy-<name>.json`) that `contenox agent list`
writes into the workspace for each declaration there, and what `agent list`
prints. A chain's main-stage bound is its first task's
`edge_traversed_at_least` branch (`main_rounds`), the recovery stage's is
`recovery_rounds`; `think` and the admitted `tools` sit in each task's
`execute_config`. Envelopes and their keys are in cases/test_envelopes.py.
"""

from __future__ import annotations

import json

from harness import Case, Defect, Instance, probe, step, write
from harness.case import Probe, Step

BODY = "You check one thing and say what you found."


def _decl(name: str, frontmatter: str = "tools: Read") -> str:
    """A declaration with a name, a description and ``frontmatter``'s extra lines."""
    return (
        f"---\nname: {name}\ndescription: Checks one thing for {name}\n{frontmatter}\n---\n\n"
        f"{BODY}\n"
    )


def _generated(instance: Instance, name: str) -> dict[str, object]:
    path = instance.work / ".contenox" / ".generated" / name
    assert path.is_file(), f"agent list wrote no {path.name} into .contenox/.generated"
    doc: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _bound(task: dict[str, object]) -> str | None:
    """The `edge_traversed_at_least` bound of a task's transition, if it has one."""
    transition = task.get("transition")
    assert isinstance(transition, dict)
    for branch in transition.get("branches", []):
        if branch.get("operator") == "edge_traversed_at_least":
            return str(branch.get("when"))
    return None


def compiled_chain(instance: Instance, agent: str) -> dict[str, object]:
    """The budgets, routing, effort and toolsets of ``agent``'s compiled chain."""
    chain = _generated(instance, f"chain-agent-{agent}.json")
    tasks = chain["tasks"]
    assert isinstance(tasks, list)
    main, recovery = tasks[0], next(t for t in tasks if t["id"] == f"{agent}-recovery")
    config = main["execute_config"]
    return {
        "token_limit": chain.get("token_limit"),
        "main_rounds": _bound(main),
        "recovery_rounds": _bound(recovery),
        "think": config.get("think"),
        "model": config.get("model"),
        "provider": config.get("provider"),
        "max_tokens": config.get("max_tokens"),
        "tools": config.get("tools"),
    }


def _chain_probe(agent: str, **want: object) -> Probe:
    """A probe of ``agent``'s compiled chain whose named fields must equal ``want``."""

    def read(instance: Instance) -> dict[str, object]:
        got = compiled_chain(instance, agent)
        return {k: got[k] for k in want}

    return probe(f"compiled chain of {agent}", read, expect=want)


def _list(*names: str) -> Step:
    """`contenox agent list` names every declared agent and reports nothing about them."""
    return step("agent", "list", stdout_has=list(names), notices_lacks=list(names))


# ------------------------------------------------------------------ where it lives, which wins

# agents-config.md:17-28: defaults < ~/.contenox < .contenox; a key a layer
# omits keeps the layer below's value. The home file sets both budgets, the
# workspace one of them: main is the workspace's, recovery the home's (not the
# binary's 10).
WORKSPACE_OVER_HOME = Case(
    name="the workspace agents.toml wins over the home one and a key it omits keeps the home value",
    home_files={"agents.toml": "[chain]\nmain_rounds = 40\nrecovery_rounds = 5\n"},
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents.toml": "[chain]\nmain_rounds = 50\n",
    },
    steps=[_list("plain")],
    probes=[_chain_probe("plain", main_rounds="50", recovery_rounds="5")],
)

# agents-config.md:22 "`[agents.<name>]` in either file — one agent, overriding
# the rest": a section in the weaker home file beats the workspace's root key,
# for that agent only.
PER_AGENT_OVER_BOTH_FILES = Case(
    name="a per agent section in the home file overrides the workspace root for that agent only",
    home_files={"agents.toml": "[agents.pinned.chain]\nmain_rounds = 30\n"},
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents/pinned.md": _decl("pinned"),
        ".contenox/agents.toml": "[chain]\nmain_rounds = 50\n",
    },
    steps=[_list("plain", "pinned")],
    probes=[
        _chain_probe("pinned", main_rounds="30"),
        _chain_probe("plain", main_rounds="50"),
    ],
)

# agents-config.md:24 "stronger than any of them, the values a declaration
# actually states" (and :91, a declaration's `effort` overrides `think`). The
# agent section says medium, the root low; the declaration's high wins. The
# agent that states no effort is the control: it gets the root's low.
DECLARATION_OVER_EVERY_LAYER = Case(
    name="a declaration s effort wins over think in every agents toml layer",
    home_files={"agents.toml": '[chain]\nthink = "minimal"\n'},
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents/keen.md": _decl("keen", "tools: Read\neffort: high"),
        ".contenox/agents.toml": (
            '[chain]\nthink = "low"\n\n[agents.keen.chain]\nthink = "medium"\n'
        ),
    },
    steps=[_list("plain", "keen")],
    probes=[_chain_probe("keen", think="high"), _chain_probe("plain", think="low")],
)

# agents-config.md:29 and :574: an overlay's `[tools]` adds a name; the
# built-in `Read` still resolves to local_fs beside it.
TOOLS_OVERLAY = Case(
    name="naming one tool under tools keeps the built in names",
    files={
        ".contenox/agents/keen.md": _decl("keen", "tools: Read, WebSearch"),
        ".contenox/agents.toml": '[tools]\nWebSearch = "native-echo.echo"\n',
    },
    steps=[_list("keen")],
    probes=[_chain_probe("keen", tools=["local_fs", "native-echo", "mission"])],
)


SECRETS = "**/secrets/**"


def _is_secrets_deny(rule: dict[str, object]) -> bool:
    when = rule.get("when") or []
    assert isinstance(when, list)
    return rule["action"] == "deny" and any(w.get("value") == SECRETS for w in when)


def _is_own_allow(rule: dict[str, object]) -> bool:
    return (rule["action"], rule["tools"], rule["tool"], rule.get("when")) == (
        "allow",
        "local_fs",
        "*",
        None,
    )


def policy_heads(instance: Instance) -> dict[str, object]:
    """Agent → its emitted policy's first rule, and where its own local_fs grant sits."""
    out: dict[str, object] = {}
    for agent in ("plain", "editor"):
        rules = _generated(instance, f"hitl-policy-{agent}.json")["rules"]
        assert isinstance(rules, list) and rules, f"hitl-policy-{agent}.json has no rules"
        deny = next((i for i, r in enumerate(rules) if _is_secrets_deny(r)), None)
        allow = next((i for i, r in enumerate(rules) if _is_own_allow(r)), None)
        out[agent] = {
            "rule 0 is the root's secrets deny": deny == 0,
            "own local_fs grant": (
                "none"
                if allow is None
                else "after the deny"
                if deny is not None and allow > deny
                else "ahead of the deny"
            ),
        }
    return out


# agents-config.md:25 "stronger than everything, `policy.always_deny`", :73
# (an agent's always_allow appends after the root's) and :174 (emitted first,
# under every posture, in every emitted policy). `plain` grants itself all of
# local_fs; `editor` runs under another posture (acceptEdits → auto_edit).
ALWAYS_DENY_FIRST = Case(
    name="the root always_deny leads every agent s emitted policy ahead of the agent s own grant",
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents/editor.md": _decl(
            "editor", "tools: Read, Edit\npermissionMode: acceptEdits"
        ),
        ".contenox/agents.toml": (
            '[[policy.always_deny]]\ntools = "local_fs"\ntool = "*"\nwhen_key = "path"\n'
            'when_op = "glob"\nwhen_value = "**/secrets/**"\n\n'
            '[[agents.plain.policy.always_allow]]\ntools = "local_fs"\ntool = "*"\n'
        ),
    },
    steps=[_list("plain", "editor")],
    probes=[
        probe(
            "where the deny and the grant sit",
            policy_heads,
            expect={
                "plain": {
                    "rule 0 is the root's secrets deny": True,
                    "own local_fs grant": "after the deny",
                },
                "editor": {"rule 0 is the root's secrets deny": True, "own local_fs grant": "none"},
            },
        )
    ],
)


def no_agents_toml(instance: Instance) -> list[str]:
    """The agents.toml files that exist: neither the home's nor the workspace's."""
    where = [
        instance.home / ".contenox" / "agents.toml",
        instance.work / ".contenox" / "agents.toml",
    ]
    return [p.parent.parent.name + "/" + p.parent.name + "/" + p.name for p in where if p.exists()]


def _default_action(instance: Instance) -> object:
    return _generated(instance, "hitl-policy-plain.json").get("default_action")


# agents-config.md:19 and :31 "A missing file is skipped." Without `init`
# neither file exists; the declaration compiles on the defaults compiled into
# the binary — the [chain], [routing], [policy] and [policy.compute] defaults
# the tables at :89-155 state (`max_turns` 0 is not emitted: :163-165).
MISSING_FILES = Case(
    name="with no agents toml anywhere a declaration compiles on the binary s defaults",
    init=False,
    files={".contenox/agents/plain.md": _decl("plain")},
    steps=[_list("plain")],
    probes=[
        probe("agents.toml files present", no_agents_toml, expect=[]),
        _chain_probe(
            "plain",
            token_limit=131072,
            main_rounds="60",
            recovery_rounds="10",
            think="{{var:think}}",
            max_tokens="{{var:max_tokens|16384}}",
            model="{{var:model}}",
            provider="{{var:provider}}",
        ),
        probe("default_action emitted for plain", _default_action, expect="approve"),
        probe(
            "compute emitted for plain",
            lambda i: _generated(i, "hitl-policy-plain.json").get("compute"),
            expect={"maxToolCalls": 300, "maxTokens": 2000000, "onExhausted": "finish_stuck"},
        ),
    ],
)

# agents-config.md:31-33: a malformed file is an error, not a quiet change of
# what the agents are.
MALFORMED_WORKSPACE_FILE = Case(
    name="a malformed workspace agents toml is reported naming the file",
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents.toml": "[chain\nmain_rounds = 50\n",
    },
    steps=[step("agent", "list", notices_has=[".contenox/agents.toml"])],
    defect=Defect(
        title="a malformed agents.toml is reported nowhere: the agents vanish or go disabled",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: Before the edit: all 10 agents ENABLED true. After writing the "
            "malformed file: agent list rc=0, stderr empty, "
            "triage/run/reviewer/researcher/plain/chat/change/chain-acpx/chain-acp ENABLED false, "
            'agent-planner true. run: rc=1, stderr only \'Error: conflict: agent "run" is disabled;'
            " enable it with 'contenox agent enable \"run\"'' (no mention of agents.toml). After "
            "deleting the file: agent list rc=0, all nine still ENABLED false (stderr only the "
            "usual chain-acpx 'not carried' note). Fresh HOME with... Note: Reproduces exactly as "
            "written, every step. grep of the docs for malformed/parse error/disabled/agents.toml "
            "found no page that says a broken agents.toml may silently disable or drop agents; the"
            " binary's behaviour is not even the 'silent fall back to shipped values' the page "
            "rules out — it is worse (agents lost), and still silent. The persisting ENABLED false"
            " after the file is removed is an extra..."
        ),
        reproduce=(
            "in a scratch HOME and an empty workspace: `.contenox/agents/plain.md` holding "
            "`---` `name: plain` `description: Checks one thing` `tools: Read` `---` and a body; "
            "`contenox init`; `contenox agent list` lists every agent ENABLED true. Now write "
            "`.contenox/agents.toml` holding `[chain` and `main_rounds = 50` (an unclosed "
            "table header); `contenox agent list` exits 0 with nothing on stderr and lists "
            "plain, run, chat, change, triage, reviewer, researcher, chain-acp and chain-acpx "
            "ENABLED false (only agent-planner true). With a scripted-test backend set as the "
            'default, `contenox run --policy run --timeout 30s "check it"` exits 1 with '
            "'Error: conflict: agent \"run\" is disabled; enable it with 'contenox agent enable "
            "\"run\"'' — no word of agents.toml. Deleting the malformed file again leaves every "
            "agent ENABLED false on the next `agent list`. In a fresh scratch HOME with the "
            "malformed file written before `contenox init` (as this case does), `init` exits 0 "
            "and `agent list` exits 0, stderr empty, listing only agent-planner: neither plain "
            "nor the shipped agents"
        ),
        promised=(
            'reference/agents-config.md:31-33 "A malformed one is an error rather than a '
            "silent fall back to shipped values — an operator who edited a file and got the "
            'defaults anyway has been lied to."'
        ),
        observed=(
            "agent list: exit 0, stderr empty; the declared agents are missing (file there "
            "from the start) or ENABLED false (file broken later); run: 'agent \"run\" is disabled'"
        ),
        bears_on=(
            'reference/agents-config.md:80-81 "Editing this file regenerates every agent it '
            'affects on the next run; you do not have to touch the declaration."',
        ),
    ),
)


# ------------------------------------------------------------------ one agent at a time


def _policies(instance: Instance, agent: str) -> dict[str, dict[str, str]]:
    chain = _generated(instance, f"chain-agent-{agent}.json")
    tasks = chain["tasks"]
    assert isinstance(tasks, list)
    policies: dict[str, dict[str, str]] = tasks[0]["execute_config"].get("tools_policies", {})
    return policies


def carried_policies(instance: Instance) -> dict[str, object]:
    """What each agent's chain carries under `execute_config.tools_policies`."""
    narrow, wide, reader = (_policies(instance, a) for a in ("narrow", "wide", "reader"))
    shell = narrow.get("local_shell", {})
    return {
        "narrow toolsets": sorted(narrow),
        "narrow _allowed_commands": shell.get("_allowed_commands"),
        "narrow keeps the other shell knobs": {
            k: shell[k] == wide["local_shell"].get(k)
            for k in sorted(shell)
            if k != "_allowed_commands"
        },
        "narrow keeps local_fs": narrow.get("local_fs") == wide.get("local_fs"),
        "narrow native-echo": narrow.get("native-echo"),
        "reader toolsets": sorted(reader),
    }


# agents-config.md:67 (a per-agent tools_policies merges per knob), :112
# (free-form keys passed straight into execute_config.tools_policies), :116
# (only the toolsets an agent exposes are carried) and :133 (a table for a
# toolset you connect). `wide` is the control: the root's policy untouched.
TOOLS_POLICIES = Case(
    name="a per agent shell knob keeps the other knobs and only exposed toolsets are carried",
    files={
        ".contenox/agents/narrow.md": _decl("narrow", "tools: Read, Bash, Echo"),
        ".contenox/agents/wide.md": _decl("wide", "tools: Read, Bash, Echo"),
        ".contenox/agents/reader.md": _decl("reader", "tools: Read"),
        ".contenox/agents.toml": (
            '[tools]\nEcho = "native-echo.echo"\n\n'
            '[tools_policies.native-echo]\n_my_knob = "kept"\n\n'
            '[agents.narrow.tools_policies.local_shell]\n_allowed_commands = "git,go"\n'
        ),
    },
    steps=[_list("narrow", "wide", "reader")],
    probes=[
        probe(
            "tools_policies carried",
            carried_policies,
            expect={
                "narrow toolsets": ["local_fs", "local_shell", "native-echo"],
                "narrow _allowed_commands": "git,go",
                "narrow keeps the other shell knobs": {"_denied_commands": True},
                "narrow keeps local_fs": True,
                "narrow native-echo": {"_my_knob": "kept"},
                "reader toolsets": ["local_fs"],
            },
        )
    ],
)


def retries(instance: Instance) -> dict[str, object]:
    """Agent → the `retry_on_failure` its main task carries (absent reads 0)."""
    out: dict[str, object] = {}
    for agent in ("zero", "root"):
        tasks = _generated(instance, f"chain-agent-{agent}.json")["tasks"]
        assert isinstance(tasks, list)
        out[agent] = tasks[0].get("retry_on_failure", 0)
    return out


# agents-config.md:61 "`retry_on_failure = 0` under one agent genuinely means
# zero even when the root says three." `root` is the control: it gets three.
ZERO_OVERRIDES = Case(
    name="retry_on_failure zero under one agent means zero when the root says three",
    files={
        ".contenox/agents/zero.md": _decl("zero"),
        ".contenox/agents/root.md": _decl("root"),
        ".contenox/agents.toml": (
            "[chain]\nretry_on_failure = 3\n\n[agents.zero.chain]\nretry_on_failure = 0\n"
        ),
    },
    steps=[_list("zero", "root")],
    probes=[probe("retries per task", retries, expect={"zero": 0, "root": 3})],
)

# agents-config.md:80 "Editing this file regenerates every agent it affects on
# the next run; you do not have to touch the declaration."
EDIT_REGENERATES = Case(
    name="editing agents toml regenerates the agent on the next command without touching it",
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents.toml": "[chain]\nmain_rounds = 50\n",
    },
    steps=[
        _list("plain"),
        _chain_probe("plain", main_rounds="50"),
        write(".contenox/agents.toml", "[chain]\nmain_rounds = 45\n"),
        _list("plain"),
        _chain_probe("plain", main_rounds="45"),
    ],
)


# ------------------------------------------------------------------ [policy.compute], [routing]


def compute_of(agent: str) -> Probe:
    """A probe: the `compute` block of the policy emitted for ``agent``."""

    def read(instance: Instance) -> object:
        return _generated(instance, f"hitl-policy-{agent}.json").get("compute")

    return probe(f"compute emitted for {agent}", read)


def _max_turns(instance: Instance) -> object:
    compute = _generated(instance, "hitl-policy-plain.json").get("compute")
    assert isinstance(compute, dict), "hitl-policy-plain.json carries no compute block"
    return compute.get("maxTurns")


# agents-config.md:161-165: `max_turns` 1 drops the nudge and is emitted; a
# value above the two-prompt ceiling is not emitted.
MAX_TURNS = [
    Case(
        name=name,
        files={
            ".contenox/agents/plain.md": _decl("plain"),
            ".contenox/agents.toml": f"[policy.compute]\nmax_turns = {turns}\n",
        },
        steps=[_list("plain"), compute_of("plain")],
        probes=[probe("maxTurns emitted", _max_turns, expect=emitted)],
    )
    for name, turns, emitted in (
        ("max_turns one is emitted into the agent s policy", 1, 1),
        ("max_turns above the two prompt ceiling is not emitted", 5, None),
    )
]

# agents-config.md:617 "An unrecognised name is not an error: routing stays
# templated": pin_model on, and no [models] entry for the declaration's model.
PIN_UNRECOGNISED = Case(
    name="a pinned agent whose model no models entry names stays on the templates without an error",
    files={
        ".contenox/agents/named.md": _decl("named", "tools: Read\nmodel: mystery-model"),
        ".contenox/agents.toml": "[agents.named.routing]\npin_model = true\n",
    },
    steps=[_list("named")],
    probes=[_chain_probe("named", model="{{var:model}}", provider="{{var:provider}}")],
)


# ------------------------------------------------------------------ shipped knobs

SHIPPED_SHELL = {
    "_allowed_commands": (
        "ls,cat,echo,pwd,which,find,grep,git,go,python3,node,npm,make,cargo,curl,wget,jq"
    ),
    "_denied_commands": "sudo,su,dd,mkfs,fdisk,parted,shred",
}


def shipped_shell(instance: Instance) -> dict[str, str | None]:
    shell = _policies(instance, "sheller").get("local_shell", {})
    return {k: shell.get(k) for k in SHIPPED_SHELL}


# agents-config.md:119-131 "Shipped knobs:": the shell allowlist and denylist
# an agent with no agents.toml of its own gets from the shipped file.
SHIPPED_KNOBS = Case(
    name="an agent gets the shipped shell knobs the page lists",
    files={".contenox/agents/sheller.md": _decl("sheller", "tools: Read, Bash")},
    steps=[_list("sheller")],
    probes=[probe("shell knobs carried", shipped_shell, expect=SHIPPED_SHELL)],
    defect=Defect(
        title=(
            "the shipped shell allowlist is wider than the page's shipped knobs (rm, mv, chmod…)"
        ),
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME, empty workspace with "
            ".contenox/agents/sheller.md (name sheller, tools: Read, Bash). `contenox "
            "init`; `agent list` shows sheller (discovered). "
            ".contenox/.generated/chain-agent-sheller.json "
            "tasks[0].execute_config.tools_policies.local_shell: _allowed_commands = "
            "'ls,cat,head,tail,wc,sort,uniq,cut,tr,diff,echo,printf,pwd,w"
            "hich,find,grep,sed,awk,stat,file,basename,dirname,realpath,d"
            "u,date,env,xargs,tee,mktemp,mkdir,touch,cp,mv,rm,ln,chmod,ta"
            "r,gzip,gunzip,zip,unzip,patch,git,go,gofmt,python3,node,npm,"
            "make,cargo,curl,wget,jq' (53) and _denied_commands = "
            "'sudo,su,dd,mkfs,fdisk,parted,shred,mount,umount,chown,syste"
            "mctl,reboot,shutdown,halt,poweroff,useradd,usermod,passwd,iptables' (19); "
            "identical lines at ~/.contenox/agents.toml:93-94 [tools_policies.local_shell]. "
            "Note: agents-config..."
        ),
        reproduce=(
            "in a scratch HOME and an empty workspace: `.contenox/agents/sheller.md` holding "
            "`---` `name: sheller` `description: Checks one thing` `tools: Read, Bash` `---` and a "
            "body; `contenox init`; `contenox agent list`; "
            "`.contenox/.generated/chain-agent-sheller.json`'s first task carries "
            "`execute_config.tools_policies.local_shell._allowed_commands` = 'ls,cat,head,tail,wc,"
            "sort,uniq,cut,tr,diff,echo,printf,pwd,which,find,grep,sed,awk,stat,file,basename,"
            "dirname,realpath,du,date,env,xargs,tee,mktemp,mkdir,touch,cp,mv,rm,ln,chmod,tar,gzip,"
            "gunzip,zip,unzip,patch,git,go,gofmt,python3,node,npm,make,cargo,curl,wget,jq' and "
            "`_denied_commands` = 'sudo,su,dd,mkfs,fdisk,parted,shred,mount,umount,chown,"
            "systemctl,reboot,shutdown,halt,poweroff,useradd,usermod,passwd,iptables' — the same "
            "lines `contenox init` wrote into ~/.contenox/agents.toml"
        ),
        promised=(
            'reference/agents-config.md:121-124 "[tools_policies.local_shell] _allowed_commands = '
            '"ls,cat,echo,pwd,which,find,grep,git,go,python3,node,npm,make,cargo,curl,wget,jq" '
            '_denied_commands = "sudo,su,dd,mkfs,fdisk,parted,shred""'
        ),
        observed=(
            "an allowlist of 53 commands (adds head, tail, sed, awk, env, xargs, cp, mv, rm, ln, "
            "chmod, tar, patch, …) and a denylist of 19"
        ),
        bears_on=('reference/agents-config.md:119 "Shipped knobs:"',),
    ),
)

# agents-config.md:89 "**Must be positive**": a zero budget is refused, and so
# reported; v1.0.0 takes it the way it takes a malformed file (below).
ZERO_TOKEN_LIMIT = Case(
    name="a zero token_limit in agents toml is reported naming the key",
    files={
        ".contenox/agents/plain.md": _decl("plain"),
        ".contenox/agents.toml": "[chain]\ntoken_limit = 0\n",
    },
    steps=[step("agent", "list", notices_has=["token_limit"])],
    defect=Defect(
        title="a zero token_limit in agents.toml is reported nowhere; the declared agents vanish",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME + empty workspace with "
            ".contenox/agents/plain.md (name plain, description, tools Read, body) and "
            ".contenox/agents.toml '[chain]\\ntoken_limit = 0'. `init` -> exit 0, no error "
            "or warning. `agent list` -> exit 0, no non-log stderr lines and no WARN/ERROR "
            "log lines, and only agent-planner is listed (no plain, run, chat, …). The same "
            "with 'main_rounds = 0'. Control with token_limit = 65536: plain, run, chat, … "
            "all listed, enabled true. In that control workspace I then rewrote agents.toml "
            "to token_limit = 0, and `agent list` (exit 0, silent) showed every declared "
            "agent ENABLED false, agent-planner true. Note: Reproduces. agents-config.md:89 "
            "and :92 say the values must be positive, and :31-32 say a malformed file 'is "
            "an error rather than a silent fall back'. The binary reports nothing..."
        ),
        reproduce=(
            "in a scratch HOME and an empty workspace: `.contenox/agents/plain.md` holding "
            "`---` `name: plain` `description: Checks one thing` `tools: Read` `---` and a body, "
            "`.contenox/agents.toml` holding `[chain]` `token_limit = 0`; `contenox init` exits 0; "
            "`contenox agent list` exits 0 with nothing on stderr and lists only agent-planner "
            "(neither plain nor run, chat, …); the same with `main_rounds = 0`. Written after "
            "the agents were listed once, the same file turns every one ENABLED false instead"
        ),
        promised=(
            'reference/agents-config.md:89 "`token_limit` | int | `131072` | Context budget for '
            "chat history, and the source of the per-call tool-result cap. **Must be positive** — "
            'a zero budget reports every tool result as too large regardless of its real size."'
        ),
        observed=(
            "agent list: exit 0, stderr empty, only agent-planner listed (ENABLED false for "
            "agents registered before the edit)"
        ),
        bears_on=(
            'reference/agents-config.md:92 "`main_rounds` | int | `60` | Edge traversals before '
            'the main stage hands to recovery. **Must be positive.**"',
            'reference/agents-config.md:31-32 "A malformed one is an error rather than a '
            'silent fall back to shipped values"',
        ),
    ),
)


# ------------------------------------------------------------------ postures, [naming]


def floor_rules(agent: str, **want: str) -> Probe:
    """A probe: the unconditioned write and shell rules of the policy emitted for ``agent``."""

    def read(instance: Instance) -> dict[str, object]:
        rules = _generated(instance, f"hitl-policy-{agent}.json")["rules"]
        assert isinstance(rules, list)
        return {
            f"{r['tools']}.{r['tool']}": r["action"]
            for r in rules
            if not r.get("when") and r["tool"] in ("write_file", "local_shell")
        }

    return probe(
        f"write and shell floor of {agent}",
        read,
        expect={"local_fs.write_file": want["write"], "local_shell.local_shell": want["shell"]},
    )


# agents-config.md:529 "Claude Code `plan`, `dontAsk` | `read_only`, with a
# note in the loss report". The same declaration without the mode is the
# control: it asks (ask_always).
PLAN_MODE = Case(
    name="a claude code plan mode agent runs read only with a note",
    files={
        ".claude/agents/planner2.md": _decl(
            "planner2", "tools: Read, Write, Bash\npermissionMode: plan"
        ),
        ".claude/agents/auditor.md": _decl("auditor", "tools: Read, Write, Bash"),
    },
    steps=[
        step(
            "agent",
            "list",
            stdout_has=["claude-code-planner2", "claude-code-auditor"],
            notices_has=["claude-code-planner2: permissionMode", "imported as read-only"],
        ),
        floor_rules("claude-code-planner2", write="deny", shell="deny"),
        floor_rules("claude-code-auditor", write="approve", shell="approve"),
    ],
)

# agents-config.md:540: `scope_with_dialect` on (the default, the prefixed
# section case in test_agents_page.py) prefixes another tool's agents; off, the
# imported agent keeps its own name.
SCOPE_OFF = Case(
    name="with scope_with_dialect false an imported agent keeps its own name",
    files={
        ".claude/agents/auditor.md": _decl("auditor", "tools: Read"),
        ".contenox/agents.toml": "[naming]\nscope_with_dialect = false\n",
    },
    steps=[step("agent", "list", stdout_has=["auditor"], stdout_lacks=["claude-code-auditor"])],
)


def webtools_block(instance: Instance) -> dict[str, object]:
    """Whether the home agents.toml `init` wrote has the webtools block, and who carries it."""
    shipped = (instance.home / ".contenox" / "agents.toml").read_text(encoding="utf-8")
    return {
        "shipped file has [tools_policies.webtools]": "[tools_policies.webtools]" in shipped,
        "sheller's chain carries webtools": "webtools" in _policies(instance, "sheller"),
    }


# agents-config.md:136 "The shipped file also carries a
# `[tools_policies.webtools]` block, which is **inert**": it is in the file
# `init` writes, and an agent with every hosted tool carries no policy for it.
WEBTOOLS_INERT = Case(
    name="the shipped agents toml carries a webtools block no agent carries",
    files={".contenox/agents/sheller.md": _decl("sheller", "tools: Read, Write, Bash")},
    steps=[_list("sheller")],
    probes=[
        probe(
            "the webtools block",
            webtools_block,
            expect={
                "shipped file has [tools_policies.webtools]": True,
                "sheller's chain carries webtools": False,
            },
        )
    ],
)


# agents-config.md:597 "Names containing a dot are treated as MCP tools and pass
# through unchanged, so MCP needs no entries at all." A registered server's
# `myserver.search` admits its toolset with no `[tools]` line; the bare
# `search` is the control: it resolves to nothing and is reported dropped.
DOTTED_NAME = Case(
    name="a dotted tool name passes through to its mcp server with no tools entry",
    files={
        ".contenox/agents/dotted.md": _decl("dotted", "tools: Read, myserver.search"),
        ".contenox/agents/undotted.md": _decl("undotted", "tools: Read, search"),
    },
    steps=[
        step("mcp", "add", "myserver", "--transport", "stdio", "--command", "/bin/true"),
        step(
            "agent",
            "list",
            stdout_has=["dotted", "undotted"],
            notices_has=["undotted: tools — resolves to nothing connected here"],
            notices_lacks=[" dotted:"],
        ),
        _chain_probe("dotted", tools=["local_fs", "myserver", "mission"]),
        _chain_probe("undotted", tools=["local_fs", "mission"]),
    ],
)
