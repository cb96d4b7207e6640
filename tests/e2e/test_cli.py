"""The `checkpoint` command as a user meets it: a real process, HOME pointed at a temp dir, no API key.

`checkpoint now` on a fresh machine runs the offline heuristic extractor over the default roots and
prints what it captured; with no transcripts it says where it looked. The --json shapes are the
contract other tools read. Settings precedence (config file < environment < flags) and two processes
running at once on one database are checked here too.
"""

from __future__ import annotations

import dataclasses
import json
import random
import stat
import subprocess
import sys
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

from checkpoint.config import load
from checkpoint.model import Usage
from tests.support import synth
from tests.support.agent_corpus import PlannedSession, write_claude_session
from tests.support.cli_run import CHECKPOINT, CRASH_SIGNS, cli_env, item_markers, query, run, start
from tests.support.oracle import clean_scan

TOTALS_KEYS = {"turns", "captured", "pending", "failed"}
SESSION_KEYS = {"id", "agent", "title", "cwd", "turns", "captured", "pending", "failed", "watermark", "last_ts",
                "causes", "dropped", "problems"}
PROBLEM_KEYS = {"path", "line", "message", "session_id"}
ITEM_KEYS = {"id", "session_id", "kind", "statement", "rationale", "confidence", "turn_ids", "files", "state",
             "extractor", "created_at", "session_title", "cwd", "sources"}
SOURCE_KEYS = {"turn_id", "path", "line", "timestamp"}


