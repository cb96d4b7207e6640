"""The cold scan under several builds of the same source (issue 31): interpreted, mypyc-compiled, and a
raw-decoding comparison of orjson against msgspec. Reproduces the figures of the issue's report.

    .venv/bin/python -m scripts.bench_compiled --compile /tmp/cp-leaf            # a compiled copy (~1.5 min)
    .venv/bin/python -m scripts.bench_compiled --compile /tmp/cp-wide --wide     # also pipeline, read_ahead
    .venv/bin/python -m scripts.bench_compiled --compile /tmp/cp-py --modules '' # the same copy, interpreted
    .venv/bin/python -m scripts.bench_compiled --build interpreted=/tmp/cp-py --build leaf=/tmp/cp-leaf \
        --build wide=/tmp/cp-wide
    .venv/bin/python -m scripts.bench_compiled --decode      # orjson vs msgspec per MB (msgspec installed)

Each build is a directory put first on PYTHONPATH (it holds the `checkpoint` package); the runs are
alternated (one of each build in turn), each with a fresh database and an empty HOME, so that all see
the same machine. CPU is the scan's user + system time with its read-ahead child (os.wait4), steadier
than wall time on a shared machine. Every build's database must hold the same turns: checked.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scripts.bench_process import fresh_db, run
from scripts.bench_snippets import SCAN_PHASES

REPO = Path(__file__).resolve().parent.parent
REAL = Path(os.environ.get("CHECKPOINT_REAL_SAMPLES") or REPO.parent / "shared" / "samples" / "real")
SAMPLES = REPO / "tests" / "data" / "samples"
MB = 1 << 20
# What mypyc compiles as they are (with the one rewrite below); others it refuses or breaks: sources/base.py
# (a compiled Protocol is no longer one to `@runtime_checkable`, and a surrogate in a str literal is
# refused), store/ingest.py (Store, interpreted, cannot inherit a compiled mixin).
LEAF_MODULES = ("sources/claude_code.py", "sources/codex.py", "sources/tailer.py", "sources/turn_text.py",
                "sources/edits.py", "chunker.py", "redact/engine.py", "redact/gate.py")
WIDE_MODULES = (*LEAF_MODULES, "pipeline.py", "read_ahead.py")
MYPY_INI = "[mypy]\npython_version = 3.11\nstrict = True\n[mypy-re2]\nignore_missing_imports = True\n"


def compile_copy(out: Path, modules: Sequence[str]) -> None:
    """daemon/checkpoint copied to `out`, these modules compiled there by mypyc (a .so beside each .py,
    found first on import). mypyc compiles `functools.cached_property` as a plain property, computed at
    every access: Redactor._gate (the RE2 set) is rewritten as an explicit lazy attribute in the copy,
    or redaction is 30x slower."""
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(REPO / "daemon" / "checkpoint", out / "checkpoint",
                    ignore=shutil.ignore_patterns("__pycache__"))
    engine = out / "checkpoint" / "redact" / "engine.py"
    text = engine.read_text()
    cached = ("    @cached_property\n    def _gate(self) -> Gate:\n"
              "        return Gate(self._whole, self._triggered, self._named)\n")
    lazy = ("    @property\n    def _gate(self) -> Gate:\n        if self._gate_built is None:\n"
            "            self._gate_built = Gate(self._whole, self._triggered, self._named)\n"
            "        return self._gate_built\n")
    if cached not in text:
        raise SystemExit(f"{engine}: Redactor._gate changed; update compile_copy's rewrite")
    text = text.replace(cached, lazy).replace("self._every = Plan(", "self._gate_built: Gate | None = None\n"
                                              "        self._every = Plan(")
    engine.write_text(text.replace("import cached_property, lru_cache", "import lru_cache"))
    if modules:
        (out / "mypy.ini").write_text(MYPY_INI)
        mypyc = Path(sys.executable).parent / "mypyc"
        subprocess.run([str(mypyc), "--config-file", "mypy.ini", *(f"checkpoint/{m}" for m in modules)],
                       cwd=out, check=True, stdout=subprocess.DEVNULL)


@dataclass
class Build:
    label: str
    root: Path  # first on PYTHONPATH: holds checkpoint/
    cpu: list[float] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    phases: list[dict[str, float]] = field(default_factory=list)


def default_roots() -> list[Path]:
    roots = [SAMPLES / "claude", SAMPLES / "codex"]
    return [*roots, REAL / "claude", REAL / "codex"] if (REAL / "claude").is_dir() else roots


def build_env(build: Build, home: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(build.root), "HOME": str(home), "CHECKPOINT_SOURCES": ""}


def turns_digest(db: Path) -> str:
    """What the scan stored, as one hash: every turn's id, role, text and files, in id order."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT id, role, text, files FROM turns ORDER BY id").fetchall()
    return hashlib.sha256(repr(rows).encode()).hexdigest()[:16] + f" ({len(rows)} turns)"


