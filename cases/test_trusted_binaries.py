"""Trusted binaries: an allowlisted shell name runs unattended only while it is the binary declared.

guide/confinement/trusted-binaries.md: a ``command_prefix_allowlist`` allow
pins a name; ``trusted_binaries.dirs`` and ``.hashes`` withdraw that allow
when the name resolves outside the declared directories or to bytes that do
not hash as declared, so the call stops for a person instead.

Every case fires a real ``run`` whose scripted unit calls ``local_shell`` with
``echo``, under a hand-written policy that allowlists ``echo`` and asks about
every other shell line. The verdict is read where a person sees it: a run
that lands with no ask (the allow held), or an ask in ``approvals list`` that
is then denied (the allow was withdrawn). A "planted" ``echo`` — a script
earlier on ``PATH`` that leaves a marker file when it runs — shows which
binary a call actually ran.

Each case that stops a call or refuses a policy has a control: the same call
and layout with only the pin changed (the digest, the dir, the declared path,
a well-formed block), in which the echo runs unattended. Existing pairs are
named in a comment by the refusal.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dialogs import workspace_file
from harness import (
    Case,
    Defect,
    Instance,
    Script,
    ToolCall,
    Turn,
    acp_turn,
    await_ask,
    background,
    edit,
    link,
    mission_finish,
    probe,
    prompt,
    respond,
    route,
    satisfies,
    step,
    wait,
    write,
)
from harness.acp.turn import PromptTurn
from harness.case import Action, Edit, Step
from harness.probes import approvals, await_approval, deny, missions
from harness.process import start_contenox

POLICY = "hitl-policy-pinned.json"

ECHO = Script(
    turns=[
        Turn(
            text="Greeting.",
            tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["pinned hello"]})],
        ),
        Turn(tool_calls=[mission_finish("landed")]),
        "Done.",
    ]
)

PLANTED = '#!/bin/sh\necho planted > "$PLANT_MARKER"\necho planted\n'


def _real_echo() -> Path:
    found = shutil.which("echo")
    assert found, "this host has no echo on PATH"
    return Path(os.path.realpath(found))


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _policy(trusted: Mapping[str, Any] | None) -> dict[str, Any]:
    policy: dict[str, Any] = {
        "version": 1,
        "default_action": "approve",
        "rules": [
            {"tools": "mission", "tool": "*", "action": "allow"},
            {
                "tools": "local_shell",
                "tool": "local_shell",
                "action": "allow",
                "when": [{"key": "command", "op": "command_prefix_allowlist", "value": "echo"}],
            },
            {"tools": "local_shell", "tool": "local_shell", "action": "approve"},
        ],
    }
    if trusted is not None:
        policy["trusted_binaries"] = dict(trusted)
    return policy


def _setup(instance: Instance, trusted: Mapping[str, Any] | None) -> Path:
    instance.init()
    path = instance.home / ".contenox" / POLICY
    path.write_text(json.dumps(_policy(trusted), indent=2) + "\n")
    instance.use_script(ECHO)
    return path


def _plant(instance: Instance) -> dict[str, str]:
    """Put a fake ``echo`` first on PATH; returns the env that makes it win."""
    planted = instance.write("planted/echo", PLANTED)
    planted.chmod(0o755)
    return {
        "PATH": f"{planted.parent}:{os.environ['PATH']}",
        "PLANT_MARKER": str(instance.work / "planted-ran"),
    }


def _run_lands_unattended(instance: Instance, env: Mapping[str, str] | None = None) -> None:
    instance.must(
        "run", "--policy", "pinned", "--timeout", "90s", "say hello", env=env, timeout=120
    )
    assert approvals(instance) == []
    assert [m.status for m in missions(instance)] == ["landed"]


def _run_stops_for_approval(instance: Instance, env: Mapping[str, str] | None = None) -> None:
    run = start_contenox(
        instance, "run", "--policy", "pinned", "--timeout", "90s", "say hello", env=env
    )
    ask = await_approval(instance, 60, tool="local_shell.local_shell", run=run)
    assert "echo" in ask.summary, ask
    deny(instance, ask.id)
    run.wait(timeout=90).assert_success()


def _policy_text(trusted: Mapping[str, Any] | None) -> str:
    return json.dumps(_policy(trusted), indent=2) + "\n"


def _pinned(name: str, trusted: Mapping[str, Any] | None, *steps: Action, **case: Any) -> Case:
    """The pinned policy (its trusted_binaries block: ``trusted``), then ``steps``."""
    return Case(
        name=name,
        script=ECHO,
        steps=[write(POLICY, _policy_text(trusted), home=True), *steps],
        **case,
    )


_RUN = ("run", "--policy", "pinned", "--timeout", "90s", "say hello")
_NO_ASKS = probe("pending asks", approvals, expect=[])


def _statuses(instance: Instance) -> list[str]:
    """The status of every mission, as ``mission list`` prints them."""
    return [m.status for m in missions(instance)]


def _lands(env: Mapping[str, str] | None = None) -> tuple[Action, ...]:
    """The pinned run lands with nothing left waiting on a person."""
    return (
        step(*_RUN, timeout=120, env=dict(env or {})),
        _NO_ASKS,
        probe("mission statuses", _statuses, expect=["landed"]),
    )


def _stops(env: Mapping[str, str] | None = None) -> tuple[Action, ...]:
    """The pinned run's echo stops for approval; the ask is denied and the run lands."""
    return (
        background("run", *_RUN, env=dict(env or {})),
        await_ask("ask", tool="local_shell.local_shell", timeout=60),
        probe(
            "pending asks",
            approvals,
            expect=satisfies(
                lambda asks: any("echo" in a.summary for a in asks), "an ask about echo"
            ),
        ),
        respond("ask", "deny"),
        wait("run"),
    )


