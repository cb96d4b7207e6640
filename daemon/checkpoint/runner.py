"""Checkpoint runs: capture for every front end (the CLI, the daemon, the agent hooks).

extract_due: lease due chunks -> extractor (worker threads) -> validate -> commit items, chunk state
             and watermark in one transaction. A failure records its cause and leaves the chunk due.
RunOptions:  what a run honours, built once from the settings (`RunOptions.from_settings`), so that
             every front end runs with the same budget, known items, lease, redaction and chunk size.
extract_sessions: one run over some sessions within one budget.
capture:     the one entry of every front end: the chosen extractor, scan, then that run (a
             background run: the run alone).
Knows nothing about editors or terminals: front ends print or send the report (model.RunReport).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from checkpoint import config, pipeline, redact, sources
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError, Extractor, Priced, fitted_chunk_tokens
from checkpoint.extract.choose import ExtractorChoice, choose_extractor
from checkpoint.extract.held import held_for_review
from checkpoint.extract.item_files import item_files
from checkpoint.extract.one_off import one_off
from checkpoint.extract.prompt import quoted_header_files, turn_labels
from checkpoint.extract.retry import CHUNK_REQUESTS, ChunkRequests, RequestAllowance
from checkpoint.model import TOOL_OUTPUT_ONLY, ChunkInput, Citation, Failure, Role, RunReport, Usage
from checkpoint.pipeline import DAY, ScanReport
from checkpoint.shown_text import render_agent_lines
from checkpoint.store import LeaseLost, Store

if TYPE_CHECKING:
    import threading
    from concurrent.futures import Future

    from checkpoint.answer import Extraction

Progress = Callable[[int, int], None]  # (chunks settled, chunks of the run)
Update = Callable[[RunReport], None]


BUDGET_MARGIN = 1.25


@dataclass(frozen=True)
class Budget:
    """Caps for one run. What is left when a cap is reached stays pending and is reported.

    Checked before each chunk is sent, against what the run has used plus what the chunks in flight
    and this one are expected to use; a chunk already sent may finish (its retries are bounded)."""

    max_requests: int | None = None
    max_tokens: int | None = None  # every billed token: input, cache and output
    max_cost: float | None = None  # US dollars

    def refuses(self, requests: int, tokens: int, next_tokens: int) -> str | None:
        return self.refuses_usage(Usage(requests=requests, input_tokens=tokens),
                                  Usage(requests=1, input_tokens=next_tokens))

    def refuses_usage(self, used: Usage, expected: Usage) -> str | None:
        """`used`: spent (or, for chunks in flight, expected); `expected`: the next chunk's estimate.
        Estimates get a margin, since a chunk's real count can exceed the average it was scaled from."""
        if self.max_requests is not None and used.requests + max(1, expected.requests) > self.max_requests:
            return f"request budget of {self.max_requests:,} reached"
        if self.max_tokens is not None and used.tokens + expected.tokens * BUDGET_MARGIN > self.max_tokens:
            return f"token budget of {self.max_tokens:,} reached"
        if self.max_cost is not None and used.cost_usd + expected.cost_usd * BUDGET_MARGIN > self.max_cost:
            return f"cost budget of ${self.max_cost:,.2f} reached"
        return None

    def less(self, used: Usage) -> Budget:
        """What is left of the caps after `used`."""
        def left(cap: float | None, spent: float) -> float | None:
            return None if cap is None else max(0.0, cap - spent)

        requests = left(self.max_requests, used.requests)
        tokens = left(self.max_tokens, used.tokens)
        return Budget(None if requests is None else int(requests), None if tokens is None else int(tokens),
                      left(self.max_cost, used.cost_usd))


