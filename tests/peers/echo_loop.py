"""An interactive loop for the terminal tests: what beam does, in miniature.

Draws a status line, then for every line typed prints "echo: <line>" and
redraws the status line in place (cursor up + erase line), so only a terminal
emulator shows the final state correctly. "quit" exits 0; Ctrl-C prints
"interrupted" and exits 130; SIGHUP exits 129 after writing a marker file
(given as argv[1], if any). It refuses to start without a terminal.
"""

from __future__ import annotations

import signal
import sys


def main() -> None:
    if not sys.stdin.isatty():
        print("echo_loop needs a terminal", file=sys.stderr)
        sys.exit(2)
    marker = sys.argv[1] if len(sys.argv) > 1 else None

    def on_hup(signum: int, frame: object) -> None:
        if marker:
            with open(marker, "w") as out:
                out.write("hangup\n")
        sys.exit(129)

    signal.signal(signal.SIGHUP, on_hup)
    out = sys.stdout
    out.write("\x1b[1mwelcome to echo_loop\x1b[0m\r\n")
    out.write("status: waiting 0\r\n")
    out.flush()
    count = 0
    try:
        for line in sys.stdin:
            text = line.rstrip("\r\n")
            if text == "quit":
                out.write("bye\r\n")
                out.flush()
                return
            count += 1
            # Replace the status line with the echo, then redraw the status below.
            out.write(f"\x1b[1A\r\x1b[2Kecho: {text}\r\nstatus: waiting {count}\r\n")
            out.flush()
    except KeyboardInterrupt:
        out.write("interrupted\r\n")
        out.flush()
        sys.exit(130)


if __name__ == "__main__":
    main()