LANDS_UNATTENDED = _lands()
STOPS_FOR_APPROVAL = _stops()

# A fake ``echo`` first on PATH: it leaves a marker file when it runs.
PLANT = edit("planted/echo", append=PLANTED, executable=True)
PLANTED_ENV = {"PATH": "{work}/planted:" + os.environ["PATH"], "PLANT_MARKER": "{work}/planted-ran"}
PLANTED_RAN = workspace_file(
    "planted-ran", expect=satisfies(lambda text: text is not None, "the marker left")
)
PLANTED_NEVER_RAN = workspace_file("planted-ran", expect=None)

_ECHO_PATH = _real_echo()
_ECHO_SHA = _sha256(_ECHO_PATH)

INSIDE_TRUSTED_DIR = _pinned(
    "a name resolving inside a trusted dir runs unattended",
    {"dirs": [str(_ECHO_PATH.parent)]},
    *LANDS_UNATTENDED,
)

ANY_DEPTH = _pinned(
    "a trusted dir matches at any depth",
    {"dirs": [str(_ECHO_PATH.parent.parent)]},
    *LANDS_UNATTENDED,
)

HASH_MATCHES = _pinned(
    "a binary matching its declared hash runs unattended",
    {"hashes": {str(_ECHO_PATH): _ECHO_SHA}},
    *LANDS_UNATTENDED,
)

HASH_ANY_CASE = _pinned(
    "a declared hash is compared case insensitively",
    {"hashes": {str(_ECHO_PATH): _ECHO_SHA.upper()}},
    *LANDS_UNATTENDED,
)

# Control: HASH_MATCHES, the same declaration with the real digest.
HASH_MISMATCH = _pinned(
    "a binary that no longer matches its declared hash stops for approval",
    {"hashes": {str(_ECHO_PATH): "0" * 64}},
    *STOPS_FOR_APPROVAL,
)

_LS = Path(os.path.realpath(shutil.which("ls") or "/bin/ls"))

# Control: HASH_MATCHES, the same kind of declaration naming echo itself.
ANY_HASH_STRICT = _pinned(
    "declaring any hash makes the pin strict for an undeclared binary",
    {"hashes": {str(_LS): _sha256(_LS)}},
    *STOPS_FOR_APPROVAL,
)


# The gap the page describes: the allow rule blesses the name, whatever it resolves to.
PLANTED_WITHOUT_PINS = _pinned(
    "without trusted_binaries a planted echo on PATH runs unattended",
    None,
    PLANT,
    *_lands(PLANTED_ENV),
    PLANTED_RAN,
)

# Control of the two below: PLANTED_WITHOUT_PINS, the same plant with no block; it runs.
PLANTED_OUTSIDE_DIRS = _pinned(
    "a name resolving outside every trusted dir stops for approval and does not run",
    {"dirs": [str(_ECHO_PATH.parent)]},
    PLANT,
    *_stops(PLANTED_ENV),
    PLANTED_NEVER_RAN,
)