@dataclass(frozen=True)
class RunOptions:
    """Everything a run honours besides the store and the extractor. The defaults are the settings'
    defaults, but for `concurrency`: a run built by hand sends one chunk at a time."""

    budget: Budget = field(default_factory=Budget)
    concurrency: int = 1
    known_items: int = Settings.known_items
    lease_seconds: float = Settings.lease_seconds
    redactor: redact.Redactor | None = None  # None: the default detectors; redact.OFF sends text as stored
    at_risk_days: float = Settings.at_risk_days
    cleanup_days: float | None = None  # Claude Code's cleanupPeriodDays; None: read from its settings
    chunk_tokens: int = Settings.chunk_tokens  # the size of new chunks, fitted to the extractor's window

    @classmethod
    def from_settings(
        cls, settings: Settings, extractor: Extractor | None = None, *, concurrency: int | None = None
    ) -> RunOptions:
        """The run the settings ask for; with an extractor, new chunks sized to fit its window."""
        chunk_tokens = settings.chunk_tokens
        if extractor is not None:
            chunk_tokens = fitted_chunk_tokens(extractor, chunk_tokens)
        return cls(
            budget=Budget(settings.max_requests, settings.max_tokens, settings.max_cost),
            concurrency=concurrency or settings.concurrency,
            known_items=settings.known_items,
            lease_seconds=settings.lease_seconds,
            redactor=redact.redactor(settings.redact, settings.redact_patterns),
            at_risk_days=settings.at_risk_days,
            chunk_tokens=chunk_tokens,
        )

    def scan_settings(self, settings: Settings) -> Settings:
        """The settings a scan before this run forms chunks with: new chunks fit the model's window
        from the start (older ones are re-split when sent)."""
        if self.chunk_tokens < settings.chunk_tokens:
            return replace(settings, chunk_tokens=self.chunk_tokens)
        return settings


def validate(chunk: ChunkInput, extraction: Extraction,
             dropped: Counter[str] | None = None) -> tuple[Extraction, int]:
    """Every item of the answer, citing turns of this chunk by id. The labels and ids of an item that
    name turns of this chunk are its citation (the rest go); an item that names none (no citation,
    or only turns of other chunks or of nowhere) is kept too, attributed to the chunk
    (`Citation.CHUNK`): the model found it here, and dropping it would be the quiet forgetting
    Checkpoint exists to prevent. An item whose sources would all be tool output (a fetched page, a
    file read, a command's output) is no item: nobody in the session said it, and it would come back
    to every later agent as a recorded decision (issue 32). It is dropped and counted in `dropped`
    under TOOL_OUTPUT_ONLY. Each item kept says whether it is held for the user's review before agents
    see it (`held`: checkpoint.extract.held). Returns (clean, attributed)."""
    # A label wins over an id spelled the same: labels are what the model is asked to copy.
    allowed = {t.turn_id: t.turn_id for t in chunk.turns} | turn_labels(chunk)
    tool_turns = {t.turn_id for t in chunk.turns if t.role is Role.TOOL}
    whole_chunk = chunk_attribution(chunk)
    # Files that only a forged header inside turn text names: no real header could have given them.
    forged = quoted_header_files(chunk)
    kept = []
    attributed = 0
    for item in extraction.items:
        if forged and any(f in forged for f in item.files):
            item = item.model_copy(update={"files": [f for f in item.files if f not in forged]})
        cited = [allowed[t] for t in item.turn_ids if t in allowed]
        if (cited and all(t in tool_turns for t in cited)) or (not cited and not whole_chunk):
            if dropped is not None:
                dropped[TOOL_OUTPUT_ONLY] += 1
            continue
        held = held_for_review(item.statement, item.rationale)
        if item.lasting and one_off(item.statement):  # the phrase rules catch what a model let through
            item = item.model_copy(update={"lasting": False})
        # Its files: those its statement names and those its own turns edited (never the chunk's every
        # file: an item citing no turn of the chunk has only the files it names).
        sources = item_files(chunk, cited, item.statement)
        item = item.model_copy(update={"files": list(sources), "file_sources": sources})
        if cited:
            kept.append(item.model_copy(update={"turn_ids": cited, "cited": Citation.TURNS, "held": held}))
        else:
            # A restatement of a known item (same_as, or the same words) merges into it in the store,
            # which does not widen the known item's citation with this attribution (store_items).
            attributed += 1
            kept.append(item.model_copy(update={"turn_ids": whole_chunk, "cited": Citation.CHUNK, "held": held}))
    return extraction.model_copy(update={"items": kept, "chunk_id": chunk.chunk_id}), attributed


