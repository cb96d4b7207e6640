"""The `openai` extractor (checkpoint.extract.openai_compatible) against the fake chat-completions server
(tests/support/fake_chat.py): the request it sends, how each failure is read, the window it never
overfills, the JSON-mode fallback said once, and the key never shown."""

from __future__ import annotations

import json
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from checkpoint import runner
from checkpoint.chunker import MIN_CHUNK_TOKENS
from checkpoint.config import Settings
from checkpoint.extract import ExtractionError
from checkpoint.extract.answer_schema import STRICT_SCHEMA
from checkpoint.extract.openai_compatible import JSON_MODE_SYSTEM, OpenAICompatibleExtractor
from checkpoint.extract.openai_http import is_local
from checkpoint.extract.prompt import SYSTEM_PROMPT, render_request
from checkpoint.model import ChunkInput, ItemKind, KnownItem, Role, TurnSlice, Usage
from tests.support.fake_chat import SCHEMA_REFUSAL, FakeChat

CHUNK = ChunkInput(
    chunk_id=7, session_id="sess-1", agent="claude", cwd="/home/dev/proj",
    turns=[TurnSlice("u1", 1, Role.USER, "Hello. We'll use marker-abc123 for the cache layer.", ("src/a.py",)),
           TurnSlice("a1", 2, Role.ASSISTANT, "Fine. We'll use marker-def456 for the queue layer.")],
    token_estimate=60,
)
PLANTED = [("We'll use marker-abc123 for the cache layer.", ["t1"], ["src/a.py"]),
           ("We'll use marker-def456 for the queue layer.", ["t2"], [])]


def settings(fake: FakeChat | None, tmp_path: Path, **extra: object) -> Settings:
    values: dict[str, object] = {"db": tmp_path / "c.db", "sources": [], "retry_delay": 0.0, "max_attempts": 3,
                                 "request_timeout": 5.0, "openai_context_tokens": 8192}
    if fake is not None:
        values["openai_base_url"] = fake.base_url
    return Settings(**(values | extra))  # type: ignore[arg-type]


def items(extraction: object) -> list[tuple[str, list[str], list[str]]]:
    return [(i.statement, i.turn_ids, i.files) for i in extraction.items]  # type: ignore[attr-defined]


def test_one_request_with_the_shared_prompt_and_strict_schema_read_by_the_shared_reader(tmp_path: Path) -> None:
    with FakeChat(model="qwen-local") as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path))
        extraction = extractor.extract(CHUNK)
        base = fake.base_url
    assert items(extraction) == PLANTED
    assert (extraction.extractor, extraction.model, extraction.chunk_id) == ("openai", "qwen-local", 7)
    [models, request] = fake.requests
    assert (models.method, models.path) == ("GET", "/v1/models")  # no openai_model: the first one listed
    head, transcript = render_request(CHUNK)
    assert request.body == {
        "model": "qwen-local",
        "messages": [{"role": "system", "content": SYSTEM_PROMPT},
                     {"role": "user", "content": head + "\n" + transcript}],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "checkpoint_items", "schema": STRICT_SCHEMA, "strict": True}},
        "max_tokens": 2048, "temperature": 0, "stream": False,
    }
    # The server's count; cost 0, said in the description.
    assert extraction.usage == Usage(input_tokens=request.tokens, output_tokens=len(request.answer or "") // 4 + 1,
                                     requests=1, cost_usd=0.0)
    assert extractor.description == (f"an OpenAI-compatible server at {base} (its first listed model; "
                                     "8,192-token window from openai_context_tokens; a local server: no cost)")


