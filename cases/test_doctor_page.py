"""`contenox doctor` per the CLI reference: the verdict, flags, advisories, the bundle."""

from __future__ import annotations

import json
import re
import urllib.parse
import zipfile
from pathlib import Path
from typing import Any

from harness import Case, Defect, Instance, Script, group, probe, step, write
from harness.case import Action

DIALOG = Script(turns=["Hello."])
# A top-level policy copy written before the shipped toolsets grew: it names
# only local_fs, so git, local_shell, native-fs-browse, … are missing from it.
STALE_POLICY = json.dumps(
    {
        "version": 1,
        "default_action": "approve",
        "rules": [{"tools": "local_fs", "tool": "read_file", "action": "allow"}],
    }
)
NO_DEFAULTS = "No default model is set"
# The NATS client logs through Go's log package: "2026/11/30 19:52:35 Connecting …".
GO_LOG_TIME = {r"\b\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\b": "[TIME]"}


DOCTORS_FIRST_LINE_IS_THE_READINESS_VERDICT = Case(
    name="doctors first line is the readiness verdict",
    init=False,
    steps=[
        step("doctor", "--skip-cycle", stdout_has=[re.compile(rf"\AReady: no — .*{NO_DEFAULTS}")]),
        step("backend", "add", "scripted", "--type", "scripted-test", "--script", "dialog.json"),
        step("config", "set", "default-provider", "scripted-test"),
        step("config", "set", "default-model", "scripted-test"),
        step("doctor", stdout_has=[re.compile(r"\AReady: yes")]),
    ],
    files={"dialog.json": DIALOG.dumps()},
)


SKIP_CYCLE = Case(
    name="doctor skip cycle still reports the defaults and the registered backend",
    script=DIALOG,
    steps=[
        step(
            "doctor",
            "--skip-cycle",
            stdout_has=[
                "Ready: yes",
                "Default model:    scripted-test",
                "Backends (registered): 1",
                "scripted (scripted-test,",
            ],
        )
    ],
)

STALE_COPY = Case(
    name="doctor flags a top level policy copy that predates the shipped toolsets",
    home_files={"hitl-policy-default.json": STALE_POLICY},
    steps=[
        step(
            "doctor",
            "--skip-cycle",
            stdout_has=[
                "hitl-policy-default.json predates toolsets",
                "contenox init --refresh-policies",
            ],
        )
    ],
)

REFRESHED_COPY = Case(
    name="after init refresh policies doctor no longer flags the policy copy",
    home_files={"hitl-policy-default.json": STALE_POLICY},
    steps=[
        step("doctor", "--skip-cycle", stdout_has=["predates toolsets"]),
        step("init", "--refresh-policies", stdout_has=["hitl-policy-default.json"]),
        step("doctor", "--skip-cycle", stdout_lacks=["predates toolsets"]),
    ],
)


RENDERED_ENVELOPES_ARE_NEVER_STALE = Case(
    name="doctor never reports a rendered envelope under generated as stale",
    steps=[
        probe(
            "init rendered .generated/hitl-policy-strict.json",
            lambda i: (i.home / ".contenox" / ".generated" / "hitl-policy-strict.json").exists(),
            expect=True,
        ),
        write(".generated/hitl-policy-strict.json", STALE_POLICY, home=True),
        step("doctor", "--skip-cycle", stdout_lacks=["predates toolsets"]),
    ],
)


MAX_TOKENS_ADVISORY = Case(
    name="doctor warns when default max tokens exceeds the output ceiling and changes nothing",
    script=Script(model="capped", max_output_tokens=100, turns=["Hello."]),
    steps=[
        step("config", "set", "default-max-tokens", "500"),
        step("doctor", stdout_has=["default-max-tokens=500 exceeds", "(100)"]),
        step("config", "get", "default-max-tokens", stdout_has=["500"]),
    ],
)

VISION = [
    Case(
        name="doctor reports the vision capable models it found",
        script=Script(model="seer", turns=["Hello."]),
        steps=[step("doctor", stdout_has=["Vision: 1 model(s) accept images", "seer"])],
    ),
    Case(
        name="doctor says when no vision capable model is available",
        script=Script(model="blind", capabilities={"vision": False}, turns=["Hello."]),
        steps=[step("doctor", stdout_has=["no vision-capable models available"])],
    ),
]

NO_STATE_SECTION = Case(
    name="doctor has no state storage section when no external backend is selected",
    steps=[step("doctor", "--skip-cycle", stdout_lacks=["State storage"])],
)

STATE_SECTION = [
    Case(
        name=f"doctor names an unreachable {what} with the variable that selected it",
        redact=GO_LOG_TIME,
        steps=[
            step(
                "doctor",
                "--skip-cycle",
                env={var: url},
                exit_code=None,
                stdout_has=["State storage:", f"from {var}", "Status: unreachable"],
            )
        ],
    )
    for what, var, url in [
        ("message bus", "CONTENOX_NATS_URL", "nats://127.0.0.1:9"),
        ("key value cache", "CONTENOX_VALKEY_URL", "127.0.0.1:9"),
    ]
]


