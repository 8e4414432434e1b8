"""Units of guide/chains/writing-a-chain.md and guide/chains/agentic-loop.md that no other
case asserted: the writing-a-chain page's minimal chain, as printed, and its fire by id.
"""

from __future__ import annotations

import json
import re

from chains import MODEL, UNASKED, chain, task
from test_agents_page import FAILURE_MD, RECOVERY_MD, _tree
from test_chains import _sent_system
from test_local_uncovered import _authored_reads, _sized

from harness import (
    Case,
    Defect,
    Instance,
    Script,
    probe,
    prompt,
    received,
    step,
)
from harness.case import model_saw, open_envelope_step
from harness.servers.providers import Fault, Provider
from harness.servers.wiring import OPEN_ENVELOPE

# ------------------------------------------------ guide/chains/writing-a-chain.md:68-97

# Verbatim from the page (lines 70-89).
MY_CHAIN = """\
{
  "id": "my-chain",
  "tasks": [
    {
      "id": "answer",
      "handler": "chat_completion",
      "execute_config": {
        "model": "qwen3:8b",
        "provider": "ollama"
      },
      "transition": {
        "branches": [
          { "operator": "default", "goto": "end" }
        ]
      }
    }
  ]
}
"""

# The same chain with its one model pointed at the scripted backend: no case may reach a
# real ollama, and the fire must be answered to show the chain ran.
_SCRIPTED = json.loads(MY_CHAIN)
_SCRIPTED["tasks"][0]["execute_config"] = dict(MODEL)
MY_CHAIN_SCRIPTED = json.dumps(_SCRIPTED, indent=2)

_INTENT = "what is the capital of France?"

THE_MINIMAL_CHAIN_VETS_AND_IS_LISTED = Case(
    name="the page's minimal chain passes vet and is listed as agent my-chain",
    script=UNASKED,
    files={".contenox/chain-agent-my-chain.json": MY_CHAIN},
    steps=[
        step(
            "vet",
            ".contenox/chain-agent-my-chain.json",
            stdout_has=[re.compile(r"ok\s+\S*chain-agent-my-chain\.json")],
        ),
        # Discovered as an agent under its id, which is what `mission fire my-chain` names.
        step(
            "agent",
            "list",
            stdout_has=[re.compile(r"^\S+\s+my-chain\s+discovered\s+chain\s+true\s*$", re.M)],
        ),
    ],
)


def _fire(*policy: str, **expect: object):
    return step(
        "mission",
        "fire",
        "my-chain",
        _INTENT,
        *policy,
        "--wait",
        "--timeout",
        "60s",
        **expect,
    )


