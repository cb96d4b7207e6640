"""The readers on transcripts the real Claude Code 2.1.328 and Codex 0.169.0 wrote, offline, against
the fake model APIs (tests/support/real_transcripts.py made tests/data/real_cli/corpus.tar.gz; see
the README there): a session with a sub-agent, a large tool output, resumes, a /compact and a queued
prompt; a Codex rollout resumed, and a multi-agent run (a parent and its sub-agent's rollout).

Every prompt and every answer is stored once, none of the request bookkeeping the CLIs write beside
the turns (request copies, system prompts, notifications) is a turn, and each decision the model said
once is one item."""

from __future__ import annotations

import tarfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.store import Store
from tests.support.paths import DATA_DIR
from tests.support.reader_checks import (
    assert_each_once,
    assert_each_one_item,
    assert_rescans_add_nothing,
    assert_torn_appends_read_the_same,
)
from tests.support.real_transcripts import CLAUDE_MARKERS, CODEX_MARKERS

CORPUS = DATA_DIR / "real_cli" / "corpus.tar.gz"

CLAUDE_PROMPTS = ("Start: pick a parser.", "Now spawn a helper to look at caching.",
                  "Now print a lot of lines with Bash.", "After the resume: what about retries?",
                  "QUEUED-ONE: first prompt.", "QUEUED-TWO: typed while the first is answered.",
                  "SUBAGENT-TASK: look at caching and decide.")  # the last: the sub-agent's prompt
CODEX_PROMPTS = ("Start: pick a parser.", "After the resume: what about retries?",
                 "Spawn one helper to decide on caching, wait for it, then answer.",
                 "SUBAGENT-TASK: decide on caching.")
# What the CLIs write beside the turns, which no turn may hold: the system prompts (Claude Code's
# prompt_snapshot and api-request-blob, Codex's base_instructions and developer message), and the
# notifications the harness writes in the user's place.
BOOKKEEPING = ("You are an agent working with the user toward their goals",
               "You are a coding agent running in the Codex CLI", "<skills_instructions>", "<task-notification>",
               "<subagent_notification>", "<environment_context>")
CLAUDE_SESSIONS, CODEX_SESSIONS = 2, 2  # the queued-prompt run is a session of its own; sub-agents are not


@pytest.fixture
def corpus(tmp_path: Path, settings: Settings) -> Settings:
    with tarfile.open(CORPUS) as tar:
        tar.extractall(tmp_path, filter="data")  # claude/projects/..., codex/sessions/...: the roots
    return replace(settings, chunk_tokens=1500)


def _turns(store: Store) -> list[tuple[str, str, str, str]]:
    return store.conn.execute(
        "SELECT s.agent, t.session_id, t.role, t.text FROM turns t JOIN sessions s ON s.id = t.session_id"
        " ORDER BY t.session_id, t.seq").fetchall()


def test_real_cli_transcripts_every_prompt_and_answer_once_and_each_decision_one_item(
    corpus: Settings, store: Store
) -> None:
    report = pipeline.scan(store, corpus)
    assert report.problems == []
    turns = _turns(store)

    for agent, prompts in (("claude", CLAUDE_PROMPTS), ("codex", CODEX_PROMPTS)):
        said = Counter(text for a, _, role, text in turns if a == agent and role == "user")
        assert {p: said[p] for p in prompts} == {p: 1 for p in prompts}, said
        assert sum(said.values()) == len(prompts) + (agent == "claude") * 2, said  # + /compact's two records

    texts = [text for *_, text in turns]
    assert_each_once(texts, CLAUDE_MARKERS + CODEX_MARKERS)
    for mark in BOOKKEEPING:
        assert not [t[:80] for t in texts if mark in t], mark
    assert not [t for t in texts if not t.strip()]

    # Sub-agents are their parents' sessions: a Claude subagents/ file and a Codex sub-agent rollout.
    sessions = {s.id: s for s in store.session_counts()}
    assert Counter(s.agent for s in sessions.values()) == Counter(claude=CLAUDE_SESSIONS, codex=CODEX_SESSIONS)
    parent = next(s for s in sessions.values() if s.agent == "codex" and s.title and s.title.startswith("Spawn"))
    in_parent = [text for _, sid, _, text in turns if sid == parent.id]
    assert any("marker-codex-subagent" in t for t in in_parent) and any("marker-codex-parent" in t for t in in_parent)
    assert parent.dropped["subagent_copy"]["records"] == 2  # the wait_agent output and the notification
    claude_main = next(s for s in sessions.values() if s.agent == "claude" and s.title == "Start: pick a parser.")
    assert claude_main.dropped["machine_notification"]["records"] >= 1  # the sub-agent's task notification
    assert claude_main.dropped["compaction_summary"]["records"] >= 1
    assert all("unknown_record" not in s.dropped for s in sessions.values())

    assert_each_one_item(store, CLAUDE_MARKERS + CODEX_MARKERS)
    assert_rescans_add_nothing(store, corpus, [p for root in corpus.sources for p in root.rglob("*.jsonl")])
    assert _turns(store) == turns


def test_real_cli_torn_appends_read_the_same(corpus: Settings, store: Store, tmp_path: Path) -> None:
    """Each file written in two halves, the first cut inside a line: what is stored is the same."""
    files = [p for root in corpus.sources for p in sorted(root.rglob("*.jsonl"))]
    assert_torn_appends_read_the_same(store, corpus, files, _turns, tmp_path / "whole.db")
