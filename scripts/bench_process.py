"""How scripts/bench.py runs things: each command in a fresh process, timed from spawn to exit with the
child's own peak RSS and CPU (os.wait4), the commands it times, and just enough of an LSP client to
start `checkpoint serve` and hear from it."""

from __future__ import annotations

import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from scripts.bench_report import log
from scripts.bench_snippets import FLOOR


@dataclass
class Sample:
    wall: float  # seconds from spawn to exit
    rss_mb: float  # the child's own peak resident set
    cpu: float = 0.0  # the child's user + system CPU seconds (steadier than wall on a busy machine)
    stdout: str = ""


def run(cmd: Sequence[str], env: dict[str, str], capture: bool = False) -> Sample:
    """Run a command to completion in a fresh process: its wall time and its own peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(list(cmd), env=env, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.read().decode()[-2000:]}")
        cpu = usage.ru_utime + usage.ru_stime
        return Sample(wall, usage.ru_maxrss / 1024, cpu, out.read().decode() if capture else "")


CCUSAGE_VERSION = json.loads((Path(__file__).parent / "bench-tools" / "package.json").read_text())[
    "dependencies"]["ccusage"]


def install_ccusage() -> str | None:
    """The pinned ccusage launcher, installed by scripts/install-bench-tools.sh (cached); None without npm."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return None
    script = Path(__file__).parent / "install-bench-tools.sh"
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        log(f"install-bench-tools.sh failed: {done.stderr.strip()[-500:]}")
        return None
    launcher = Path(done.stdout.strip().splitlines()[-1]) / "ccusage"
    return str(launcher) if launcher.exists() else None


def sum_of(*samples: Sample) -> Sample:
    return Sample(sum(s.wall for s in samples), max(s.rss_mb for s in samples), sum(s.cpu for s in samples))


def checkpoint_cmd() -> list[str]:
    script = Path(sys.executable).parent / "checkpoint"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "checkpoint"]


def scan_cmd(db: Path, *roots: Path) -> list[str]:
    cmd = [*checkpoint_cmd(), "scan", "--db", str(db)]
    for root in roots:
        cmd += ["--source", str(root)]
    return cmd


def floor_cmd(path: Path) -> list[str]:
    return [sys.executable, "-c", FLOOR, str(path)]


def median_of(samples: Sequence[Sample]) -> Sample:
    return Sample(statistics.median(s.wall for s in samples), max(s.rss_mb for s in samples),
                  statistics.median(s.cpu for s in samples))


def fresh_db(directory: Path, name: str) -> Path:
    for suffix in ("", "-wal", "-shm"):
        Path(str(directory / name) + suffix).unlink(missing_ok=True)
    return directory / name

def cpu_seconds(pid: int) -> float:
    """User + system CPU of a running process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class LspClient:
    """Just enough JSON-RPC over stdio to start a language server and hear from it."""

    def __init__(self, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.stdin = stdin
        self.stdout = stdout
        self.buffer = b""

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.stdin.flush()

    def wait_for(self, match: Callable[[dict[str, Any]], bool], timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for message in self._messages(deadline):
            if match(message):
                return message
        raise TimeoutError("no matching message from the server")

    def _messages(self, deadline: float) -> Iterator[dict[str, Any]]:
        fd = self.stdout.fileno()
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = next(int(v) for k, _, v in (h.partition(b":") for h in head.split(b"\r\n"))
                              if k.strip().lower() == b"content-length")
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    yield json.loads(rest[:length])
                    continue
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return
            data = os.read(fd, 1 << 16)
            if not data:
                return
            self.buffer += data
