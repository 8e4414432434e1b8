"""Pairing a machine with a relay: `contenox pair` / `unpair`, `/pair`, `/unpair`, `/link`.

The relay is the harness's loopback relay (harness/servers/relay.py): it mints keys,
answers ``POST /v1/pair/redeem`` as a self-hosted relay would, hands out its own
public key, and records every request. contenox trusts its throwaway TLS certificate
through ``relay.env`` (``SSL_CERT_FILE``); nothing else about the child changes.

Every case here is a function: it drives the relay (mints a key, reads what the relay
received, compares the stored credential with what the relay handed out), which no
step type can express.
"""

from __future__ import annotations

import json
import re
import socket

from harness import Instance, Script, Terminal, open_acp, open_terminal
from harness.process import Process, start_contenox
from harness.servers.relay import Relay, serve_relay

COMPOSER = "type / for commands"
INSTANCE_ID = "inst-e2e"
ACCOUNT_ID = "acct-e2e"
NOT_PAIRED = "This machine is not paired with a relay."
# A configured model, so a session opens; slash commands never ask it anything.
CONFIGURED = Script(turns=["Slash commands never reach the model."])


def _relay_json(instance: Instance) -> dict[str, str]:
    data: dict[str, str] = json.loads(
        (instance.home / ".contenox" / "relay.json").read_text(encoding="utf-8")
    )
    return data


def _paired(instance: Instance, **options: object) -> Relay:
    """A relay for this case and a machine paired with it by `contenox pair <key> <url>`."""
    relay = serve_relay(instance, **options)
    instance.must("pair", relay.mint_key(), relay.url, env=relay.env)
    return relay


def _configured(instance: Instance) -> None:
    instance.init()
    instance.use_script(CONFIGURED)


def _settled(term: Terminal, text: str) -> str:
    """Wait until beam shows ``text`` and its status bar is idle again (no "- working")."""
    # The status bar reads "beam-<id> (1)  0/131072" once idle, "(1)  - working  0/…" before.
    return term.wait_for(re.compile(re.escape(text) + r"[\s\S]*beam-\S+ \(\d+\)  \d+/"), 60)


def _quit(term: Terminal) -> None:
    """Leave beam as a person does, so the case ends with nothing running."""
    term.send_line("/quit")
    term.wait_exit(timeout=30)


def _beam(instance: Instance, relay: Relay) -> Terminal:
    _configured(instance)
    return _open_beam(instance, relay.env)


def _open_beam(instance: Instance, env: dict[str, str]) -> Terminal:
    term = open_terminal(instance, "beam", "--plain", env=env)
    screen = term.wait_for(COMPOSER, timeout=60)
    # The session id is random hex, all digits now and then, which the generic id
    # redaction (it wants a letter) misses: name it so the transcript is stable.
    match = re.search(r"session (beam-[0-9a-f]+)", screen)
    if match:
        instance.recorder.name(match.group(1), "beam-[SESSION]")
    return term


# ---------------------------------------------------------------- contenox pair <key>


