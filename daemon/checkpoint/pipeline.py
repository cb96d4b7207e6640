"""Scan and checkpoint runs. Serves the CLI and the daemon alike; knows nothing about editors.

scan:        discover files -> tail new whole lines -> reader -> turns + cursor (one transaction
             per batch) -> form chunks within the token budget.
checkpoint:  lease due chunks -> extractor (worker threads) -> validate -> commit items, chunk state
             and watermark in one transaction. A failure records its cause and leaves the chunk due.
"""

from __future__ import annotations

import os
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from checkpoint.chunker import estimate_tokens
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError, Extractor
from checkpoint.extract.prompt import turn_header
from checkpoint.model import ChunkInput, Extraction, SessionInfo, Usage
from checkpoint.sources import READERS, FoundFile, discover
from checkpoint.sources.base import LineError, Reader, TurnDraft, decode_line
from checkpoint.sources.tailer import (
    FileCursor,
    RawLine,
    advance,
    check_identity,
    fresh_cursor,
    tail,
    unchanged,
)
from checkpoint.store import LeaseLost, SessionCounts, Store

BATCH_TURNS = 2000
BATCH_BYTES = 8 << 20


@dataclass
class ScanReport:
    roots: list[Path]
    files_seen: int = 0
    files_read: int = 0
    turns_added: int = 0
    chunks_created: int = 0
    warnings: list[str] = field(default_factory=list)
    files_per_root: dict[Path, int] = field(default_factory=dict)

    @property
    def roots_present(self) -> list[Path]:
        return [r for r in self.roots if r.is_dir()]


def scan(store: Store, settings: Settings) -> ScanReport:
    report = ScanReport(roots=list(settings.sources))
    seen: set[str] = set()
    for found in discover(report.roots, report.warnings):
        report.files_seen += 1
        seen.add(str(found.path))
        root = next((r for r in report.roots if found.path.is_relative_to(r)), None)
        if root is not None:
            report.files_per_root[root] = report.files_per_root.get(root, 0) + 1
        _ingest_file(store, found, settings, report)
    _notice_vanished(store, report, seen)
    report.chunks_created = store.form_chunks(settings.chunk_tokens)
    return report


def _notice_vanished(store: Store, report: ScanReport, seen: set[str]) -> None:
    roots = [str(r) + os.sep for r in report.roots]
    for path, row in store.file_cursors().items():
        if path in seen or row.missing or not any(path.startswith(r) for r in roots):
            continue
        line = row.cursor.line_no
        message = f"file vanished after {line} lines were read; the turns already read from it are kept"
        report.warnings.append(f"{path}:{line}: {message}")
        store.file_problem(path, message, missing=True, line_no=line)


class _Batch:
    """Turns and cursor of one file waiting to be stored together."""

    def __init__(self) -> None:
        self.turns: list[tuple[TurnDraft, int, int, int]] = []
        self.session: SessionInfo | None = None
        self.dropped: Counter[str] = Counter()
        self.drop_records: Counter[str] = Counter()
        self.problems: list[tuple[int, str]] = []
        self.bytes = 0

    def add_session(self, info: SessionInfo) -> None:
        if self.session is None:
            self.session = info
        else:
            self.session = self.session.model_copy(
                update={k: v for k, v in info.model_dump().items() if v and k in ("cwd", "title")}
            )


