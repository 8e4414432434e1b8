"""Where the harness keeps its own files: the built binary per version, the session registry.

A value, read from the environment: ``CONTENOX_E2E_CACHE``, else
``$XDG_CACHE_HOME/contenox-e2e``, else ``~/.cache/contenox-e2e``. It sits at the
floor of the layers so that :mod:`harness.binary` (which builds into it),
:mod:`harness.session` (which registers runs in it) and :mod:`harness.guard`
(which refuses a ``--basetemp`` holding it) all read it without importing
each other.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where pinned releases are cached: ``CONTENOX_E2E_CACHE`` or the user cache dir."""
    env = os.environ if environ is None else environ
    if env.get("CONTENOX_E2E_CACHE"):
        return Path(env["CONTENOX_E2E_CACHE"]).expanduser()
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "contenox-e2e"
