"""Scans. Serves the CLI and the daemon alike; knows nothing about editors (the status read model is
checkpoint.status_model).

scan:        discover files -> tail new whole lines -> reader -> turns + cursor (one transaction
             per batch) -> form chunks within the token budget.
The runs that extract the chunks are checkpoint.run.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import stat
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from checkpoint import read_ahead, redact
from checkpoint.chunker import estimate_tokens
from checkpoint.config import Settings, extractor_workdir
from checkpoint.extract.prompt import planned_header
from checkpoint.model import (
    FileCursor,
    FileEdit,
    LineProblem,
    ProblemKind,
    ReadProblem,
    Role,
    ScannedTurn,
    SessionInfo,
    TurnDraft,
    plural,
)
from checkpoint.sources import READERS, FoundFile, find, transcript_paths, turn_text
from checkpoint.sources.base import DatabaseReader, LineError, ParsedLine, Reader, decode_line
from checkpoint.sources.claude_code import project_slugs
from checkpoint.sources.tailer import (
    SETTLE_SECONDS,
    RawLine,
    Reset,
    TailEvent,
    advance,
    check_identity,
    fresh_cursor,
    tail,
    tail_whole,
    unchanged,
    whole_file,
)
from checkpoint.store import CursorMoved, FileRow, Store

# Turns stored per transaction. Larger batches write each page of the database fewer times (a cold
# scan of a 100 MB session: 1.8 s of CPU instead of 2.1 s); memory stays bounded by the batch.
DAY = 86_400.0
BATCH_TURNS = 10_000
BATCH_BYTES = 32 << 20
# A batch the read-ahead child reads is redacted and stored by this process as soon as it comes:
# smaller ones keep both busy (grouped commits make their transactions no more numerous).
HANDOVER_BATCH_BYTES = 4 << 20
# Readers skim a line's bytes first (Reader.skim) and decode only the lines whose fate that leaves
# open. Off (CHECKPOINT_NO_SKIM=1): every line decoded and parsed, what the tests compare it with.
SKIM = os.environ.get("CHECKPOINT_NO_SKIM") != "1"
Skim = Callable[[bytes, dict[str, object]], str | None]


@dataclass
class ScanReport:
    roots: list[Path]
    files_seen: int = 0
    files_read: int = 0
    turns_added: int = 0
    chunks_created: int = 0
    problems: list[ReadProblem] = field(default_factory=list)  # said on stderr or in the editor
    files_per_root: dict[Path, int] = field(default_factory=dict)
    redacted: Counter[str] = field(default_factory=Counter)  # secrets replaced in the turns stored, by kind
    # tool output left out by policy (turn_text.TOOL_OUTPUT): characters, and the records whose results were cut
    tool_output_left_out: int = 0
    tool_output_records: int = 0

    @property
    def roots_present(self) -> list[Path]:
        return [r for r in self.roots if r.is_dir()]


def scan(store: Store, settings: Settings, two_processes: bool = False) -> ScanReport:
    """Read what is new in every transcript under the settings' sources and store it. With
    `two_processes` (the CLI, single-threaded), a large scan reads part of its files in a second
    process (see read_ahead); the database it writes is the same."""
    report = ScanReport(roots=list(settings.sources))
    seen: set[str] = set()
    # One query, not one per file (a rescan of many files is stat-bound), of the files under the roots
    # only: the daemon's scan of one directory costs the same however many transcripts the store knows.
    known = store.file_cursors(under=[str(r) for r in report.roots])
    # The extractor's own Claude Code runs write no transcript (--no-session-persistence); were one
    # written anyway, it would be under this slug, and a run's request is not a session of the user's.
    own_runs = project_slugs(extractor_workdir(settings.db))
    to_read: list[tuple[FoundFile, FileRow | None]] = []
    for root, path in transcript_paths(report.roots, report.problems, own_runs):
        row = known.get(path)
        if row is None or row.missing or not _unchanged_on_disk(path, row.cursor) or _refit(row, settings):
            found = find(Path(path))
            if found is None:
                continue
            reader = READERS[found.role.agent]
            if isinstance(reader, DatabaseReader):
                # Many sessions in one file, each stored as "<path>#<session id>": seen with it.
                sessions = {p: r for p, r in known.items() if p.startswith(path + "#")}
                _ingest_database(store, reader, Path(path), settings, report, sessions)
                seen.update(sessions)
            else:
                to_read.append((found, row))
        report.files_seen += 1
        seen.add(path)
        report.files_per_root[root] = report.files_per_root.get(root, 0) + 1
    sizes = [_unread_bytes(found, row) for found, row in to_read] if two_processes else []  # none: all read here

    def child_reads(job: tuple[FoundFile, FileRow | None]) -> Iterator[FileStep]:
        # The child parses: this process redacts what it hands over (it has the time, storing waits on
        # the child) and stores it, unless it falls far behind (see read_ahead's `finish`).
        return read_file(job[0], settings, job[1], handover=True)

    def child_redacts(step: FileStep) -> FileStep:
        _redact_step(step, settings)
        return step

    # With one child, this process redacts what it hands over: its redactor's gate is built while the
    # child reads the first batch. Several children redact themselves: built here before they are
    # forked, each inherits it (real corpus, 3 readers: 0.458 -> 0.425 s of CPU in all).
    prepare = settings.redact and bool(sizes)
    if prepare and read_ahead.readers(sizes, read_ahead.cpus()) > 1:
        prepare = False
        redact.redactor(settings.redact, settings.redact_patterns).prepare()
    with contextlib.closing(read_ahead.read_ahead(to_read, sizes, child_reads, child_redacts)) as read_there:
        for (found, row), steps in zip(to_read, read_there, strict=True):
            if steps is not None and prepare:
                prepare = False
                redact.redactor(settings.redact, settings.redact_patterns).prepare()
            _ingest_file(store, found, settings, report, row, steps)
    _notice_vanished(store, report, seen, known)
    report.chunks_created += store.form_chunks(settings.chunk_tokens)  # turns left unchunked, if any
    return report


def _unread_bytes(found: FoundFile, row: FileRow | None) -> int:
    try:
        return max(0, os.stat(found.path).st_size - (row.cursor.offset if row else 0))
    except OSError:
        return 0  # reading it says what is wrong


def _unchanged_on_disk(path: str, cursor: FileCursor) -> bool:
    try:
        return unchanged(cursor, os.stat(path))
    except OSError:
        return False  # reading it says what is wrong


def _notice_vanished(store: Store, report: ScanReport, seen: set[str], known: dict[str, FileRow]) -> None:
    roots = [str(r) + os.sep for r in report.roots]
    for path, row in known.items():
        if path in seen or row.missing or not any(path.startswith(r) for r in roots):
            continue
        line = row.cursor.line_no
        message = f"file vanished after {line} lines were read; the turns already read from it are kept"
        report.problems.append(ReadProblem(path, line, ProblemKind.VANISHED, message))
        store.file_problem(path, message, missing=True, line_no=line)


class _Batch:
    """Turns and cursor of one file waiting to be stored together."""

    def __init__(self) -> None:
        self.turns: list[ScannedTurn] = []
        self.session: SessionInfo | None = None
        self.dropped: Counter[str] = Counter()
        self.drop_records: Counter[str] = Counter()
        self.problems: list[LineProblem] = []
        self.bytes = 0
        # Bad lines of a file that has decoded no record yet: said when one decodes, else as one
        # problem when the batch is handed on (read_file's flush), so never pickled.
        self.undecoded: list[LineProblem] = []
        self.longest_skipped = 0  # bytes of the longest line skipped as too long

    def add_session(self, info: SessionInfo) -> None:
        if self.session is None:
            self.session = info
        else:
            self.session = replace(self.session, cwd=info.cwd or self.session.cwd,
                                   title=info.title or self.session.title,
                                   cwds=(*self.session.cwds, *(c for c in info.cwds if c not in self.session.cwds)))

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (read_ahead hands batches between processes) with each turn as a tuple of plain
        # values, which pickle writes and reads without a Python call; objects reduced one by one
        # cost 2-3x as much (a 100 MB session: 1.0 s of its CPU, against 0.45 s).
        flat = [(d.id, d.role._value_, d.text, d.files, d.timestamp, d.message_id, d.redacted,
                 tuple((e.path, e.text) for e in d.edits) if d.edits else (), line, tokens, header)
                for d, line, tokens, header in self.turns]
        return _unpickled_batch, (flat, self.session, self.dropped, self.drop_records, self.problems, self.bytes)


_ROLES = {role._value_: role for role in Role}


def _unpickled_batch(flat: list[tuple[Any, ...]], session: SessionInfo | None, dropped: Counter[str],
                     drop_records: Counter[str], problems: list[LineProblem], size: int) -> _Batch:
    batch = _Batch()
    new, roles = tuple.__new__, _ROLES
    batch.turns = [new(ScannedTurn, (TurnDraft(i, roles[role], text, files, ts, message, found,
                                               tuple(FileEdit(*e) for e in edits) if edits else ()),
                                     line, tokens, header))
                   for i, role, text, files, ts, message, found, edits, line, tokens, header in flat]
    batch.session, batch.dropped, batch.drop_records, batch.problems, batch.bytes = (
        session, dropped, drop_records, problems, size)
    return batch


def _ingest_file(
    store: Store, found: FoundFile, settings: Settings, report: ScanReport, row: FileRow | None,
    read: Iterator[FileStep] | None = None,
) -> None:
    """Read the file on from its stored cursor and store what it holds, batch by batch; `read`: the
    steps another process reads from it (from the same row), stored as they come."""
    opened = False
    for _ in range(5):
        try:
            for step in read if read is not None else read_file(found, settings, row):
                if isinstance(step, Opened) and opened:
                    continue  # read on after a retry: the file counts once
                opened = opened or isinstance(step, Opened)
                _apply(store, found, step, settings, report)
            return
        except (CursorMoved, read_ahead.NotDelivered):
            # Another process (a second window's daemon, a terminal) stored these lines meanwhile, or
            # the read-ahead child stopped partway: nothing of this batch was stored; read on from the
            # cursor stored.
            row, read = store.get_file(str(found.path)), None


@dataclass
class StoreBatch:
    """A batch of a file's turns to store, with the cursor they move it to (see Store.ingest)."""

    cursor: FileCursor
    since: FileCursor  # the cursor as stored before: the batch is stored only if it still is
    restart: bool  # the first batch of a re-read takes back the file's earlier drop counts
    session_id: str
    reader_state: dict[str, Any]
    batch: _Batch
    redacted: bool  # False: read by a process that left redaction to the one that stores it


