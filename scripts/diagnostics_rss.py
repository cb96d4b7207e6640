"""The daemon's peak RSS while an item names a huge (sparse) workspace file: the diagnostics must not
read it. Starts `checkpoint serve` over stdio, extracts one item whose session edited the file,
waits for its diagnostics on that file, and prints the daemon's VmHWM (Linux) and the time to publish.

    .venv/bin/python -m scripts.diagnostics_rss [--size-gb 4]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from checkpoint.server.protocol import CMD_NOW
from tests.support.lsp_support import Daemon, Transcript, server_env


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return -1


async def measure(size_gb: float) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        ws = root / "ws"
        ws.mkdir()
        big = ws / "dump.log"
        with open(big, "wb") as fh:  # sparse: no disk used, reads return zeros
            fh.write(b"log line one\n")
            fh.truncate(int(size_gb * 1024**3))
        t = Transcript(root / "claude" / "projects", ws)
        t.write(t.user("Trim the dump"))
        t.write(t.assistant("We'll use marker-rss0 for the dump format because it is smaller.",
                            edits=[(big, "log line one", "log line one")]))
        env = server_env(root / "home", root / "db" / "checkpoint.db", [root / "claude" / "projects"])
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual"}})
        try:
            pid = daemon.client._server.pid  # type: ignore[union-attr]
            await daemon.command(CMD_NOW)
            started = time.monotonic()
            await daemon.wait_diagnostics(big.as_uri(), lambda d: len(d) >= 1, timeout=120)
            took = time.monotonic() - started
            print(f"file {size_gb:g} GiB (sparse); diagnostics published in {took:.2f} s; "
                  f"daemon peak RSS {peak_rss_kib(pid) / 1024:.0f} MiB")
            print("message:", daemon.record.diagnostics[-1][2][0].message)
        finally:
            await daemon.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-gb", type=float, default=4.0)
    asyncio.run(measure(parser.parse_args().size_gb))


if __name__ == "__main__":
    main()
