"""Source mutants of contenox: build each one, run the suite against it, print a kill matrix.

A mutant is a small unified diff against the contenox module as the Go module
proxy serves it (``mutants/*.diff``), with a header saying what it breaks::

    # breaks: `mission list` shows a landed mission as landed
    # doc: contenox-cli.md, `contenox mission list`
    # area: missions run
    # by hand: contenox run --policy run "report" && contenox mission list
    #   real: STATUS landed; mutant: STATUS open
    --- a/internal/services/missionservice/service.go
    +++ b/internal/services/missionservice/service.go
    @@ -10,7 +10,7 @@
    ...

``area`` names the case files (``cases/test_<area>.py``) that are run first,
stopping at the first failure; only a mutant that survives them meets the
whole suite. A failure that is a timeout, a crash of the harness, or a case
that fails on the real binary too is not a kill: it is recorded and the
search goes on without that case, so the matrix says what actually caught
the mutant.

Each mutant is built once (``CGO_ENABLED=0``), cached under the harness cache
dir by the digest of its diff. The module tree is never copied: the patched
files are handed to ``go build -overlay``, which compiles them in place of the
read-only originals, so a mutant costs one package recompile and a link::

    python -m harness.tools.mutants                    # the whole catalog
    python -m harness.tools.mutants scripted_cursor_per_call run_exit_zero_on_stuck
    python -m harness.tools.mutants --splits 3 --group 2 --markdown mutants/REPORT.md
"""

from __future__ import annotations

import argparse
import concurrent.futures
import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from filelock import FileLock

from ..binary import CONTENOX_MODULE, CONTENOX_VERSION, BinaryError, resolve_binary
from ..cache import cache_dir

__all__ = [
    "Hunk",
    "Mutant",
    "MutantError",
    "Outcome",
    "Patch",
    "apply_patch",
    "build_mutant",
    "classify",
    "load_catalog",
    "main",
    "matrix",
    "parse_mutant",
    "select",
]


def _repo() -> Path:
    # tox may import the installed wheel; the catalog and the cases live in the checkout.
    here = Path.cwd()
    if (here / "mutants").is_dir() and (here / "cases").is_dir():
        return here
    return Path(__file__).resolve().parents[2]


REPO = _repo()
CATALOG = REPO / "mutants"
# The CI smoke check (`tox -e mutants-smoke`): one mutant each of the scripted
# backend, the mission read-back and the CLI tables, each killed in its own area
# within a minute; if any survives, the suite has gone blind somewhere it
# used to see.
SMOKE = ("scripted_cursor_stuck", "missions_show_drops_reason", "backend_list_url_is_type")
BUILD_TIMEOUT = 900.0
# A whole-suite run against one mutant; far above the ~2 min a healthy run takes.
SUITE_TIMEOUT = 1800.0
# How many non-kills (timeouts, crashes, flaky cases) to step over before giving up.
MAX_SKIPS = 3

_HEADER_FIELDS = ("breaks", "doc", "area", "by hand")


class MutantError(ValueError):
    """A mutant file that cannot be read or applied; the message names the file and the fix."""


@dataclass(frozen=True)
class Hunk:
    """One ``@@ -a,b +c,d @@`` block: its old start line (1-based) and its body lines."""

    old_start: int
    old_count: int
    new_count: int
    lines: tuple[str, ...]

    @property
    def old(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "-")]

    @property
    def new(self) -> list[str]:
        return [line[1:] for line in self.lines if line[:1] in (" ", "+")]


@dataclass(frozen=True)
class Patch:
    """The hunks of one file, its path relative to the module root."""

    path: str
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class Mutant:
    """One catalog entry: its name, what it breaks, where, and the diff."""

    name: str
    breaks: str
    doc: str
    areas: tuple[str, ...]
    by_hand: str
    patches: tuple[Patch, ...]
    diff: str

    @property
    def digest(self) -> str:
        """sha256 of the diff alone, so rewording the header does not rebuild."""
        return hashlib.sha256(self.diff.encode()).hexdigest()[:16]


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _strip_prefix(path: str) -> str:
    path = path.split("\t", 1)[0].strip()
    return path[2:] if path[:2] in ("a/", "b/") else path


