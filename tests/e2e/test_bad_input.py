"""Bad input, end to end through the real `checkpoint` process: a malformed JSON line, a non-UTF-8
byte, a 50 MB single line, a file truncated to half, a file replaced by another, a deleted file.

Each is reported with its file and line (on stderr and in `status --json` "problems"), none crashes
the run, and the good turns before and after the bad spot are captured, once. Every good turn plants
a decision ("We'll use marker-good-NN ..."), so "captured" is checked turn by turn, not by counts alone.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_malformed_json_line_is_reported_and_the_turns_around_it_are_kept(tmp_path: Path, agent: str) -> None:
    h = Home(tmp_path)
    path, make = (h.path, claude_record) if agent == "claude" else (h.codex_path, codex_record)
    lines = [line(make(n)) for n in range(1, 8)]
    lines[3] = b'{"type":"user", "message": {"role": "user", "content": "We\'ll use marker-bad-04\n'
    path.write_bytes(b"".join(lines))

    result = h.cli("now").check()

    said = warning(result, path, 4)
    assert said.startswith("invalid JSON: ")
    status = h.assert_captured([1, 2, 3, 5, 6, 7])
    assert problem(status, path, 4) == said
    assert "1 problem reading transcripts" in result.out


def test_non_utf8_byte_is_reported_and_its_turn_kept_with_a_replacement_character(tmp_path: Path) -> None:
    h = Home(tmp_path)
    lines = [line(claude_record(n)) for n in range(1, 8)]
    lines[3] = line(claude_record(4, f"We'll use {marker(4)} for the caf\u00e9 layer.")).replace(
        "caf\u00e9".encode(), b"caf\xff"
    )
    h.path.write_bytes(b"".join(lines))

    result = h.cli("now").check()

    assert warning(result, h.path, 4) == "replaced invalid UTF-8 bytes"
    status = h.assert_captured([1, 2, 3, 4, 5, 6, 7])
    assert problem(status, h.path, 4) == "replaced invalid UTF-8 bytes"
    items = h.cli("items", "--json").check().json()["items"]
    assert [i["statement"] for i in items if marker(4) in i["statement"]] == [
        f"We'll use {marker(4)} for the caf\ufffd layer."
    ]


def _write_with_big_line(path: Path, before: list[int], after: list[int], size: int) -> int:
    """Write good lines, one line of `size` bytes of JSON, good lines; in 1 MiB pieces (no 50 MB in
    this process). Returns the big line's length without its newline."""
    head = b'{"type":"user","uuid":"big-line","sessionId":"%s","message":{"role":"user","content":"' % SESSION.encode()
    tail = b'"}}'
    piece = b"x" * (1 << 20)
    body = size - len(head) - len(tail)
    with path.open("wb") as fh:
        fh.writelines(line(claude_record(n)) for n in before)
        fh.write(head)
        for _ in range(body // len(piece)):
            fh.write(piece)
        fh.write(b"x" * (body % len(piece)))
        fh.write(tail + b"\n")
        fh.writelines(line(claude_record(n)) for n in after)
    return size


def test_a_50_mb_line_is_skipped_by_policy_reported_and_memory_stays_bounded(tmp_path: Path) -> None:
    # Baseline: the same run over the same good lines without the big one.
    base = Home(tmp_path / "base")
    base.path.write_bytes(b"".join(line(claude_record(n)) for n in range(1, 7)))
    baseline = base.cli("now", measure=tmp_path / "base.rss").check()
    base.assert_captured([1, 2, 3, 4, 5, 6])

    h = Home(tmp_path / "big")
    size = _write_with_big_line(h.path, before=[1, 2, 3], after=[4, 5, 6], size=50 << 20)
    assert h.path.stat().st_size > 50 << 20

    result = h.cli("now", measure=tmp_path / "big.rss").check()

    said = warning(result, h.path, 4)
    assert said == f"skipped: line of {size} bytes exceeds {MAX_LINE} (policy oversized_line)"
    status = h.assert_captured([1, 2, 3, 4, 5, 6])
    assert problem(status, h.path, 4) == said
    assert status["sessions"][0]["dropped"]["oversized_line"] == {"records": 1, "chars": size}
    # Memory: bounded by the longest accepted line (16 MiB) plus a block, never the 50 MB line.
    grew_mib = (result.max_rss_kib - baseline.max_rss_kib) / 1024
    print(f"\n50 MB line: peak RSS {result.max_rss_kib / 1024:.1f} MiB, baseline {baseline.max_rss_kib / 1024:.1f} MiB,"
          f" +{grew_mib:.1f} MiB; `checkpoint now` {result.seconds:.2f}s")
    assert baseline.max_rss_kib > 0
    assert grew_mib < 30, f"peak RSS grew {grew_mib:.1f} MiB over the baseline"


def test_a_file_truncated_to_half_is_reread_without_duplicates_then_read_on(tmp_path: Path) -> None:
    h = Home(tmp_path)
    data = b"".join(line(claude_record(n)) for n in range(1, 11))
    h.path.write_bytes(data)
    h.cli("now").check()
    h.assert_captured(list(range(1, 11)))

    half = len(data) // 2
    os.truncate(h.path, half)
    cut_line = data[:half].count(b"\n") + 1  # the line the cut falls in
    assert data[half - 1:half] != b"\n"  # the cut is inside a line, as a crash or a bad copy leaves it

    result = h.cli("now").check()

    said = warning(result, h.path, cut_line)
    assert said == (f"file shrank from {len(data)} to {half} bytes: it now breaks off in line {cut_line},"
                    f" 10 lines had been read; {TAIL}")
    status = h.assert_captured(list(range(1, 11)))  # kept, not duplicated, not lost
    assert problem(status, h.path, cut_line) == said

    # The writer goes on appending: its first record lands on the broken line; it is kept all the same.
    with h.path.open("ab") as fh:
        fh.write(line(claude_record(11)) + line(claude_record(12)))
    result = h.cli("now").check()

    said = warning(result, h.path, cut_line)
    assert said.startswith("invalid JSON: ")
    assert said.endswith(" bytes are a broken record, dropped, and the whole record after them is kept")
    status = h.assert_captured(list(range(1, 13)))
    assert len(problems_at(status, h.path, cut_line)) == 2 and said in problems_at(status, h.path, cut_line)
    assert h.cli("now").check().err == ""  # said once, not on every run


def test_a_file_replaced_by_another_is_reread_without_duplicates(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in range(1, 7)))
    h.cli("now").check()
    inode = h.path.stat().st_ino

    # Another file takes its place (a rewrite saved by rename): some old records, some new ones.
    other = h.path.with_suffix(".tmp")
    other.write_bytes(b"".join(line(claude_record(n)) for n in (1, 2, 7, 3, 8, 4, 5, 6, 9)))
    os.replace(other, h.path)
    assert h.path.stat().st_ino != inode

    result = h.cli("now").check()

    said = warning(result, h.path, 6)
    assert said == f"file was replaced (new inode) after 6 lines were read; {TAIL}"
    status = h.assert_captured(list(range(1, 10)))
    assert problem(status, h.path, 6) == said


