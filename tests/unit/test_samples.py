"""The real public samples, laid out as ~/.claude/projects and ~/.codex/sessions, end to end: scan and
checkpoint capture every turn exactly once, against a count computed here from the files and the
formats' policies (docs/architecture.md, "Transcript formats"), and neither a rescan nor a forced
re-read adds anything."""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import Totals
from checkpoint.sources.base import line_id
from checkpoint.sources.tailer import SETTLE_SECONDS
from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support.samples import SAMPLES

CHUNK_TOKENS = 300  # small: many chunks, and the longer turns are split

# -- the independent count ----------------------------------------------------------------------

REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
MACHINE_TAGS = ("<task-notification>",)  # a background task reporting, in the user's place
CODEX_INJECTED = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>")
CODEX_EVENT_COPIES = ("user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content")
CODEX_TOOL_ITEMS = ("function_call", "custom_tool_call", "function_call_output", "custom_tool_call_output",
                    "local_shell_call", "web_search_call")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def claude_is_turn(obj: dict[str, Any]) -> bool:
    """Is this Claude Code line something said or done in the session? (docs/architecture.md,
    "Claude Code transcripts")"""
    kind, message = obj.get("type"), obj.get("message")
    if str(obj.get("agentId", "")).startswith("acompact"):
        return False  # the compaction summariser's own conversation
    if kind == "user" and isinstance(message, dict) and not obj.get("isCompactSummary"):
        for block in _blocks(message.get("content")):
            if block.get("type") == "tool_result":
                return True
            text = block.get("text")
            said = block.get("type") == "text" and isinstance(text, str) and not obj.get("isMeta")
            if said and REMINDER.sub("", str(text)).strip() and not str(text).lstrip().startswith(MACHINE_TAGS):
                return True
        return False
    if kind == "assistant" and isinstance(message, dict):
        if obj.get("isApiErrorMessage") or message.get("model") == "<synthetic>":
            return False
        return any((b.get("type") == "text" and str(b.get("text") or "").strip())
                   or (b.get("type") == "thinking" and str(b.get("thinking") or "").strip())
                   or b.get("type") in ("tool_use", "server_tool_use") for b in _blocks(message.get("content")))
    if kind == "attachment":
        attachment = obj.get("attachment")
        if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
            return any(b.get("type") == "text" and b.get("text") for b in _blocks(attachment.get("prompt")))
    return False


def codex_is_turn(obj: dict[str, Any]) -> bool:
    """Is this Codex rollout line something said or done: the response_item family?
    (docs/architecture.md, "Codex rollouts")"""
    payload = obj.get("payload")
    if not isinstance(payload, dict):
        return False
    if obj.get("type") == "event_msg":
        changes = payload.get("changes")
        return payload.get("type") == "patch_apply_end" and payload.get("success") is not False and bool(
            isinstance(changes, dict) and changes)
    if obj.get("type") != "response_item":
        return False
    kind = payload.get("type")
    if kind == "message":
        text = "\n".join(b["text"] for b in _blocks(payload.get("content")) if isinstance(b.get("text"), str))
        return payload.get("role") in ("user", "assistant") and bool(text.strip()) and not text.lstrip().startswith(
            CODEX_INJECTED)
    if kind == "reasoning":
        summary = payload.get("summary")
        return isinstance(summary, list) and any(isinstance(s, dict) and isinstance(s.get("text"), str)
                                                 for s in summary)
    return kind in CODEX_TOOL_ITEMS


@dataclass
class Expected:
    session_id: str
    agent: str
    turn_ids: set[str] = field(default_factory=set)
    copies: Counter[str] = field(default_factory=Counter)  # policy -> records, for the copies that are counted
    problem_lines: set[int] = field(default_factory=set)


def expected_of(path: Path, session_id: str, agent: str) -> Expected:
    exp = Expected(session_id, agent)
    data = path.read_bytes()
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        try:
            obj = json.loads(raw)
        except ValueError:
            exp.problem_lines.add(number)
            continue
        if not isinstance(obj, dict):
            exp.problem_lines.add(number)
            continue
        if agent == "claude":
            if claude_is_turn(obj):
                exp.turn_ids.add(obj["uuid"] if isinstance(obj.get("uuid"), str) and obj["uuid"] else line_id(raw))
            if obj.get("type") == "progress":
                exp.copies["progress_copy"] += 1
        else:
            if codex_is_turn(obj):
                exp.turn_ids.add(line_id(raw))
            payload = obj.get("payload")
            event = payload.get("type") if obj.get("type") == "event_msg" and isinstance(payload, dict) else None
            if event in CODEX_EVENT_COPIES or event == "item_completed" or (
                    event == "task_complete" and isinstance(payload, dict)
                    and isinstance(payload.get("last_agent_message"), str)):
                exp.copies["event_copy"] += 1
            if obj.get("type") == "compacted":
                exp.copies["compaction_summary"] += 1
    return exp


# -- the tree -------------------------------------------------------------------------------------


def _first_cwd(path: Path) -> str:
    for raw in path.read_bytes().splitlines():
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("cwd"), str):
            return str(obj["cwd"])
    raise AssertionError(f"{path} names no cwd")