@dataclass
class Unreadable:
    path: str
    why: OSError | str


@dataclass
class Opened:
    """The file is read (counted under files_read)."""


FileStep = StoreBatch | Unreadable | Opened


def _apply(store: Store, found: FoundFile, step: FileStep, settings: Settings, report: ScanReport) -> None:
    if isinstance(step, Opened):
        report.files_read += 1
    elif isinstance(step, Unreadable):
        _unreadable(store, report, step.path, step.why)
    else:
        _redact_step(step, settings)
        batch = step.batch
        added = store.ingest(
            step.cursor, found.role.agent, step.session_id, found.role.subagent, step.reader_state, batch.turns,
            batch.session, batch.dropped, batch.drop_records, batch.problems, chunk_tokens=settings.chunk_tokens,
            since=step.since, restart=step.restart, longest_skipped=batch.longest_skipped,
        )
        report.turns_added += added.turns
        report.chunks_created += added.chunks
        report.redacted.update(added.redacted)
        _count_tool_output(report, batch)
        report.problems.extend(ReadProblem(str(found.path), p.line_no, ProblemKind.LINE, p.message)
                               for p in batch.problems)


def _refit(row: FileRow, settings: Settings) -> bool:
    """Lines of the file skipped as too long that the limit admits now (it was raised): read again."""
    return 0 < row.longest_skipped <= settings.max_line_bytes