def test_pair_with_a_key_and_an_inline_endpoint_stores_what_the_relay_answered(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    key = relay.mint_key(instance_id=INSTANCE_ID, account_id=ACCOUNT_ID)
    paired = instance.must("pair", key, relay.url, env=relay.env)
    assert f"(instance {INSTANCE_ID})" in paired.stdout, paired.describe()
    assert f"Attached to account {ACCOUNT_ID}." in paired.stdout, paired.describe()
    assert f"Relay: {relay.url}" in paired.stdout, paired.describe()
    assert _relay_json(instance) == {
        "endpoint": relay.url,
        "instance_token": relay.token_of(INSTANCE_ID),
        "instance_id": INSTANCE_ID,
        "account_id": ACCOUNT_ID,
        "relay_public_key": relay.public_key,
    }


def test_pair_stores_the_credential_readable_by_the_user_only(instance: Instance) -> None:
    # function: drives the relay
    _paired(instance)
    mode = (instance.home / ".contenox" / "relay.json").stat().st_mode & 0o777
    assert mode == 0o600, f"relay.json is {oct(mode)}; it holds the instance token"


def test_redeeming_a_key_sends_exactly_the_key_and_this_machines_hostname(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    key = relay.mint_key()
    instance.must("pair", key, relay.url, env=relay.env)
    [redeemed] = relay.redemptions()
    assert redeemed.json() == {"key": key, "instance_name": socket.gethostname()}, relay.describe()


def test_contenox_relay_endpoint_is_the_relay_pair_redeems_against_without_an_inline_one(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    env = {**relay.env, "CONTENOX_RELAY_ENDPOINT": relay.url}
    instance.must("pair", relay.mint_key(), env=env)
    assert len(relay.redemptions()) == 1, relay.describe()
    assert _relay_json(instance)["endpoint"] == relay.url


def test_a_self_hosted_relay_is_shown_by_its_own_address_not_the_hosted_app(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    paired = instance.must("pair", relay.mint_key(), relay.url, env=relay.env)
    status = instance.must("pair")
    for shown in (paired, status):
        assert relay.url in shown.stdout, shown.describe()
        assert "app.contenox.com" not in shown.stdout, shown.describe()


def test_a_key_the_relay_refuses_fails_with_the_relays_reason_and_stores_nothing(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    refused = instance.contenox("pair", "ZZZ-999", relay.url, env=relay.env)
    assert refused.exit_code != 0, refused.describe()
    assert "unknown, expired or already used" in refused.stderr, refused.describe()
    assert not (instance.home / ".contenox" / "relay.json").exists()


def test_a_second_redemption_of_the_same_key_is_refused_and_keeps_the_first_pairing(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    key = relay.mint_key()
    instance.must("pair", key, relay.url, env=relay.env)
    first = _relay_json(instance)
    again = instance.contenox("pair", key, relay.url, env=relay.env)
    assert again.exit_code != 0, again.describe()
    assert _relay_json(instance) == first


# ---------------------------------------------------------------- contenox pair (status)


def test_pair_with_no_key_reports_relay_instance_account_and_app_url_never_the_token(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    status = instance.must("pair", env=relay.env)
    assert f"Paired with {relay.url}." in status.stdout, status.describe()
    assert f"Instance {INSTANCE_ID}, account {ACCOUNT_ID}." in status.stdout, status.describe()
    assert f"App: {relay.url}" in status.stdout, status.describe()
    token = relay.token_of(INSTANCE_ID)
    assert token not in status.stdout + status.stderr, status.describe()


def test_pair_with_no_key_changes_nothing_and_contacts_no_relay(instance: Instance) -> None:
    # function: drives the relay
    relay = _paired(instance)
    before = _relay_json(instance)
    instance.must("pair", env={**relay.env, "CONTENOX_RELAY_ENDPOINT": relay.url})
    assert _relay_json(instance) == before
    assert len(relay.redemptions()) == 1, relay.describe()


def test_an_unpaired_machine_says_so_and_how_to_pair(instance: Instance) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    status = instance.must("pair", env={**relay.env, "CONTENOX_RELAY_ENDPOINT": relay.url})
    assert NOT_PAIRED in status.stdout, status.describe()
    assert "contenox pair <key>" in status.stdout, status.describe()
    assert relay.redemptions() == [] and relay.links() == [], relay.describe()


# ---------------------------------------------------------------- contenox unpair


def test_unpair_deletes_the_credential_file_and_says_it_revokes_nothing(
    instance: Instance,
) -> None:
    # function: drives the relay
    _paired(instance)
    unpaired = instance.must("unpair")
    assert not (instance.home / ".contenox" / "relay.json").exists()
    assert "Revoking the instance is done in the app" in unpaired.stdout, unpaired.describe()
    assert NOT_PAIRED in instance.must("pair").stdout


def test_deleting_relay_json_by_hand_is_the_same_as_unpair(instance: Instance) -> None:
    # function: drives the relay
    _paired(instance)
    (instance.home / ".contenox" / "relay.json").unlink()
    assert NOT_PAIRED in instance.must("pair").stdout


def test_unpair_on_an_unpaired_machine_has_nothing_to_do(instance: Instance) -> None:
    # function: reads the home directory after the command
    unpaired = instance.must("unpair")
    assert "nothing to do" in unpaired.stdout, unpaired.describe()


def test_an_unpaired_session_never_dials_a_relay(instance: Instance) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.must("unpair")
    _configured(instance)
    with open_acp(instance, env={**relay.env, "CONTENOX_RELAY_ENDPOINT": relay.url}) as acp:
        acp.list_sessions()
        stderr = acp.stderr
    assert relay.links() == [], relay.describe()
    assert "subject=relay" not in stderr, stderr


# ---------------------------------------------------------------- one pairing, every process


def test_a_paired_session_dials_the_relay_with_the_stored_credential(instance: Instance) -> None:
    # function: drives the relay
    relay = _paired(instance)
    instance.init()
    proc = start_contenox(instance, "acp", env=relay.env, stdin=True)
    link = relay.wait_link()
    assert link.bearer == relay.token_of(INSTANCE_ID), link.describe()
    assert link.instance == INSTANCE_ID, link.describe()
    proc.close_stdin()
    proc.wait(timeout=30)


def test_a_paired_beam_session_dials_the_relay_so_the_machine_is_reachable(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    term = _beam(instance, relay)
    link = relay.wait_link()
    assert link.bearer == relay.token_of(INSTANCE_ID), link.describe()
    _quit(term)


def test_pair_slash_in_beam_redeems_a_key_and_the_cli_finds_the_same_pairing(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    term = _beam(instance, relay)
    key = relay.mint_key()
    term.send_line(f"/pair {key} {relay.url}")
    _settled(term, "removes it.")
    assert [r.json()["key"] for r in relay.redemptions()] == [key], relay.describe()
    assert _relay_json(instance)["instance_token"] == relay.token_of(INSTANCE_ID)
    _quit(term)
    status = instance.must("pair")
    assert f"Paired with {relay.url}." in status.stdout, status.describe()


def test_pair_slash_in_beam_uses_contenox_relay_endpoint_without_an_inline_one(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    _configured(instance)
    env = {**relay.env, "CONTENOX_RELAY_ENDPOINT": relay.url}
    term = _open_beam(instance, env)
    term.send_line(f"/pair {relay.mint_key()}")
    _settled(term, "removes it.")
    _quit(term)
    assert len(relay.redemptions()) == 1, relay.describe()
    assert _relay_json(instance)["endpoint"] == relay.url


def test_pair_slash_with_no_key_in_beam_reports_the_pairing_never_the_token(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    term = _beam(instance, relay)
    term.send_line("/pair")
    screen = _settled(term, "removes this pairing.")
    assert relay.url in screen and ACCOUNT_ID in screen, term.describe()
    assert relay.token_of(INSTANCE_ID) not in term.raw().decode("utf-8", "replace")
    assert len(relay.redemptions()) == 1, relay.describe()
    _quit(term)


def test_unpair_slash_in_beam_deletes_the_credential_file(instance: Instance) -> None:
    # function: drives the relay
    relay = _paired(instance)
    term = _beam(instance, relay)
    term.send_line("/unpair")
    _settled(term, "Revoking the instance is done in the app.")
    assert not (instance.home / ".contenox" / "relay.json").exists(), term.describe()
    _quit(term)


def test_pair_slash_over_acp_redeems_a_key_against_the_inline_relay(instance: Instance) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    _configured(instance)
    key = relay.mint_key()
    with open_acp(instance, env=relay.env) as acp:
        turn = acp.prompt(f"/pair {key} {relay.url}")
    assert [r.json()["key"] for r in relay.redemptions()] == [key], turn.describe()
    assert _relay_json(instance)["endpoint"] == relay.url, turn.describe()


def test_pair_and_unpair_slash_over_acp_report_and_delete_the_pairing(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    _configured(instance)
    with open_acp(instance, env=relay.env) as acp:
        status = acp.prompt("/pair")
        gone = acp.prompt("/unpair")
    assert INSTANCE_ID in status.text and relay.url in status.text, status.describe()
    assert relay.token_of(INSTANCE_ID) not in status.text, status.describe()
    assert not (instance.home / ".contenox" / "relay.json").exists(), gone.describe()


# ---------------------------------------------------------------- /link


def test_link_slash_on_a_paired_machine_prints_a_url_on_the_relays_origin(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    _configured(instance)
    with open_acp(instance, env=relay.env) as acp:
        turn = acp.prompt("/link")
    assert relay.url in turn.text, turn.describe()
    assert acp.session_id is not None and acp.session_id in turn.text, turn.describe()


def test_link_slash_on_an_unpaired_machine_points_at_pair(instance: Instance) -> None:
    # function: needs acp with nothing paired
    _configured(instance)
    with open_acp(instance) as acp:
        turn = acp.prompt("/link")
    assert "/pair" in turn.text, turn.describe()


# ---------------------------------------------------------------- contenox serve


def _serve(instance: Instance, relay: Relay) -> tuple[Process, str]:
    """Start `contenox serve`; return it and its status screen up to "Running."."""
    _configured(instance)
    host = start_contenox(instance, "serve", env=relay.env)
    banner = host.wait_for_output("Running. Press Ctrl-C to stop.", stream="stdout", timeout=60)
    return host, banner


def _stop(host: Process) -> None:
    host.interrupt()
    host.wait(timeout=60)


def test_a_paired_serve_shows_the_relay_and_instance_it_is_attached_to_and_dials_it(
    instance: Instance,
) -> None:
    # function: drives the relay
    relay = _paired(instance)
    host, banner = _serve(instance, relay)
    link = relay.wait_link()
    _stop(host)
    lines = [" ".join(line.split()) for line in banner.splitlines()]
    assert f"Relay attached to {relay.url}" in lines, banner
    assert f"Instance {INSTANCE_ID}" in lines, banner
    assert relay.token_of(INSTANCE_ID) not in banner, banner
    assert link.bearer == relay.token_of(INSTANCE_ID), relay.describe()


def test_an_unpaired_serve_says_so_and_prints_the_steps_to_pair(instance: Instance) -> None:
    # function: drives the relay
    relay = serve_relay(instance)
    host, banner = _serve(instance, relay)
    _stop(host)
    assert "not paired — reachable on this machine only" in banner, banner
    assert "contenox pair <key>" in banner, banner
    assert relay.links() == [], relay.describe()
