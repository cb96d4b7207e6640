"""The corpora scripts/bench.py measures on: Claude Code sessions written here, seeded (the seed-sized
session, a big one of a given size, many small ones), as tests/support/synth.py writes their lines."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

from tests.support.synth import claude_lines, dumps, plan_session

SEED_TURNS = 1357
SEED_CHARS = 1_310_000
CHARS_PER_TURN = SEED_CHARS // SEED_TURNS


def session_path(root: Path, session_id: str, cwd: str) -> Path:
    return root / "claude" / "projects" / cwd.replace("/", "-") / f"{session_id}.jsonl"


def write_session(root: Path, target_bytes: int, seed: int, turns_per_segment: int = 2000) -> Path:
    """One Claude Code session of about target_bytes, written segment by segment (bounded memory):
    turns of the seed session's average size, with its copies (split messages, progress lines)."""
    rng = random.Random(seed)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    cwd = f"/home/dev/bench{seed}"
    path = session_path(root, session_id, cwd)
    path.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    with path.open("wb") as fh:
        while size < target_bytes:
            planned = plan_session(rng, turns_per_segment, turns_per_segment * CHARS_PER_TURN, cwd)
            for record in claude_lines(session_id, planned, cwd, rng):
                line = dumps(record)
                fh.write(line)
                size += len(line)
                if size >= target_bytes:
                    break
    return path


def seed_records(seed: int) -> tuple[str, list[bytes]]:
    """The seed-sized session (1,357 turns, ~1.31M characters of text) as lines."""
    rng = random.Random(seed)
    session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    planned = plan_session(rng, SEED_TURNS, SEED_CHARS, "/home/dev/seed")
    return session_id, [dumps(r) for r in claude_lines(session_id, planned, "/home/dev/seed", rng)]


def append_turn(path: Path, rng: random.Random, session_id: str) -> None:
    """One more exchange at the end of a session: a prompt and its answer, written as Claude Code does."""
    planned = plan_session(rng, 2, 2 * CHARS_PER_TURN, "/home/dev/x")
    with path.open("ab") as fh:
        for record in claude_lines(session_id, planned, "/home/dev/x", rng, compaction=False):
            fh.write(dumps(record))


def write_many(root: Path, sessions: int, turns: int, chars: int, seed: int) -> None:
    rng = random.Random(seed)
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        cwd = f"/home/dev/p{s % 50}"
        planned = plan_session(rng, turns, chars, cwd)
        path = session_path(root, session_id, cwd)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(dumps(r) for r in claude_lines(session_id, planned, cwd, rng)))