def test_a_refused_json_schema_switches_to_json_mode_once_said_once(tmp_path: Path,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    with FakeChat(refuse_json_schema=True) as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m"))
        with caplog.at_level(logging.WARNING):
            first, second = extractor.extract(CHUNK), extractor.extract(CHUNK)
    assert items(first) == items(second) == PLANTED
    assert [r.format_type for r in fake.completions] == ["json_schema", "json_object", "json_object"]
    assert [r.status for r in fake.completions] == [400, 200, 200]
    assert fake.completions[1].body["messages"][0]["content"] == JSON_MODE_SYSTEM  # type: ignore[index]
    assert json.dumps(STRICT_SCHEMA) in JSON_MODE_SYSTEM
    said = [r.getMessage() for r in caplog.records if "refused the answer's JSON schema" in r.getMessage()]
    assert len(said) == 1 and SCHEMA_REFUSAL in said[0] and "JSON mode" in said[0]
    assert first.usage.requests == 2 and second.usage.requests == 1


@pytest.mark.parametrize("fault", ["cut_off", "prose", "server_error", "drop"])
def test_a_cut_off_answer_prose_or_a_server_error_is_retried(tmp_path: Path, fault: str) -> None:
    with FakeChat() as fake:
        fake.script(fault)  # type: ignore[arg-type]
        extraction = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)
    assert items(extraction) == PLANTED
    assert [r.fault for r in fake.completions] == [fault, None]
    assert extraction.usage.requests == 2


@pytest.mark.parametrize(("fault", "cause"), [
    ("cut_off", "openai: answer cut off at its 2,048-token limit (finish_reason length) after 3 attempts"),
    ("prose", "openai: answer did not match the schema (Invalid JSON: expected value at line 1 column 1) "
              "after 3 attempts"),
    ("server_error", "openai: server error (500) after 3 attempts"),
])
def test_answers_that_keep_failing_fail_the_chunk_and_it_stays_due(tmp_path: Path, fault: str, cause: str) -> None:
    with FakeChat() as fake:
        fake.script(*[fault] * 3)  # type: ignore[arg-type]
        with pytest.raises(ExtractionError) as raised:
            OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)
    error = raised.value
    assert (error.cause, error.retryable, error.too_large, error.usage.requests) == (cause, True, False, 3)


def test_a_400_for_a_prompt_over_the_servers_window_asks_for_a_smaller_chunk(tmp_path: Path) -> None:
    with FakeChat() as fake:
        fake.script("too_long")
        with pytest.raises(ExtractionError) as raised:
            OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)
    assert raised.value.too_large and raised.value.retryable
    assert "prompt too long (400): the request exceeds the available context size" in raised.value.cause
    assert len(fake.completions) == 1


def test_a_chunk_larger_than_the_window_is_never_sent_but_re_split(tmp_path: Path) -> None:
    big = replace(CHUNK, token_estimate=5_000)
    with FakeChat() as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m", openai_context_tokens=4096))
        with pytest.raises(ExtractionError) as raised:
            extractor.extract(big)
    assert raised.value.too_large and raised.value.fit_tokens is not None
    assert raised.value.fit_tokens <= extractor.chunk_budget()
    assert fake.completions == []


def test_a_window_that_cannot_hold_the_prompt_is_refused_with_that_cause_and_nothing_is_sent(tmp_path: Path) -> None:
    with FakeChat() as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m", openai_context_tokens=1024))
        with pytest.raises(ExtractionError) as raised:
            extractor.extract(CHUNK)
    assert not raised.value.retryable and not raised.value.too_large
    assert raised.value.cause.startswith("openai: the window of 1,024 tokens (from openai_context_tokens) cannot hold "
                                         "the prompt: its instructions and schema alone take ~")
    assert "set openai_context_tokens to it" in raised.value.cause
    assert fake.requests == []


def test_new_chunks_are_sized_to_the_window(tmp_path: Path) -> None:
    extractor = OpenAICompatibleExtractor(settings(None, tmp_path, openai_context_tokens=4096))
    options = runner.RunOptions.from_settings(settings(None, tmp_path, openai_context_tokens=4096), extractor)
    # 4,096 less a quarter for the answer, less the prompt, less a quarter of the rest for known items.
    room = 4096 - 1024 - extractor.overhead_estimate()
    assert options.chunk_tokens == extractor.chunk_budget() == room - room // 4 >= 256
    assert extractor.reserve == 1024


