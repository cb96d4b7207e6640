"""The cold scan of the real corpus measured in CPU time, for a machine loaded by other work, where
wall times say more about the other work than about the scan.

    .venv/bin/python -m scripts.bench_scan compare [--runs N] [--baseline REV]
    .venv/bin/python -m scripts.bench_scan readers [--runs N] [--readers N ...]

`compare`: `checkpoint scan` of ../shared/samples/real (CHECKPOINT_REAL_SAMPLES names another) into a
fresh database, in fresh processes, this checkout's daemon/ alternated with REV's (read with `git
archive` into a temporary directory, run through PYTHONPATH), one warm-up each; the medians of the
wall time and of the CPU time (user + system of the command and its read-ahead children, os.wait4).

`readers`: the same scan in this process with N reading children forced (read_ahead.cpus made to
say N + 1 cores; 1 is the two-core path), the CPU of this process before the first fork and after
it, and each child's own: what the scan would take on a machine with a core for each of them is
modelled as the CPU before the fork plus the longest of the processes after it (a lower bound: no
waiting between them counted). On two cores, the wall times it prints are those of N children
sharing them.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
REAL = Path(os.environ.get("CHECKPOINT_REAL_SAMPLES") or REPO.parent / "shared" / "samples" / "real")


def _env(home: Path, pythonpath: str | None) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "CHECKPOINT_CONFIG": str(home / "empty.toml"), "CHECKPOINT_EXTRACTOR": "heuristic"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return env


def _scan(db: Path, env: dict[str, str]) -> tuple[float, float]:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "checkpoint", "scan", "--db", str(db),
           "--source", str(REAL / "claude"), "--source", str(REAL / "codex")]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
    return wall, usage.ru_utime + usage.ru_stime


def compare(runs: int, baseline: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "empty.toml").write_text("")
        tree = work / "baseline"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", baseline, "daemon"], capture_output=True,
                                 check=True).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tree, filter="data")
        checkouts = {baseline: str(tree / "daemon"), "this checkout": str(REPO / "daemon")}
        taken: dict[str, list[tuple[float, float]]] = {name: [] for name in checkouts}
        for n in range(runs + 1):
            for name, path in checkouts.items():
                sample = _scan(work / "c.db", _env(work, path))
                if n:  # the first of each: bytecode and page caches warm
                    taken[name].append(sample)
        for name, samples in taken.items():
            print(f"{name}: wall {statistics.median(s[0] for s in samples):.3f} s, CPU "
                  f"{statistics.median(s[1] for s in samples):.3f} s (median of {runs}; CPU of each run: "
                  f"{', '.join(f'{s[1]:.3f}' for s in samples)})")
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs")


READERS_RUN = """
import json, os, resource, sys, time
from pathlib import Path
readers, log, db, *roots = sys.argv[1:]
began = time.process_time()
from checkpoint import cli, read_ahead
if int(readers) > 1:
    read_ahead.cpus = lambda: int(readers) + 1
    read_ahead.READER_BYTES = 1
fork_cpu = []
start = read_ahead._start
def timed_start(*args, **kwargs):
    if not fork_cpu:
        fork_cpu.append(time.process_time() - began)
    return start(*args, **kwargs)
read_ahead._start = timed_start
leave = os._exit
def leaving(code):
    usage = resource.getrusage(resource.RUSAGE_SELF)
    with open(log, "a") as fh:
        fh.write(f"{usage.ru_utime + usage.ru_stime}\\n")
    leave(code)
os._exit = leaving
out, sys.stdout = sys.stdout, open(os.devnull, "w")
cli.main(["scan", "--db", db, *[a for root in roots for a in ("--source", root)]])
cpu = time.process_time() - began
children = [float(x) for x in Path(log).read_text().split()] if Path(log).exists() else []
out.write(json.dumps({"cpu": cpu, "fork_cpu": fork_cpu[0] if fork_cpu else cpu, "children": children}))
out.flush()
"""


def readers(runs: int, counts: list[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "empty.toml").write_text("")
        env = _env(work, str(REPO / "daemon"))
        taken: dict[int, list[dict[str, Any]]] = {n: [] for n in counts}
        for run in range(runs + 1):
            for n in counts:
                log, db = work / "children.log", work / "c.db"
                for path in (log, db, Path(f"{db}-wal"), Path(f"{db}-shm")):
                    path.unlink(missing_ok=True)
                start = time.perf_counter()
                done = subprocess.run([sys.executable, "-c", READERS_RUN, str(n), str(log), str(db),
                                       str(REAL / "claude"), str(REAL / "codex")],
                                      env=env, capture_output=True, text=True, check=True)
                sample = {**json.loads(done.stdout), "wall": time.perf_counter() - start}
                if run:
                    taken[n].append(sample)
        for n, samples in taken.items():
            def median(key: Any, of: list[dict[str, Any]] = samples) -> float:
                return float(statistics.median(key(s) for s in of))
            model = median(lambda s: s["fork_cpu"] + max([s["cpu"] - s["fork_cpu"], *s["children"]]))
            print(f"{n} reading {'child' if n == 1 else 'children'}: modelled {model:.3f} s on {n + 1}+ cores; "
                  f"CPU before the fork {median(lambda s: s['fork_cpu']):.3f} s, this process after it "
                  f"{median(lambda s: s['cpu'] - s['fork_cpu']):.3f} s, the longest child "
                  f"{median(lambda s: max(s['children'] or [0.0])):.3f} s, all "
                  f"{median(lambda s: s['cpu'] + sum(s['children'])):.3f} s; wall here "
                  f"{median(lambda s: s['wall']):.3f} s (median of {runs})")
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} CPUs (cores this process may use: "
          f"{len(os.sched_getaffinity(0))}); without the interpreter's own start (~10 ms of CPU)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    one = sub.add_parser("compare", help="this checkout against a revision, alternated")
    one.add_argument("--runs", type=int, default=11)
    one.add_argument("--baseline", default="HEAD", help="a git revision (default HEAD)")
    two = sub.add_parser("readers", help="the scan with N reading children forced, modelled on enough cores")
    two.add_argument("--runs", type=int, default=5)
    two.add_argument("--readers", type=int, nargs="+", default=[1, 3, 5])
    args = parser.parse_args()
    if not (REAL / "claude").is_dir():
        raise SystemExit(f"no real corpus at {REAL} (CHECKPOINT_REAL_SAMPLES names one)")
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if args.what == "compare":
        compare(args.runs, args.baseline)
    else:
        readers(args.runs, args.readers)


if __name__ == "__main__":
    main()