def chunk_attribution(chunk: ChunkInput) -> list[str]:
    """The turns an item that cites none of its chunk's is attributed to: the chunk's user and
    assistant turns, where decisions are said; tool calls and their output are what was run and
    read, and would bury the lines worth opening under file dumps. None in a chunk of tool output
    alone (a long result split across chunks): an item found there has no source but tool output."""
    return list(dict.fromkeys(t.turn_id for t in chunk.turns if t.role is not Role.TOOL))


def retry_delay(attempts: int) -> float:
    return float(min(600, 5 * 2 ** min(attempts, 7)))


def _expected(extractor: Extractor, chunk: ChunkInput) -> Usage:
    if isinstance(extractor, Priced):
        return extractor.estimate(chunk.token_estimate)
    return Usage(requests=1, input_tokens=chunk.token_estimate)



def extract_due(
    store: Store,
    extractor: Extractor,
    options: RunOptions | None = None,
    *,
    session_id: str | None = None,
    progress: Progress | None = None,
    on_update: Update | None = None,
    respect_backoff: bool = False,
) -> RunReport:
    """One run over the due chunks: each tried at most once, at most `options.concurrency` in flight, the
    answers committed here on the calling thread. A chunk too large for the model is replaced by
    smaller pieces, which this run tries too. An explicit run retries failed chunks at once;
    background runs respect their backoff. The chunks in flight are leased for `options.lease_seconds`,
    renewed while their answers are awaited: a live run keeps them, a killed run's expire.

    Every chunk is redacted right before it is sent (`options.redactor`, the default detectors unless given;
    redact.OFF sends stored text as it is). Sessions whose Claude transcripts Claude Code deletes
    within `options.at_risk_days` (`options.cleanup_days`: its cleanupPeriodDays, read from its settings unless given)
    are claimed first."""
    options = options or RunOptions()
    budget, lease_seconds = options.budget, options.lease_seconds
    redactor = options.redactor if options.redactor is not None else redact.redactor()
    cleanup = config.claude_cleanup_days() if options.cleanup_days is None else options.cleanup_days
    urgent = store.sessions_older_than(store.clock() - (cleanup - options.at_risk_days) * DAY, sources.EXPIRING)
    full_spans: dict[tuple[str, int], list[tuple[int, int, str]]] = {}  # split turns being sent
    from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait  # not for scan: its start is measured

    owner = os.urandom(16).hex()
    report = RunReport(run_id=store.start_run(extractor.name), extractor=extractor.name)
    tried: set[int] = set()
    report.total = store.due_count(session_id)
    # Usage so far: real where the extractor reported it, else what the chunk was expected to use.
    accounted = Usage()
    priced = isinstance(extractor, Priced)
    in_flight: dict[Future[Extraction], tuple[ChunkInput, Usage]] = {}
    width = max(1, options.concurrency)
    # Every request, retries included, within max_requests (the budget check above counts one per chunk).
    allowance = RequestAllowance(budget.max_requests) if budget.max_requests is not None else None
    renewed = store.clock()
    with ThreadPoolExecutor(max_workers=width, thread_name_prefix="extract") as pool:
        try:
            while True:
                while len(in_flight) < width and report.stopped_by is None:
                    claimed = store.claim_chunks(
                        1, owner, lease_seconds=lease_seconds, session_id=session_id, exclude=tried,
                        respect_backoff=respect_backoff, first=urgent,
                    )
                    if not claimed:
                        break
                    chunk = claimed[0]
                    expected = _expected(extractor, chunk)
                    committed = replace(accounted)
                    for _, more in in_flight.values():
                        committed.add(more)
                    refusal = budget.refuses_usage(committed, expected)
                    if not refusal and allowance is not None and not allowance.take():  # retries spent it
                        refusal = f"request budget of {budget.max_requests:,} reached"
                    if refusal:
                        report.stopped_by = refusal  # the claimed chunk is released below, unharmed
                        break
                    chunk = replace(chunk, known_items=store.known_items_for(chunk, options.known_items))
                    if redactor.detectors:
                        chunk = _redact_chunk(store, redactor, chunk, report.redacted, full_spans)
                    tried.add(chunk.chunk_id)
                    report.tried += 1
                    in_flight[pool.submit(_with_requests, allowance, extractor, chunk)] = (chunk, expected)
                if not in_flight:
                    break
                done, _ = wait(in_flight, timeout=lease_seconds / 3, return_when=FIRST_COMPLETED)
                if store.clock() >= renewed + lease_seconds / 3:
                    store.renew_leases(owner, lease_seconds)
                    renewed = store.clock()
                for future in done:
                    chunk, expected = in_flight.pop(future)
                    resplit_before, captured_before = report.resplit, report.captured
                    spent = _settle(store, owner, chunk, future, report, redactor)
                    if report.resplit > resplit_before:
                        # The chunk is gone; SQLite may give its id to a piece, which must still be tried.
                        tried.discard(chunk.chunk_id)
                    elif report.captured > captured_before:
                        # Due no more: no need to exclude it. Only failed chunks stay in the exclusion,
                        # so a claim stays cheap however many chunks one run goes through.
                        tried.discard(chunk.chunk_id)
                    # A priced extractor reports what it spent, nothing when a chunk never left (too
                    # large for the window); for others, the estimate stands in.
                    accounted.add(spent if spent.requests or priced else expected)
                    report.usage.add(spent)
                    if progress:
                        progress(report.done, max(report.total, report.tried))
                    if on_update:
                        on_update(report)
        finally:
            # Interrupted: whatever is still in flight was not committed and goes back to pending.
            for future in in_flight:
                future.cancel()
            store.release_chunks(owner)
            store.finish_run(report.run_id, report.tried, report.captured, report.failed, report.items_added,
                             report.usage, report.stopped_by, resplit=report.resplit, lost=report.lost,
                             attributed=report.items_attributed, dropped=report.items_dropped)
    _render_agent_lines(store, redactor)  # items stored by others (decision records), or a new redactor
    report.left_chunks, report.left_tokens = store.due_summary(session_id)
    if report.left_chunks and isinstance(extractor, Priced):
        report.left_estimate = extractor.estimate(report.left_tokens, report.left_chunks)
    return report


