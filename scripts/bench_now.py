"""Benchmark: `checkpoint now` with nothing new to read, no API key and no Claude Code login (the
automatic choice ends offline), against the same with the extractor named (CHECKPOINT_EXTRACTOR=heuristic).

    .venv/bin/python -m scripts.bench_now [--runs 15]

A temp HOME holds one Claude Code session, read and extracted once before timing, so every timed run
finds nothing to do. The runs alternate (automatic, named, automatic, ...), each in a fresh process,
and the medians are compared. No `claude` runs: claude_command names a command that is not on PATH,
as on a machine without Claude Code. Target (issue 27): automatic / named <= 1.5. Prints figures,
asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
from pathlib import Path

from scripts.bench_process import Sample, checkpoint_cmd, run
from tests.support.cli_home import Home, claude_record, line
from tests.support.cli_run import cli_env

TARGET = 1.5


def _home(tmp: Path) -> dict[str, str]:
    """A temp HOME whose one session is already read and extracted; its environment has no credentials."""
    home = Home(tmp)
    home.path.write_bytes(b"".join(line(claude_record(n)) for n in range(1, 21)))
    env = cli_env(home.home, CHECKPOINT_CLAUDE_COMMAND="checkpoint-bench-no-claude")
    run([*checkpoint_cmd(), "now"], {**env, "CHECKPOINT_EXTRACTOR": "heuristic"})
    return env


def measure(runs: int) -> tuple[list[Sample], list[Sample]]:
    with tempfile.TemporaryDirectory(prefix="checkpoint-bench-now-") as tmp:
        env = _home(Path(tmp))
        named_env = {**env, "CHECKPOINT_EXTRACTOR": "heuristic"}
        automatic: list[Sample] = []
        named: list[Sample] = []
        for _ in range(runs):
            automatic.append(run([*checkpoint_cmd(), "now"], env, capture=True))
            named.append(run([*checkpoint_cmd(), "now"], named_env))
        said = automatic[-1].stdout
        assert "offline heuristic" in said and "Nothing new to extract." in said, said
    return automatic, named


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="runs of each, alternated (default 15)")
    args = parser.parse_args()
    automatic, named = measure(args.runs)
    auto_s = statistics.median(s.wall for s in automatic)
    named_s = statistics.median(s.wall for s in named)
    auto_mb = statistics.median(s.rss_mb for s in automatic)
    named_mb = statistics.median(s.rss_mb for s in named)
    ratio = auto_s / named_s
    print(f"`checkpoint now`, nothing new, median of {args.runs} alternated runs each (fresh processes):")
    print(f"  automatic choice (no key, no login): {auto_s:.3f} s, {auto_mb:.0f} MB peak RSS")
    print(f"  extractor named (heuristic):         {named_s:.3f} s, {named_mb:.0f} MB peak RSS")
    print(f"  ratio: {ratio:.2f}x (target <= {TARGET}x): {'met' if ratio <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()
