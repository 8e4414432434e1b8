#!/usr/bin/env python3
"""A broken contenox for demonstrations: `chat` replies differ from run to run.

Breaks "every model turn … served by the next turn in that file — in order, byte for
byte, every time" (scripted-test-backend.md). Everything else runs the real binary,
found at $REAL_CONTENOX.
"""

import os
import subprocess
import sys
import time

REAL = os.environ["REAL_CONTENOX"]

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "chat":
        os.execv(REAL, [REAL, *args])
    done = subprocess.run([REAL, *args], capture_output=True, text=True)
    out = done.stdout
    if out.endswith("\n"):
        out = out[:-1] + f" (take {time.time_ns() % 1000})\n"
    sys.stdout.write(out)
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
