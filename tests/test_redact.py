"""Redaction: the detection rate on a corpus of fake secrets (every supported type, in the places a
transcript holds them), no change to benign developer text, placeholders that stay put, and the two
passes of the pipeline (at ingest; right before sending, for rows stored without it)."""

from __future__ import annotations

import json
import os
import random
from dataclasses import replace
from pathlib import Path

import pytest

import secrets_corpus
from checkpoint import config, pipeline, redact
from checkpoint.answer import Extraction
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ChunkInput
from checkpoint.store import Store


@pytest.fixture(scope="module")
def redactor() -> redact.Redactor:
    return redact.redactor()


def test_every_secret_of_the_corpus_is_redacted(redactor: redact.Redactor) -> None:
    corpus = secrets_corpus.corpus(seed=7, per_type=3)
    table = secrets_corpus.rates(corpus, lambda text: redactor.redact(text).text)
    print("\ndetection rate per type (detected / total):")
    for kind, (found, total) in table.items():
        print(f"  {kind:<24} {found:>4} / {total}")
    assert set(table) == set(secrets_corpus.MAKERS)
    missed = {kind: f"{found}/{total}" for kind, (found, total) in table.items() if found != total}
    assert not missed, missed
    assert sum(total for _, total in table.values()) > 500


def test_each_found_secret_leaves_a_typed_placeholder(redactor: redact.Redactor) -> None:
    key = "AK" + "IA" + "Q3EXAMPLE7KEY2ID"
    out = redactor.redact(f"use {key} for the bucket")
    assert out.text == "use [REDACTED:aws_access_key] for the bucket"
    assert out.found == {"aws_access_key": 1}
    quoted = redactor.redact('{"client_secret": "s3cr3t-value-1234"}')
    assert quoted.text == '{"client_secret": "[REDACTED:secret_keyword]"}'


def test_benign_developer_text_is_left_alone(redactor: redact.Redactor) -> None:
    changed = {text: redactor.redact(text).text for text in secrets_corpus.BENIGN if redactor.redact(text).found}
    assert not changed


def test_redacting_twice_finds_nothing_more(redactor: redact.Redactor) -> None:
    for secret in secrets_corpus.corpus(seed=3, per_type=1):
        once = redactor.redact(secret.text)
        twice = redactor.redact(once.text)
        assert twice.found == {}, (secret.kind, once.text, twice.text)
        assert twice.text == once.text


def test_offsets_hold_around_text_whose_lowercase_is_longer(redactor: redact.Redactor) -> None:
    # "İ".lower() is two characters: detectors that run on lowered text must still cut at the right place.
    token = "ghp_" + "Ab1" * 12
    text = "İİİ Straße <private>hidden words</private> İ then " + token + " and İ"
    out = redactor.redact(text)
    assert out.text == "İİİ Straße [REDACTED:private] İ then [REDACTED:github_token] and İ"


def test_many_texts_at_once_are_redacted_each_on_its_own(redactor: redact.Redactor) -> None:
    rng = random.Random(5)
    texts = ["plain words " * rng.randint(1, 30) for _ in range(200)]
    planted = {}
    for i in rng.sample(range(200), 20):
        value = secrets_corpus.github_token(rng)
        planted[i] = value
        texts[i] += f" token {value} end"
    texts[50] = "<private>unclosed at the end of this text"  # must not swallow the next text
    out = redactor.redact_many(texts)
    assert set(out) == set(planted) | {50}
    for i, value in planted.items():
        assert value not in out[i].text and out[i].text.endswith(" token [REDACTED:github_token] end")
    assert out[50].text == "[REDACTED:private]"


def test_a_text_is_redacted_the_same_whatever_it_is_batched_with(redactor: redact.Redactor) -> None:
    # A KELVIN SIGN lowers to k: the name is found whether or not a neighbour holds an İ (which lowers
    # to two characters and is left as it is).
    kelvin = 'api_\u212aey = "abcd1234efgh5678ijkl"'
    alone = redactor.redact_many([kelvin])
    assert alone[0].text == 'api_\u212aey = "[REDACTED:secret_keyword]"'
    assert redactor.redact_many([kelvin, "İstanbul"]) == alone
    assert redactor.redact_many(["İstanbul", kelvin]) == {1: alone[0]}


