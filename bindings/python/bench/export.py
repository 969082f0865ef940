"""A room's history export with ``Client.iter_room_messages``: messages/s and peak RSS.

One release emulator seeded with ``--messages`` messages (default 100,000) in one room;
each export runs in a fresh child process (so its peak RSS, ``ru_maxrss``, is its own),
reads every message's text, and reports messages/s, its RSS before the export and its
peak. Idle, then loaded (one busy-loop process per core beside it,
scripts/bench/cpu-load.sh, as in bench.py). Memory stays flat: one page (``--page-size``,
default 200) is held at a time, so the peak hardly moves from the RSS before. Figures, not
a test.

    python bench/export.py [--messages 100000] [--page-size 200] [--rounds 3] [--emulator PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from typing import Dict, List

import roomchat
from cpu_load import LABEL as LOADED, cpu_load
from roomchat.testing import Emulator

ROOM = "exportRoom"


def rss_mib() -> float:
    """This process's resident set now, in MiB (Linux)."""
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def export_once(base_url: str, key: str, page_size: int) -> Dict[str, float]:
    """The child's job: one export, timed."""
    with roomchat.Client(key, base_url=base_url, rate_limit=roomchat.RateLimit(requests=1_000_000, window=1.0)) as client:
        client.get_chat_room(ROOM)  # the connection made and the module warm
        before = rss_mib()
        started = time.perf_counter()
        count = 0
        chars = 0
        for message in client.iter_room_messages(ROOM, page_size=page_size):
            count += 1
            chars += len(message.message or "")
        took = time.perf_counter() - started
    # ru_maxrss: KiB on Linux.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"count": count, "seconds": took, "per_second": count / took, "rss_before": before, "peak_rss": peak}


def child(base_url: str, key: str, page_size: int) -> Dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--child", base_url, key, str(page_size)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: Dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def report(label: str, runs: List[Dict[str, float]], expected: int) -> None:
    assert all(r["count"] == expected for r in runs), [r["count"] for r in runs]
    rate = statistics.median(r["per_second"] for r in runs)
    seconds = statistics.median(r["seconds"] for r in runs)
    before = max(r["rss_before"] for r in runs)
    peak = max(r["peak_rss"] for r in runs)
    print(
        f"{label:<32} {rate:>10,.0f} messages/s  ({seconds:.2f} s for {expected:,})  "
        f"RSS before {before:.1f} MiB, peak {peak:.1f} MiB"
    )


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        print(json.dumps(export_once(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", pathlib.Path(__file__).resolve().parents[3] / "target"))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--page-size", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--emulator", default=str(target / "release" / "roomchat-emulator"))
    args = parser.parse_args()

    with Emulator(binary=args.emulator, rate_limit=(1_000_000_000, 60.0)) as emu:
        emu.create_room("Export", room_id=ROOM)
        seeded_at = time.perf_counter()
        emu.seed_messages(ROOM, args.messages)
        print(
            f"roomchat {roomchat.__version__}: export of {args.messages:,} messages, page size "
            f"{args.page_size} (seeded in {time.perf_counter() - seeded_at:.2f} s), {args.rounds} rounds"
        )
        report("idle", [child(emu.base_url, emu.private_key, args.page_size) for _ in range(args.rounds)], args.messages)
        with cpu_load():
            runs = [child(emu.base_url, emu.private_key, args.page_size) for _ in range(args.rounds)]
        report(LOADED, runs, args.messages)


if __name__ == "__main__":
    main()