THE_MINIMAL_CHAIN_FIRED_AS_PRINTED = Case(
    name="the page's minimal chain fired by its id as printed is refused without a policy",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: fresh home, init (config get default-mission-policy "
            "shows nothing set); the page's .contenox/chain-agent-my-chain.json (lines 70-89); "
            "'contenox mission fire my-chain \"what is the capital of France?\" --wait' -> "
            "'Error: no mission envelope: pass --policy <policy>, or set a default with "
            "`contenox config set default-mission-policy <policy>` — a mission must name the "
            "HITL policy that bounds it', exit 1. Control: ollama-protocol stub serving "
            "qwen3:8b, default-provider ollama/default-model qwen3:8b, [envelopes.e2e_open] "
            "default_action=allow in ~/.contenox/agents.toml, same fire with --policy e2e_open "
            '-> \'Mission fired at agent "my-chain" under envelope "e2e_open"\', stub got POST '
            "/api/chat with the mission intent (the minimal chain never calls mission_finish, "
            "so --wait ran until my 60s timeout, exit 124). Note: guide/chains/writing-a-"
            "chain.md:94 shows the bare fire as a working step ('That's the smallest working "
            "chain'), and the page sets no default-mission-policy. But guide/missions.md:44 "
            "says 'Without `--policy`, the envelope comes from the `default-mission-policy` "
            "config key. If neither is set, the fire is refused rather than guessing.', and "
            "reference/contenox-cli.md:523 says '--policy (fire) | Envelope … (default: "
            "`default-mission-policy` config)'. The binary does what missions.md and contenox-"
            "cli.md say. agentic-loop.md:158 and quickstart.md:135 / first-agent.md:54 also "
            "show fires without --policy, as writing-a-chain.md does."
        ),
        title=(
            "writing-a-chain.md fires its minimal chain without --policy; contenox-cli.md and "
            "missions.md say such a fire is refused"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# the page's .contenox/chain-agent-my-chain.json (lines 70-89)\n"
            'contenox mission fire my-chain "what is the capital of France?" --wait; '
            'echo "exit $?"\n'
            "# Error: no mission envelope: pass --policy <policy>, or set a default with "
            "`contenox config set default-mission-policy <policy>` — a mission must name "
            "the HITL policy that bounds it\n"
            "# exit 1, nothing runs\n"
            "# control: an allow-all [envelopes.e2e_open] in ~/.contenox/agents.toml and the "
            "chain's model on a scripted backend, then\n"
            'contenox mission fire my-chain "what is the capital of France?" --policy '
            "e2e_open --wait\n"
            '# Mission fired at agent "my-chain"; the model is sent the intent'
        ),
        promised=('guide/chains/writing-a-chain.md:94 "contenox mission fire my-chain"'),
        observed=(
            "exit 1 'no mission envelope: pass --policy <policy>…', as contenox-cli.md and "
            "missions.md document; with --policy the same fire runs the chain"
        ),
        bears_on=(
            'reference/contenox-cli.md:523 "(default: `default-mission-policy` config)"',
            'guide/missions.md:44 "If neither is set, the fire is refused rather than guessing."',
            'guide/chains/agentic-loop.md:158 "contenox mission fire chain-agent-diffreview"',
        ),
        docs_disagree=True,
    ),
    script=Script(turns=["Paris."], runs_past_end=True),
    files={".contenox/chain-agent-my-chain.json": MY_CHAIN_SCRIPTED},
    steps=[
        # As the page prints it: no --policy, no default-mission-policy.
        _fire(exit_code=1, stderr_has=["no mission envelope"], stdout_lacks=["Mission fired"]),
        # The control: only the envelope changed.
        open_envelope_step(),
        _fire(
            "--policy",
            OPEN_ENVELOPE,
            exit_code=None,
            stdout_has=['Mission fired at agent "my-chain"'],
            notices_lacks=["no mission envelope"],
        ),
    ],
    probes=[model_saw(_INTENT)],
)


# ------------------------------------------------------ guide/chains/agentic-loop.md:9, 71-77

# A declared tree with one leaf that has a recovery.md and one that has none, and a
# failure.md at the root: the chain `agent list` emits for it, read from `.generated/`
# (the stages are not otherwise observable without running a loop to exhaustion).
_STAGED_TREE = {
    **_tree("default: docs\n"),
    ".contenox/agents/sorter/code/recovery.md": RECOVERY_MD,
    ".contenox/agents/sorter/failure.md": FAILURE_MD,
}


def _tasks(instance: Instance) -> dict[str, dict]:
    chain = instance.work / ".contenox" / ".generated" / "chain-agent-sorter.json"
    return {t["id"]: t for t in json.loads(chain.read_text(encoding="utf-8"))["tasks"]}


def _budget_goto(task: dict) -> str:
    [budget] = [
        b for b in task["transition"]["branches"] if b["operator"] == "edge_traversed_at_least"
    ]
    return budget["goto"]


def _tools(task: dict) -> list[str]:
    return sorted(task.get("execute_config", {}).get("tools") or [])


def _staging(instance: Instance) -> dict[str, object]:
    t = _tasks(instance)
    code, recovery, docs = t["sorter-code-agent"], t["sorter-code-recovery"], t["sorter-docs-agent"]
    return {
        "code loop's budget goes to": _budget_goto(code),
        "code loop's on_failure": code["transition"].get("on_failure"),
        "recovery continues the history of": recovery.get("input_var"),
        "recovery's budget goes to": _budget_goto(recovery),
        "recovery's on_failure": recovery["transition"].get("on_failure"),
        "docs loop (no recovery.md) budget goes to": _budget_goto(docs),
        "the summary's tools": _tools(t["sorter-summarise"]),
    }