def _ingest_file(store: Store, found: FoundFile, settings: Settings, report: ScanReport) -> None:
    path = str(found.path)
    try:
        st = os.stat(path)
    except OSError as exc:
        report.warnings.append(f"{path}: cannot stat: {exc.strerror}")
        return
    row = store.get_file(path)
    cursor = row.cursor if row else FileCursor(path)
    if row is not None and not row.missing and unchanged(cursor, st):
        return
    reader_state = dict(row.reader_state) if row else {}
    reset = check_identity(cursor, st) if row else None
    before = cursor
    # Same file, cut short (rather than replaced or rewritten): said where it now breaks off.
    shrank = reset is not None and (st.st_dev, st.st_ino) == (before.dev, before.inode) and st.st_size < before.offset
    if row is None or reset is not None:
        reader_state = {}
        try:
            cursor = fresh_cursor(cursor, st)
        except OSError as exc:
            _unreadable(store, report, path, exc)
            return
    reader = READERS[found.role.agent]
    session_id = found.role.session_id or (row.session_id if row else None)
    batch = _Batch()
    report.files_read += 1
    if reset is not None and not shrank:
        # Replaced or rewritten: said at the line reading had reached.
        batch.problems.append((before.line_no, f"{reset.reason} after {before.line_no} lines were read; {_REREAD}"))

    def flush() -> None:
        nonlocal batch
        sid = session_id or reader_state.get("session_id") or found.path.stem
        report.turns_added += store.ingest(
            cursor, found.role.agent, sid, found.role.subagent, reader_state, batch.turns, batch.session,
            batch.dropped, batch.drop_records, batch.problems,
        )
        for line_no, problem in batch.problems:
            report.warnings.append(f"{path}:{line_no}: {problem}")
        batch = _Batch()

    try:
        for event in tail(cursor, st, settings.max_line_bytes):
            if isinstance(event, RawLine):
                _parse_line(reader, event, reader_state, batch)
                batch.bytes += len(event.data)
            else:
                batch.problems.append((event.line_no, f"skipped: {event.reason} (policy oversized_line)"))
                batch.dropped["oversized_line"] += event.size
                batch.drop_records["oversized_line"] += 1
            cursor = advance(cursor, event, st)
            if len(batch.turns) >= BATCH_TURNS or batch.bytes >= BATCH_BYTES:
                flush()
    except OSError as exc:
        flush()  # keep what was read before the error
        _unreadable(store, report, path, exc)
        return
    cursor = replace(cursor, size=st.st_size, mtime_ns=st.st_mtime_ns)
    if reset is not None and shrank:
        whole, partial = cursor.line_no, cursor.offset < st.st_size
        ends = f"breaks off in line {whole + 1}" if partial else f"ends after line {whole}"
        batch.problems.append((
            whole + 1 if partial else whole,
            f"{reset.reason}: it now {ends}, {before.line_no} lines had been read; {_REREAD}",
        ))
    flush()


_REREAD = "re-read from the start (turns already stored are kept, not duplicated)"


def _unreadable(store: Store, report: ScanReport, path: str, exc: OSError) -> None:
    message = f"cannot read: {exc.strerror or exc}"
    report.warnings.append(f"{path}: {message}")
    if store.get_file(path) is not None:
        store.file_problem(path, message)


def _parse_line(reader: Reader, event: RawLine, state: dict[str, object], batch: _Batch) -> None:
    data = event.data
    try:
        objects, notes = decode_line(data)
    except LineError as exc:
        salvaged = _salvage_tail(data)
        if salvaged is None:
            batch.problems.append((event.line_no, str(exc)))
            return
        start, obj = salvaged
        # A record appended after a cut-off one (a file truncated mid-line, then written on): the
        # broken head is reported, the whole record after it is kept, with the id it has on its own.
        batch.problems.append((event.line_no, f"{exc}; the first {start} bytes are a broken record, dropped,"
                                              " and the whole record after them is kept"))
        data, objects, notes = data[start:], [obj], []
    batch.problems.extend((event.line_no, note) for note in notes)
    for index, obj in enumerate(objects):
        raw = data if len(objects) == 1 else data + b"#%d" % index
        parsed = reader.parse(obj, raw, state)
        for draft in parsed.turns:
            header = estimate_tokens(turn_header(draft.id, draft.role.value, draft.timestamp, draft.files))
            batch.turns.append((draft, event.line_no, header + estimate_tokens(draft.text), header))
        if parsed.session is not None:
            batch.add_session(parsed.session)
        for policy, amount in parsed.dropped.items():
            batch.dropped[policy] += amount
            batch.drop_records[policy] += 1


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


# -- status -----------------------------------------------------------------------------------------


def totals(sessions: Sequence[SessionCounts]) -> dict[str, int]:
    return {key: sum(getattr(s, key) for s in sessions) for key in ("turns", "captured", "pending", "failed")}


def status(store: Store, session_ids: Sequence[str] | None = None) -> dict[str, Any]:
    """The status every surface shows: `totals` and `sessions` (the contract of `status --json`)."""
    sessions = store.session_counts(session_ids)
    return {"totals": totals(sessions), "sessions": [s.as_dict() for s in sessions], "problems": store.problems()}


# -- checkpoint runs --------------------------------------------------------------------------------


@dataclass
class Budget:
    """Caps for one run. What is left when a cap is reached stays pending and is reported."""

    max_requests: int | None = None
    max_tokens: int | None = None

    def refuses(self, requests: int, tokens: int, next_tokens: int) -> str | None:
        if self.max_requests is not None and requests + 1 > self.max_requests:
            return f"request budget of {self.max_requests} reached"
        if self.max_tokens is not None and tokens + next_tokens > self.max_tokens:
            return f"token budget of {self.max_tokens} reached"
        return None