def _render_agent_lines(store: Store, redactor: redact.Redactor, session_id: str | None = None) -> None:
    """The new items' statements as an agent is shown them, for the pre-edit hook's narrow path
    (shown_text). Not done (a locked database) only sends the hook down its full path."""
    with contextlib.suppress(sqlite3.Error):
        render_agent_lines(store, redactor, session_id)


def _with_requests(allowance: RequestAllowance | None, extractor: Extractor, chunk: ChunkInput) -> Extraction:
    """The chunk's extraction, its retries drawing on the run's request allowance (extract/retry.py)."""
    if allowance is None:
        return extractor.extract(chunk)
    gate = ChunkRequests(allowance)
    token = CHUNK_REQUESTS.set(gate)
    sent: int | None = None  # what a priced extractor reports it sent; the others count one a chunk
    try:
        extraction = extractor.extract(chunk)
        sent = extraction.usage.requests
        return extraction
    except ExtractionError as exc:
        sent = exc.usage.requests
        raise
    finally:
        CHUNK_REQUESTS.reset(token)
        if sent is not None and isinstance(extractor, Priced):
            allowance.refund(gate.taken - sent)


def _redact_chunk(
    store: Store, redactor: redact.Redactor, chunk: ChunkInput, found: Counter[str],
    full_spans: dict[tuple[str, int], list[tuple[int, int, str]]],
) -> ChunkInput:
    """The second pass, right before sending: what the pass at ingest could not catch (rows stored
    while redaction was off, or before a pattern was added). A part of a split turn is redacted as
    part of the whole turn, so a secret across two parts goes from both."""
    turns = list(chunk.turns)
    whole = [i for i, t in enumerate(turns) if t.parts == 1]
    updates = {whole[j]: r for j, r in redactor.redact_many([turns[i].text for i in whole]).items()}
    for i, t in enumerate(turns):
        if t.parts > 1:
            key = (chunk.session_id, t.seq)
            text = store.turn_text(*key)
            if key not in full_spans:
                while len(full_spans) >= 4:
                    del full_spans[next(iter(full_spans))]
                full_spans[key] = redactor.spans(text)
            if full_spans[key]:
                result = redactor.redact_slice(text, t.char_start, t.char_start + len(t.text), full_spans[key])
                if result.found:
                    updates[i] = result
    known = redactor.redact_many([k.statement for k in chunk.known_items])
    if not updates and not known:
        return chunk
    for i, result in updates.items():
        turns[i] = replace(turns[i], text=result.text)
        found.update(result.found)
    items = list(chunk.known_items)
    for j, result in known.items():
        items[j] = replace(items[j], statement=result.text)
        found.update(result.found)
    return replace(chunk, turns=turns, known_items=items)


