"""Redaction: the detection rate on a corpus of fake secrets (every supported type, in the places a
transcript holds them), no change to benign developer text, placeholders that stay put, and the two
passes of the pipeline (at ingest; right before sending, for rows stored without it)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import string
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkpoint import config, pipeline, redact, runner
from checkpoint.answer import Extraction
from checkpoint.chunker import estimate_tokens
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ChunkInput
from checkpoint.redact import cache as redact_cache
from checkpoint.redact import gate as anchor_gate
from checkpoint.redact import literals as anchor_derivation
from checkpoint.redact import plugins as detect_secrets_plugins
from checkpoint.sources.base import strings_in
from checkpoint.status_model import read_status
from checkpoint.store import Store
from tests.support import secrets_corpus
from tests.support.samples import SAMPLES


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
    cache = redact_cache.cache_dir() / f"detect-secrets-{version}-{detect_secrets_plugins.TABLE_FORMAT}.json"
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
        assert [r[2] for r in rows] == [estimate_tokens(r[1]) for r in rows]  # estimates follow the text
        assert store.conn.execute("SELECT title FROM sessions").fetchone()[0] == rows[0][1]
        assert store.session_counts()[0].redacted == {"aws_access_key": 1, "github_token": 1}
        assert read_status(store).redacted == {"aws_access_key": 1, "github_token": 1}
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
        report = runner.extract_due(store, recorder, runner.RunOptions(cleanup_days=30))
        assert report.captured == report.tried > 2
        sent = "\n".join(t.text for c in recorder.chunks for t in c.turns)
        assert slack not in sent and not any(line in sent for line in body)
        assert "[REDACTED:slack_token]" in sent and "[REDACTED:private_key]" in sent
        assert report.redacted["slack_token"] == 1 and report.redacted["private_key"] >= 2
        statements = " ".join(i.statement for i in store.items())
        # (the placeholder stays whole in what the heuristic keeps: it strips emphasis, not underscores)
        assert "We must never commit [REDACTED:slack_token] again" in statements and slack not in statements
    finally:
        store.close()


# -- the anchor gate: detectors run only on texts holding one of their literals ------------------------


@pytest.fixture(scope="module")
def ungated(redactor: redact.Redactor) -> redact.Redactor:
    return redact.Redactor(redactor.detectors, gate=False)


def test_anchors_are_derived_from_the_regex() -> None:
    anchors = anchor_derivation.derive_anchors
    # a branch after a factored-out prefix (the parser reads ABIA|ACCA as A(?:BIA|CCA))
    assert anchors(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}", 0) == redact.Anchors(
        frozenset({"A3T", "ABIA", "ACCA", "AKIA", "ASIA"}), fold=False)
    # a branch of prefixes, joined to the literal after it
    assert anchors(r"(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}", 0) == redact.Anchors(
        frozenset({"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}), fold=False)
    # ignoring case: lowered; a small class expanded
    assert anchors(r"xox(?:a|b|p)-(?:\d+-)+[a-z0-9]+", re.IGNORECASE) == redact.Anchors(
        frozenset({"xoxa-", "xoxb-", "xoxp-"}), fold=True)
    # zero-width assertions skipped: a leading lookbehind, an optional part, then the literal
    assert anchors(r"(?<![\w$])(?:export[ \t]+)?API_TOKEN=(?P<secret>\S+)", 0) == redact.Anchors(
        frozenset({"API_TOKEN="}), fold=False)
    # run on the lowered text: compared ignoring case; a shorter literal found inside a longer one stays
    assert anchors(r"(?:key|pwd|password|pass)\s*=", 0, lowered=True) == redact.Anchors(
        frozenset({"key", "pwd", "pass"}), fold=True)
    assert anchors(r"(?i:secret)_\w+", 0) == redact.Anchors(frozenset({"secret_"}), fold=True)
    # no literal of two characters: always runs
    assert anchors(r":[\w-]{35}", 0) is None
    assert anchors(r"\d{8,10}:[0-9A-Za-z_-]{35}", 0) is None
    assert anchors(r"(?:abc|\d+)x(?:yz)?", 0) is None  # an alternative without a literal; 'yz' optional
    assert anchors(r"(?:abc|\d+)xyz?", 0) == redact.Anchors(frozenset({"xy"}), fold=False)
    assert anchors(r"a\nb", 0) is None  # a separator's character is never part of an anchor


def test_ignoring_case_the_gate_finds_every_character_python_would_take() -> None:
    # Python's IGNORECASE takes ı and İ for i, ſ for s, K (KELVIN SIGN) for k; str.lower turns K into k.
    import re2

    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    lowered = every.replace("İ", " ").lower()  # as _lower does: İ is left as it is
    assert len(lowered) == len(every)
    for char in string.ascii_lowercase + string.digits + string.punctuation:
        python = {m.group() for m in re.finditer(re.escape(char), every, re.IGNORECASE)}
        python |= {every[m.start()] for m in re.finditer(re.escape(char), lowered)}
        gate = re2.compile(anchor_gate.re2_char(char, fold=True))
        assert all(gate.fullmatch(c) for c in python), char


def _equal(gated: redact.Redactor, ungated: redact.Redactor, texts: list[str]) -> None:
    assert gated.redact_many(texts) == ungated.redact_many(texts)
    for text in texts:
        assert gated.spans(text) == ungated.spans(text), text


def test_gated_is_ungated_on_the_secrets_corpus(redactor: redact.Redactor, ungated: redact.Redactor) -> None:
    rng = random.Random(9)
    texts = [s.text for seed in (1, 2) for s in secrets_corpus.corpus(seed=seed, per_type=3)]
    texts += secrets_corpus.BENIGN
    texts += [f"{_variant(word, how)}{op}Ab1Cd2Ef3Gh4Ij5Kl6" for word in _WORDS for how in range(4)
              for op in ("=", " = ", ': "', "='", "-", "_")]  # names as IGNORECASE takes them
    texts += [_json_escaped(t, slash) for t in texts for slash in (False, True)]
    _equal(redactor, ungated, texts)
    found = redactor.redact_many(texts)
    assert len(found) > len(texts) // 3  # the corpus is found, not only equally missed
    rng.shuffle(texts)
    start = 0
    while start < len(texts):  # in batches of various sizes
        size = rng.choice([1, 2, 3, 7, 30, 200])
        _equal(redactor, ungated, texts[start:start + size])
        start += size


def _json_escaped(text: str, slash: bool) -> str:
    """As rendered inside a tool call's JSON (some writers escape / as well)."""
    escaped = json.dumps(text)[1:-1]
    return escaped.replace("/", "\\/") if slash else escaped