def loaded_from(build: Build, env: dict[str, str]) -> str:
    """Where the build's reader module comes from (a .so when compiled): the build is the one run."""
    probe = "import checkpoint.sources.base as m, checkpoint.redact.engine as e; print(m.__file__, e.__file__)"
    return run([sys.executable, "-c", probe], env, capture=True).stdout.strip()


def scan_runs(builds: Sequence[Build], roots: Sequence[Path], runs: int, phases: bool) -> None:
    sources = [arg for root in roots for arg in ("--source", str(root))]
    with tempfile.TemporaryDirectory(prefix="bench-compiled-") as tmp:
        work = Path(tmp)
        (work / "home").mkdir()
        digests = {}
        for build in builds:  # warm: page cache, bytecode; and what each build stores
            env = build_env(build, work / "home")
            print(f"{build.label}: {loaded_from(build, env)}", file=sys.stderr)
            db = fresh_db(work, "scan.db")
            run([sys.executable, "-m", "checkpoint", "scan", "--db", str(db), *sources], env)
            digests[build.label] = turns_digest(db)
        print(f"stored turns: {digests}", file=sys.stderr)
        if len(set(digests.values())) != 1:
            raise SystemExit("the builds stored different turns")
        for n in range(runs):
            for build in builds:
                env = build_env(build, work / "home")
                db = fresh_db(work, "scan.db")
                sample = run([sys.executable, "-m", "checkpoint", "scan", "--db", str(db), *sources], env)
                build.cpu.append(sample.cpu)
                build.wall.append(sample.wall)
                if phases:
                    db = fresh_db(work, "phases.db")
                    timed = run([sys.executable, "-c", SCAN_PHASES, "--one-process", "scan", "--db", str(db),
                                 *sources], env, capture=True)
                    build.phases.append(json.loads(timed.stdout))
            print(f"run {n + 1}/{runs}: " + ", ".join(f"{b.label} {b.cpu[-1]:.3f} s CPU" for b in builds),
                  file=sys.stderr)


def report(builds: Sequence[Build], roots: Sequence[Path]) -> dict[str, Any]:
    size = sum(p.stat().st_size for root in roots for p in root.rglob("*.jsonl"))
    print(f"\n`checkpoint scan` of {size / MB:.1f} MB ({len(roots)} roots), median of {len(builds[0].cpu)}, alternated")
    print("| build | CPU (s) | min CPU | wall (s) | parse | redact | store | imports |")
    print("|---|---|---|---|---|---|---|---|")
    base = statistics.median(builds[0].cpu)
    result: dict[str, Any] = {"bytes": size}
    for b in builds:
        cpu = statistics.median(b.cpu)
        phase = {k: statistics.median(p.get(k, 0.0) for p in b.phases) for k in b.phases[0]} if b.phases else {}
        cells = [f"{phase[k] * 1000:.0f} ms" if k in phase else "-"
                 for k in ("parse", "redact", "store turns and chunks", "start (imports)")]
        print(f"| {b.label} | {cpu:.3f} ({cpu / base - 1:+.0%}) | {min(b.cpu):.3f} | {statistics.median(b.wall):.3f} | "
              + " | ".join(cells) + " |")
        result[b.label] = {"cpu": b.cpu, "wall": b.wall, "phases": phase}
    return result


# -- decoding alone -------------------------------------------------------------------------------

