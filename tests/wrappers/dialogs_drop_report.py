#!/usr/bin/env python3
"""A broken contenox for demonstrations: `run` drops the report from stdout.

Breaks the worked run's "stdout: scripted run reporting home"
(scripted-test-backend.md, A worked run): the first stdout line of `run` is lost.
Everything else runs the real binary, found at $REAL_CONTENOX.
"""

import os
import subprocess
import sys

REAL = os.environ["REAL_CONTENOX"]

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "run":
        os.execv(REAL, [REAL, *args])
    done = subprocess.run([REAL, *args], capture_output=True, text=True)
    sys.stdout.write("".join(done.stdout.splitlines(keepends=True)[1:]))
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
