"""A process tree that ignores SIGTERM: a parent and a grandchild, both deaf to it.

    python tree.py PIDFILE

Writes "<parent pid> <child pid>" to PIDFILE once both are up, prints "ready",
and sleeps. Only SIGKILL (or SIGINT/SIGHUP, which are left at their defaults)
ends it. On SIGINT the parent prints "parent got SIGINT" and exits 3, so a
test can tell a delivered interrupt from a kill.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time


def main() -> None:
    pidfile = sys.argv[1]
    if len(sys.argv) > 2 and sys.argv[2] == "child":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def on_int(signum: int, frame: object) -> None:
        print("parent got SIGINT", flush=True)
        sys.exit(3)

    signal.signal(signal.SIGINT, on_int)
    child = subprocess.Popen([sys.executable, __file__, pidfile, "child"])
    with open(pidfile + ".tmp", "w") as out:
        out.write(f"{os.getpid()} {child.pid}\n")
    os.replace(pidfile + ".tmp", pidfile)
    print("ready", flush=True)
    print("tree stderr line", file=sys.stderr, flush=True)
    while True:
        time.sleep(1)


if __name__ == "__main__":
    main()
