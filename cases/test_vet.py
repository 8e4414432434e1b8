"""`contenox vet [path]`: what it classifies and how, the load-time linter, counts, exit codes."""

from __future__ import annotations

import json

from harness import Case, step

_END = {"branches": [{"operator": "default", "goto": "end"}]}
_EXEC = {"model": "m", "provider": "p"}


def _task(task_id: str = "a", **fields: object) -> dict[str, object]:
    task: dict[str, object] = {
        "id": task_id,
        "handler": "chat_completion",
        "execute_config": _EXEC,
        "transition": _END,
    }
    task.update(fields)
    return task


def _chain(*tasks: dict[str, object]) -> str:
    return json.dumps({"id": "mine", "tasks": list(tasks)})


def _policy(**fields: object) -> str:
    policy: dict[str, object] = {"version": 1, "default_action": "approve", "rules": []}
    policy.update(fields)
    return json.dumps(policy)


GOOD_CHAIN = _chain(_task())
GOOD_POLICY = _policy(rules=[{"tools": "local_fs", "tool": "read_file", "action": "allow"}])

DEFAULT_TARGET = Case(
    name="vet with no path vets every json in the workspace contenox directory",
    files={".contenox/chain-mine.json": GOOD_CHAIN, "elsewhere/chain-other.json": GOOD_CHAIN},
    steps=[
        step(
            "vet",
            stdout_has=["/work/.contenox/chain-mine.json"],
            stdout_lacks=["chain-other.json", "system/"],
        )
    ],
)

ALL = Case(
    name="vet all vets the workspace and the home contenox directories",
    files={".contenox/chain-mine.json": GOOD_CHAIN},
    steps=[
        step(
            "vet",
            "--all",
            stdout_has=["chain-mine.json", "/home/.contenox/system/chain-compact-default.json"],
        )
    ],
)

ONE_FILE = Case(
    name="vet of one file vets only that file",
    files={"chain.json": GOOD_CHAIN, "other.json": GOOD_CHAIN},
    steps=[step("vet", "chain.json", stdout_has=["ok   chain.json"], stdout_lacks=["other"])],
)

DIRECTORY = Case(
    name="vet of a directory vets every json under it nested ones too",
    files={"mychains/a.json": GOOD_CHAIN, "mychains/deep/b.json": GOOD_CHAIN},
    steps=[
        step(
            "vet",
            "./mychains/",
            stdout_has=["ok   mychains/a.json", "ok   mychains/deep/b.json"],
        )
    ],
)

CLASSIFIED = Case(
    name="vet classifies files by content and skips what is neither chain nor policy",
    files={
        "v/any-name.json": _chain(_task(handler="no_such_handler")),
        "v/rules-array.json": _policy(rules=[{"tools": "local_fs", "tool": "*", "action": "x"}]),
        "v/hitl-policy-named.json": json.dumps({"version": 1, "default_action": "maybe"}),
        "v/other.json": json.dumps({"hello": 1}),
    },
    steps=[
        step(
            "vet",
            "v",
            exit_code=1,
            stdout_has=[
                "FAIL v/any-name.json",
                "chain failed load-time validation",
                "FAIL v/rules-array.json",
                "FAIL v/hitl-policy-named.json",
                "hitl policy failed validation",
                "skip v/other.json (not a chain or hitl-policy file)",
            ],
        )
    ],
)

