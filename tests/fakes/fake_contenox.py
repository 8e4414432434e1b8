"""A stand-in for contenox, for the harness's own tests of Case mechanics.

It remembers the script a `backend add` registered and, on `run`, logs one
served model call per turn the way contenox does (FAKE_SERVED overrides how
many), plus the exhaustion error when asked past the end.
"""

import json
import os
import sys
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
elif args[:2] == ["config", "set"]:
    print(f"ok {args[2]} = {args[3]}")
elif args[:1] == ["run"]:
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