PLANTED_UNDER_HASHES = _pinned(
    "declaring only hashes still stops a planted binary",
    {"hashes": {str(_ECHO_PATH): _ECHO_SHA}},
    PLANT,
    *_stops(PLANTED_ENV),
    PLANTED_NEVER_RAN,
)


# ``echo`` through a link in the workspace, first on PATH: the name resolves to the real file.
_LINKED_ECHO = link("links/echo", str(_ECHO_PATH))
_LINKED_ENV = {"PATH": "{work}/links:" + os.environ["PATH"]}

TRUSTED_DIR_THROUGH_A_LINK = _pinned(
    "a trusted dir given through a symlink matches its real directory",
    {"dirs": ["{work}/bin-link"]},
    link("bin-link", str(_ECHO_PATH.parent)),
    *LANDS_UNATTENDED,
)

# Declared under the symlink, not the real file: the evaluator looks up the real path.
HASH_UNDER_A_LINK = _pinned(
    "a hash declared under a symlink path is not the real path and stops the call",
    {"hashes": {"{work}/links/echo": _ECHO_SHA}},
    _LINKED_ECHO,
    *_stops(_LINKED_ENV),
)

# The control: the same link first on PATH, the hash declared under the real path.
HASH_UNDER_THE_REAL_PATH = _pinned(
    "a hash declared under the real path of a linked name lets the call run unattended",
    {"hashes": {str(_ECHO_PATH): _ECHO_SHA}},
    _LINKED_ECHO,
    *_lands(_LINKED_ENV),
)


# Each broken block fails `vet` naming it, and fails the run closed: the allowlisted name
# does not run unattended under a broken pin.
MALFORMED_BLOCKS = [
    _pinned(
        f"a malformed trusted binaries block fails the policy and vet names it ({variant})",
        block,
        PLANT,
        step(
            "vet",
            "{home}/.contenox/" + POLICY,
            exit_code="non-zero",
            stdout_has=[complaint],
        ),
        step(
            "run",
            "--policy",
            "pinned",
            "--timeout",
            "10s",
            "say hello",
            env=PLANTED_ENV,
            timeout=60,
            exit_code="non-zero",
        ),
        PLANTED_NEVER_RAN,
    )
    for variant, block, complaint in (
        ("relative dir", {"dirs": ["usr/bin"]}, "must be an absolute path"),
        ("short digest", {"hashes": {"/usr/bin/echo": "abc123"}}, "trusted_binaries"),
        ("relative hash key", {"hashes": {"bin/echo": "0" * 64}}, "trusted_binaries"),
        ("unknown key", {"dirs": ["/usr/bin"], "pins": {}}, "trusted_binaries"),
    )
]

# The control: a well-formed block trusting the plant's own directory passes vet, and the
# same run lands with the planted echo run, so the refusals above are the blocks'.
WELL_FORMED_BLOCK = _pinned(
    "a well formed trusted binaries block passes vet and the pinned call runs",
    {"dirs": ["{work}/planted"]},
    PLANT,
    step("vet", "{home}/.contenox/" + POLICY),
    step(
        "run",
        "--policy",
        "pinned",
        "--timeout",
        "10s",
        "say hello",
        env=PLANTED_ENV,
        timeout=60,
    ),
    _NO_ASKS,
    PLANTED_RAN,
)


# --- declaring with hitl trust

_TOOL = "{work}/tools/mytool"
_TOOL_V1 = "#!/bin/sh\nexit 0\n"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _declared_hashes(instance: Instance) -> dict[str, str]:
    """The pinned policy's trusted_binaries.hashes, the workspace path read as ``[WORK]``."""
    block = json.loads((instance.home / ".contenox" / POLICY).read_text())["trusted_binaries"]
    return {k.replace(str(instance.work), "[WORK]"): v for k, v in block["hashes"].items()}


def _declared_dirs(instance: Instance) -> object:
    """The pinned policy's trusted_binaries.dirs (None when it has none)."""
    block = json.loads((instance.home / ".contenox" / POLICY).read_text())["trusted_binaries"]
    return block.get("dirs")


def _trust(*names: str) -> Step:
    return step("hitl", "trust", "--policy", POLICY, *names)