def _sample_texts() -> list[str]:
    """Every line of the real samples (JSON, escapes and all), and every string in them."""
    out: list[str] = []
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        for line in path.read_text(errors="replace").splitlines():
            out.append(line)
            with contextlib.suppress(ValueError):
                out += [s for s in strings_in(json.loads(line)) if len(s) > 3]
    return out


def test_gated_is_ungated_on_the_real_samples(redactor: redact.Redactor, ungated: redact.Redactor) -> None:
    texts = _sample_texts()
    assert len(texts) > 500
    _equal(redactor, ungated, texts)


_WORDS = [
    "key", "api_key", "token", "secret", "password", "passwd", "pwd", "pw", "credentials", "contraseña",
    "AKIA", "ghp_", "github_pat_", "sk-ant-api03-", "sk-proj-", "xoxb-", "eyJ", "AIza", "ya29.", "npm_", "glpat-",
    "SG.", "AccountKey=", "bearer ", "Authorization: Basic ", "aws_secret_access_key", "<private>", "</private>",
    "-----BEGIN RSA PRIVATE KEY-----", "PuTTY-User-Key-File-2: ssh-rsa", "://", "@", "hooks.slack.com/services/",
    "cloudant.com", "sk_live_", "pypi-AgEIcHlwaS5vcmc", "-us1", "AKC", "AP1", "AC", "SK", "export ", "=", ": ",
    '"', "'", "\\", "\\n", '\\"', "\\/", "\n", "\t", " ", "\x00", "İ", "ı", "ſ", "\u212a",
]


def _variant(word: str, how: int) -> str:
    """The word as Python's IGNORECASE (or str.lower) also takes it: ı/İ for i, ſ for s, K for k, other case."""
    if how == 1:
        return word.upper()
    if how == 2:
        return word.replace("i", "ı").replace("s", "ſ").replace("k", "\u212a")
    if how == 3:
        return word.replace("I", "İ").replace("K", "\u212a").replace("i", "İ")
    return word


