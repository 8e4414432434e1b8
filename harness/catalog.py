"""The cases in ``cases/``: every module-level ``Case`` and every test function, by name.

The dialogs they replay are kept under ``dialogs/`` by syrupy, like the
transcripts (``--snapshot-update``; see harness.snapshot.DialogExtension).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from .case import DEFECT_PREFIX, Case, Defect
from .case.model import DOCS_DISAGREE_MARK

__all__ = [
    "Quarantine",
    "all_case_names",
    "area_of",
    "cases_in",
    "cases_of",
    "docs_disagree_case_names",
    "e2e_tests",
    "quarantined_case_names",
    "quarantines",
]


@dataclass(frozen=True)
class Quarantine:
    """One quarantine in ``cases/``: the test it marks and what it says.

    ``defect`` is the :class:`Defect`, or the bare text of a quarantine not
    yet written as one (a plain string, or an ``xfail`` reason).
    """

    nodeid: str
    defect: Defect | str

    @property
    def docs_disagree(self) -> bool:
        return isinstance(self.defect, Defect) and self.defect.docs_disagree

    @property
    def test_name(self) -> str:
        """The test's name without its parameter id."""
        return self.nodeid.split("::", 1)[1].split("[", 1)[0]


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
    # Case modules import their shared dialogs (cases/dialogs.py) as pytest
    # lets them: with their own directory on sys.path.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
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


def _param_id(param: Any) -> str:
    if getattr(param, "id", None):
        return str(param.id)
    return "-".join(str(v) for v in getattr(param, "values", ()))


def _marks(value: object) -> Iterator[tuple[str, Any]]:
    """``(parameter id, mark)`` for every mark of a test function; ``""`` for its own."""
    for mark in list(getattr(value, "pytestmark", [])):
        yield "", mark
        if getattr(mark, "name", "") == "parametrize" and len(mark.args) > 1:
            for param in mark.args[1]:
                for inner in getattr(param, "marks", ()):
                    yield _param_id(param), inner


def _quarantine_of(mark: Any) -> Defect | str | None:
    """What a mark quarantines: its Defect, an xfail's reason, or None."""
    name = getattr(mark, "name", "")
    kwargs = getattr(mark, "kwargs", {})
    if name not in ("xfail", DOCS_DISAGREE_MARK):
        return None
    found = kwargs.get("defect")
    if isinstance(found, Defect):
        return found
    reason = _reason(mark) or ""
    return reason.removeprefix(DEFECT_PREFIX) if name == "xfail" else reason


def quarantines(cases_dir: Path) -> list[Quarantine]:
    """Every quarantine in ``cases_dir``, by node id: Cases, test functions, their variants.

    Read by importing the modules, as pytest would; nothing runs contenox.
    """
    found: list[Quarantine] = []
    for path in _modules(cases_dir):
        module = _load(path)
        rel = f"{cases_dir.name}/{path.name}"
        for case in cases_in(module):
            if case.defect is not None:
                found.append(Quarantine(f"{rel}::{case.test_name}", case.defect))
        for name, value in vars(module).items():
            if not (name.startswith("test_") and callable(value)):
                continue
            for param, mark in _marks(value):
                held = _quarantine_of(mark)
                if held is not None:
                    node = f"{rel}::{name}" + (f"[{param}]" if param else "")
                    found.append(Quarantine(node, held))
    return sorted(found, key=lambda q: q.nodeid)


def docs_disagree_case_names(cases_dir: Path) -> set[tuple[str, str]]:
    """The cases marked docs-disagree, as ``(file, test name)`` and ``("", name)``."""
    names: set[tuple[str, str]] = set()
    for q in quarantines(cases_dir):
        if q.docs_disagree:
            rel = q.nodeid.split("::", 1)[0]
            names |= {(rel, q.test_name), ("", q.test_name)}
    return names


def _quarantined(value: object) -> bool:
    """A test function carrying ``@defect(...)``: a strict xfail with the defect prefix."""
    marks = list(getattr(value, "pytestmark", []))
    # A parametrized test whose variant carries the quarantine counts too:
    # pytest.param(..., marks=defect("…")).
    for mark in list(marks):
        if getattr(mark, "name", "") == "parametrize" and len(mark.args) > 1:
            for param in mark.args[1]:
                marks.extend(getattr(param, "marks", ()))
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
        found = {
            c.test_name
            for c in cases_in(module)
            if c.defect is not None
            and not (isinstance(c.defect, Defect) and c.defect.docs_disagree)
        }
        found |= {
            n
            for n, v in vars(module).items()
            if n.startswith("test_") and callable(v) and _quarantined(v)
        }
        rel = f"{cases_dir.name}/{path.name}"
        for name in found:
            names |= {(rel, name), ("", name)}
    return names


def _reason(marker: object) -> str | None:
    kwargs = getattr(marker, "kwargs", {})
    args = getattr(marker, "args", ())
    reason = kwargs.get("reason", args[0] if args else None)
    return reason if isinstance(reason, str) else None


def e2e_tests(cases_dir: Path) -> dict[str, str | None]:
    """``<module stem>/<test name>`` → why it leaves no transcript (None: it must leave one).

    A quarantined defect (a strict xfail) leaves none: its run fails by design.
    An opt-out says ``@pytest.mark.no_transcript(reason=…)``.
    """
    out: dict[str, str | None] = {}
    for path in _modules(cases_dir):
        module = _load(path)
        for case in cases_in(module):
            held = case.defect
            disagree = isinstance(held, Defect) and held.docs_disagree
            why = "quarantined defect" if held is not None and not disagree else None
            if not case.snapshot:
                why = "Case(snapshot=False)"
            out[f"{path.stem}/{case.test_name}"] = why
        for name, value in vars(module).items():
            if not (name.startswith("test_") and callable(value)):
                continue
            why = None
            for marker in getattr(value, "pytestmark", []):
                if marker.name == "no_transcript":
                    why = _reason(marker) or "no_transcript"
                elif marker.name == "xfail" and marker.kwargs.get("strict"):
                    why = "quarantined defect"
            out[f"{path.stem}/{name}"] = why
    return out


def count(cases_dir: Path) -> tuple[int, int]:
    """(Case dataclasses, test functions) in ``cases_dir``; a parametrised function is one."""
    cases = functions = 0
    for path in _modules(cases_dir):
        module = _load(path)
        cases += sum(1 for _ in cases_in(module))
        functions += sum(
            1 for n, v in vars(module).items() if n.startswith("test_") and callable(v)
        )
    return cases, functions


if __name__ == "__main__":
    # python -m harness.catalog [cases]: how many e2e items are Case dataclasses.
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "cases")
    n_cases, n_functions = count(target)
    share = 100 * n_cases / max(1, n_cases + n_functions)
    print(f"{n_cases} Case dataclasses, {n_functions} test functions ({share:.0f}% Cases)")