def _codex_id(path: Path) -> str:
    first = json.loads(path.read_bytes().split(b"\n", 1)[0])
    candidate = str(first.get("payload", {}).get("id", ""))
    try:
        return str(uuid.UUID(candidate))
    except ValueError:
        return str(uuid.uuid5(uuid.NAMESPACE_URL, path.name))


def build_tree(claude_root: Path, codex_root: Path) -> dict[Path, Expected]:
    """Copy every sample where the agent would have written it; age them so that a last line without
    a newline counts as settled."""
    layout: dict[Path, Expected] = {}
    for sample in sorted((SAMPLES / "claude").glob("*.jsonl")):
        slug = re.sub(r"[^a-zA-Z0-9]", "-", _first_cwd(sample))
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, sample.name))
        target = claude_root / slug / f"{session_id}.jsonl"
        layout[target] = expected_of(sample, session_id, "claude")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    for minute, sample in enumerate(sorted((SAMPLES / "codex").glob("*.jsonl"))):
        session_id = _codex_id(sample)
        target = codex_root / "2026" / "02" / "23" / f"rollout-2026-02-23T13-{minute:02d}-00-{session_id}.jsonl"
        layout[target] = expected_of(sample, session_id, "codex")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    for target in layout:
        _age(target)
    return layout


def _age(path: Path) -> None:
    old = path.stat().st_mtime - SETTLE_SECONDS - 60
    os.utime(path, (old, old))


def _same_bytes_new_inode(path: Path) -> None:
    before = path.stat()
    tmp = path.with_name(path.name + ".tmp")
    shutil.copyfile(path, tmp)
    os.replace(tmp, path)
    _age(path)
    after = path.stat()
    assert after.st_ino != before.st_ino and after.st_size == before.st_size


# -- the test -------------------------------------------------------------------------------------


@pytest.fixture
def sample_settings(settings: Settings) -> Settings:
    return replace(settings, chunk_tokens=CHUNK_TOKENS)


def _turn_rows(store: Store) -> list[tuple[str, str, str]]:
    return store.conn.execute("SELECT id, session_id, source_path FROM turns ORDER BY session_id, seq").fetchall()


def _items(store: Store) -> list[tuple[str, str, str]]:
    return sorted((i.id, i.kind.value, i.statement) for i in store.items(include_dismissed=True))


def test_samples_every_turn_captured_once(
    roots: tuple[Path, Path], sample_settings: Settings, store: Store
) -> None:
    layout = build_tree(*roots)
    expected_ids = [tid for exp in layout.values() for tid in exp.turn_ids]
    assert len(expected_ids) == len(set(expected_ids)), "the samples share no turn id"
    assert len(expected_ids) > 100

    report = pipeline.scan(store, sample_settings)
    assert report.files_seen == len(layout)
    assert report.turns_added == len(expected_ids)

    # Every turn, in the session and file it was read from, none twice.
    rows = _turn_rows(store)
    assert sorted(rows) == sorted((tid, exp.session_id, str(path)) for path, exp in layout.items()
                                  for tid in exp.turn_ids)
    sessions = {s.id: s for s in store.session_counts()}
    assert {sid: s.turns for sid, s in sessions.items()} == {
        exp.session_id: len(exp.turn_ids) for exp in layout.values()}
    assert {sid: s.agent for sid, s in sessions.items()} == {exp.session_id: exp.agent for exp in layout.values()}
    for exp in layout.values():
        dropped = sessions[exp.session_id].dropped
        assert {policy: dropped[policy]["records"] for policy in exp.copies if policy in dropped} == dict(exp.copies)
    problems = {(p.path, p.line) for p in store.problems(limit=1000)}
    assert problems == {(str(path), n) for path, exp in layout.items() for n in exp.problem_lines}

    # Every turn lands in a chunk that fits the budget; the checkpoint captures all of them.
    assert report.chunks_created > len(layout)
    run = runner.extract_due(store, HeuristicExtractor())
    assert (run.failed, run.failures) == (0, [])
    assert run.captured == run.tried == report.chunks_created
    status = read_status(store)
    turns = len(expected_ids)
    assert status.totals == Totals(turns=turns, captured=turns, pending=0, failed=0)
    assert store.chunk_states() == Counter({"captured": report.chunks_created})
    items = _items(store)
    assert items, "the heuristic finds decisions, constraints or questions in these sessions"

    # Scanning again adds nothing.
    again = pipeline.scan(store, sample_settings)
    assert (again.turns_added, again.chunks_created, again.files_read) == (0, 0, 0)
    assert _turn_rows(store) == rows

    # The same bytes in new files (a tmp file renamed over each): re-read from the start, nothing added.
    for path in layout:
        _same_bytes_new_inode(path)
    reread = pipeline.scan(store, sample_settings)
    assert reread.files_read == len(layout)
    assert {w.split(":", 1)[0] for w in (p.text for p in reread.problems) if "re-read from the start" in w} == {
        str(p) for p in layout}
    assert (reread.turns_added, reread.chunks_created) == (0, 0)
    assert _turn_rows(store) == rows
    rerun = runner.extract_due(store, HeuristicExtractor())
    assert (rerun.tried, rerun.items_added) == (0, 0)
    assert _items(store) == items
    assert read_status(store).totals == status.totals

    # Nothing is left to read: the cursors sit at the end of every file.
    for path in layout:
        row = store.get_file(str(path))
        assert row is not None and (row.cursor.offset, row.cursor.size) == (path.stat().st_size,) * 2