def test_a_secret_across_the_edge_of_a_split_turn_goes_from_both_parts(redactor: redact.Redactor) -> None:
    body = secrets_corpus.pem_body(random.Random(1), 20)
    text = "before\n-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END RSA PRIVATE KEY-----\nafter"
    cut = text.index(body[10])
    first, second = redactor.redact_slice(text, 0, cut), redactor.redact_slice(text, cut, len(text))
    assert first.text == "before\n[REDACTED:private_key]" and second.text == "[REDACTED:private_key]\nafter"
    assert not any(line in first.text + second.text for line in body)


def test_custom_patterns_from_the_settings(tmp_path: Path) -> None:
    r = redact.redactor(True, {"ticket": r"TICKET-\d{6}", "employee_id": r"emp:(?P<secret>\d{5})"})
    out = r.redact("see TICKET-123456, emp:12345")
    assert out.text == "see [REDACTED:ticket], emp:[REDACTED:employee_id]"
    with pytest.raises(ValueError, match="not a name"):
        config.Settings(redact_patterns={"Bad Name": "x"})
    with pytest.raises(ValueError, match="not a regular expression"):
        config.Settings(redact_patterns={"broken": "(unclosed"})
    path = tmp_path / "config.toml"
    path.write_text('redact_patterns = { ticket = "TICKET-[0-9]{6}" }\n')
    os.environ["CHECKPOINT_CONFIG"] = str(path)
    try:
        assert config.load(environ={}).redact_patterns == {"ticket": "TICKET-[0-9]{6}"}
        assert config.load(environ={"CHECKPOINT_REDACT": "0"}).redact is False
    finally:
        del os.environ["CHECKPOINT_CONFIG"]
    assert redact.redactor(False) is redact.OFF and not redact.OFF.redact("ghp_" + "x1" * 18).found


def test_the_detect_secrets_table_is_cached_and_rebuilt_when_damaged() -> None:
    redact.detect_secrets_table.cache_clear()  # built in this test's HOME
    version, rows = redact.detect_secrets_table()
    cache = redact._cache_dir() / f"detect-secrets-{version}-{redact._TABLE_FORMAT}.json"
    assert json.loads(cache.read_text()) == list(rows)
    assert any(r["plugin"] == "AWSKeyDetector" for r in rows) and any(r["plugin"] == "KeywordDetector" for r in rows)
    cache.write_text('[{"plugin": 1}]')
    redact.detect_secrets_table.cache_clear()
    try:
        assert redact.detect_secrets_table() == (version, rows)
        assert json.loads(cache.read_text()) == list(rows)
    finally:
        redact.detect_secrets_table.cache_clear()


def _claude_line(uuid: str, role: str, text: str, ts: str) -> bytes:
    message = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
    if role == "assistant":
        message["id"] = "msg_" + uuid
    return json.dumps({"type": role, "uuid": uuid, "sessionId": "s1", "timestamp": ts, "cwd": "/w",
                       "message": message}).encode() + b"\n"


def _write_session(root: Path, texts: list[str]) -> Path:
    path = root / "-w" / "5e551011-0000-4000-8000-000000000001.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(
        _claude_line(f"00000000-0000-4000-8000-{i:012d}", "user" if i % 2 == 0 else "assistant", text,
                     f"2026-01-01T00:00:{i:02d}Z")
        for i, text in enumerate(texts)
    ))
    return path


