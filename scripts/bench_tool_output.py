"""Benchmark: input tokens sent to the model per session and per MB of transcript, with each tool
result kept whole and cut to its head (the setting `tool_output_chars`), and the items captured.

    .venv/bin/python -m scripts.bench_tool_output [--heads 0,500,1000,2000] [--corpus DIR ...]

For each corpus and each head: a fresh database, a scan, then `checkpoint now`'s extraction
(runner.capture, the `anthropic` extractor, the real SDK) against the fake Anthropic API, which counts
every request's input tokens (tests/support/fake_anthropic.py: ceil(chars / 3) per text segment). Also
the tool output left out (policy `tool_output`), the stored turn text, and the items captured. The
default corpora: the real samples (../shared/samples/real), the hold-out samples (../shared/samples/claude
and codex, tests/data/samples), and a synthetic corpus with long tool output whose planted markers
(tests/support/synth.py) must each be captured exactly once whatever the head. Prints figures, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.choose import choose_extractor
from checkpoint.sources.turn_text import TOOL_OUTPUT
from checkpoint.store import Store
from tests.support.fake_anthropic import FakeAnthropic, count_request_tokens
from tests.support.synth import dumps, write_corpus

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared" / "samples"


@dataclass
class Figures:
    sessions: int
    mb: float
    turn_chars: int
    left_out: int
    requests: int
    input_tokens: int
    items: int
    markers_once: str  # "every one once", "n missing, m repeated", or "" (no markers planted)


def _size_mb(roots: list[Path]) -> float:
    return sum(p.stat().st_size for r in roots for p in r.rglob("*") if p.is_file()) / 1e6


def with_tool_output(claude_root: Path, results: int = 12, chars: int = 6_000) -> None:
    """Long tool results appended to each synthetic Claude Code session (a Bash call and its output), so
    that the planted markers are captured from a corpus whose tool output is cut."""
    for path in claude_root.rglob("*.jsonl"):
        lines = path.read_bytes().splitlines()
        last = json.loads(lines[-1])
        parent = last["uuid"]
        added: list[dict[str, object]] = []
        for n in range(results):
            call, result = f"{parent[:8]}-call-{n}", f"{parent[:8]}-result-{n}"
            base = {k: last[k] for k in ("cwd", "sessionId", "version", "timestamp")}
            added.append({**base, "type": "assistant", "uuid": call, "parentUuid": parent, "message": {
                "id": f"msg_{call}", "role": "assistant", "type": "message", "content": [
                    {"type": "tool_use", "id": f"toolu_{call}", "name": "Bash", "input": {"command": "pytest -v"}}]}})
            output = "\n".join(f"tests/test_{k}.py::test_case_{k} PASSED" for k in range(chars // 40))
            block = {"type": "tool_result", "tool_use_id": f"toolu_{call}", "content": output}
            added.append({**base, "type": "user", "uuid": result, "parentUuid": call,
                          "message": {"role": "user", "content": [block]}})
            parent = result
        path.write_bytes(b"\n".join(lines) + b"\n" + b"".join(dumps(r) for r in added))


def measure(roots: list[Path], head: int, work: Path, markers: set[str]) -> Figures:
    work.mkdir(parents=True, exist_ok=True)
    db = work / f"head-{head}.db"
    settings = Settings(db=db, sources=roots, extractor="anthropic", tool_output_chars=head, max_attempts=1,
                        retry_delay=0, concurrency=2)
    with FakeAnthropic() as fake:
        os.environ.update(fake.env())
        store = Store(db)
        try:
            runner.capture(store, settings, choice=choose_extractor(settings),
                           scan=lambda s: pipeline.scan(store, s))
            sessions = store.session_counts()
            left_out = sum(s.dropped.get(TOOL_OUTPUT, {}).get("chars", 0) for s in sessions)
            statements = [item.statement for item in store.items()]
        finally:
            store.close()
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as read:  # a figure only: what the turns hold
            turn_chars = int(read.execute("SELECT coalesce(sum(length(text)), 0) FROM turns").fetchone()[0])
        requests = [r for r in fake.message_requests if r.body is not None and r.status == 200]
        tokens = sum(count_request_tokens(r.body) for r in requests if r.body is not None)
    said = Counter(m for text in statements for m in markers if m in text)
    missing = len(markers - set(said))
    repeated = sum(1 for n in said.values() if n > 1)
    once = "" if not markers else ("every one once" if not (missing or repeated)
                                   else f"{missing} missing, {repeated} repeated")
    return Figures(len(sessions), _size_mb(roots), turn_chars, left_out, len(requests), tokens,
                   len(statements), once)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heads", default="0,500,1000,2000", help="heads to measure, 0 = whole (default %(default)s)")
    parser.add_argument("--corpus", type=Path, action="append", help="a transcript folder (repeatable)")
    args = parser.parse_args()
    heads = [int(h) for h in args.heads.split(",")]
    with tempfile.TemporaryDirectory(prefix="checkpoint-bench-tool-output-") as tmp:
        work = Path(tmp)
        synth = write_corpus(work / "synth", sessions=6, turns=80, chars=40_000, seed=7, codex_share=0)
        with_tool_output(synth.claude_root)
        corpora: dict[str, tuple[list[Path], set[str]]] = (
            {str(c): ([c], set()) for c in args.corpus} if args.corpus else {
                "real (../shared/samples/real)": ([SHARED / "real"], set()),
                "hold-out (../shared/samples/claude, codex)": ([SHARED / "claude", SHARED / "codex"], set()),
                "tests/data/samples": ([REPO / "tests" / "data" / "samples"], set()),
                "synthetic, planted markers, long tool output": ([synth.claude_root, synth.codex_root],
                                               set().union(*synth.markers.values())),
            })
        for name, (roots, markers) in corpora.items():
            roots = [r for r in roots if r.exists()]
            if not roots:
                print(f"{name}: not found, skipped")
                continue
            print(f"{name}:")
            whole: Figures | None = None
            for head in heads:
                f = measure(roots, head, work / f"{len(name)}-{abs(hash(name))}", markers)
                whole = whole or f
                ratio = whole.input_tokens / f.input_tokens if f.input_tokens else float("nan")
                print(f"  head {head or 'none':>5}: {f.input_tokens:>10,} input tokens in {f.requests:>4} requests"
                      f" ({f.input_tokens / max(1, f.sessions):>9,.0f}/session, {f.input_tokens / f.mb:>9,.0f}/MB,"
                      f" {ratio:.2f}x fewer); stored turn text {f.turn_chars:>10,} chars, tool output left out"
                      f" {f.left_out:>10,} chars; {f.sessions} sessions, {f.mb:.1f} MB; {f.items} items"
                      f"{'; markers: ' + f.markers_once if f.markers_once else ''}")


if __name__ == "__main__":
    main()
