"""A stand-in for contenox, for the harness's own tests of Case mechanics.

It remembers the script a `backend add` registered and, on `run`, logs one
served model call per turn the way contenox does (FAKE_SERVED overrides how
many), plus the exhaustion error when asked past the end.

For the step types: `run` with FAKE_ASK=1 first raises a durable ask (an
"ask raised" log line, a row in `approvals list`) and waits for its verdict;
with FAKE_BLOCK=1 it waits for SIGINT. `approvals respond` answers an ask
once and refuses a second answer ("already answered"). `doctor --json`
prints JSON; `beam` is a line-at-a-time loop a terminal can drive; `acp`
is the fake ACP agent of tests/peers.
"""

import json
import os
import sys
import time
from pathlib import Path

state = Path(os.environ["HOME"]) / ".fake"
state.mkdir(exist_ok=True)
args = sys.argv[1:]


def log(msg: str, rest: str) -> None:
    print(f'time=2026-01-01T00:00:00.000Z level=INFO msg="{msg}" {rest}', file=sys.stderr)


if args[:1] == ["version"]:
    print("contenox version v0.0.0-fake")
elif args[:1] == ["init"]:
    print("initialised")
elif args[:2] == ["backend", "add"]:
    script = args[args.index("--script") + 1]
    (state / "script").write_text(script)
    print(f'Backend "{args[2]}" added')
elif args[:2] == ["backend", "list"]:
    # The scripted backend's URL column is its script path, as contenox prints it.
    script = (state / "script").read_text() if (state / "script").exists() else ""
    print("NAME      TYPE           URL")
    print(f"scripted  scripted-test  {script}")
elif args[:2] == ["config", "set"]:
    print(f"ok {args[2]} = {args[3]}")
elif args[:2] == ["approvals", "list"]:
    asks = sorted(p.name for p in state.glob("ask-*") if not p.read_text())
    if not asks:
        print("No pending asks.")
    else:
        print("ID            KIND        TOOL              SUMMARY  MISSION  AGE  EXPIRES-IN")
        for ask in asks:
            print(f"{ask:<13} permission  native-echo.echo           m-1      1s   -")
elif args[:2] == ["approvals", "respond"]:
    ask = state / args[2]
    if not ask.exists():
        print(f"Error: no ask {args[2]}", file=sys.stderr)
        sys.exit(1)
    if ask.read_text():
        print(f"Error: ask {args[2]} was already answered", file=sys.stderr)
        sys.exit(1)
    ask.write_text(args[3])
    print(f"Verdict recorded for {args[2]}")
elif args[:1] == ["pwd"]:
    print(os.getcwd())
elif args[:1] == ["show-file"]:
    print(Path(args[1]).read_text())
elif args[:2] == ["doctor", "--json"]:
    print(json.dumps({"backends": [{"name": "scripted", "reachable": True}]}))
elif args[:1] == ["beam"]:
    print("fake beam: type / for commands", flush=True)
    for line in sys.stdin:
        if line.strip() == "/quit":
            sys.exit(0)
        print(f"Hello from the fake: {line.strip()}", flush=True)
elif args[:1] == ["acp"]:
    peer = Path(__file__).resolve().parent.parent / "peers" / "fake_agent.py"
    os.execv(sys.executable, [sys.executable, str(peer)])
elif args[:1] == ["run"] and os.environ.get("FAKE_BLOCK"):
    # FAKE_BLOCK=stdout announces itself on stdout, as a host's status screen does.
    out = sys.stdout if os.environ["FAKE_BLOCK"] == "stdout" else sys.stderr
    print("blocking until interrupted", file=out, flush=True)
    try:
        time.sleep(60)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
elif args[:1] == ["run"]:
    if os.environ.get("FAKE_ASK"):
        ask = state / "ask-0001abcd"
        ask.write_text("")
        log("ask raised", 'subject="ask raised" ask=ask-0001abcd')
        sys.stderr.flush()
        deadline = time.monotonic() + 20
        while not ask.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        print(f"verdict: {ask.read_text() or 'none'}")
    script = (state / "script").read_text()
    doc = json.loads(Path(script).read_text())
    held = len(doc["turns"])
    served = int(os.environ.get("FAKE_SERVED", held))
    print('Mission fired at agent "run" under envelope "run".', file=sys.stderr)
    for i in range(served):
        op = f"op-20260101-000000.000-{i}"
        log(
            "Operation started",
            f"operation=stream subject=scripted-test op_id={op} model=m script={script}",
        )
        if i >= held:
            print(
                f'time=x level=ERROR msg="Operation failed" operation=stream subject=scripted-test '
                f'op_id={op} error="scripted-test script \\"{script}\\" is exhausted: stream asked '
                f'for turn {i} but the script holds {held} turn(s); add the missing turn"',
                file=sys.stderr,
            )
    print(doc["turns"][-1].get("text", ""))
    print("Mission 11111111-2222-3333-4444-555555555555 finished: landed", file=sys.stderr)
elif args[:2] == ["mission", "list"]:
    print("No missions recorded.")
else:
    print(f"fake contenox: unknown command {args}", file=sys.stderr)
    sys.exit(2)
