"""The cases in ``cases/`` and the dialogs they commit under ``dialogs/``.

Every ``Case`` writes its dialog to ``dialogs/<area>/<case>.json`` (indented,
sorted keys, trailing newline), where ``<area>`` is its module's name without
``test_``. ``python -m harness.catalog write`` (``tox -e dialogs``) rewrites
them; ``drift()`` lists what differs, in both directions.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from .case import DEFECT_PREFIX, Case

__all__ = [
    "FIX_COMMAND",
    "all_case_names",
    "area_of",
    "cases_in",
    "cases_of",
    "drift",
    "expected_dialogs",
    "quarantined_case_names",
    "write_dialogs",
]

FIX_COMMAND = "tox -e dialogs"


def area_of(module_file: str | Path) -> str:
    """``cases/test_run.py`` → ``run``."""
    return Path(module_file).stem.removeprefix("test_")


def cases_in(module: ModuleType | object) -> Iterator[Case]:
    """Every module-level Case (or list/tuple of Cases) in ``module``."""
    for value in list(vars(module).values()):
        yield from cases_of(value)


def cases_of(value: object) -> Iterator[Case]:
    """The Cases a module-level value holds: itself, or the Cases of a list or tuple."""
    if isinstance(value, Case):
        yield value
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, Case) for v in value):
        yield from value


def _load(path: Path) -> ModuleType:
    name = f"_contenox_cases_.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _modules(cases_dir: Path) -> Iterable[Path]:
    return sorted(p for p in cases_dir.glob("test_*.py"))


def expected_dialogs(cases_dir: Path) -> dict[str, str]:
    """Relative path under ``dialogs/`` → the JSON text its case builds."""
    out: dict[str, str] = {}
    for path in _modules(cases_dir):
        area = area_of(path)
        for case in cases_in(_load(path)):
            for backend, script in case.dialogs.items():
                rel = f"{area}/{case.dialog_filename(backend)}"
                if rel in out:
                    raise ValueError(
                        f"two cases in {path} write dialogs/{rel}; give them different names"
                    )
                out[rel] = script.dumps()
    return out


def all_case_names(cases_dir: Path) -> set[tuple[str, str]]:
    """Every case as ``(file, test name)``, plus ``("", name)``: Cases and test functions."""
    names: set[tuple[str, str]] = set()
    for path in _modules(cases_dir):
        module = _load(path)
        found = {c.test_name for c in cases_in(module)}
        found |= {n for n, v in vars(module).items() if n.startswith("test_") and callable(v)}
        rel = f"{cases_dir.name}/{path.name}"
        for name in found:
            names |= {(rel, name), ("", name)}
    return names


def _quarantined(value: object) -> bool:
    """A test function carrying ``@defect(...)``: a strict xfail with the defect prefix."""
    marks = getattr(value, "pytestmark", [])
    return any(
        getattr(m, "name", "") == "xfail"
        and str(getattr(m, "kwargs", {}).get("reason", "")).startswith(DEFECT_PREFIX)
        for m in marks
    )


def quarantined_case_names(cases_dir: Path) -> set[tuple[str, str]]:
    """The cases quarantined as confirmed defects, as ``(file, test name)`` and ``("", name)``."""
    names: set[tuple[str, str]] = set()
    for path in _modules(cases_dir):
        module = _load(path)
        found = {c.test_name for c in cases_in(module) if c.defect is not None}
        found |= {
            n
            for n, v in vars(module).items()
            if n.startswith("test_") and callable(v) and _quarantined(v)
        }
        rel = f"{cases_dir.name}/{path.name}"
        for name in found:
            names |= {(rel, name), ("", name)}
    return names


def drift(cases_dir: Path, dialogs_dir: Path) -> list[str]:
    """Sentences naming every committed dialog that differs, is missing, or is orphaned."""
    expected = expected_dialogs(cases_dir)
    on_disk = {
        p.relative_to(dialogs_dir).as_posix(): p.read_text(encoding="utf-8")
        for p in dialogs_dir.rglob("*.json")
    }
    problems = []
    for rel, text in sorted(expected.items()):
        if rel not in on_disk:
            problems.append(f"dialogs/{rel} is missing: its case builds it but it is not committed")
        elif on_disk[rel] != text:
            problems.append(f"dialogs/{rel} differs from what its case builds")
    for rel in sorted(set(on_disk) - set(expected)):
        problems.append(f"dialogs/{rel} belongs to no case in {cases_dir}")
    return problems


def write_dialogs(cases_dir: Path, dialogs_dir: Path) -> list[str]:
    """Rewrite ``dialogs/`` from the cases; return the relative paths changed or removed."""
    expected = expected_dialogs(cases_dir)
    changed = []
    for rel, text in expected.items():
        path = dialogs_dir / rel
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(rel)
    for path in sorted(dialogs_dir.rglob("*.json")):
        rel = path.relative_to(dialogs_dir).as_posix()
        if rel not in expected:
            path.unlink()
            changed.append(f"{rel} (removed)")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m harness.catalog")
    parser.add_argument("command", choices=["write", "check"])
    parser.add_argument("--cases", type=Path, default=Path("cases"))
    parser.add_argument("--dialogs", type=Path, default=Path("dialogs"))
    args = parser.parse_args(argv)
    if args.command == "write":
        for rel in write_dialogs(args.cases, args.dialogs):
            print(f"wrote dialogs/{rel}")
        return 0
    problems = drift(args.cases, args.dialogs)
    for problem in problems:
        print(problem)
    if problems:
        print(f"fix: {FIX_COMMAND}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
