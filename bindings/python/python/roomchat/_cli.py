"""The ``roomchat`` command that ``pip install roomchat`` puts on the PATH.

It is the command line of the Rust crate ``roomchat-cli`` (the same entry point
as the binary of ``cargo install roomchat-cli``), run in this process by the
extension module with the GIL released; see that crate's README.
"""

import signal
import sys
import threading

from . import _native


def main() -> None:
    """Runs ``roomchat`` on ``sys.argv[1:]`` and exits with its code."""
    # Python's SIGINT handler only sets a flag for Python code to act on, and
    # none runs while the command does: Ctrl-C would go unheard until the
    # command ended. With the default disposition, Ctrl-C ends the process as it
    # ends the native binary; a command that catches it (a listing streamed with
    # --all prints where to resume) installs its own handler over this one.
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(_native.cli_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