def read_file(found: FoundFile, settings: Settings, row: FileRow | None, handover: bool = False
              ) -> Iterator[FileStep]:
    """What a file holds after its stored cursor, read, parsed and redacted, as the steps that store
    it; nothing here touches the database (another process may run it: see read_ahead). With
    `handover`, read for another process that redacts and stores: batches smaller, not redacted."""
    path = str(found.path)
    try:
        st = os.stat(path)
    except OSError as exc:  # a dangling symlink, a symlink loop, a file gone meanwhile
        yield Unreadable(path, f"cannot stat: {exc.strerror or exc}")
        return
    if not stat.S_ISREG(st.st_mode):
        # Opening a FIFO would wait for a writer forever; a directory or a device is no transcript.
        yield Unreadable(path, f"cannot read: {_file_type(st.st_mode)}, not a regular file; skipped")
        return
    cursor = row.cursor if row else FileCursor(path)
    # Lines skipped as too long that the limit admits now (it was raised): the file is read again from
    # the start, and those lines with it (the turns stored already are not stored twice).
    refit = row is not None and _refit(row, settings)
    if row is not None and not row.missing and unchanged(cursor, st) and not refit:
        return
    reader_state = dict(row.reader_state) if row else {}
    reset = check_identity(cursor, st) if row else None
    if refit and reset is None:
        reset = Reset("lines skipped as too long fit the limit now")
    # A whole-JSON transcript is rewritten as it grows: each change is read whole again, from a
    # fresh state (the stable turn ids add only what is new), and being re-read is not news.
    whole_json = whole_file(found.path.name)
    if whole_json and row is not None and reset is None and cursor.offset:
        reset = Reset("a whole-JSON transcript changed")
    before = cursor
    # Same file, cut short (rather than replaced or rewritten): said where it now breaks off.
    shrank = reset is not None and (st.st_dev, st.st_ino) == (before.dev, before.inode) and st.st_size < before.offset
    if row is None or reset is not None:
        reader_state = {}
        try:
            cursor = fresh_cursor(cursor, st)
        except OSError as exc:
            yield Unreadable(path, exc)
            return
    reader_state.update(found.facts)  # what the claim learnt beside the file (Gemini CLI's project roots)
    reader = READERS[found.role.agent]
    skim: Skim | None = getattr(reader, "skim", None) if SKIM else None  # an optional Skims method
    redactor = redact.OFF if handover else redact.redactor(settings.redact, settings.redact_patterns)
    batch_bytes = HANDOVER_BATCH_BYTES if handover else BATCH_BYTES
    session_id = found.role.session_id or (row.session_id if row else None)
    batch = _Batch()
    yield Opened()
    if reset is not None and not shrank and not whole_json and not refit:
        # Replaced or rewritten: said at the line reading had reached.
        message = f"{reset.reason} after {before.line_no} lines were read; {_REREAD}"
        batch.problems.append(LineProblem(before.line_no, message))

    last: TailEvent | None = None  # the cursor follows it; advanced once per batch, not once per line
    stored_from = before  # the cursor as stored
    restart = reset is not None

    def flush() -> StoreBatch:
        nonlocal batch, cursor, last, stored_from, restart
        if last is not None:
            cursor = advance(cursor, last, st)
            last = None
        sid = session_id or reader_state.get("session_id") or found.path.stem
        if batch.undecoded:
            _not_a_transcript(batch, reader_state)
        if redactor.detectors:
            _redact_batch(redactor, batch)
        step = StoreBatch(cursor, stored_from, restart, sid, reader_state, batch, redacted=not handover)
        stored_from, restart, batch = cursor, False, _Batch()
        return step

    try:
        for event in (tail_whole if whole_json else tail)(cursor, st, settings.max_line_bytes):
            if isinstance(event, RawLine):
                _parse_line(reader, event, reader_state, batch, skim, settings.tool_output_chars)
                batch.bytes += len(event.data)
            else:
                batch.problems.append(LineProblem(event.line_no, f"skipped: {event.reason} (policy oversized_line)"))
                batch.dropped["oversized_line"] += event.size
                batch.drop_records["oversized_line"] += 1
                batch.longest_skipped = max(batch.longest_skipped, event.size)
            last = event
            if len(batch.turns) >= BATCH_TURNS or batch.bytes >= batch_bytes:
                yield flush()
    except OSError as exc:
        yield flush()  # keep what was read before the error
        yield Unreadable(path, exc)
        return
    if last is not None:
        cursor = advance(cursor, last, st)
        last = None
    cursor = replace(cursor, size=st.st_size, mtime_ns=st.st_mtime_ns)
    if whole_json:
        if cursor.offset < st.st_size and time.time() - st.st_mtime_ns / 1e9 >= SETTLE_SECONDS:
            batch.problems.append(LineProblem(1, (
                f"not one whole JSON object ({st.st_size} bytes, unchanged for {SETTLE_SECONDS:g}s);"
                " read again once it changes")))
    elif reset is not None and shrank:
        whole, partial = cursor.line_no, cursor.offset < st.st_size
        ends = f"breaks off in line {whole + 1}" if partial else f"ends after line {whole}" if whole else "is empty"
        batch.problems.append(LineProblem(
            whole + 1 if partial else whole,
            f"{reset.reason}: it now {ends}, {before.line_no} lines had been read; {_REREAD}",
        ))
    elif cursor.offset < st.st_size and time.time() - st.st_mtime_ns / 1e9 >= SETTLE_SECONDS:
        # The writer stopped mid-record (the bytes after the last newline are no whole record) and the
        # file has been quiet since: said, and read once a newline ends the line.
        batch.problems.append(LineProblem(cursor.line_no + 1, (
            f"unfinished last line: {st.st_size - cursor.offset} bytes without a newline that are not a whole"
            f" record, unchanged for {SETTLE_SECONDS:g}s; read once the line is finished")))
    yield flush()


