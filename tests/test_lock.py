"""Tool versions are locked: every tox env installs constraints.txt, and it is current.

A dependency added to pyproject.toml without refreshing the lock would float
again; this fails naming it and the one command that refreshes the lock.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
FIX = "run `tox -e lock` and commit constraints.txt"


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = [*project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        listed += extra
    own = canonicalize_name(project["name"])
    return [r for r in map(Requirement, listed) if canonicalize_name(r.name) != own]


def test_every_dependency_is_pinned_in_the_lock_within_its_bounds() -> None:
    pins = _pins()
    for req in _requirements():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is in pyproject.toml but not in constraints.txt: {FIX}"
        assert req.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {req.name}=={pins[name]}, outside {req}: {FIX}"
        )


def test_the_lock_names_no_url_pip_would_refuse_as_a_constraint() -> None:
    text = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    assert " @ " not in text and "file:" not in text, f"a URL in the lock: {FIX}"


def test_every_tox_env_installs_with_the_lock_and_lint_and_type_use_the_dev_extra() -> None:
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(ROOT / "tox.ini")
    assert "PIP_CONSTRAINT = {toxinidir}/constraints.txt" in tox["testenv"]["set_env"]
    for env in ("lint", "type"):
        section = tox[f"testenv:{env}"]
        assert section.get("extras", "").strip() == "dev", f"testenv:{env} must use extras = dev"
        assert "deps" not in section, f"testenv:{env} repeats the dev extra's list in deps"
    overriding = [
        name
        for name in tox.sections()
        if name.startswith("testenv:")
        and "set_env" in tox[name]
        and "PIP_CONSTRAINT" in tox[name]["set_env"]
        and name != "testenv:lock"
    ]
    assert overriding == [], f"these envs drop the lock: {overriding}"


def test_syrupy_is_bounded_below_the_next_major_for_its_private_write_mode() -> None:
    [syrupy] = [r for r in _requirements() if r.name == "syrupy"]
    assert not syrupy.specifier.contains("8.0.0"), "harness/snapshot.py sets syrupy's _write_mode"
    from syrupy.extensions.single_file import SingleFileSnapshotExtension

    assert hasattr(SingleFileSnapshotExtension, "_write_mode")
