"""What the harness costs: ratios measured side by side in one run, printed as a table.

    tox -e bench                      # everything (~1 h on two cores: the suite twice)
    tox -e bench -- --skip-suite      # overhead and resolution only (~1 min)
    tox -e bench -- --profile         # also profile the harness path
    tox -e bench -- --per-core 2 3 4  # the suite at several workers per core
    tox -e bench -- --costs-only cases/test_run.py   # where a case's time goes

1. Overhead per command: N x ``contenox version`` and N x ``contenox backend
   list`` (in a scratch HOME) through the harness (``harness.run`` and
   ``Instance.contenox``) against a bare ``subprocess.run`` of the same binary
   with the same environment and cwd. The calls are interleaved (bare,
   harness, instance, bare, ...) so drift in machine load hits all three
   alike; the ratio is of medians, which a noisy neighbour moves least.
2. The e2e suite's wall time with today's setup and the new one side by side:
   ``-n auto`` at one xdist worker per core (xdist's own count, the setup
   before harness.workers) and at ``--per-core`` workers per core (3, what
   ``tox -e e2e`` sets); ``--serial`` also times it with no workers.
3. Resolving the binary cold (empty CONTENOX_E2E_CACHE, so a build; the Go
   module and build caches are whatever this machine has) against warm (a
   cache hit, which still runs ``contenox version`` once).

Benchmarks measure; they never assert. Targets are printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness import Instance, resolve_binary, run
from harness.binary import Binary
from harness.workers import WORKERS_PER_CORE_VAR, cores

ROOT = Path(__file__).resolve().parent.parent
SUITE_TIMEOUT = 5400.0
COMMAND_TIMEOUT = 60.0


@dataclass(frozen=True)
class Row:
    what: str
    harness: str
    bare: str
    ratio: str
    target: str = ""


def _startup(binary: Binary, n: int = 20) -> float:
    """Median wall time of a bare ``contenox version``: what starting contenox costs."""
    with tempfile.TemporaryDirectory(prefix="contenox-bench-") as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CONTENOX_")}
        env["HOME"] = home
        times = []
        for _ in range(n):
            started = time.perf_counter()
            subprocess.run([binary.path, "version"], env=env, cwd=home, capture_output=True)
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def machine() -> str:
    cpu = "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.system()} {platform.release()}, {os.cpu_count()} cores ({cpu}), "
        f"Python {platform.python_version()}, load average {load}"
    )


def _ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.1f} ms (min {min(values) * 1000:.1f})"


def _cpu() -> float:
    """CPU seconds this (parent) process has used: the harness's own work, not the child's."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def overhead(binary: Binary, n: int, args: list[str]) -> list[Row]:
    """Median wall time per command: bare subprocess.run vs harness.run vs Instance.contenox."""
    with tempfile.TemporaryDirectory(prefix="contenox-bench-") as scratch:
        inst = Instance.create(Path(scratch) / "i", binary=binary.path)
        env = inst.env()
        argv = [str(binary.path), *args]
        # Warm up: page cache, and `backend list` creating the scratch database.
        for _ in range(3):
            inst.must(*args)

        def bare() -> None:
            done = subprocess.run(
                argv, capture_output=True, env=env, cwd=inst.work, timeout=COMMAND_TIMEOUT
            )
            assert done.returncode == 0, done

        def harness() -> None:
            run(argv, env=env, cwd=inst.work, timeout=COMMAND_TIMEOUT).assert_success()

        def instance() -> None:
            inst.contenox(*args).assert_success()

        times: dict[str, list[float]] = {"bare": [], "harness": [], "instance": []}
        cpu: dict[str, float] = {"bare": 0.0, "harness": 0.0, "instance": 0.0}
        calls: dict[str, Callable[[], None]] = {
            "bare": bare,
            "harness": harness,
            "instance": instance,
        }
        for _ in range(n):
            for name, call in calls.items():
                started, cpu_started = time.perf_counter(), _cpu()
                call()
                times[name].append(time.perf_counter() - started)
                cpu[name] += _cpu() - cpu_started
        inst.history.clear()

    base = statistics.median(times["bare"])
    rows = []
    for name, label in (("harness", "harness.run"), ("instance", "Instance.contenox")):
        ratio = statistics.median(times[name]) / base
        low = min(times[name]) / min(times["bare"])
        # The parent's extra CPU per command is the harness's own cost, and
        # unlike wall time it hardly moves with a neighbour's load.
        extra = (cpu[name] - cpu["bare"]) / n
        rows.append(
            Row(
                f"`contenox {' '.join(args)}` x{n}, {label}",
                _ms(times[name]),
                _ms(times["bare"]),
                f"median {ratio:.3f}, min {low:.3f}",
                "<= 1.030",
            )
        )
        rows.append(
            Row(
                f"  same, parent CPU per command ({label})",
                f"{cpu[name] / n * 1000:.2f} ms",
                f"{cpu['bare'] / n * 1000:.2f} ms",
                f"{extra * 1000:+.2f} ms = {extra / base * 100:+.2f}% of a command",
                "",
            )
        )
    return rows


