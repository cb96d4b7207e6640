"""End to end with the Claude extractor: the real `checkpoint` process and the real SDK, talking over
HTTP to the fake API on 127.0.0.1 (never the live API), with a temp HOME and explicit --db/--source.

- Every fault the fake knows, at high rates: the corpus is captured completely, each planted decision
  exactly once, and after every request the fake answers, the database (opened read-only) shows a
  watermark that never passes a chunk whose answer was not committed.
- The seed's numbers (1,357 turns, ~1.31M characters) against a primary whose window forces many
  chunks: a run budget leaves the rest pending and says what finishing costs; later runs finish it.
- Primary overloaded and the fallback's window too small: the refusal is reported with its real
  cause, the chunks stay due (failed, with the cause), nothing is marked captured.
"""

from __future__ import annotations

import json
import os
import pty
import random
import re
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support import synth
from tests.support.fake_anthropic import DECISION_RE, FakeAnthropic, FaultKind, ModelSpec, RequestRecord

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
PRIMARY = "claude-haiku-4-5"
FALLBACK = "claude-sonnet-4-6"
SECRET = "sk-ant-test-never-shown-7f3a9c"  # the fake accepts any key; this one must never be printed or stored
MARKER = re.compile(r"marker-[0-9a-f]+")

STORM: dict[FaultKind, float] = {  # 53 % of message requests take a fault
    "rate_limit": 0.06, "api_error": 0.05, "unavailable": 0.05, "overloaded": 0.06, "prompt_too_long": 0.03,
    "slow": 0.02, "drop": 0.05, "drop_mid_body": 0.05, "malformed_json": 0.05, "schema_invalid": 0.04,
    "max_tokens": 0.03, "refusal": 0.02, "context_window_exceeded": 0.02,
}


@dataclass
class Cli:
    home: Path
    db: Path
    sources: list[Path]
    fake: FakeAnthropic
    fallbacks: str = FALLBACK

    def env(self) -> dict[str, str]:
        return {
            "HOME": str(self.home),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
            "ANTHROPIC_BASE_URL": self.fake.base_url,
            "ANTHROPIC_API_KEY": SECRET,
            "CHECKPOINT_MODEL": PRIMARY,
            "CHECKPOINT_FALLBACK_MODELS": self.fallbacks,
        }

    def argv(self, *args: str) -> list[str]:
        out = [str(CHECKPOINT), *args, "--db", str(self.db)]
        for source in self.sources:
            out += ["--source", str(source)]
        return out

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(self.argv(*args), env=self.env(), capture_output=True, text=True, timeout=120)
        assert "Traceback" not in result.stderr, result.stderr
        for stream in (result.stdout, result.stderr):
            assert SECRET not in stream
        return result

    def status(self) -> dict[str, Any]:
        return json.loads(self.run("status", "--json").stdout)  # type: ignore[no-any-return]


