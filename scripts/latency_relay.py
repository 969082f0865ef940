#!/usr/bin/env python3
"""A TCP relay that delays every chunk by a one-way latency with jitter, in both
directions: the test network's stand-in for `tc netem`, which this machine's
kernel lacks (no sch_netem). Order is kept per direction, as on a real link.

Loss: a relay that terminates TCP cannot drop a segment (its own TCP would
resend it at once), so a "lost" chunk (LOSS_PERCENT of them) arrives one
retransmission timeout late instead (200 ms, Linux's minimum RTO), holding the
chunks behind it, as a lost segment holds a real TCP stream.

usage: latency_relay.py LISTEN_HOST LISTEN_PORT TARGET_HOST TARGET_PORT DELAY_MS JITTER_MS [LOSS_PERCENT [STATS_PORT]]

With STATS_PORT, a connection to LISTEN_HOST:STATS_PORT is answered with one line,
the bytes relayed from the target to clients so far (what a benchmark reads as
"bytes on the wire"), and closed.

Prints "ready" on stdout once listening; runs until killed.
"""

import asyncio
import random
import sys


RETRANSMISSION_TIMEOUT = 0.2
# Bytes relayed from the target (the service) to clients.
bytes_to_clients = 0


async def pump(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    delay: float,
    jitter: float,
    loss: float,
    counted: bool = False,
) -> None:
    loop = asyncio.get_running_loop()
    queue: "asyncio.Queue[tuple[float, bytes]]" = asyncio.Queue()

    async def deliver() -> None:
        while True:
            due, chunk = await queue.get()
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if not chunk:
                writer.write_eof() if writer.can_write_eof() else writer.close()
                return
            writer.write(chunk)
            await writer.drain()
            if counted:
                global bytes_to_clients
                bytes_to_clients += len(chunk)

    sender = asyncio.create_task(deliver())
    last_due = 0.0
    try:
        while True:
            chunk = await reader.read(65536)
            # Each chunk leaves after the latency, never before the one ahead of it.
            due = loop.time() + delay + random.uniform(-jitter, jitter)
            if chunk and random.random() < loss:
                due += RETRANSMISSION_TIMEOUT
            last_due = max(last_due, due)
            await queue.put((last_due, chunk))
            if not chunk:
                break
        await sender
    except (ConnectionError, asyncio.CancelledError):
        sender.cancel()
    finally:
        if not writer.is_closing():
            writer.close()


async def main() -> None:
    listen_host, listen_port, target_host, target_port = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    delay, jitter = float(sys.argv[5]) / 1000, float(sys.argv[6]) / 1000
    loss = float(sys.argv[7]) / 100 if len(sys.argv) > 7 else 0.0

    async def handle(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection(target_host, target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            pump(client_reader, server_writer, delay, jitter, loss),
            pump(server_reader, client_writer, delay, jitter, loss, counted=True),
            return_exceptions=True,
        )

    async def stats(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(f"{bytes_to_clients}\n".encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, listen_host, listen_port)
    if len(sys.argv) > 8:
        await asyncio.start_server(stats, listen_host, int(sys.argv[8]))
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