THE_TREE_IS_STAGED = Case(
    name=(
        "a declared tree's leaf hands its spent budget and its failure to its recovery, "
        "which hands both to a summary with no tools"
    ),
    script=UNASKED,
    files=_STAGED_TREE,
    steps=[step("agent", "list", stdout_has=["sorter"], notices_lacks=["sorter"])],
    probes=[
        probe(
            "how the emitted chain stages the loop",
            _staging,
            expect={
                "code loop's budget goes to": "sorter-code-recovery",
                "code loop's on_failure": "sorter-code-recovery",
                "recovery continues the history of": "sorter-code-agent",
                "recovery's budget goes to": "sorter-summarise",
                "recovery's on_failure": "sorter-summarise",
                "docs loop (no recovery.md) budget goes to": "sorter-summarise",
                "the summary's tools": [],
            },
        )
    ],
)


def _powers(instance: Instance) -> dict[str, list[str]]:
    t = _tasks(instance)
    return {
        "main loop": _tools(t["sorter-code-agent"]),
        "recovery loop": _tools(t["sorter-code-recovery"]),
    }


THE_RECOVERY_HAS_NO_MORE_POWERS = Case(
    name="a recovery stage is granted no toolset its main loop was not granted",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: fresh home, contenox init; .contenox/agents/sorter/agent.md "
            "(router, default: docs), sorter/{code,docs}/agent.md 'tools: Read', "
            "sorter/code/recovery.md with name/description only; contenox agent list -> "
            ".generated/chain-agent-sorter.json: sorter-code-agent tools ['local_fs','mission'], "
            "sorter-code-tools ['local_fs','mission'], sorter-code-recovery ['*'], sorter-code-"
            "recovery-tools ['*']. With 'tools: Read' added to recovery.md the recovery tasks "
            "become ['local_fs','mission']. (Seeded triage/code has no tools line, so there main "
            "and recovery are both '*'.) Note: guide/chains/agentic-loop.md:9 'Each stage that "
            "follows a failure gets fewer powers and a clearer mandate — the graph never lets "
            "confusion default into unattended mutation'; guide/chains/routing.md:55 repeats it "
            "('Each stage after a failure gets fewer capabilities'). Here the recovery stage gets"
            " more powers (every toolset) than the main loop it follows. guide/agents.md:49/106 "
            "('Omitted inherits every tool') is written for an agent's declaration frontmatter; "
            "agents.md:435-439 and agentic-loop.md:75 describe recovery.md only as the leaf's "
            "second-attempt prompt and say nothing about its own tools line, so no page says a "
            "recovery stage may be wider than its leaf. Not docs-disagree: no page says the "
            "recovery file widens the grant."
        ),
        title="a declared leaf's recovery stage is granted every tool when its main loop has one",
        reproduce=(
            'export HOME=$(mktemp -d); mkdir "$HOME/w"; cd "$HOME/w"; contenox init\n'
            "# .contenox/agents/sorter/agent.md: a router (default: docs)\n"
            "# .contenox/agents/sorter/{code,docs}/agent.md: 'tools: Read'\n"
            "# .contenox/agents/sorter/code/recovery.md: frontmatter name/description, no "
            "tools line\n"
            "contenox agent list\n"
            "# .contenox/.generated/chain-agent-sorter.json:\n"
            '#   sorter-code-agent     execute_config.tools = ["local_fs", "mission"]\n'
            '#   sorter-code-recovery  execute_config.tools = ["*"]\n'
            '#   sorter-code-recovery-tools execute_config.tools = ["*"]'
        ),
        promised=(
            'guide/chains/agentic-loop.md:9 "Each stage that follows a failure gets fewer '
            'powers and a clearer mandate"'
        ),
        observed=(
            "the recovery stage that follows the spent main loop is granted `*` — every "
            "connected toolset — where the main loop had local_fs and mission (a `tools: "
            "Read` line in recovery.md narrows it to the leaf's; without one the recovery "
            "file inherits every tool, as a declaration does)"
        ),
        bears_on=(
            'guide/chains/agentic-loop.md:9 "the graph never lets confusion default into '
            'unattended mutation"',
            'guide/agents.md:49 "**Omitted inherits every tool**"',
        ),
    ),
    script=UNASKED,
    files=_STAGED_TREE,
    steps=[step("agent", "list", stdout_has=["sorter"], notices_lacks=["sorter"])],
    probes=[
        probe(
            "the toolsets each stage of the code leaf is granted",
            _powers,
            expect={"main loop": ["local_fs", "mission"], "recovery loop": ["local_fs", "mission"]},
        )
    ],
)


