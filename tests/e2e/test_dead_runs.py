"""A dead run is noticed at once (issue 16): `checkpoint now` or `checkpoint serve` killed with SIGKILL
while its chunks are leased, and another run started at once on the same machine: the dead run's chunks
are sent in that run (not after their 300 s lease), none twice, every planted decision exactly one item,
and the run does not say "Nothing new to extract". A live but slow run's chunks are never taken over,
and the run that leaves them says who holds them (the live run's pid).

The figure issue 16 asks for, the time from the SIGKILL to the dead run's first chunk being sent again,
is printed (pytest -s tests/e2e/test_dead_runs.py)."""

from __future__ import annotations

import subprocess
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import synth
from tests.support.cli_run import CHECKPOINT, cli_env, query
from tests.support.crash_harness import (
    Lsp,
    Trigger,
    check_database,
    chunk_key,
    chunk_states,
    crash_signs,
    run_now,
    wait_until,
)
from tests.support.fake_anthropic import FakeAnthropic, Fault, RequestRecord

pytestmark = pytest.mark.e2e

CHUNK_TOKENS = 500
IN_FLIGHT = 2  # the killed run's concurrency: what it holds leased when it dies


class Scene:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.corpus = synth.write_corpus(tmp / "t", sessions=2, turns=24, chars=24 * 250, seed=16)
        self.sources = [self.corpus.claude_root, self.corpus.codex_root]
        for root in self.sources:
            root.mkdir(parents=True, exist_ok=True)
        self.db = tmp / "db" / "checkpoint.db"
        self.work = tmp / "runs"
        self.work.mkdir()
        self.markers: set[str] = set().union(*self.corpus.markers.values())

    def env(self, fake: FakeAnthropic, concurrency: int = IN_FLIGHT) -> dict[str, str]:
        # The lease is left at its default (300 s): only knowing the owner is dead makes the chunks due.
        return cli_env(self.tmp / "home", CHECKPOINT_DB=str(self.db), CHECKPOINT_EXTRACTOR="anthropic",
                       CHECKPOINT_SOURCES=":".join(map(str, self.sources)), CHECKPOINT_CHUNK_TOKENS=str(CHUNK_TOKENS),
                       CHECKPOINT_CONCURRENCY=str(concurrency), **fake.env())


def _leased(db: Path, n: int) -> Trigger:
    """Once the run holds `n` chunks leased (their requests are out; the fake's answers wait)."""
    return Trigger(f"after {n} leases", lambda: chunk_states(db)["sent"] >= n)


def _held(db: Path) -> dict[int, str]:
    return dict(query(db, "SELECT id, lease_owner FROM chunks WHERE state = 'sent'"))


def _follow(proc: subprocess.Popen[bytes], db: Path, dead: dict[int, str], killed_at: float) -> float:
    """Wait for `proc`; returns the seconds from the kill until the dead run's chunks were all leased
    again by another run (each is sent right after its lease is taken)."""
    retaken: float | None = None
    while proc.poll() is None or retaken is None:
        if retaken is None:
            rows = query(db, f"SELECT id, state, lease_owner FROM chunks WHERE id IN ({','.join(map(str, dead))})")
            if len(rows) == len(dead) and all(state == "captured" or (state == "sent" and owner != dead[i])
                                              for i, state, owner in rows):
                retaken = time.monotonic() - killed_at
        if proc.poll() is not None and retaken is None:
            raise AssertionError("the next run ended without taking the dead run's chunks")
        time.sleep(0.005)
    return retaken


def _sent_once(records: list[RequestRecord]) -> None:
    """No chunk answered twice (the dead run's requests were never answered: the fake dropped them)."""
    sends = Counter(chunk_key(r) for r in records if r.body is not None)
    assert sends and max(sends.values()) == 1, f"a chunk was sent twice: {sends.most_common(2)}"


def test_a_killed_now_s_chunks_are_sent_by_the_next_run_at_once(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    with FakeAnthropic(latency=120) as fake:  # the answers never come before the kill
        env = scene.env(fake)
        first = run_now(env, scene.work, "first", lambda: _leased(scene.db, IN_FLIGHT))
        assert first.killed, f"the first run ended before its kill:\n{first.err}"
        killed_at = first.ended
        dead = _held(scene.db)
        assert len(dead) == IN_FLIGHT
        fake.latency = 0.01
        second = subprocess.Popen([str(CHECKPOINT), "now"], env=env, stdin=subprocess.DEVNULL,
                                  stdout=(scene.work / "second.out").open("wb"), stderr=subprocess.PIPE)
        retaken = _follow(second, scene.db, dead, killed_at)
        err = second.stderr.read().decode() if second.stderr else ""
        out = (scene.work / "second.out").read_text()
        records = fake.message_requests
    assert second.returncode == 0 and not crash_signs(err), err
    assert "Nothing new to extract" not in out, out
    check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)
    _sent_once(records)
    print(f"\nkilled `checkpoint now` -> its {IN_FLIGHT} leased chunks leased and sent again by the next"
          f" `checkpoint now` {retaken:.2f}s after the SIGKILL (a new process: start, scan, claim)")