def parse_mutant(path: Path) -> Mutant:
    """Read a ``.diff`` mutant: the ``# field: value`` header, then a unified diff.

    Raises :class:`MutantError` naming the file and what is missing or malformed.
    """
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    header: dict[str, str] = {}
    last: str | None = None
    i = 0
    while i < len(lines) and not lines[i].startswith("--- "):
        line = lines[i]
        if line.startswith("#   ") and last is not None:
            header[last] += "\n" + line[4:].rstrip()
        elif line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            last = key.strip().lower()
            header[last] = value.strip()
        elif line.strip() and not line.startswith("#"):
            raise MutantError(f"{path}: line {i + 1} is neither a '# field:' header nor the diff")
        i += 1
    missing = [f for f in _HEADER_FIELDS if not header.get(f)]
    if missing:
        raise MutantError(
            f"{path}: the header lacks {', '.join(repr(m) for m in missing)}; every mutant "
            "says what promise it breaks (# breaks:), its doc page (# doc:), the case areas "
            "to run first (# area:) and the command that shows it (# by hand:)"
        )
    diff_lines = lines[i:]
    if not diff_lines:
        raise MutantError(f"{path}: no unified diff after the header ('--- a/…' expected)")
    patches = _parse_diff(path, diff_lines, i)
    return Mutant(
        name=path.stem,
        breaks=header["breaks"],
        doc=header["doc"],
        areas=tuple(header["area"].split()),
        by_hand=header["by hand"],
        patches=patches,
        diff="\n".join(diff_lines) + "\n",
    )


def _parse_diff(path: Path, lines: list[str], offset: int) -> tuple[Patch, ...]:
    patches: list[Patch] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("--- "):
            if lines[i].strip():
                raise MutantError(f"{path}: line {offset + i + 1}: expected '--- a/<file>'")
            i += 1
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("+++ "):
            raise MutantError(f"{path}: line {offset + i + 2}: '+++ b/<file>' must follow '---'")
        target = _strip_prefix(lines[i + 1][4:])
        i += 2
        hunks: list[Hunk] = []
        while i < len(lines) and lines[i].startswith("@@"):
            m = _HUNK.match(lines[i])
            if m is None:
                raise MutantError(f"{path}: line {offset + i + 1}: malformed hunk header")
            old_count = int(m.group(2) or "1")
            new_count = int(m.group(4) or "1")
            i += 1
            body: list[str] = []
            seen_old = seen_new = 0
            while i < len(lines) and (seen_old < old_count or seen_new < new_count):
                line = lines[i]
                if line.startswith("\\"):
                    i += 1
                    continue
                tag = line[:1] or " "
                if tag not in (" ", "-", "+"):
                    break
                body.append(tag + line[1:])
                seen_old += tag in (" ", "-")
                seen_new += tag in (" ", "+")
                i += 1
            if (seen_old, seen_new) != (old_count, new_count):
                raise MutantError(
                    f"{path}: hunk at line {m.group(0)} of {target} promises "
                    f"-{old_count} +{new_count} lines but holds -{seen_old} +{seen_new}; "
                    "regenerate the diff with `diff -u`"
                )
            hunks.append(Hunk(int(m.group(1)), old_count, new_count, tuple(body)))
        if not hunks:
            raise MutantError(f"{path}: {target} has no hunks")
        patches.append(Patch(target, tuple(hunks)))
    if not patches:
        raise MutantError(f"{path}: the diff changes no file")
    return tuple(patches)


def apply_patch(original: str, patch: Patch) -> str:
    """``original`` with every hunk applied; the context must match exactly.

    A hunk is looked for at its stated line first, then at the nearest offset,
    the way ``patch`` does without fuzz. Raises :class:`MutantError` naming the
    file and hunk when the context is not there (the diff is against another
    version of contenox).
    """
    lines = original.split("\n")
    shift = 0
    for hunk in patch.hunks:
        old = hunk.old
        want = hunk.old_start - 1 + shift
        at = _find(lines, old, want)
        if at is None:
            raise MutantError(
                f"{patch.path}: hunk @@ -{hunk.old_start},{hunk.old_count} does not match "
                f"contenox {CONTENOX_VERSION}; the diff was made against other source"
            )
        lines[at : at + len(old)] = hunk.new
        shift += len(hunk.new) - len(old) + (at - want)
    return "\n".join(lines)


