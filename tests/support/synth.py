"""Deterministic synthetic transcripts in the real on-disk formats, with known decisions.

Used by the tests and the benchmark. Every generated session plants decisions with unique markers
("We'll use marker-<n> ...") so a test can check each one was captured exactly once, and it
reproduces the copies the formats hold by design: Claude Code assistant messages split over several
lines, progress lines copying sub-agent messages, compaction summaries restating old turns; Codex
event_msg copies of response items.

    python -m tests.support.synth OUT_DIR [--sessions N] [--turns N] [--chars N] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

WORDS = [
    "parser", "cache", "schema", "index", "request", "module", "config", "handler", "buffer",
    "retry", "token", "window", "queue", "worker", "session", "store", "chunk", "budget", "client",
    "server", "layout", "render", "build", "release", "branch", "commit", "migration",
]


@dataclass
class SynthTurn:
    role: str  # "user" | "assistant"
    text: str
    edits: list[str] = field(default_factory=list)  # absolute paths the assistant edits after speaking
    marker: str | None = None  # the planted decision's marker, if any


def _filler(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 14))).capitalize() + "."
        words.append(sentence)
        size += len(sentence) + 1
    return " ".join(words)[:chars]


def plan_session(
    rng: random.Random, turns: int, chars: int, cwd: str, decision_every: int = 7
) -> list[SynthTurn]:
    """A conversation of `turns` turns totalling about `chars` characters of text."""
    per_turn = max(40, chars // max(1, turns))
    out: list[SynthTurn] = []
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        size = max(20, int(rng.expovariate(1 / per_turn)))
        text = _filler(rng, size)
        marker = None
        edits: list[str] = []
        if i % decision_every == 3:
            marker = f"marker-{uuid.UUID(int=rng.getrandbits(128)).hex[:12]}"
            text = f"We'll use {marker} for the {rng.choice(WORDS)} layer.\n{text}"
        if role == "assistant" and rng.random() < 0.3:
            edits = [f"{cwd}/src/{rng.choice(WORDS)}.py"]
        out.append(SynthTurn(role, text, edits, marker))
    return out


def _ts(i: int) -> str:
    return f"2026-01-05T{10 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"


def claude_lines(
    session_id: str, turns: list[SynthTurn], cwd: str, rng: random.Random, compaction: bool = True
) -> Iterator[dict[str, object]]:
    """Claude Code records for the planned turns (one dict per line)."""
    def record(kind: str, parent: str | None, **fields: object) -> dict[str, object]:
        # In the order Claude Code writes its keys (the readers' skim looks at a line's head as written).
        return {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd,
                "sessionId": session_id, "version": "2.1.50", "gitBranch": "main", "type": kind, **fields}

    parent: str | None = None
    markers: list[str] = []
    for i, turn in enumerate(turns):
        n = i + 1
        if turn.role == "user":
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            yield record("user", parent, message={"role": "user", "content": turn.text}, uuid=uid,
                         timestamp=_ts(n))
            parent = uid
        else:
            msg_id = f"msg_{rng.getrandbits(64):016x}"
            blocks: list[dict[str, object]] = [{"type": "thinking", "thinking": "Considering.", "signature": "x"},
                                                {"type": "text", "text": turn.text}]
            blocks += [{"type": "tool_use", "id": f"toolu_{i}_{k}", "name": "Edit",
                        "input": {"file_path": p, "old_string": "a", "new_string": "b"}}
                       for k, p in enumerate(turn.edits)]
            for block in blocks:  # one line per content block, sharing message.id
                uid = str(uuid.UUID(int=rng.getrandbits(128)))
                yield record("assistant", parent, message={
                    "id": msg_id, "type": "message", "role": "assistant", "model": "claude-x", "content": [block],
                    "stop_reason": None}, requestId=f"req_{msg_id}", uuid=uid, timestamp=_ts(n))
                parent = uid
            for k, path in enumerate(turn.edits):
                uid = str(uuid.UUID(int=rng.getrandbits(128)))
                yield record("user", parent, message={"role": "user", "content": [{
                    "type": "tool_result", "tool_use_id": f"toolu_{i}_{k}",
                    "content": f"The file {path} has been updated."}]}, uuid=uid, timestamp=_ts(n),
                    toolUseResult={"filePath": path, "oldString": "a", "newString": "b",
                                   "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1,
                                                        "newLines": 1, "lines": ["-a", "+b"]}]})
                parent = uid
            # a progress line copying the message, as sub-agent progress does
            yield record("progress", parent, data={
                "type": "agent_progress", "agentId": "a1", "message": {"type": "assistant", "message": {
                    "role": "assistant", "content": [{"type": "text", "text": turn.text}]}}},
                uuid=str(uuid.UUID(int=rng.getrandbits(128))), timestamp=_ts(n))
        if turn.marker:
            markers.append(turn.marker)
        if compaction and i and i % 200 == 0 and markers:
            cb = str(uuid.UUID(int=rng.getrandbits(128)))
            yield record("system", None, subtype="compact_boundary", uuid=cb, logicalParentUuid=parent,
                         timestamp=_ts(n), content="Conversation compacted")
            summary = "This session is being continued. " + " ".join(f"We'll use {m} here." for m in markers[-5:])
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            yield record("user", cb, message={"role": "user", "content": summary}, isCompactSummary=True,
                         isVisibleInTranscriptOnly=True, uuid=uid, timestamp=_ts(n))
            parent = uid


def codex_lines(session_id: str, turns: list[SynthTurn], cwd: str) -> Iterator[dict[str, object]]:
    """Codex rollout records for the planned turns, with the event_msg copies Codex writes."""
    yield {"timestamp": _ts(0), "type": "session_meta",
           "payload": {"id": session_id, "timestamp": _ts(0), "cwd": cwd, "originator": "codex_cli_rs"}}
    for i, turn in enumerate(turns, start=1):
        ts = _ts(i)
        if turn.role == "user":
            yield {"timestamp": ts, "type": "turn_context", "payload": {"turn_id": f"t{i}", "cwd": cwd}}
            yield {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": turn.text}]}}
            yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "user_message", "message": turn.text}}
        else:
            yield {"timestamp": ts, "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": turn.text}]}}
            yield {"timestamp": ts, "type": "event_msg", "payload": {"type": "agent_message", "message": turn.text}}
            for k, path in enumerate(turn.edits):
                yield {"timestamp": ts, "type": "event_msg", "payload": {
                    "type": "patch_apply_end", "call_id": f"c{i}_{k}", "success": True,
                    "changes": {path: {"type": "update", "unified_diff": "-a\n+b\n"}}}}


def dumps(record: dict[str, object]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


@dataclass
class Corpus:
    root: Path
    claude_root: Path
    codex_root: Path
    markers: dict[str, set[str]]  # session id -> planted markers
    turns: dict[str, int]  # session id -> planned turns


def write_corpus(root: Path, sessions: int = 4, turns: int = 60, chars: int = 30_000, seed: int = 0,
                 codex_share: float = 0.5, under: Path | None = None) -> Corpus:
    """`sessions` sessions, each run in its own project folder: /home/dev/projectN, or `under`/projectN."""
    rng = random.Random(seed)
    claude_root = root / "claude" / "projects"
    codex_root = root / "codex" / "sessions"
    corpus = Corpus(root, claude_root, codex_root, {}, {})
    for s in range(sessions):
        session_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        cwd = f"{under or '/home/dev'}/project{s}"
        planned = plan_session(rng, turns, chars, cwd)
        corpus.markers[session_id] = {t.marker for t in planned if t.marker}
        corpus.turns[session_id] = len(planned)
        if rng.random() < codex_share:
            path = codex_root / "2026" / "01" / "05" / f"rollout-2026-01-05T10-00-{s:02d}-{session_id}.jsonl"
            records = list(codex_lines(session_id, planned, cwd))
        else:
            path = claude_root / cwd.replace("/", "-") / f"{session_id}.jsonl"
            records = list(claude_lines(session_id, planned, cwd, rng))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"".join(dumps(r) for r in records))
    return corpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--sessions", type=int, default=4)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--chars", type=int, default=30_000, help="characters of text per session")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    corpus = write_corpus(args.out, args.sessions, args.turns, args.chars, args.seed)
    print(f"wrote {len(corpus.turns)} sessions under {args.out} "
          f"(CHECKPOINT_SOURCES={corpus.claude_root}:{corpus.codex_root})")


if __name__ == "__main__":
    main()
