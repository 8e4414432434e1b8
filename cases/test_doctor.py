"""`contenox doctor` and `contenox doctor --json`: readiness as a person and a program read it."""

from __future__ import annotations

from harness import Instance, Script
from harness.probes import doctor, doctor_json

DIALOG = Script(turns=["Hello."])


def test_doctor_is_not_ready_on_an_empty_instance_and_names_the_missing_default(
    instance: Instance,
) -> None:
    report = doctor(instance, skip_cycle=True)

    assert report.ready is False
    assert "No default model is set" in report.verdict
    assert (report.default_model, report.default_provider) == ("", "")
    assert any(i.severity == "error" and "default model" in i.message for i in report.issues)


def test_doctor_is_ready_once_the_scripted_backend_is_the_default(instance: Instance) -> None:
    instance.use_script(DIALOG)

    report = doctor(instance)

    assert report.ready is True
    assert (report.default_model, report.default_provider) == ("scripted-test", "scripted-test")
    assert (report.backends_registered, report.backends_reachable) == (1, 1)
    assert [b.name for b in report.backends] == ["scripted"]


def test_doctor_warns_that_the_scripted_backend_calls_no_model(instance: Instance) -> None:
    instance.use_script(DIALOG)

    issues = doctor(instance).issues

    assert any(i.severity == "warning" and "NO model is called" in i.message for i in issues)


def test_doctor_json_reports_the_scripted_backend_reachable_with_its_chat_model(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG)

    report = doctor_json(instance)

    [check] = report.backend_checks
    assert (check.name, check.type, check.reachable) == ("scripted", "scripted-test", True)
    assert check.chat_models == ("scripted-test",)


def test_doctor_text_and_json_agree_on_the_defaults_and_the_backend_counts(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG)

    text, data = doctor(instance), doctor_json(instance)

    assert (text.default_model, text.default_provider) == (
        data.default_model,
        data.default_provider,
    )
    assert (text.backends_registered, text.backends_reachable) == (
        data.backend_count,
        data.reachable_backend_count,
    )
    assert {i.message for i in text.issues} == {i.message for i in data.issues}


def test_doctor_roster_lists_the_in_process_tools_an_unattended_run_can_call(
    instance: Instance,
) -> None:
    report = doctor(instance, skip_cycle=True)

    for tool, toolset in [("echo", "native-echo"), ("list_dir", "native-fs-browse")]:
        entry = report.tool(tool)
        assert entry is not None, f"{tool} missing from the roster: {report.roster}"
        assert (entry.toolset, entry.origin) == (toolset, "local (in-process)")
    read_file = report.tool("read_file")
    assert read_file is not None and read_file.origin.startswith("needs client capability")


def test_doctor_is_not_ready_while_a_backend_is_registered_but_no_default_is_set(
    instance: Instance,
) -> None:
    instance.use_script(DIALOG, make_default=False)

    report = doctor(instance)

    assert report.ready is False, report
    assert "No default model is set" in report.verdict
    assert report.backends_registered == 1
