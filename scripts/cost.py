"""What one checkpoint run over a seed-sized session costs with Claude, computed from token counts.

The seed session (1,357 turns, ~1.31M characters of text, Claude Code format with its tool calls,
progress copies and compaction summaries) is generated with tests/support/synth.py, scanned into a
temporary database by the real pipeline, chunked at the configured budget, and every request is rendered
exactly as the Claude extractor sends it: the system prompt, the "already recorded" block (the
session's latest items, up to `known_items`), the transcript chunk. Its tokens are counted

- with --count-with-api: by the API's own count_tokens (needs ANTHROPIC_API_KEY; honours
  ANTHROPIC_BASE_URL, so it also runs against a local fake);
- otherwise locally, at the published characters per token of each tokenizer: 3.5 for Haiku 4.5 and
  Sonnet 4.5/4.6, 2.7 for the newer tokenizer (Claude 5.x, Opus 4.7+).

The answer is a short JSON list of items; its size is assumed at --output-ratio of the input (10 %;
5-15 % is the range shown). The system prompt is shorter than every model's minimum cacheable
length, so no caching is assumed. Prices are checkpoint.extract.model_windows.KNOWN_MODELS.

    python -m scripts.cost [--models M ...] [--chunk-tokens N] [--output-ratio R] [--count-with-api]
"""

from __future__ import annotations

import argparse
import random
import tempfile
from pathlib import Path

from checkpoint import pipeline
from checkpoint.config import CHUNK_TOKENS, Settings
from checkpoint.extract.answer_schema import SCHEMA
from checkpoint.extract.model_windows import model_facts
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.model import ItemKind, KnownItem
from checkpoint.store import Store
from tests.support import synth

SEED_TURNS, SEED_CHARS = 1357, 1_310_000
NEW_TOKENIZER = ("claude-haiku-5", "claude-sonnet-5", "claude-opus-5", "claude-opus-4-7", "claude-opus-4-8")
DEFAULT_MODELS = ["claude-haiku-4-5", "claude-sonnet-4-6", "claude-haiku-5-5", "claude-sonnet-5-5"]


def chars_per_token(model: str) -> float:
    return 2.7 if model.startswith(NEW_TOKENIZER) else 3.5


def seed_requests(root: Path, chunk_tokens: int, known_items: int) -> list[tuple[str, list[str]]]:
    """(system prompt, user text blocks) of every request one run sends for the seed session."""
    rng = random.Random(1357)
    session_id = "5eed0000-1357-4131-8000-00000000c0st"
    plan = synth.plan_session(rng, SEED_TURNS, SEED_CHARS, "/home/dev/seed")
    path = root / "claude" / "-home-dev-seed" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(synth.dumps(r) for r in synth.claude_lines(session_id, plan, "/home/dev/seed", rng)))
    settings = Settings(db=root / "cost.db", sources=[root / "claude"], chunk_tokens=chunk_tokens)
    store = Store(settings.db)
    try:
        pipeline.scan(store, settings)
        ids = [r[0] for r in store.conn.execute("SELECT id FROM chunks ORDER BY session_id, first_seq, char_start")]
        requests = []
        recorded: list[KnownItem] = []  # what a run has recorded by the time each chunk is sent
        for chunk_id in ids:
            chunk = store.chunk_input(chunk_id)
            chunk.known_items = recorded[-known_items:][::-1] if known_items else []
            requests.append((SYSTEM_PROMPT, render_request(chunk)))
            for turn in chunk.turns:
                for line in turn.text.splitlines():
                    if line.startswith("We'll use marker-"):
                        recorded.append(KnownItem(id=f"{len(recorded):012x}", kind=ItemKind.DECISION, statement=line))
        return requests
    finally:
        store.close()


def count_local(model: str, requests: list[tuple[str, list[str]]]) -> int:
    cpt = chars_per_token(model)
    return sum(round(len(system) / cpt) + sum(round(len(b) / cpt) for b in blocks) for system, blocks in requests)


def count_api(model: str, requests: list[tuple[str, list[str]]]) -> int:
    import anthropic

    client = anthropic.Anthropic(max_retries=4)
    total = 0
    for system, blocks in requests:
        total += client.messages.count_tokens(
            model=model, system=[{"type": "text", "text": system}],
            messages=[{"role": "user", "content": [{"type": "text", "text": b} for b in blocks]}],
            output_config={"format": {"type": "json_schema", "schema": SCHEMA}},
        ).input_tokens
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS)
    parser.add_argument("--chunk-tokens", type=int, default=CHUNK_TOKENS)
    parser.add_argument("--known-items", type=int, default=Settings.known_items)
    parser.add_argument("--output-ratio", type=float, default=0.10)
    parser.add_argument("--count-with-api", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        requests = seed_requests(Path(tmp), args.chunk_tokens, args.known_items)
    chars = sum(len(s) + sum(len(b) for b in blocks) for s, blocks in requests)
    how = "count_tokens" if args.count_with_api else "local chars/token"
    print(f"Seed session: {SEED_TURNS:,} turns, {SEED_CHARS:,} characters of text; chunk budget "
          f"{args.chunk_tokens:,} -> {len(requests)} requests carrying {chars:,} characters (prompt included).")
    print(f"Output assumed at {args.output_ratio:.0%} of input; tokens by {how}; no prompt caching.")
    print(f"{'model':<20} {'chars/tok':>9} {'input tok':>10} {'output tok':>10} {'$ in/out per MTok':>18} "
          f"{'cost':>8}  {'(5-15 % output)':>16}")
    for model in args.models:
        facts, known = model_facts(model)
        price = facts.price
        tokens = count_api(model, requests) if args.count_with_api else count_local(model, requests)
        output = round(tokens * args.output_ratio)
        cost = (tokens * price.input + output * price.output) / 1e6
        low = (tokens * price.input + tokens * 0.05 * price.output) / 1e6
        high = (tokens * price.input + tokens * 0.15 * price.output) / 1e6
        rates = f"{price.input:g} / {price.output:g}" + ("" if known else " (unknown)")
        cpt = "api" if args.count_with_api else f"{chars_per_token(model):g}"
        print(f"{model:<20} {cpt:>9} {tokens:>10,} {output:>10,} {rates:>18} {f'${cost:.2f}':>8}  "
              f"{f'${low:.2f}-${high:.2f}':>16}")


if __name__ == "__main__":
    main()
