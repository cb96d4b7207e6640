"""The database file as the user set it: read commands (status, items, search) work on a database the
user made read-only, and its mode is never changed (a new one is created 0600); a command that writes
says it cannot. `supersede` refuses a replacement from another workspace, naming both."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.support.cli_home import SESSION, Home, claude_record, line

OTHER_SESSION = "0bad1a9e-0000-4000-8000-00000000beef"


def _captured(tmp_path: Path) -> tuple[Home, Path]:
    home = Home(tmp_path)
    db = tmp_path / "db" / "checkpoint.db"
    home.env["CHECKPOINT_DB"] = str(db)
    home.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2)))
    home.cli("now").check()
    return home, db


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_read_commands_work_on_a_read_only_database_and_leave_its_mode(tmp_path: Path) -> None:
    home, db = _captured(tmp_path)
    db.chmod(0o444)

    status = home.cli("status", "--json").check().json()
    assert status["totals"] == {"turns": 2, "captured": 2, "pending": 0, "failed": 0}
    assert "Total: 1 session, 2 turns: 2 captured" in home.cli("status").check().out
    assert home.markers() == ["marker-good-01", "marker-good-02"]
    assert "marker-good-01" in home.cli("search", "parser").check().out
    assert _mode(db) == 0o444

    refused = home.cli("now")
    assert refused.rc == 1 and "cannot write the database" in refused.err, refused.err
    assert _mode(db) == 0o444


def test_the_mode_the_user_set_is_kept(tmp_path: Path) -> None:
    home, db = _captured(tmp_path)
    assert _mode(db) == 0o600  # created private
    db.chmod(0o640)

    home.cli("scan").check()
    home.cli("status").check()

    assert _mode(db) == 0o640


def test_supersede_refuses_an_item_of_another_workspace(tmp_path: Path) -> None:
    home, _ = _captured(tmp_path)
    other = home.home / ".claude" / "projects" / "-home-dev-other" / f"{OTHER_SESSION}.jsonl"
    other.parent.mkdir()
    record = {**claude_record(3), "sessionId": OTHER_SESSION, "cwd": "/home/dev/other"}
    other.write_bytes(json.dumps(record).encode() + b"\n")
    home.cli("now").check()
    items = {i["session_id"]: i["id"] for i in home.cli("items", "--json").check().json()["items"]}

    refused = home.cli("supersede", items[SESSION], items[OTHER_SESSION])

    assert (refused.rc, refused.out) == (2, "")
    assert refused.err == (f"checkpoint supersede: refused: item {items[OTHER_SESSION]} is of the workspace "
                           f"/home/dev/other, item {items[SESSION]} of /home/dev/bad: an item is superseded by one "
                           "of its own workspace.\n")
    assert all(i["superseded_by"] is None for i in home.cli("items", "--json").check().json()["items"])