# ------------------------------------------------ guide/chains/writing-a-chain.md:124-136

# Two scripted backends, each serving one model; which one answered is in the reply text.
_TWO = {
    "one": Script(model="m-one", turns=["answered by one"]),
    "two": Script(model="m-two", turns=["answered by two"]),
}


def _one_task(chain_id: str, **execute: object) -> str:
    return json.dumps(
        {
            "id": chain_id,
            "tasks": [
                {
                    "id": "a",
                    "handler": "chat_completion",
                    "execute_config": execute,
                    "transition": {"branches": [{"operator": "default", "goto": "end"}]},
                }
            ],
        },
        indent=2,
    )


THE_MODEL_PICKS_THE_BACKEND = Case(
    name="a task's execute_config model and provider choose the backend that answers it",
    backends=_TWO,
    default_backend="one",
    files={
        "to-one.json": _one_task("to-one", model="m-one", provider="scripted-test"),
        # The same chain with only the model changed.
        "to-two.json": _one_task("to-two", model="m-two", provider="scripted-test"),
    },
    steps=[
        step("chat", "--chain", "to-two.json", "hi", stdout_has=["answered by two"]),
        step("chat", "--chain", "to-one.json", "hi", stdout_has=["answered by one"]),
    ],
)

# Both orders in one instance: whichever backend v1.0.0 prefers, one of the two chats
# disagrees with its list (a choice made by backend rather than by list order would pass
# half the time if only one order were tried).
THE_MODELS_LIST_IS_TRIED_IN_ORDER = Case(
    name="models and providers lists are tried in order and the first served one answers",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: two scripted-test backends: one (model m-one, 'answered by one'), "
            "two (model m-two, 'answered by two'); default-provider scripted-test, default-model "
            "m-one; rev.json one chat_completion with execute_config {models:[...], "
            "providers:['scripted-test','scripted-test']}. 12 fresh homes, one order each: models"
            " ['m-two','m-one'] answered two,two,one,one,two,one; ['m-one','m-two'] answered "
            "two,one,two,one,one,two; a second chat in the same home always gave the same answer."
            " 4 further homes running both orders in the same home: one|one, one|one, two|two, "
            "two|two — the same backend answers for both orders, and which one differs by home. "
            "Note: guide/chains/writing-a-chain.md:124 'Use models[] and providers[] to author a "
            "fallback policy — the engine tries them in order' and :136 'falls back … in the "
            "order you listed'; specification/handlers.md:43 'Array of fallback model IDs tried "
            "in order'. Both models were available, so the first listed should answer; instead "
            "the list order has no effect. No reading fits the results: with default-model m-one "
            "as the 'primary' (handlers.md:43), m-one should always answer, and m-two answered in"
            " half the homes. No page says the order is not kept."
        ),
        title="execute_config.models[] is not tried in the order listed",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            '# one.json: {"model":"m-one","turns":[{"text":"answered by one"}]}\n'
            '# two.json: {"model":"m-two","turns":[{"text":"answered by two"}]}\n'
            "contenox backend add one --type scripted-test --script ./one.json\n"
            "contenox backend add two --type scripted-test --script ./two.json\n"
            "contenox config set default-provider scripted-test\n"
            "contenox config set default-model m-one\n"
            "# rev.json: one chat_completion task, execute_config "
            '{"models":["m-two","m-one"],"providers":["scripted-test","scripted-test"]}\n'
            'contenox chat --chain rev.json "hi"\n'
            "# six fresh scratch homes: answered by two, two, one, one, one, two —\n"
            "# the same answer on every run within one home, so the order of the\n"
            "# backends (not of the list) decides; with the list reversed the same\n"
            "# backend answers"
        ),
        promised=(
            'guide/chains/writing-a-chain.md:124 "Use `models[]` and `providers[]` to author '
            'a fallback policy — the engine tries them in order."'
        ),
        observed=(
            "the first listed model is not preferred: which backend answers is the same "
            "for both orders of the list, and differs from one scratch home to the next"
        ),
        bears_on=(
            'guide/chains/writing-a-chain.md:136 "the chain falls back to OpenAI in the order '
            'you listed"',
        ),
    ),
    backends={
        "one": Script(model="m-one", turns=["answered by one", "answered by one"]),
        "two": Script(model="m-two", turns=["answered by two", "answered by two"]),
    },
    default_backend="one",
    serves_all_turns=False,
    files={
        "two-first.json": _one_task(
            "two-first", models=["m-two", "m-one"], providers=["scripted-test", "scripted-test"]
        ),
        "one-first.json": _one_task(
            "one-first", models=["m-one", "m-two"], providers=["scripted-test", "scripted-test"]
        ),
    },
    steps=[
        step("chat", "--chain", "two-first.json", "hi", stdout_has=["answered by two"]),
        step("chat", "--chain", "one-first.json", "hi", stdout_has=["answered by one"]),
    ],
)

