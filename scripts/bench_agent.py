"""Benchmark of the agent front ends over a database of 2,000 sessions (about 8,000 items in 50
workspaces), generated here under a temporary directory and captured by the offline extractor.

    .venv/bin/python -m scripts.bench_agent [--sessions N] [--repeat N] [--json PATH]

Figures (wall time, median of --repeat runs, each a fresh process as Claude Code starts it):

  floor                 `python -c pass` with the same interpreter: what any Python hook pays
  hook session-start    `checkpoint hook session-start` for a workspace with items (prints ~8,000
                        characters of context) and for one without. Target: well under 1 s.
  hook stop             `checkpoint hook stop` (asks for a capture, starts the detached worker once)
  mcp search / list     one `search_decisions` / `list_decisions` call over the SDK's stdio client to
                        a running `checkpoint mcp` (median and worst of --repeat calls), and the
                        server's start up to its first answer
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from checkpoint import cli

WORKSPACES = 50
TOPICS = ("SQLite", "orjson", "zstd", "asyncio", "pydantic", "httpx", "Postgres", "Redis", "tomllib", "pytest")
CHECKPOINT = Path(sys.executable).with_name("checkpoint")


def write_corpus(root: Path, base: Path, sessions: int) -> None:
    for s in range(sessions):
        cwd = base / f"project{s % WORKSPACES:02d}"
        session_id = f"bench-{s:05d}"
        env = {"sessionId": session_id, "cwd": str(cwd), "version": "2.1.328", "isSidechain": False}
        lines = []
        for i in range(4):
            topic = TOPICS[(s + i) % len(TOPICS)]
            text = (f"We'll use {topic} for part {i} of feature {s}, because it fits the load." if i % 2 == 0
                    else f"The service must never block on {topic} in request {s}-{i}.")
            ts = f"2026-11-{1 + s % 28:02d}T10:00:{i:02d}.000Z"
            lines.append({**env, "type": "user", "uuid": f"{session_id}-u{i}", "timestamp": ts,
                          "message": {"role": "user", "content": f"Go on with part {i}."}})
            lines.append({**env, "type": "assistant", "uuid": f"{session_id}-a{i}", "timestamp": ts,
                          "message": {"id": f"m-{session_id}-{i}", "role": "assistant", "model": "claude-haiku-4-5",
                                      "content": [{"type": "text", "text": text}]}})
        path = root / str(cwd).replace("/", "-") / f"{session_id}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def wall(cmd: Sequence[str], env: dict[str, str], stdin: bytes = b"", repeat: int = 10) -> tuple[list[float], float]:
    """Wall times of `repeat` runs, and their median CPU seconds (user + system, the children's rusage)."""
    times, cpu = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(cmd, input=stdin, env=env, capture_output=True, check=True, timeout=60)
        times.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, statistics.median(cpu)


async def mcp_latency(cwd: Path, env: dict[str, str], repeat: int) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(cwd), env=env)
    out: dict[str, list[float]] = {"start": [], "search": [], "list": []}
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        first = await session.call_tool("search_decisions", {"query": "sqlite", "workspace": "/"})
        out["start"].append(time.perf_counter() - started)
        assert not first.is_error, first.content
        for n in range(repeat):
            t = time.perf_counter()
            result = await session.call_tool("search_decisions",
                                             {"query": f"{TOPICS[n % len(TOPICS)]} part", "workspace": "/"})
            out["search"].append(time.perf_counter() - t)
            assert not result.is_error
            t = time.perf_counter()
            await session.call_tool("list_decisions", {})
            out["list"].append(time.perf_counter() - t)
    return out


def ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:7.1f} ms (worst {max(values) * 1000:6.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmp_name:
        tmp = Path(tmp_name)
        root, base, db = tmp / "projects", tmp / "ws", tmp / "data" / "checkpoint.db"
        for w in range(WORKSPACES):
            (base / f"project{w:02d}").mkdir(parents=True)
        (base / "nothing-here").mkdir()
        started = time.perf_counter()
        write_corpus(root, base, args.sessions)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            code = cli.main(["now", "--db", str(db), "--source", str(root), "--extractor", "heuristic"])
        assert code == 0
        print(f"corpus: {args.sessions} sessions in {WORKSPACES} workspaces, captured in "
              f"{time.perf_counter() - started:.1f} s", file=sys.stderr)
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / "cfg"),
               "CHECKPOINT_DB": str(db), "CHECKPOINT_SOURCES": str(root), "CHECKPOINT_EXTRACTOR": "heuristic"}

        def hook_input(cwd: Path, session: str = "bench-00000") -> bytes:
            return json.dumps({"session_id": session, "cwd": str(cwd), "hook_event_name": "SessionStart",
                               "source": "startup"}).encode()

        context = subprocess.run([str(CHECKPOINT), "hook", "session-start"], input=hook_input(base / "project07"),
                                 env=env, capture_output=True, check=True).stdout
        chars = len(json.loads(context)["hookSpecificOutput"]["additionalContext"])
        hook = [str(CHECKPOINT), "hook"]
        runs = {
            "floor": ([sys.executable, "-c", "pass"], b""),
            "hook session-start (items)": ([*hook, "session-start"], hook_input(base / "project07")),
            "hook session-start (none)": ([*hook, "session-start"], hook_input(base / "nothing-here")),
            "hook stop": ([*hook, "stop"], hook_input(base / "project07")),
        }
        figures: dict[str, Any] = {}
        cpu: dict[str, float] = {}
        for name, (cmd, stdin) in runs.items():
            figures[name], cpu[name] = wall(cmd, env, stdin, args.repeat)
        figures.update({f"mcp {k}": v for k, v in asyncio.run(mcp_latency(base / "project07", env,
                                                                          args.repeat * 3)).items()})
        time.sleep(1)  # let the detached capture worker of `hook stop` finish before the folder goes
    print(f"agent front ends over {args.sessions:,} sessions (context printed: {chars:,} characters)")
    for name, values in figures.items():
        spent = f"  cpu {cpu[name] * 1000:6.1f} ms" if name in cpu else ""
        print(f"  {name:<30} {ms(values)}{spent}")
    if args.json:
        args.json.write_text(json.dumps({k: {"median_s": statistics.median(v), "max_s": max(v)}
                                         for k, v in figures.items()}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
