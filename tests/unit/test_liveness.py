"""A lease owner's life as another process on the same machine tells it (checkpoint.liveness), and
what the store makes of it: a dead owner's chunks due at once, a live or untellable owner's left alone."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import liveness
from checkpoint.liveness import Process
from checkpoint.model import HoldKind
from checkpoint.store import Store

pytestmark = pytest.mark.unit  # liveness reads /proc: these run on Linux, as CI does


def _dead_child() -> Process:
    """A process that ran on this machine and is gone (reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    ticks = liveness.start_ticks(child.pid)
    assert ticks is not None
    me = liveness.current()
    assert me is not None
    child.kill()
    child.wait()
    return Process(me.host, child.pid, ticks)


def test_this_process_is_alive_and_a_killed_one_is_not() -> None:
    me = liveness.current()
    assert me is not None
    assert liveness.alive(me, me.host) is True
    assert liveness.alive(_dead_child(), me.host) is False


def test_a_pid_that_names_another_process_now_is_a_dead_owner() -> None:
    me = liveness.current()
    assert me is not None
    assert liveness.alive(replace(me, started=me.started + 1), me.host) is False


def test_an_owner_on_another_machine_or_when_this_one_cannot_be_told_is_neither_alive_nor_dead() -> None:
    me = liveness.current()
    assert me is not None
    assert liveness.alive(replace(me, host="elsewhere"), me.host) is None
    assert liveness.alive(me, None) is None


def _store_with_leases(tmp_path: Path, owners: dict[str, Process | None]) -> Store:
    """A session of one chunk per owner, each leased (300 s) by its owner, recorded as that process."""
    store = Store(tmp_path / "c.db")
    with store.transaction() as c:
        c.execute("INSERT INTO sessions (id, agent, turns) VALUES ('s', 'claude', ?)", (len(owners),))
        for seq, owner in enumerate(owners, start=1):
            c.execute("INSERT INTO turns (id, session_id, seq, role, text, source_path, line_no, tokens,"
                      " header_tokens, chunked) VALUES (?, 's', ?, 'user', 'x', 'f', 1, 1, 0, 1)", (f"t{seq}", seq))
            c.execute("INSERT INTO chunks (session_id, first_seq, last_seq, tokens, state, lease_owner, lease_until,"
                      " updated_at) VALUES ('s', ?, ?, 1, 'sent', ?, ?, 0)", (seq, seq, owner, store.clock() + 300))
    for owner, process in owners.items():
        if process is not None:
            with store.transaction() as c:
                c.execute("INSERT INTO lease_owners (owner, host, pid, started, since) VALUES (?,?,?,?,0)",
                          (owner, process.host, process.pid, process.started))
    return store


def test_only_a_dead_owners_chunks_are_claimed_before_their_lease_ends(tmp_path: Path) -> None:
    me = liveness.current()
    assert me is not None
    store = _store_with_leases(tmp_path, {"dead": _dead_child(), "live": me,
                                          "remote": replace(me, host="elsewhere"), "unrecorded": None})
    try:
        assert store.due_count() == 1
        claimed = store.claim_chunks(10, "next")
        assert [c.turns[0].seq for c in claimed] == [1]
        holds = {h.kind: h for h in store.holds()}
        assert holds[HoldKind.LEASED].pid == me.pid and holds[HoldKind.LEASED].chunks == 2  # "live", "next"
        assert holds[HoldKind.LEASED_ELSEWHERE].chunks == 2  # "remote", "unrecorded"
        assert {h.kind for h in store.session_counts()[0].held} == {HoldKind.LEASED, HoldKind.LEASED_ELSEWHERE}
        store.release_chunks("next")
        owners = {o for (o,) in store.conn.execute("SELECT owner FROM lease_owners")}
        assert owners == {"live", "remote"}  # the run that gave its chunks back, and the dead one, forgotten
    finally:
        store.close()
