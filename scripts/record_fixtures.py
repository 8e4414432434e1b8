"""Re-record tests/fixtures from the real contenox binary, in one command.

    python scripts/record_fixtures.py            # into tests/fixtures/
    python scripts/record_fixtures.py --out DIR  # somewhere else, to diff first

The binary is the one the suite resolves (CONTENOX_BIN, CONTENOX_SRC or the
pinned release), run in a scratch instance that is deleted afterwards, so a
new contenox version is re-recorded by running this and reading the diff.
Each fixture is the stdout of one read-back command; the probes' parsers in
harness/probes/ are tested against them by tests/test_probes.py.

The scenario: every list command on an empty instance (its empty-state
sentence), then a worked run whose report summary has spaces, a run that
finishes stuck with a reason, a run torn down by its --timeout while a gated
call waits (a permission ask with no summary), a question ask whose summary has spaces, a
chat turn in a session whose name has a space, and a second backend whose
model lacks capabilities.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from harness import Instance, Script, ToolCall, Turn, mission_finish, mission_report
from harness.binary import resolve_binary
from harness.probes import await_approval, parse_missions
from harness.process import start_contenox

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures"

WORKED_RUN = Script(
    turns=[
        Turn(text="Filing.", tool_calls=[mission_report("result", "read the whole tree")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Mission finished.",
    ]
)
# `echo` is named by no rule of the `run` envelope, so its default_action
# (approve) gates it: the call becomes a durable ask.
GATED_RUN = Script(
    turns=[
        Turn(text="Echoing.", tool_calls=[ToolCall("echo", {"message": "hi"})]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
# Finishing "stuck" with a reason gives `mission show` a status and its reason.
STUCK_RUN = Script(
    turns=[
        Turn(tool_calls=[mission_finish("stuck", reason="no database to read from")]),
        "Done.",
    ]
)
QUESTION_RUN = Script(
    turns=[
        Turn(
            text="Asking.",
            tool_calls=[
                ToolCall(
                    "mission_ask_attention",
                    {
                        "summary": "which database should I use",
                        "question": "which database should I use",
                    },
                )
            ],
        ),
        Turn(tool_calls=[mission_report("result", "used the answer given")]),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)
CHAT = Script(turns=["Hello there, friend."])
EMBEDDER = Script(
    model="tiny-embedder",
    context_length=4096,
    capabilities={"chat": False, "think": False, "vision": False},
    turns=["unused"],
)


class Recorder:
    def __init__(self, instance: Instance, out: Path) -> None:
        self.instance = instance
        self.out = out
        self.written: list[str] = []

    def save(self, name: str, *args: str) -> str:
        """Run ``contenox <args>``, require exit 0, write its stdout to ``name``."""
        result = self.instance.must(*args)
        (self.out / name).write_text(result.stdout, encoding="utf-8")
        self.written.append(name)
        return result.stdout


def record(instance: Instance, out: Path) -> list[str]:
    rec = Recorder(instance, out)
    inst = instance

    # Empty states: each list command's sentence, before anything exists.
    rec.save("backend_list.empty.txt", "backend", "list")
    rec.save("mission_list.empty.txt", "mission", "list")
    rec.save("approvals_list.empty.txt", "approvals", "list")
    rec.save("session_list.empty.txt", "session", "list")
    rec.save("session_list_all.empty.txt", "session", "list", "--all")
    rec.save("state_list.empty.txt", "state", "list")
    rec.save("state_show.empty.txt", "state", "show", "cli-0000000000000000")
    rec.save("model_list.empty.txt", "model", "list")
    rec.save("doctor.empty.txt", "doctor", "--skip-cycle")
    rec.save("doctor_json.empty.json", "doctor", "--json", "--skip-cycle")

    # The worked run.
    inst.init()
    dialog = inst.use_script(WORKED_RUN)
    inst.must("run", "--policy", "run", "report what you know")
    [landed] = parse_missions(inst.must("mission", "list").stdout)
    [request] = [line for line in inst.must("state", "list").stdout.split() if line]
    rec.save("mission_show.txt", "mission", "show", landed.id)
    rec.save("mission_reports.txt", "mission", "reports", landed.id)
    rec.save("state_show.txt", "state", "show", request)

    # A run that finishes stuck, with a reason and no report.
    STUCK_RUN.write(dialog)
    inst.contenox("run", "--policy", "run", "give up")
    stuck = parse_missions(inst.must("mission", "list").stdout)[0]
    rec.save("mission_show.stuck.txt", "mission", "show", stuck.id)
    rec.save("mission_reports.stuck.txt", "mission", "reports", stuck.id)

    # A gated call whose run is torn down by --timeout leaves a permission
    # ask pending. The backend re-reads its script file on every run, so
    # rewriting it in place swaps the dialog.
    GATED_RUN.write(dialog)
    inst.contenox("run", "--policy", "run", "--timeout", "3s", "echo hi")

    # A question, while its run is still waiting on it.
    QUESTION_RUN.write(dialog)
    waiting = start_contenox(inst, "run", "--policy", "run", "--timeout", "60s", "pick a db")
    question = await_approval(inst, 30, kind="question")
    rec.save("approvals_list.txt", "approvals", "list")
    inst.must("approvals", "respond", question.id, "--answer", "use the staging database")
    waiting.wait(timeout=90).assert_success()
    rec.save("mission_list.txt", "mission", "list")

    # Sessions: a name with a space, a chat turn in it, and an empty one.
    CHAT.write(dialog)
    inst.must("session", "new", "alpha")
    inst.must("session", "new", "my work")
    inst.must("chat", "say hello")
    chat_request = inst.must("state", "list").stdout.split()[-1]
    rec.save("session_list.txt", "session", "list")
    rec.save("session_list_all.txt", "session", "list", "--all")
    rec.save("session_show.txt", "session", "show", "my work")
    rec.save("session_show.empty.txt", "session", "show", "alpha")
    rec.save("state_list.txt", "state", "list")
    rec.save("state_show_raw.json", "state", "show", chat_request, "--raw")

    # A second backend whose model lacks capabilities.
    embedder = EMBEDDER.write(inst.work / "embedder.json")
    inst.must("backend", "add", "embedder", "--type", "scripted-test", "--script", embedder)
    rec.save("backend_list.txt", "backend", "list")
    rec.save("backend_show.json", "backend", "show", "scripted")
    rec.save("model_list.txt", "model", "list")
    rec.save("doctor.txt", "doctor")
    rec.save("doctor_json.json", "doctor", "--json")
    return rec.written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=FIXTURES, help="where to write (%(default)s)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch instance")
    args = parser.parse_args(argv)
    binary = resolve_binary()
    print(binary.header(), file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="contenox-fixtures-"))
    instance = Instance.create(root, binary=binary.path)
    try:
        written = record(instance, args.out)
    finally:
        leftovers = instance.close()
        if args.keep:
            print(f"scratch instance kept at {instance.root}", file=sys.stderr)
        else:
            instance.remove()
    for report in leftovers:
        print(f"killed at the end: {report}", file=sys.stderr)
    print(f"recorded {len(written)} fixtures into {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
