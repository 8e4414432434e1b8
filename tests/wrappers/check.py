#!/usr/bin/env python3
"""Check the cases themselves: each wrapper breaks one promise, and its case must go red.

Every wrapper here runs the real contenox (``REAL_CONTENOX``) but breaks one
documented promise. Given as ``CONTENOX_BIN``, it must turn the case that
checks that promise red — a case that stays green against a broken binary
proves nothing. Run by ``tox -e wrappers``::

    python tests/wrappers/check.py            # every wrapper
    python tests/wrappers/check.py identity_  # those whose name starts so
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
IDENTITY = "cases/test_scripted_backend_identity.py"
DIALOGS = "cases/test_scripted_backend_dialogs.py"

# wrapper → (case file, -k expression of the cases that must fail)
WRAPPERS: dict[str, tuple[str, str]] = {
    "identity_drop_scripted_warning": (IDENTITY, "backend_add_prints_a_warning_line"),
    "identity_drop_doctor_warning": (IDENTITY, "doctor_warns_that_no_model_is_called"),
    "identity_disguise_backend_type": (IDENTITY, "backend_list_shows_scripted_test"),
    "identity_accept_missing_script": (IDENTITY, "refuses_a_script_file_that_does_not_exist"),
    "dialogs_jitter_replies": (DIALOGS, "byte_for_byte"),
    "dialogs_fallback_reply": (DIALOGS, "past_the_end"),
    "dialogs_reverse_turns": (DIALOGS, "second_process or bare_array or file_order"),
    "dialogs_drop_report": (DIALOGS, "worked_run"),
    "dialogs_vague_exhaustion": (DIALOGS, "naming_the_script_and_the_turn"),
}


def _real_binary() -> str:
    sys.path.insert(0, str(REPO))
    from harness import resolve_binary

    return str(resolve_binary().path)


def _launcher(scratch: Path, wrapper: str, real: str) -> Path:
    """A CONTENOX_BIN that runs ``wrapper`` with REAL_CONTENOX set.

    The harness gives contenox an allowlisted environment, so REAL_CONTENOX
    set around pytest would never reach the wrapper; the launcher carries it.
    """
    launcher = scratch / wrapper
    launcher.write_text(
        "#!/bin/sh\n"
        f"REAL_CONTENOX={shlex.quote(real)} exec {shlex.quote(sys.executable)} "
        f'{shlex.quote(str(HERE / f"{wrapper}.py"))} "$@"\n',
        encoding="utf-8",
    )
    launcher.chmod(0o755)
    return launcher


def main(argv: list[str]) -> int:
    prefix = argv[0] if argv else ""
    real = _real_binary()
    failures = []
    print(f"real contenox: {real}")
    scratch = Path(tempfile.mkdtemp(prefix="contenox-wrappers-"))
    for wrapper, (path, expr) in WRAPPERS.items():
        if not wrapper.startswith(prefix):
            continue
        env = dict(os.environ, CONTENOX_BIN=str(_launcher(scratch, wrapper, real)))
        done = subprocess.run(
            [sys.executable, "-m", "pytest", path, "-k", expr, "-q", "-p", "no:randomly"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        summary = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
        failed = re.search(r"(\d+) failed", summary)
        verdict = "red, as it must be" if failed and done.returncode != 0 else "STAYED GREEN"
        print(f"{wrapper:34} {path}::{expr}\n    {verdict}: {summary}")
        if not failed:
            failures.append(wrapper)
    if failures:
        print(f"these broken binaries went unnoticed by their cases: {failures}")
        return 1
    print("every broken binary turned its case red")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
