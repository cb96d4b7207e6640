"""The contract every registered reader keeps, each on a small real transcript of its format: it claims
its own file from the head discovery read (no I/O of its own) and refuses the others' files; a head cut
short is "not yet" or the same claim, never a wrong one; a rescan adds nothing; the file written in
pieces (cut at arbitrary bytes) reads as the same turns as written whole; malformed and non-UTF-8 lines
are counted problems, not crashes; turn ids are the same in every database that reads the file.

A reader is covered by registering it in checkpoint.sources.READERS and adding its transcript to
FIXTURES below: a registered reader without one fails here."""

from __future__ import annotations

import io
import random
import shutil
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import orjson
import pytest

from checkpoint import pipeline
from checkpoint.config import Settings
from checkpoint.sources import READERS, find, read_head
from checkpoint.sources.base import NOT_MINE, NOT_YET, Claim, DatabaseReader, FileRole, Head
from checkpoint.store import Store
from tests.support.reader_checks import assert_rescans_add_nothing, assert_written_in_pieces_reads_the_same

DATA = Path(__file__).resolve().parents[2] / "data"
SAMPLES = DATA / "samples"
CLAUDE_SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"
CODEX_ROLLOUT = "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl"
COPILOT_SESSION = "4cbd6107-8835-4aff-ae09-908f523ad430"
GEMINI_CHAT = "tmp/other/chats/session-2026-12-01T14-55-69c4f988.jsonl"
COPILOT_EVENTS = f"session-state/{COPILOT_SESSION}/events.jsonl"


def _member(archive: Path, name: str) -> bytes:
    with tarfile.open(archive) as tar:
        member = tar.extractfile(name)
        assert member is not None, name
        return member.read()


def _gemini_session_id() -> str:
    first = _member(DATA / "real_cli" / "gemini.tar.gz", f"gemini/{GEMINI_CHAT}").split(b"\n", 1)[0]
    session_id = orjson.loads(first)["sessionId"]
    assert isinstance(session_id, str)
    return session_id


@dataclass(frozen=True)
class Fixture:
    """A reader's transcript: where it sits under a root, its bytes (successive states for a database)
    and the session discovery files it under."""

    where: str
    versions: Callable[[], list[bytes]]  # the last one is the file as the agent left it
    session: Callable[[], str]
    beside: dict[str, Callable[[], bytes]]  # files the agent keeps near it (a project's root)


FIXTURES: dict[str, Fixture] = {
    "claude": Fixture(
        f".claude/projects/-w-app/{CLAUDE_SESSION}.jsonl",
        lambda: [(SAMPLES / "claude" / "spotter__short.jsonl").read_bytes()], lambda: CLAUDE_SESSION, {}),
    "codex": Fixture(
        f".codex/sessions/2026/02/23/{CODEX_ROLLOUT}",
        lambda: [(SAMPLES / "codex" / f"localpush__{CODEX_ROLLOUT}").read_bytes()],
        lambda: "019c8a70-dda7-7f33-98ea-f30553347322", {}),
    "gemini": Fixture(
        f".gemini/{GEMINI_CHAT}",
        lambda: [_member(DATA / "real_cli" / "gemini.tar.gz", f"gemini/{GEMINI_CHAT}")], _gemini_session_id,
        {".gemini/tmp/other/.project_root": lambda: _member(DATA / "real_cli" / "gemini.tar.gz",
                                                            "gemini/tmp/other/.project_root")}),
    "copilot": Fixture(
        f".copilot/{COPILOT_EVENTS}",
        lambda: [_member(DATA / "real_cli" / "copilot.tar.gz", f"copilot/{COPILOT_EVENTS}")],
        lambda: COPILOT_SESSION, {}),
    "opencode": Fixture(
        ".local/share/opencode/opencode.db",
        lambda: [_member(DATA / "opencode" / "sessions.tar.gz", f"{state}/opencode/opencode.db")
                 for state in ("first", "final")],
        lambda: "", {}),  # many sessions in one file: each one's comes with its records
}


def _place(root: Path, name: str, data: bytes | None = None) -> Path:
    fixture = FIXTURES[name]
    for where, content in fixture.beside.items():
        (root / where).parent.mkdir(parents=True, exist_ok=True)
        (root / where).write_bytes(content())
    path = root / fixture.where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(fixture.versions()[-1] if data is None else data)
    return path


def _role(name: str) -> FileRole:
    session = FIXTURES[name].session()
    return FileRole(name, session or None)


def _turns(store: Store) -> list[tuple[str, str, str, str]]:
    return store.conn.execute("SELECT t.id, t.session_id, t.role, t.text FROM turns t ORDER BY t.session_id, t.seq"
                              ).fetchall()


@pytest.fixture
def reader_settings(settings: Settings, tmp_path: Path) -> Settings:
    return replace(settings, sources=[tmp_path / "home"], chunk_tokens=1500)


def test_every_registered_reader_has_a_transcript_here() -> None:
    assert sorted(FIXTURES) == sorted(READERS)