def _find(lines: list[str], block: list[str], want: int) -> int | None:
    for delta in range(len(lines) + 1):
        for at in (want - delta, want + delta):
            if 0 <= at <= len(lines) - len(block) and lines[at : at + len(block)] == block:
                return at
    return None


def load_catalog(directory: Path = CATALOG) -> list[Mutant]:
    """Every ``*.diff`` in ``directory``, sorted by name."""
    return [parse_mutant(p) for p in sorted(directory.glob("*.diff"))]


def select(
    mutants: Sequence[Mutant], names: Sequence[str], splits: int = 1, group: int = 1
) -> list[Mutant]:
    """The mutants named (all when none), then the ``group``-th of ``splits`` round-robin shards."""
    if not 1 <= group <= splits:
        raise MutantError(f"--group {group} is outside 1..{splits} (--splits {splits})")
    known = {m.name: m for m in mutants}
    unknown = [n for n in names if n.removesuffix(".diff") not in known]
    if unknown:
        raise MutantError(
            f"no mutant named {', '.join(unknown)} in {CATALOG}; known: {', '.join(sorted(known))}"
        )
    chosen = [known[n.removesuffix(".diff")] for n in names] if names else list(mutants)
    return [m for i, m in enumerate(chosen) if i % splits == group - 1]


# --- building ------------------------------------------------------------------------------


def module_source(go: str = "go") -> Path:
    """The contenox module tree in the Go module cache (downloaded if absent), read-only."""
    with tempfile.TemporaryDirectory(prefix="contenox-mod-") as scratch:
        done = subprocess.run(
            [go, "mod", "download", "-json", f"{CONTENOX_MODULE}@{CONTENOX_VERSION}"],
            cwd=scratch,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
    if done.returncode != 0:
        raise MutantError(f"go mod download {CONTENOX_MODULE}@{CONTENOX_VERSION}: {done.stderr}")
    return Path(json.loads(done.stdout)["Dir"])


def writable_source(module: Path, cache: Path) -> Path:
    """One writable copy of the module tree, shared by every mutant's build.

    ``go build -overlay`` refuses to replace files beneath GOMODCACHE, so the
    mutants overlay this copy instead; it is made once (under a lock, installed
    by rename) and never edited.
    """
    target = cache / f"src-{CONTENOX_VERSION}"
    if (target / "go.mod").is_file():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache / "src.lock")):
        if (target / "go.mod").is_file():
            return target
        staging = Path(tempfile.mkdtemp(prefix=".src-", dir=cache))
        tree = staging / "tree"
        shutil.copytree(module, tree, copy_function=shutil.copyfile)
        for root, dirs, _files in os.walk(tree):
            for d in dirs:
                os.chmod(Path(root) / d, 0o755)
        os.chmod(tree, 0o755)
        os.replace(tree, target)
        shutil.rmtree(staging, ignore_errors=True)
    return target


@dataclass(frozen=True)
class Built:
    """A mutant binary, or why it could not be built."""

    mutant: str
    path: Path | None
    error: str = ""
    cached: bool = False
    seconds: float = 0.0


def build_mutant(
    mutant: Mutant, source: Path, cache: Path, *, go: str = "go", timeout: float = BUILD_TIMEOUT
) -> Built:
    """Build ``mutant`` once into ``cache/<digest>/contenox``; a second call is a cache hit.

    The patched files go to ``cache/<digest>/src/`` and reach the compiler
    through ``go build -overlay``, so the read-only module tree is never
    copied or touched.
    """
    home = cache / mutant.digest
    binary = home / "contenox"
    if binary.is_file() and os.access(binary, os.X_OK):
        return Built(mutant.name, binary, cached=True)
    cache.mkdir(parents=True, exist_ok=True)
    # Two runs (shards, a second terminal) may want the same mutant: one builds it.
    with FileLock(str(cache / f"{mutant.digest}.lock")):
        if binary.is_file() and os.access(binary, os.X_OK):
            return Built(mutant.name, binary, cached=True)
        return _build(mutant, source, cache, home, go=go, timeout=timeout)


