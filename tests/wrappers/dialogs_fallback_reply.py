#!/usr/bin/env python3
"""A broken contenox for demonstrations: an exhausted script gets a mock reply.

Breaks "Running past the end fails loudly … There is no fallback reply"
(scripted-test-backend.md): when `chat` dies on an exhausted script, this prints a
canned answer and exits 0, hiding the error. Everything else runs the real binary,
found at $REAL_CONTENOX.
"""

import os
import subprocess
import sys

REAL = os.environ["REAL_CONTENOX"]

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "chat":
        os.execv(REAL, [REAL, *args])
    done = subprocess.run([REAL, *args], capture_output=True, text=True)
    if done.returncode != 0 and "is exhausted" in done.stderr:
        sys.stdout.write("This is a mock response.\n")
        sys.stderr.write("Thinking...\n")
        sys.exit(0)
    sys.stdout.write(done.stdout)
    sys.stderr.write(done.stderr)
    sys.exit(done.returncode)