def _ingest_database(store: Store, reader: DatabaseReader, path: Path, settings: Settings, report: ScanReport,
                     known: dict[str, FileRow]) -> None:
    """The changed sessions of a database source, each stored with its progress in one transaction
    (as a file's batch and cursor are): the progress only moves past what is stored."""
    try:
        st = os.stat(path)
        with turn_text.tool_output_head(settings.tool_output_chars):
            reads = list(reader.read_sessions(path, {p: (r.cursor.mtime_ns, r.reader_state) for p, r in known.items()}))
    except (OSError, sqlite3.Error) as exc:  # locked for long, not the format's database, corrupt, gone
        _unreadable(store, report, str(path), f"cannot read the {reader.agent} database: {exc}")
        return
    report.files_read += 1
    redactor = redact.redactor(settings.redact, settings.redact_patterns)
    for read in reads:
        row = known.get(read.key)
        batch = _Batch()
        for record_no, parsed in read.records:
            _add_parsed(parsed, record_no, batch)
        if redactor.detectors:
            _redact_batch(redactor, batch)
        cursor = FileCursor(read.key, st.st_dev, st.st_ino, 0, read.version, read.progress, read.consumed)
        try:
            added = store.ingest(
                cursor, reader.agent, read.role.session_id or read.key, read.role.subagent, read.state, batch.turns,
                batch.session, batch.dropped, batch.drop_records, batch.problems, chunk_tokens=settings.chunk_tokens,
                since=row.cursor if row is not None else FileCursor(read.key),
            )
        except CursorMoved:
            continue  # another process stored this session meanwhile: the next scan reads on from there
        report.turns_added += added.turns
        report.chunks_created += added.chunks
        report.redacted.update(added.redacted)
        _count_tool_output(report, batch)