def _build(
    mutant: Mutant, source: Path, cache: Path, home: Path, *, go: str, timeout: float
) -> Built:
    binary = home / "contenox"
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=cache))
    try:
        replace_map: dict[str, str] = {}
        for patch in mutant.patches:
            original = source / patch.path
            try:
                text = original.read_text(encoding="utf-8")
            except OSError as err:
                raise MutantError(
                    f"{mutant.name}: {patch.path} is not in {source}: {err}"
                ) from None
            patched = staging / "src" / patch.path
            patched.parent.mkdir(parents=True, exist_ok=True)
            patched.write_text(apply_patch(text, patch), encoding="utf-8")
            replace_map[str(original)] = str(patched)
        overlay = staging / "overlay.json"
        overlay.write_text(json.dumps({"Replace": replace_map}), encoding="utf-8")
        env = dict(os.environ, CGO_ENABLED="0")
        done = subprocess.run(
            # No symbol table or DWARF (-s -w): nobody debugs a mutant, and the
            # link, the bulk of a mutant's build, gets markedly cheaper.
            [
                go,
                "build",
                "-trimpath",
                "-ldflags=-s -w",
                "-overlay",
                str(overlay),
                "-o",
                str(staging / "contenox"),
                "./cmd/contenox",
            ],
            cwd=source,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if done.returncode != 0:
            return Built(mutant.name, None, error=(done.stderr or done.stdout).strip())
        if home.exists():
            shutil.rmtree(home)
        os.replace(staging, home)
        return Built(mutant.name, binary, seconds=time.monotonic() - started)
    except MutantError as err:
        return Built(mutant.name, None, error=str(err))
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def build_all(
    mutants: Sequence[Mutant],
    source: Path,
    cache: Path,
    *,
    jobs: int,
    go: str = "go",
    progress: Callable[[Built], None] = lambda b: None,
) -> dict[str, Built]:
    """Build every mutant, ``jobs`` at a time; cached ones cost nothing."""
    cache.mkdir(parents=True, exist_ok=True)
    out: dict[str, Built] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(build_mutant, m, source, cache, go=go) for m in mutants]
        for future in concurrent.futures.as_completed(futures):
            built = future.result()
            progress(built)
            out[built.mutant] = built
    return out


# --- running and judging -------------------------------------------------------------------

KILLED = "killed"
SURVIVED = "survived"
TIMEOUT = "timeout"
CRASH = "harness crash"
FLAKY = "fails on the real binary too"
UNBUILDABLE = "does not build"

# Exceptions that mean the harness or the case code broke, not that contenox misbehaved.
_CRASH_TYPES = (
    "TypeError",
    "AttributeError",
    "NameError",
    "ImportError",
    "ModuleNotFoundError",
    "RecursionError",
    "SyntaxError",
    "ZeroDivisionError",
    "harness.case.CaseError",
    "harness.dialog.DialogError",
    "harness.instance.InstanceError",
    "harness.binary.BinaryError",
    "CaseError",
    "DialogError",
    "InstanceError",
    "BinaryError",
)
_TIMEOUT_TYPES = ("CommandTimeout", "WaitTimeout", "TerminalTimeout", "AcpTimeout", "Timeout")


@dataclass(frozen=True)
class Failure:
    """The first failing case of a pytest run and how it failed."""

    nodeid: str
    kind: str  # KILLED, TIMEOUT or CRASH
    message: str


def _one_line(text: str, width: int = 160) -> str:
    for line in text.strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("Traceback", "File ", "E   ")):
            return line if len(line) <= width else line[: width - 1] + "…"
    return "(no message)"


def _kind_of(message: str, text: str, is_error: bool) -> str:
    head = message.split(":", 1)[0].strip()
    if any(head.endswith(t) for t in _TIMEOUT_TYPES) or "Timeout >" in message:
        return TIMEOUT
    if head in _CRASH_TYPES or any(head.endswith("." + t) for t in _CRASH_TYPES):
        return CRASH
    if is_error and "left processes running" not in message + text:
        return CRASH
    return KILLED