def collect(into: Path, every: int = 1) -> int:
    """Write the e2e suite's node ids to ``into`` (a pytest @argfile); return how many.

    Every timed run gets the same ids, so cases added while the benchmark runs
    (other people work here too) cannot skew the ratio.
    """
    argv = [sys.executable, "-m", "pytest", "cases", "--collect-only", "-q"]
    result = run([*argv, "-p", "no:cacheprovider", "-p", "no:randomly"], cwd=ROOT, timeout=300)
    ids = [line for line in result.stdout.splitlines() if "::" in line][::every]
    into.write_text("\n".join(ids) + "\n", encoding="utf-8")
    return len(ids)


def suite(workers: str, ids: Path, per_core: int | None = None) -> tuple[float, str]:
    """Wall time of the e2e suite with ``-n workers`` and its outcome line.

    ``per_core`` sets ``CONTENOX_E2E_WORKERS_PER_CORE`` for ``-n auto`` (None: unset,
    so xdist's own count, one worker per core: the setup before harness.workers).
    """
    argv = [sys.executable, "-m", "pytest", f"@{ids}", "-q", "-p", "no:cacheprovider"]
    argv += ["-p", "no:randomly", "-n", workers]
    env = {k: v for k, v in os.environ.items() if k != WORKERS_PER_CORE_VAR}
    if per_core is not None:
        env[WORKERS_PER_CORE_VAR] = str(per_core)
    started = time.perf_counter()
    result = run(argv, cwd=ROOT, env=env, timeout=SUITE_TIMEOUT)
    took = time.perf_counter() - started
    lines = [ln for ln in result.stdout.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    outcome = lines[-1].strip("= ") if lines else f"exit {result.exit_code}"
    if result.exit_code != 0:
        # A failure in a timed run is otherwise lost: keep what pytest printed.
        kept = Path(tempfile.mkdtemp(prefix="contenox-bench-suite-")) / "output.txt"
        kept.write_text(result.stdout + result.stderr, encoding="utf-8")
        outcome += f" (pytest's output: {kept})"
    return took, outcome


COST_PARTS = ("startup", "init", "registration", "commands", "rest", "sleep", "harness_cpu")


def costs(ids: Path, startup: float, select: list[str]) -> str:
    """Run the cases serially under ``benchmarks/costs.py``; the per-case cost table.

    ``startup`` is one bare ``contenox version`` (median), charged once per command
    run to completion: the part of every command that is contenox starting.
    """
    out = Path(tempfile.mkdtemp(prefix="contenox-bench-costs-")) / "costs.jsonl"
    env = dict(os.environ, COSTS_OUT=str(out))
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT / "benchmarks"), env.get("PYTHONPATH", "")) if p
    )
    targets = select or [f"@{ids}"]
    argv = [sys.executable, "-m", "pytest", *targets, "-q", "-p", "no:cacheprovider"]
    argv += ["-p", "no:randomly", "-p", "costs", "-n", "0"]
    run(argv, cwd=ROOT, env=env, timeout=SUITE_TIMEOUT)
    records = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    if not records:
        return "(no case ran)"
    for r in records:
        in_commands = r["init"] + r["registration"] + r["commands"]
        r["rest"] = max(0.0, r["wall"] - in_commands - r["sleep"] - r["harness_cpu"])
        # Start-up is charged per command run to completion, and taken out of its kind.
        r["startup"] = 0.0
        for kind in ("init", "registration", "commands"):
            share = min(r[kind], r[f"{kind}_n"] * startup)
            r[kind] -= share
            r["startup"] += share
    n = len(records)
    wall = sum(r["wall"] for r in records) / n
    lines = [
        f"per-case cost, {n} cases run serially: mean {wall * 1000:.0f} ms, "
        f"median {statistics.median(r['wall'] for r in records) * 1000:.0f} ms; "
        f"contenox start-up (bare `version`, median) {startup * 1000:.0f} ms",
        "| part | mean per case | share of the wall | commands per case |",
        "|---|---|---|---|",
    ]
    counts = {
        "init": "init_n",
        "registration": "registration_n",
        "commands": "commands_n",
        "rest": "background",
    }
    notes = {
        "startup": "contenox start-up (a bare `version`, once per command)",
        "init": "`contenox init`, beyond start-up",
        "registration": "`backend add` + `config set` (the dialog as the default), beyond start-up",
        "commands": "the case's own contenox commands and probes, beyond start-up",
        "rest": "waiting on background contenox (ACP turns, pty screens, blocked runs), pytest",
        "sleep": "the harness's polling sleeps",
        "harness_cpu": "the harness's own CPU (this process; children left out)",
    }
    for part in COST_PARTS:
        mean = sum(r[part] for r in records) / n
        count = counts.get(part)
        per = f"{sum(r[count] for r in records) / n:.1f}" if count else ""
        if part == "rest":
            per += " background"
        lines.append(
            f"| {notes[part]} | {mean * 1000:.0f} ms | {100 * mean / wall:.1f} % | {per} |"
        )
    slow = sorted(records, key=lambda r: -r["wall"])[:5]
    lines.append(
        "slowest: " + "; ".join(f"{r['test'].split('::')[-1]} {r['wall']:.1f} s" for r in slow)
    )
    return "\n".join(lines)


