"""Benchmark of the `checkpoint/status` traffic: bytes per minute the daemon sends the editor while
one session keeps appending and many others sit in the database.

    .venv/bin/python -m scripts.bench_status [--sessions 2000] [--workspace-sessions 0] [--seconds 60]
        [--every 1.0] [--grow 1] [--scope all] [--outside] [--daemon-src DIR] [--json FILE]

A real daemon (`checkpoint serve` over stdio) watches a synthetic corpus of N sessions
(tests/support/synth.py) plus one workspace session; extraction is manual, so what changes is the
ingest. After the first catch-up (no status for QUIET seconds), one exchange is appended every
EVERY seconds for SECONDS seconds; every `checkpoint/status` notification received in that window
is counted by the size of its params as JSON (the frame's envelope adds some 60 bytes each). Issue
16 asks for the figure before and after the status is made lean. Not a timed test: prints figures,
asserts nothing.

A status that leaves sessions out (they are the `checkpoint/sessions` request's) is answered as the
VS Code side panel answers it while it is open: the full list is asked for again when the latest
status's `others_version` differs from the one seen when it was last asked for, at most every
REFETCH_S (once before the window, as the panel does when it opens). Those answers count too, in
the same bytes. With --outside the session that grows is outside the workspace, so that list changes.

--workspace-sessions N adds N sessions run in folders below the workspace folder (issue 32: every
status carried all of them in full); --grow K appends to K sessions (from a thread, on the clock)
instead of one. A status that sends them as a delta (`workspace_sessions`) is
applied to a copy as a client keeps it (tests/support/status_deltas.py); a gap in its versions costs
a `checkpoint/workspaceSessions` request, counted in the same bytes. The daemon's CPU time in the
window (user + system, /proc) is reported as a share of one core. --daemon-src DIR serves from
another checkout's daemon/ folder (the figure before a change; `git archive REV daemon | tar -x`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from checkpoint.server.protocol import CHECKPOINT_SESSIONS, CHECKPOINT_WORKSPACE_SESSIONS
from checkpoint.server.requests.items import plain
from tests.support import synth
from tests.support.lsp_support import Daemon, Transcript, server_env

QUIET = 3.0  # seconds without a status: the first catch-up is over
REFETCH_S = 10.0  # the panel's SESSIONS_REFETCH_MS (vscode-extension/src/tree.ts)
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


async def bench(sessions: int, seconds: float, every: float, scope: str, outside: bool = False,
                workspace_sessions: int = 0, daemon_src: Path | None = None, grow: int = 1) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        base = Path(tmp)
        corpus = synth.write_corpus(base / "t", sessions=sessions, turns=4, chars=400, seed=16)
        ws = base / "ws"
        ws.mkdir()
        inside = synth.write_corpus(base / "w", sessions=workspace_sessions, turns=4, chars=400, seed=32, under=ws)
        transcript = Transcript(corpus.claude_root, ws)
        transcript.write(transcript.user("Start the status benchmark."))
        # --outside: the sessions that grow are another project's (agents at work elsewhere)
        growing = [transcript] if not outside and grow == 1 else [
            Transcript(corpus.claude_root, (base / "elsewhere" if outside else ws) / f"grows{n}") for n in range(grow)]
        for other in growing:
            if other is not transcript:
                other.write(other.user("Start another."))
        roots = [corpus.claude_root, corpus.codex_root, inside.claude_root, inside.codex_root]
        served_from = {"PYTHONPATH": str(daemon_src.resolve())} if daemon_src else {}
        env = server_env(base / "home", base / "db" / "checkpoint.db", roots, **served_from)
        grown = sum(t.turns for t in growing if t is not transcript)
        expected = sum(inside.turns.values()) + transcript.turns + (0 if outside else grown) + (
            sum(corpus.turns.values()) + (grown if outside else 0) if scope == "all" else 0)
        started = time.monotonic()
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "scope": scope}})
        try:
            await daemon.wait_status(lambda s: s["totals"]["turns"] >= expected, timeout=900,
                                     what="the first catch-up")
            # Every turn is counted before the last of the catch-up (chunks, titles, what was left out
            # by policy) is stored: the window starts once no status came for QUIET seconds.
            while time.monotonic() - daemon.record.statuses[-1].at < QUIET and time.monotonic() - started < 900:
                await asyncio.sleep(0.5)
            ready = time.monotonic() - started
            mark = len(daemon.record.statuses)
            process = daemon.client._server
            assert process is not None

            async def sessions_list() -> str:
                answer = await daemon.client.protocol.send_request_async(CHECKPOINT_SESSIONS, {})
                return json.dumps(plain(answer), separators=(",", ":"))

            def leaves_out(status: dict[str, Any]) -> bool:
                return int(status.get("sessions_total", 0)) > len(status["sessions"])

            opening = daemon.record.statuses[-1].value
            asked_for = opening.get("others_version")
            first_list = len((await sessions_list()).encode()) if leaves_out(opening) else 0
            asked_at = time.monotonic()
            answers: list[str] = []
            gaps = daemon.record.gaps
            appends = [0]
            stop = threading.Event()

            def append() -> None:
                # A thread, on the clock: a slow client (this one parses in Python) must not slow the appends.
                while not stop.wait(every):
                    for transcript in growing:
                        transcript.write(transcript.user(f"Append {appends[0]}.")
                                         + transcript.assistant(f"Done {appends[0]}."))
                    appends[0] += 1

            cpu0, t0 = cpu_seconds(process.pid), time.monotonic()
            appender = threading.Thread(target=append, daemon=True)
            appender.start()
            while time.monotonic() - t0 < seconds:
                await asyncio.sleep(0.25)
                if daemon.record.gaps > gaps:  # a client's copy out of step asks for the whole list
                    gaps = daemon.record.gaps
                    answer = plain(await daemon.client.protocol.send_request_async(CHECKPOINT_WORKSPACE_SESSIONS, {}))
                    answers.append(json.dumps(answer, separators=(",", ":")))
                    daemon.record.mirror.reset(answer)
                latest = daemon.record.statuses[-1].value
                if leaves_out(latest) and latest.get("others_version") != asked_for \
                        and time.monotonic() - asked_at >= REFETCH_S:
                    asked_for, asked_at = latest.get("others_version"), time.monotonic()
                    answers.append(await sessions_list())
            stop.set()
            appender.join()
            appended = appends[0]
            window = time.monotonic() - t0
            cpu = cpu_seconds(process.pid) - cpu0
            sent = [json.dumps(s, separators=(",", ":")) for s in daemon.record.wire[mark:]]
            last = daemon.record.statuses[-1].value
        finally:
            try:
                await daemon.stop()
            except AssertionError as exc:  # a daemon still writing a backlog of statuses: the figures stand
                print(f"(after the window: {exc}; killed)")
    requested = sum(len(a.encode()) for a in answers)
    total = sum(len(s.encode()) for s in sent) + requested
    return {
        "sessions": sessions, "workspace_sessions": workspace_sessions, "scope": scope, "outside": outside,
        "seconds": round(window, 1), "appends": appended,
        "startup_to_caught_up_s": round(ready, 1), "notifications": len(sent),
        "notifications_per_second": round(len(sent) / window, 2),
        "bytes": total, "bytes_per_minute": round(total * 60 / window),
        "bytes_per_notification": round(total / max(1, len(sent))),
        "daemon_cpu_share": round(cpu / window, 3),
        "sessions_in_last": len(last.get("sessions", [])),
        "sessions_requests": len(answers), "sessions_request_bytes": requested, "gaps": gaps, "growing": grow,
        "first_sessions_list_bytes": first_list,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000, help="other sessions in the watched roots")
    parser.add_argument("--workspace-sessions", type=int, default=0,
                        help="sessions run in folders below the workspace folder")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the appends go on")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between appended exchanges")
    parser.add_argument("--scope", choices=["all", "workspace"], default="all")
    parser.add_argument("--outside", action="store_true",
                        help="the growing session is outside the workspace (the panel's list changes)")
    parser.add_argument("--grow", type=int, default=1, help="sessions appended to, each every EVERY seconds")
    parser.add_argument("--daemon-src", type=Path, help="serve from this daemon/ folder (another checkout)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = asyncio.run(bench(args.sessions, args.seconds, args.every, args.scope, args.outside,
                               args.workspace_sessions, args.daemon_src, args.grow))
    where = "outside" if args.outside else "inside"
    print(f"checkpoint/status, {result['sessions']} sessions + {result['workspace_sessions']} in the workspace,"
          f" scope {result['scope']}: {result['appends']} appends to each of {result['growing']} sessions {where}"
          f" the workspace"
          f" in {result['seconds']} s (caught up in {result['startup_to_caught_up_s']} s)")
    print(f"  {result['notifications']} notifications ({result['notifications_per_second']}/s),"
          f" {result['bytes']:,} bytes: {result['bytes_per_minute']:,} bytes/minute,"
          f" {result['bytes_per_notification']:,} per notification,"
          f" {result['sessions_in_last']} sessions in the last one;"
          f" daemon CPU {result['daemon_cpu_share']:.0%} of a core")
    print(f"  of which {result['sessions_requests']} {CHECKPOINT_SESSIONS} or {CHECKPOINT_WORKSPACE_SESSIONS}"
          f" answers ({result['gaps']} gaps),"
          f" {result['sessions_request_bytes']:,} bytes (the list the panel asks for when it opens:"
          f" {result['first_sessions_list_bytes']:,} bytes, not counted)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