# An ollama backend at a port nothing listens on: its model is unreachable.
_DEAD_OLLAMA = step("backend", "add", "local", "--type", "ollama", "--url", "http://127.0.0.1:9")

THE_CHAIN_FALLS_BACK_PAST_AN_UNREACHABLE_MODEL = Case(
    name="a chain falls back past an unreachable local model to the next one listed",
    backends={"two": _TWO["two"]},
    files={
        "fallback.json": _one_task(
            "fallback", models=["qwen3:8b", "m-two"], providers=["ollama", "scripted-test"]
        ),
        # The control: the unreachable model alone.
        "dead.json": _one_task("dead", models=["qwen3:8b"], providers=["ollama"]),
    },
    steps=[
        _DEAD_OLLAMA,
        step("chat", "--chain", "dead.json", "hi", exit_code="non-zero"),
        step("chat", "--chain", "fallback.json", "hi", stdout_has=["answered by two"]),
    ],
)


# ------------------------------------------------ guide/chains/writing-a-chain.md:200-202

# The page's per-tool key with a value small enough to test: a file one byte over it is
# refused, the file at it is read (the control: the same read, only the size changed).
A_CHAIN_S_MAX_READ_BYTES = _authored_reads(
    "a chain's local_fs max read bytes refuses a file one byte over it and reads one at it",
    ["over.txt", "at.txt"],
    {"over.txt": _sized("over-marker-5511", 201), "at.txt": _sized("at-marker-5512", 200)},
    lambda hs: "over-marker-5511" not in hs[0] and "at-marker-5512" in hs[1],
    "the 201-byte file refused, the 200-byte one read",
    policies={"_max_read_bytes": "200"},
)


# ------------------------------------ writing-a-chain.md:212-232, agentic-loop.md:169

# An ollama stand-in that answers the first chat request 429 (with Retry-After: 0), then
# serves the turn. With a retry_policy the chain retries and answers; the control is the
# same chain with only the retry_policy removed, and the 429 ends the run.
_ONE_429 = Fault("status", status=429, times=1)


def _chat_requests(standin: object) -> int:
    return len(standin.chat_requests())  # type: ignore[attr-defined]


