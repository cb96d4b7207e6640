"""The fake Anthropic API, driven by the real SDK: every fault surfaces as the SDK exception or stop
reason the real API would give, and the default responder finds exactly the planted decisions."""

from __future__ import annotations

import json
import math
import random
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, cast

import anthropic
import httpx2
import pytest
from anthropic.types import MessageTokensCount, ModelInfo, TextBlock, ToolUseBlock

from checkpoint.extract.prompt import render_chunk, turn_labels
from checkpoint.model import ChunkInput, Role, TurnSlice
from tests.support.fake_anthropic import (
    FakeAnthropic,
    Fault,
    MessageRequest,
    ModelSpec,
    RequestRecord,
    count_request_tokens,
    parse_turns,
    serve,
)
from tests.support.synth import plan_session

MODEL = "claude-haiku-4-5"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": {"type": "object", "properties": {
        "kind": {"enum": ["decision", "constraint", "question"]}, "statement": {"type": "string"},
        "turn_ids": {"type": "array", "items": {"type": "string"}}, "same_as": {"type": ["string", "null"]}},
        "required": ["kind", "statement", "turn_ids"]}}},
    "required": ["items"],
    "additionalProperties": False,
}
OUTPUT_CONFIG: Any = {"format": {"type": "json_schema", "schema": SCHEMA}}
TOOLS: Any = [{"name": "record", "description": "Record the items.", "input_schema": SCHEMA}]
FORCE: Any = {"type": "tool", "name": "record"}
PROMPT = (
    "[t1 user]\nPlease add caching. We'll use marker-0a1b2c for the cache layer.\n\n"
    "[t2 assistant files: /p/src/cache.py, /p/src/io.py]\n"
    "Done. We'll use marker-ff00 for the io layer.\nAlso we'll use nothing else."
)


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as f:
        yield f


@pytest.fixture
def client(fake: FakeAnthropic) -> Iterator[anthropic.Anthropic]:
    c = anthropic.Anthropic(base_url=fake.base_url, api_key="test-key", max_retries=0, timeout=5)
    yield c
    c.close()


def ask(client: anthropic.Anthropic, prompt: str = PROMPT, *, tool: bool = False, system: Any = "You extract items.",
        **kw: Any) -> anthropic.types.Message:
    """One extraction-shaped request: structured output, or a forced tool; `system=None` sends none."""
    extra: dict[str, Any] = {"tools": TOOLS, "tool_choice": FORCE} if tool else {"output_config": OUTPUT_CONFIG}
    args: dict[str, Any] = {"model": MODEL, "max_tokens": 2000, "messages": [{"role": "user", "content": prompt}],
                            **extra, **kw}
    if system is not None:
        args["system"] = system
    message: anthropic.types.Message = client.messages.create(**args)
    return message


def items_of(block: object) -> list[dict[str, Any]]:
    assert isinstance(block, ToolUseBlock)
    return cast(list[dict[str, Any]], block.input["items"])


def text_of(message: anthropic.types.Message) -> str:
    return next(b.text for b in message.content if isinstance(b, TextBlock))


# ------------------------------------------------------------------------------------------ answers


