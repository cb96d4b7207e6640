"""Hostile transcripts, end to end through the real `checkpoint` process (extends test_bad_input.py;
both use tests/support/cli_home.py): records sharing a line (`}{`, a space, a run of NUL bytes
between them), NUL runs, half a UTF-16 character, a torn last line, a 100 MB line still being
written, JSON bombs, symlink loops, files that cannot be read (a FIFO, a directory named like a
transcript, chmod 000 where that holds), a file that shrinks while it is being read, a file
replaced by another session's, and a root with 5,000 sessions.

Every corpus is generated here (nothing big is committed). Each case is said precisely (file, line,
what was wrong) on stderr and under `problems` in `status --json`; the good turns around it are
captured, once each (every good turn plants a decision); memory stays bounded where size is the
attack (peak RSS measured by a wrapper process).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkpoint import pipeline
from checkpoint.model import FileCursor
from checkpoint.sources import tailer
from checkpoint.sources.tailer import SETTLE_SECONDS, TailEvent
from tests.support.cli_home import (
    MAX_LINE,
    SESSION,
    TAIL,
    Home,
    claude_record,
    codex_record,
    line,
    marker,
    problem,
    problems_at,
    warning,
)
from tests.support.cli_run import item_markers, run
from tests.support.oracle import clean_scan

OTHER_SESSION = "0bad1a9e-0000-4000-8000-0000000040e1"


def record_bytes(n: int, text: str | None = None) -> bytes:
    return line(claude_record(n, text))[:-1]  # without its newline


def quiet(path: Path, seconds: float = 60) -> None:
    """Make the file look untouched for a while (a writer that stopped)."""
    past = time.time() - seconds
    os.utime(path, (past, past))


# -- records that share a line, NUL runs, half characters -------------------------------------------


@pytest.mark.parametrize(("gap", "said"), [
    (b"", ""),
    (b" ", ""),
    (b"\x00" * 300, " (600 NUL bytes between them)"),
])
def test_records_written_on_one_line_are_all_kept(tmp_path: Path, gap: bytes, said: str) -> None:
    h = Home(tmp_path)
    # Record 3 says "}{" in its text: a split on "}{" would cut it in two.
    three = record_bytes(3, f"We'll use {marker(3)} for the }}{{ layer.")
    joined = record_bytes(2) + gap + three + gap + record_bytes(4)
    h.path.write_bytes(line(claude_record(1)) + joined + b"\n" + line(claude_record(5)))

    result = h.cli("now").check()

    said_line = f"3 records written on one line without a newline between them{said}; all 3 kept"
    assert warning(result, h.path, 2) == said_line
    status = h.assert_captured([1, 2, 3, 4, 5])
    assert problem(status, h.path, 2) == said_line


def test_codex_records_joined_on_one_line_are_all_kept(tmp_path: Path) -> None:
    h = Home(tmp_path)
    records = [line(codex_record(n))[:-1] for n in range(1, 6)]
    h.codex_path.write_bytes(records[0] + b"\n" + records[1] + records[2] + b"\n" + records[3] + b"\n" + records[4]
                             + b"\n")

    result = h.cli("now").check()

    said = "2 records written on one line without a newline between them; all 2 kept"
    assert warning(result, h.codex_path, 2) == said
    status = h.assert_captured([1, 2, 3, 4, 5])
    assert problem(status, h.codex_path, 2) == said


def test_nul_runs_are_stripped_and_the_records_kept(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(
        line(claude_record(1))
        + b"\x00" * 4096 + b"\n"  # a line of NUL bytes only (a file preallocated, then written short)
        + b"\x00" * 700 + line(claude_record(2))  # NULs, then a record, on one line (a crash, then a resume)
        + record_bytes(3) + b"\x00" * 50 + b"\n"
        + line(claude_record(4))
    )

    result = h.cli("now").check()

    for line_no in (2, 3, 4):
        assert warning(result, h.path, line_no) == "stripped NUL bytes"
    status = h.assert_captured([1, 2, 3, 4])
    assert problem(status, h.path, 2) == "stripped NUL bytes"


def test_half_a_utf16_character_is_replaced_and_its_turn_kept(tmp_path: Path) -> None:
    # JavaScript cuts strings in UTF-16 units: a tool output cut inside an emoji leaves "\ud83d" alone.
    h = Home(tmp_path)
    cut = line(claude_record(2, f"We'll use {marker(2)} for the emoji layer. PLACEHOLDER"))
    cut = cut.replace(b"PLACEHOLDER", b"\\ud83d")
    h.path.write_bytes(line(claude_record(1)) + cut + line(claude_record(3)))

    result = h.cli("now").check()

    said = "replaced an escaped half of a UTF-16 character pair (a string cut inside a character)"
    assert warning(result, h.path, 2) == said
    h.assert_captured([1, 2, 3])
    texts = [text for (text,) in _rows(h, "SELECT text FROM turns ORDER BY seq")]
    assert texts[1].endswith("emoji layer. \ufffd")


def _rows(h: Home, sql: str) -> list[tuple[Any, ...]]:
    from tests.support.cli_run import query

    return query(h.home / ".local" / "share" / "checkpoint" / "checkpoint.db", sql)


# -- torn and endless lines -------------------------------------------------------------------------


def test_a_torn_last_line_is_said_and_read_once_finished(tmp_path: Path) -> None:
    h = Home(tmp_path)
    last = line(claude_record(4))
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2, 3)) + last[:60])
    quiet(h.path)  # the writer stopped mid-record a while ago

    result = h.cli("now").check()

    said = (f"unfinished last line: 60 bytes without a newline that are not a whole record, unchanged for"
            f" {SETTLE_SECONDS:g}s; read once the line is finished")
    assert warning(result, h.path, 4) == said
    status = h.assert_captured([1, 2, 3])
    assert problem(status, h.path, 4) == said

    with h.path.open("ab") as fh:  # the writer comes back and finishes it
        fh.write(last[60:] + line(claude_record(5)))
    result = h.cli("now").check()
    assert result.err == ""
    h.assert_captured([1, 2, 3, 4, 5])


def test_a_100_mb_line_still_being_written_keeps_memory_bounded(tmp_path: Path) -> None:
    base = Home(tmp_path / "base")
    base.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2, 3)))
    baseline = base.cli("now", measure=tmp_path / "base.rss").check()

    h = Home(tmp_path / "big")
    size = 100 << 20
    head = b'{"type":"user","uuid":"big","sessionId":"%s","message":{"role":"user","content":"' % SESSION.encode()
    with h.path.open("wb") as fh:
        fh.writelines(line(claude_record(n)) for n in (1, 2, 3))
        fh.write(head)
        for _ in range((size - len(head)) >> 20):
            fh.write(b"x" * (1 << 20))
    written = h.path.stat().st_size - sum(len(line(claude_record(n))) for n in (1, 2, 3))
    quiet(h.path)

    result = h.cli("now", measure=tmp_path / "unfinished.rss").check()

    assert warning(result, h.path, 4) == (f"unfinished last line: {written} bytes without a newline that are not a"
                                          f" whole record, unchanged for {SETTLE_SECONDS:g}s; read once the line is"
                                          " finished")
    h.assert_captured([1, 2, 3])

    with h.path.open("ab") as fh:  # the writer finishes the line, and goes on
        fh.write(b'"}}\n' + line(claude_record(5)))
    result2 = h.cli("now", measure=tmp_path / "finished.rss").check()

    said = f"skipped: line of {written + 4 - 1} bytes exceeds {MAX_LINE} (policy oversized_line)"
    assert warning(result2, h.path, 4) == said
    status = h.assert_captured([1, 2, 3, 5])
    assert said in problems_at(status, h.path, 4)  # with what the first run said there
    assert status["sessions"][0]["dropped"]["oversized_line"] == {"records": 1, "chars": written + 3}
    grew = max(result.max_rss_kib, result2.max_rss_kib) - baseline.max_rss_kib
    print(f"\n100 MB line: peak RSS +{grew / 1024:.1f} MiB over a run without it"
          f" ({baseline.max_rss_kib / 1024:.1f} MiB); {result.seconds:.2f}s unfinished,"
          f" {result2.seconds:.2f}s finished")
    assert baseline.max_rss_kib > 0 and grew < 30 << 10, f"peak RSS grew {grew / 1024:.1f} MiB"


# -- JSON bombs -------------------------------------------------------------------------------------


def test_json_bombs_are_reported_not_crashes(tmp_path: Path) -> None:
    h = Home(tmp_path)
    deep = b"[" * 1000 + b"]" * 1000  # deep enough for the readers, not for orjson's 1024 limit
    tool_call = json.dumps({
        "type": "assistant", "uuid": "deep-tool", "sessionId": SESSION, "message": {
            "id": "msg_deep", "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": "DEEP"}]}},
        separators=(",", ":")).encode().replace(b'"DEEP"', deep)
    h.path.write_bytes(
        line(claude_record(1))
        + b"[" * 100_000 + b"]" * 100_000 + b"\n"  # 100k nested arrays
        + b'{"a":' * 100_000 + b"1" + b"}" * 100_000 + b"\n"  # 100k nested objects
        + line(claude_record(2))
        + tool_call + b"\n"
        + line(claude_record(3))
    )
    h.codex_path.write_bytes(
        b'{"timestamp":"2026-01-05T10:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":'
        + deep + b"}}\n" + line(codex_record(7))
    )

    result = h.cli("now").check()

    assert warning(result, h.path, 2) == "invalid JSON: depth limit exceeded: line 1 column 1026 (char 1025)"
    assert warning(result, h.path, 3) == "invalid JSON: depth limit exceeded: line 1 column 5122 (char 5121)"
    assert warning(result, h.path, 5) == "record nested too deeply to read; skipped"
    assert warning(result, h.codex_path, 1) == "record nested too deeply to read; skipped"
    status = h.assert_captured([1, 2, 3, 7])
    assert problem(status, h.path, 5) == "record nested too deeply to read; skipped"


# -- files that cannot be read ----------------------------------------------------------------------


def test_symlink_loops_in_the_roots_end_and_are_said(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2, 3)))
    project = h.path.parent
    (project / "self").symlink_to(".")  # a directory loop: never walked into
    (project / "up").symlink_to("..")
    (project / "a.jsonl").symlink_to("b.jsonl")  # a file loop
    (project / "b.jsonl").symlink_to("a.jsonl")
    (project / f"{OTHER_SESSION}.jsonl").symlink_to(h.path)  # the same transcript by a second path

    result = run(["now"], h.env, timeout=60).check()

    for name in ("a.jsonl", "b.jsonl"):
        path = project / name
        said = "cannot stat: Too many levels of symbolic links"
        assert f"warning: {path}: {said}" in result.err.splitlines()
        assert problem(h.status(), path, 0) == said
    # Read by both of its paths, stored once (the records' ids are the same); nothing read through a loop.
    h.assert_captured([1, 2, 3])


def _unreadable_kinds() -> list[str]:
    kinds = ["fifo", "directory", "fifo-subagent"]
    # As root (CI), chmod 000 does not stop a read: there the FIFO and the directory stand in.
    if os.geteuid() != 0:
        kinds.append("chmod")
    return kinds


@pytest.mark.parametrize("kind", _unreadable_kinds())
def test_a_file_that_cannot_be_read_is_said_and_the_rest_is_read(tmp_path: Path, kind: str) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2)))
    bad = h.path.with_name(f"{OTHER_SESSION}.jsonl")
    if kind == "fifo":
        os.mkfifo(bad)  # opening it would wait for a writer forever
        said = "cannot read: a FIFO (named pipe), not a regular file; skipped"
    elif kind == "fifo-subagent":
        bad = h.path.with_name("agent-a1b2c3.jsonl")  # a legacy sub-agent file is opened to find its session
        os.mkfifo(bad)
        said = "cannot read: a FIFO (named pipe), not a regular file; skipped"
    elif kind == "directory":
        bad.mkdir()
        (bad / "notes.txt").write_text("not a transcript")
        said = "cannot read: a directory, not a regular file; skipped"
    else:
        bad.write_bytes(line(claude_record(9)))
        bad.chmod(0)
        said = "cannot read: Permission denied"

    result = run(["now"], h.env, timeout=60).check()

    assert f"warning: {bad}: {said}" in result.err.splitlines()
    status = h.assert_captured([1, 2])
    assert problem(status, bad, 0) == said


# -- files that change under the reader -------------------------------------------------------------


def test_a_file_that_shrinks_while_being_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = Home(tmp_path)
    lines = [line(claude_record(n)) for n in range(1, 31)]
    h.path.write_bytes(b"".join(lines))
    cut = sum(map(len, lines[:6])) + 20  # inside line 7
    read_before_cut: list[int] = []

    def shrinking_tail(cursor: FileCursor, *args: object, **kwargs: object) -> Iterator[TailEvent]:
        for event in tailer.tail(cursor, *args, **kwargs):  # type: ignore[arg-type]
            yield event
            read_before_cut.append(event.line_no)
            if len(read_before_cut) == 10:
                os.truncate(h.path, cut)  # cut short while the reader is on line 10

    monkeypatch.setattr(tailer, "BLOCK_SIZE", 1024)  # a few lines per read, so the cut lands mid-read
    monkeypatch.setattr(pipeline, "tail", shrinking_tail)
    db = h.home / ".local" / "share" / "checkpoint" / "checkpoint.db"
    report = clean_scan(db, [h.path.parent.parent])
    monkeypatch.undo()
    assert report.problems == []
    read = max(read_before_cut)
    assert 10 <= read < 30  # what was read before the cut, and no further

    result = h.cli("now").check()

    said = (f"file shrank from {sum(map(len, lines[:read]))} to {cut} bytes: it now breaks off in line 7,"
            f" {read} lines had been read; {TAIL}")
    assert warning(result, h.path, 7) == said
    status = h.assert_captured(list(range(1, read + 1)))  # read before the cut: kept, once
    assert problem(status, h.path, 7) == said

    with h.path.open("ab") as fh:  # the writer goes on: its record lands on the broken line 7
        fh.write(b"\n" + line(claude_record(31)))
    h.cli("now").check()
    h.assert_captured([*range(1, read + 1), 31])


def test_a_file_replaced_by_another_sessions_transcript(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2, 3, 4)))
    h.cli("now").check()

    other = [claude_record(n) for n in (11, 12, 13)]
    for record in other:  # another session's lines, with their own ids
        record["sessionId"] = OTHER_SESSION
        record["uuid"] = record["uuid"].replace("-4000-", "-4e1e-")
    replacement = h.path.with_suffix(".new")
    replacement.write_bytes(b"".join(map(line, other)))
    os.replace(replacement, h.path)

    result = h.cli("now").check()

    said = f"file was replaced (new inode) after 4 lines were read; {TAIL}"
    assert warning(result, h.path, 4) == said
    # What was read from it stays; what it holds now is read, each once (filed under the file's session).
    status = h.assert_captured([1, 2, 3, 4, 11, 12, 13])
    assert problem(status, h.path, 4) == said
    assert [s["id"] for s in status["sessions"]] == [SESSION]


# -- many sessions ----------------------------------------------------------------------------------


def test_a_root_with_5000_sessions(tmp_path: Path) -> None:
    sessions = 5000
    h = Home(tmp_path)
    root = h.path.parent.parent
    for s in range(sessions):
        session_id = f"5e550000-0000-4000-8000-{s:012d}"
        project = root / f"-home-dev-p{s % 50}"
        project.mkdir(exist_ok=True)
        text = f"We'll use marker-s{s:04d} for the parser layer."
        record = {"type": "user", "uuid": f"5e550000-0000-4000-9000-{s:012d}", "parentUuid": None,
                  "sessionId": session_id, "cwd": f"/home/dev/p{s % 50}", "timestamp": "2026-01-05T10:00:00.000Z",
                  "message": {"role": "user", "content": text}}
        (project / f"{session_id}.jsonl").write_bytes(line(record))

    result = h.cli("now", measure=tmp_path / "rss").check()
    again = h.cli("now").check()

    assert result.err == ""
    status = h.status()
    assert status["totals"] == {"turns": sessions, "captured": sessions, "pending": 0, "failed": 0}
    items = h.cli("items", "--json").check().json()["items"]
    found = sorted(m for _, _, m in item_markers(items))
    assert found == [f"marker-s{s:04d}" for s in range(sessions)]
    assert "Nothing new to extract." in again.out
    print(f"\n5,000 sessions: `checkpoint now` {result.seconds:.1f}s, peak RSS {result.max_rss_kib / 1024:.1f} MiB;"
          f" again {again.seconds:.1f}s")
    assert result.max_rss_kib < 200 << 10
