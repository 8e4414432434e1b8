"""No step writes, deletes or runs outside the case's scratch root, whatever fills its path.

Each test stands a temporary directory in for the real HOME, with a sentinel
``~/.contenox`` in it (files, a binary stand-in for the database, a nested
file, an empty directory, a link), and compares it byte for byte — every
entry's kind, mode, size, mtime and content, every link's target — before
and after. The reproductions of issue 26 (a link out of the workspace, a
captured absolute path, a captured backend URL, a cwd) run as real cases in
a pytest subprocess against the fake contenox (tests/fakes), with ``-n 0``
and with ``-n 2``; hypothesis then fills every path-taking step's
placeholder with hostile values and runs each in-process.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import Case, CaseError, Instance, edit, link, probe, remove, run_case, step, write
from harness.case import Action

FAKE = Path(__file__).parent / "fakes" / "fake_contenox.py"

SENTINEL_FILES = {
    "config.yaml": b"default-provider: openai\ndefault-model: gpt-sentinel\n",
    "local.db": bytes(range(256)) * 64,
    "victim": b"delete me and the test fails\n",
    "v": b"and me\n",
    "victim_dialog.json": b'{"turns": ["sentinel"]}\n',
    "agents/biller.md": b"---\nname: biller\n---\n",
}


def make_sentinel(home: Path) -> Path:
    """A ``home/.contenox`` holding files, a nested one, an empty directory and a link."""
    dot = home / ".contenox"
    for rel, data in SENTINEL_FILES.items():
        (dot / rel).parent.mkdir(parents=True, exist_ok=True)
        (dot / rel).write_bytes(data)
    (dot / "empty").mkdir()
    (dot / "current").symlink_to("config.yaml")
    return dot


def tree(
    root: Path, skip: Callable[[str], bool] = lambda rel: False
) -> dict[str, tuple[object, ...]]:
    """relpath -> (kind, mode, size, mtime_ns, sha256 or link target) of everything under root."""
    found: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not skip(os.path.relpath(Path(dirpath) / d, root))]
        for name in [*dirnames, *filenames]:
            path = Path(dirpath) / name
            rel = os.path.relpath(path, root)
            if skip(rel):
                continue
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISREG(info.st_mode):
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                found[rel] = ("file", info.st_mode, info.st_size, info.st_mtime_ns, digest)
            else:
                found[rel] = ("dir", info.st_mode, info.st_mtime_ns)
    return found


def assert_unchanged(
    before: dict[str, tuple[object, ...]], after: dict[str, tuple[object, ...]]
) -> None:
    changes = [
        f"{'deleted' if rel not in after else 'made' if rel not in before else 'changed'} {rel}"
        for rel in sorted(before.keys() | after.keys())
        if before.get(rel) != after.get(rel)
    ]
    assert not changes, "the sentinel changed: " + ", ".join(changes)


# --------------------------------------------------------------------------- the reproductions

HEADER = """
import os
from harness import (Case, Script, column, edit, edit_dialog, link, probe, remove, step, write)

S = os.environ["E2E_SENTINEL"]  # the sentinel ~/.contenox, outside every scratch root


def _p(instance):
    return S

"""

REPRODUCTIONS = """
LINK_WRITE = Case(name="write through a link", init=False,
                  steps=[link("out", S), write("out/x", "escaped")])
LINK_EDIT = Case(name="edit through a link", init=False,
                 steps=[link("out", S), edit("out/y", append="escaped")])
LINK_REMOVE = Case(name="remove through a link", init=False,
                   steps=[link("out", S), remove("out/victim")])
CAPTURED_EDIT = Case(name="edit a captured path", init=False,
                     steps=[probe("p", _p, capture="p"), edit("{p}/f", append="x", under="home")])
CAPTURED_WRITE = Case(name="write a captured path", init=False,
                      steps=[probe("p", _p, capture="p"), write("{p}/g", "x", home=True)])
CAPTURED_REMOVE = Case(name="remove a captured path", init=False,
                       steps=[probe("p", _p, capture="p"), remove("{p}/v", under="contenox")])
CAPTURED_LINK = Case(name="link at a captured path", init=False,
                     steps=[probe("p", _p, capture="p"), link("{p}/l", "anywhere")])