def _redact_step(step: FileStep, settings: Settings) -> None:
    """A batch read for another process (read_file's `handover`) redacted, once, before it is stored."""
    if isinstance(step, StoreBatch) and not step.redacted:
        redactor = redact.redactor(settings.redact, settings.redact_patterns)
        if redactor.detectors:
            _redact_batch(redactor, step.batch)
        step.redacted = True


def _redact_batch(redactor: redact.Redactor, batch: _Batch) -> None:
    """Secrets out of the batch's turns (their token estimates follow the new text), its session
    title (the first prompt's start, or a title record) and its problem messages, before any is stored."""
    turns = batch.turns
    changed = redactor.redact_many([t[0].text for t in turns])
    title = batch.session.title if batch.session is not None else None
    new_title = None
    for i, result in changed.items():
        draft, line_no, _, header = turns[i]
        if title is not None and new_title is None and " ".join(draft.text.split())[:120] == title:
            # the title a reader made of this prompt; redacted again, as joining its lines makes new text
            new_title = redactor.redact(" ".join(result.text.split())[:120]).text
        draft.text, draft.redacted = result.text, result.found
        turns[i] = ScannedTurn(draft, line_no, header + estimate_tokens(result.text), header)
    _redact_edits(redactor, turns)
    if batch.session is not None and title:
        new_title = new_title if new_title is not None else redactor.redact(title).text
        if new_title != title:
            batch.session = replace(batch.session, title=new_title)
    if batch.problems:
        fixed = redactor.redact_many([p.message for p in batch.problems])
        for i, result in fixed.items():
            batch.problems[i] = batch.problems[i]._replace(message=result.text)