def test_structured_output_returns_every_planted_decision_with_its_turn_and_files(
        fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    rng = random.Random(3)
    planned = plan_session(rng, 40, 8000, "/home/dev/p", decision_every=5)
    turns = [TurnSlice(turn_id=f"uuid-{i}", seq=i, role=Role(t.role), text=t.text, files=tuple(t.edits),
                       timestamp=f"2026-01-05T10:00:{i:02d}.000Z") for i, t in enumerate(planned)]
    chunk = ChunkInput(chunk_id=1, session_id="s", agent="claude", cwd="/home/dev/p", turns=turns, token_estimate=0)
    label = {turn_id: lab for lab, turn_id in turn_labels(chunk).items()}
    message = ask(client, render_chunk(chunk))
    assert message.stop_reason == "end_turn"
    assert [b.type for b in message.content] == ["text"]
    items = json.loads(text_of(message))["items"]
    want = {(label[f"uuid-{i}"], t.marker) for i, t in enumerate(planned) if t.marker}
    assert len(want) >= 5
    got = {(it["turn_ids"][0], it["statement"].split()[2]) for it in items}
    assert got == want and len(items) == len(want)
    by_turn = {label[f"uuid-{i}"]: list(t.edits) for i, t in enumerate(planned)}
    for it in items:
        assert it["kind"] == "decision" and it["confidence"] == 0.9 and it["rationale"] is None
        assert it["statement"].startswith("We'll use marker-") and it["statement"].endswith(" layer.")
        assert it["files"] == by_turn[it["turn_ids"][0]]
        assert it["same_as"] is None  # the schema has same_as and nothing is known yet


def test_forced_tool_returns_a_tool_use_block_whose_input_holds_the_items(client: anthropic.Anthropic) -> None:
    message = ask(client, tool=True)
    assert message.stop_reason == "tool_use"
    [block] = message.content
    assert isinstance(block, ToolUseBlock) and block.name == "record"
    assert isinstance(block.input, dict)
    items = items_of(block)
    assert [(i["statement"], i["turn_ids"], i["files"]) for i in items] == [
        ("We'll use marker-0a1b2c for the cache layer.", ["t1"], []),
        ("We'll use marker-ff00 for the io layer.", ["t2"], ["/p/src/cache.py", "/p/src/io.py"]),
    ]


def test_same_as_names_the_known_item_with_the_same_marker(client: anthropic.Anthropic) -> None:
    head = "Session s (claude).\nAlready recorded for this session (cite one in same_as when a turn restates it):\n" \
           "- (17) decision: We'll use marker-0a1b2c for the cache layer.\n"
    message = client.messages.create(model=MODEL, max_tokens=2000, output_config=OUTPUT_CONFIG, messages=[
        {"role": "user", "content": [{"type": "text", "text": head}, {"type": "text", "text": PROMPT}]}])
    items = json.loads(text_of(message))["items"]
    assert [(i["turn_ids"], i["same_as"]) for i in items] == [(["t1"], "17"), (["t2"], None)]


def test_parse_turns_reads_headers_with_parts_and_files() -> None:
    text = "Workspace: /p\n[t1 assistant part 2/3 files: a.py, my dir/b.py]\nbody\n[t9 user] is text\n\n" \
           "[t2 tool]\nout"
    t1, t2 = parse_turns(text)
    assert (t1.label, t1.role, t1.part, t1.parts, t1.files, t1.text) == (
        "t1", "assistant", 2, 3, ("a.py", "my dir/b.py"), "body\n[t9 user] is text")
    assert (t2.label, t2.role, t2.part, t2.parts, t2.files, t2.text) == ("t2", "tool", 1, 1, (), "out")


def test_streaming_assembles_the_same_message(client: anthropic.Anthropic) -> None:
    with client.messages.stream(model=MODEL, max_tokens=2000, messages=[{"role": "user", "content": PROMPT}],
                                tools=TOOLS, tool_choice=FORCE) as stream:
        message = stream.get_final_message()
    assert message.stop_reason == "tool_use"
    assert len(items_of(message.content[0])) == 2
    with client.messages.stream(model=MODEL, max_tokens=2000, messages=[{"role": "user", "content": PROMPT}],
                                output_config=OUTPUT_CONFIG) as stream:
        text = stream.get_final_message()
    assert text.stop_reason == "end_turn" and len(json.loads(text_of(text))["items"]) == 2
    assert text.usage.output_tokens == ask(client).usage.output_tokens


def test_a_stream_cut_mid_body_fails_that_stream_and_the_next_one_is_served(
        fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    # What a cut stream raises is the SDK's business: 2.16 let httpx2's RemoteProtocolError out of the
    # iteration, 2.17 wraps it in APIConnectionError. What the fake owes any client is a stream that
    # fails as a broken connection, with no final message, and a next request served as usual.
    fake.script("drop_mid_body", "max_tokens")
    with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)) as info, client.messages.stream(
            model=MODEL, max_tokens=2000, messages=[{"role": "user", "content": PROMPT}]) as stream:
        stream.get_final_message()
    assert "incomplete chunked read" in str(info.value)
    assert fake.message_requests[0].fault == "drop_mid_body"
    with client.messages.stream(model=MODEL, max_tokens=2000, messages=[{"role": "user", "content": PROMPT}],
                                output_config=OUTPUT_CONFIG) as stream:
        assert stream.get_final_message().stop_reason == "max_tokens"


# ------------------------------------------------------------------------------------------ responder, log, hook