CAPTURED_CWD = Case(name="run in a captured cwd", init=False,
                    steps=[probe("p", _p, capture="p"), step("version", cwd="{p}/made_outside")])
BACKEND_URL = Case(
    name="remove a captured backend url",
    init=False,
    steps=[
        step("backend", "add", "victim", "--type", "scripted-test",
             "--script", S + "/victim_dialog.json"),
        step("backend", "list", capture={"url": column("URL")}),
        remove("{url}", under="contenox"),
    ],
)
DIALOG_LINK = Case(
    name="a dialog file made a link",
    script=Script(turns=["one"]),
    init=False,
    steps=[
        remove("a_dialog_file_made_a_link.json"),
        link("a_dialog_file_made_a_link.json", S + "/victim_dialog.json"),
        edit_dialog(Script(turns=["overwritten"])),
    ],
)
INSIDE = Case(
    name="links inside the root are followed and a link out is only recorded",
    init=False,
    steps=[
        link("out", S),
        link("in", "{home}"),
        write("in/x.txt", "ok"),
        edit("in/x.txt", append="!"),
        step("show-file", "{home}/x.txt", stdout_has=["ok!"]),
        remove("in/x.txt"),
        remove("out"),
        probe("x.txt is gone", lambda i: (i.home / "x.txt").exists(), expect=False),
    ],
)
"""

# (case, step, field, the value as written, what it was filled with (None: as written), resolved)
REFUSED = [
    ("write through a link", "steps[1] (write)", "path", "out/x", None, "{S}/x"),
    ("edit through a link", "steps[1] (edit)", "path", "out/y", None, "{S}/y"),
    ("remove through a link", "steps[1] (remove)", "path", "out/victim", None, "{S}/victim"),
    ("edit a captured path", "steps[1] (edit)", "path", "{p}/f", "{S}/f", "{S}/f"),
    ("write a captured path", "steps[1] (write)", "path", "{p}/g", "{S}/g", "{S}/g"),
    ("remove a captured path", "steps[1] (remove)", "path", "{p}/v", "{S}/v", "{S}/v"),
    ("link at a captured path", "steps[1] (link)", "path", "{p}/l", "{S}/l", "{S}/l"),
    (
        "run in a captured cwd",
        "steps[1] (step)",
        "cwd",
        "{p}/made_outside",
        "{S}/made_outside",
        "{S}/made_outside",
    ),
    (
        "remove a captured backend url",
        "steps[2] (remove)",
        "path",
        "{url}",
        "{S}/victim_dialog.json",
        "{S}/victim_dialog.json",
    ),
]


@pytest.fixture
def sentinel(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """The fake contenox as CONTENOX_BIN and a sentinel ~/.contenox as the run's real one."""
    outside = tmp_path_factory.mktemp("outside")
    launcher = outside / "contenox"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} {FAKE} "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("CONTENOX_BIN", str(launcher))
    monkeypatch.setenv("CONTENOX_E2E_CACHE", str(outside / "cache"))
    monkeypatch.delenv("CONTENOX_E2E_KEEP", raising=False)
    home = outside / "realhome"
    dot = make_sentinel(home)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("E2E_SENTINEL", str(dot))
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef transcripts():\n    return True\n")
    return dot


@pytest.mark.parametrize("workers", ["0", "2"])
def test_the_reproductions_of_issue_26_fail_naming_the_step_and_leave_the_sentinel_as_it_was(
    pytester: pytest.Pytester, sentinel: Path, workers: str
) -> None:
    before = tree(sentinel.parent)
    pytester.makepyfile(test_containment_cases=HEADER + REPRODUCTIONS)
    result = pytester.runpytest_subprocess(
        "--snapshot-update", "-p", "no:randomly", "-n", workers, "--tb=short"
    )
    assert_unchanged(before, tree(sentinel.parent))

    result.assert_outcomes(passed=1, failed=len(REFUSED) + 1)
    out = result.stdout.str()
    S = str(sentinel)
    for case, where, field, written, filled, resolved in REFUSED:
        shown = repr(written) if filled is None else f"{written!r} (filled: {filled.format(S=S)!r})"
        expected = (
            f"case {case!r}: {where} {field} {shown} lies outside the scratch root "
            f"(it resolves to {resolved.format(S=S)}); refused"
        )
        assert expected in out, f"{expected}\nnot in:\n{out}"
    dialog = "case 'a dialog file made a link': steps[2] (edit_dialog) dialog"
    assert dialog in out and f"(it resolves to {S}/victim_dialog.json); refused" in out, out

    snap = next(pytester.path.rglob("test_links_inside_the_root_are_followed*.yaml")).read_text()
    # The sentinel's path is redacted as the pytest basetemp's.
    assert "realhome/.contenox (outside the scratch root)\n" in snap, snap
    assert "- note: linked in -> [HOME]\n" in snap, snap
    assert "removed out" in snap, snap


