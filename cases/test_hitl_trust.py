"""`contenox hitl trust`: pin the binaries a policy's allow rules may run, by real path and SHA256.

The binary trusted is a small executable the case writes into the scratch
workspace, so its hash is known; the policy is a hand-written top-level copy
(`.contenox/hitl-policy-mine.json`), the only kind `hitl trust` may write.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from harness import Case, Instance, step

POLICY = '{"default_action": "approve",\n  "rules": []}\n'
TOOL = "#!/bin/sh\necho trusted tool\n"


def _setup(instance: Instance) -> tuple[Path, Path]:
    """The policy file and an executable ``bin/mytool``; both in the workspace."""
    instance.init()
    policy = instance.write(".contenox/hitl-policy-mine.json", POLICY)
    tool = instance.write("bin/mytool", TOOL)
    tool.chmod(0o755)
    return policy, tool


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _hashes(policy: Path) -> dict[str, str]:
    data = json.loads(policy.read_text())
    return dict(data.get("trusted_binaries", {}).get("hashes", {}))


def _trust(instance: Instance, *args: str | os.PathLike[str], **kw: object) -> str:
    return instance.must("hitl", "trust", "--policy", "hitl-policy-mine.json", *args, **kw).stdout


def test_trust_records_a_binary_s_real_path_and_sha256_without_touching_other_bytes(
    instance: Instance,
) -> None:
    # function: needs the scratch path in argv and the policy file afterwards
    policy, tool = _setup(instance)
    out = _trust(instance, tool)
    real = str(tool.resolve())
    assert real in out, out
    assert _hashes(policy) == {real: _sha(tool)}
    # Spliced in: every byte after the opening brace is still there, as written.
    assert policy.read_text().endswith(POLICY[1:]), policy.read_text()


def test_trust_resolves_a_bare_name_on_path_through_symlinks_to_the_real_file(
    instance: Instance,
) -> None:
    # function: needs a PATH holding a symlink in the scratch root
    policy, tool = _setup(instance)
    links = instance.work / "links"
    links.mkdir()
    (links / "mytool").symlink_to(tool)
    path = f"{links}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    _trust(instance, "mytool", env={"PATH": path})
    assert _hashes(policy) == {str(tool.resolve()): _sha(tool)}


def test_trust_list_shows_each_declaration_and_changes_nothing(instance: Instance) -> None:
    # function: needs the scratch path in argv and the policy file afterwards
    policy, tool = _setup(instance)
    _trust(instance, tool)
    before = policy.read_text()
    listing = _trust(instance, "--list")
    assert str(tool.resolve()) in listing and _sha(tool) in listing, listing
    assert policy.read_text() == before


def test_trust_refresh_rewrites_the_hash_of_an_upgraded_binary(instance: Instance) -> None:
    # function: needs the binary changed between two commands
    policy, tool = _setup(instance)
    _trust(instance, tool)
    tool.write_text(TOOL + "echo upgraded\n")
    assert _hashes(policy)[str(tool.resolve())] != _sha(tool)
    _trust(instance, "--refresh")
    assert _hashes(policy) == {str(tool.resolve()): _sha(tool)}


def test_trust_remove_drops_a_declaration(instance: Instance) -> None:
    # function: needs the scratch path in argv and the policy file afterwards
    policy, tool = _setup(instance)
    _trust(instance, tool)
    _trust(instance, "--remove", tool)
    assert _hashes(policy) == {}


TRUST_REFUSES_A_RENDER = Case(
    name="trust refuses to write a rendered envelope and names the top level copy to make",
    steps=[
        step(
            "hitl",
            "trust",
            "ls",
            exit_code=1,
            notices_has=[
                "rendered from [envelopes.default]",
                ".contenox/hitl-policy-default.json",
            ],
        )
    ],
)

TRUST_REFUSES_A_BARE_ENVELOPE_NAME = Case(
    name="trust policy strict is refused as not found",
    steps=[
        step(
            "hitl",
            "trust",
            "--policy",
            "strict",
            "ls",
            exit_code=1,
            notices_has=['policy "strict" not found on the search path'],
        )
    ],
)
