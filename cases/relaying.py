"""What the relay cases share: a paired `contenox acp` behind the loopback relay.

A module of its own (not a test_ file) because `test_relay` is also the name of a
harness test in tests/: a case importing `from test_relay import …` gets that one
whenever both are on sys.path (tox -e py loads every case file to check it).
"""

from __future__ import annotations

from harness import Instance, Script
from harness.process import Process, start_contenox
from harness.servers.relay import Link, Relay, serve_relay

INSTANCE_ID = "inst-e2e"
INIT = {"protocolVersion": 1, "clientCapabilities": {}}
# A configured model, so session/new answers; nothing here prompts it.
CONFIGURED = Script(turns=["The relay cases never prompt the model."])


def _runtime(instance: Instance, **options: object) -> tuple[Relay, Process]:
    """A relay, a machine paired with it, and a `contenox acp` session on that machine."""
    relay = serve_relay(instance, **options)
    instance.must("pair", relay.mint_key(instance_id=INSTANCE_ID), relay.url, env=relay.env)
    instance.init()
    instance.use_script(CONFIGURED)
    # stdin stays open: an editor-less `contenox acp` is a session nobody local drives.
    return relay, start_contenox(instance, "acp", env=relay.env, stdin=True)


def _connected(instance: Instance, **options: object) -> tuple[Relay, Link, Process]:
    relay, proc = _runtime(instance, **options)
    return relay, relay.wait_link(), proc


def _end(proc: Process) -> None:
    """Close the session as an editor quitting would, and wait for it to exit."""
    proc.close_stdin()
    proc.wait(timeout=30)