def resolution() -> tuple[float, float, str]:
    """Seconds to resolve the pinned release from an empty cache, then from the cache."""
    with tempfile.TemporaryDirectory(prefix="contenox-bench-cache-") as cache:
        env = {k: v for k, v in os.environ.items() if k not in ("CONTENOX_BIN", "CONTENOX_SRC")}
        env["CONTENOX_E2E_CACHE"] = cache
        started = time.perf_counter()
        cold = resolve_binary(env)
        cold_s = time.perf_counter() - started
        started = time.perf_counter()
        resolve_binary(env)
        warm_s = time.perf_counter() - started
    return cold_s, warm_s, cold.how


def profile(binary: Binary, n: int) -> None:
    """Where a harness command spends its time beyond the child itself."""
    with tempfile.TemporaryDirectory(prefix="contenox-bench-") as scratch:
        inst = Instance.create(Path(scratch) / "i", binary=binary.path)
        try:
            from pyinstrument import Profiler
        except ImportError:
            import cProfile
            import pstats

            prof = cProfile.Profile()
            prof.enable()
            for _ in range(n):
                inst.contenox("version")
            prof.disable()
            pstats.Stats(prof).sort_stats("cumulative").print_stats(15)
            return
        profiler = Profiler(interval=0.0005)
        profiler.start()
        for _ in range(n):
            inst.contenox("version")
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False))


def table(rows: list[Row]) -> str:
    head = Row("measure", "harness / subject", "bare / baseline", "ratio", "target")
    cols = [[getattr(r, f) for r in [head, *rows]] for f in ("what", "harness", "bare", "ratio")]
    cols.append([head.target, *(r.target for r in rows)])
    widths = [max(len(c) for c in col) for col in cols]
    out = []
    for i in range(len(rows) + 1):
        cells = (col[i].ljust(w) for col, w in zip(cols, widths, strict=True))
        out.append("| " + " | ".join(cells) + " |")
        if i == 0:
            out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(out)