def classify(junit_xml: str, returncode: int) -> Failure | None:
    """The first failing testcase of a pytest run (its junit XML), or None when all passed.

    A failure whose exception is a timeout is ``TIMEOUT``; a programming error in
    the harness or the case code, an error outside a test, or a pytest run that
    broke down (exit code 2–4) is ``CRASH``; anything else is a kill.
    """
    failures: list[Failure] = []
    if junit_xml.strip():
        root = ET.fromstring(junit_xml)
        for case in root.iter("testcase"):
            nodeid = _nodeid(case)
            for child in case:
                if child.tag not in ("failure", "error"):
                    continue
                message = child.get("message") or ""
                text = child.text or ""
                kind = _kind_of(message, text, child.tag == "error")
                failures.append(Failure(nodeid, kind, _one_line(message or text)))
                break
    if failures:
        # With -x under xdist a second case may already have failed; prefer a real kill.
        kills = [f for f in failures if f.kind == KILLED]
        return kills[0] if kills else failures[0]
    if returncode in (0, 5):
        return None
    if returncode == 1:
        return Failure("(session)", CRASH, "pytest exited 1 with no failing case")
    return Failure("(session)", CRASH, f"pytest exited {returncode} (interrupted or broken)")


def _nodeid(case: ET.Element) -> str:
    classname = case.get("classname") or ""
    name = case.get("name") or ""
    parts = classname.split(".")
    # junit's classname is the module path with dots: cases.test_run → cases/test_run.py
    module = "/".join(parts) + ".py" if parts and parts[-1].startswith("test_") else classname
    return f"{module}::{name}"


@dataclass(frozen=True)
class Outcome:
    """What the suite did to one mutant."""

    mutant: Mutant
    verdict: str
    case: str = ""
    message: str = ""
    stage: str = ""
    seconds: float = 0.0
    stepped_over: tuple[Failure, ...] = field(default_factory=tuple)


RunPytest = Callable[[Path, Sequence[str], Sequence[str]], tuple[int, str]]