def _retry_case(
    name: str, retry: dict | None, defect: Defect | None = None, **expect: object
) -> Case:
    execute: dict[str, object] = dict(MODEL)
    if retry is not None:
        execute["retry_policy"] = retry
    return Case(
        name=name,
        defect=defect,
        provider=Provider("ollama", fault=_ONE_429),
        script=Script(turns=["answered after the 429"]),
        serves_all_turns=retry is not None,
        files={"retrying.json": _one_task("retrying", **execute)},
        steps=[
            step("chat", "--chain", "retrying.json", "hi", **expect),
            received(
                "provider",
                "chat requests the stand-in received",
                _chat_requests,
                expect=2 if retry is not None else 1,
            ),
        ],
    )


A_RETRY_POLICY_RETRIES = _retry_case(
    "a task's retry policy retries a transient provider error and the chain answers",
    {"max_attempts": 2, "initial_backoff": "10ms", "max_backoff": "50ms"},
    Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: real. Saw: ollama-protocol stub on 127.0.0.1 (tags/show/chat), backend add "
            "stub --type ollama, default-provider ollama, default-model m1:latest; retrying.json "
            "one chat_completion task with retry_policy {max_attempts:2, initial_backoff:10ms, "
            "max_backoff:50ms}; vet 'ok'. Control (stub never fails): 'stub reply', exit 0. Stub "
            "answering first /api/chat 429 (Retry-After: 0): 'Error: chain execution failed: task"
            " a failed after 0 retries: ... ollama API returned 429: stub says 429', exit 1, "
            "0.26s; stub log shows exactly one POST /api/chat. Same with 503: '... returned 503',"
            " exit 1, one POST /api/chat. Note: specification/handlers.md:74-78: retry_policy "
            "'Controls automatic retries on transient LLM errors', max_attempts 'Total attempts "
            "including the first'; handlers.md:82 rate_limit_min_wait 'when the provider returns "
            "a rate-limit error' (so a 429 is in scope); guide/chains/writing-a-chain.md:214 "
            "'Transient failures shouldn't kill a CI step. Author the retry behavior in the "
            "chain'; agentic-loop.md:169 and :81 say the same. No page says 429/503 are excluded "
            "or that streaming calls are not retried. With max_attempts 2 a second attempt was "
            "owed and none was made."
        ),
        title="a chain's retry_policy does not retry a 429 or a 503 from the provider",
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# an ollama-protocol endpoint (the suite's stand-in) registered as the default "
            "backend, answering its first chat request HTTP 429 (Retry-After: 0), then a "
            "reply\n"
            "# retrying.json: one chat_completion task, execute_config "
            '{"model":"{{var:model}}","provider":"{{var:provider}}","retry_policy":'
            '{"max_attempts":2,"initial_backoff":"10ms","max_backoff":"50ms"}}\n'
            'contenox chat --chain retrying.json "hi"; echo "exit $?"\n'
            "# Error: chain execution failed: task a failed after 0 retries: task a: chat "
            "failed: chat stream failed: stream failed (provider=ollama, …): ollama API "
            "returned 429: …\n"
            "# exit 1, 0.24s after the start. The same with HTTP 503."
        ),
        promised=('guide/chains/writing-a-chain.md:214 "Author the retry behavior in the chain:"'),
        observed=(
            "the first 429 (or 503) ends the run 'failed after 0 retries', with max_attempts 2"
        ),
        bears_on=(
            'specification/handlers.md:74 "Controls automatic retries on transient LLM errors"',
            'specification/handlers.md:78 "Total attempts including the first"',
            'guide/chains/agentic-loop.md:169 "`retry_policy` with backoff, jitter, '
            'rate-limit wait"',
        ),
    ),
    stdout_has=["answered after the 429"],
)

WITHOUT_A_RETRY_POLICY = _retry_case(
    "without a retry policy a transient provider error ends the chain",
    None,
    exit_code="non-zero",
    stderr_has=["429"],
)


# ---------------------------------------------------- guide/chains/writing-a-chain.md:60-62