def lines_of(roots: Sequence[Path]) -> list[bytes]:
    return [line for root in roots for p in sorted(root.rglob("*.jsonl")) for line in p.read_bytes().splitlines()
            if line.strip()]


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def decode_runs(roots: Sequence[Path], repeat: int) -> dict[str, float]:
    """orjson.loads against msgspec.json.decode of every line, raw and into a typed Claude record (the
    fields the Claude reader reads), in MB/s; best of `repeat` (the machine is shared)."""
    import orjson

    # Imported by name: msgspec is no dependency of the package (install it to measure: pip install msgspec).
    msgspec: Any = importlib.import_module("msgspec")
    optional = None
    # The fields of a Claude Code record the reader reads (claude_code.py), typed; the rest skipped.
    message = msgspec.defstruct("Message", [("id", str | None, optional), ("model", str | None, optional),
                                            ("content", str | list[Any] | None, optional)])
    record = msgspec.defstruct("ClaudeRecord", [
        ("type", str | None, optional), ("uuid", str | None, optional), ("session_id", str | None, optional),
        ("cwd", str | None, optional), ("timestamp", str | None, optional), ("agent_id", str | None, optional),
        ("is_meta", bool | None, optional), ("is_compact_summary", bool | None, optional),
        ("is_api_error_message", bool | None, optional), ("message", message | None, optional),
        ("tool_use_result", Any, optional), ("attachment", dict[str, Any] | None, optional),
        ("operation", str | None, optional), ("content", Any, optional),
    ], rename="camel")

    lines = lines_of(roots)
    claude = [line for line in lines if line.startswith(b'{"parentUuid"') or b'"sessionId"' in line[:400]]
    size, claude_size = sum(map(len, lines)) / MB, sum(map(len, claude)) / MB
    loads, raw = orjson.loads, msgspec.json.Decoder()
    typed = msgspec.json.Decoder(record)

    def each(decode: Callable[[bytes], object], chosen: list[bytes]) -> Callable[[], None]:
        def go() -> None:
            for line in chosen:
                try:
                    decode(line)
                except (orjson.JSONDecodeError, msgspec.DecodeError):  # one line of the real corpus
                    continue
        return go

    rates = {
        "orjson.loads, all lines": size / best_of(each(loads, lines), repeat),
        "msgspec decode, all lines": size / best_of(each(raw.decode, lines), repeat),
        "orjson.loads, Claude lines": claude_size / best_of(each(loads, claude), repeat),
        "msgspec decode, Claude lines": claude_size / best_of(each(raw.decode, claude), repeat),
        "msgspec into ClaudeRecord, Claude lines": claude_size / best_of(each(typed.decode, claude), repeat),
    }
    print(f"\ndecoding {size:.1f} MB ({len(lines)} lines; Claude {claude_size:.1f} MB, {len(claude)} lines), "
          f"best of {repeat}")
    print("| decoder | MB/s | ms per MB |")
    print("|---|---|---|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.0f} | {1000 / rate:.2f} |")
    return rates


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", action="append", default=[], metavar="LABEL=DIR",
                        help="a build to scan with: DIR holds checkpoint/ (repeat; the first is the baseline)")
    parser.add_argument("--source", action="append", type=Path, default=[], help="transcript root (repeat)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-phases", action="store_true", help="skip the one-process, per-phase runs")
    parser.add_argument("--decode", action="store_true", help="also time orjson against msgspec")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--compile", type=Path, metavar="DIR", help="build a copy to --build with, and stop")
    parser.add_argument("--wide", action="store_true", help="with --compile: also pipeline.py and read_ahead.py")
    parser.add_argument("--modules", help="with --compile: these modules (comma-separated, under checkpoint/)")
    args = parser.parse_args(argv)
    if args.compile:
        chosen = WIDE_MODULES if args.wide else LEAF_MODULES
        compile_copy(args.compile, chosen if args.modules is None else [m for m in args.modules.split(",") if m])
        return 0
    roots = args.source or default_roots()
    figures: dict[str, Any] = {}
    if args.build:
        builds = [Build(label, Path(root).resolve()) for label, root in (b.split("=", 1) for b in args.build)]
        scan_runs(builds, roots, args.runs, not args.no_phases)
        figures["scan"] = report(builds, roots)
    if args.decode:
        figures["decode_mb_s"] = decode_runs(roots, max(3, args.runs))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
