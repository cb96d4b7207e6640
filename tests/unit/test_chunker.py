"""The chunker: every turn in exactly one chunk, split turns covered exactly, every chunk within the
budget, and the open tail (pending, never sent) the only chunk that grows."""

from __future__ import annotations

import itertools
import json
import tempfile
from dataclasses import replace
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoint import pipeline
from checkpoint.chunker import MIN_CHUNK_TOKENS, PlannedChunk, TurnCost, estimate_tokens, plan, split_text
from checkpoint.config import Settings
from checkpoint.extract.prompt import render_chunk
from checkpoint.store import Store

# -- estimates ------------------------------------------------------------------------------------


def test_estimate_counts_utf8_bytes_conservatively() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcde") == 2
    assert estimate_tokens("abcdef") == 3
    assert estimate_tokens("é") == 1  # 2 bytes
    assert estimate_tokens("中文字") == 4  # 9 bytes
    assert estimate_tokens("🎉" * 5) == 8  # 20 bytes: more than one token per character


# -- plan: whole turns ----------------------------------------------------------------------------


def _texts(lengths: list[int]) -> dict[int, str]:
    return {seq: ("word " * (n // 5 + 1))[:n] for seq, n in enumerate(lengths, start=1)}


def _costs(texts: dict[int, str], header: int = 4) -> list[TurnCost]:
    return [TurnCost(seq, header + estimate_tokens(text), header) for seq, text in sorted(texts.items())]


def _check_cover(chunks: list[PlannedChunk], texts: dict[int, str], costs: dict[int, TurnCost], budget: int) -> None:
    """Chunks in order cover every turn once: whole runs of turns, or the parts of one turn, which
    cover its text exactly. Each chunk fits the budget and says what it costs."""
    budget = max(budget, MIN_CHUNK_TOKENS)
    expected_seq = min(texts) if texts else 1
    i = 0
    while i < len(chunks):
        ch = chunks[i]
        assert ch.first_seq == expected_seq, f"chunk {ch} leaves a gap or overlaps"
        assert ch.tokens <= budget, f"chunk {ch} exceeds {budget}"
        if not ch.is_part:
            assert ch.tokens == sum(costs[s].tokens for s in range(ch.first_seq, ch.last_seq + 1))
            assert all(costs[s].tokens <= budget for s in range(ch.first_seq, ch.last_seq + 1))
            expected_seq = ch.last_seq + 1
            i += 1
            continue
        parts = chunks[i : i + ch.parts]
        assert [p.part for p in parts] == list(range(1, ch.parts + 1))
        assert all((p.first_seq, p.last_seq, p.parts) == (ch.first_seq, ch.first_seq, ch.parts) for p in parts)
        text = texts[ch.first_seq]
        assert parts[0].char_start == 0 and parts[-1].char_end == len(text)
        assert all(a.char_end == b.char_start for a, b in itertools.pairwise(parts))
        assert "".join(text[p.char_start : p.char_end] for p in parts) == text
        assert costs[ch.first_seq].tokens > budget
        expected_seq = ch.first_seq + 1
        i += ch.parts
    assert expected_seq == (max(texts) + 1 if texts else 1), "a turn at the end is in no chunk"


def test_whole_turns_fill_chunks_in_order() -> None:
    texts = _texts([100, 200, 300, 50, 400, 10])
    costs = _costs(texts)
    grown, new = plan(costs, 300, texts.__getitem__)
    assert grown is None
    assert [(c.first_seq, c.last_seq, c.tokens) for c in new] == [(1, 4, 276), (5, 6, 172)]
    _check_cover(new, texts, {c.seq: c for c in costs}, 300)


def test_a_turn_larger_than_the_budget_is_split_into_parts_that_cover_it() -> None:
    texts = {1: "short", 2: "\n".join(f"line {i} " + "x" * 40 for i in range(200)), 3: "after"}
    costs = _costs(texts, header=10)
    grown, new = plan(costs, 300, texts.__getitem__)
    assert grown is None
    assert next((c.first_seq, c.is_part) for c in new) == (1, False)
    parts = [c for c in new if c.is_part]
    assert len(parts) > 1 and {c.first_seq for c in parts} == {2}
    # Cut at line ends where it can: every part but the last ends with a newline.
    assert all(texts[2][(c.char_end or 0) - 1] == "\n" for c in parts[:-1])
    assert all(c.tokens == 10 + estimate_tokens(texts[2][c.char_start : c.char_end]) for c in parts)
    assert (new[-1].first_seq, new[-1].is_part) == (3, False)  # the next turn starts afresh
    _check_cover(new, texts, {c.seq: c for c in costs}, 300)


def test_split_of_text_without_line_breaks_or_in_a_multibyte_script() -> None:
    for text in ("a" * 5000, "中文" * 1500, "🎉" * 900 + "x"):
        bounds = split_text(text, 200)
        assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
        assert all(estimate_tokens(text[a:b]) <= 200 and b > a for a, b in bounds)


# -- plan: the open tail --------------------------------------------------------------------------


def test_open_tail_grows_while_new_turns_fit() -> None:
    texts = _texts([100, 100, 100, 100, 400])
    costs = _costs(texts)
    _, first = plan(costs[:2], 300, texts.__getitem__)
    assert [(c.first_seq, c.last_seq, c.tokens) for c in first] == [(1, 2, 88)]
    grown, new = plan(costs[2:4], 300, texts.__getitem__, open_tail=first[0])
    assert grown == PlannedChunk(1, 4, 176) and new == []
    grown, new = plan(costs[4:], 300, texts.__getitem__, open_tail=grown)
    assert grown is None  # 176 + 164 does not fit: the tail stays as it is
    assert [(c.first_seq, c.last_seq, c.tokens) for c in new] == [(5, 5, 164)]


def test_a_tail_that_is_a_part_of_a_split_turn_never_grows() -> None:
    texts = {1: "x" * 2000, 2: "y" * 10}
    costs = _costs(texts)
    _, first = plan(costs[:1], 300, texts.__getitem__)
    assert first[-1].is_part
    grown, new = plan(costs[1:], 300, texts.__getitem__, open_tail=first[-1])
    assert grown is None and [(c.first_seq, c.last_seq) for c in new] == [(2, 2)]


# -- property: random turn sizes, arriving in batches, tails sometimes sent -------------------------


@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(min_value=0, max_value=4000), min_size=1, max_size=40),
    budget=st.integers(min_value=100, max_value=1500),
    header=st.integers(min_value=0, max_value=60),
    cuts=st.lists(st.integers(min_value=1, max_value=40), max_size=6),
    sent=st.lists(st.booleans(), min_size=7, max_size=7),
)
def test_property_every_turn_in_exactly_one_chunk(
    lengths: list[int], budget: int, header: int, cuts: list[int], sent: list[bool]
) -> None:
    texts = _texts(lengths)
    costs = _costs(texts, header)
    by_seq = {c.seq: c for c in costs}
    bounds = sorted({0, len(costs), *(c for c in cuts if c < len(costs))})
    chunks: list[PlannedChunk] = []
    tail_open = False  # the last chunk is pending and was never sent
    for batch, (a, b) in enumerate(itertools.pairwise(bounds)):
        open_tail = chunks[-1] if chunks and tail_open else None
        grown, new = plan(costs[a:b], budget, texts.__getitem__, open_tail)
        if grown is not None:
            assert open_tail is not None and (grown.first_seq, grown.char_start) == (open_tail.first_seq, 0)
            assert grown.last_seq > open_tail.last_seq and grown.tokens >= open_tail.tokens
            chunks[-1] = grown
        chunks.extend(new)
        tail_open = not sent[batch % len(sent)]
    _check_cover(chunks, texts, by_seq, budget)


@settings(max_examples=150, deadline=None)
@given(text=st.text(min_size=0, max_size=3000), max_tokens=st.integers(min_value=1, max_value=400))
def test_property_split_text_covers_exactly_within_the_budget(text: str, max_tokens: int) -> None:
    bounds = split_text(text, max_tokens)
    assert "".join(text[a:b] for a, b in bounds) == text
    assert bounds[0][0] == 0 and bounds[-1][1] == len(text)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    # Within the budget, unless a single character alone is larger.
    assert all(estimate_tokens(text[a:b]) <= max_tokens or b - a == 1 for a, b in bounds)


# -- in the store: chunks formed by scans -----------------------------------------------------------

SESSION = "22222222-2222-4222-8222-222222222222"


def _line(i: int, text: str) -> str:
    return json.dumps({"type": "user", "uuid": f"u{i}", "sessionId": SESSION, "cwd": "/w",
                       "timestamp": f"2026-01-05T10:00:{i % 60:02d}.000Z",
                       "message": {"role": "user", "content": text}})


class _Transcript:
    def __init__(self, root: Path) -> None:
        self.path = root / "-w" / f"{SESSION}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.n = 0

    def add(self, *texts: str) -> None:
        with self.path.open("a") as fh:
            for text in texts:
                self.n += 1
                fh.write(_line(self.n, text) + "\n")


def _chunks(store: Store) -> list[tuple[int, int, int, int, str]]:
    return store.conn.execute(
        "SELECT id, first_seq, last_seq, part, state FROM chunks ORDER BY first_seq, char_start").fetchall()


def _covered(store: Store) -> dict[str, list[str]]:
    """Per turn, the texts the chunks carry for it, in order."""
    out: dict[str, list[str]] = {}
    for (chunk_id,) in store.conn.execute("SELECT id FROM chunks ORDER BY first_seq, char_start"):
        for t in store.chunk_input(chunk_id).turns:
            out.setdefault(t.turn_id, []).append(t.text)
    return out


def _stored_texts(store: Store) -> dict[str, str]:
    return dict(store.conn.execute("SELECT id, text FROM turns"))


def test_store_open_tail_grows_until_sent_or_failed(roots: tuple[Path, Path], settings: Settings, store: Store) -> None:
    budget = 300
    conf = replace(settings, chunk_tokens=budget)
    transcript = _Transcript(roots[0])
    transcript.add("We'll use sqlite for the store.", "Agreed.")
    assert pipeline.scan(store, conf).chunks_created == 1
    [(tail_id, *_)] = _chunks(store)

    transcript.add("And WAL mode.")
    assert pipeline.scan(store, conf).chunks_created == 0  # joined the open tail
    assert _chunks(store) == [(tail_id, 1, 3, 1, "pending")]

    # Sent: the chunk is frozen; the next turn starts a new one.
    [claimed] = store.claim_chunks(1, "runner-1")
    assert claimed.chunk_id == tail_id and [t.turn_id for t in claimed.turns] == ["u1", "u2", "u3"]
    transcript.add("Keep the schema small.")
    assert pipeline.scan(store, conf).chunks_created == 1
    assert [c[1:] for c in _chunks(store)] == [(1, 3, 1, "sent"), (4, 4, 1, "pending")]

    # That new one is the open tail now; once failed, it is frozen too.
    transcript.add("Never trim a turn.")
    pipeline.scan(store, conf)
    [second] = store.claim_chunks(1, "runner-2")
    assert [t.turn_id for t in second.turns] == ["u4", "u5"]
    store.fail_chunk(second.chunk_id, "runner-2", "boom", lambda attempts: 0.0)
    transcript.add("Split instead.")
    assert pipeline.scan(store, conf).chunks_created == 1
    assert [c[1:] for c in _chunks(store)] == [(1, 3, 1, "sent"), (4, 5, 1, "failed"), (6, 6, 1, "pending")]
    texts = _stored_texts(store)
    assert _covered(store) == {tid: [text] for tid, text in texts.items()}


def _scan_batches(root: Path, conf: Settings, batches: list[list[str]], claim_after: list[bool]) -> Store:
    store = Store(root / "db" / "c.db")
    transcript = _Transcript(root / "claude")
    for batch, claim in zip(batches, claim_after, strict=False):
        transcript.add(*batch)
        pipeline.scan(store, conf)
        if claim:
            store.claim_chunks(1000, "runner")
    return store


def _turn_text(max_size: int) -> st.SearchStrategy[str]:
    # ESC starts a terminal escape, which readers strip by policy (terminal_escape, tested with the readers).
    return st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00\x1b"),
                   max_size=max_size).filter(lambda t: t.strip() != "" and t.strip() == t)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(st.lists(_turn_text(2500), min_size=1, max_size=6),
                     min_size=1, max_size=4),
    claim_after=st.lists(st.booleans(), min_size=4, max_size=4),
    budget=st.integers(min_value=MIN_CHUNK_TOKENS, max_value=900),
)
def test_property_store_every_turn_text_lands_once(
    batches: list[list[str]], claim_after: list[bool], budget: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        conf = Settings(db=root / "db" / "c.db", sources=[root / "claude"], chunk_tokens=budget)
        store = _scan_batches(root, conf, batches, claim_after)
        try:
            texts = _stored_texts(store)
            assert len(texts) == sum(len(b) for b in batches)
            covered = _covered(store)
            assert covered.keys() == texts.keys()
            for turn_id, pieces in covered.items():
                assert "".join(pieces) == texts[turn_id]
            for (chunk_id,) in store.conn.execute("SELECT id FROM chunks"):
                chunk = store.chunk_input(chunk_id)
                assert chunk.token_estimate <= budget
                if chunk.turns[0].parts == 1:  # the plan covers the turns as rendered (parts add "part i/n")
                    rendered = render_chunk(replace(chunk, cwd=None))  # one line a chunk, not planned
                    assert estimate_tokens(rendered) <= chunk.token_estimate
            assert all(seq == i for i, (seq,) in enumerate(
                store.conn.execute(f"SELECT seq FROM turns WHERE session_id = '{SESSION}' ORDER BY seq"), start=1))
        finally:
            store.close()