# The ACP twin of cases/test_chains.py's `chat` default-chain case: a workspace chain whose
# one task's system instruction is a marker, named by default-chain, and one ACP prompt.
# writing-a-chain.md says the session runs that chain; contenox-cli.md:716 says an acp
# session's chain is its profile's (chain-acp, by the operator/.generated/system path, or
# CONTENOX_ACP_CHAIN_PATH). v1.0.0 does what the reference says: the router runs, so the
# dialog opens with its label turn. The control — the same workspace chain reached through
# CONTENOX_ACP_CHAIN_PATH, and its marker sent — is cases/test_chain_surfaces.py's
# test_contenox_acp_chain_path_makes_acp_run_that_chain_instead_of_the_home_one.
def _sent_the_marker(instance: Instance) -> dict[str, object]:
    steps = _sent_system(instance)
    return {
        "chat steps": len(steps),
        "sent the marker": any("WORKSPACE COPY" in m for msgs in steps for m in msgs),
    }


ACP_RUNS_ITS_PROFILE_CHAIN = Case(
    name="an acp session runs its profile chain and not the workspace's default chain",
    defect=Defect(
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh scratch "
            "home: docs disagree. Saw: fresh home, init; scripted-test default backend with "
            "dialog [general, answered]; .contenox/chain-mine.json (one chat_completion, "
            "system_instruction 'WORKSPACE COPY'); config set default-chain chain-mine.json -> '✓"
            " default-chain = chain-mine.json (workspace)'; contenox acp driven by a python ACP "
            "client (initialize, session/new, session/prompt 'hi'): agent_message_chunk "
            "'answered', stopReason end_turn. acp stderr: 'operation=load subject=acp_chain "
            "source=…/.contenox/.generated/chain-agent-acp.json id=chain-acp'; task_attempt "
            "subjects chain-acp-route and chain-acp-general-agent; 'WORKSPACE COPY' appears 0 "
            "times; mine_chat never ran. Note: guide/chains/writing-a-chain.md:60-62 says 'a "
            "session instead falls back to the configured `default-chain`, and ACP editor "
            "sessions run the workspace's default chain the same way', but reference/contenox-"
            "cli.md:716 says 'Each profile's chain resolves in order: an operator copy at "
            "`~/.contenox/<name>.json`, then a compiled `~/.contenox/.generated/<name>.json`, "
            "then the shipped `~/.contenox/system/<name>.json`', and guide/chains/naming.md:78 "
            "says 'The ACP surfaces resolve differently, by design: `contenox acp` and `acpx` "
            "load their chain from an operator copy at ~/.contenox/<name>.json … nothing outside "
            "~/.contenox/ is searched'; integrations/editors/jetbrains.md:57 and aionui.md:62 say"
            " the same. The binary does what those pages say."
        ),
        title=(
            "writing-a-chain.md says ACP sessions run the workspace's default-chain; "
            "contenox-cli.md says an acp session runs its profile's chain"
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "# a scripted-test default backend whose dialog is: general, answered\n"
            "# .contenox/chain-mine.json: one chat_completion task, system_instruction "
            "'WORKSPACE COPY'\n"
            "contenox config set default-chain chain-mine.json\n"
            "contenox acp   # initialize, session/new, session/prompt 'hi'\n"
            "# stopReason end_turn; the run's tasks are chain-acp-route, "
            "chain-acp-general-agent; no system message says 'WORKSPACE COPY'"
        ),
        promised=('guide/chains/writing-a-chain.md:61 "ACP editor sessions run the workspace\'s"'),
        observed=(
            "the acp profile's own chain (router, then the general leaf) runs, as "
            "contenox-cli.md:716 documents; default-chain is not consulted"
        ),
        bears_on=(
            "reference/contenox-cli.md:716 \"Each profile's chain resolves in order: an "
            'operator copy at `~/.contenox/<name>.json`"',
        ),
        docs_disagree=True,
    ),
    script=Script(turns=["general", "answered"]),
    files={".contenox/chain-mine.json": chain(task("t", system_instruction="WORKSPACE COPY"))},
    steps=[
        step("config", "set", "default-chain", "chain-mine.json"),
        prompt("hi", stop_reason="end_turn"),
        probe(
            "whether a chat step was sent the workspace chain's marker",
            _sent_the_marker,
            expect={"chat steps": 1, "sent the marker": False},
        ),
    ],
)
