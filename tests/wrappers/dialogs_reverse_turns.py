#!/usr/bin/env python3
"""A broken contenox for demonstrations: the dialog it is given is replayed backwards.

`backend add … --script <file>` reverses the turns in <file> before the real binary
reads it. Breaks "served by the next turn in that file — in order" and "a second
process starts at turn 1 again" (scripted-test-backend.md). Everything else runs the
real binary, found at $REAL_CONTENOX.
"""

import json
import os
import sys

REAL = os.environ["REAL_CONTENOX"]

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:2] == ["backend", "add"] and "--script" in args:
        path = args[args.index("--script") + 1]
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if isinstance(doc, list):
            doc.reverse()
        else:
            doc["turns"].reverse()
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
    os.execv(REAL, [REAL, *args])
