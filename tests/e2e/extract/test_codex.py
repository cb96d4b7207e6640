"""End to end with the Codex extractor: the real `checkpoint now` process runs the real Codex CLI (0.169,
pinned), which talks over HTTP to the fake Responses API on 127.0.0.1 (never the live API), with a temp
HOME and CODEX_HOME.

The provider reaches Codex as Checkpoint's own setting `codex_config` (`-c` overrides), given here in a
Checkpoint config file, as a user with a proxy or a key-based provider would: Codex's own config.toml is
neither written nor read (`--ignore-user-config`), so a real user's login config never needs editing.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from tests.support import synth
from tests.support.agent_clis import agent_cli
from tests.support.cli_run import cli_env, item_markers, run
from tests.support.fake_openai import FakeOpenAI, provider_overrides


def test_every_planted_decision_is_captured_once_through_codex_under_a_server_error(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "corpus", sessions=4, turns=60, chars=30_000, seed=5)
    planted = Counter(m for markers in corpus.markers.values() for m in markers)
    home = tmp_path / "home"
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    db = tmp_path / "checkpoint.db"
    # Its own sessions folder is a source too: were an extraction written there, it would be read back.
    sources = [corpus.claude_root, corpus.codex_root, codex_home / "sessions"]
    with FakeOpenAI() as fake:
        config = tmp_path / "checkpoint.toml"
        overrides = ", ".join(json.dumps(o) for o in provider_overrides(fake.base_url))
        config.write_text(f"codex_config = [{overrides}]\nretry_delay = 0.05\n")
        env = cli_env(home, CHECKPOINT_EXTRACTOR="codex", CHECKPOINT_CONFIG=str(config), CODEX_HOME=str(codex_home),
                      CHECKPOINT_CODEX_COMMAND=str(agent_cli("codex")), CHECKPOINT_CODEX_MODEL="fake-model",
                      CHECKPOINT_CHUNK_TOKENS="3000", FAKE_KEY="fake-key-never-shown")
        args = ["--db", str(db), *(a for s in sources for a in ("--source", str(s)))]
        fake.script(500)

        now = run(["now", "--json", *args], env).check()
        report = now.json()["run"]
        again = run(["now", *args], env).check()
        items = run(["items", "--json", "--db", str(db)], env).check().json()["items"]
        status = run(["status", "--json", "--db", str(db)], env).check().json()

    assert "Using the Codex CLI (fake-model, through `" in now.err
    assert report["extractor"] == "codex" and report["failed"] == 0
    statuses = [r.status for r in fake.responses]
    assert statuses.count(500) == 1 and statuses.count(200) == report["tried"] == report["captured"] >= 8
    assert report["usage"]["requests"] == len(fake.responses)  # the failed attempt is counted too
    assert report["usage"]["input_tokens"] == sum(r.usage["input_tokens"] for r in fake.responses if r.usage)
    assert Counter(m for _, kind, m in item_markers(items) if kind == "decision") == planted
    assert {i["session_id"] for i in items} == set(corpus.markers)
    totals = status["totals"]
    assert totals["captured"] == totals["turns"] > 0 and totals["pending"] == totals["failed"] == 0
    assert "Nothing new to extract." in again.out
    # Codex's own runs left no session behind, and none was ingested.
    assert not (codex_home / "sessions").exists() or not any((codex_home / "sessions").rglob("*"))
    assert {s["id"] for s in status["sessions"]} == set(corpus.markers)
    assert not (codex_home / "config.toml").exists() and not (codex_home / "history.jsonl").exists()
    for stream in (now.out, now.err, again.out, again.err):
        assert "fake-key-never-shown" not in stream
