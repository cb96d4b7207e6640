"""Crash safety, end to end: `checkpoint now` and `checkpoint serve` are real processes, killed
with SIGKILL at random (seeded) moments, again and again, while their transcripts keep growing
(sometimes with a half-written last line). Then a last run finishes the work.

After every kill: the database passes `PRAGMA integrity_check`, no planted marker is an item twice,
and the counts add up. At the end: every turn is stored exactly once (the same turns, in the same
order, as one uninterrupted scan of the same files), every chunk is captured (none stuck in `sent`:
the killed runs' leases expire after CHECKPOINT_LEASE_SECONDS), every planted decision is exactly
one item, and, against the fake Anthropic API, every chunk's text was sent once except re-sends of
chunks whose sender was killed (each process sent a chunk at most once).

The in-process property test (test_invariants.py) kills at every SQL statement; this one kills
real processes anywhere: while importing, scanning, waiting on the model, committing.

CHECKPOINT_CRASH_KILLS (kills per seed, default 4) and CHECKPOINT_CRASH_SEEDS (comma-separated)
make it longer locally; the defaults keep the whole module well under a minute.
"""

from __future__ import annotations

import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import synth
from tests.support.cli_run import cli_env, query
from tests.support.crash_harness import (
    Checked,
    Life,
    Lsp,
    Trigger,
    Writer,
    after_seconds,
    check_database,
    check_partial,
    check_sends,
    chunk_states,
    crash_signs,
    run_now,
    wait_until,
)
from tests.support.fake_anthropic import FakeAnthropic, RequestRecord

KILLS = int(os.environ.get("CHECKPOINT_CRASH_KILLS", "4"))
SEEDS = [int(s) for s in os.environ.get("CHECKPOINT_CRASH_SEEDS", "11,12,13").split(",")]
LEASE = 1.0  # seconds: a killed run's chunks are due again this soon
CHUNK_TOKENS = 500
SURVIVED: dict[str, int] = {}


class Scene:
    """Transcript roots with a starting corpus and one session that keeps growing; a database."""

    def __init__(self, tmp: Path, seed: int, sessions: int = 2, turns: int = 30) -> None:
        self.tmp = tmp
        self.rng = random.Random(f"kills-{seed}")
        self.corpus = synth.write_corpus(tmp / "t", sessions=sessions, turns=turns, chars=turns * 250, seed=seed)
        self.sources = [self.corpus.claude_root, self.corpus.codex_root]
        for root in self.sources:
            root.mkdir(parents=True, exist_ok=True)
        # Its own random stream: ids drawn from the corpus's stream would repeat the corpus's ids.
        self.writer = Writer(self.corpus.claude_root, random.Random(f"writer-{seed}"))
        self.db = tmp / "db" / "checkpoint.db"
        self.work = tmp / "runs"
        self.work.mkdir()

    @property
    def markers(self) -> set[str]:
        return set().union(*self.corpus.markers.values()) | self.writer.markers

    def env(self, **extra: str) -> dict[str, str]:
        return cli_env(
            self.tmp / "home", CHECKPOINT_DB=str(self.db), CHECKPOINT_SOURCES=os.pathsep.join(map(str, self.sources)),
            CHECKPOINT_CHUNK_TOKENS=str(CHUNK_TOKENS), CHECKPOINT_LEASE_SECONDS=str(LEASE),
            CHECKPOINT_CONCURRENCY="2", **extra,
        )

    def captured(self) -> int:
        return chunk_states(self.db)["captured"]

    def trigger(self, fake: FakeAnthropic | None) -> Callable[[], Trigger]:
        """A seeded choice of when to kill the next run: after a random time (importing, scanning,
        forming chunks), once it sent k requests (answers in flight), or once it committed k chunks
        (mid-commit, give or take a few milliseconds)."""
        rng = self.rng
        mode = rng.choice(["time", "requests", "commits"] if fake else ["time", "commits"])
        if mode == "time":
            seconds = rng.uniform(0.05, 3.0)
            return lambda: after_seconds(seconds)
        if mode == "requests" and fake is not None:
            k, jitter = rng.randint(1, 8), rng.uniform(0, 0.1)

            def sent() -> Trigger:
                base = len(fake.message_requests)
                return Trigger(f"after {k} requests +{jitter:.3f}s", lambda: len(fake.message_requests) >= base + k,
                               jitter)
            return sent
        k = rng.randint(1, 6) if fake else rng.randint(1, 120)
        jitter = rng.uniform(0, 0.02)

        def committed() -> Trigger:
            base = self.captured()
            return Trigger(f"after {k} commits +{jitter:.3f}s", lambda: self.captured() >= base + k, jitter)
        return committed

    def kill_loop(self, env: dict[str, str], kills: int, grow: tuple[int, int],
                  fake: FakeAnthropic | None = None) -> list[Life]:
        """Append turns, start `checkpoint now`, SIGKILL it when a random trigger fires (unless it
        finished first); until `kills` runs were killed. Checks the database after each."""
        lives: list[Life] = []
        while sum(life.killed for life in lives) < kills:
            assert len(lives) < kills * 4, "the runs finish before they can be killed"
            self.writer.append(self.rng.randint(*grow), torn=self.rng.random() < 0.3)
            life = run_now(env, self.work, f"now-{len(lives)}", self.trigger(fake))
            if not life.killed:
                assert life.rc == 0, f"{life.name} exited {life.rc}:\n{life.err}"
                assert not crash_signs(life.err), life.err
            check_partial(self.db, self.markers)
            lives.append(life)
        return lives

    def finish(self, env: dict[str, str]) -> Life:
        """The last run, once the killed runs' leases have expired: it must finish everything."""
        self.writer.finish()
        time.sleep(LEASE + 0.1)
        life = run_now({**env, "CHECKPOINT_CONCURRENCY": "4"}, self.work, "final", None)
        assert life.rc == 0, f"final run exited {life.rc}:\n{life.err}"
        assert not crash_signs(life.err), life.err
        return life