SPLICES_DIRS = _pinned(
    "hitl trust splices the binary's directory into dirs beside its hash",
    None,
    _trust("echo"),
    probe("trusted_binaries.dirs", _declared_dirs, expect=[str(_ECHO_PATH.parent)]),
    defect=Defect(
        title="hitl trust writes the binary's hash but not its directory into dirs",
        second_reading=(
            "2026-12-02, a second reader with only this text and the docs, in a "
            "fresh scratch home: real. Saw: hitl trust --policy hitl-policy-"
            "pinned.json echo -> 'updated … (1 declared binaries)'; file gets "
            '\'"trusted_binaries": {"hashes": {"/usr/bin/echo": "a049…"}}\' and no '
            "dirs; --list: 'dirs: (none declared — any directory a name resolves "
            "from is accepted…)' Note: I had to write the policy in the page's "
            "when-array form ([{key:command, op:command_prefix_allowlist, "
            'value:"echo"}]) — other forms are refused by validation. The page\'s '
            "example output right after line 87 (lines 89-100) shows dirs spliced"
            " in with hashes; line 142 notes hashes-only is a valid hand-written "
            "pin but does not describe the verb's output."
        ),
        reproduce=(
            "in a scratch HOME, `contenox init`; `~/.contenox/hitl-policy-pinned.json` holding a "
            "policy with no trusted_binaries block (default deny, `local_shell` allowed by "
            "command_prefix_allowlist `echo`); `contenox hitl trust --policy "
            'hitl-policy-pinned.json echo` writes only `"trusted_binaries": {"hashes": '
            '{"/usr/bin/echo": "<sha256>"}}` — no `dirs` — and `contenox hitl trust '
            "--policy hitl-policy-pinned.json --list` prints 'dirs: (none declared — any "
            "directory a name resolves from is accepted…)'"
        ),
        promised=(
            'guide/confinement/trusted-binaries.md:87 "which resolves each name exactly '
            'as the evaluator will, and splices the result into the policy:"'
        ),
        observed="only `hashes` is written; `dirs` stays absent",
    ),
)

_TOOL_V2 = "#!/bin/sh\nexit 0\n# upgraded\n"

REFRESH = _pinned(
    "hitl trust refresh rewrites a changed digest and reports it",
    None,
    write("tools/mytool", _TOOL_V1),
    _trust(_TOOL),
    write("tools/mytool", _TOOL_V2),
    # An explicit file path works as well as a name on the search path.
    step(
        "hitl",
        "trust",
        "--policy",
        "{home}/.contenox/" + POLICY,
        "--refresh",
        stdout_has=[_TOOL, _sha(_TOOL_V2)],
    ),
    probe(
        "trusted_binaries.hashes",
        _declared_hashes,
        expect={"[WORK]/tools/mytool": _sha(_TOOL_V2)},
    ),
)

REMOVE = _pinned(
    "hitl trust remove drops a declaration",
    None,
    write("tools/mytool", _TOOL_V1),
    _trust("echo", _TOOL),
    _trust("--remove", "echo"),
    probe(
        "trusted_binaries.hashes",
        _declared_hashes,
        expect={"[WORK]/tools/mytool": _sha(_TOOL_V1)},
    ),
)


def _declare(instance: Instance, *names: str, env: Mapping[str, str] | None = None) -> str:
    result = instance.must("hitl", "trust", "--policy", POLICY, *names, env=env)
    return result.stdout + result.stderr


def _declared_hashes(instance: Instance) -> object:
    """The trusted_binaries.hashes of the pinned policy file, as written on disk."""
    policy = json.loads((instance.home / ".contenox" / POLICY).read_text(encoding="utf-8"))
    return policy.get("trusted_binaries", {}).get("hashes")


HITL_TRUST_DECLARES = _pinned(
    "hitl trust declares a name as its real path and hash and the call runs unattended",
    None,
    _LINKED_ECHO,
    step(
        "hitl",
        "trust",
        "--policy",
        POLICY,
        "echo",
        env=_LINKED_ENV,
        stdout_has=[str(_ECHO_PATH), _ECHO_SHA],
    ),
    probe("the declared hashes", _declared_hashes, expect={str(_ECHO_PATH): _ECHO_SHA}),
    *_lands(_LINKED_ENV),
)


def _rendered_default(instance: Instance) -> str:
    """The rendered default envelope's policy, as on disk."""
    rendered = instance.home / ".contenox" / ".generated" / "hitl-policy-default.json"
    return rendered.read_text(encoding="utf-8")