# --------------------------------------------------------------------------- hostile values


def _hostile(base: Path) -> st.SearchStrategy[str]:
    """Paths a careless case or a strange capture may hold: absolute, climbing, through links."""
    sentinel = str(base / "realhome" / ".contenox")
    part = st.sampled_from(
        [
            "..",
            ".",
            "",
            "out",
            "up",
            "in",
            "esc",
            "victim",
            "agents",
            "x",
            "a" * 300,
            "b" * 5000,
            "nul\0here",
            "lone\ud800",
            "\udcff",
            "~",
            "é",
        ]
    )
    start = st.sampled_from(["", "", sentinel, sentinel + "/", str(base), "/", "~/", "../" * 6])
    return st.builds(lambda s, parts: s + "/".join(parts), start, st.lists(part, max_size=4))


STEPS: list[Callable[[str], Action]] = [
    lambda p: write(p, "hostile"),
    lambda p: write(p + "/x", "hostile"),
    lambda p: write(p, "hostile", home=True),
    lambda p: write("in/" + p, "hostile"),
    lambda p: edit(p, append="hostile"),
    lambda p: edit(p, append="hostile", under="contenox"),
    lambda p: edit(p + "/y", append="hostile", under="home", executable=True),
    lambda p: edit(p, replace={".": "hostile"}, under="contenox"),
    lambda p: remove(p),
    lambda p: remove(p, under="contenox"),
    lambda p: remove(p, under="home"),
    lambda p: remove("out/" + p),
    lambda p: link(p, "{p}"),
    lambda p: link(p + "/l", "x", under="root"),
    lambda p: step("version", cwd=p),
    lambda p: step("version", cwd="work/" + p),
]


def _instance(base: Path, n: int) -> Instance:
    """A fresh scratch root with links out of it already in place (as earlier steps made)."""
    inst = Instance.create(base / f"root{n}", binary=Path("/bin/true"))
    sentinel = base / "realhome" / ".contenox"
    (inst.work / "out").symlink_to(sentinel)
    (inst.work / "up").symlink_to("../../..")
    (inst.work / "in").symlink_to(inst.home)
    (inst.home / ".contenox").mkdir()
    (inst.home / ".contenox" / "esc").symlink_to(os.path.relpath(sentinel, inst.home / ".contenox"))
    return inst


@pytest.fixture(scope="module")
def hostile_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("hostile")
    make_sentinel(base / "realhome")
    (base / "beside.txt").write_text("beside the scratch roots")
    return base


_made = [0]


def outside_roots(rel: str) -> bool:
    """Everything but the scratch roots the examples make."""
    return rel.split(os.sep)[0].startswith("root")


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data(), build=st.sampled_from(STEPS), placeholder=st.booleans())
def test_a_hostile_value_in_any_path_step_never_touches_the_sentinel(
    hostile_base: Path, data: st.DataObject, build: Callable[[str], Action], placeholder: bool
) -> None:
    value = data.draw(_hostile(hostile_base), label="value")
    before = tree(hostile_base, outside_roots)
    _made[0] += 1
    inst = _instance(hostile_base, _made[0])
    try:
        try:
            # Filled when the step runs (a capture), or written in the case itself.
            steps = (
                [probe("p", lambda i: value, capture="p"), build("{p}")]
                if placeholder
                else [build(value)]
            )
            case = Case(name="hostile", init=False, steps=steps)
        except CaseError:
            return  # refused when built: nothing ran
        try:
            run_case(case, inst)
        except AssertionError as err:
            # A refusal (or a plain "no such file"/"matches nothing"), never Python's own error.
            assert (
                "case 'hostile'" in str(err) or "no such file" in str(err) or "matches" in str(err)
            ), str(err)
    finally:
        inst.close()
        shutil.rmtree(inst.root, ignore_errors=True)
    assert_unchanged(before, tree(hostile_base, outside_roots))