def _redact_edits(redactor: redact.Redactor, turns: list[ScannedTurn]) -> None:
    """Secrets out of what the turns wrote to files, as out of their text (counted there: a call's
    arguments in the text hold the same secret)."""
    edited = [turn[0] for turn in turns if turn[0].edits]
    if not edited:
        return
    texts = [edit.text for draft in edited for edit in draft.edits]
    fixed = redactor.redact_many(texts)
    if not fixed:
        return
    at = 0
    for draft in edited:
        count = len(draft.edits)
        draft.edits = tuple(replace(edit, text=fixed[at + n].text) if at + n in fixed else edit
                            for n, edit in enumerate(draft.edits))
        at += count


_REREAD = "re-read from the start (turns already stored are kept, not duplicated)"
# In a file's reader state: a line of it decoded to a record (it is a transcript), and how many lines
# were read before that none of which did. Until a line decodes, its bad lines are held back and said
# as one problem ("not a transcript"), not one each: random bytes named like a session are one problem.
_HAS_RECORDS = "pipeline.has_records"
_UNDECODED = "pipeline.undecoded_lines"


def _unreadable(store: Store, report: ScanReport, path: str, why: OSError | str) -> None:
    """Said on stderr and kept under the problems of `status` (also for a file never read before)."""
    message = why if isinstance(why, str) else f"cannot read: {why.strerror or why}"
    report.problems.append(ReadProblem(path, None, ProblemKind.UNREADABLE, message))
    store.file_problem(path, message)


