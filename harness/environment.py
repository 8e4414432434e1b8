"""The environment of every child the harness starts: an allowlist, never a blocklist.

A blocklist of "secret-looking" names always misses one (``GH_TOKEN``,
``SSH_AUTH_SOCK``, ``NETRC``, ``KUBECONFIG``, ``DATABASE_URL`` all reached
contenox through the old one), and every ambient setting it lets through
(``EDITOR``, ``TMUX``, ``XDG_*``) is one more way a case depends on the machine
it runs on. So a child gets exactly:

- from the parent: ``PATH``, ``LANGUAGE`` and the locale variables
  (:data:`LOCALE_VARS`: ``LANG``, ``LC_ALL``, ``LC_CTYPE``, … by name, not ``LC_*``);
- pinned by the harness: ``HOME``, ``TMPDIR``, ``TERM``, ``TZ`` (``UTC``: a clock
  prints the same on every machine) and the session marker :data:`SESSION_VAR`.
  ``USER``, ``LOGNAME`` and ``HOSTNAME`` are never passed (nothing of who runs the
  suite or where reaches a transcript through the environment);
- what the case adds explicitly (``env=`` of a step or a command).

Go builds (:func:`go_env`) also get the variables Go itself reads to find its
caches, proxy and toolchain, and the real ``HOME`` (Go keeps its caches there).

The session marker is ``<pid>.<start time>.<random>`` of the process that
started the child, registered in the cache directory before the first child,
so a later run can tell whether the pytest that started a process still
lives (:mod:`harness.orphans`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "AMBIENT",
    "GO_VARS",
    "LOCALE_VARS",
    "PINNED_TERM",
    "PINNED_TZ",
    "SESSION_VAR",
    "child_env",
    "go_env",
    "process_start",
    "session_token",
]

# Every child carries this variable, so the plugin can find what the suite
# started and left running (even a process that left its group) by reading
# /proc/*/environ. Not CONTENOX_*: contenox reads those.
SESSION_VAR = "E2E_HARNESS_SESSION"

PINNED_TERM = "dumb"
# The machine's time zone must not show in a transcript (a date printed local).
PINNED_TZ = "UTC"

# Taken from the parent as they are: where programs are, how text is encoded,
# what time zone clocks print in. Nothing else of the parent's reaches a child.
# The locale variables POSIX names, and glibc's extra categories: exact names,
# never an LC_ prefix (LC_ADV_API_KEY is a secret, not a locale).
LOCALE_VARS = frozenset(
    {
        "LANG",
        "LC_ALL",
        "LC_CTYPE",
        "LC_COLLATE",
        "LC_MESSAGES",
        "LC_MONETARY",
        "LC_NUMERIC",
        "LC_TIME",
        "LC_ADDRESS",
        "LC_IDENTIFICATION",
        "LC_MEASUREMENT",
        "LC_NAME",
        "LC_PAPER",
        "LC_TELEPHONE",
    }
)
AMBIENT = frozenset({"PATH", "LANGUAGE", "TZ"}) | LOCALE_VARS

# What `go build` / `go install` read: caches, module proxy and checksum
# database, toolchain selection, and the proxies and CA bundle a download
# goes through. Exact names only (a "GO" prefix would let GOOGLE_* through).
GO_VARS = frozenset(
    {
        "HOME",
        "USER",
        "TMPDIR",
        "GOPATH",
        "GOROOT",
        "GOBIN",
        "GOCACHE",
        "GOMODCACHE",
        "GOENV",
        "GOFLAGS",
        "GOPROXY",
        "GOSUMDB",
        "GONOSUMDB",
        "GONOPROXY",
        "GOPRIVATE",
        "GOINSECURE",
        "GOTOOLCHAIN",
        "GOTMPDIR",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
    }
)


def process_start(pid: int, proc: str = "/proc") -> str | None:
    """The start time of ``pid`` in clock ticks since boot, or None if it is gone.

    With the pid it names a process uniquely: a recycled pid has a later start.
    A zombie is gone (it has exited; only its parent has not reaped it yet).
    """
    try:
        with open(f"{proc}/{pid}/stat", "rb") as f:
            stat = f.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    # fields[0] is field 3 of stat(5), the state; field 22 is the start time.
    if len(fields) <= 19 or fields[0] in ("Z", "X"):
        return None
    return fields[19]


def _new_token() -> str:
    pid = os.getpid()
    return f"{pid}.{process_start(pid) or '0'}.{uuid.uuid4().hex[:12]}"


# One token per pytest process (each xdist worker has its own), so a worker
# that finishes early never mistakes a busy neighbour's children for leftovers.
_SESSION_TOKEN = _new_token()


def session_token() -> str:
    """This process's marker value: what :data:`SESSION_VAR` holds in every child it starts."""
    return _SESSION_TOKEN


def _register() -> None:
    # Imported here: orphans needs binary.cache_dir, and binary needs this module.
    from .orphans import register

    register()


def _ambient(source: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in source.items() if k in AMBIENT}


def child_env(
    home: str | os.PathLike[str],
    tmp: str | os.PathLike[str],
    *,
    extra: Mapping[str, str] | None = None,
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allowlisted environment of a child: ambient locale and PATH, pinned HOME/TMPDIR/TERM/TZ.

    ``base`` is the parent environment to take PATH and the locale from
    (default ``os.environ``); ``extra`` is what the caller sets explicitly,
    applied last. ``LANG`` defaults to ``C.UTF-8`` so contenox's output does
    not depend on the machine's locale.
    """
    env = _ambient(os.environ if base is None else base)
    env.setdefault("LANG", "C.UTF-8")
    env["HOME"] = os.fspath(home)
    env["TMPDIR"] = os.fspath(tmp)
    env["TERM"] = PINNED_TERM
    env["TZ"] = PINNED_TZ
    env[SESSION_VAR] = session_token()
    _register()
    if extra:
        env.update(extra)
    return env


def go_env(base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a Go build: the allowlist plus what Go reads, ``CGO_ENABLED=0``."""
    source = os.environ if base is None else base
    env = _ambient(source)
    env.update({k: v for k, v in source.items() if k in GO_VARS})
    env.setdefault("HOME", str(Path.home()))
    env["CGO_ENABLED"] = "0"
    env[SESSION_VAR] = session_token()
    _register()
    env.update(extra)
    return env