# --------------------------------------------------------------------------- in-process, one at a time

IN_PROCESS: list[tuple[str, Callable[[str], Case], str]] = [
    (
        "files through a link already in the workspace",
        lambda s: Case(name="files", init=False, files={"out/x": "y"}, steps=[step("version")]),
        "case 'files': setup files['out/x'] 'out/x' lies outside the scratch root "
        "(it resolves to {S}/x)",
    ),
    (
        "home_files through a link already in ~/.contenox",
        lambda s: Case(name="home", init=False, home_files={"esc/x": "y"}, steps=[step("version")]),
        "case 'home': setup home_files['esc/x'] 'esc/x' lies outside the scratch root",
    ),
    (
        "a write onto a directory",
        lambda s: Case(
            name="onto a dir",
            init=False,
            steps=[probe("p", lambda i: "in", capture="p"), write("{p}", "x")],
        ),
        "case 'onto a dir': steps[1] (write) path '{p}' (filled: 'in') is a directory, not a file",
    ),
    (
        "a cwd that is a file",
        lambda s: Case(
            name="cwd a file",
            init=False,
            files={"f.txt": "x"},
            steps=[step("version", cwd="work/f.txt")],
        ),
        "case 'cwd a file': steps[0] (step) cwd 'work/f.txt' is not a directory",
    ),
    (
        "a link target with a NUL",
        lambda s: Case(
            name="nul target",
            init=False,
            steps=[probe("p", lambda i: "a\0b", capture="p"), link("l", "{p}")],
        ),
        "case 'nul target': steps[1] (link) target '{p}' (filled: 'a\\x00b') holds a NUL byte",
    ),
    (
        "a placeholder filled with a lone surrogate",
        lambda s: Case(
            name="surrogate",
            init=False,
            steps=[probe("p", lambda i: "x\ud800", capture="p"), edit("{p}", append="y")],
        ),
        "case 'surrogate': steps[1] (edit) path '{p}' (filled: 'x\\ud800') is not valid text",
    ),
]


@pytest.mark.parametrize(
    ("build", "refusal"), [c[1:] for c in IN_PROCESS], ids=[c[0] for c in IN_PROCESS]
)
def test_each_path_field_is_refused_when_it_runs_naming_the_case_step_and_field(
    hostile_base: Path, build: Callable[[str], Case], refusal: str
) -> None:
    sentinel = hostile_base / "realhome" / ".contenox"
    before = tree(hostile_base, outside_roots)
    _made[0] += 1
    inst = _instance(hostile_base, _made[0])
    try:
        with pytest.raises(AssertionError) as raised:
            run_case(build(str(sentinel)), inst)
    finally:
        inst.close()
        shutil.rmtree(inst.root, ignore_errors=True)
    assert refusal.replace("{S}", str(sentinel)) in str(raised.value), str(raised.value)
    assert_unchanged(before, tree(hostile_base, outside_roots))


def test_removing_a_link_that_points_out_removes_the_link_never_its_target(
    hostile_base: Path,
) -> None:
    sentinel = hostile_base / "realhome" / ".contenox"
    before = tree(hostile_base, outside_roots)
    _made[0] += 1
    inst = _instance(hostile_base, _made[0])
    case = Case(
        name="unlinked",
        init=False,
        steps=[link("victim", str(sentinel / "victim")), remove("victim"), remove("out")],
    )
    try:
        run_case(case, inst)
        assert not os.path.lexists(inst.work / "victim") and not os.path.lexists(inst.work / "out")
    finally:
        inst.close()
        shutil.rmtree(inst.root, ignore_errors=True)
    assert_unchanged(before, tree(hostile_base, outside_roots))