def test_responder_can_be_replaced_with_items_text_or_a_full_message(
        fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    seen: list[MessageRequest] = []

    def items(req: MessageRequest) -> list[dict[str, Any]]:
        seen.append(req)
        return [{"kind": "question", "statement": "Which db?", "turn_ids": ["u1"]}]

    fake.responder = items
    assert json.loads(text_of(ask(client)))["items"][0]["kind"] == "question"
    assert seen[0].mode == "json_schema" and seen[0].schema == SCHEMA and seen[0].system == "You extract items."
    assert seen[0].prompt == PROMPT and seen[0].model == MODEL
    assert ask(client, tool=True).content[0].input == {  # type: ignore[union-attr]
        "items": [{"kind": "question", "statement": "Which db?", "turn_ids": ["u1"]}]}
    assert seen[1].mode == "tool" and seen[1].tool_name == "record"

    fake.responder = lambda req: "plain words"
    assert text_of(ask(client)) == "plain words"

    fake.responder = lambda req: {"content": [{"type": "text", "text": "hi"}], "stop_reason": "stop_sequence",
                                  "stop_sequence": "END"}
    message = ask(client)
    assert (text_of(message), message.stop_reason, message.stop_sequence) == ("hi", "stop_sequence", "END")


def test_a_responder_that_raises_is_a_500_and_fails_the_test_at_exit() -> None:
    def broken(req: MessageRequest) -> list[dict[str, Any]]:
        raise KeyError("bug in the test")

    with pytest.raises(KeyError, match="bug in the test"), FakeAnthropic(responder=broken) as fake:
        c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
        with pytest.raises(anthropic.InternalServerError):
            ask(c)
        c.close()


def test_log_records_each_request_without_the_key(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    ask(client)
    client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])
    client.models.retrieve(MODEL)
    records = fake.requests
    assert [r.endpoint for r in records] == ["messages", "count_tokens", "models"]
    first = records[0]
    assert first.model == MODEL and first.body is not None and first.body["max_tokens"] == 2000
    assert first.status == 200 and first.stop_reason == "end_turn" and first.fault is None
    assert first.auth == "bearer" and first.headers["authorization"] == "Bearer <redacted>"
    assert first.headers["anthropic-version"] and first.retry_count == 0
    assert first.usage is not None and first.usage["output_tokens"] > 0
    assert "test-key" not in repr(records)
    assert fake.message_requests == [first]


def test_on_request_runs_after_each_messages_request_and_its_failures_surface() -> None:
    calls: list[RequestRecord] = []
    with FakeAnthropic(on_request=calls.append) as fake:
        c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
        fake.script("overloaded")
        with pytest.raises(anthropic.OverloadedError):
            ask(c)
        ask(c)
        c.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "hi"}])
        assert fake.wait_idle()
        assert [(r.fault, r.status) for r in calls] == [("overloaded", 529), (None, 200)]
        assert all(r.finished is not None for r in calls)

        def failing(record: RequestRecord) -> None:
            raise AssertionError(f"invariant broken after request {record.seq}")

        fake.on_request = failing
        ask(c)  # the client is unaffected; the failure is raised when the fake stops
        c.close()
        with pytest.raises(AssertionError, match="invariant broken after request 4"):
            fake.wait_idle()
            fake.check()
        fake.errors.clear()


