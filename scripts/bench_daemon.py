"""Benchmark of `checkpoint serve`: how soon an editor hears about a turn the agent just wrote.

    .venv/bin/python -m scripts.bench_daemon [--runs N] [--sessions K] [--fake-api LATENCY] [--json PATH]

A real daemon process is started over stdio on a temporary workspace, with K other sessions
(tests/support/synth.py) in the watched roots so that discovery has something to walk. Then, N times, one
exchange is appended to a watched Claude Code transcript: a prompt, and an answer planting a
decision ("We'll use marker-be<hex i> ...") with an Edit of a workspace file that also gets the
edited line. Measured from just before the write (monotonic clock, this process):

  status        until a `checkpoint/status` notification counts the new turns
  diagnostics   until `textDocument/publishDiagnostics` for the edited file carries the new decision
                (ingest, background extraction at idleSeconds 0, commit, diagnostics)

Extraction uses the offline heuristic extractor, or with --fake-api the Claude extractor against
the fake Messages API (tests/support/fake_anthropic.py) answering after LATENCY seconds, with the files of the chunk.
Figures: median, p95 and max. Not a timed test: print figures, assert nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tests.support import synth
from tests.support.lsp_support import Daemon, Transcript, server_env


def counted(turns: int) -> Callable[[dict[str, Any]], bool]:
    """A status predicate: the totals count at least `turns` turns."""
    return lambda status: bool(status["totals"]["turns"] >= turns)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


@contextlib.contextmanager
def fake_api(latency: float | None) -> Iterator[dict[str, str]]:
    if latency is None:
        yield {"CHECKPOINT_EXTRACTOR": "heuristic"}
        return
    from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, parse_turns, planted_decisions

    def responder(request: MessageRequest) -> list[dict[str, Any]]:
        """The fake's planted decisions, citing the files the chunk's turns changed, as a model
        told to take files from the turn headers would."""
        items = planted_decisions(request.prompt, same_as='"same_as"' in json.dumps(request.schema or {}))
        files = sorted({f for turn in parse_turns(request.prompt) for f in turn.files})
        return [{**item, "files": item["files"] or files} for item in items]

    with FakeAnthropic(latency=latency, responder=responder) as fake:
        yield {"CHECKPOINT_EXTRACTOR": "anthropic", **fake.env()}


async def bench(runs: int, sessions: int, latency: float | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-daemon-") as tmp:
        base = Path(tmp)
        corpus = synth.write_corpus(base / "t", sessions=sessions, turns=30, chars=8_000, seed=11)
        ws = base / "ws"
        (ws / "src").mkdir(parents=True)
        target = ws / "src" / "bench.py"
        target.write_text('"""Benchmark target."""\n')
        transcript = Transcript(corpus.claude_root, ws)
        transcript.write(transcript.user("Start the benchmark session."))
        with fake_api(latency) as extra:
            env = server_env(base / "home", base / "db" / "checkpoint.db", [corpus.claude_root, corpus.codex_root],
                             **extra)
            started = time.monotonic()
            daemon = await Daemon.start(env, [ws], {"checkpoint": {"idleSeconds": 0, "rescanSeconds": 15}})
            try:
                await daemon.wait_status(
                    lambda s: s["totals"]["turns"] >= transcript.turns and s["totals"]["pending"] == 0
                    and not s["running"], timeout=300, what="the first catch-up",
                )
                # Caught up also with the rest of the history, which is read after the workspace's
                # project: until then, an append waits for that scan.
                while (await daemon.sessions(scope="all", limit=1))["total"] <= sessions:
                    await asyncio.sleep(0.2)
                ready = time.monotonic() - started
                status_ms: list[float] = []
                diag_ms: list[float] = []
                uri = target.as_uri()
                for i in range(runs):
                    line = f"MARK_{i} = {i}  # placed by run {i}"
                    with target.open("a") as fh:
                        fh.write(line + "\n")
                    records = transcript.user(f"Run {i}: add the mark.") + transcript.assistant(
                        f"We'll use marker-be{i:06x} for the bench layer.", edits=[(target, "", line)])
                    expected = transcript.turns
                    mark = len(daemon.statuses)
                    marks = len(daemon.record.diagnostics)
                    t0 = time.monotonic()
                    transcript.write(records)
                    await daemon.wait_status(counted(expected), after=mark,
                                             timeout=30, what=f"run {i} counted")
                    seen = next(s.at for s in daemon.record.statuses[mark:] if s.value["totals"]["turns"] >= expected)
                    status_ms.append((seen - t0) * 1000)
                    wanted = f"marker-be{i:06x}"

                    def arrived(i: int = marks, wanted: str = wanted) -> float | None:
                        return next((at for at, u, diags in daemon.record.diagnostics[i:]
                                     if u == uri and any(wanted in d.message for d in diags)), None)

                    at = await daemon.wait_for(arrived, timeout=60, what=f"run {i} diagnostics")
                    diag_ms.append((at - t0) * 1000)
                    await asyncio.sleep(0.2)  # let the run settle: each append is measured alone
            finally:
                await daemon.stop()
    return {
        "runs": runs, "background_sessions": sessions,
        "extractor": "heuristic" if latency is None else f"anthropic (fake API, {latency * 1000:g} ms latency)",
        "startup_to_caught_up_s": round(ready, 3),
        "status_ms": summary(status_ms), "diagnostics_ms": summary(diag_ms),
    }


def summary(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "p95": round(percentile(values, 0.95), 1),
            "max": round(max(values), 1), "min": round(min(values), 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--sessions", type=int, default=200, help="other sessions in the watched roots")
    parser.add_argument("--fake-api", type=float, metavar="LATENCY", help="Claude extractor on the fake API")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = asyncio.run(bench(args.runs, args.sessions, args.fake_api))
    print(f"checkpoint serve, {result['runs']} appended exchanges, {result['background_sessions']} other sessions "
          f"watched, extractor: {result['extractor']}")
    print(f"  start until caught up:       {result['startup_to_caught_up_s']:.2f} s")
    for key, label in (("status_ms", "status counts the turn"), ("diagnostics_ms", "its diagnostic appears")):
        s = result[key]
        print(f"  {label + ':':<28} median {s['median']:7.1f} ms   p95 {s['p95']:7.1f} ms   max {s['max']:7.1f} ms")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