_READ_THE_RENDER = probe("the rendered default policy", _rendered_default, capture="rendered")


def _rendered_sha(instance: Instance) -> str:
    return hashlib.sha256(_rendered_default(instance).encode()).hexdigest()


# Control: HITL_TRUST_WRITES_A_TOP_LEVEL_COPY, the same call on the copy that shadows it.
REFUSES_A_RENDERED_ENVELOPE = Case(
    name="hitl trust refuses to write into a rendered envelope",
    # Where the refusal says to copy the render is COPY_TARGET_NAMED's promise
    # (quarantined): the transcript does not pin it here.
    redact={r"Copy it to \S+ first": "Copy it to [COPY TARGET] first"},
    steps=[
        probe("the rendered default policy's sha256", _rendered_sha, capture="rendered"),
        step(
            "hitl",
            "trust",
            "--policy",
            "hitl-policy-default.json",
            "echo",
            exit_code="non-zero",
            stderr_has=["is rendered from [envelopes.default]", "silently discarded", "--policy"],
        ),
        probe(
            "the rendered default policy is unchanged",
            lambda i, before: _rendered_sha(i) == before,
            "{rendered}",
            expect=True,
        ),
    ],
)


# The control of the refusal above: the same call once the home holds the top-level copy
# that shadows the render; it writes the hash there.
_TOP_LEVEL_COPY = '{"version": 1, "default_action": "approve", "rules": []}\n'

HITL_TRUST_WRITES_A_TOP_LEVEL_COPY = Case(
    name="hitl trust writes into the top level copy that shadows a rendered envelope",
    steps=[
        # A top-level copy by that file name (its rules do not matter to hitl trust).
        write("hitl-policy-default.json", _TOP_LEVEL_COPY, home=True),
        step("hitl", "trust", "--policy", "hitl-policy-default.json", "echo"),
        probe(
            "the copy's trusted_binaries.hashes",
            lambda i: json.loads(
                (i.home / ".contenox" / "hitl-policy-default.json").read_text(encoding="utf-8")
            )["trusted_binaries"]["hashes"],
            expect={str(_ECHO_PATH): _ECHO_SHA},
        ),
    ],
)


# The refusal above names a copy to make; where is this case's promise.
COPY_TARGET_NAMED = Case(
    name="hitl trust names the home's top level copy of a global render to make",
    steps=[
        step(
            "hitl",
            "trust",
            "--policy",
            "hitl-policy-default.json",
            "echo",
            exit_code="non-zero",
            stderr_has=["Copy it to {home}/.contenox/hitl-policy-default.json first"],
        ),
    ],
    defect=Defect(
        title="hitl trust --policy on a rendered global envelope names a workspace copy to make",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Fresh HOME + empty workspace, `init` (workspace "
            ".contenox/ holds only workspace.id). `hitl trust --policy "
            "hitl-policy-default.json echo` -> exit 1, 'Error: "
            "<HOME>/.contenox/.generated/hitl-policy-default.json is rendered from "
            "[envelopes.default] in agents.toml and is rewritten on every run — a hash "
            "declared there would be silently discarded.' and 'Copy it to "
            "<WORKSPACE>/.contenox/hitl-policy-default.json first (a top-level copy shadows "
            "the rendered one), then re-run; or pass --policy with an explicit path'. Note: "
            "Reproduces. trusted-binaries.md:178 shows the message naming "
            "~/.contenox/hitl-policy-default.json, and :182 calls that per-host copy 'the "
            "intended home'. The binary names the workspace copy instead, although the "
            "refused render is the global ~/.contenox/.generated one. A workspace..."
        ),
        reproduce=(
            "in a scratch HOME (an empty workspace), `contenox init`; `contenox hitl trust "
            "--policy hitl-policy-default.json echo` exits 1 with 'Error: "
            "~/.contenox/.generated/hitl-policy-default.json is rendered from "
            "[envelopes.default] in agents.toml and is rewritten on every run — a hash declared "
            "there would be silently discarded.' and 'Copy it to "
            "<workspace>/.contenox/hitl-policy-default.json first (a top-level copy shadows the "
            "rendered one), then re-run; or pass --policy with an explicit path'"
        ),
        promised=(
            'guide/confinement/trusted-binaries.md:178 "Copy it to '
            '~/.contenox/hitl-policy-default.json first (a top-level copy shadows"'
        ),
        observed="'Copy it to <workspace>/.contenox/hitl-policy-default.json first …'",
        bears_on=(
            'guide/confinement/trusted-binaries.md:182 "That copy is the intended home: '
            'a per-host file, owned by whoever runs that host,"',
            'reference/contenox-cli.md:311 "The message names the top-level copy to make '
            'instead, which shadows the render"',
        ),
    ),
)


