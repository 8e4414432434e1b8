"""`contenox doctor` per the CLI reference: the verdict, flags, advisories, the bundle."""

from __future__ import annotations

import json
import re
import urllib.parse
import zipfile
from pathlib import Path

from harness import Case, Instance, Script, defect, step

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
    serves_all_turns=False,
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


def test_doctor_never_reports_a_rendered_envelope_under_generated_as_stale(
    instance: Instance,
) -> None:
    # function: needs a file placed after init, which renders .generated/
    instance.init()
    rendered = instance.home / ".contenox" / ".generated" / "hitl-policy-strict.json"
    assert rendered.exists(), "init rendered no .generated/hitl-policy-strict.json"
    rendered.write_text(STALE_POLICY, encoding="utf-8")
    report = instance.must("doctor", "--skip-cycle")
    assert "predates toolsets" not in report.stdout, report.describe()


MAX_TOKENS_ADVISORY = Case(
    name="doctor warns when default max tokens exceeds the output ceiling and changes nothing",
    script=Script(model="capped", max_output_tokens=100, turns=["Hello."]),
    serves_all_turns=False,
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
        serves_all_turns=False,
        steps=[step("doctor", stdout_has=["Vision: 1 model(s) accept images", "seer"])],
    ),
    Case(
        name="doctor says when no vision capable model is available",
        script=Script(model="blind", capabilities={"vision": False}, turns=["Hello."]),
        serves_all_turns=False,
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


def test_doctor_bundle_writes_a_zip_in_the_cwd_holding_the_report_and_build_info(
    instance: Instance,
) -> None:
    # function: needs the zip the command writes, opened
    instance.use_script(DIALOG)
    result = instance.must("doctor", "--bundle")
    path = Path(_bundle_line(result.stdout, "Bundle:"))
    assert path.parent == instance.work and path.name.startswith("contenox-doctor-"), path
    assert path.suffix == ".zip" and path.exists(), result.describe()
    with zipfile.ZipFile(path) as bundle:
        names = bundle.namelist()
        assert {"doctor.json", "build.txt"} <= set(names), names
        report = json.loads(bundle.read("doctor.json"))
        build = bundle.read("build.txt").decode()
    assert report["defaultModel"] == "scripted-test", report
    for fact in ("v1.0.0", "go version:", "go1.", "platform:", "linux/"):
        assert fact in build, build


def test_doctor_bundle_out_writes_the_bundle_where_it_is_told(instance: Instance) -> None:
    # function: needs the zip the command writes
    target = instance.tmp / "mine.zip"
    result = instance.must("doctor", "--skip-cycle", "--bundle", "--bundle-out", str(target))
    assert _bundle_line(result.stdout, "Bundle:") == str(target), result.describe()
    assert zipfile.is_zipfile(target)
    assert not list(instance.work.glob("contenox-doctor-*.zip"))


def _telemetry(instance: Instance, where: Path, text: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    (where / "telemetry.log").write_text(text, encoding="utf-8")


def test_doctor_bundle_holds_one_telemetry_tail_per_source_directory(instance: Instance) -> None:
    # function: needs logs placed in three directories and the zip opened
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


def test_doctor_bundle_keeps_only_the_last_256_kb_of_a_telemetry_log(instance: Instance) -> None:
    # function: needs a large log placed and the zip opened
    instance.init()
    lines = [f"line {i:07d} padding padding padding padding\n" for i in range(9000)]
    _telemetry(instance, instance.work / ".contenox", "".join(lines))  # ~430 KB
    out = instance.tmp / "b.zip"
    instance.must("doctor", "--skip-cycle", "--bundle", "--bundle-out", str(out))
    with zipfile.ZipFile(out) as bundle:
        [name] = [n for n in bundle.namelist() if "workspace" in n]
        tail = bundle.read(name).decode()
    # contenox heads the member with one "[truncated: last N of M bytes]" line.
    if tail.startswith("[truncated"):
        tail = tail.split("\n", 1)[1]
    assert len(tail.encode()) <= 256 * 1024, len(tail.encode())
    assert tail.endswith(lines[-1]), tail[-200:]
    assert lines[0] not in tail


def _bundled_log(instance: Instance, text: str) -> tuple[str, str]:
    """Bundle a workspace telemetry.log holding ``text``; (the member's text, stdout)."""
    instance.init()
    _telemetry(instance, instance.work / ".contenox", text)
    out = instance.tmp / "b.zip"
    result = instance.must("doctor", "--skip-cycle", "--bundle", "--bundle-out", str(out))
    with zipfile.ZipFile(out) as bundle:
        [name] = [n for n in bundle.namelist() if "workspace" in n]
        return bundle.read(name).decode(), result.stdout


SECRETS = {
    "api_key=sk9f8e7d6c5b4a": "api_key=",
    "password=hunter2hunter2": "password=",
    "token=tok0a1b2c3d4e5f6": "token=",
    "http://bob:s3cr3tpw@example.invalid/x": "http://bob:",
    "Bearer abcdefghijklmnopqrstu": "Bearer ",
    "key sk-proj-abcdefghijklmnopqrstuvwx1234": "key ",
}


def test_doctor_bundle_redacts_credentials_and_says_how_many(instance: Instance) -> None:
    # function: needs the zip's telemetry member read
    log, stdout = _bundled_log(instance, "\n".join(SECRETS) + "\n")
    for line, kept in SECRETS.items():
        secret = line.removeprefix(kept).split("@")[0]
        assert secret not in log, f"{secret!r} survived redaction:\n{log}"
    assert log.count("[REDACTED]") >= len(SECRETS), log
    assert f"Redacted: {log.count('[REDACTED]')} credential-shaped value(s)" in stdout, stdout


@defect(
    "`contenox doctor --bundle` with a workspace telemetry.log line `Authorization: Bearer "
    "abcdefghijklmnop2` writes `Authorization: [REDACTED] abcdefghijklmnop2` into the zip: the "
    "named assignment swallows the word Bearer and the token itself is kept (a bare `Bearer x` "
    "is redacted); contenox-cli.md `contenox doctor`: 'named assignments (`api_key`, `token`, "
    "`password`, `authorization`, …), URL userinfo, `Bearer` values, and recognizable provider "
    "key shapes are replaced with `[REDACTED]`'"
)
def test_doctor_bundle_redacts_the_token_of_an_authorization_bearer_header(
    instance: Instance,
) -> None:
    # function: needs the zip's telemetry member read
    log, _ = _bundled_log(instance, "Authorization: Bearer abcdefghijklmnop2\n")
    assert "abcdefghijklmnop2" not in log, log


def test_doctor_bundle_issue_url_names_the_bundle_and_carries_no_log_content(
    instance: Instance,
) -> None:
    # function: needs the printed URL decoded
    _, stdout = _bundled_log(instance, "unique-log-marker-7f3a\n")
    url = _bundle_line(stdout, "Report:")
    assert url.startswith("https://github.com/contenox/contenox/issues/new?"), url
    body = urllib.parse.unquote_plus(url)
    assert "v1.0.0" in body and "linux/" in body, body
    assert str(instance.tmp / "b.zip") in body, body
    assert "unique-log-marker-7f3a" not in body, body
