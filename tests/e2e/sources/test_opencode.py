"""End to end with opencode: the real opencode CLI (1.18.33, pinned) answers prompts through the fake
Anthropic API on 127.0.0.1 and writes its SQLite database under a temp HOME; the real `checkpoint`
process finds it under its default root (XDG_DATA_HOME/opencode), reads it while opencode writes on
(WAL, live), and extracts through the same fake API: each planted decision becomes exactly one item."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from tests.support import opencode_sessions as oc
from tests.support.cli_run import cli_env, item_markers, run
from tests.support.fake_anthropic import FakeAnthropic, MessageRequest, default_responder


def test_a_live_opencode_session_is_read_as_it_grows_and_each_decision_is_one_item(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    db = tmp_path / "checkpoint.db"
    agent = oc.responder(work)

    def answer(request: MessageRequest) -> Any:
        # Checkpoint's extraction asks for structured output; opencode's requests offer its tools.
        return default_responder(request) if request.mode != "text" else agent(request)

    with FakeAnthropic() as fake:
        fake.responder = answer
        env = cli_env(home, XDG_DATA_HOME=str(home / ".local" / "share"), ANTHROPIC_BASE_URL=fake.base_url,
                      ANTHROPIC_API_KEY="test-key", CHECKPOINT_EXTRACTOR="anthropic",
                      CHECKPOINT_MODEL="claude-haiku-4-5", CHECKPOINT_CHUNK_TOKENS="100000")
        oc.run(home, work, fake.base_url, oc.PROMPTS[0])
        first = run(["scan", "--json", "--db", str(db)], env).check().json()["scan"]  # the default roots
        oc.run(home, work, fake.base_url, oc.PROMPTS[1], "--continue")
        second = run(["scan", "--json", "--db", str(db)], env).check().json()["scan"]
        now = run(["now", "--json", "--db", str(db)], env).check().json()
        again = run(["now", "--json", "--db", str(db)], env).check().json()
        items = run(["items", "--json", "--db", str(db)], env).check().json()["items"]
        status = run(["status", "--json", "--db", str(db)], env).check().json()

    root = str(home / ".local" / "share" / "opencode")
    assert [r for r in first["roots"] if r["path"] == root] == [{"path": root, "exists": True, "files": 1}]
    assert (first["turns_added"], first["warnings"]) == (2, [])
    # The write tool call, its answer and the prompt: only the new turns.
    assert (second["turns_added"], second["warnings"]) == (3, [])
    assert now["run"]["failed"] == 0 and now["scan"]["turns_added"] == 0
    assert again["scan"]["turns_added"] == 0
    (session,) = status["sessions"]
    assert session["agent"] == "opencode" and session["turns"] == 5
    assert status["totals"]["captured"] == status["totals"]["turns"] == 5
    assert Counter(m for _, kind, m in item_markers(items) if kind == "decision") == Counter(oc.MARKERS[:2])
    assert {i["session_id"] for i in items} == {session["id"]}
    assert (work / "notes.md").read_text() == "parser: the fast one\n"  # the write tool really ran
