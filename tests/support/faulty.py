"""Faults for the property tests: a process that can die at any SQL statement, and an extractor that
answers, fails or kills its process on demand while recording every turn slice it is sent.

Nothing here knows the right answer; tests/properties/test_invariants.py is the oracle.
"""

from __future__ import annotations

import re
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.chunker import estimate_tokens
from checkpoint.extract import ExtractionError
from checkpoint.model import ChunkInput, ItemKind
from checkpoint.store import Store

SliceKey = tuple[str, int, int]  # (turn id, first character, end): a whole turn, or one part of a split turn
OUTCOMES = ("ok", "error", "crash", "foreign", "all_foreign", "too_large", "kill", "taken_over")
_MARKER = re.compile(r"^marker (\S+) chars (\d+)-(\d+)$")


class Killed(BaseException):
    """The process died (SIGKILL, power cut): nothing after this point runs, not even cleanup."""


def marker(key: SliceKey) -> str:
    """The one item the test extractor returns for a turn slice: it names exactly what was answered
    (which characters of which turn; part labels are renumbered when a chunk is re-split)."""
    return f"marker {key[0]} chars {key[1]}-{key[2]}"


def parse_marker(statement: str) -> SliceKey | None:
    m = _MARKER.match(statement)
    return (m.group(1), int(m.group(2)), int(m.group(3))) if m else None


class KillSwitch:
    """Stands in for the store's sqlite3 connection. Once armed with n, it lets n more statements run
    and dies at the next one; once dead every statement raises Killed (no ROLLBACK, no COMMIT, no
    cleanup in `finally` blocks), as if the process were gone. `crash()` then drops the connection,
    which discards an open transaction the way SQLite does for a dead process."""

    def __init__(self, raw: sqlite3.Connection) -> None:
        self.raw = raw
        self.left: int | None = None
        self.dead = False
        self.died_at = ""  # the statement the process died at ("" if it died elsewhere)

    def arm(self, statements: int | None) -> None:
        self.left = statements

    def kill(self) -> None:
        self.dead = True

    def _step(self, sql: str) -> None:
        if self.dead:
            raise Killed("the process is dead")
        if self.left is not None:
            if self.left <= 0:
                self.dead = True
                self.died_at = " ".join(sql.split())[:60]
                raise Killed(f"killed at: {self.died_at}")
            self.left -= 1

    def execute(self, sql: str, parameters: Sequence[Any] | dict[str, Any] = ()) -> sqlite3.Cursor:
        self._step(sql)
        return self.raw.execute(sql, parameters)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> sqlite3.Cursor:
        self._step(sql)
        return self.raw.executemany(sql, rows)

    def executescript(self, script: str) -> sqlite3.Cursor:
        self._step(script)
        return self.raw.executescript(script)

    def commit(self) -> None:
        self._step("COMMIT")
        self.raw.commit()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


class FaultyStore(Store):
    """The real Store over a KillSwitch connection. The slices named by every extraction that
    commit_extraction accepts are appended to `commits` (a list that outlives the store, as the database
    does), so that a slice committed twice, by two runs or by a run and a zombie, is seen."""

    def __init__(self, path: Path, clock: Callable[[], float], commits: list[SliceKey]) -> None:
        super().__init__(path, clock)
        self.switch = KillSwitch(self.conn)
        self.conn = self.switch  # type: ignore[assignment]
        self.commits = commits
        self.died_committing = False

    def commit_extraction(self, extraction: Extraction, owner: str) -> int:
        try:
            added = super().commit_extraction(extraction, owner)
        except Killed:
            self.died_committing = True
            raise
        self.commits.extend(key for item in extraction.items if (key := parse_marker(item.statement)))
        return added

    def crash(self) -> None:
        """The process is gone: its connection (and any transaction it had open) with it."""
        self.switch.dead = True
        self.switch.raw.close()