LINTER = [
    Case(
        name=f"vet fails a chain with {what}",
        files={"chain.json": chain},
        steps=[step("vet", "chain.json", exit_code=1, stdout_has=["FAIL chain.json", says])],
    )
    for what, chain, says in [
        (
            "a goto to an unknown task",
            _chain(_task(transition={"branches": [{"operator": "default", "goto": "nowhere"}]})),
            'branch goto references unknown task "nowhere"',
        ),
        (
            "an on failure edge to an unknown task",
            _chain(_task(transition={**_END, "on_failure": "ghost"})),
            'on_failure references unknown task "ghost"',
        ),
        (
            "an input var no earlier task produces",
            _chain(_task(input_var="ghost")),
            'input_var "ghost" is never produced',
        ),
        (
            "a template reference to nothing",
            _chain(_task(prompt_template="{{.nosuchtask}}")),
            "prompt_template references {{.nosuchtask}}",
        ),
        (
            "a branch that can never fire",
            _chain(
                _task(
                    transition={
                        "branches": [
                            {"operator": "default", "goto": "end"},
                            {"operator": "equals", "when": "x", "goto": "end"},
                        ]
                    }
                )
            ),
            'branch (equals "x") can never fire',
        ),
        ("no tasks", _chain(), "chain has no tasks"),
        (
            "a tools handler without its tools block",
            _chain(_task(handler="tools")),
            "'tools' handler requires a tools block",
        ),
    ]
]

POLICY_CHECKS = [
    Case(
        name=f"vet fails a policy with {what}",
        files={"hitl-policy-mine.json": policy},
        steps=[
            step(
                "vet",
                "hitl-policy-mine.json",
                exit_code=1,
                stdout_has=["FAIL hitl-policy-mine.json", says],
            )
        ],
    )
    for what, policy, says in [
        ("an unknown field", _policy(bogus=1), 'unknown field "bogus"'),
        (
            "an unknown field in a rule",
            _policy(rules=[{"tools": "local_fs", "tool": "*", "action": "approve", "timeout": 5}]),
            'unknown field "timeout"',
        ),
        ("rules that are not an array", _policy(rules={"a": 1}), "must be an array"),
        (
            "an unknown action",
            _policy(rules=[{"tools": "local_fs", "tool": "*", "action": "maybe"}]),
            'unknown action "maybe"',
        ),
        (
            "a tool name its toolset does not serve",
            _policy(rules=[{"tools": "local_fs", "tool": "no_such_tool", "action": "allow"}]),
            "can never match",
        ),
        (
            "a glob where only star is a wildcard",
            _policy(rules=[{"tools": "local_fs", "tool": "read_*", "action": "allow"}]),
            "can never match",
        ),
        (
            "a negative timeout",
            _policy(
                rules=[{"tools": "local_fs", "tool": "*", "action": "approve", "timeout_s": -5}]
            ),
            "timeout_s -5 is not a wait",
        ),
        (
            "a timeout on a rule that never waits",
            _policy(rules=[{"tools": "local_fs", "tool": "*", "action": "allow", "timeout_s": 30}]),
            "timeout_s/on_timeout only apply when action is",
        ),
    ]
]

COUNTS = Case(
    name="vet counts the failed files and exits non zero when any fails",
    files={
        "v/good.json": GOOD_CHAIN,
        "v/hitl-policy-good.json": GOOD_POLICY,
        "v/bad.json": _chain(),
    },
    steps=[step("vet", "v", exit_code=1, stdout_has=["vet: 1 of 3 file(s) failed"])],
)

ALL_GOOD = Case(
    name="vet exits zero when every vetted file passes",
    files={"v/good.json": GOOD_CHAIN, "v/hitl-policy-good.json": GOOD_POLICY},
    steps=[step("vet", "v", stdout_has=["ok   v/good.json", "ok   v/hitl-policy-good.json"])],
)

SHADOW = Case(
    name="vet warns that a policy file shadows a rendered envelope and still exits zero",
    home_files={"hitl-policy-strict.json": GOOD_POLICY},
    steps=[
        step(
            "vet",
            "--all",
            stdout_has=[
                "WARN ",
                "policy: this file shadows the rendered envelope",
                "/home/.contenox/.generated/hitl-policy-strict.json — the transpiled one is never",
            ],
            stdout_lacks=["FAIL"],
        )
    ],
)

NOTHING_TO_VET = Case(
    name="vet on a workspace with no json says there is nothing to vet and exits zero",
    steps=[step("vet", stdout_has=["Nothing to vet"])],
)

EMPTY_DIRECTORY = Case(
    name="vet of an empty directory fails nothing and exits zero",
    files={"empty/.keep": ""},
    steps=[step("vet", "empty", stdout_lacks=["FAIL"])],
)