def _settle(
    store: Store, owner: str, chunk: ChunkInput, future: Future[Extraction], report: RunReport,
    redactor: redact.Redactor,
) -> Usage:
    """Commit an answer, or record why there is none. Returns what the chunk's requests used."""
    too_large = False
    fit_tokens: int | None = None
    try:
        extraction = future.result()
    except ExtractionError as exc:
        cause, spent, too_large, fit_tokens = exc.cause, exc.usage, exc.too_large, exc.fit_tokens
        if not exc.retryable:
            report.stopped_by = cause  # no other chunk would fare better: stop sending
    except Exception as exc:  # an extractor bug must not lose the chunk: record it, keep it due
        cause, spent = f"unexpected {type(exc).__name__}: {exc}", Usage()
    else:
        spent = extraction.usage
        dropped: Counter[str] = Counter()
        clean, attributed = validate(chunk, extraction, dropped)
        clean = _redact_answer(redactor, clean, report.redacted)
        try:
            report.items_added += store.commit_extraction(clean, owner)
        except LeaseLost:
            store.record_usage(chunk.session_id, spent)
            report.lose(chunk, "answer")
            return spent
        _render_agent_lines(store, redactor, chunk.session_id)
        report.items_attributed += attributed
        report.items_dropped.update(dropped)
        report.captured += 1
        report.models[extraction.model or extraction.extractor] += 1
        return spent
    if too_large:
        try:
            pieces = store.resplit_chunk(chunk.chunk_id, owner, fit_tokens, cause, usage=spent)
        except LeaseLost:
            store.record_usage(chunk.session_id, spent)
            report.lose(chunk, f"failure ({cause})")
            return spent
        if pieces:
            report.resplit += 1
            report.total += pieces - 1
            return spent
        cause += " (it cannot be split any further)"
    # resplit_chunk recorded the usage already when it was tried
    if not store.fail_chunk(chunk.chunk_id, owner, cause, retry_delay, usage=None if too_large else spent):
        if not too_large:
            store.record_usage(chunk.session_id, spent)
        report.lose(chunk, f"failure ({cause})")
        return spent
    report.failed += 1
    report.failures.append(Failure(chunk.chunk_id, chunk.session_id, cause))
    return spent


def _redact_answer(redactor: redact.Redactor, extraction: Extraction, found: Counter[str]) -> Extraction:
    """The items' own words redacted before they are stored: the chunk sent was, but a model can
    still write a secret out (decode a blob it was shown, recall one), and what is stored is shown."""
    fields = ("statement", "rationale", "supersedes_reason")
    texts = [(i, name, value) for i, item in enumerate(extraction.items) for name in fields
             if isinstance(value := getattr(item, name), str) and value]
    results = redactor.redact_many([value for _, _, value in texts])
    if not results:
        return extraction
    updates: dict[int, dict[str, str]] = {}
    for j, result in results.items():
        i, name, _ = texts[j]
        updates.setdefault(i, {})[name] = result.text
        found.update(result.found)
    items = [item.model_copy(update=updates[i]) if i in updates else item for i, item in enumerate(extraction.items)]
    return extraction.model_copy(update={"items": items})