# --- the bundle ----------------------------------------------------------------------------


def _bundle_line(stdout: str, label: str) -> str:
    for line in stdout.splitlines():
        if line.strip().startswith(label):
            return line.split(label, 1)[1].strip()
    raise AssertionError(f"no {label!r} line in doctor --bundle output:\n{stdout}")


def _bundle_facts(instance: Instance, path: str) -> dict[str, object]:
    """What a person opening the bundle finds: its members, the report's model, the build."""
    with zipfile.ZipFile(path) as bundle:
        names = bundle.namelist()
        report = json.loads(bundle.read("doctor.json"))
        build = bundle.read("build.txt").decode()
    return {
        "doctor.json and build.txt are members": {"doctor.json", "build.txt"} <= set(names),
        "defaultModel": report["defaultModel"],
        "build.txt names": [
            f for f in ("v1.0.0", "go version:", "go1.", "platform:", "linux/") if f in build
        ],
    }


DOCTOR_BUNDLE_WRITES_A_ZIP_IN_THE_CWD = Case(
    name="doctor bundle writes a zip in the cwd holding the report and build info",
    init=False,
    script=DIALOG,
    steps=[
        step(
            "doctor",
            "--bundle",
            stdout_has=[re.compile(r"Bundle: +{work}/contenox-doctor-\S*\.zip$", re.M)],
            capture={"bundle": group(r"Bundle: +(\S+)")},
        ),
        probe(
            "the bundle",
            _bundle_facts,
            "{bundle}",
            expect={
                "doctor.json and build.txt are members": True,
                "defaultModel": "scripted-test",
                "build.txt names": ["v1.0.0", "go version:", "go1.", "platform:", "linux/"],
            },
        ),
    ],
)

DOCTOR_BUNDLE_OUT_WRITES_WHERE_TOLD = Case(
    name="doctor bundle out writes the bundle where it is told",
    init=False,
    steps=[
        step(
            "doctor",
            "--skip-cycle",
            "--bundle",
            "--bundle-out",
            "{tmp}/mine.zip",
            stdout_has=[re.compile(r"^ *Bundle: +{tmp}/mine\.zip *$", re.M)],
        ),
        probe(
            "mine.zip is a zip, and no bundle in the workspace",
            lambda i: (
                zipfile.is_zipfile(i.tmp / "mine.zip"),
                [p.name for p in i.work.glob("contenox-doctor-*.zip")],
            ),
            expect=(True, []),
        ),
    ],
)


def _telemetry(instance: Instance, where: Path, text: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / "telemetry.log").write_text(text, encoding="utf-8")


# function: places a log beside a database outside the workspace
def test_doctor_bundle_holds_one_telemetry_tail_per_source_directory(instance: Instance) -> None:
    instance.init()
    db_dir = instance.tmp / "dbdir"
    _telemetry(instance, instance.work / ".contenox", "from-the-workspace\n")
    _telemetry(instance, db_dir, "from-the-db-dir\n")
    _telemetry(instance, instance.home / ".contenox", "from-the-home\n")
    out = instance.tmp / "b.zip"
    args = ["--db", str(db_dir / "local.db"), "doctor", "--skip-cycle", "--bundle"]
    result = instance.must(*args, "--bundle-out", str(out))
    with zipfile.ZipFile(out) as bundle:
        logs = {
            n: bundle.read(n).decode() for n in bundle.namelist() if n.endswith("telemetry.log")
        }
    joined = "\n".join(logs.values())
    for marker in ("from-the-workspace", "from-the-db-dir", "from-the-home"):
        assert marker in joined, f"{marker} missing from {sorted(logs)}\n{result.describe()}"
    assert len(logs) == 3, sorted(logs)


BIG_LOG = [f"line {i:07d} padding padding padding padding\n" for i in range(9000)]  # ~430 KB


def _workspace_member(instance: Instance) -> str:
    """The text of the bundle's workspace telemetry member (the bundle is ``{tmp}/b.zip``)."""
    with zipfile.ZipFile(instance.tmp / "b.zip") as bundle:
        [name] = [n for n in bundle.namelist() if "workspace" in n]
        return bundle.read(name).decode()


def _tail_facts(instance: Instance) -> dict[str, bool]:
    tail = _workspace_member(instance)
    # contenox heads the member with one "[truncated: last N of M bytes]" line.
    if tail.startswith("[truncated"):
        tail = tail.split("\n", 1)[1]
    return {
        "at most 256 KiB": len(tail.encode()) <= 256 * 1024,
        "ends on the last line": tail.endswith(BIG_LOG[-1]),
        "holds the first line": BIG_LOG[0] in tail,
    }


def _bundled_log(text: str, **expect: Any) -> list[Action]:
    """Bundle a workspace telemetry.log holding ``text`` into ``{tmp}/b.zip``."""
    return [
        write(".contenox/telemetry.log", text),
        step("doctor", "--skip-cycle", "--bundle", "--bundle-out", "{tmp}/b.zip", **expect),
    ]