# function: deletes a file and puts a directory in its place between commands
def test_hitl_trust_list_reports_missing_mismatch_unreadable_and_outside_dirs(
    instance: Instance,
) -> None:
    tools = instance.work / "tools"
    names = ["gone", "changed", "unreadable", "elsewhere"]
    for name in names:
        instance.write(f"tools/{name}", f"#!/bin/sh\necho {name}\n")
    policy = _setup(instance, None)
    _declare(instance, *(str(tools / n) for n in names))
    (tools / "gone").unlink()
    (tools / "changed").write_text("#!/bin/sh\necho tampered\n")
    (tools / "unreadable").unlink()
    (tools / "unreadable").mkdir()  # present, but it cannot be read as a file (even by root)
    data = json.loads(policy.read_text())
    # Only "elsewhere" is moved out of the declared dirs: the others keep theirs.
    data["trusted_binaries"]["dirs"] = [str(tools / "sub")]
    data["trusted_binaries"]["hashes"] = {
        str(tools / "elsewhere"): data["trusted_binaries"]["hashes"][str(tools / "elsewhere")]
    }
    listing = instance.must("hitl", "trust", "--policy", POLICY, "--list").stdout
    assert "outside every trusted_binaries.dirs entry" not in listing
    policy.write_text(json.dumps(data))
    outside = instance.must("hitl", "trust", "--policy", POLICY, "--list").stdout
    assert f"{tools / 'elsewhere'}: declared outside every trusted_binaries.dirs entry" in outside
    for line, state in [
        (f"{tools / 'gone'}: declared but not present", "missing"),
        (f"{tools / 'changed'}: does not match the declared hash", "mismatch"),
        (f"{tools / 'unreadable'}: declared but unreadable", "unreadable"),
    ]:
        assert line in listing, f"{state}: {listing}"


def _trusted_binary_issue_categories(instance: Instance) -> list[object]:
    """The categories of ``doctor --json``'s issues about a trusted binary."""
    issues = json.loads(instance.must("doctor", "--json").stdout)["issues"]
    return sorted(
        {str(i.get("category")) for i in issues if "trusted-binary" in str(i.get("message"))}
    )


DOCTOR_REPORTS_DRIFT = Case(
    name="doctor reports drift of the active policy and names hitl trust refresh",
    steps=[
        # The intended home for digests: a top-level copy that shadows the rendered envelope.
        _READ_THE_RENDER,
        write("hitl-policy-default.json", "{rendered}", home=True),
        write("tools/mytool", _TOOL_V1),
        step("hitl", "trust", _TOOL),
        write("tools/mytool", "#!/bin/sh\nexit 1\n"),
        step(
            "doctor",
            exit_code=None,
            stdout_has=[
                "{home}/.contenox/hitl-policy-default.json: " + _TOOL + ": does not match",
                "contenox hitl trust --refresh",
            ],
        ),
        probe(
            "doctor --json's trusted-binary issue categories",
            _trusted_binary_issue_categories,
            expect=["policy"],
        ),
    ],
)


VET_DRIFT = _pinned(
    "vet warns on a drifted declaration but still passes the policy",
    None,
    write("tools/mytool", _TOOL_V1),
    _trust(_TOOL),
    write("tools/mytool", "#!/bin/sh\nexit 1\n"),
    step(
        "vet",
        "{home}/.contenox/" + POLICY,
        stdout_has=[
            "WARN {home}/.contenox/" + POLICY,
            _TOOL + ": does not match the declared hash (on disk",
        ],
    ),
)


# --- in an envelope

ENVELOPES = """
[envelopes.pinparent]
description = "echo allowlisted, pinned to a directory that does not exist"
default_action = "approve"
missions.fire = "allow"

[envelopes.pinparent.shell]
grant = "approve"
prefix_allowlist = ["echo"]

[envelopes.pinparent.trusted_binaries]
dirs = ["{dirs}"]
"""


