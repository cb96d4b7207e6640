"""The Claude extractor against the fake API over real HTTP, through the real SDK: the request it
sends, what it makes of every kind of answer and failure, windows and token counts, fallbacks that
check the fit, and the pipeline around it (re-splits, dedupe, budgets, concurrency, per-session cost).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import anthropic
import pytest

from checkpoint import pipeline, runner
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import SCHEMA, Answer
from checkpoint.extract.anthropic import AnthropicExtractor
from checkpoint.extract.model_windows import price_of
from checkpoint.extract.prompt import SYSTEM_PROMPT
from checkpoint.model import ChunkInput, ChunkState, FileCursor, Role, ScannedTurn, TurnDraft, TurnSlice
from checkpoint.status_model import read_status
from checkpoint.store import LeaseLost, Store
from tests.support import synth
from tests.support.fake_anthropic import (
    DECISION_RE,
    FakeAnthropic,
    Fault,
    MessageRequest,
    ModelSpec,
    parse_turns,
    planted_decisions,
)

PRIMARY = "claude-haiku-4-5"
FALLBACK = "claude-sonnet-4-6"


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def make_settings(tmp_path: Path, **extra: object) -> Settings:
    values: dict[str, object] = {
        "db": tmp_path / "db" / "checkpoint.db", "sources": [tmp_path / "claude", tmp_path / "codex"],
        "retry_delay": 0.001, "retry_max_delay": 0.02, "request_timeout": 2.0, "max_attempts": 3,
    }
    values.update(extra)
    return Settings(**values)  # type: ignore[arg-type]


def make_extractor(fake: FakeAnthropic, settings: Settings, sleeps: list[float] | None = None) -> AnthropicExtractor:
    client = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0, timeout=2.0)
    record = sleeps if sleeps is not None else []
    return AnthropicExtractor(settings, client=client, sleep=record.append)


def chunk_of(texts: list[str], chunk_id: int = 1) -> ChunkInput:
    turns = [
        TurnSlice(turn_id=f"uuid-{i}", seq=i, role=Role.USER if i % 2 else Role.ASSISTANT, text=text,
                  files=("/w/src/app.py",) if i == 2 else (), timestamp="2026-01-05T10:00:00Z")
        for i, text in enumerate(texts, start=1)
    ]
    return ChunkInput(chunk_id=chunk_id, session_id="s1", agent="claude", cwd="/w", turns=turns,
                      token_estimate=sum(len(t) for t in texts) // 2 + 20)


DECIDED = ["Hello there.", "We'll use marker-00aa11 for the parser layer.\nMore words follow here."]


# -- the request and the answer ---------------------------------------------------------------------


def test_request_uses_structured_output_a_cached_system_prompt_and_turn_ids(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path))
    chunk = chunk_of(DECIDED)
    first = extractor.extract(chunk)
    second = extractor.extract(chunk_of(DECIDED, chunk_id=2))

    [item] = first.items
    assert item.kind == "decision"
    assert item.statement == "We'll use marker-00aa11 for the parser layer."
    assert item.turn_ids == ["t2"] and item.files == ["/w/src/app.py"]  # the label the model copied
    assert runner.validate(chunk, first)[0].items[0].turn_ids == ["uuid-2"]
    assert first.model == PRIMARY and first.extractor == "anthropic"

    body = fake.message_requests[0].body
    assert body is not None
    assert body["output_config"] == {"format": {"type": "json_schema", "schema": SCHEMA}}
    assert anthropic.transform_schema(Answer) == SCHEMA
    assert SCHEMA["additionalProperties"] is False
    assert body["system"] == [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
    prompt = "\n".join(block["text"] for block in body["messages"][0]["content"])
    assert "\n\n[t2 assistant files: /w/src/app.py]\nWe'll use marker-00aa11" in prompt
    assert "uuid-" not in prompt and "2026-01-05" not in prompt  # neither ids nor timestamps are worth their bytes
    assert "temperature" not in body and body["max_tokens"] == 4096

    # The system prompt is written to the cache once, then read; usage and cost say so.
    assert first.usage.cache_creation_input_tokens > 0 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0
    for extraction in (first, second):
        u = extraction.usage
        assert u.requests == 1 and u.input_tokens > 0 and u.output_tokens > 0
        price = price_of(PRIMARY)
        expected = (u.input_tokens * price.input + u.output_tokens * price.output
                    + u.cache_creation_input_tokens * price.cache_write
                    + u.cache_read_input_tokens * price.cache_read) / 1e6
        assert u.cost_usd == pytest.approx(expected)
    assert price_of(PRIMARY).input == 1.0 and price_of("claude-haiku-4-5-20251001").output == 5.0


@pytest.mark.parametrize("fault", ["max_tokens", "context_window_exceeded"])
def test_a_truncated_answer_is_a_failure_that_asks_for_a_smaller_chunk(
    fake: FakeAnthropic, tmp_path: Path, fault: str
) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path))
    fake.script(fault)  # type: ignore[arg-type]
    with pytest.raises(ExtractionError) as info:
        extractor.extract(chunk_of(DECIDED))
    assert info.value.too_large
    stop = "max_tokens" if fault == "max_tokens" else "model_context_window_exceeded"
    assert f"answer truncated (stop_reason {stop})" in info.value.cause
    assert info.value.usage.requests == 1 and info.value.usage.output_tokens > 0  # it was billed
    assert len(fake.message_requests) == 1  # not retried as it is: it goes back smaller


def test_a_refusal_is_a_failure_not_an_empty_success(fake: FakeAnthropic, tmp_path: Path) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path))
    fake.script("refusal")
    with pytest.raises(ExtractionError) as info:
        extractor.extract(chunk_of(DECIDED))
    assert not info.value.too_large and info.value.retryable
    assert info.value.cause == f"primary {PRIMARY} refused to answer (stop_reason refusal)"


def test_transient_errors_back_off_honour_retry_after_and_then_succeed(fake: FakeAnthropic, tmp_path: Path) -> None:
    sleeps: list[float] = []
    extractor = make_extractor(fake, make_settings(tmp_path, max_attempts=6, retry_max_delay=5.0), sleeps)
    fake.script(Fault("rate_limit", retry_after=0.25), 529, 503, "drop", "drop_mid_body")
    extraction = extractor.extract(chunk_of(DECIDED))
    assert [i.statement for i in extraction.items] == ["We'll use marker-00aa11 for the parser layer."]
    assert extraction.usage.requests == 6
    assert [r.fault for r in fake.message_requests] == [
        "rate_limit", "overloaded", "unavailable", "drop", "drop_mid_body", None]
    assert sleeps[0] == pytest.approx(0.25)  # retry-after-ms, not our own backoff
    assert len(sleeps) == 5 and all(0 < s <= 5.0 for s in sleeps)
    # The SDK's own retries are off: every attempt is one of ours, counted.
    assert {r.retry_count for r in fake.message_requests} == {0}


def test_a_slow_answer_times_out_and_is_retried(fake: FakeAnthropic, tmp_path: Path) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path, request_timeout=1.0))
    fake.script(Fault("slow", delay=3.0))
    extraction = extractor.extract(chunk_of(DECIDED))
    assert len(extraction.items) == 1 and extraction.usage.requests == 2


def test_malformed_output_is_retried_then_fails_with_its_cause(fake: FakeAnthropic, tmp_path: Path) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path))
    fake.script("malformed_json", "schema_invalid")
    assert len(extractor.extract(chunk_of(DECIDED)).items) == 1  # third attempt answers
    fake.script("malformed_json", "schema_invalid", "malformed_json")
    with pytest.raises(ExtractionError) as info:
        extractor.extract(chunk_of(DECIDED))
    assert info.value.cause.startswith(f"primary {PRIMARY} answer did not match the schema")
    assert info.value.cause.endswith("after 3 attempts")
    assert info.value.retryable and not info.value.too_large


def test_bad_credentials_stop_the_run_and_the_key_is_never_shown(tmp_path: Path) -> None:
    with FakeAnthropic(api_key="the-right-key") as fake:
        client = anthropic.Anthropic(base_url=fake.base_url, api_key="sk-wrong-secret", max_retries=0)
        extractor = AnthropicExtractor(make_settings(tmp_path), client=client, sleep=lambda s: None)
        with pytest.raises(ExtractionError) as info:
            extractor.extract(chunk_of(DECIDED))
    assert not info.value.retryable
    assert "authentication failed (401)" in info.value.cause and "sk-wrong-secret" not in info.value.cause


# -- windows, counts, fit -------------------------------------------------------------------------


def test_windows_come_from_models_retrieve_once_per_model_and_counts_from_count_tokens(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=50_000, max_tokens=2_000))
    extractor = make_extractor(fake, make_settings(tmp_path))
    for n in range(3):
        extractor.extract(chunk_of(DECIDED, chunk_id=n))
    assert [r.path for r in fake.requests if r.endpoint == "models"] == [f"/v1/models/{PRIMARY}"]
    assert sum(r.endpoint == "count_tokens" for r in fake.requests) == 3
    window = extractor.window(PRIMARY)
    assert (window.max_input_tokens, window.max_output_tokens, window.source) == (50_000, 2_000, "models.retrieve")
    assert extractor.reserve(PRIMARY) == 2_000  # the output reserve never exceeds the model's own limit
    assert fake.message_requests[0].body["max_tokens"] == 2_000  # type: ignore[index]
    fit = extractor.measure(PRIMARY, chunk_of(DECIDED))
    assert fit.counted and fit.tokens == fake.count_tokens(fake.message_requests[0].body or {})


def test_without_count_tokens_or_models_the_conservative_local_estimate_stands_in(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path))
    fake.script("api_error", "drop", endpoint="models")
    fake.script("overloaded", "api_error", endpoint="count_tokens")
    chunk = chunk_of(DECIDED)
    fit = extractor.measure(PRIMARY, chunk)
    assert not fit.counted
    assert fit.window.source == "published figures" and fit.window.max_input_tokens == 200_000
    assert fit.tokens >= fake.count_tokens({"model": PRIMARY, "system": extractor._system(),
                                            "messages": extractor._messages(chunk)})
    assert "estimated locally; count_tokens unavailable" in fit.describe()
    # A published-figures window is not kept: the next call asks the API again and gets the real one.
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=70_000))
    assert extractor.window(PRIMARY).max_input_tokens == 70_000


def test_a_chunk_that_does_not_fit_the_primary_is_not_sent_but_resplit(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=3_000, max_tokens=1_000))
    extractor = make_extractor(fake, make_settings(tmp_path))
    big = chunk_of(["We'll use marker-00bb22 here.\n" + "word " * 3_000])
    with pytest.raises(ExtractionError) as info:
        extractor.extract(big)
    assert info.value.too_large and info.value.fit_tokens is not None
    assert info.value.fit_tokens < big.token_estimate
    assert re.search(rf"^{PRIMARY}: chunk is [\d,]+ tokens, its window allows 3,000 - 1,000 reserve; re-splitting$",
                     info.value.cause)
    assert fake.message_requests == []


# -- fallbacks --------------------------------------------------------------------------------------


def test_fallback_answers_when_the_primary_stays_overloaded(fake: FakeAnthropic, tmp_path: Path) -> None:
    extractor = make_extractor(fake, make_settings(tmp_path, fallback_models=[FALLBACK]))
    fake.script(529, 529, 529)
    extraction = extractor.extract(chunk_of(DECIDED))
    assert extraction.model == FALLBACK and len(extraction.items) == 1
    assert [r.model for r in fake.message_requests] == [PRIMARY] * 3 + [FALLBACK]
    assert extraction.usage.requests == 4
    assert extraction.usage.cost_usd == pytest.approx(
        price_of(FALLBACK).cost(replace(extraction.usage, requests=1)))


def test_fallback_whose_window_is_too_small_is_refused_with_the_real_cause(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add_model(ModelSpec("claude-tiny", max_input_tokens=1_200, max_tokens=1_024))
    extractor = make_extractor(fake, make_settings(tmp_path, fallback_models=["claude-tiny"]))
    fake.script(529, 529, 529)
    chunk = chunk_of(["We'll use marker-00cc33 here.\n" + "word " * 400])
    with pytest.raises(ExtractionError) as info:
        extractor.extract(chunk)
    tokens = fake.count_tokens({"model": "claude-tiny", "system": extractor._system(),
                                "messages": extractor._messages(chunk)})
    assert info.value.cause == (
        f"primary {PRIMARY} overloaded (529) after 3 attempts; fallback claude-tiny refused: "
        f"chunk is {tokens:,} tokens, its window allows 1,200 - 1,024 reserve"
    )
    assert not info.value.too_large  # no split would fit: its window less the reserve holds no chunk
    assert [r.model for r in fake.message_requests] == [PRIMARY] * 3  # never sent to the fallback


def test_fallback_too_small_for_this_chunk_resplits_it_to_fit(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add_model(ModelSpec("claude-small", max_input_tokens=4_000, max_tokens=1_000))
    extractor = make_extractor(fake, make_settings(tmp_path, fallback_models=["claude-small"]))
    fake.script(529, 529, 529)
    chunk = chunk_of(["We'll use marker-00dd44 here.\n" + "word " * 3_000])
    with pytest.raises(ExtractionError) as info:
        extractor.extract(chunk)
    assert info.value.too_large and info.value.fit_tokens is not None
    assert info.value.cause.startswith(
        f"primary {PRIMARY} overloaded (529) after 3 attempts; fallback claude-small refused: chunk is ")
    assert info.value.cause.endswith("its window allows 4,000 - 1,000 reserve; re-splitting to fit claude-small")


# -- the pipeline around it -------------------------------------------------------------------------


def corpus_settings(tmp_path: Path, **extra: object) -> tuple[Settings, synth.Corpus]:
    corpus = synth.write_corpus(tmp_path / "src", sessions=2, turns=60, chars=40_000, seed=11)
    settings = replace(make_settings(tmp_path, **extra), sources=[corpus.claude_root, corpus.codex_root])
    return settings, corpus


def marker_counts(store: Store) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in store.items():
        for marker in re.findall(r"marker-[0-9a-f]+", item.statement):
            counts[marker] = counts.get(marker, 0) + 1
    return counts


def test_too_large_chunks_are_resplit_over_the_same_turns_and_all_captured(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=8_000, max_tokens=2_000))
    settings, corpus = corpus_settings(tmp_path, chunk_tokens=16_000, output_tokens=1_000)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    before = dict(store.conn.execute("SELECT session_id, max(last_seq) FROM chunks GROUP BY session_id").fetchall())
    # One at a time, so that the faults hit the first (large) pieces, each of which can still be halved.
    fake.script("max_tokens", "prompt_too_long", "context_window_exceeded")
    report = runner.extract_due(store, make_extractor(fake, settings), runner.RunOptions(concurrency=1))
    assert report.ok and report.resplit >= 3 and report.left_chunks == 0
    # The pieces cover every turn exactly once, in order; every planted decision is there once.
    for session_id, last in before.items():
        assert store.watermark(session_id) == last
        whole = [r for r in store.conn.execute(
            "SELECT first_seq, last_seq FROM chunks WHERE session_id = ? AND parts = 1 ORDER BY first_seq",
            (session_id,))]
        split = {r[0] for r in store.conn.execute(
            "SELECT first_seq FROM chunks WHERE session_id = ? AND parts > 1", (session_id,))}
        seqs = sorted([s for a, b in whole for s in range(a, b + 1)] + list(split))
        assert seqs == list(range(1, last + 1))
    expected = set().union(*corpus.markers.values())
    assert marker_counts(store) == dict.fromkeys(expected, 1)
    store.close()


def test_resplit_of_a_part_keeps_exactly_its_characters_and_renumbers_the_parts(tmp_path: Path) -> None:
    settings = make_settings(tmp_path, chunk_tokens=300)
    store = Store(settings.db)
    text = "".join(f"line {i} of a long turn\n" for i in range(400))
    store.ingest(FileCursor("/x.jsonl"), "claude", "s", False, {},
                 [ScannedTurn(TurnDraft(id="t1", role=Role.USER, text=text), 1, len(text) // 2, 5)],
                 None, Counter(), Counter(), [])
    store.form_chunks(1_500)
    parts = store.conn.execute("SELECT id, char_start, char_end FROM chunks ORDER BY char_start").fetchall()
    assert len(parts) >= 3
    target = parts[1]
    [claimed] = store.claim_chunks(1, "me", exclude={parts[0][0]} | {p[0] for p in parts[2:]},
                                   respect_backoff=False)
    assert claimed.chunk_id == target[0]
    with pytest.raises(LeaseLost):
        store.resplit_chunk(target[0], "someone-else", None, "too big")
    pieces = store.resplit_chunk(target[0], "me", 200, "too big")
    assert pieces >= 2
    rows = store.conn.execute(
        "SELECT char_start, char_end, part, parts, state FROM chunks ORDER BY char_start").fetchall()
    assert [(r[2], r[3]) for r in rows] == [(i, len(rows)) for i in range(1, len(rows) + 1)]
    bounds = [(r[0], r[1]) for r in rows]
    assert bounds[0][0] == 0 and all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    assert "".join(text[a:b] for a, b in bounds) == text
    assert {r[4] for r in rows} == {"pending"}
    store.close()


def test_a_restated_decision_updates_the_item_it_names(fake: FakeAnthropic, tmp_path: Path) -> None:
    """A later chunk restating an item (worded differently) merges into it via same_as, and the same
    wording later merges without it."""
    settings, _ = corpus_settings(tmp_path, chunk_tokens=1_500)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    seen_known: list[str] = []

    def responder(request: MessageRequest) -> list[dict[str, object]]:
        items = planted_decisions(request.prompt, same_as=True)
        known = re.findall(r"^- \((\w+)\) decision: (.*)$", request.prompt, re.MULTILINE)
        seen_known.extend(k for k, _ in known)
        turns = [turn.label for turn in parse_turns(request.prompt)]
        if known:  # every chunk after the first also "restates" the first recorded decision
            items.append({"kind": "decision", "statement": "Restated: " + known[-1][1], "rationale": "again",
                          "confidence": 0.7, "turn_ids": [turns[-1]], "files": [], "same_as": known[-1][0]})
        return items

    fake.responder = responder
    report = runner.extract_due(store, make_extractor(fake, settings), runner.RunOptions(concurrency=1))
    assert report.ok and seen_known
    restated = [i for i in store.items() if i.statement.startswith("Restated")]
    assert restated == []  # never a second item
    merged = [i for i in store.items() if len(i.turn_ids) > 1]
    assert merged and all(DECISION_RE.search(i.statement) for i in merged)
    store.close()


def test_a_budget_leaves_the_rest_pending_with_an_estimate_and_the_next_run_finishes(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    settings, corpus = corpus_settings(tmp_path, chunk_tokens=1_500)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    extractor = make_extractor(fake, settings)
    due = store.due_count()
    first = runner.extract_due(store, extractor, runner.RunOptions(runner.Budget(max_requests=3), concurrency=2))
    assert first.stopped_by == "request budget of 3 reached"
    assert first.captured == 3 and first.usage.requests == 3
    assert first.left_chunks == due - 3 and first.left_tokens > 0
    assert first.left_estimate is not None and first.left_estimate.cost_usd > 0
    assert first.left_estimate.requests >= first.left_chunks
    sessions = {s.id: s for s in store.session_counts()}
    assert sum(s.pending for s in sessions.values()) > 0 and sum(s.failed for s in sessions.values()) == 0
    cost = first.usage.cost_usd
    second = runner.extract_due(store, extractor, runner.RunOptions(runner.Budget(max_cost=cost * 3.5), concurrency=2))
    assert second.stopped_by is not None and second.stopped_by.startswith("cost budget of $")
    assert second.usage.cost_usd <= cost * 3.5
    third = runner.extract_due(store, extractor, runner.RunOptions(concurrency=2))
    assert third.stopped_by is None and third.left_chunks == 0
    assert marker_counts(store) == dict.fromkeys(set().union(*corpus.markers.values()), 1)
    # Cost per run and per session add up to the same total.
    total = sum(r.usage.cost_usd for r in (first, second, third))
    runs = store.runs()
    assert sum(r.cost_usd for r in runs) == pytest.approx(total)
    assert sum(s.usage.cost_usd for s in store.session_counts()) == pytest.approx(total)
    assert sum(s.usage.requests for s in store.session_counts()) == sum(r.requests for r in runs)
    store.close()


def test_several_chunks_are_in_flight_and_the_watermark_is_the_confirmed_prefix(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    settings, _ = corpus_settings(tmp_path, chunk_tokens=1_500)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    # The first answers are slow, so the first three chunks are certainly in flight together.
    fake.script(*[Fault("slow", delay=0.3)] * 3)
    fake.set_rates({"slow": 0.2, "overloaded": 0.2}, seed=5, delay=0.1)
    in_flight: list[int] = []
    peak = [0]
    original = AnthropicExtractor.extract

    def counting(self: AnthropicExtractor, chunk: ChunkInput) -> object:
        in_flight.append(chunk.chunk_id)
        peak[0] = max(peak[0], len(in_flight))
        try:
            return original(self, chunk)
        finally:
            in_flight.remove(chunk.chunk_id)

    extractor = make_extractor(fake, replace(settings, max_attempts=6))
    extractor.extract = counting.__get__(extractor)  # type: ignore[method-assign]
    report = runner.extract_due(store, extractor, runner.RunOptions(concurrency=3))
    assert report.ok and peak[0] == 3
    for s in store.session_counts():
        assert s.captured == s.turns and s.watermark == s.turns
    assert store.chunk_states() == {ChunkState.CAPTURED: store.chunk_states().total()}
    store.close()


def test_usage_json_in_status(fake: FakeAnthropic, tmp_path: Path) -> None:
    settings, _ = corpus_settings(tmp_path, chunk_tokens=4_000)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    runner.extract_due(store, make_extractor(fake, settings))
    status = json.loads(json.dumps(read_status(store).as_dict()))
    for session in status["sessions"]:
        assert session["usage"]["cost_usd"] > 0 and session["usage"]["requests"] >= 1
    store.close()


def test_a_chunk_resplit_before_it_is_sent_costs_the_budget_nothing(fake: FakeAnthropic, tmp_path: Path) -> None:
    fake.add_model(ModelSpec(PRIMARY, max_input_tokens=6_000, max_tokens=2_000))
    settings, _ = corpus_settings(tmp_path, chunk_tokens=16_000, output_tokens=1_000)
    store = Store(settings.db)
    pipeline.scan(store, settings)
    report = runner.extract_due(store, make_extractor(fake, settings), runner.RunOptions(runner.Budget(max_requests=2)))
    assert report.resplit >= 1 and report.captured == 2
    assert report.usage.requests == len(fake.message_requests) == 2
    assert report.stopped_by == "request budget of 2 reached"
    store.close()


def test_a_model_without_structured_outputs_gets_the_schema_as_a_forced_tool(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.add_model(ModelSpec(PRIMARY, structured_outputs=False))
    extractor = make_extractor(fake, make_settings(tmp_path))
    extraction = extractor.extract(chunk_of(DECIDED))
    assert [i.turn_ids for i in extraction.items] == [["t2"]]
    [request] = fake.message_requests
    assert request.stop_reason == "tool_use" and request.body is not None
    assert "output_config" not in request.body
    assert request.body["tool_choice"] == {"type": "tool", "name": "record_items"}
    assert request.body["tools"][0]["input_schema"] == SCHEMA