def known(n: int) -> list[KnownItem]:
    return [KnownItem(f"item-{i:03d}-" + "x" * 20, ItemKind.DECISION, f"Known decision {i}: " + "words " * 30)
            for i in range(n)]


def test_known_items_give_way_to_the_chunk_most_relevant_kept_never_refused(tmp_path: Path) -> None:
    """A window holding the prompt, a full chunk and not all thirty known items: the first ones (the
    store's most relevant) go with the chunk, the rest are left out, and the request fits; a chunk of
    the smallest size fits beside the prompt at any window that holds the instructions and schema."""
    with FakeChat(context_tokens=8192) as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m", openai_context_tokens=8192))
        full = replace(CHUNK, token_estimate=extractor.chunk_budget(), known_items=known(30))
        fitted = extractor.fitted(full)
        assert 0 < len(fitted.known_items) < 30
        assert fitted.known_items == full.known_items[:len(fitted.known_items)]
        assert extractor.measure("m", fitted).ok
        assert items(extractor.extract(full)) == PLANTED
        # The smallest chunk, with the room's every token wanted by known items: sent, with fewer.
        smallest = replace(CHUNK, token_estimate=extractor.room() - 1, known_items=known(30))
        assert extractor.fitted(smallest).known_items == []
        assert items(extractor.extract(smallest)) == PLANTED
    [first, second] = fake.completions
    assert "(item-000-" in first.body["messages"][1]["content"]  # type: ignore[index]
    assert "(item-029-" not in first.body["messages"][1]["content"]  # type: ignore[index]
    assert "Already recorded" not in second.body["messages"][1]["content"]  # type: ignore[index]
    assert not first.over_window and not second.over_window


def test_a_window_just_large_enough_for_the_instructions_takes_the_smallest_chunk(tmp_path: Path) -> None:
    probe = OpenAICompatibleExtractor(settings(None, tmp_path, openai_context_tokens=8192))
    parts = 8192 - 2048 - probe.room()  # the instructions, schema and framing
    window = (parts + MIN_CHUNK_TOKENS) * 4 // 3 + 8  # a quarter of it is the answer's reserve
    extractor = OpenAICompatibleExtractor(settings(None, tmp_path, openai_context_tokens=window))
    assert extractor.room() >= MIN_CHUNK_TOKENS
    assert extractor.chunk_budget() >= MIN_CHUNK_TOKENS and extractor.known_budget() >= 0
    assert extractor.measure("m", extractor.fitted(replace(CHUNK, token_estimate=MIN_CHUNK_TOKENS,
                                                           known_items=known(30)))).ok


def test_the_key_goes_in_the_header_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-openai-key-never-shown-0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    with FakeChat(api_key=secret) as fake:
        assert items(OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)) == PLANTED
    with FakeChat(api_key="another") as fake, pytest.raises(ExtractionError) as raised:
        OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)
    assert not raised.value.retryable and "authentication failed (401)" in raised.value.cause
    assert "OPENAI_API_KEY" in raised.value.cause and secret not in raised.value.cause


def test_a_server_that_does_not_answer_stops_the_run_with_that_cause(tmp_path: Path) -> None:
    with FakeChat() as fake:
        url = fake.base_url
    with pytest.raises(ExtractionError) as raised:
        OpenAICompatibleExtractor(settings(None, tmp_path, openai_base_url=url)).extract(CHUNK)
    assert not raised.value.retryable
    assert raised.value.cause.startswith(f"openai: the server at {url} does not answer (connection failed")


def test_local_servers_are_told_from_hosted_ones() -> None:
    assert [is_local(u) for u in ("http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://192.168.1.9/v1",
                                  "https://openrouter.ai/api/v1", "https://api.openai.com/v1")] == \
        [True, True, True, False, False]


