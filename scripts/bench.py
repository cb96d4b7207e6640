"""Benchmark: ingest near the parse floor, cost that follows the new bytes, each figure side by side
with its baseline, measured in one run on this machine.

    .venv/bin/python -m scripts.bench [--quick] [--json PATH] [--repeat N] [--keep DIR]

Every corpus is generated here (deterministic, seeded, under a temporary directory that is removed
afterwards). Whatever depends on process start or memory runs in a fresh subprocess: wall time from
spawn to exit, peak RSS from that child's own rusage (os.wait4). Figures:

  seed cold scan        `checkpoint scan` of a seed-sized session (1,357 turns, ~1.31M characters)
                        into an empty database, against the floor: a process that imports orjson
                        and parses every line of the same file. Target: within 2.5x. Beside it, for
                        reference: the start alone, the least Python pipeline that stores the same
                        turns in SQLite, and the scan's phases timed in one process.
  real corpus           `checkpoint scan` of the real transcripts in ../shared/samples/real (both roots),
                        against ccusage (pinned, scripts/bench-tools; `claude session` and `codex
                        session`, --json --offline, over the same files) and the floor over the same
                        files, alternated. Targets: ratio to ccusage <= 1.0, to the floor <= 2.5.
                        Skipped, and said, where the corpus or Node is missing.
  100 MB / 1 GB scan    throughput and peak RSS of a cold scan of one big session (1 GB skipped
                        with --quick). Target: >= 50 MB/s for 100 MB, peak RSS < 200 MB for both
                        (the 1 GB throughput is shown, with no target).
  rescan after append   one turn appended, then `checkpoint scan`, for a 100 MB session against a
                        1 MB one. Target: ratio <= 1.2 (only the new bytes are read).
  warm start            over 2,000 ingested sessions: `checkpoint serve` until its first
                        `checkpoint/status` notification, when the daemon exists; and the CLI
                        proxy, warm `checkpoint scan` + `checkpoint status --json`. Baseline: a cold
                        scan that re-reads every file. Target: < 1 s. Also the daemon's CPU over a
                        minute in which nothing is written, once at rest (Linux). Target: <= 0.06 s.
  latency               an exchange appended to a workspace session, in a daemon over 2,000 other
                        sessions (all read), until `checkpoint/status` counts it and until its
                        diagnostic appears (scripts/bench_daemon.py), against the same daemon with
                        no other session. Targets: medians <= 100 ms and <= 150 ms.
  bytes sent / text     rendered chunk bytes an extractor receives over several checkpoints of a
                        growing session, per byte of turn text (the fixed system prompt is cached
                        and not counted), against re-sending the whole session at every
                        checkpoint. Target: <= 1.05.
  extraction wall       N chunks, c concurrent requests, an extractor that takes L seconds, against
                        ceil(N/c)*L. Target: ratio <= 1.2. Also through the Anthropic extractor and
                        the fake API server when both exist.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from checkpoint import config, pipeline, runner
from checkpoint.store import Store
from scripts.bench_corpus import (
    append_turn,
    seed_records,
    session_path,
    write_many,
    write_session,
)
from scripts.bench_extractors import Recorder, Sleeper, text_bytes
from scripts.bench_process import (
    CCUSAGE_VERSION,
    LspClient,
    Sample,
    checkpoint_cmd,
    cpu_seconds,
    floor_cmd,
    fresh_db,
    install_ccusage,
    median_of,
    run,
    scan_cmd,
    sum_of,
)
from scripts.bench_report import Figure, fmt, log, show
from scripts.bench_snippets import FAKE_API, LEAST_PIPELINE, SCAN_PHASES, STAT_FLOOR, TREE_FLOOR
from tests.support.status_deltas import SessionMirror

MB = 1_000_000

REPO = Path(__file__).resolve().parents[1]
IDLE_SETTLE_SECONDS = 5.0
REAL_CORPUS = Path(os.environ.get("CHECKPOINT_REAL_SAMPLES") or REPO.parent / "shared" / "samples" / "real")

# -- the figures ------------------------------------------------------------------------------------


class Bench:
    def __init__(self, work: Path, repeat: int) -> None:
        self.work = work
        self.repeat = repeat
        self.home = work / "home"
        self.home.mkdir()
        (work / "empty-config.toml").write_text("")  # not the user's config (a CHECKPOINT_CONFIG must exist)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "CHECKPOINT_CONFIG": str(work / "empty-config.toml"),
            "CHECKPOINT_EXTRACTOR": "heuristic",
            "LANG": "C.UTF-8",
        }
        if os.environ.get("PYTHONPATH"):  # to measure a checkout other than the installed one (a worktree)
            self.env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        self.figures: list[Figure] = []
        self.big: tuple[Path, Path] | None = None  # the 100 MB session's root and its database

    def add(self, figure: Figure) -> None:
        self.figures.append(figure)
        log(f"{figure.name}: {fmt(figure.ours)} {figure.unit} (baseline {fmt(figure.baseline)})")

    # seed ----------------------------------------------------------------------------------------

    def seed_cold_scan(self) -> None:
        root = self.work / "seed"
        session_id, lines = seed_records(seed=1)
        path = session_path(root, session_id, "/home/dev/seed")
        path.parent.mkdir(parents=True)
        path.write_bytes(b"".join(lines))
        run(floor_cmd(path), self.env)  # warm the page cache and the bytecode caches for both
        run(scan_cmd(fresh_db(self.work, "seed.db"), root / "claude" / "projects"), self.env)
        ours: list[Sample] = []
        floor: list[Sample] = []
        for _ in range(self.repeat):  # interleaved, so that both see the same machine
            floor.append(run(floor_cmd(path), self.env))
            ours.append(run(scan_cmd(fresh_db(self.work, "seed.db"), root / "claude" / "projects"), self.env))
        o, f = median_of(ours), median_of(floor)
        size = path.stat().st_size
        self.add(Figure(
            "seed cold scan (1,357 turns)", o.wall, f.wall, "s", "ratio <= 2.5", o.wall <= 2.5 * f.wall,
            note=f"{size / MB:.2f} MB file, {len(lines)} lines; median of {self.repeat}; floor = python + "
                 f"import orjson + orjson.loads of every line; CPU {o.cpu:.3f} s vs {f.cpu:.3f} s",
            extra={"bytes": size, "lines": len(lines), "ours_all": [s.wall for s in ours],
                   "floor_all": [s.wall for s in floor], "ours_rss_mb": o.rss_mb, "floor_rss_mb": f.rss_mb,
                   "ours_cpu": o.cpu, "floor_cpu": f.cpu},
        ))
        # Where the difference goes: starting the command (imports) against starting the floor.
        ours_start: list[Sample] = []
        floor_start: list[Sample] = []
        for _ in range(self.repeat):
            floor_start.append(run([sys.executable, "-c", "import orjson"], self.env))
            ours_start.append(run([sys.executable, "-c", "import checkpoint.cli"], self.env))
        os_, fs = median_of(ours_start), median_of(floor_start)
        self.add(Figure(
            "  of which start: import checkpoint.cli vs import orjson", os_.wall, fs.wall, "s", "-", None,
            note=f"CPU {os_.cpu:.3f} s vs {fs.cpu:.3f} s; beyond its start the seed scan takes {o.cpu - os_.cpu:.3f} s "
                 f"of CPU to read, parse, redact, store and chunk, the floor {f.cpu - fs.cpu:.3f} s to parse",
            extra={"ours_all": [s.wall for s in ours_start], "floor_all": [s.wall for s in floor_start]},
        ))
        self.seed_phases(root, path, f)

    def seed_phases(self, root: Path, path: Path, floor: Sample) -> None:
        """The seed scan against the least pipeline that stores the same turns, and its phases."""
        least = median_of([run([sys.executable, "-c", LEAST_PIPELINE, str(path), str(fresh_db(self.work, "least.db"))],
                               self.env) for _ in range(self.repeat)])
        self.add(Figure(
            "  least Python pipeline storing the same turns", least.wall, floor.wall, "s", "-", None,
            note="the floor's parse plus each turn's text into a table like ours, one transaction, the same PRAGMAs, "
                 "a clean close (no drop policies, redaction, cursors or chunks): what CPython and SQLite cost "
                 "before any of Checkpoint's own work",
        ))
        self.scan_phases("  seed scan in one process, by phase", [root / "claude" / "projects"], one_process=True)

    def scan_phases(self, name: str, roots: Sequence[Path], one_process: bool, note: str = "") -> None:
        """A cold scan with each phase timed in the process (scripts/bench_snippets.py's SCAN_PHASES)."""
        phases: list[dict[str, float]] = []
        flag = ["--one-process"] if one_process else []
        sources = [arg for root in roots for arg in ("--source", str(root))]
        for _ in range(self.repeat):
            sample = run([sys.executable, "-c", SCAN_PHASES, *flag, "scan", "--db",
                          str(fresh_db(self.work, "phases.db")), *sources], self.env, capture=True)
            phases.append(json.loads(sample.stdout))
        median = {k: statistics.median(p.get(k, 0.0) for p in phases) for k in phases[0]}
        other = median["scan"] - sum(median.get(k, 0.0) for k in ("parse", "redact", "store turns and chunks"))
        self.add(Figure(
            name, median["start (imports)"] + median["command"], None, "s", "-", None,
            note=", ".join(f"{k} {v * 1000:.0f} ms" for k, v in median.items() if k not in ("scan", "command"))
            + f", read and the rest of the scan {other * 1000:.0f} ms (median of {self.repeat}; without the"
            " interpreter's own start)" + note,
            extra={"phases_s": median},
        ))

    # real corpus ---------------------------------------------------------------------------------

    def real_corpus(self, corpus: Path) -> None:
        """A cold scan of the real transcripts against ccusage reading the same files, and the floor."""
        claude, codex = corpus / "claude", corpus / "codex"
        if not claude.is_dir() or not codex.is_dir():
            log(f"no real corpus at {corpus} (CHECKPOINT_REAL_SAMPLES names one): its figures are not measured")
            return
        ccusage = install_ccusage()
        # ccusage finds <CLAUDE_CONFIG_DIR>/projects and <CODEX_HOME>/sessions: links to the corpus's roots.
        homes = self.work / "ccusage"
        (homes / "claude").mkdir(parents=True)
        (homes / "codex").mkdir()
        (homes / "claude" / "projects").symlink_to(claude.resolve())
        (homes / "codex" / "sessions").symlink_to(codex.resolve())
        env = {**self.env, "HOME": str(homes)}
        runs: list[Callable[[], Sample]] = [
            lambda: run(scan_cmd(fresh_db(self.work, "real.db"), claude, codex), self.env),
            lambda: run([sys.executable, "-c", TREE_FLOOR, str(claude), str(codex)], self.env),
        ]
        if ccusage is not None:
            runs.append(lambda: sum_of(
                run([ccusage, "claude", "session", "--json", "--offline"],
                    {**env, "CLAUDE_CONFIG_DIR": str(homes / "claude")}),
                run([ccusage, "codex", "session", "--json", "--offline"], {**env, "CODEX_HOME": str(homes / "codex")})))
        for warm in runs:  # page cache and bytecode caches warm for all
            warm()
        samples: list[list[Sample]] = [[] for _ in runs]
        for _ in range(self.repeat):  # alternated, so that all see the same machine
            for taken, measure in zip(samples, runs, strict=True):
                taken.append(measure())
        ours, floor = median_of(samples[0]), median_of(samples[1])
        size = sum(p.stat().st_size for p in corpus.rglob("*.jsonl"))
        files = sum(1 for _ in corpus.rglob("*.jsonl"))
        detail = {"bytes": size, "files": files, "ours_all": [s.wall for s in samples[0]],
                  "floor_all": [s.wall for s in samples[1]], "ours_cpu": ours.cpu, "floor_cpu": floor.cpu}
        if ccusage is not None:
            theirs = median_of(samples[2])
            self.add(Figure(
                "real corpus cold scan vs ccusage", ours.wall, theirs.wall, "s", "ratio <= 1.0",
                ours.wall <= theirs.wall,
                note=f"{files} files, {size / MB:.1f} MB ({corpus}); ccusage {CCUSAGE_VERSION} `claude session` + "
                     f"`codex session` --json --offline over the same files; CPU {ours.cpu:.3f} s vs "
                     f"{theirs.cpu:.3f} s; median of {self.repeat}, alternated with the floor",
                extra={**detail, "ccusage_all": [s.wall for s in samples[2]], "ccusage_cpu": theirs.cpu},
            ))
        else:
            log("ccusage could not be installed (scripts/install-bench-tools.sh): measured against the floor only")
        self.add(Figure(
            "real corpus cold scan vs the floor", ours.wall, floor.wall, "s", "ratio <= 2.5",
            ours.wall <= 2.5 * floor.wall,
            note=f"floor = python + orjson.loads of every line of the same {files} files; "
                 f"CPU {ours.cpu:.3f} s vs {floor.cpu:.3f} s",
            extra=detail,
        ))
        # Where the time goes: the whole scan in one process, then as the CLI runs it (the read-ahead
        # child parses and redacts a share of the files: the parent's timers miss that share).
        self.scan_phases("  real corpus scan in one process, by phase", [claude, codex], one_process=True)
        self.scan_phases("  real corpus scan as the CLI runs it, by phase", [claude, codex], one_process=False,
                         note="; parse and redact: the parent's share only")

    # big -----------------------------------------------------------------------------------------

    def big_cold_scan(self, megabytes: int, seed: int, keep: bool) -> None:
        root = self.work / f"big{megabytes}"
        log(f"writing a {megabytes} MB session")
        path = write_session(root, megabytes * MB, seed)
        size = path.stat().st_size
        floor = run(floor_cmd(path), self.env)
        db = fresh_db(self.work, f"big{megabytes}.db")
        ours = run(scan_cmd(db, root / "claude" / "projects"), self.env)
        label = f"{megabytes // 1000} GB" if megabytes >= 1000 else f"{megabytes} MB"
        # The issue sets a throughput target for the ~100 MB session; for the 1 GB one, only memory.
        targeted = megabytes < 1000
        self.add(Figure(
            f"{label} cold scan throughput", size / MB / ours.wall, size / MB / floor.wall, "MB/s",
            ">= 50 MB/s" if targeted else "-", size / MB / ours.wall >= 50 if targeted else None,
            note=f"{size / MB:.0f} MB in {ours.wall:.2f} s, {ours.cpu:.2f} s of CPU "
                 f"(floor {floor.wall:.2f} s, {floor.cpu:.2f} s of CPU)",
            extra={"bytes": size, "ours_s": ours.wall, "floor_s": floor.wall, "ours_cpu": ours.cpu,
                   "floor_cpu": floor.cpu},
        ))
        self.add(Figure(
            f"{label} cold scan peak RSS", ours.rss_mb, floor.rss_mb, "MB", "< 200 MB", ours.rss_mb < 200,
        ))
        if keep:
            self.big = (root, db)
        else:
            shutil.rmtree(root)
            for suffix in ("", "-wal", "-shm"):
                Path(str(db) + suffix).unlink(missing_ok=True)

    # rescan --------------------------------------------------------------------------------------

    def rescan_after_append(self) -> None:
        assert self.big is not None, "needs the 100 MB session ingested"
        big_root, big_db = self.big
        small_root = self.work / "small1"
        small_path = write_session(small_root, 1 * MB, seed=11)
        small_db = fresh_db(self.work, "small1.db")
        run(scan_cmd(small_db, small_root / "claude" / "projects"), self.env)
        big_path = next((big_root / "claude" / "projects").rglob("*.jsonl"))
        rng = random.Random(5)
        big_times: list[float] = []
        small_times: list[float] = []
        for _ in range(self.repeat):
            for path, root, db, times in (
                (big_path, big_root, big_db, big_times),
                (small_path, small_root, small_db, small_times),
            ):
                append_turn(path, rng, path.stem)
                times.append(run(scan_cmd(db, root / "claude" / "projects"), self.env).wall)
        big, small = statistics.median(big_times), statistics.median(small_times)
        self.add(Figure(
            "rescan after 1 appended turn: 100 MB vs 1 MB session", big, small, "s", "ratio <= 1.2",
            big <= 1.2 * small,
            note=f"median of {self.repeat} appends each; "
                 f"{big_path.stat().st_size / MB:.0f} MB vs {small_path.stat().st_size / MB:.1f} MB",
            extra={"big_all": big_times, "small_all": small_times},
        ))

    # warm start ----------------------------------------------------------------------------------

    def warm_start(self, sessions: int) -> None:
        root = self.work / "many"
        log(f"writing {sessions} sessions")
        write_many(root, sessions, turns=20, chars=8_000, seed=21)
        projects = root / "claude" / "projects"
        db = fresh_db(self.work, "many.db")
        cold = run(scan_cmd(db, projects), self.env)
        stat_floor = median_of([run([sys.executable, "-c", STAT_FLOOR, str(projects)], self.env)
                                for _ in range(self.repeat)])
        scans: list[float] = []
        totals: list[float] = []
        for _ in range(self.repeat):
            scan = run(scan_cmd(db, projects), self.env)
            status = run([*checkpoint_cmd(), "status", "--json", "--db", str(db), "--source", str(projects)],
                         self.env, capture=True)
            counts = json.loads(status.stdout)
            scans.append(scan.wall)
            totals.append(scan.wall + status.wall)
        total = statistics.median(totals)
        starts = self.daemon_starts(db, projects)
        if starts:
            ready = statistics.median(starts)
            self.add(Figure(
                f"daemon ready over {sessions} ingested sessions", ready, cold.wall, "s", "< 1 s", ready < 1.0,
                note="spawn of `checkpoint serve` to its first checkpoint/status notification; "
                     "baseline: a cold scan that re-reads every file",
                extra={"all": starts},
            ))
            self.first_start(projects, counts)
            if Path("/proc/self/stat").exists():
                idle = 60.0
                cpu = self.daemon_idle_cpu(db, projects, idle)
                self.add(Figure(
                    f"daemon idle over {sessions} sessions: CPU per minute", cpu * 60 / idle, None, "s",
                    "<= 0.06 s", cpu * 60 / idle <= 0.06,
                    note=f"{100 * cpu / idle:.2f} % of one core over {idle:g} s with nothing written, from"
                         f" {IDLE_SETTLE_SECONDS:g} s after its first status: the watcher,"
                         " the backup stat-level rescan, the shared-database check",
                ))
        self.add(Figure(
            f"warm scan + status --json over {sessions} sessions", total, cold.wall, "s", "< 1 s", total < 1.0,
            note=f"CLI proxy for the daemon start; warm scan alone {statistics.median(scans):.3f} s; "
                 f"baseline: a cold scan that re-reads every file; a bare os.walk + stat of the same "
                 f"files takes {stat_floor.wall:.3f} s",
            extra={"scan_all": scans, "total_all": totals, "stat_floor_s": stat_floor.wall},
        ))

    def daemon_starts(self, db: Path, projects: Path) -> list[float]:
        """Start times of the daemon, when there is one (`checkpoint serve`); [] otherwise."""
        from checkpoint.cli.parser import build_parser

        if importlib.util.find_spec("checkpoint.server") is None or "serve" not in build_parser().format_help():
            log("no `checkpoint serve` yet: the daemon start is measured by its CLI proxy only")
            return []
        try:
            return [self.daemon_ready(db, projects) for _ in range(self.repeat)]
        except (TimeoutError, OSError, ValueError) as exc:
            log(f"the daemon did not report its status ({exc}): measured by its CLI proxy only")
            return []

    def daemon_ready(self, db: Path, projects: Path) -> float:
        """Seconds from spawn to the daemon's first checkpoint/status notification."""
        start = time.perf_counter()
        with self.daemon(db, projects):
            return time.perf_counter() - start

    def daemon_idle_cpu(self, db: Path, projects: Path, seconds: float) -> float:
        """CPU seconds a daemon at rest spends over `seconds` in which nothing is written (Linux: /proc).
        At rest: IDLE_SETTLE_SECONDS after its first status, when the start's own work (the rest of the
        history's stat-level scan, the first statuses) is done: that is the start's cost, not rest."""
        with self.daemon(db, projects) as (proc, client):
            with contextlib.suppress(TimeoutError):
                client.wait_for(lambda m: False, timeout=IDLE_SETTLE_SECONDS)
            before = cpu_seconds(proc.pid)
            with contextlib.suppress(TimeoutError):
                client.wait_for(lambda m: False, timeout=seconds)  # reads (and drops) what it sends
            return cpu_seconds(proc.pid) - before

    def daemon_latency(self, sessions: int, runs: int) -> None:
        """An appended exchange until `checkpoint/status` counts it and until its diagnostic shows, in a
        real daemon over a real LSP client (scripts/bench_daemon.py), with `sessions` others in the
        roots against none, once all are read."""
        from scripts import bench_daemon  # pytest-lsp and the daemon's own client, only for this part

        ours = asyncio.run(bench_daemon.bench(runs, sessions, None))
        alone = asyncio.run(bench_daemon.bench(runs, 0, None))
        for key, label, limit in (("status_ms", "checkpoint/status counts it", 100.0),
                                  ("diagnostics_ms", "its diagnostic appears", 150.0)):
            mine, base = ours[key], alone[key]
            self.add(Figure(
                f"appended turn over {sessions} sessions: {label} (median)", mine["median"], base["median"], "ms",
                f"<= {limit:g} ms", mine["median"] <= limit,
                note=f"{runs} appends, heuristic extractor, idleSeconds 0; p95 {mine['p95']:.0f} ms, max "
                     f"{mine['max']:.0f} ms; baseline: the same daemon with no other session"
                     f" (p95 {base['p95']:.0f} ms)",
                extra={"ours": mine, "alone": base},
            ))

    def first_start(self, projects: Path, counts: dict[str, Any]) -> None:
        """A daemon over the same sessions, none read yet, in a workspace that holds 1 project of 50
        (40 sessions, named to sort last): when its status counts the workspace's sessions, against
        when it counts the whole history."""
        workspace = "/home/dev/p9"
        mine = sum(s["turns"] for s in counts["sessions"] if s["cwd"] == workspace)
        db = fresh_db(self.work, "first.db")
        start = time.perf_counter()
        mirror = SessionMirror()  # a status carries the workspace sessions that changed (docs/protocol.md)

        def counts_workspace(m: dict[str, Any]) -> bool:
            if m.get("method") != "checkpoint/status" or not mirror.apply(m["params"]["workspace_sessions"]):
                return False
            return bool(sum(s["turns"] for s in mirror.sessions if s["cwd"] == workspace) == mine)

        with self.daemon(db, projects, folders=[workspace]) as (_, client):
            client.wait_for(counts_workspace, timeout=120)
            ours = time.perf_counter() - start
            client.wait_for(lambda m: m.get("method") == "checkpoint/status"
                            and m["params"]["totals"]["turns"] == counts["totals"]["turns"], timeout=300)
            everything = time.perf_counter() - start
        self.add(Figure(
            f"  first daemon start over {len(counts['sessions'])} sessions not read yet: the workspace's status",
            ours, everything, "s", "-", None,
            note=f"spawn to the first status that counts all {mine} turns of the workspace's 40 sessions, "
                 "whose project directory sorts last; baseline: spawn to the status that counts the whole "
                 f"history ({counts['totals']['turns']} turns)",
        ))

    @contextlib.contextmanager
    def daemon(
        self, db: Path, projects: Path, folders: Sequence[str] = ()
    ) -> Iterator[tuple[subprocess.Popen[bytes], LspClient]]:
        """`checkpoint serve` over stdio, from spawn until its first status; shut down on leaving."""
        env = {**self.env, "CHECKPOINT_DB": str(db), "CHECKPOINT_SOURCES": str(projects)}
        proc = subprocess.Popen([*checkpoint_cmd(), "serve"], env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert proc.stdin is not None and proc.stdout is not None
            client = LspClient(proc.stdin, proc.stdout)
            client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "processId": os.getpid(), "rootUri": None, "capabilities": {},
                "workspaceFolders": [{"uri": Path(f).as_uri(), "name": Path(f).name} for f in folders],
                "initializationOptions": {"db": str(db), "sources": [str(projects)], "scope": "all",
                                          "extraction": "manual"}}})
            client.wait_for(lambda m: m.get("id") == 1, timeout=30)
            client.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            client.wait_for(lambda m: m.get("method") == "checkpoint/status", timeout=30)
            yield proc, client
            client.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None})
            with contextlib.suppress(TimeoutError):
                client.wait_for(lambda m: m.get("id") == 2, timeout=5)
            client.send({"jsonrpc": "2.0", "method": "exit", "params": None})
            proc.wait(timeout=5)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    # bytes sent ----------------------------------------------------------------------------------

    def bytes_per_text_byte(self, checkpoints: int) -> None:
        root = self.work / "growing"
        session_id, lines = seed_records(seed=31)
        path = session_path(root, session_id, "/home/dev/seed")
        path.parent.mkdir(parents=True)
        settings = config.Settings(db=self.work / "growing.db", sources=[root / "claude" / "projects"])
        store = Store(settings.db)
        recorder = Recorder()
        naive = 0
        try:
            step = math.ceil(len(lines) / checkpoints)
            for k in range(checkpoints):
                with path.open("ab") as fh:
                    fh.write(b"".join(lines[k * step:(k + 1) * step]))
                pipeline.scan(store, settings)
                report = runner.extract_due(store, recorder, runner.RunOptions(concurrency=1))
                assert report.ok, report.failures
                naive += text_bytes(store, session_id)
            text = text_bytes(store, session_id)
        finally:
            store.close()
        ours = recorder.chunk_bytes / text
        assert recorder.turns == len(recorder.seen), "a turn was sent twice"
        self.add(Figure(
            f"bytes sent per byte of turn text ({checkpoints} checkpoints)", ours, naive / text, "x",
            "<= 1.05", ours <= 1.05,
            note=f"{recorder.chunk_bytes} bytes of rendered chunks in {recorder.calls} requests for {text} "
                 f"bytes of turn text, each turn sent once; {recorder.chunk_bytes - recorder.text_bytes} of them "
                 f"are turn headers and separators ({recorder.text_bytes / text:.3f} x without them); "
                 f"baseline: the whole session's text re-sent at every checkpoint",
            extra={"sent": recorder.chunk_bytes, "text": text, "naive": naive, "requests": recorder.calls,
                   "turn_text_sent": recorder.text_bytes, "turn_slices_sent": recorder.turns,
                   "distinct_turn_slices_sent": len(recorder.seen)},
        ))
        whole = recorder.request_bytes / text
        self.add(Figure(
            "  whole user message per byte of turn text", whole, naive / text, "x", "-", None,
            note=f"render_request as the Claude extractor sends it: the chunk plus the session line and "
                 f"up to 30 known items ({recorder.request_bytes - recorder.chunk_bytes} bytes in all), with "
                 f"the heuristic extractor's items as the known ones; the system prompt and schema are "
                 f"cached and not counted",
            extra={"request_bytes": recorder.request_bytes},
        ))

    # extraction ----------------------------------------------------------------------------------

    def extraction_wall(self, chunks: int, concurrency: int, latency: float) -> None:
        root = self.work / "extract"
        write_session(root, 2 * MB, seed=41)
        settings = config.Settings(db=self.work / "extract.db", sources=[root / "claude" / "projects"],
                                   chunk_tokens=2000)
        ideal = math.ceil(chunks / concurrency) * latency
        store = Store(settings.db)
        try:
            pipeline.scan(store, settings)
            assert store.due_count() >= 2 * chunks, "not enough chunks for two runs"
            start = time.perf_counter()
            report = runner.extract_due(store, Sleeper(latency), runner.RunOptions(
                runner.Budget(max_requests=chunks), concurrency=concurrency))
            wall = time.perf_counter() - start
            assert report.captured == chunks, report
            self.add(Figure(
                f"extraction of {chunks} chunks, {concurrency} concurrent, {latency * 1000:.0f} ms each",
                wall, ideal, "s", "ratio <= 1.2", wall <= 1.2 * ideal,
                note="in-process extractor that sleeps; baseline: ceil(N/c)*L",
            ))
            via_api = self.extraction_via_fake_api(store, chunks, concurrency, latency)
            if via_api is not None:
                self.add(Figure(
                    f"extraction via Anthropic extractor + fake API ({chunks} chunks, c={concurrency})",
                    via_api, ideal, "s", "ratio <= 1.2", via_api <= 1.2 * ideal,
                    note="the real extractor over HTTP to tests/support/fake_anthropic.py (a process of its "
                         "own) answering after L",
                ))
        finally:
            store.close()

    def extraction_via_fake_api(self, store: Store, chunks: int, concurrency: int, latency: float) -> float | None:
        """Through daemon/checkpoint/extract/anthropic.py and tests/support/fake_anthropic.py, when both
        exist and offer what this needs (a server with a latency knob); None otherwise."""
        if importlib.util.find_spec("checkpoint.extract.anthropic") is None:
            return None
        try:
            import anthropic

            from checkpoint.extract.anthropic import AnthropicExtractor
        except ImportError as exc:
            log(f"skipping extraction through the fake API: {exc}")
            return None
        settings = config.Settings(db=store.path, sources=[], chunk_tokens=2000)
        fake = subprocess.Popen([sys.executable, "-c", FAKE_API, str(latency)], cwd=REPO, env=self.env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert fake.stdin is not None and fake.stdout is not None
        try:
            base_url = fake.stdout.readline().strip()
            if not base_url:
                log("skipping extraction through the fake API: it did not start")
                return None
            client = anthropic.Anthropic(base_url=base_url, api_key="bench", max_retries=0, timeout=30)
            extractor = AnthropicExtractor(settings, client=client)
            start = time.perf_counter()
            report = runner.extract_due(store, extractor, runner.RunOptions(
                runner.Budget(max_requests=chunks), concurrency=concurrency))
            wall = time.perf_counter() - start
        except TypeError as exc:  # the extractor changed shape: say so, measure the rest
            log(f"skipping extraction through the fake API: {exc}")
            return None
        finally:
            fake.stdin.close()
            if fake.wait(timeout=30) != 0:
                raise RuntimeError(f"the fake API failed (exit {fake.returncode}): see its stderr above")
        if report.captured != chunks:
            log(f"extraction through the fake API captured {report.captured} of {chunks}: {report.failures[:3]}")
            return None
        return wall




PARTS = ("seed", "real", "big", "rescan", "gb", "warm", "latency", "bytes", "extract")


# -- main -------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="skip the 1 GB session")
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the figures as JSON")
    parser.add_argument("--repeat", type=int, default=7, help="runs per timed figure (median)")
    parser.add_argument("--sessions", type=int, default=2000, help="sessions for the warm start")
    parser.add_argument("--keep", type=Path, metavar="DIR", help="work here and keep the corpora")
    parser.add_argument("--real", type=Path, default=REAL_CORPUS, metavar="DIR",
                        help="the real corpus (claude/ and codex/ under it)")
    parser.add_argument("--only", help=f"comma-separated subset of: {', '.join(PARTS)}")
    args = parser.parse_args(argv)
    parts = set(args.only.split(",")) if args.only else set(PARTS)
    if args.quick:
        parts.discard("gb")

    started = time.perf_counter()
    load_before = os.getloadavg()
    work = Path(tempfile.mkdtemp(prefix="checkpoint-bench-")) if args.keep is None else args.keep
    work.mkdir(parents=True, exist_ok=True)
    bench = Bench(work, args.repeat)
    try:
        if "seed" in parts:
            bench.seed_cold_scan()
        if "real" in parts:
            bench.real_corpus(args.real)
        if "big" in parts or "rescan" in parts:
            bench.big_cold_scan(100, seed=3, keep="rescan" in parts)
        if "rescan" in parts:
            bench.rescan_after_append()
        if "gb" in parts:
            bench.big_cold_scan(1000, seed=4, keep=False)
        if "warm" in parts:
            bench.warm_start(args.sessions)
        if "latency" in parts:
            bench.daemon_latency(args.sessions, runs=20)
        if "bytes" in parts:
            bench.bytes_per_text_byte(checkpoints=8)
        if "extract" in parts:
            bench.extraction_wall(chunks=48, concurrency=8, latency=0.25)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    print()
    show(bench.figures, sys.stdout)
    failed = [f.name for f in bench.figures if f.ok is False]
    judged = [f for f in bench.figures if f.ok is not None]
    load_after = os.getloadavg()
    print(f"\n{len(judged) - len(failed)} of {len(judged)} figures with a target pass "
          f"({time.perf_counter() - started:.0f} s; python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after)")
    if args.json:
        args.json.write_text(json.dumps({
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
            "quick": args.quick,
            "load_average": {"before": load_before, "after": load_after},
            "figures": [asdict(f) for f in bench.figures],
        }, indent=2))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