def _sampled(every: int) -> str:
    return f", every {every}th" if every > 1 else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-N", type=int, default=100, help="commands per overhead measure")
    parser.add_argument("--skip-suite", action="store_true", help="skip the suite wall times")
    parser.add_argument(
        "--per-core",
        type=int,
        nargs="+",
        default=[3],
        metavar="N",
        help="workers per core to time against one per core (default: 3, tox -e e2e's)",
    )
    parser.add_argument(
        "--serial", action="store_true", help="also time the suite serially (hours)"
    )
    parser.add_argument(
        "--every",
        type=int,
        default=1,
        metavar="K",
        help="time every K-th case of the suite only (a quicker ratio; default: all)",
    )
    parser.add_argument("--skip-resolve", action="store_true", help="skip the cold build")
    parser.add_argument("--profile", action="store_true", help="profile the harness path")
    parser.add_argument(
        "--costs",
        action="store_true",
        help="also the per-case cost breakdown of the whole suite, run serially (an hour)",
    )
    parser.add_argument(
        "--costs-only",
        nargs="*",
        metavar="CASES",
        help="only the per-case cost breakdown, of these case files/ids (default: all)",
    )
    opts = parser.parse_args(argv)
    if opts.costs_only is not None:
        binary = resolve_binary()
        print(f"machine: {machine()}\n{binary.header()}", flush=True)
        ids = Path(tempfile.mkdtemp(prefix="contenox-bench-ids-")) / "ids.txt"
        collect(ids)
        print(costs(ids, _startup(binary), opts.costs_only))
        return 0

    print(f"machine: {machine()}", flush=True)
    binary = resolve_binary()
    print(binary.header(), flush=True)
    rows: list[Row] = []
    rows += overhead(binary, opts.N, ["version"])
    rows += overhead(binary, opts.N, ["backend", "list"])
    print(table(rows), flush=True)

    if not opts.skip_suite:
        ids = Path(tempfile.mkdtemp(prefix="contenox-bench-ids-")) / "ids.txt"
        count = collect(ids, opts.every)
        # Side by side in one run: today's setup (one worker per core, xdist's -n
        # auto) against tox -e e2e's (CONTENOX_E2E_WORKERS_PER_CORE workers per core).
        before, before_out = suite("auto", ids)
        rows.append(
            Row(
                f"e2e suite ({count} cases{_sampled(opts.every)}), -n auto, 1 worker per core "
                f"({cores()} cores)",
                f"{before:.1f} s",
                "",
                "",
                before_out,
            )
        )
        for factor in opts.per_core:
            took, outcome = suite("auto", ids, per_core=factor)
            rows.append(
                Row(
                    f"e2e suite, {factor} workers per core vs 1",
                    f"{took:.1f} s",
                    f"{before:.1f} s",
                    f"{took / before:.2f}x the wall time",
                    "<= 0.50x; " + outcome,
                )
            )
        if opts.serial:
            serial, serial_out = suite("0", ids)
            rows.append(
                Row(
                    "e2e suite, 1 worker per core vs serial",
                    f"{before:.1f} s",
                    f"{serial:.1f} s",
                    f"{serial / before:.2f}x faster",
                    ">= 1.60x; serial: " + serial_out,
                )
            )
    if opts.costs:
        ids = Path(tempfile.mkdtemp(prefix="contenox-bench-ids-")) / "ids.txt"
        collect(ids)
        print(costs(ids, _startup(binary), []), flush=True)
    if not opts.skip_resolve:
        cold, warm, how = resolution()
        rows.append(
            Row(
                "binary resolution, cold (empty cache) vs warm (hit)",
                f"{cold:.1f} s",
                f"{warm:.2f} s",
                f"{cold / warm:.0f}x",
                f"cold: {how}",
            )
        )
    print(f"\nmachine at the end: {machine()}")
    print(table(rows))
    if opts.profile:
        profile(binary, opts.N)
    return 0


if __name__ == "__main__":
    sys.exit(main())