def test_latency_delays_each_answer_but_requests_run_concurrently() -> None:
    with serve(latency=1.0) as fake:
        c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
        start = time.monotonic()
        ask(c)
        assert time.monotonic() - start >= 1.0
        start = time.monotonic()
        threads = [threading.Thread(target=ask, args=(c,)) for _ in range(5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # Concurrent, not queued: five answers in about one latency, not five (4 s leaves a loaded machine room).
        assert 1.0 <= time.monotonic() - start < 4.0
        c.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x"}])  # not delayed
        assert len(fake.message_requests) == 6
        c.close()


def test_concurrent_requests_are_each_logged_once(fake: FakeAnthropic) -> None:
    calls: list[int] = []
    lock = threading.Lock()

    def hook(record: RequestRecord) -> None:
        with lock:
            calls.append(record.seq)

    fake.on_request = hook
    c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
    threads = [threading.Thread(target=ask, args=(c,)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    c.close()
    assert fake.wait_idle()
    assert sorted(r.seq for r in fake.message_requests) == sorted(calls) == list(range(1, 13))


# ------------------------------------------------------------------------------------------ auth and validation


def _post(url: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", "anthropic-version": "2026-10-21",
                                          **headers})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def test_no_key_is_401_and_x_api_key_is_accepted(fake: FakeAnthropic) -> None:
    body = {"model": MODEL, "max_tokens": 100, "messages": [{"role": "user", "content": PROMPT}]}
    status, answer = _post(fake.base_url + "/v1/messages", body, {})
    assert status == 401 and answer["type"] == "error" and answer["error"]["type"] == "authentication_error"
    status, answer = _post(fake.base_url + "/v1/messages", body, {"x-api-key": "sk-secret"})
    assert status == 200 and answer["type"] == "message"
    assert fake.requests[1].auth == "x-api-key" and "sk-secret" not in repr(fake.requests)


def test_a_wrong_key_is_an_authentication_error() -> None:
    with FakeAnthropic(api_key="right") as fake:
        c = anthropic.Anthropic(base_url=fake.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(anthropic.AuthenticationError):
            ask(c)
        c.close()


def test_the_sdk_finds_the_fake_through_the_environment(fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in fake.env().items():
        monkeypatch.setenv(k, v)
    c = anthropic.Anthropic(max_retries=0)
    assert ask(c).stop_reason == "end_turn"
    c.close()


def test_requests_the_api_rejects_are_400_or_404(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    with pytest.raises(anthropic.NotFoundError):
        ask(client, model="claude-nope")
    with pytest.raises(anthropic.BadRequestError, match="temperature"):
        ask(client, extra_body={"temperature": 0.2})
    with pytest.raises(anthropic.BadRequestError, match="max_tokens: 70000 > 64000"):
        ask(client, max_tokens=70_000, timeout=30)
    with pytest.raises(anthropic.BadRequestError, match="forcing tool use"):
        ask(client, tool=True, model="claude-sonnet-5-5")
    fake.add_model(ModelSpec("no-json", structured_outputs=False))
    with pytest.raises(anthropic.BadRequestError, match="structured output"):
        ask(client, model="no-json")
    assert all(r.fault is None for r in fake.requests)


# ------------------------------------------------------------------------------------------ tokens, models, cache


def test_count_tokens_parses_and_matches_the_documented_count(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    system = "S" * 100
    result = client.messages.count_tokens(model=MODEL, system=system, output_config=OUTPUT_CONFIG,
                                          messages=[{"role": "user", "content": PROMPT}])
    assert isinstance(result, MessageTokensCount)
    assert result.input_tokens == math.ceil(100 / 3) + math.ceil(len(PROMPT) / 3)
    assert result.input_tokens == fake.count_tokens({"model": MODEL, "system": system,
                                                     "messages": [{"role": "user", "content": PROMPT}]})


def test_window_check_agrees_with_count_tokens(fake: FakeAnthropic) -> None:
    fake.add_model(ModelSpec("tiny", max_input_tokens=60, max_tokens=500))
    c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=2)
    counted = c.messages.count_tokens(model="tiny", messages=[{"role": "user", "content": PROMPT}]).input_tokens
    assert counted == count_request_tokens({"messages": [{"role": "user", "content": PROMPT}]}) > 60
    with pytest.raises(anthropic.BadRequestError) as info:
        ask(c, model="tiny", max_tokens=100, system=None)
    assert info.value.status_code == 400 and info.value.type == "invalid_request_error"
    assert info.value.api_message == f"prompt is too long: {counted} tokens > 60 maximum"
    assert len(fake.message_requests) == 1  # a 400 is not retried
    assert ask(c, model="tiny", max_tokens=100, system=None, prompt="short").stop_reason == "end_turn"
    c.close()


def test_models_retrieve_parses_into_model_info_and_unknown_is_404(fake: FakeAnthropic,
                                                                   client: anthropic.Anthropic) -> None:
    fake.add_model(ModelSpec("small-window", max_input_tokens=1234, max_tokens=321, structured_outputs=False))
    info = client.models.retrieve("small-window")
    assert isinstance(info, ModelInfo) and info.type == "model"
    assert (info.max_input_tokens, info.max_tokens) == (1234, 321)
    assert info.capabilities is not None and info.capabilities.structured_outputs.supported is False
    haiku = client.models.retrieve(MODEL)
    assert haiku.max_input_tokens == 200_000 and haiku.capabilities is not None
    assert haiku.capabilities.structured_outputs.supported is True
    assert {m.id for m in client.models.list()} == set(fake.models)
    with pytest.raises(anthropic.NotFoundError) as err:
        client.models.retrieve("claude-unknown")
    assert err.value.type == "not_found_error"


def test_a_cached_system_prompt_is_written_once_then_read(client: anthropic.Anthropic) -> None:
    system: Any = [{"type": "text", "text": "Instructions. " * 60, "cache_control": {"type": "ephemeral"}}]
    sys_tokens = math.ceil(len(system[0]["text"]) / 3)
    first = ask(client, system=system).usage
    second = ask(client, system=system, prompt="another chunk").usage
    assert (first.cache_creation_input_tokens, first.cache_read_input_tokens) == (sys_tokens, 0)
    assert first.cache_creation is not None and first.cache_creation.ephemeral_5m_input_tokens == sys_tokens
    assert first.input_tokens == math.ceil(len(PROMPT) / 3)
    assert (second.cache_creation_input_tokens, second.cache_read_input_tokens) == (0, sys_tokens)
    assert second.input_tokens == math.ceil(len("another chunk") / 3)
    uncached = ask(client, system="Instructions. " * 60).usage
    assert (uncached.cache_creation_input_tokens, uncached.cache_read_input_tokens) == (0, 0)
    other = ask(client, model="claude-sonnet-4-6", system=system).usage  # caches are per model
    assert (other.cache_creation_input_tokens, other.cache_read_input_tokens) == (sys_tokens, 0)


# ------------------------------------------------------------------------------------------ faults


@pytest.mark.parametrize(("fault", "exc", "status", "etype"), [
    (429, anthropic.RateLimitError, 429, "rate_limit_error"),
    ("api_error", anthropic.InternalServerError, 500, "api_error"),
    (503, anthropic.ServiceUnavailableError, 503, "api_error"),
    ("overloaded", anthropic.OverloadedError, 529, "overloaded_error"),
    ("prompt_too_long", anthropic.BadRequestError, 400, "invalid_request_error"),
])
def test_status_faults_raise_the_matching_sdk_error(
        fake: FakeAnthropic, client: anthropic.Anthropic, fault: Any, exc: type[anthropic.APIStatusError],
        status: int, etype: str) -> None:
    fake.script(fault)
    with pytest.raises(exc) as info:
        ask(client)
    assert info.value.status_code == status and info.value.type == etype
    assert info.value.request_id == "req_fake0000000000000001"
    if status == 429:
        assert info.value.response.headers["retry-after"] == "1"
        assert info.value.response.headers["retry-after-ms"] == "1000"
    if status == 400:
        assert info.value.api_message is not None
        assert info.value.api_message.startswith("prompt is too long: 200001 tokens > 200000 maximum")
    assert ask(client).stop_reason == "end_turn"  # one fault per scripted entry


def test_the_sdk_waits_retry_after_ms_then_retries(fake: FakeAnthropic) -> None:
    c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=1)
    fake.script(Fault("rate_limit", retry_after=0.3))
    start = time.monotonic()
    assert ask(c).stop_reason == "end_turn"
    assert time.monotonic() - start >= 0.3
    assert [(r.status, r.retry_count) for r in fake.message_requests] == [(429, 0), (200, 1)]
    c.close()


def test_a_scripted_queue_is_consumed_in_order(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script(529, Fault("rate_limit", retry_after=1), "drop")
    assert fake.pending_faults() == 3
    with pytest.raises(anthropic.OverloadedError):
        ask(client)
    with pytest.raises(anthropic.RateLimitError):
        ask(client)
    with pytest.raises(anthropic.APIConnectionError) as dropped:
        ask(client)
    assert not isinstance(dropped.value, anthropic.APITimeoutError)
    assert ask(client).stop_reason == "end_turn"
    assert [(r.fault, r.status) for r in fake.message_requests] == [
        ("overloaded", 529), ("rate_limit", 429), ("drop", None), (None, 200)]


def test_faults_can_be_scripted_for_count_tokens_and_models(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("overloaded", endpoint="count_tokens")
    fake.script("drop", endpoint="models")
    with pytest.raises(anthropic.OverloadedError):
        client.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.APIConnectionError):
        client.models.retrieve(MODEL)
    assert ask(client).stop_reason == "end_turn"
    with pytest.raises(ValueError, match="only make sense"):
        fake.script("max_tokens", endpoint="count_tokens")


def test_a_connection_dropped_mid_body_is_a_connection_error(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("drop_mid_body")
    with pytest.raises(anthropic.APIConnectionError) as info:
        ask(client)
    assert not isinstance(info.value, anthropic.APITimeoutError)
    record = fake.message_requests[0]
    assert record.status == 200 and record.response is not None and record.response["type"] == "message"


def test_a_slow_answer_times_out_in_the_sdk(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script(Fault("slow", delay=10.0))
    start = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        ask(client, timeout=0.2)
    assert time.monotonic() - start < 8.0  # gave up long before the fake's 10 s answer, however loaded the machine
    assert fake.message_requests[0].fault == "slow"  # logged while the fake still waits
    assert ask(client).stop_reason == "end_turn"


def test_a_slow_answer_within_the_timeout_arrives(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script(Fault("slow", delay=0.1))
    assert ask(client, timeout=3).stop_reason == "end_turn"


def test_malformed_json_is_a_text_block_that_does_not_parse(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("malformed_json", "malformed_json")
    message = ask(client)
    assert message.stop_reason == "end_turn"
    with pytest.raises(json.JSONDecodeError):
        json.loads(text_of(message))
    forced = ask(client, tool=True)  # a forced tool answered in prose: no tool_use block at all
    assert [b.type for b in forced.content] == ["text"] and forced.stop_reason == "end_turn"


@pytest.mark.parametrize("tool", [False, True])
def test_schema_invalid_json_parses_but_breaks_the_schema(
        fake: FakeAnthropic, client: anthropic.Anthropic, tool: bool) -> None:
    fake.script("schema_invalid")
    message = ask(client, tool=tool)
    [item] = items_of(message.content[0]) if tool else json.loads(text_of(message))["items"]
    assert item["kind"] not in ("decision", "constraint", "question")
    assert item["turn_ids"] == [] and item["confidence"] > 1


@pytest.mark.parametrize(("kind", "stop"), [("max_tokens", "max_tokens"),
                                            ("context_window_exceeded", "model_context_window_exceeded")])
def test_truncation_faults_cut_the_json(fake: FakeAnthropic, client: anthropic.Anthropic, kind: Any, stop: str) -> None:
    fake.script(kind, kind)
    message = ask(client)
    assert message.stop_reason == stop
    text = text_of(message)
    assert text and json.dumps({"items": []})[:3] in text[:3]
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    if kind == "max_tokens":
        assert message.usage.output_tokens == 2000
    forced = ask(client, tool=True)
    assert forced.stop_reason == stop and isinstance(forced.content[0], ToolUseBlock)
    assert forced.content[0].input == {}


def test_an_answer_longer_than_max_tokens_is_cut(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.responder = lambda req: [{"kind": "decision", "statement": "x" * 600, "turn_ids": ["u1"]}]
    message = ask(client, max_tokens=50)
    assert message.stop_reason == "max_tokens" and message.usage.output_tokens == 50
    assert len(text_of(message)) == 150
    assert fake.message_requests[0].fault is None


def test_refusal_has_its_stop_reason_and_details(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script("refusal")
    message = ask(client)
    assert message.stop_reason == "refusal"
    assert message.stop_details is not None and message.stop_details.type == "refusal"


def test_seeded_rates_repeat_exactly_and_mix_faults_with_answers() -> None:
    def run() -> list[str | None]:
        with FakeAnthropic() as fake:
            fake.set_rates({"overloaded": 0.3, "refusal": 0.2}, seed=11)
            c = anthropic.Anthropic(base_url=fake.base_url, api_key="k", max_retries=0)
            outcomes: list[str | None] = []
            for _ in range(30):
                try:
                    outcomes.append(ask(c, prompt="short").stop_reason)
                except anthropic.OverloadedError:
                    outcomes.append("529")
            c.close()
            assert [r.fault for r in fake.message_requests] == [
                {"529": "overloaded", "refusal": "refusal"}.get(str(o)) for o in outcomes]
            return outcomes

    first = run()
    assert first == run()
    assert {"529", "refusal", "end_turn"} <= set(first)


def test_clear_faults_stops_queued_and_random_faults(fake: FakeAnthropic, client: anthropic.Anthropic) -> None:
    fake.script(529, 529)
    fake.set_rates({"api_error": 1.0}, seed=0)
    fake.clear_faults()
    assert fake.pending_faults() == 0
    assert ask(client).stop_reason == "end_turn"
    with pytest.raises(ValueError):
        fake.set_rates({"overloaded": 0.7, "api_error": 0.7}, seed=0)
    with pytest.raises(ValueError):
        Fault("teapot")  # type: ignore[arg-type]
