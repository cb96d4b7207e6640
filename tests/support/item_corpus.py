"""Stores full of items, built fast and only through the store's own writes (ingest, claim,
commit_extraction): the search and workspace tests and scripts/bench_search.py share them.

Statements are drawn from a fixed vocabulary with a Zipf-like skew (a few words in many items,
most words in few), seeded, so a figure measured on them is the same on every run.
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.model import FileCursor, ItemKind, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import Store

_SYLLABLES = [  # 8,000 words of three
    "ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pa",
    "do", "fi", "gu", "he", "ja", "bo", "ci", "wu", "xe", "yo",
]
KINDS = (ItemKind.DECISION, ItemKind.CONSTRAINT, ItemKind.QUESTION)
T = TypeVar("T")


def vocabulary(size: int = 4000, seed: int = 7) -> list[str]:
    """`size` (at most 8,000) distinct made-up words, in a seeded order: the first are the common ones."""
    rng = random.Random(seed)
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(_SYLLABLES) for _ in range(3))] = None
    return list(words)


def sentence(rng: random.Random, words: Sequence[str], n: int) -> str:
    # paretovariate: index 0 (the most common word) drawn most, a long tail drawn rarely
    return " ".join(words[min(len(words) - 1, int(rng.paretovariate(1.1)) - 1)] for _ in range(n))


def drafts(count: int, turn_id: str, seed: int = 1, words: Sequence[str] | None = None,
           files: Sequence[str] = ()) -> list[ItemDraft]:
    """`count` item drafts citing `turn_id`, built without validation (they are valid by construction)."""
    rng = random.Random(seed)
    words = words or vocabulary()
    out = []
    for i in range(count):
        statement = f"{sentence(rng, words, 8)} n{seed}x{i}"  # the tag makes every statement distinct
        out.append(ItemDraft.model_construct(
            kind=KINDS[i % 3], statement=statement, rationale=sentence(rng, words, 12), confidence=0.5,
            turn_ids=[turn_id], files=[files[i % len(files)]] if files else [], same_as=None,
        ))
    return out


def session(store: Store, session_id: str, cwd: str | None, texts: Sequence[str] = ("turn",),
            files: Sequence[Sequence[str]] = ()) -> list[str]:
    """Ingest a session of one user turn per text (with the files each touched); returns the turn ids."""
    turn_drafts = [
        TurnDraft(id=f"{session_id}-t{i}", role=Role.USER, text=text,
                  files=tuple(files[i]) if i < len(files) else ())
        for i, text in enumerate(texts)
    ]
    turns = [ScannedTurn(draft, i + 1, 10, 5) for i, draft in enumerate(turn_drafts)]
    info = SessionInfo(id=session_id, agent="claude", cwd=cwd)
    store.ingest(FileCursor(f"/transcripts/{session_id}.jsonl"), "claude", session_id, False, {}, turns, info,
                 Counter(), Counter(), [], chunk_tokens=10_000_000)
    return [d.id for d in turn_drafts]


def commit(store: Store, session_id: str, items: list[ItemDraft], extractor: str = "test") -> int:
    """Commit `items` as the answer for the session's next due chunk; returns the items added."""
    [chunk] = store.claim_chunks(1, "corpus", session_id=session_id)
    return store.commit_extraction(Extraction(chunk_id=chunk.chunk_id, extractor=extractor, items=items), "corpus")


def build(path: Path, items: int, sessions: int = 1, cwd: str | None = "/work/project", seed: int = 1) -> Store:
    """A store at `path` holding `items` items spread over `sessions` sessions of one workspace."""
    store = Store(path)
    words = vocabulary()
    per = -(-items // sessions)
    for n in range(sessions):
        session_id = f"s{seed}-{n}"
        [turn] = session(store, session_id, cwd)
        commit(store, session_id, drafts(min(per, items - n * per), turn, seed=seed * 1000 + n, words=words))
    return store


def sqlite_steps(conn: sqlite3.Connection, work: Callable[[], T]) -> tuple[T, int]:
    """`work()`'s result and how many SQLite virtual-machine steps it took on `conn` (in hundreds): a
    measure of work that, unlike a clock, does not depend on how loaded the machine is."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0  # go on

    conn.set_progress_handler(count, 100)
    try:
        return work(), steps[0]
    finally:
        conn.set_progress_handler(None, 0)