def _file_type(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a file"


def _parse_line(reader: Reader, event: RawLine, state: dict[str, object], batch: _Batch,
                skim: Skim | None, tool_output_chars: int = 0) -> None:
    data = event.data
    policy = skim(data, state) if skim is not None else None
    if policy is not None:  # a copy or bookkeeping known from its bytes: counted as parsing it would
        _has_records(batch, state)
        if policy:
            batch.dropped[policy] += len(data)
            batch.drop_records[policy] += 1
        return
    try:
        objects, notes = decode_line(data)
    except LineError as exc:
        salvaged = _salvage_tail(data)
        if salvaged is None:
            problem = LineProblem(event.line_no, redact.hide_secrets(str(exc)))
            (batch.problems if state.get(_HAS_RECORDS) else batch.undecoded).append(problem)
            return
        start, obj = salvaged
        # A record appended after a cut-off one (a file truncated mid-line, then written on): the
        # broken head is reported, the whole record after it is kept, with the id it has on its own.
        batch.problems.append(LineProblem(event.line_no, f"{exc}; the first {start} bytes are a broken record,"
                                                         " dropped, and the whole record after them is kept"))
        data, objects, notes = data[start:], [obj], []
    if objects:
        _has_records(batch, state)
    batch.problems.extend(LineProblem(event.line_no, note) for note in notes)
    for index, obj in enumerate(objects):
        raw = data if len(objects) == 1 else data + b"#%d" % index
        try:
            parsed, left_out = turn_text.parsed_with_head(tool_output_chars, reader.parse, obj, raw, state)
            if left_out:
                parsed.dropped[turn_text.TOOL_OUTPUT] += left_out
        except RecursionError:
            batch.problems.append(LineProblem(event.line_no, "record nested too deeply to read; skipped"))
            continue
        except Exception as exc:  # a record no reader expected must not stop the scan or cost its neighbours
            batch.problems.append(LineProblem(event.line_no, f"the {reader.agent} reader failed on this record"
                                                             f" ({type(exc).__name__}: {exc}); skipped"))
            continue
        _add_parsed(parsed, event.line_no, batch)


def _count_tool_output(report: ScanReport, batch: _Batch) -> None:
    report.tool_output_left_out += batch.dropped.get(turn_text.TOOL_OUTPUT, 0)
    report.tool_output_records += batch.drop_records.get(turn_text.TOOL_OUTPUT, 0)


def _has_records(batch: _Batch, state: dict[str, object]) -> None:
    """A line of the file decoded: it is a transcript, so each bad line held back before is said."""
    if batch.undecoded:
        batch.problems.extend(batch.undecoded)
        batch.undecoded.clear()
    state[_HAS_RECORDS] = True


def _not_a_transcript(batch: _Batch, state: dict[str, object]) -> None:
    """The batch's bad lines, in a file none of whose lines has decoded yet, said as one problem (once
    per file): they are still read, and a record written after them is read as in any transcript."""
    held, batch.undecoded = batch.undecoded, []
    before = state.get(_UNDECODED)
    state[_UNDECODED] = (before if isinstance(before, int) else 0) + len(held)
    if before:
        return
    first = held[0]
    batch.problems.append(LineProblem(first.line_no, (
        f"not a transcript: no JSON record in {plural(len(held), 'line')} read (line {first.line_no}: "
        f"{first.message}); skipped, and records written to it later are read")))


def _add_parsed(parsed: ParsedLine, line_no: int, batch: _Batch) -> None:
    for draft in parsed.turns:
        header = _header_tokens(draft.role, draft.files)
        batch.turns.append(ScannedTurn(draft, line_no, header + estimate_tokens(draft.text), header))
    if parsed.session is not None:
        batch.add_session(parsed.session)
    for policy, amount in parsed.dropped.items():
        batch.dropped[policy] += amount
        batch.drop_records[policy] += 1


@lru_cache(maxsize=256)  # most turns share a role and an empty file list (the Role, not its slow .value)
def _header_tokens(role: Role, files: tuple[str, ...]) -> int:
    return estimate_tokens(planned_header(role.value, files))


SALVAGE_TRIES = 64


def _salvage_tail(data: bytes) -> tuple[int, dict[str, Any]] | None:
    """The first position after the line's start where a whole JSON object runs to the end of the
    line, and that object; None when there is none (within SALVAGE_TRIES candidate positions)."""
    pos = 0
    for _ in range(SALVAGE_TRIES):
        pos = data.find(b'{"', pos + 1)
        if pos < 0:
            return None
        try:
            obj = orjson.loads(data[pos:])
        except orjson.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return pos, obj
    return None