def _report(name: str, lives: list[Life], started: float, checked: Checked) -> None:
    killed = [life for life in lives if life.killed]
    SURVIVED[name] = len(killed)
    print(f"\n{name}: survived {len(killed)} kills ({len(lives) - len(killed)} runs finished before their kill)"
          f" in {time.monotonic() - started:.1f}s: {checked.turns} turns, {checked.chunks} chunks,"
          f" {checked.markers} planted decisions, each one item; {len(checked.resent)} chunks re-sent after a kill;"
          f" kills survived so far: {sum(SURVIVED.values())}")
    for life in killed:
        print(f"  {life.name}: killed {life.trigger} ({life.ended - life.started:.2f}s after its start)")


@pytest.mark.parametrize("seed", SEEDS)
def test_checkpoint_now_killed_at_random_moments_with_the_claude_extractor(tmp_path: Path, seed: int) -> None:
    started = time.monotonic()
    scene = Scene(tmp_path, seed)
    # A model that takes its time, so that kills land while answers are awaited, too.
    with FakeAnthropic(latency=0.08) as fake:
        env = scene.env(CHECKPOINT_EXTRACTOR="anthropic", **fake.env())
        lives = scene.kill_loop(env, KILLS, grow=(3, 12), fake=fake)
        fake.latency = 0.01
        final = scene.finish(env)
        fake.wait_idle()
        records = fake.message_requests
    checked = check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)
    checked.resent = check_sends(records, [*lives, final])
    # Re-sends are bounded by what the killed runs had in flight (concurrency 2).
    assert len(checked.resent) <= 2 * sum(life.killed for life in lives)
    _report(f"claude seed {seed}", lives, started, checked)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_checkpoint_now_killed_at_random_moments_with_the_heuristic_extractor(tmp_path: Path, seed: int) -> None:
    started = time.monotonic()
    scene = Scene(tmp_path, seed, sessions=3, turns=80)
    env = scene.env(CHECKPOINT_EXTRACTOR="heuristic")
    # Bigger appends: the heuristic answers at once, so kills land in reading and committing.
    lives = scene.kill_loop(env, KILLS, grow=(20, 200))
    scene.finish(env)
    checked = check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)
    _report(f"heuristic seed {seed}", lives, started, checked)


def test_the_daemon_killed_mid_extraction_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    started = time.monotonic()
    scene = Scene(tmp_path, seed=5, sessions=3, turns=50)
    folder = tmp_path / "window"
    folder.mkdir()
    options = {"checkpoint": {"scope": "all", "idleSeconds": 0, "concurrency": 2}}
    with FakeAnthropic(latency=0.3) as fake:
        env = scene.env(CHECKPOINT_EXTRACTOR="anthropic", **fake.env())
        daemon = Lsp(env, scene.work, "daemon", folder, options)
        answered: list[int] = []

        def kill_on_the_fourth_answer(record: RequestRecord) -> None:
            # In the fake's thread, the instant the 4th answer is written: it is not committed yet,
            # and the other chunk in flight is waiting on its answer.
            answered.append(record.seq)
            if len(answered) == 4:
                daemon.proc.send_signal(signal.SIGKILL)

        fake.on_request = kill_on_the_fourth_answer
        try:
            wait_until(lambda: daemon.proc.poll() is not None, timeout=60, what="the daemon's 4th answer")
        finally:
            daemon.kill()
        fake.on_request = None
        in_flight = {r for (r,) in query(scene.db, "SELECT id FROM chunks WHERE state = 'sent'")}
        assert len(in_flight) >= 1, "the daemon was killed with no chunk in flight"
        check_partial(scene.db, scene.markers)
        fake.latency = 0.01
        final = scene.finish(scene.env(CHECKPOINT_EXTRACTOR="anthropic", **fake.env()))
        fake.wait_idle()
        records = fake.message_requests
    assert any(s.get("running") for s in daemon.statuses()), "no status said a run was going on"
    checked = check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)
    checked.resent = check_sends(records, [daemon.life, final])
    # What the daemon had in flight was sent again after its leases expired, and nothing else was.
    assert 1 <= len(checked.resent) <= 2 and all(names == ["daemon", "final"] for names in checked.resent.values())
    daemon.life.trigger = "on its 4th answer"
    _report("daemon", [daemon.life], started, checked)