def _sessions_in_home(home: Path, turns: int = 20, seed: int = 7) -> dict[str, set[str]]:
    """One Claude Code and one Codex session where those tools keep them (~/.claude/projects,
    ~/.codex/sessions). Returns the planted markers per session."""
    rng = random.Random(seed)
    markers: dict[str, set[str]] = {}
    claude_id, codex_id = (str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(2))
    codex_dir = home / ".codex" / "sessions" / "2026" / "01" / "05"
    for session_id, path, cwd in (
        (claude_id, home / ".claude" / "projects" / "-home-dev-app" / f"{claude_id}.jsonl", "/home/dev/app"),
        (codex_id, codex_dir / f"rollout-2026-01-05T10-00-00-{codex_id}.jsonl", "/home/dev/tool"),
    ):
        plan = synth.plan_session(rng, turns, 8_000, cwd)
        markers[session_id] = {t.marker for t in plan if t.marker}
        records = (synth.claude_lines(session_id, plan, cwd, rng) if session_id == claude_id
                   else synth.codex_lines(session_id, plan, cwd))
        path.parent.mkdir(parents=True)
        path.write_bytes(b"".join(synth.dumps(r) for r in records))
    return markers


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_now_on_a_fresh_machine_without_transcripts_says_where_it_looked(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = cli_env(home)

    result = run(["now"], env).check()

    claude, codex = home / ".claude" / "projects", home / ".codex" / "sessions"
    archive, desktop = home / ".codex" / "archived_sessions", home / ".config" / "Claude" / "local-agent-mode-sessions"
    gemini, copilot = home / ".gemini" / "tmp", home / ".copilot" / "session-state"
    opencode = home / ".local" / "share" / "opencode"
    assert (f"No transcripts found. Looked in: {claude} (missing), {codex} (missing), {archive} (missing),"
            f" {desktop} (missing), {gemini} (missing), {copilot} (missing), {opencode} (missing).") in result.err
    assert "--source DIR or CHECKPOINT_SOURCES" in result.err and "No transcripts found" not in result.out
    # The offline notice: two short lines, not one of ~560 characters.
    notice = result.out.splitlines()[:2]
    assert notice[0].startswith("Using the offline heuristic extractor (phrase rules, no network): no "
                                "ANTHROPIC_API_KEY; `claude` not found on PATH;"), notice
    assert notice[1].startswith("For a model: ") and "checkpoint model serve" in notice[1]
    assert all(len(line) <= 160 for line in notice), notice
    db = home / ".local" / "share" / "checkpoint" / "checkpoint.db"
    assert db.is_file()
    assert _mode(db) == 0o600 and _mode(db.parent) == 0o700

    status = run(["status", "--json"], env).check().json()
    assert status["totals"] == {"turns": 0, "captured": 0, "pending": 0, "failed": 0}
    assert status["sessions"] == [] and status["problems"] == []
    assert run(["items", "--json"], env).check().json() == {"items": []}
    assert "No items captured yet" in run(["items"], env).check().out


def test_now_on_a_fresh_machine_captures_from_the_default_roots_and_says_what(tmp_path: Path) -> None:
    home = tmp_path / "home"
    markers = _sessions_in_home(home)
    env = cli_env(home)
    planted = {m for ms in markers.values() for m in ms}
    assert 0 < len(planted) <= 10  # all fit in the "captured in this run" list

    result = run(["now"], env).check()

    out = result.out
    assert (f"Looked in: {home}/.claude/projects (1 transcript), {home}/.codex/sessions (1 transcript),"
            f" {home}/.codex/archived_sessions (missing),"
            f" {home}/.config/Claude/local-agent-mode-sessions (missing),"
            f" {home}/.gemini/tmp (missing), {home}/.copilot/session-state (missing),"
            f" {home}/.local/share/opencode (missing).") in out
    assert "Using the offline heuristic extractor (phrase rules, no network): no ANTHROPIC_API_KEY; `claude` not " \
           "found on PATH;" in out
    # Offline, it says plainly what the phrase rules catch, and points at recall and at a model.
    assert "most of what a session decides is missed" in out and "`checkpoint search --said WORDS`" in out
    assert "Extracted " in out and "with the heuristic extractor" in out
    assert "Nothing new to extract." not in out
    status = run(["status", "--json"], env).check().json()
    totals = status["totals"]
    assert totals["turns"] > 0 and totals["captured"] == totals["turns"]
    assert totals["pending"] == totals["failed"] == 0
    # One line per session: short id, agent, its turn counts.
    for s in status["sessions"]:
        row = next(line for line in out.splitlines() if line.strip().startswith(s["id"][:8]))
        assert row.split()[1:6] == [s["agent"], str(s["turns"]), str(s["captured"]), "0", "0"]
    assert (f"Total: {len(status['sessions'])} sessions, {totals['turns']} turns: {totals['turns']} captured, "
            "0 pending, 0 failed.") in out
    # What it captured: every planted decision, with where it came from.
    assert "Captured in this run:" in out
    for m in planted:
        row = next(line for line in out.splitlines() if m in line)
        assert row.split()[0] == "decision" and ".jsonl:" in row
    items = run(["items", "--json"], env).check().json()["items"]
    assert Counter(m for _, kind, m in item_markers(items) if kind == "decision") == Counter(planted)

    # Stable machine output: the keys others read are there (more may be added around them), and the
    # same bytes come back when asked again.
    assert {"totals", "sessions", "problems"} <= set(status) and set(totals) == TOTALS_KEYS
    assert all(set(s) >= SESSION_KEYS for s in status["sessions"])
    assert all(set(i) >= ITEM_KEYS for i in items)
    assert all(set(src) >= SOURCE_KEYS for i in items for src in i["sources"])
    assert all(src["path"].startswith(str(home)) and src["line"] >= 1 for i in items for src in i["sources"])
    first = run(["items", "--json"], env).check().out
    assert run(["items", "--json"], env).check().out == first
    assert json.loads(first)["items"] == items

    # Human status: the same counts at a glance.
    human = run(["status"], env).check().out
    assert f"Total: {len(status['sessions'])} sessions, {totals['turns']} turns" in human
    assert "Not sent, by policy:" in human

    # A second run: nothing new, and it says so.
    again = run(["now"], env).check().out
    assert "Nothing new to extract." in again
    assert "Captured in this run" not in again


def test_scan_and_now_json_reports(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _sessions_in_home(home)
    env = cli_env(home)
    scan = run(["scan", "--json"], env).check().json()
    assert set(scan) == {"scan", "totals"}
    assert set(scan["scan"]) >= {"roots", "files_seen", "files_read", "turns_added", "chunks_created", "warnings"}
    assert scan["totals"]["pending"] == scan["totals"]["turns"] == scan["scan"]["turns_added"] > 0
    now = run(["now", "--json"], env).check()
    report = now.json()
    assert set(report) >= {"scan", "run", "totals"}
    assert set(report["run"]) >= {"extractor", "tried", "captured", "failed", "items_added", "items_attributed",
                                  "stopped_by", "failures"}
    assert report["run"]["extractor"] == "heuristic"
    assert report["run"]["tried"] == report["run"]["captured"] == scan["scan"]["chunks_created"]
    assert "offline heuristic extractor" in now.err  # said aloud, but not into the JSON


def test_settings_precedence_config_file_then_environment_then_flags(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    a = synth.write_corpus(tmp_path / "a", sessions=2, turns=40, chars=20_000, seed=1)
    b = synth.write_corpus(tmp_path / "b", sessions=1, turns=40, chars=20_000, seed=2)
    a_roots = [a.claude_root, a.codex_root]

    def expected_chunks(chunk_tokens: int) -> int:
        return clean_scan(tmp_path / f"expect-{chunk_tokens}.db", a_roots, chunk_tokens).chunks_created

    by_budget = {n: expected_chunks(n) for n in (400, 800, 1600)}
    assert len(set(by_budget.values())) == 3  # the three budgets are told apart by their chunk counts
    config = tmp_path / "config.toml"
    config.write_text(f'db = "{tmp_path / "from-config.db"}"\nchunk_tokens = 400\n')
    sources = ":".join(str(r) for r in a_roots)

    # The config file alone.
    env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_SOURCES=sources)
    scan = run(["scan", "--json"], env).check().json()
    assert scan["scan"]["chunks_created"] == by_budget[400]
    assert (tmp_path / "from-config.db").is_file()

    # The environment beats the config file.
    env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_SOURCES=sources,
                  CHECKPOINT_DB=str(tmp_path / "from-env.db"), CHECKPOINT_CHUNK_TOKENS="800")
    scan = run(["scan", "--json"], env).check().json()
    assert scan["scan"]["chunks_created"] == by_budget[800]
    assert scan["totals"]["turns"] == sum(_turns(tmp_path / "from-env.db", s) for s in a.turns)
    assert [r["path"] for r in scan["scan"]["roots"]] == [str(r) for r in a_roots]

    # Flags beat both: another database, other roots, another budget.
    flagged = tmp_path / "flags" / "from-flags.db"
    scan = run(["scan", "--json", "--db", str(flagged), "--source", str(b.claude_root), "--source",
                str(b.codex_root), "--chunk-tokens", "1600"], env).check().json()
    assert [r["path"] for r in scan["scan"]["roots"]] == [str(b.claude_root), str(b.codex_root)]
    assert {s for (s,) in query(flagged, "SELECT id FROM sessions")} == set(b.turns)
    assert {s for (s,) in query(tmp_path / "from-env.db", "SELECT id FROM sessions")} == set(a.turns)
    assert _mode(flagged) == 0o600 and _mode(flagged.parent) == 0o700
    want = clean_scan(tmp_path / "expect-b.db", [b.claude_root, b.codex_root], 1600)
    assert scan["scan"]["chunks_created"] == want.chunks_created
    # Nothing went to the default location.
    assert not (home / ".local").exists()


def test_a_bad_setting_is_named_with_where_it_came_from_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    config = tmp_path / "config.toml"
    db = tmp_path / "db" / "c.db"
    cases = [
        ({"CHECKPOINT_CHUNK_TOKENS": "lots"}, "", "environment variable CHECKPOINT_CHUNK_TOKENS: chunk_tokens: "
         "expected int, got 'lots'"),
        ({"CHECKPOINT_REDACT": "maybe"}, "", "environment variable CHECKPOINT_REDACT: redact: expected bool"),
        ({}, "chunk_token = 400\n", f"{config}: unknown setting: chunk_token"),
        ({}, 'sources = "/one/path"\n', f"{config}: sources: expected a list of paths, got '/one/path'"),
        ({}, "max_cost = [\n", f"{config}: not valid TOML"),
        ({}, "lease_seconds = 0\n", "lease_seconds: must be more than 0"),
    ]
    for env_extra, toml, said in cases:
        config.write_text(toml)
        env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db), **env_extra)
        result = run(["scan"], env)
        assert (result.rc, result.out) == (2, ""), result
        assert said in result.err and "Traceback" not in result.err, result.err
        assert not db.exists()
    # The same values, well formed, are taken: a string from the environment becomes the field's type.
    config.write_text(f'sources = ["{tmp_path / "none"}"]\nmax_cost = 2\n')
    env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db), CHECKPOINT_CHUNK_TOKENS=" 900 ",
                  CHECKPOINT_REDACT="off")
    assert run(["scan", "--json"], env).check().json()["scan"]["roots"][0]["path"] == str(tmp_path / "none")
    settings = load(environ={"CHECKPOINT_CHUNK_TOKENS": " 900 ", "CHECKPOINT_REDACT": "off"})
    assert (settings.chunk_tokens, settings.redact) == (900, False)