def _envelopes(dirs: str, child_hash: bool) -> Edit:
    """Append the pinning envelopes to the global agents.toml; every run renders them afresh."""
    text = ENVELOPES.replace("{dirs}", dirs)
    if child_hash:
        text += (
            '\n[envelopes.pinchild]\nextends = "pinparent"\n'
            "\n[envelopes.pinchild.trusted_binaries.hashes]\n"
            f'"{_ECHO_PATH}" = "{_ECHO_SHA}"\n'
        )
    return edit("agents.toml", append=text, under="contenox")


_RUN_PINPARENT = ("run", "--policy", "pinparent", "--timeout", "90s", "say hello")

ENVELOPE_TRUSTS = Case(
    name="an envelope's trusted_binaries block lets a trusted name run unattended",
    script=ECHO,
    steps=[
        _envelopes(str(_ECHO_PATH.parent), child_hash=False),
        step(*_RUN_PINPARENT, timeout=120),
        _NO_ASKS,
    ],
)

_DENIED_ASK = (
    background("run", *_RUN_PINPARENT),
    await_ask("ask", tool="local_shell.local_shell", timeout=60),
    respond("ask", "deny"),
    wait("run"),
)

# Control: ENVELOPE_TRUSTS, the same envelope with the echo's real directory.
ENVELOPE_WITHDRAWS = Case(
    name="an envelope's trusted_binaries block withdraws the allow outside its dirs",
    script=ECHO,
    steps=[_envelopes("/nonexistent-trusted-dir", child_hash=False), *_DENIED_ASK],
)

CHILD_KEEPS_DIRS = Case(
    name="under extends a child adding a hash keeps the parent's dirs",
    steps=[
        _envelopes("/nonexistent-trusted-dir", child_hash=True),
        step("init"),  # renders the envelopes appended above
        # The child's hash sits outside the parent's dirs: vet can only say so if the dirs
        # survived.
        step(
            "vet",
            "--all",
            exit_code=None,
            stdout_has=[
                "WARN {home}/.contenox/.generated/hitl-policy-pinchild.json",
                f"{_ECHO_PATH}: declared outside every trusted_binaries.dirs entry",
            ],
        ),
    ],
)

WORKSPACE_ENVELOPE = Case(
    name="an envelope declared in the workspace agents.toml governs the run",
    script=ECHO,
    files={".contenox/agents.toml": ENVELOPES.replace("{dirs}", "/nonexistent-dir")},
    steps=list(_DENIED_ASK),
    defect=Defect(
        title="an envelope declared in the workspace .contenox/agents.toml is never loaded by "
        "the unit; it gates on the default envelope",
        second_reading=(
            "2026-12-01, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: workspace: exit 0, 'Mission fired at agent "
            "\"run\" under envelope \"pinparent\"', 'finished: landed'; log: 'hitl: "
            'policy "pinparent" unreadable, gating on default '
            '"hitl-policy-default.json" instead: … open '
            "<HOME>/.contenox/.generated/hitl-policy-pinparent.json: no such file or "
            "directory'; local_shell result {exit_code:0, stdout:hello}, no approval. "
            "Control: change_data=pinparent, 'binary …' detail, approval_pending, the "
            "run never finished ('did not finish within 20s'), exit 1. Note: Same "
            "root cause as Q03. One small error in the text: `contenox init` alone "
            "does NOT render work/.contenox/.generated/hitl-policy-pinparent.json. "
            "Its 'Rendered' lines list only the 8 global envelopes, and the workspace "
            "file first appears once `run` has started. The defect holds either way."
        ),
        reproduce=(
            "in a scratch HOME, the workspace's `.contenox/agents.toml` holding "
            '`[envelopes.pinparent]` `default_action = "deny"`, `[envelopes.pinparent.shell]` '
            '`grant = "approve"` `prefix_allowlist = ["echo"]`, '
            '`[envelopes.pinparent.trusted_binaries]` `dirs = ["/nonexistent-dir"]`; `contenox '
            "init` (renders work/.contenox/.generated/hitl-policy-pinparent.json); a "
            "scripted-test default backend whose dialog calls `local_shell {command: echo, "
            "args: [hello]}`, then `mission_finish landed`, a text turn; `contenox run --policy "
            'pinparent --timeout 90s "say hello"` prints \'Mission fired … under envelope '
            '"pinparent"\' but its unit logs \'hitl: policy "pinparent" unreadable, gating '
            'on default "hitl-policy-default.json" instead: … open '
            "~/.contenox/.generated/hitl-policy-pinparent.json: no such file', and echo runs "
            "unattended with no ask. The same envelope appended to ~/.contenox/agents.toml: the "
            "echo stops for approval (test_an_envelope_s_trusted_binaries_block_withdraws_the_"
            "allow_outside_its_dirs)"
        ),
        promised=(
            'reference/agents-config.md:21 "3. `.contenox/agents.toml` — the workspace, which wins"'
        ),
        observed="the echo runs unattended under hitl-policy-default.json",
        bears_on=('guide/confinement/trusted-binaries.md:151 "carries it verbatim into"',),
    ),
)


