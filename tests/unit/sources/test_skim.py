"""The readers' skim (a line's fate from its bytes, before any decoding) against the full parse:
every file of the real samples gives the same turns, the same policy counts, the same session facts
and the same line problems, turn by turn, with the skim on and off."""

from __future__ import annotations

import json
import os
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from checkpoint import pipeline
from checkpoint.model import FileCursor
from checkpoint.sources import READERS, locate
from checkpoint.sources.base import NO_WORDS, ParsedLine, Reader
from checkpoint.sources.claude_code import ClaudeCodeReader
from checkpoint.sources.codex import CodexReader
from checkpoint.sources.tailer import RawLine, tail
from tests.support.paths import DATA_DIR
from tests.support.samples import REAL


def _transcripts() -> list[Path]:
    found = sorted(p for p in DATA_DIR.rglob("*.jsonl") if locate(p) is not None)
    if REAL.is_dir():
        found += sorted(p for p in REAL.rglob("*.jsonl") if locate(p) is not None)
    return found


def read(path: Path, skim: bool) -> tuple[dict[str, Any], int]:
    """Everything reading the file gives, as the pipeline reads it (one batch), and how many lines
    the skim decided."""
    role = locate(path)
    assert role is not None
    reader = READERS[role.agent]
    counting = _Counting(reader)
    batch = pipeline._Batch()
    state: dict[str, object] = {}
    cursor = FileCursor(str(path))
    for event in tail(cursor, os.stat(path)):
        if isinstance(event, RawLine):
            pipeline._parse_line(counting, event, state, batch, counting.skim if skim else None)  # type: ignore[arg-type]
    result = {
        "turns": [(t.line_no, t.tokens, t.header_tokens, t.draft) for t in batch.turns],
        "session": batch.session,
        "dropped": dict(batch.dropped),
        "drop_records": dict(batch.drop_records),
        "problems": batch.problems,
        "state": json.loads(json.dumps(state, default=str)),
    }
    return result, counting.skimmed


class _Counting:
    """A reader that counts the lines its skim decided."""

    def __init__(self, inner: Reader) -> None:
        self.inner = inner
        self.agent = inner.agent
        self.skimmed = 0

    def parse(self, obj: Any, raw: bytes, state: Any) -> Any:
        return self.inner.parse(obj, raw, state)

    def skim(self, raw: bytes, state: Any) -> Any:
        skim = getattr(self.inner, "skim", None)  # optional (base.Skims)
        out = skim(raw, state) if skim is not None else None
        self.skimmed += out is not None
        return out


@pytest.mark.unit
@pytest.mark.parametrize("path", _transcripts(), ids=lambda p: str(p.relative_to(p.parents[2])))
def test_skim_gives_what_the_full_parse_gives(path: Path) -> None:
    full, none = read(path, skim=False)
    fast, _ = read(path, skim=True)
    assert none == 0
    assert len(fast["turns"]) == len(full["turns"])
    for ours, theirs in zip(fast["turns"], full["turns"], strict=True):
        assert ours == theirs
    assert fast == full


@pytest.mark.unit
def test_skim_decides_most_copies_of_the_samples() -> None:
    """The skim is used: it decides the progress lines of the committed samples and, where the real
    corpus is beside the checkout (its Codex rollouts hold them; the committed ones are trimmed),
    the token-count lines too."""
    skimmed: Counter[str] = Counter()
    for path in _transcripts():
        role = locate(path)
        assert role is not None
        skimmed[role.agent] += read(path, skim=True)[1]
    assert skimmed["claude"] > 10, skimmed
    if REAL.is_dir():
        assert skimmed["claude"] > 100 and skimmed["codex"] > 10, skimmed


def _progress(**head: Any) -> bytes:
    record = {"parentUuid": None, "isSidechain": False, "cwd": "/w", "sessionId": "s1", **head,
              "type": "progress", "data": {"type": "hook_progress", "command": "x"}, "uuid": "u1"}
    return json.dumps(record, separators=(",", ":")).encode()


KNOWN = {"cwd": "/w", "cwds": ["/w"], "session_id": "s1"}  # what reading the file's first lines learnt


@pytest.mark.unit
@pytest.mark.parametrize("raw", [
    _progress(cwd="/w\\\"x"),  # an escape in the head: its quotes are no longer plain
    _progress(extra={"type": "progress"}),  # an object before the type: the type may be nested
    _progress(cwd=None),  # no string cwd
    _progress(cwd="/elsewhere"),  # a cwd this file has not named yet: parse learns it
    _progress()[:-1],  # not ended as an object
    _progress()[:60] + _progress(),  # a record appended after a cut-off one: decoding salvages it
    b" " + _progress(),  # not the head Claude Code writes
    _progress().replace(b'"type":"progress"', b'"type":"user"'),
    _progress().replace(b"/w", b"/\xff"),  # bytes decoding repairs
], ids=["escape", "nested", "no-cwd", "new-cwd", "unended", "salvage", "indented", "user", "bad-utf8"])
def test_claude_skim_leaves_every_doubt_to_the_parse(raw: bytes) -> None:
    assert ClaudeCodeReader().skim(raw, dict(KNOWN)) is None


@pytest.mark.unit
def test_claude_skim_of_a_progress_line_only_counts_it() -> None:
    assert ClaudeCodeReader().skim(_progress(), {}) is None  # the file's first line: parsed
    state = dict(KNOWN)
    assert ClaudeCodeReader().skim(_progress(), state) == "progress_copy" and state == KNOWN
    parsed = ClaudeCodeReader().parse(json.loads(_progress()), _progress(), state)
    assert parsed == ParsedLine(dropped=defaultdict(int, progress_copy=len(_progress()))) and state == KNOWN


@pytest.mark.unit
def test_codex_skim_only_takes_events_without_words() -> None:
    def event(kind: str, **payload: Any) -> bytes:
        return json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": "event_msg",
                           "payload": {"type": kind, **payload}}, separators=(",", ":")).encode()

    assert CodexReader().skim(event("token_count", info=None), {}) == NO_WORDS
    assert CodexReader().parse(json.loads(event("token_count", info=None)), b"", {}) == ParsedLine()
    assert CodexReader().skim(event("agent_message", message="hi"), {}) is None
    assert CodexReader().skim(event("token_count")[:-2], {}) is None
