"""Which sessions can be at risk of deletion is the reader registry's answer (the agents whose CLI deletes
old transcripts: Claude Code's cleanupPeriodDays), passed to the store, which names no agent."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.sources import EXPIRING
from checkpoint.status_model import with_risk
from checkpoint.store import Store

DATA = Path(__file__).resolve().parents[2] / "data" / "samples"
CLAUDE_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"
CODEX_ROLLOUT = "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
CODEX_SESSION = "019c8a70-dda7-7f33-98ea-f30553347322"
DAY = 86_400.0


def test_only_the_registered_agents_that_delete_old_transcripts_are_at_risk(
    tmp_path: Path, settings: Settings, store: Store
) -> None:
    claude = tmp_path / "home" / ".claude" / "projects" / "-w-app" / f"{CLAUDE_SESSION}.jsonl"
    codex = tmp_path / "home" / ".codex" / "sessions" / "2026" / "02" / "23" / CODEX_ROLLOUT
    for path, sample in ((claude, DATA / "claude" / "spotter__short.jsonl"),
                         (codex, DATA / "codex" / f"localpush__{CODEX_ROLLOUT}")):
        path.parent.mkdir(parents=True)
        path.write_bytes(sample.read_bytes())
        old = time.time() - 28.5 * DAY  # a day and a half before Claude Code's default cleanupPeriodDays
        os.utime(path, (old, old))
    pipeline.scan(store, replace(settings, sources=[tmp_path / "home"]))
    assert sorted(EXPIRING) == ["claude"]

    now = time.time()
    assert store.sessions_older_than(now - 28 * DAY, EXPIRING) == [CLAUDE_SESSION]
    assert sorted(store.sessions_older_than(now - 28 * DAY, {"claude", "codex"})) == [CODEX_SESSION, CLAUDE_SESSION]
    assert store.sessions_older_than(now - 28 * DAY, ()) == []
    assert store.sessions_older_than(now - 30 * DAY, EXPIRING) == []

    sessions = with_risk(store.session_counts(), cleanup_days=30, at_risk_days=3, now=now)
    assert {s.id: (s.at_risk, s.deletes_in_days) for s in sessions} == {CLAUDE_SESSION: (True, 1),
                                                                        CODEX_SESSION: (False, None)}
    # Were Codex to delete old transcripts too, its reader saying so is all it takes.
    assert {s.id for s in with_risk(store.session_counts(), cleanup_days=30, at_risk_days=3, now=now,
                                    agents={"claude", "codex"}) if s.at_risk} == {CLAUDE_SESSION, CODEX_SESSION}