class ScriptedExtractor:
    """Returns one marker item per turn slice it receives, unless its script says otherwise:

    - ok: the markers;
    - error: ExtractionError (a model that refused or answered badly);
    - crash: an arbitrary exception (an extractor bug);
    - foreign: the markers, but each also citing turns outside the chunk, plus an item citing only
      such turns, under a wrong chunk id (validation must strip the foreign citations and the chunk
      id, and attribute the item citing none of the chunk's turns to the chunk);
    - all_foreign: the markers, each citing only turns outside the chunk (the chunk is captured, each
      marker attributed to the chunk's turns, never dropped);
    - too_large: ExtractionError asking for the chunk to be re-split (sometimes saying what would fit);
    - kill: the process dies while the request is in flight (`on_kill`, then Killed);
    - taken_over: the markers, but while the request was in flight its lease expired and another
      runner took the chunk over (`on_takeover`), so the answer comes too late to be committed.

    To name a slice exactly it reads, on its own connection, which characters of the turn the chunk
    holds. Before answering it checks that none of them already has its marker committed (a captured
    slice sent again), that a part's text is exactly those characters, and that the chunk does not
    carry more than its token estimate; what fails is recorded in `violations`.
    """

    name = "scripted"
    description = "test extractor: one marker item per turn slice, failing on demand"

    def __init__(self, db: Path, on_kill: Callable[[], None], on_takeover: Callable[[], None] = lambda: None) -> None:
        self.db = db
        self.on_kill = on_kill
        self.on_takeover = on_takeover
        self.script: list[str] = []
        self.sent: list[SliceKey] = []
        self.texts: dict[SliceKey, str] = {}  # the text sent for each slice
        self.violations: list[str] = []
        self._seen_turns: dict[str, None] = {}
        self.outcomes: Counter[str] = Counter()
        self.calls_left: int | None = None  # a run that sends more than this never ends: stop it
        self._fit = 0

    def extract(self, chunk: ChunkInput) -> Extraction:
        if self.calls_left is not None:
            self.calls_left -= 1
            if self.calls_left < 0:
                self.violations.append("a run keeps sending chunks and does not end")
                self.on_kill()
                raise Killed("stopped a run that did not end")
        keys = self._inspect(chunk)
        self.sent.extend(keys)
        outcome = self.script.pop(0) if self.script else "ok"
        self.outcomes[outcome] += 1
        own = [t.turn_id for t in chunk.turns]
        foreign = [*[t for t in self._seen_turns if t not in own][-2:], "turn-that-does-not-exist"]
        self._seen_turns.update(dict.fromkeys(own))
        if outcome == "error":
            raise ExtractionError("scripted: the model's answer did not validate")
        if outcome == "crash":
            raise RuntimeError("scripted: extractor bug")
        if outcome == "too_large":
            self._fit += 1
            fit = None if self._fit % 2 else max(1, chunk.token_estimate // 3)
            raise ExtractionError("scripted: prompt is too long for the model", too_large=True, fit_tokens=fit)
        if outcome == "kill":
            self.on_kill()
            raise Killed("killed while the request was in flight")
        items = [ItemDraft(kind=ItemKind.DECISION, statement=marker(key), turn_ids=[key[0]]) for key in keys]
        chunk_id = chunk.chunk_id
        if outcome == "all_foreign":
            items = [item.model_copy(update={"turn_ids": foreign}) for item in items]
        if outcome == "taken_over":
            self.on_takeover()
        if outcome == "foreign":
            items = [item.model_copy(update={"turn_ids": [*foreign, *item.turn_ids]}) for item in items]
            items.append(ItemDraft(kind=ItemKind.CONSTRAINT, statement=f"bogus item of chunk {chunk.chunk_id}",
                                   turn_ids=foreign))
            chunk_id += 10_000
        return Extraction(chunk_id=chunk_id, items=items, extractor=self.name)

    def _inspect(self, chunk: ChunkInput) -> list[SliceKey]:
        conn = sqlite3.connect(self.db)
        try:
            row = conn.execute("SELECT parts, char_start, char_end FROM chunks WHERE id = ?",
                               (chunk.chunk_id,)).fetchone()
            if row is None:
                self.violations.append(f"chunk {chunk.chunk_id} was sent but does not exist")
                return []
            parts, start, end = row
            keys: list[SliceKey] = []
            for t in chunk.turns:
                full = conn.execute("SELECT text FROM turns WHERE id = ?", (t.turn_id,)).fetchone()[0]
                key = (t.turn_id, 0, len(full)) if parts == 1 else (t.turn_id, start, end)
                keys.append(key)
                if t.text != full[key[1]:key[2]]:
                    self.violations.append(f"chunk {chunk.chunk_id} sent other text than characters {key[1:]}"
                                           f" of turn {t.turn_id}")
            statements = [marker(k) for k in keys]
            found = {r[0] for r in conn.execute(
                f"SELECT statement FROM items WHERE statement IN ({','.join('?' * len(statements))})", statements
            )}
        finally:
            conn.close()
        for key in keys:
            if marker(key) in found:
                self.violations.append(f"slice {key} sent again (chunk {chunk.chunk_id}) after it was captured")
        for t, key in zip(chunk.turns, keys, strict=True):
            self.texts[key] = t.text
        if sum(estimate_tokens(t.text) for t in chunk.turns) > chunk.token_estimate:
            self.violations.append(f"chunk {chunk.chunk_id} carries more than its {chunk.token_estimate} tokens")
        return keys