def make_cli(tmp_path: Path, fake: FakeAnthropic, sources: list[Path], **config: object) -> Cli:
    home = tmp_path / "home"
    conf = home / ".config" / "checkpoint"
    conf.mkdir(parents=True)
    # Short waits so that the storm of retries runs in seconds.
    values: dict[str, object] = {"retry_delay": 0.005, "retry_max_delay": 0.02, "request_timeout": 1.0,
                                 "max_attempts": 3, "concurrency": 2}
    values.update(config)
    conf.joinpath("config.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items()))
    return Cli(home, tmp_path / "db" / "checkpoint.db", sources, fake)


def markers_in(text: str) -> list[str]:
    return [MARKER.findall(m.group(0))[0] for m in DECISION_RE.finditer(text)]


class Watch:
    """Run after every /v1/messages request the fake answers: the database as committed so far must
    keep the promise. Opened read-only; one read transaction, so one consistent snapshot."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.checks = 0
        self.captured_seen = 0

    def __call__(self, _record: RequestRecord) -> None:
        if not self.db.exists():
            return
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            conn.execute("BEGIN")
            self.check(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
        self.checks += 1

    def check(self, conn: sqlite3.Connection) -> None:
        items: dict[str, set[str]] = {}  # marker -> turn ids cited by its item
        for statement, turn_ids in conn.execute("SELECT statement, turn_ids FROM items"):
            for marker in MARKER.findall(statement):
                items.setdefault(marker, set()).update(json.loads(turn_ids))
        captured = 0
        for session_id, watermark in conn.execute("SELECT id, watermark FROM sessions").fetchall():
            covered: set[int] = set()
            for first, last, start, end, parts, state in conn.execute(
                "SELECT first_seq, last_seq, char_start, char_end, parts, state FROM chunks WHERE session_id = ?",
                (session_id,),
            ).fetchall():
                if first <= watermark:
                    assert state == "captured", f"{session_id}: watermark {watermark} passes a {state} chunk"
                    covered.update(range(first, last + 1))
                if state != "captured":
                    continue
                captured += 1
                for turn_id, text in conn.execute(
                    "SELECT id, text FROM turns WHERE session_id = ? AND seq BETWEEN ? AND ?",
                    (session_id, first, last),
                ):
                    for marker in markers_in(text[start:end] if parts > 1 else text):
                        assert turn_id in items.get(marker, set()), f"captured chunk lacks the item for {marker}"
            assert covered >= set(range(1, watermark + 1)), f"{session_id}: turns under the watermark in no chunk"
        self.captured_seen = max(self.captured_seen, captured)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def item_markers(cli: Cli) -> Counter[str]:
    conn = sqlite3.connect(f"file:{cli.db}?mode=ro", uri=True)
    try:
        return Counter(m for (s,) in conn.execute("SELECT statement FROM items") for m in MARKER.findall(s))
    finally:
        conn.close()


def run_until_done(cli: Cli, runs: int, *args: str) -> list[subprocess.CompletedProcess[str]]:
    results = []
    for _ in range(runs):
        results.append(cli.run("now", *args))
        if results[-1].returncode == 0:
            break
    return results


# -- every fault, high rates ------------------------------------------------------------------------


def test_fault_storm_captures_everything_exactly_once_and_the_watermark_never_runs_ahead(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=4, turns=60, chars=30_000, seed=3)
    # A primary window this small makes `now` form small chunks, and the faults re-split some of them.
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=6_000, max_tokens=8_000))
    cli = make_cli(tmp_path, fake, [corpus.claude_root, corpus.codex_root], output_tokens=1024)
    watch = Watch(cli.db)
    fake.on_request = watch
    fake.script(*STORM)  # each kind at least once, first; then at random
    fake.set_rates(STORM, seed=42, retry_after=0.01, delay=1.5)

    results = run_until_done(cli, 10)
    fake.wait_idle()
    fake.check()  # an invariant broken after any request fails here

    assert results[-1].returncode == 0, results[-1].stdout
    first = results[0].stdout
    assert f"Using Claude ({PRIMARY}, falling back to {FALLBACK}) at {fake.base_url} (ANTHROPIC_API_KEY is set)." \
        in first
    assert re.search(r"Used \d+ requests, [\d,]+ tokens \(input [\d,]+, cache write [\d,]+, cache read [\d,]+, "
                     r"output [\d,]+\): \$\d", first)
    # The storm did hit: faults of every kind, the fallback asked (a refusal sends a chunk there at
    # once), chunks re-split.
    faults = Counter(r.fault for r in fake.message_requests if r.fault)
    assert set(faults) == set(STORM)
    assert {r.model for r in fake.message_requests} == {PRIMARY, FALLBACK}
    assert any(re.search(r"\d+ re-split into smaller chunks", r.stdout) for r in results)
    assert watch.checks == len(fake.message_requests) and watch.captured_seen > 0

    planted = set().union(*corpus.markers.values())
    assert item_markers(cli) == Counter(dict.fromkeys(planted, 1))
    status = cli.status()
    assert status["totals"]["captured"] == status["totals"]["turns"] > 0
    assert status["totals"]["pending"] == status["totals"]["failed"] == 0
    assert all(s["watermark"] == s["turns"] for s in status["sessions"])
    # What was spent, per session, adds up to every answered request, and is never zero.
    assert status["usage"]["requests"] == len(fake.message_requests)
    assert status["usage"]["cost_usd"] > 0
    assert SECRET.encode() not in cli.db.read_bytes()
    assert all(SECRET not in json.dumps(r.headers) for r in fake.requests)


# -- the seed's numbers -----------------------------------------------------------------------------


def test_seed_sized_session_with_a_budget_is_finished_by_later_runs(tmp_path: Path, fake: FakeAnthropic) -> None:
    rng = random.Random(1357)
    session_id = "5eed0000-1357-4131-8000-00000000c1a0"
    plan = synth.plan_session(rng, 1357, 1_310_000, "/home/dev/seed")
    root = tmp_path / "claude" / "projects"
    path = root / "-home-dev-seed" / f"{session_id}.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"".join(synth.dumps(r) for r in synth.claude_lines(session_id, plan, "/home/dev/seed", rng)))
    planted = {t.marker for t in plan if t.marker}
    assert sum(len(t.text) for t in plan) > 1_250_000

    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=16_000, max_tokens=8_000))
    cli = make_cli(tmp_path, fake, [root], output_tokens=2048, concurrency=3, request_timeout=20.0)
    watch = Watch(cli.db)
    fake.on_request = watch

    first = cli.run("now", "--max-cost", "0.15")
    assert first.returncode == 0, first.stdout + first.stderr
    assert "Stopped: cost budget of $0.15 reached; the rest stays pending for the next run." in first.stdout
    left = re.search(r"Left for the next run: (\d+) chunks \(~([\d,]+) tokens by the local estimate\); finishing "
                     r"them should cost about \$([\d.]+) \((\d+) requests, ~([\d,]+) tokens\)\.", first.stdout)
    assert left, first.stdout
    status = cli.status()
    [session] = status["sessions"]
    turns = session["turns"]  # the 1,357 conversation turns, plus their tool calls and results
    assert turns >= 1357
    assert 0 < session["captured"] < turns and session["failed"] == 0
    assert session["pending"] == turns - session["captured"]
    assert session["usage"]["cost_usd"] <= 0.15
    chunks_first = len(fake.message_requests)
    assert chunks_first >= 10  # the window forced many chunks

    second = cli.run("now", "--max-requests", "15")
    assert "Stopped: request budget of 15 reached" in second.stdout
    assert len(fake.message_requests) == chunks_first + 15
    third = cli.run("now")
    assert third.returncode == 0 and "Stopped" not in third.stdout and "Left for the next run" not in third.stdout
    fake.wait_idle()
    fake.check()

    status = cli.status()
    [session] = status["sessions"]
    assert session["captured"] == session["watermark"] == turns
    assert item_markers(cli) == Counter(dict.fromkeys(planted, 1))
    total_chunks = len(fake.message_requests)
    assert total_chunks >= 40
    # The estimate after the first run was of the right size: within a factor of two of what it took.
    predicted = float(left.group(3))
    spent_after = status["usage"]["cost_usd"] - session_cost_after_first(status, first)
    assert predicted / 2 <= spent_after <= predicted * 2
    assert watch.checks == total_chunks


def session_cost_after_first(status: dict[str, Any], first: subprocess.CompletedProcess[str]) -> float:
    match = re.search(r"Used \d+ requests, [\d,]+ tokens \(.*\): \$(\d+\.\d+)", first.stdout)
    assert match, first.stdout
    return float(match.group(1))


# -- a fallback that does not fit -------------------------------------------------------------------


def test_overloaded_primary_and_a_fallback_too_small_keep_the_chunks_due_with_the_real_cause(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=24, chars=9_000, seed=5, codex_share=0.0)
    fake.add_model(ModelSpec("claude-tiny", max_input_tokens=1_500, max_tokens=1_024))
    cli = make_cli(tmp_path, fake, [corpus.claude_root], request_timeout=20.0)
    cli.fallbacks = "claude-tiny"
    fake.set_rates({"overloaded": 1.0}, seed=1)

    result = cli.run("now")
    assert result.returncode == 1
    cause = re.search(
        rf"primary {PRIMARY} overloaded \(529\) after 3 attempts; fallback claude-tiny refused: "
        r"chunk is ([\d,]+) tokens, its window allows 1,500 - 1,024 reserve", result.stdout)
    assert cause, result.stdout
    assert int(cause.group(1).replace(",", "")) > 1_500 - 1_024
    assert {r.model for r in fake.message_requests} == {PRIMARY}  # never sent to the fallback

    status = cli.status()
    assert status["totals"]["captured"] == 0 and status["totals"]["pending"] == 0
    assert status["totals"]["failed"] == status["totals"]["turns"] > 0
    [session] = status["sessions"]
    assert session["watermark"] == 0 and any("fallback claude-tiny refused" in c for c in session["causes"])
    text = cli.run("status").stdout
    assert "failing: primary claude-haiku-4-5 overloaded (529) after 3 attempts; fallback claude-tiny refused" in text
    conn = sqlite3.connect(f"file:{cli.db}?mode=ro", uri=True)
    states = Counter(s for (s,) in conn.execute("SELECT state FROM chunks"))
    assert states == {"failed": sum(states.values())}
    assert conn.execute("SELECT count(*) FROM items").fetchone()[0] == 0
    assert conn.execute("SELECT min(attempts) FROM chunks").fetchone()[0] == 1
    conn.close()

    # Still due: once the primary is back, the next run captures every chunk.
    fake.clear_faults()
    again = cli.run("now")
    assert again.returncode == 0
    assert item_markers(cli) == Counter(dict.fromkeys(set().union(*corpus.markers.values()), 1))
    assert cli.status()["totals"]["captured"] == status["totals"]["turns"]


# -- said aloud, on a terminal ----------------------------------------------------------------------


def test_progress_on_a_terminal_and_the_summary(tmp_path: Path, fake: FakeAnthropic) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=30, chars=12_000, seed=8, codex_share=0.0)
    cli = make_cli(tmp_path, fake, [corpus.claude_root], chunk_tokens=1_500, request_timeout=20.0)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(cli.argv("now"), env=cli.env(), stdout=subprocess.PIPE, stderr=follower, text=True)
    os.close(follower)
    chunks = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks += data
    out, _ = proc.communicate(timeout=60)
    os.close(leader)
    assert proc.returncode == 0
    terminal = chunks.decode()
    assert re.search(r"\rextracting: (\d+)/\1 chunks · [\d,]+ tokens · \$0\.\d{4}", terminal), terminal
    assert SECRET not in terminal and SECRET not in out
    assert re.search(r"Extracted \d+ chunks with the anthropic extractor: \d+ captured, 0 failed; \d+ new items", out)
    status = cli.run("status").stdout
    assert re.search(r"COST\s+TITLE", status) and re.search(r"\$0\.\d{4}", status)
    assert re.search(r"Spent on extraction so far: \d+ requests", status)


def test_claude_asked_for_without_a_key_says_so_and_runs_offline(tmp_path: Path, fake: FakeAnthropic) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=10, chars=3_000, seed=9, codex_share=0.0)
    cli = make_cli(tmp_path, fake, [corpus.claude_root])
    env = {k: v for k, v in cli.env().items() if k != "ANTHROPIC_API_KEY"}
    result = subprocess.run(cli.argv("now", "--extractor", "anthropic"), env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0
    assert ("The Claude extractor was asked for, but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set: "
            "using the offline heuristic extractor instead") in result.stdout
    assert fake.requests == []
