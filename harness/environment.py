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
started the child, registered in the cache directory before the first child
(:mod:`harness.session`), so a later run can tell whether the pytest that
started a process still lives (:mod:`harness.orphans`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .session import SESSION_VAR, process_start, register, session_token

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
    register()
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
    register()
    env.update(extra)
    return env
