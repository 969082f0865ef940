"""The ``roomchat`` command embedded in a program (``roomchat._cli:main``, the
console script's entry point): called twice, then the program goes on with its
own Ctrl-C behaviour (issue 44, item 13)."""

import os
import subprocess
import sys
import textwrap

from conftest import Emulator

PROGRAM = textwrap.dedent(
    """
    import os, signal, sys, time
    from roomchat import _cli

    # The program's own Ctrl-C, whatever it inherited: a job a non-interactive shell
    # starts in the background begins with SIGINT ignored, and Python then installs
    # no handler of its own (this test failed so in a test command started that way).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for round in (1, 2):
        sys.argv = ["roomchat", "room-messages", "cli-r1", "--all", "--page-size", "10", "--output", "jsonl"]
        try:
            _cli.main()
        except SystemExit as e:
            assert e.code == 0, ("exit", e.code)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGINT)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            print("round", round, "KeyboardInterrupt", flush=True)
        else:
            sys.exit("round %d: no KeyboardInterrupt" % round)
    print("went on", flush=True)
    """
)


def test_the_program_keeps_its_ctrl_c_after_calling_the_command_line_twice(emu: Emulator) -> None:
    emu.room("cli-r1")
    emu.admin("POST", "/messages", {"roomId": "cli-r1", "count": 25})
    env = dict(
        os.environ,
        ROOMCHAT_BASE_URL=emu.base_url,
        ROOMCHAT_PRIVATE_KEY=emu.private_key,
        XDG_CONFIG_HOME=os.path.join(os.sep, "nonexistent-roomchat-config"),
        NO_PROXY="*",
    )
    if emu.ca_file is not None:
        env["SSL_CERT_FILE"] = emu.ca_file
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 0, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    lines = run.stdout.splitlines()
    assert lines.count("round 1 KeyboardInterrupt") == 1 and lines[-1] == "went on", run.stdout[-2000:]
    # Each call printed the room's 25 messages.
    assert sum(1 for line in lines if line.startswith("{")) == 50