def run_pytest(
    binary: Path,
    targets: Sequence[str],
    extra: Sequence[str],
    *,
    timeout: float = SUITE_TIMEOUT,
) -> tuple[int, str]:
    """Run pytest on ``targets`` with ``CONTENOX_BIN=binary``; return (exit code, junit XML)."""
    with tempfile.TemporaryDirectory(prefix="mutant-run-") as scratch:
        junit = Path(scratch) / "junit.xml"
        env = dict(os.environ, CONTENOX_BIN=str(binary))
        argv = [
            sys.executable,
            "-m",
            "pytest",
            *targets,
            "-p",
            "no:randomly",
            "-p",
            "no:cacheprovider",
            "-q",
            "--no-header",
            f"--junitxml={junit}",
            # A partial run (-x, one area) leaves snapshots unused; that is not a kill.
            "--snapshot-warn-unused",
            *extra,
        ]
        try:
            done = subprocess.run(
                argv,
                cwd=REPO,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return -1, ""
        xml = junit.read_text(encoding="utf-8") if junit.exists() else ""
        return done.returncode, xml


def area_targets(mutant: Mutant, cases: Path) -> list[str]:
    """The case files of the mutant's areas; an unknown area is an error naming the choices."""
    targets = []
    for area in mutant.areas:
        path = cases / f"test_{area}.py"
        if not path.is_file():
            known = sorted(p.stem.removeprefix("test_") for p in cases.glob("test_*.py"))
            raise MutantError(
                f"{mutant.name}: area {area!r} has no cases/test_{area}.py; known: {known}"
            )
        targets.append(str(path.relative_to(cases.parent)))
    return targets


def judge(
    mutant: Mutant,
    binary: Path,
    real: Path | None,
    *,
    cases: Path,
    workers: str,
    runner: RunPytest | None = None,
) -> Outcome:
    """Run the mutant's area cases first (``-x``), then the rest of the suite if it survived.

    A failure that is a timeout, a crash, or a case that also fails on the real
    binary (``real``) is stepped over (``--deselect``) and the search goes on, at
    most :data:`MAX_SKIPS` times; the outcome keeps what was stepped over.
    """
    run = runner or run_pytest
    started = time.monotonic()
    areas = area_targets(mutant, cases)
    rest = [f"--ignore={t}" for t in areas]
    stages = [("area", areas, []), ("suite", [str(cases.relative_to(cases.parent))], rest)]
    skipped: list[Failure] = []
    for stage, targets, ignores in stages:
        while True:
            deselect = [f"--deselect={f.nodeid}" for f in skipped]
            code, xml = run(binary, targets, ["-x", "-n", workers, *ignores, *deselect])
            failure = (
                classify(xml, code)
                if code != -1
                else Failure("(session)", TIMEOUT, f"the pytest run overran {SUITE_TIMEOUT:g}s")
            )
            if failure is None:
                break
            if failure.kind == KILLED and real is not None and failure.nodeid != "(session)":
                code_real, xml_real = run(real, [failure.nodeid], ["-n", "0"])
                if classify(xml_real, code_real) is not None:
                    failure = replace(failure, kind=FLAKY)
            if failure.kind == KILLED:
                return Outcome(
                    mutant,
                    KILLED,
                    failure.nodeid,
                    failure.message,
                    stage,
                    time.monotonic() - started,
                    tuple(skipped),
                )
            skipped.append(failure)
            if failure.nodeid == "(session)" or len(skipped) >= MAX_SKIPS:
                return _not_killed(mutant, skipped, stage, started)
    if skipped:
        return _not_killed(mutant, skipped, "suite", started)
    return Outcome(mutant, SURVIVED, stage="suite", seconds=time.monotonic() - started)


def _not_killed(mutant: Mutant, skipped: list[Failure], stage: str, started: float) -> Outcome:
    first = skipped[0]
    return Outcome(
        mutant,
        first.kind,
        first.nodeid,
        first.message,
        stage,
        time.monotonic() - started,
        tuple(skipped),
    )


# --- the matrix ----------------------------------------------------------------------------


def _short(nodeid: str) -> str:
    return nodeid.removeprefix("cases/")


def matrix(outcomes: Iterable[Outcome]) -> str:
    """The kill matrix as plain text: mutant | verdict | first failing case — message."""
    rows = list(outcomes)
    width = max([len(o.mutant.name) for o in rows] + [6])
    lines = [f"{'mutant':{width}}  {'verdict':13}  killed by (first failing case — message)"]
    for o in rows:
        detail = f"{_short(o.case)} — {o.message}" if o.case else o.message
        if o.stepped_over and o.verdict == KILLED:
            detail += f"  [stepped over: {', '.join(f.kind for f in o.stepped_over)}]"
        lines.append(f"{o.mutant.name:{width}}  {o.verdict:13}  {detail}".rstrip())
    lines.append(summary(rows))
    return "\n".join(lines)


def summary(outcomes: Sequence[Outcome]) -> str:
    """``killed 38/41 (92.7%); survived 2; timeout 1`` — the counts per verdict."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.verdict] = counts.get(o.verdict, 0) + 1
    judged = len(outcomes) - counts.get(UNBUILDABLE, 0)
    killed = counts.get(KILLED, 0)
    ratio = f"{100 * killed / judged:.1f}%" if judged else "n/a"
    others = "; ".join(f"{k} {v}" for k, v in sorted(counts.items()) if k != KILLED)
    return f"killed {killed}/{judged} ({ratio})" + (f"; {others}" if others else "")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(outcomes: Sequence[Outcome], machine: str) -> str:
    """The matrix as the Markdown table of ``mutants/REPORT.md``."""
    out = [
        "| mutant | area | breaks | verdict | stage | killed by (first failing case) | message |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        out.append(
            f"| `{o.mutant.name}` | {' '.join(o.mutant.areas)} | {_cell(o.mutant.breaks)} "
            f"| {o.verdict} | {o.stage} | {_cell(_short(o.case))} | {_cell(o.message)} |"
        )
    return f"Machine: {machine}\n\n{summary(outcomes)}\n\n" + "\n".join(out) + "\n"


def machine() -> str:
    """One line naming the machine a matrix was measured on."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} cores {cpu}, "
        f"Python {platform.python_version()}, contenox {CONTENOX_VERSION}, "
        f"load {load:.1f} at the start, {time.strftime('%Y-%m-%d %H:%M %Z')}"
    )


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m harness.tools.mutants",
        description="Build contenox source mutants and run the suite against each.",
    )
    parser.add_argument("names", nargs="*", help="mutants to run (default: the whole catalog)")
    parser.add_argument("--catalog", type=Path, default=CATALOG)
    parser.add_argument("--cases", type=Path, default=REPO / "cases")
    parser.add_argument("--splits", type=int, default=1)
    parser.add_argument("--group", type=int, default=1)
    parser.add_argument(
        "--jobs",
        type=int,
        default=min(2, os.cpu_count() or 1),
        help="parallel builds (default: up to 2 cores)",
    )
    parser.add_argument("-n", dest="workers", default="2", help="pytest-xdist workers per run")
    parser.add_argument("--build-only", action="store_true", help="build, print paths, stop")
    parser.add_argument(
        "--no-confirm",
        action="store_true",
        help="do not re-run a killing case on the real binary to rule out flakes",
    )
    parser.add_argument("--markdown", type=Path, help="also write the matrix as Markdown here")
    parser.add_argument(
        "--expect-killed", action="store_true", help="exit 1 unless every mutant run was killed"
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help=f"the CI smoke check: {', '.join(SMOKE)}, each must be killed",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        args.names = [*args.names, *SMOKE]
        args.expect_killed = True
    env = os.environ if environ is None else environ
    try:
        chosen = select(load_catalog(args.catalog), args.names, args.splits, args.group)
        go = shutil.which("go")
        if go is None:
            raise MutantError("building mutants needs Go on PATH (https://go.dev/dl)")
        cache = cache_dir(env) / CONTENOX_VERSION / "mutants"
        source = writable_source(module_source(go), cache)
    except MutantError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    where = machine()
    print(f"{len(chosen)} mutant(s) of {CONTENOX_MODULE}@{CONTENOX_VERSION} from {source}")
    print(f"machine: {where}", flush=True)

    def said(built: Built) -> None:
        how = (
            "cached"
            if built.cached
            else (f"built in {built.seconds:.0f}s" if built.path else "DOES NOT BUILD")
        )
        print(f"  {built.mutant}: {how}", flush=True)

    if args.build_only:
        builds = build_all(chosen, source, cache, jobs=args.jobs, go=go, progress=said)
        for m in chosen:
            print(f"{m.name}\t{builds[m.name].path or builds[m.name].error}")
        return 0 if all(b.path for b in builds.values()) else 1
    real: Path | None = None
    if not args.no_confirm:
        try:
            real = resolve_binary({k: v for k, v in env.items() if k != "CONTENOX_BIN"}).path
        except BinaryError as err:
            print(f"no real binary to confirm kills against: {err}", file=sys.stderr)
    outcomes: list[Outcome] = []
    # Judge each mutant as soon as its build is done while the next ones build.
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    cache.mkdir(parents=True, exist_ok=True)
    futures = {m.name: pool.submit(build_mutant, m, source, cache, go=go) for m in chosen}
    for m in chosen:
        built = futures[m.name].result()
        said(built)
        if built.path is None:
            outcome = Outcome(m, UNBUILDABLE, message=_one_line(built.error))
        else:
            outcome = judge(m, built.path, real, cases=args.cases, workers=args.workers)
        outcomes.append(outcome)
        if args.markdown:
            # Rewritten after every mutant, so a sweep cut short still leaves its matrix.
            args.markdown.write_text(markdown(outcomes, where), encoding="utf-8")
        print(
            f"{m.name}: {outcome.verdict} {_short(outcome.case)} {outcome.message}"
            f" ({outcome.stage}, {outcome.seconds:.0f}s)",
            flush=True,
        )
    pool.shutdown()
    print()
    print(matrix(outcomes))
    if args.markdown:
        args.markdown.write_text(markdown(outcomes, where), encoding="utf-8")
        print(f"wrote {args.markdown}")
    if args.expect_killed and any(o.verdict != KILLED for o in outcomes):
        missed = [o.mutant.name for o in outcomes if o.verdict != KILLED]
        print(f"these mutants were not killed, so the suite no longer sees them: {missed}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
