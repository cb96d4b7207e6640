"""The Copilot reader on sessions the real GitHub Copilot CLI 1.0.102 wrote, offline, against the
fake OpenAI API (tests/support/real_copilot.py made tests/data/real_cli/copilot.tar.gz; see the
README there): a session resumed for every prompt, with reasoning, file edits, a bash call, a task
sub-agent, a background sub-agent and /compact; a second session in another folder.

Every prompt and every answer is stored once, none of what the CLI writes beside the turns (the
system prompt, the transformed prompt, the task's copy of the sub-agent's answer, the summariser's
conversation) is a turn, each session has its folder, the edited file is on the turns that edited
it, and each decision the model said once is one item."""

from __future__ import annotations

import os
import tarfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import orjson
import pytest

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.store import Store
from tests.support.reader_checks import (
    assert_each_once,
    assert_each_one_item,
    assert_rescans_add_nothing,
    assert_torn_appends_read_the_same,
)
from tests.support.real_copilot import (
    BACKGROUND_PROMPT,
    COPILOT_MARKERS,
    COPILOT_PROMPTS,
    NOTES,
    REASONING,
    SUBAGENT_PROMPT,
)

CORPUS = Path(__file__).resolve().parents[1] / "data" / "real_cli" / "copilot.tar.gz"
# What the CLI writes beside the turns, which no turn may hold: its system prompt, the date it adds
# to each prompt, the summariser's instructions.
BOOKKEEPING = ("You are the GitHub Copilot CLI", "<current_datetime>", "Tools are unavailable in this step")


@pytest.fixture
def corpus(tmp_path: Path, settings: Settings) -> Settings:
    with tarfile.open(CORPUS) as tar:
        tar.extractall(tmp_path, filter="data")
    return replace(settings, sources=[tmp_path / "copilot" / "session-state"], chunk_tokens=1500)


def _turns(store: Store) -> list[tuple[str, str, str, str, list[str]]]:
    rows = store.conn.execute(
        "SELECT s.agent, t.session_id, t.role, t.text, t.files FROM turns t JOIN sessions s ON s.id = t.session_id"
        " ORDER BY t.session_id, t.seq").fetchall()
    return [(a, s, r, t, orjson.loads(f)) for a, s, r, t, f in rows]


def test_copilot_sessions_every_prompt_and_answer_once_the_workspace_and_each_decision_one_item(
    corpus: Settings, store: Store
) -> None:
    report = pipeline.scan(store, corpus)
    assert report.problems == []
    turns = _turns(store)
    assert {a for a, *_ in turns} == {"copilot"}

    said = Counter(text for _, _, role, text, _ in turns if role == "user")
    # The sub-agents' prompts once each, as their parent gave them.
    assert said == Counter((*COPILOT_PROMPTS, SUBAGENT_PROMPT, BACKGROUND_PROMPT))
    texts = [text for _, _, _, text, _ in turns]
    assert_each_once(texts, COPILOT_MARKERS)
    assert sum(REASONING in t for t in texts) == 1
    for mark in (*BOOKKEEPING, SUBAGENT_PROMPT, BACKGROUND_PROMPT):
        assert [t[:80] for t in texts if mark in t and t not in (SUBAGENT_PROMPT, BACKGROUND_PROMPT)] == [], mark
    assert not [t for t in texts if not t.strip()]

    sessions = {s.id: s for s in store.session_counts()}
    assert len(sessions) == 2
    main = next(s for s in sessions.values() if s.title == COPILOT_PROMPTS[0])
    other = next(s for s in sessions.values() if s.title == COPILOT_PROMPTS[-1])
    assert main.cwd is not None and main.cwd.endswith("/work")
    assert other.cwd is not None and other.cwd.endswith("/other/project")
    cwds = dict(store.conn.execute("SELECT session_id, group_concat(cwd) FROM session_cwds GROUP BY session_id"))
    assert cwds == {main.id: main.cwd, other.id: other.cwd}
    # The session is its folder under session-state/, which is also session.start's sessionId.
    assert sorted(p.parent.name for p in corpus.sources[0].glob("*/events.jsonl")) == sorted(sessions)

    # The file the create and edit calls wrote, on their two results and nowhere else.
    touched = [(role, text.split("\n")[0]) for _, _, role, text, files in turns if files]
    assert touched == [("tool", "[tool result]")] * 2
    assert {f for *_, files in turns for f in files} == {os.path.join(main.cwd, NOTES)}

    dropped = main.dropped
    # The two task calls' prompts, the task's result, and read_agent's (the background task's result
    # only says it started: kept).
    assert dropped["subagent_copy"]["records"] == 4
    assert any("Agent started in background" in t for t in texts)
    assert dropped["tool_request_copy"]["records"] == 6  # create, edit, bash, task, task, read_agent
    assert dropped["transformed_copy"]["records"] == 8  # every prompt, the sub-agents' too
    assert dropped["compaction_summary"]["records"] >= 2  # the summariser's call and its summary
    assert {"injected_context", "encrypted_reasoning", "reasoning_copy", "result_detail_copy"} <= set(dropped)
    assert all("unknown_record" not in s.dropped for s in sessions.values())

    assert_each_one_item(store, COPILOT_MARKERS)
    assert_rescans_add_nothing(store, corpus, corpus.sources[0].rglob("*.jsonl"))
    assert _turns(store) == turns


def test_copilot_torn_appends_read_the_same(corpus: Settings, store: Store, tmp_path: Path) -> None:
    """Each file written in two halves, the first cut inside a line: what is stored is the same."""
    files = sorted(corpus.sources[0].rglob("*.jsonl"))
    assert_torn_appends_read_the_same(store, corpus, files, _turns, tmp_path / "whole.db")
