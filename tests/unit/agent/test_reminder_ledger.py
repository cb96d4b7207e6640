"""The reminders' ledger is written only into the user's own private folders, never through a symlink,
and read back as it was written."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from checkpoint.agent.reminder_ledger import (
    LEDGER_KEEP_DAYS,
    PRUNE_EVERY_SECONDS,
    PRUNED,
    NotPrivateLedger,
    forget_ledger,
    ledger_path,
    read_ledger,
    write_ledger,
)


def _db(tmp_path: Path) -> str:
    (tmp_path / "data").mkdir(mode=0o700)
    return str(tmp_path / "data" / "checkpoint.db")


def test_a_ledger_is_written_private_and_read_back_and_forgotten(tmp_path: Path) -> None:
    db = _db(tmp_path)
    write_ledger(db, "s1", {"/w/app.py": {"abc": "123"}})
    assert read_ledger(db, "s1") == {"/w/app.py": {"abc": "123"}}
    assert os.stat(ledger_path(db, "s1")).st_mode & 0o777 == 0o600
    assert os.stat(os.path.dirname(ledger_path(db, "s1"))).st_mode & 0o777 == 0o700
    forget_ledger(db, "s1")
    assert read_ledger(db, "s1") == {}


def test_an_agent_folder_others_may_write_gets_no_ledger(tmp_path: Path) -> None:
    db = _db(tmp_path)
    agent = tmp_path / "data" / "checkpoint.db.agent"
    agent.mkdir(mode=0o700)
    agent.chmod(0o777)
    with pytest.raises(NotPrivateLedger, match="not Checkpoint's own private folder"):
        write_ledger(db, "s1", {})
    assert not (agent / "reminders").exists()


def test_a_symlinked_reminders_folder_or_ledger_file_is_never_written_through(tmp_path: Path) -> None:
    db = _db(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    agent = tmp_path / "data" / "checkpoint.db.agent"
    agent.mkdir(mode=0o700)
    (agent / "reminders").symlink_to(elsewhere)
    with pytest.raises(NotPrivateLedger):
        write_ledger(db, "s1", {})
    (agent / "reminders").unlink()
    write_ledger(db, "s1", {})  # makes the real folder
    target = tmp_path / "target.json"
    target.write_text("mine")
    tmp = Path(f"{ledger_path(db, 's2')}.{os.getpid()}.tmp")
    tmp.symlink_to(target)
    with pytest.raises(OSError):
        write_ledger(db, "s2", {"/w/a.py": {"x": "y"}})
    assert target.read_text() == "mine"
    Path(ledger_path(db, "s3")).symlink_to(target)
    assert read_ledger(db, "s3") == {}  # not read through a symlink either


def test_a_database_folder_others_may_write_gets_no_ledger(tmp_path: Path) -> None:
    db = _db(tmp_path)
    (tmp_path / "data").chmod(0o777)
    with pytest.raises(NotPrivateLedger, match="database directory"):
        write_ledger(db, "s1", {})


def test_ledgers_untouched_for_a_week_are_removed_when_a_session_starts_at_most_once_a_day(tmp_path: Path) -> None:
    db = _db(tmp_path)
    write_ledger(db, "s1", {})  # the first session: the folder is looked at (nothing to remove)
    marker = os.path.join(os.path.dirname(ledger_path(db, "s1")), PRUNED)
    week, day = time.time() - (LEDGER_KEEP_DAYS + 1) * 86_400, time.time() - PRUNE_EVERY_SECONDS - 60
    os.utime(ledger_path(db, "s1"), (week, week))
    os.utime(marker, (day, day))
    write_ledger(db, "s2", {})  # a new session, a day later: the folder is looked at again
    assert not os.path.exists(ledger_path(db, "s1")) and os.path.exists(ledger_path(db, "s2"))
    os.utime(ledger_path(db, "s2"), (week, week))
    write_ledger(db, "s3", {})  # looked at less than a day ago: not again
    assert os.path.exists(ledger_path(db, "s2"))
    os.utime(marker, (day, day))
    write_ledger(db, "s4", {})
    assert not os.path.exists(ledger_path(db, "s2")) and os.path.exists(ledger_path(db, "s3"))
    write_ledger(db, "s4", {"/w/a.py": {"i": "d"}})  # an old session's ledger written again: no look
    assert read_ledger(db, "s4") == {"/w/a.py": {"i": "d"}}
