"""No secret or ambient setting of the person running the suite reaches contenox.

    python stress/environment.py

Run outside tox on purpose (tox's passenv would hide a leak): pytest is
started with every variable issue 12 saw leak set to a recognisable value —
provider keys, tokens, an SSH agent socket, a netrc, a kubeconfig, a database
URL, an editor, a tmux socket, XDG relocations, a CONTENOX_* override — and
CONTENOX_BIN pointing at a wrapper that records its argv and environment,
then execs the real contenox. The suite it runs covers every kind of child:
the ``contenox version`` probe, plain commands, a background process, a
terminal, ``contenox acp``, and the terminal ACP asks the editor to run
(a scripted ``local_shell`` running ``env``, whose output is checked too).

Fails naming each child that saw a variable it should not have, or lacked
the session marker.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import textwrap
from pathlib import Path

from common import pytest_run

from harness import resolve_binary
from harness.environment import SESSION_VAR

LEAKED = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "GITHUB_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "SSH_AUTH_SOCK",
    "GH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "NETRC",
    "KUBECONFIG",
    "DATABASE_URL",
    "EDITOR",
    "TMUX",
    "CONTENOX_DEFAULT_MODEL",
)
SECRET = "e2e-leak-check-"

WRAPPER = """\
#!{python}
import json, os, sys
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ)}}) + "\\n")
os.execv({real!r}, [{real!r}, *sys.argv[1:]])
"""

SUITE = """
from pathlib import Path

from harness import (
    Case, Script, ToolCall, Turn, open_acp, open_terminal, route, start_contenox, step,
)

COMMANDS = Case(
    name="plain commands",
    script=Script(turns=["unused"]),
    steps=[step("backend", "list")],
    serves_all_turns=False,
    snapshot=False,
)


def test_background(instance):
    start_contenox(instance, "backend", "list").wait(timeout=60).assert_success()


def test_terminal(instance):
    term = open_terminal(instance, "version")
    assert term.wait_exit(timeout=60) == 0


def test_acp_and_its_terminal(instance):
    instance.init()
    instance.use_script(Script(turns=[
        route(),
        Turn(tool_calls=[ToolCall(name="local_shell", arguments={"command": "env"})]),
        "Printed it.",
    ]))
    with open_acp(instance) as acp:
        turn = acp.prompt("print the environment")
    Path("acp-terminal.txt").write_text(str(turn.tool_outputs))
    assert turn.terminal_commands == ["env"], turn.describe()
"""


def main() -> int:
    real = resolve_binary().path
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="contenox-env-check-") as scratch:
        root = Path(scratch)
        log = root / "envs.jsonl"
        wrapper = root / "contenox"
        wrapper.write_text(WRAPPER.format(python=sys.executable, log=str(log), real=str(real)))
        wrapper.chmod(0o755)
        (root / "test_env.py").write_text(textwrap.dedent(SUITE), encoding="utf-8")
        env = dict(os.environ, CONTENOX_BIN=str(wrapper))
        env.update({name: f"{SECRET}{name}" for name in LEAKED})
        outcome = pytest_run(
            ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"], cwd=root, env=env
        )
        print(f"suite with {len(LEAKED)} secrets set: {outcome.line()}")
        if outcome.result.exit_code != 0:
            problems.append(f"the suite failed:\n{outcome.result.stdout[-3000:]}")
        records = (
            [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        )
        terminal = (
            (root / "acp-terminal.txt").read_text() if (root / "acp-terminal.txt").exists() else ""
        )

    kinds = {" ".join(r["argv"][:2]) for r in records}
    print(f"{len(records)} contenox processes recorded: {', '.join(sorted(kinds))}")
    for wanted in ("version", "acp", "backend list", "init"):
        if wanted not in kinds:
            problems.append(f"no `contenox {wanted}` was recorded; the check proves nothing for it")
    if not any("contenox-version-" in r["env"].get("HOME", "") for r in records):
        problems.append("the version probe was not recorded")
    for record in records:
        seen = record["env"]
        leaked = sorted(k for k, v in seen.items() if k in LEAKED or v.startswith(SECRET))
        if leaked:
            problems.append(f"`contenox {' '.join(record['argv'])}` got {', '.join(leaked)}")
        if SESSION_VAR not in seen:
            problems.append(f"`contenox {' '.join(record['argv'])}` carries no {SESSION_VAR}")
    if f"{SESSION_VAR}=" not in terminal:
        problems.append(f"the ACP terminal's `env` output was not seen: {terminal[:500]!r}")
    for name in LEAKED:
        if f"{SECRET}{name}" in terminal:
            problems.append(f"the ACP terminal child printed {name}")

    for problem in problems:
        print(f"FAIL: {problem}")
    if not problems:
        print("ok: no secret or ambient variable reached any child; every one carried the marker")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