# --- the reason on the card


def _card_detail(turn: PromptTurn) -> str:
    """The reason on the one permission card (its ``_meta.detail``)."""
    [ask] = turn.permission_requests
    return str(ask.meta.get("detail", ""))


def _card_case(
    name: str, trusted: Mapping[str, Any], says: list[str], *before: Action, **prompt_kw: Any
) -> Case:
    """The reason an editor is shown when the pinned ``echo`` stops for approval over ACP.

    An ACP session gates on the default policy, so the pinned policy is written as the
    top-level copy that shadows the rendered ``default`` envelope.
    """
    return Case(
        name=name,
        script=Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["hi"]})]),
                "Done.",
            ]
        ),
        steps=[
            *before,
            write("hitl-policy-default.json", json.dumps(_policy(trusted)), home=True),
            prompt(
                "say hello", permission="deny", stop_reason=None, terminal_commands=[], **prompt_kw
            ),
            acp_turn(
                "the card's reason",
                _card_detail,
                expect=satisfies(
                    lambda detail: all(part in detail for part in says),
                    " and ".join(repr(part) for part in says),
                ),
            ),
        ],
    )


CARD_NAMES_THE_REAL_PATH = _card_case(
    "the approval card names the real path a name resolved outside the trusted dirs",
    {"dirs": ["/nonexistent-trusted-dir"]},
    [f"binary at {_ECHO_PATH} is not under any trusted_binaries.dirs entry", "allow refused"],
    _LINKED_ECHO,
    acp_env=_LINKED_ENV,
)


def _no_card(name: str, trusted: Mapping[str, Any], *before: Action, **prompt_kw: Any) -> Case:
    """A card case's control: the same prompt and policy, the pin holding; the echo runs."""
    return Case(
        name=name,
        script=Script(
            turns=[
                route(),
                Turn(tool_calls=[ToolCall("local_shell", {"command": "echo", "args": ["hi"]})]),
                "Done.",
            ]
        ),
        steps=[
            *before,
            write("hitl-policy-default.json", json.dumps(_policy(trusted)), home=True),
            prompt(
                "say hello",
                permission="deny",
                stop_reason=None,
                permission_requests=0,
                terminal_commands=["echo hi"],
                **prompt_kw,
            ),
        ],
    )


# The controls of the two cards: the same prompt and policy, the pin naming the echo's
# real directory, or its real digest; no card is raised and the editor's terminal runs it.
NO_CARD_INSIDE_TRUSTED_DIRS = _no_card(
    "no approval card is raised when the name resolves inside the trusted dirs",
    {"dirs": [str(_ECHO_PATH.parent)]},
    _LINKED_ECHO,
    acp_env=_LINKED_ENV,
)

NO_CARD_WHEN_THE_HASH_MATCHES = _no_card(
    "no approval card is raised when the binary matches its declared hash",
    {"hashes": {str(_ECHO_PATH): _ECHO_SHA}},
)

CARD_SAYS_THE_HASH_CHANGED = _card_case(
    "the approval card says a changed binary does not match its declared hash",
    {"hashes": {str(_ECHO_PATH): "0" * 64}},
    [
        f"binary at {_ECHO_PATH} does not match the declared hash",
        "re-declare after verifying the upgrade, or investigate",
    ],
)


SHIPPED_UNPINNED = Case(
    name="the shipped envelopes declare no trusted binaries",
    steps=[
        step(
            "hitl",
            "trust",
            "--list",
            "--policy",
            "hitl-policy-default.json",
            stdout_has=["hashes: (none declared", "dirs: (none declared"],
        )
    ],
)
