"""Benchmark of the `checkpoint/status` traffic: bytes per minute the daemon sends the editor while
one session keeps appending and many others sit in the database.

    .venv/bin/python -m scripts.bench_status [--sessions 2000] [--seconds 60] [--every 1.0] [--scope all]

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
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from checkpoint.server.items import plain
from checkpoint.server.protocol import CHECKPOINT_SESSIONS
from tests.support import synth
from tests.support.lsp_support import Daemon, Transcript, server_env

QUIET = 3.0  # seconds without a status: the first catch-up is over
REFETCH_S = 10.0  # the panel's SESSIONS_REFETCH_MS (vscode-extension/src/tree.ts)


async def bench(sessions: int, seconds: float, every: float, scope: str, outside: bool = False) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-status-") as tmp:
        base = Path(tmp)
        corpus = synth.write_corpus(base / "t", sessions=sessions, turns=4, chars=400, seed=16)
        ws = base / "ws"
        ws.mkdir()
        transcript = Transcript(corpus.claude_root, ws)
        transcript.write(transcript.user("Start the status benchmark."))
        # --outside: the session that grows is another project's (an agent at work elsewhere)
        growing = Transcript(corpus.claude_root, base / "elsewhere") if outside else transcript
        if outside:
            growing.write(growing.user("Start elsewhere."))
        env = server_env(base / "home", base / "db" / "checkpoint.db", [corpus.claude_root, corpus.codex_root])
        expected = sum(corpus.turns.values()) + transcript.turns + (growing.turns if outside else 0) \
            if scope == "all" else transcript.turns
        started = time.monotonic()
        daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "scope": scope}})
        try:
            await daemon.wait_status(lambda s: s["totals"]["turns"] >= expected, timeout=600,
                                     what="the first catch-up")
            # Every turn is counted before the last of the catch-up (chunks, titles, what was left out
            # by policy) is stored: the window starts once no status came for QUIET seconds.
            while time.monotonic() - daemon.record.statuses[-1].at < QUIET and time.monotonic() - started < 600:
                await asyncio.sleep(0.5)
            ready = time.monotonic() - started
            mark = len(daemon.record.statuses)

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
            t0 = time.monotonic()
            appended = 0
            while time.monotonic() - t0 < seconds:
                growing.write(growing.user(f"Append {appended}.") + growing.assistant(f"Done {appended}."))
                appended += 1
                await asyncio.sleep(every)
                latest = daemon.record.statuses[-1].value
                if leaves_out(latest) and latest.get("others_version") != asked_for \
                        and time.monotonic() - asked_at >= REFETCH_S:
                    asked_for, asked_at = latest.get("others_version"), time.monotonic()
                    answers.append(await sessions_list())
            window = time.monotonic() - t0
            sent = [json.dumps(s.value, separators=(",", ":")) for s in daemon.record.statuses[mark:]]
            last = daemon.record.statuses[-1].value
        finally:
            await daemon.stop()
    requested = sum(len(a.encode()) for a in answers)
    total = sum(len(s.encode()) for s in sent) + requested
    return {
        "sessions": sessions, "scope": scope, "outside": outside, "seconds": round(window, 1), "appends": appended,
        "startup_to_caught_up_s": round(ready, 1), "notifications": len(sent),
        "bytes": total, "bytes_per_minute": round(total * 60 / window),
        "bytes_per_notification": round(total / max(1, len(sent))),
        "sessions_in_last": len(last.get("sessions", [])),
        "sessions_requests": len(answers), "sessions_request_bytes": requested,
        "first_sessions_list_bytes": first_list,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=2000, help="other sessions in the watched roots")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the appends go on")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between appended exchanges")
    parser.add_argument("--scope", choices=["all", "workspace"], default="all")
    parser.add_argument("--outside", action="store_true",
                        help="the growing session is outside the workspace (the panel's list changes)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    result = asyncio.run(bench(args.sessions, args.seconds, args.every, args.scope, args.outside))
    where = "outside" if args.outside else "inside"
    print(f"checkpoint/status, {result['sessions']} sessions, scope {result['scope']}: {result['appends']} appends"
          f" to a session {where} the workspace"
          f" in {result['seconds']} s (caught up in {result['startup_to_caught_up_s']} s)")
    print(f"  {result['notifications']} notifications, {result['bytes']:,} bytes:"
          f" {result['bytes_per_minute']:,} bytes/minute, {result['bytes_per_notification']:,} per notification,"
          f" {result['sessions_in_last']} sessions in the last one")
    print(f"  of which {result['sessions_requests']} {CHECKPOINT_SESSIONS} answers,"
          f" {result['sessions_request_bytes']:,} bytes (the list the panel asks for when it opens:"
          f" {result['first_sessions_list_bytes']:,} bytes, not counted)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