def test_drops_of_a_file_read_again_from_the_start_are_not_counted_twice(tmp_path: Path) -> None:
    """Drop counts follow what the file holds now: a re-read replaces the file's earlier share."""
    h = Home(tmp_path)

    def progress(n: int) -> bytes:
        return line({"type": "progress", "uuid": f"p-{n}", "sessionId": SESSION, "data": {"tick": n}})

    def size(n: int) -> int:
        return len(progress(n)) - 1  # what is dropped: the record, not its newline

    def dropped() -> dict[str, int]:
        return dict(h.status()["sessions"][0]["dropped"]["progress_copy"])

    h.path.write_bytes(line(claude_record(1)) + progress(1) + line(claude_record(2)) + progress(2))
    h.cli("scan").check()
    assert dropped() == {"records": 2, "chars": size(1) + size(2)}

    # Replaced (a rewrite saved by rename): the same lines and one more progress line.
    other = h.path.with_suffix(".tmp")
    other.write_bytes(h.path.read_bytes() + progress(3))
    os.replace(other, h.path)
    h.cli("scan").check()
    assert dropped() == {"records": 3, "chars": size(1) + size(2) + size(3)}

    # Cut short: only what is left counts; then appended to, as usual.
    os.truncate(h.path, len(line(claude_record(1)) + progress(1)))
    h.cli("scan").check()
    assert dropped() == {"records": 1, "chars": size(1)}
    with h.path.open("ab") as fh:
        fh.write(progress(4))
    h.cli("scan").check()
    assert dropped() == {"records": 2, "chars": size(1) + size(4)}
    assert h.status()["totals"]["turns"] == 2  # turns are kept and not duplicated, as before


def test_a_file_rewritten_in_place_is_reread_without_duplicates(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in range(1, 5)))
    h.cli("now").check()
    inode = h.path.stat().st_ino

    with h.path.open("r+b") as fh:  # same inode, new first bytes, longer than before
        fh.write(b"".join(line(claude_record(n)) for n in (5, 1, 2, 3, 4, 6)))
    assert h.path.stat().st_ino == inode

    result = h.cli("now").check()

    said = warning(result, h.path, 4)
    assert said == f"file was rewritten (its first bytes changed) after 4 lines were read; {TAIL}"
    status = h.assert_captured([1, 2, 3, 4, 5, 6])
    assert problem(status, h.path, 4) == said


def test_a_deleted_file_is_reported_and_its_turns_are_kept_and_still_extracted(tmp_path: Path) -> None:
    h = Home(tmp_path)
    h.path.write_bytes(b"".join(line(claude_record(n)) for n in range(1, 7)))
    h.cli("scan").check()
    assert h.status()["totals"] == {"turns": 6, "captured": 0, "pending": 6, "failed": 0}

    h.path.unlink()
    result = h.cli("now").check()

    said = warning(result, h.path, 6)
    assert said == "file vanished after 6 lines were read; the turns already read from it are kept"
    status = h.assert_captured([1, 2, 3, 4, 5, 6])
    assert problem(status, h.path, 6) == said
    assert "No transcripts found." in result.err  # the roots are empty now, and it says so (a problem: stderr)
    again = h.cli("now").check()
    assert "vanished" not in again.err  # said once
    h.assert_captured([1, 2, 3, 4, 5, 6])
