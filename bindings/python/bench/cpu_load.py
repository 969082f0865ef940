"""The loaded round of a benchmark: scripts/bench/cpu-load.sh (one busy-loop process per core,
at normal priority) runs as a child inside ``with cpu_load():``, and stops when the block ends,
raises, or this process ends (its stdin pipe closes)."""

from __future__ import annotations

import contextlib
import os
import pathlib
import subprocess
from typing import Iterator

SCRIPT = pathlib.Path(__file__).resolve().parents[3] / "scripts" / "bench" / "cpu-load.sh"

# One busy process per core.
PROCESSES = os.cpu_count() or 1
LABEL = f"loaded ({PROCESSES} busy processes)"


@contextlib.contextmanager
def cpu_load() -> Iterator[None]:
    load = subprocess.Popen(
        ["bash", str(SCRIPT), str(PROCESSES), "900"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert load.stdout is not None
        ready = load.stdout.readline()
        if not ready.startswith("cpu-load:"):
            raise RuntimeError(f"cpu-load.sh did not start: {ready!r}")
        yield
    finally:
        assert load.stdin is not None
        load.stdin.close()
        load.wait(timeout=30)