_SECRETS = [s.text for s in secrets_corpus.corpus(seed=4, per_type=1)]
_value = st.text(alphabet="abcdefABCDEF0123456789_-./+=", min_size=8, max_size=48)
_piece = st.one_of(
    st.sampled_from(_SECRETS),
    st.builds(_variant, st.sampled_from(_WORDS), st.integers(0, 3)),
    st.builds(  # an assignment to a name as IGNORECASE takes it
        lambda name, how, op, value: _variant(name, how) + op + value,
        st.sampled_from(_WORDS[:10]), st.integers(0, 3), st.sampled_from(["=", " = ", ': "', "='"]), _value,
    ),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=12),
    _value,
)
_text = st.builds(
    lambda pieces, escaped: "".join(pieces) if escaped is None else _json_escaped("".join(pieces), escaped),
    st.lists(_piece, max_size=10), st.sampled_from([None, False, True]),
)


@given(texts=st.lists(_text, min_size=1, max_size=12))
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_gated_is_ungated_on_mixed_text(
    redactor: redact.Redactor, ungated: redact.Redactor, texts: list[str]
) -> None:
    _equal(redactor, ungated, texts)


# -- the bare prefilter: a trigger without anchors searched on the stored text ---------------------------


def test_lowering_keeps_every_character_a_word_character_or_not() -> None:
    # What `gate.bare_prefilter` relies on: a [\w-] run of the lowered view is one of the text as stored.
    word = re.compile(r"[\w-]")
    for c in range(0x110000):
        char = chr(c)
        low = char.lower()
        if len(low) == 1 and not 0xD800 <= c < 0xE000:  # İ, the one that lengthens, _lower leaves as it is
            assert bool(word.match(char)) == bool(word.match(low)), hex(c)


def test_only_triggers_of_punctuation_and_word_runs_are_prefiltered() -> None:
    assert anchor_gate.bare_prefilter(r":[\w-]{35}") is not None
    assert anchor_gate.bare_prefilter(r"\.[\w-]{6}\.[\w-]{27}") is not None
    for trigger in (r"-us\d", r"sk-", r"a\nb", r"/[\w-]{3}", r'"[\w-]{3}', r"\\[\w-]{3}", r":\w*", r":[\w.]{3}",
                    r"(?i):[\w-]{3}", r":[\w-]{3}|x"):
        assert anchor_gate.bare_prefilter(trigger) is None, trigger
    # every anchorless trigger of the detectors is prefiltered (else it runs on every text: say so here)
    triggers = {d.trigger for d in redact.redactor().detectors if d.trigger is not None}
    bare = {t for t in triggers if anchor_derivation.derive_anchors(t, 0, lowered=True) is None}
    assert bare and all(anchor_gate.bare_prefilter(t) is not None for t in bare), bare


_RUN = st.text(alphabet=st.sampled_from("aZ09_-é\u212aİıſ\u0660Ⅰ"), min_size=0, max_size=40)
_bare_piece = st.one_of(
    st.builds(lambda a, b: f":{a}{b}", _RUN, _RUN),
    st.builds(lambda a, b, c: f"{a}.{b}.{c}", _RUN, _RUN, _RUN),
    st.sampled_from([":", ".", "\\", "\\n", "\\/", '\\"', "\\\\", "\n", "İ", "\x01", " "]),
    st.builds(lambda d, s: f"{d}:{s}", st.text(alphabet="0123456789", min_size=8, max_size=10),
              st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=35, max_size=36)),
    st.builds(lambda a, b, c: f"M{a}.{b}.{c}",
              *(st.text(alphabet=string.ascii_letters + string.digits + "_-", min_size=n, max_size=n)
                for n in (23, 6, 27))),
)
_bare_text = st.builds(
    lambda pieces, escaped: "".join(pieces) if escaped is None else _json_escaped("".join(pieces), escaped),
    st.lists(_bare_piece, max_size=8), st.sampled_from([None, False, True]),
)


@given(text=_bare_text)
@settings(max_examples=500, deadline=None)
def test_the_prefilter_never_rejects_a_text_its_trigger_would_hit(text: str) -> None:
    from checkpoint.redact import engine

    view = engine._lower(engine._unescaped(text)[0])
    for trigger in (r":[\w-]{35}", r"\.[\w-]{6}\.[\w-]{27}"):
        prefilter = anchor_gate.bare_prefilter(trigger)
        assert prefilter is not None
        if re.search(trigger, view):
            assert prefilter.search(text), (trigger, text)


@given(texts=st.lists(_bare_text, min_size=1, max_size=8))
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_gated_is_ungated_on_bot_token_like_text(
    redactor: redact.Redactor, ungated: redact.Redactor, texts: list[str]
) -> None:
    _equal(redactor, ungated, texts)