def test_scan_stores_redacted_text_and_title_with_the_same_turn_ids(
    settings: config.Settings, roots: tuple[Path, Path], tmp_path: Path
) -> None:
    key = secrets_corpus.aws_access_key(random.Random(2))
    token = secrets_corpus.github_token(random.Random(3))
    texts = [f"deploy with {key} please", f"ok, and export GITHUB_TOKEN={token} first", "We'll use marker-abc for it."]
    _write_session(roots[0], texts)
    store = Store(settings.db)
    try:
        report = pipeline.scan(store, settings)
        assert report.redacted == {"aws_access_key": 1, "github_token": 1}
        rows = store.conn.execute("SELECT id, text, tokens - header_tokens FROM turns ORDER BY seq").fetchall()
        assert [r[1] for r in rows] == [
            "deploy with [REDACTED:aws_access_key] please",
            "ok, and export GITHUB_TOKEN=[REDACTED:github_token] first",
            texts[2],
        ]
        assert [r[2] for r in rows] == [pipeline.estimate_tokens(r[1]) for r in rows]  # estimates follow the text
        assert store.conn.execute("SELECT title FROM sessions").fetchone()[0] == rows[0][1]
        assert store.session_counts()[0].redacted == {"aws_access_key": 1, "github_token": 1}
        assert pipeline.status(store)["redacted"] == {"aws_access_key": 1, "github_token": 1}
        # read again from the start (a rewritten file): nothing is added or counted twice
        store.conn.execute("UPDATE files SET offset = 0, line_no = 0, size = 0")
        again = pipeline.scan(store, settings)
        assert again.turns_added == 0 and not again.redacted
        assert store.session_counts()[0].redacted == {"aws_access_key": 1, "github_token": 1}
    finally:
        store.close()
    plain_settings = replace(settings, db=tmp_path / "plain.db", redact=False)
    plain = Store(plain_settings.db)
    try:
        assert not pipeline.scan(plain, plain_settings).redacted
        plain_rows = plain.conn.execute("SELECT id, text FROM turns ORDER BY seq").fetchall()
    finally:
        plain.close()
    assert [r[0] for r in plain_rows] == [r[0] for r in rows]  # ids come from uuids, never from the text
    assert key in plain_rows[0][1]


class Recorder:
    """An offline extractor that keeps every chunk it was given."""

    name = "recorder"
    description = "records chunks"

    def __init__(self) -> None:
        self.chunks: list[ChunkInput] = []
        self.inner = HeuristicExtractor()

    def extract(self, chunk: ChunkInput) -> Extraction:
        self.chunks.append(chunk)
        return self.inner.extract(chunk).model_copy(update={"extractor": self.name})


def test_rows_stored_without_redaction_are_redacted_right_before_sending(
    settings: config.Settings, roots: tuple[Path, Path]
) -> None:
    rng = random.Random(11)
    body = secrets_corpus.pem_body(rng, 60)  # a turn larger than a chunk: split, the key across parts
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END OPENSSH PRIVATE KEY-----"
    slack = secrets_corpus.slack_token(rng)
    texts = [f"We must never commit {slack} again.", "Here is the key file:\n" + pem + "\nWe'll use it for deploys."]
    _write_session(roots[0], texts)
    raw = replace(settings, redact=False, chunk_tokens=600)
    store = Store(raw.db)
    try:
        pipeline.scan(store, raw)
        assert store.conn.execute("SELECT max(parts) FROM chunks").fetchone()[0] > 2
        recorder = Recorder()
        report = pipeline.checkpoint(store, recorder, cleanup_days=30)
        assert report.captured == report.tried > 2
        sent = "\n".join(t.text for c in recorder.chunks for t in c.turns)
        assert slack not in sent and not any(line in sent for line in body)
        assert "[REDACTED:slack_token]" in sent and "[REDACTED:private_key]" in sent
        assert report.redacted["slack_token"] == 1 and report.redacted["private_key"] >= 2
        statements = " ".join(i["statement"] for i in store.items())
        # (the heuristic strips markdown emphasis, underscores included, from what it keeps)
        assert "We must never commit [REDACTED:slacktoken] again" in statements and slack not in statements
    finally:
        store.close()