class Stopped(Exception):
    """Raised from the progress callback when the front end stops: the run then gives its leases back."""


def extract_sessions(
    store: Store,
    extractor: Extractor,
    options: RunOptions,
    sessions: Sequence[str] | None,
    *,
    respect_backoff: bool = False,
    progress: Progress | None = None,
    on_update: Update | None = None,
    stop: threading.Event | None = None,
) -> RunReport:
    """One run over the given sessions (None: every session), one session after another within one
    budget. `stop` set ends it at the next chunk (what is in flight goes back to pending)."""
    targets: list[str | None] = [None] if sessions is None else list(sessions)
    total = store.due_count(sessions)
    report = RunReport(run_id=0, extractor=extractor.name)
    charged = Usage()  # what the budget counts as spent: a chunk tried is a request, even unbilled
    started = store.clock()
    if progress:
        progress(0, total)
    for session_id in targets:
        if stop is not None and stop.is_set():
            break

        def settled(done: int, session_total: int, offset: int = report.done) -> None:
            if stop is not None and stop.is_set():
                raise Stopped
            if progress:
                progress(offset + done, max(total, offset + session_total))

        part_options = replace(options, budget=options.budget.less(charged))
        try:
            part = extract_due(store, extractor, part_options, session_id=session_id, progress=settled,
                               on_update=on_update, respect_backoff=respect_backoff)
        except Stopped:
            break
        report.run_id = report.run_id or part.run_id
        report.absorb(part)
        charged.add(replace(part.usage, requests=max(part.usage.requests, part.tried)))
        if part.stopped_by:
            break
    report.total = max(report.total, total)
    report.left_chunks, report.left_tokens = store.due_summary(sessions)
    if report.left_chunks and isinstance(extractor, Priced):
        report.left_estimate = extractor.estimate(report.left_tokens, report.left_chunks)
    report.new_kinds = store.item_kinds_since(started)
    report.held = store.holds(sessions, respect_backoff=respect_backoff)
    return report


Scan = Callable[[Settings], ScanReport]


@dataclass
class CaptureReport:
    choice: ExtractorChoice  # the extractor that ran, and the sentence saying why
    scan: ScanReport | None  # None: a background run, which does not scan
    run: RunReport
    sessions: list[str] | None  # the sessions the run went over; None: every session


def capture(
    store: Store,
    settings: Settings,
    *,
    sessions: Sequence[str] | Callable[[Store], list[str] | None] | None = None,
    choice: ExtractorChoice | None = None,
    options: RunOptions | None = None,
    scan: Scan | None = None,
    background: bool = False,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_update: Update | None = None,
    stop: threading.Event | None = None,
) -> CaptureReport:
    """Capture for every front end: `checkpoint now`, the hooks' capture of a session, the daemon's
    checkpoint.now and its background runs. With the extractor the settings choose (or `choice`, one
    a front end keeps between runs) and `options` (default: those of the settings, with
    `concurrency` if given, for that extractor):
    - explicit: scan (`scan`: the front end's own, given the settings to use, the daemon's through
      its watcher; else pipeline.scan on this store), then one run over `sessions` (a list, a
      function of the store choosing them once the scan is in, or None: all);
    - `background`: no scan (the daemon's watcher keeps the store read), one run over `sessions`,
      failed chunks waiting their backoff.
    `progress`, `on_update` and `stop` are extract_sessions'."""
    if choice is None:
        choice = choose_extractor(settings)
    options = options or RunOptions.from_settings(settings, choice.extractor, concurrency=concurrency)
    scanned: ScanReport | None = None
    if not background:
        scan_settings = options.scan_settings(settings)
        scanned = scan(scan_settings) if scan is not None else pipeline.scan(store, scan_settings)
    targets = sessions(store) if callable(sessions) else None if sessions is None else list(sessions)
    run = extract_sessions(store, choice.extractor, options, targets, respect_backoff=background, progress=progress,
                           on_update=on_update, stop=stop)
    return CaptureReport(choice, scanned, run, targets)