def test_a_second_run_with_nothing_else_to_do_says_the_dead_run_s_work_is_due_not_nothing_new(tmp_path: Path) -> None:
    """Everything but the killed run's chunks captured first: the rerun's only work is the dead run's."""
    scene = Scene(tmp_path)
    with FakeAnthropic(latency=0.01) as fake:
        env = scene.env(fake)
        assert run_now(env, scene.work, "all", None).rc == 0
        (scene.corpus.claude_root / "late").mkdir(parents=True)
        # more turns in a new session, and a run killed while it holds them
        late = synth.write_corpus(tmp_path / "late", sessions=1, turns=10, chars=2500, seed=99, codex_share=0)
        scene.sources.append(late.claude_root)
        scene.markers |= set().union(*late.markers.values())
        env = scene.env(fake)
        fake.latency = 120
        first = run_now(env, scene.work, "first", lambda: _leased(scene.db, 1))
        assert first.killed
        fake.latency = 0.01
        second = run_now(env, scene.work, "second", None)
        out = (scene.work / "second.out").read_text()
    assert second.rc == 0, second.err
    assert "Nothing new to extract" not in out and "captured" in out, out
    assert set(chunk_states(scene.db)) == {"captured"}


def test_a_live_slow_run_s_chunks_are_not_taken_over_and_the_other_run_names_its_pid(tmp_path: Path) -> None:
    scene = Scene(tmp_path)
    with FakeAnthropic(latency=0.01) as fake:
        fake.script(*[Fault("slow", delay=8.0)] * IN_FLIGHT)  # the slow run's first answers take 8 s
        env = scene.env(fake)
        slow = subprocess.Popen([str(CHECKPOINT), "now"], env=env, stdin=subprocess.DEVNULL,
                                stdout=(scene.work / "slow.out").open("wb"), stderr=subprocess.STDOUT)
        try:
            wait_until(lambda: len(fake.message_requests) >= IN_FLIGHT, 60, "the slow run's requests")
            other = subprocess.run([str(CHECKPOINT), "now"], env=scene.env(fake, concurrency=4), capture_output=True,
                                   text=True, timeout=120)
            assert slow.poll() is None, "the slow run ended before the other run did: nothing was tested"
        finally:
            rc = slow.wait(120)
        records = fake.message_requests
    assert rc == 0 and other.returncode == 0, other.stderr
    assert "Nothing new to extract" not in other.stdout
    assert f"leased by a live run (pid {slow.pid})" in other.stdout, other.stdout
    sends = Counter(chunk_key(r) for r in records if r.body is not None)
    assert max(sends.values()) == 1, f"a live run's chunk was sent again: {sends.most_common(2)}"
    check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)


@pytest.mark.parametrize("next_run", ["daemon", "now"])
def test_a_killed_daemon_s_chunks_are_sent_by_the_next_daemon_or_now_at_once(tmp_path: Path, next_run: str) -> None:
    scene = Scene(tmp_path)
    folder = tmp_path / "window"
    folder.mkdir()
    options = {"checkpoint": {"scope": "all", "idleSeconds": 0, "concurrency": IN_FLIGHT}}
    with FakeAnthropic(latency=120) as fake:
        env = scene.env(fake)
        daemon = Lsp(env, scene.work, "daemon", folder, options)
        try:
            wait_until(lambda: chunk_states(scene.db)["sent"] >= IN_FLIGHT, 60, "the daemon's leases")
        finally:
            daemon.kill()
        killed_at = daemon.life.ended
        dead = _held(scene.db)
        fake.latency = 0.01
        if next_run == "daemon":
            again = Lsp(env, scene.work, "again", folder, options)
            try:
                retaken = _follow_until(lambda: set(chunk_states(scene.db)) == {"captured"}, scene.db, dead,
                                        killed_at)
            finally:
                again.stop()
        else:
            follower = subprocess.Popen([str(CHECKPOINT), "now"], env=env, stdin=subprocess.DEVNULL,
                                        stdout=(scene.work / "again.out").open("wb"), stderr=subprocess.DEVNULL)
            retaken = _follow(follower, scene.db, dead, killed_at)
            out = (scene.work / "again.out").read_text()
            assert follower.returncode == 0, out
            assert "Nothing new to extract" not in out, out
        records = fake.message_requests
    check_database(scene.db, scene.sources, CHUNK_TOKENS, scene.markers, tmp_path)
    _sent_once(records)
    print(f"\nkilled `checkpoint serve` -> its {len(dead)} leased chunks leased and sent again by the next"
          f" {next_run} {retaken:.2f}s after the SIGKILL")


def _follow_until(done: Callable[[], bool], db: Path, dead: dict[int, str], killed_at: float) -> float:
    """Like _follow, for a process that does not end by itself (a daemon): until `done()`."""
    retaken: float | None = None
    deadline = time.monotonic() + 60
    while retaken is None or not done():
        assert time.monotonic() < deadline, "the dead daemon's chunks were not captured within 60 s"
        if retaken is None:
            rows = query(db, f"SELECT id, state, lease_owner FROM chunks WHERE id IN ({','.join(map(str, dead))})")
            if all(state == "captured" or (state == "sent" and owner != dead[i]) for i, state, owner in rows):
                retaken = time.monotonic() - killed_at
        time.sleep(0.005)
    return retaken