@dataclass
class Failure:
    chunk_id: int
    session_id: str
    cause: str


@dataclass
class RunReport:
    run_id: int
    extractor: str
    tried: int = 0
    captured: int = 0
    failed: int = 0
    items_added: int = 0
    items_rejected: int = 0
    usage: Usage = field(default_factory=Usage)
    failures: list[Failure] = field(default_factory=list)
    stopped_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.failed == 0


Progress = Callable[[int, int], None]


def validate(chunk: ChunkInput, extraction: Extraction) -> tuple[Extraction, int]:
    """Keep only items that cite turns of this chunk; cite only those. Returns (clean, rejected)."""
    allowed = {t.turn_id for t in chunk.turns}
    kept = []
    rejected = 0
    for item in extraction.items:
        cited = [t for t in item.turn_ids if t in allowed]
        if not cited:
            rejected += 1
            continue
        kept.append(item.model_copy(update={"turn_ids": cited}))
    return extraction.model_copy(update={"items": kept, "chunk_id": chunk.chunk_id}), rejected


def retry_delay(attempts: int) -> float:
    return float(min(600, 5 * 2 ** min(attempts, 7)))


def checkpoint(
    store: Store,
    extractor: Extractor,
    budget: Budget | None = None,
    concurrency: int = 1,
    session_id: str | None = None,
    progress: Progress | None = None,
    respect_backoff: bool = False,
) -> RunReport:
    """One run over the due chunks: each tried at most once, at most `concurrency` in flight.
    An explicit run retries failed chunks at once; background runs respect their backoff."""
    budget = budget or Budget()
    owner = uuid.uuid4().hex
    report = RunReport(run_id=store.start_run(extractor.name), extractor=extractor.name)
    tried: set[int] = set()
    tokens_sent = 0
    total = store.due_count(session_id)
    in_flight: dict[Future[Extraction], ChunkInput] = {}
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="extract") as pool:
        try:
            while True:
                while len(in_flight) < max(1, concurrency) and report.stopped_by is None:
                    claimed = store.claim_chunks(
                        1, owner, session_id=session_id, exclude=tried, respect_backoff=respect_backoff
                    )
                    if not claimed:
                        break
                    chunk = claimed[0]
                    refusal = budget.refuses(report.tried, tokens_sent, chunk.token_estimate)
                    if refusal:
                        report.stopped_by = refusal
                        break
                    tried.add(chunk.chunk_id)
                    report.tried += 1
                    tokens_sent += chunk.token_estimate
                    in_flight[pool.submit(extractor.extract, chunk)] = chunk
                if not in_flight:
                    break
                done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                for future in done:
                    _settle(store, owner, in_flight.pop(future), future, report)
                    if progress:
                        progress(report.captured + report.failed, max(total, report.tried))
        finally:
            # Interrupted: whatever is still in flight was not committed and goes back to pending.
            for future in in_flight:
                future.cancel()
            store.release_chunks(owner)
            store.finish_run(report.run_id, report.tried, report.captured, report.failed, report.items_added,
                             report.usage, report.stopped_by)
    return report


def _settle(store: Store, owner: str, chunk: ChunkInput, future: Future[Extraction], report: RunReport) -> None:
    try:
        extraction = future.result()
    except ExtractionError as exc:
        cause = exc.cause
    except Exception as exc:  # an extractor bug must not lose the chunk: record it, keep it due
        cause = f"unexpected {type(exc).__name__}: {exc}"
    else:
        clean, rejected = validate(chunk, extraction)
        try:
            report.items_added += store.commit_extraction(clean, owner)
        except LeaseLost as exc:
            report.failures.append(Failure(chunk.chunk_id, chunk.session_id, str(exc)))
            return
        report.items_rejected += rejected
        report.captured += 1
        _add_usage(report.usage, extraction.usage)
        return
    store.fail_chunk(chunk.chunk_id, owner, cause, retry_delay)
    report.failed += 1
    report.failures.append(Failure(chunk.chunk_id, chunk.session_id, cause))


def _add_usage(total: Usage, more: Usage) -> None:
    total.input_tokens += more.input_tokens
    total.output_tokens += more.output_tokens
    total.cache_creation_input_tokens += more.cache_creation_input_tokens
    total.cache_read_input_tokens += more.cache_read_input_tokens
    total.requests += more.requests
