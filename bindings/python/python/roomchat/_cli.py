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
    """Runs ``roomchat`` on ``sys.argv[1:]`` and exits with its code.

    A program that calls it (and catches the ``SystemExit``) goes on with its
    own SIGINT handler: the command's changes to it end with the command.
    """
    # Python's SIGINT handler only sets a flag for Python code to act on, and
    # none runs while the command does: Ctrl-C would go unheard until the
    # command ended. With the default disposition, Ctrl-C ends the process as it
    # ends the native binary; a command that catches it (--all, export, import)
    # installs its own handler over this one for its duration.
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        code = _native.cli_main(sys.argv[1:])
    finally:
        # None: a handler not set from Python, which signal.signal cannot put back.
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    sys.exit(code)


if __name__ == "__main__":
    main()