@pytest.mark.parametrize("name", sorted(READERS))
def test_claims_its_own_file_from_the_head_alone_and_refuses_the_others(name: str, tmp_path: Path) -> None:
    reader = READERS[name]
    paths = {other: _place(tmp_path / "home", other) for other in READERS}
    heads = {other: read_head(path, [r.looks_at(path) for r in READERS.values()]) for other, path in paths.items()}
    shutil.rmtree(tmp_path / "home")  # what locate answers comes from the head discovery read: no I/O of its own
    answer = reader.locate(paths[name], heads[name])
    assert isinstance(answer, Claim) and answer.role == _role(name)
    assert {other: reader.locate(paths[other], heads[other]) for other in READERS if other != name} == {
        other: NOT_MINE for other in READERS if other != name}


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_head_cut_short_is_not_yet_or_the_same_claim_never_a_wrong_one(name: str, tmp_path: Path) -> None:
    path = _place(tmp_path / "home", name)
    whole = read_head(path, [r.looks_at(path) for r in READERS.values()])
    line = max(1, whole.data.find(b"\n"))
    for cut in sorted({0, 1, line // 2, line, line + 1, len(whole.data) // 2}):
        head = Head(whole.data[:cut], settled=False, beside=whole.beside)
        answers = {other: reader.locate(path, head) for other, reader in READERS.items()}
        mine = answers.pop(name)
        assert mine is NOT_YET or (isinstance(mine, Claim) and mine.role == _role(name)), (cut, mine)
        assert answers == {other: NOT_MINE for other in answers}, cut
        # Discovery, shown the file as it is so far, says the same.
        path.write_bytes(whole.data[:cut])
        found = find(path)
        assert (found is None) if mine is NOT_YET else (found is not None and found.role == _role(name)), cut


@pytest.mark.parametrize("name", sorted(READERS))
def test_a_rescan_adds_nothing_and_turn_ids_are_the_same_in_every_database(
    name: str, reader_settings: Settings, store: Store, tmp_path: Path
) -> None:
    path = _place(tmp_path / "home", name)
    first = pipeline.scan(store, reader_settings)
    assert first.problems == [] and first.turns_added > 0
    assert {s.agent for s in store.session_counts()} == {name}
    assert_rescans_add_nothing(store, reader_settings, [path])
    other_db = tmp_path / "other.db"
    other = Store(other_db)
    try:
        pipeline.scan(other, replace(reader_settings, db=other_db))
        assert _turns(other) == _turns(store)
    finally:
        other.close()


@pytest.mark.parametrize("name", sorted(READERS))
def test_written_in_pieces_reads_as_the_same_turns_as_whole(
    name: str, reader_settings: Settings, store: Store, tmp_path: Path
) -> None:
    path = _place(tmp_path / "home", name, b"")
    versions = FIXTURES[name].versions()
    if not isinstance(READERS[name], DatabaseReader):
        # A log appended to: cut at arbitrary bytes (inside lines, inside UTF-8 characters), the same each run.
        data = versions[-1]
        cuts = sorted(random.Random(name).sample(range(1, len(data)), 7))
        versions = [data[:cut] for cut in cuts] + [data]
    assert_written_in_pieces_reads_the_same(store, reader_settings, path, versions, _turns, tmp_path / "whole.db")


# What writers leave behind: a record cut off and written on, bytes that are no UTF-8, a JSON value that
# is no object, and a record whose key holds bytes that are no UTF-8 (decoded with U+FFFD, then read).
MALFORMED = (b'{"type": "user", "message": {"con\n', b"\xff\xfe\x80 not a record\n", b"[1, 2, 3]\n",
             b'{"caf\xe9": 1}\n')


@pytest.mark.parametrize("name", sorted(READERS))
def test_malformed_and_non_utf8_records_are_counted_problems_not_crashes(
    name: str, reader_settings: Settings, store: Store, tmp_path: Path
) -> None:
    data = FIXTURES[name].versions()[-1]
    if isinstance(READERS[name], DatabaseReader):
        path = _place(tmp_path / "home", name, b"".join(MALFORMED) * 64)  # no database at all
        report = pipeline.scan(store, reader_settings)
        assert [(p.path, p.line) for p in report.problems] == [(str(path), None)]
        assert _turns(store) == []
        return
    whole_db = tmp_path / "whole.db"
    _place(tmp_path / "whole", name)
    clean = Store(whole_db)
    try:
        pipeline.scan(clean, replace(reader_settings, db=whole_db, sources=[tmp_path / "whole"]))
        expected = _turns(clean)
    finally:
        clean.close()
    lines = data.count(b"\n")
    _place(tmp_path / "home", name, data + b"".join(MALFORMED))
    report = pipeline.scan(store, reader_settings)
    assert [p.line for p in report.problems] == [lines + 1 + i for i in range(len(MALFORMED))]
    assert not [p.message for p in report.problems if "reader failed" in p.message]
    assert _turns(store) == expected


def test_the_fixture_bytes_are_what_the_tests_say() -> None:
    """The contract is kept on real transcripts: each fixture is a format's own (its first record parses)."""
    for name, fixture in FIXTURES.items():
        data = fixture.versions()[-1]
        if isinstance(READERS[name], DatabaseReader):
            assert data.startswith(b"SQLite format 3\x00"), name
        else:
            assert isinstance(orjson.loads(io.BytesIO(data).readline()), dict), name