# -- security round 4: redirects, the deadline and the cap (issue 37, findings 5 and 6) -------------------

KEY = "sk-test-openai-key-never-redirected-0123456789"


@pytest.mark.parametrize(("code", "elsewhere"), [(302, "port"), (307, "port"), (307, "host"), (308, "port")])
@pytest.mark.parametrize("model", ["m", None])
def test_the_key_never_follows_a_redirect_to_another_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            code: int, elsewhere: str, model: str | None) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeChat(api_key=KEY) as other:
        port = other.origin.rsplit(":", 1)[1]
        target = other.origin if elsewhere == "port" else f"http://localhost:{port}"
        with FakeChat(redirect=(code, target)) as fake:
            extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model=model))
            with pytest.raises(ExtractionError) as raised:
                extractor.extract(CHUNK)
            redirected = fake.redirected
    assert other.requests == []  # neither the key nor the transcript went there
    assert redirected == 1  # refused at once: no retry reaches for the other origin either
    assert not raised.value.retryable
    assert f"the server answered {code} redirecting to another origin" in raised.value.cause
    assert "refused, so the key and the transcript are not sent there" in raised.value.cause
    assert KEY not in raised.value.cause


def test_an_endless_answer_is_refused_at_the_cap_in_bounded_memory_and_retried(tmp_path: Path) -> None:
    import tracemalloc

    cap = 1 << 20
    with FakeChat() as fake:
        fake.script("endless", "endless", "endless")
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m", openai_answer_bytes=cap))
        tracemalloc.start()
        try:
            with pytest.raises(ExtractionError) as raised:
                extractor.extract(CHUNK)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        fake.script("endless")
        retried = extractor.extract(CHUNK)  # the next try gets a whole answer
    assert raised.value.retryable and not raised.value.too_large  # the chunk stays due
    assert raised.value.cause == ("openai: the answer went past the 1,048,576-byte cap (openai_answer_bytes): "
                                  "refused after 3 attempts")
    assert peak < 8 * cap  # never the whole answer: the cap and a piece
    assert items(retried) == PLANTED and retried.usage.requests == 2


def test_a_huge_answer_announced_is_refused_unread(tmp_path: Path) -> None:
    with FakeChat() as fake:
        fake.script("huge", "huge", "huge")
        with pytest.raises(ExtractionError) as raised:
            OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m")).extract(CHUNK)
    assert raised.value.retryable
    assert raised.value.cause == ("openai: the answer is 104,857,600 bytes, over the 8,388,608-byte cap "
                                  "(openai_answer_bytes) after 3 attempts")


def test_a_drip_fed_answer_ends_at_the_requests_deadline(tmp_path: Path) -> None:
    with FakeChat() as fake:
        fake.script("drip", "drip")
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_model="m", request_timeout=0.5,
                                                       max_attempts=2))
        with pytest.raises(ExtractionError) as raised:
            extractor.extract(CHUNK)
    assert raised.value.retryable
    assert raised.value.cause.startswith("openai: timed out: no whole answer within the request's deadline of 0.5 s "
                                         "(request_timeout) after 2 attempts")
    assert [r.fault for r in fake.completions] == ["drip", "drip"]


def test_a_server_off_this_machine_is_said_to_receive_the_transcripts(tmp_path: Path) -> None:
    def description(url: str) -> str:
        return OpenAICompatibleExtractor(settings(None, tmp_path, openai_base_url=url)).description

    assert description("https://openrouter.ai/api/v1").endswith(
        "cost not counted: no price is known for this server; your transcripts, redacted, are sent to openrouter.ai)")
    assert description("http://192.168.1.9:8080/v1").endswith(
        "a local server: no cost; your transcripts, redacted, are sent to 192.168.1.9:8080)")
    for url in ("http://127.0.0.1:11434/v1", "http://localhost:1234/v1", "http://[::1]:8000/v1"):
        assert "sent to" not in description(url)