DOCTOR_BUNDLE_KEEPS_THE_LAST_256_KB = Case(
    name="doctor bundle keeps only the last 256 kb of a telemetry log",
    steps=[
        *_bundled_log("".join(BIG_LOG)),
        probe(
            "the workspace telemetry member",
            _tail_facts,
            expect={
                "at most 256 KiB": True,
                "ends on the last line": True,
                "holds the first line": False,
            },
        ),
    ],
)


SECRETS = {
    "api_key=sk9f8e7d6c5b4a": "api_key=",
    "password=hunter2hunter2": "password=",
    "token=tok0a1b2c3d4e5f6": "token=",
    "http://bob:s3cr3tpw@example.invalid/x": "http://bob:",
    "Bearer abcdefghijklmnopqrstu": "Bearer ",
    "key sk-proj-abcdefghijklmnopqrstuvwx1234": "key ",
}


def _redaction(instance: Instance, said: str) -> dict[str, object]:
    log = _workspace_member(instance)
    return {
        "secrets that survived": [
            secret
            for line, kept in SECRETS.items()
            if (secret := line.removeprefix(kept).split("@")[0]) in log
        ],
        "every secret redacted": log.count("[REDACTED]") >= len(SECRETS),
        "the count printed is the count in the bundle": int(said) == log.count("[REDACTED]"),
    }


DOCTOR_BUNDLE_REDACTS_AND_COUNTS = Case(
    name="doctor bundle redacts credentials and says how many",
    steps=[
        *_bundled_log(
            "\n".join(SECRETS) + "\n",
            capture={"redacted": group(r"Redacted: (\d+) credential-shaped value\(s\)")},
        ),
        probe(
            "redaction",
            _redaction,
            "{redacted}",
            expect={
                "secrets that survived": [],
                "every secret redacted": True,
                "the count printed is the count in the bundle": True,
            },
        ),
    ],
)

DOCTOR_BUNDLE_REDACTS_A_BEARER_HEADER = Case(
    name="doctor bundle redacts the token of an authorization bearer header",
    steps=[
        *_bundled_log("Authorization: Bearer abcdefghijklmnop2\n"),
        probe(
            "the token survived",
            lambda i: "abcdefghijklmnop2" in _workspace_member(i),
            expect=False,
        ),
    ],
    defect=Defect(
        title="`doctor --bundle` keeps the token of an `Authorization: Bearer` line",
        second_reading=(
            "2026-12-03, a second reader with only this text and the docs, in a fresh "
            "scratch home: real. Saw: Scratch HOME+workspace, `contenox init`. Appended "
            "three lines to .contenox/telemetry.log: 'Authorization: Bearer "
            "abcdefghijklmnop2', 'Bearer zyxwvutsrqponm9', 'authorization=Bearer "
            "qqqqqqqqqqqqqqq3'. `contenox doctor --bundle --skip-cycle` wrote the zip and "
            "said 'Redacted: 3 credential-shaped value(s)'. `unzip -p <zip> "
            "'*telemetry.log'` showed: 'Authorization: [REDACTED] abcdefghijklmnop2', "
            "'Bearer [REDACTED]', 'authorization=[REDACTED] qqqqqqqqqqqqqqq3'. Only the "
            "word Bearer was replaced; the token itself was kept. Note: contenox-cli.md:164 "
            "and troubleshooting.md:240 both promise that Bearer values and authorization "
            "assignments are redacted, and troubleshooting.md:242 says the scrubber errs "
            "toward over-redaction. 'Review the file before sharing' is a caution, not a "
            "claim that the binary ..."
        ),
        reproduce=(
            'export HOME=$(mktemp -d); cd "$(mktemp -d)"; contenox init\n'
            "echo 'Authorization: Bearer abcdefghijklmnop2' >> "
            ".contenox/telemetry.log\n"
            "contenox doctor --bundle            # writes a zip\n"
            "unzip -p <bundle>.zip '*telemetry.log'\n"
            "# Authorization: [REDACTED] abcdefghijklmnop2   (a bare 'Bearer x' line "
            "is redacted)"
        ),
        promised=(
            'reference/contenox-cli.md:164 "`Bearer` values, and recognizable '
            'provider key shapes are replaced with `[REDACTED]`"'
        ),
        observed=("the named assignment swallows the word Bearer and the token itself is kept"),
    ),
)


def _issue_body(instance: Instance, url: str) -> dict[str, bool]:
    body = urllib.parse.unquote_plus(url)
    return {
        "names v1.0.0 and the platform": "v1.0.0" in body and "linux/" in body,
        "names the bundle": str(instance.tmp / "b.zip") in body,
        "carries log content": "unique-log-marker-7f3a" in body,
    }


DOCTOR_BUNDLE_ISSUE_URL = Case(
    name="doctor bundle issue url names the bundle and carries no log content",
    steps=[
        *_bundled_log(
            "unique-log-marker-7f3a\n",
            stdout_has=["Report:   https://github.com/contenox/contenox/issues/new?"],
            capture={"url": group(r"Report: +(\S+)")},
        ),
        probe(
            "the issue body",
            _issue_body,
            "{url}",
            expect={
                "names v1.0.0 and the platform": True,
                "names the bundle": True,
                "carries log content": False,
            },
        ),
    ],
)
