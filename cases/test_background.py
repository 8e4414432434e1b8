"""A `contenox run` blocked on an approval, answered from another process while it waits."""

from __future__ import annotations

from harness import (
    Instance,
    Process,
    Script,
    ToolCall,
    Turn,
    mission_finish,
    mission_report,
    start_contenox,
    wait_until,
)

# Under the `run` envelope `stat_file` is allowed, except on secret-looking
# paths (`**/{*.pem,*.key,.env,.env.*}`), where the grant is `approve`: the
# call becomes a durable ask and the run waits on it.
GATED_RUN = Script(
    turns=[
        Turn(
            text="Checking the env file.",
            tool_calls=[ToolCall(name="stat_file", arguments={"path": ".env"})],
        ),
        Turn(
            text="Filing.", tool_calls=[mission_report("result", "env file checked after approval")]
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        # After mission_finish contenox asks for this turn only sometimes.
        Turn(text="Mission finished.", optional=True),
    ]
)


def _blocked_run(instance: Instance) -> tuple[Process, str]:
    """Start the gated run in the background; return it and the id of the ask it waits on."""
    instance.init()
    instance.write(".env", "API_URL=http://localhost\n")
    instance.use_script(GATED_RUN)
    run = start_contenox(instance, "run", "--policy", "run", "check the env file")
    # Read the inbox only once the run has raised its ask (it logs `subject="ask
    # raised"`): a second process opening the store while `run` is still starting
    # up can make that start fail with SQLITE_BUSY (seen under load), which is a
    # finding of its own, not what this case checks.
    run.wait_for_output('subject="ask raised"', stream="stderr", timeout=60)

    def pending_ask() -> str | None:
        rows = instance.must("approvals", "list").stdout.splitlines()[1:]
        for row in rows:
            if "stat_file" in row:
                return row.split()[0]
        return None

    ask = wait_until(
        pending_ask,
        timeout=60,
        interval=0.5,
        what="the run's stat_file ask to show in `contenox approvals list`",
        context=run.describe,
    )
    return run, ask


def test_a_run_that_stops_at_an_approval_waits_and_another_process_sees_the_ask(
    instance: Instance,
) -> None:
    run, ask = _blocked_run(instance)
    listing = instance.must("approvals", "list")
    row = next(line for line in listing.stdout.splitlines() if line.startswith(ask))
    assert "permission" in row and "native-fs-browse.stat_file" in row, listing.describe()
    assert run.running, f"the run did not wait for its ask\n{run.describe()}"
    instance.must("approvals", "respond", ask, "--deny")
    run.wait(timeout=60)


def test_approvals_respond_releases_a_waiting_run_and_it_lands(instance: Instance) -> None:
    run, ask = _blocked_run(instance)
    instance.must("approvals", "respond", ask, "--approve")
    result = run.wait(timeout=120)
    result.assert_success()
    result.assert_stdout_contains("env file checked after approval")
    result.assert_notices_contain("finished: landed")
    remaining = instance.must("approvals", "list")
    remaining.refute_stdout_contains(ask)
