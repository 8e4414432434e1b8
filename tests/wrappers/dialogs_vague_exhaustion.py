#!/usr/bin/env python3
"""A broken contenox for demonstrations: the exhausted-script error loses its turn index.

`chat`'s stderr says "asked for a turn" instead of "asked for turn N", breaking "it
fails with the script and the turn index in the message" (scripted-test-backend.md,
Running past the end fails loudly). Everything else runs the real binary, found at
$REAL_CONTENOX.
"""

import os
import re
import subprocess
import sys

REAL = os.environ["REAL_CONTENOX"]

if __name__ == "__main__":
    args = sys.argv[1:]
    if not args or args[0] != "chat":
        os.execv(REAL, [REAL, *args])
    done = subprocess.run([REAL, *args], capture_output=True, text=True)
    sys.stdout.write(done.stdout)
    sys.stderr.write(re.sub(r"asked for turn \d+", "asked for a turn", done.stderr))
    sys.exit(done.returncode)