def test_scan_and_status_start_without_pydantic_the_sdk_or_threads(tmp_path: Path) -> None:
    """Every command's start is paid on each call (hooks, scripts, the status line): `scan` and
    `status` must not load what only extraction or the daemon needs."""
    corpus = synth.write_corpus(tmp_path / "c", sessions=1, turns=20, chars=10_000, seed=3)
    env = cli_env(tmp_path / "home", CHECKPOINT_SOURCES=str(corpus.claude_root), CHECKPOINT_DB=str(tmp_path / "c.db"))
    heavy = ("pydantic", "anthropic", "pygls", "concurrent.futures")
    for n, args in enumerate((["scan"], ["status", "--json"], ["scan", "--json"])):
        # socket too (2.7 ms), once the first run has cached the redaction table: building it loads
        # detect-secrets, and that loads multiprocessing and socket.
        names = heavy if n == 0 else (*heavy, "socket")
        probe = ("import sys; from checkpoint.cli import main; rc = main(sys.argv[1:]); "
                 f"print(sorted(m for m in {names!r} if m in sys.modules)); sys.exit(rc)")
        proc = subprocess.run([sys.executable, "-c", probe, *args], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "[]", (args, proc.stdout[-300:])


def _turns(db: Path, session_id: str) -> int:
    return int(query(db, "SELECT turns FROM sessions WHERE id = ?", session_id)[0][0])


def test_two_processes_at_once_capture_every_turn_exactly_once(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "c", sessions=6, turns=240, chars=150_000, seed=11)
    db = tmp_path / "db" / "checkpoint.db"
    env = cli_env(tmp_path / "home", CHECKPOINT_SOURCES=f"{corpus.claude_root}:{corpus.codex_root}")
    args = ["now", "--json", "--db", str(db), "--chunk-tokens", "1000"]

    procs = [start(args, env, tmp_path / f"out{i}", tmp_path / f"err{i}") for i in range(2)]
    codes = [p.wait(timeout=120) for p in procs]

    reports: list[dict[str, Any]] = []
    for i, code in enumerate(codes):
        err = (tmp_path / f"err{i}").read_text()
        for sign in CRASH_SIGNS:
            assert sign not in err, err
        assert code == 0, err
        reports.append(json.loads((tmp_path / f"out{i}").read_text()))
    status = run(["status", "--json", "--db", str(db)], env).check().json()
    total = status["totals"]["turns"]
    assert status["totals"] == {"turns": total, "captured": total, "pending": 0, "failed": 0}
    # Every turn stored once: the two scans together added each turn once.
    assert sum(r["scan"]["turns_added"] for r in reports) == total
    assert query(db, "SELECT count(*), count(DISTINCT id) FROM turns") == [(total, total)]
    # Every chunk sent once, by one of the two.
    chunks = query(db, "SELECT count(*) FROM chunks")[0][0]
    assert sum(r["run"]["tried"] for r in reports) == sum(r["run"]["captured"] for r in reports) == chunks
    assert query(db, "SELECT count(*) FROM chunks WHERE state != 'captured' OR attempts != 0") == [(0,)]
    # Every planted decision once.
    items = run(["items", "--json", "--db", str(db)], env).check().json()["items"]
    got = Counter((sid, m) for sid, kind, m in item_markers(items) if kind == "decision")
    assert got == Counter((sid, m) for sid, ms in corpus.markers.items() for m in ms)


def test_a_reader_that_goes_away_is_no_crash_and_loses_nothing(tmp_path: Path) -> None:
    """`checkpoint now | head -1`, `checkpoint items | head`: stdout closes early. No traceback, the
    exit status a shell gives a command ended by SIGPIPE, and the run's work is committed all the same."""
    home = tmp_path / "home"
    markers = _sessions_in_home(home, turns=60)
    env = cli_env(home)

    for args in (["now"], ["items"], ["status"]):
        proc = subprocess.Popen([str(CHECKPOINT), *args], env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the first byte
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=60) == 141, err
        assert "Traceback" not in err and "Exception ignored" not in err, err

    status = run(["status", "--json"], env).check().json()
    assert status["totals"]["captured"] == status["totals"]["turns"] > 0
    items = run(["items", "--json"], env).check().json()["items"]
    got = Counter((sid, m) for sid, kind, m in item_markers(items) if kind == "decision")
    assert got == Counter((sid, m) for sid, ms in markers.items() for m in ms)


def test_usage_in_status_json_names_every_field() -> None:
    """`Usage.as_dict` is written by hand (asdict deep-copies, once per session of a status): it must
    still carry every field, with its value."""
    usage = Usage(**{f.name: i + 1 for i, f in enumerate(dataclasses.fields(Usage))})
    assert usage.as_dict() == dataclasses.asdict(usage)


def test_search_said_finds_what_was_said_in_any_language_with_its_transcript_line(tmp_path: Path) -> None:
    """`checkpoint search --said`: a few characters of a Chinese sentence, or English words, find the turn
    that said them, with its session, agent and transcript line; --json the same, machine-readable."""
    projects = tmp_path / "projects"
    path = write_claude_session(projects, PlannedSession("sess-zh", str(tmp_path / "ws"), [
        "我们决定使用Redis作为会话缓存。", "We'll keep the Justfile for local tasks."]))
    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(tmp_path / "c.db"), CHECKPOINT_SOURCES=str(projects))
    run(["scan"], env).check()
    text = run(["search", "--said", "会话缓存"], env).check().out
    assert f"[assistant] claude session sess-zh · 2026-11-01 10:00 · {path}:2" in text, text
    assert "我们决定使用Redis作为会话缓存。" in text and "1 passage found in every workspace" in text
    hits = json.loads(run(["search", "--said", "justfile", "--json"], env).check().out)["hits"]
    assert [(h["session_id"], h["transcript"], h["line"], h["role"]) for h in hits] == [
        ("sess-zh", str(path), 4, "assistant")]
