"""End to end with the `openai` extractor: the real `checkpoint now` process against the fake
OpenAI-compatible chat-completions server on 127.0.0.1 (tests/support/fake_chat.py), a temp HOME.

- A server that refuses json_schema, with a small window and every fault it knows (500s, answers cut
  off, prose instead of JSON, a 400 for a prompt over its window, a dropped connection): every planted
  decision of a multi-session corpus is captured exactly once, no request overfills the window, JSON
  mode is said once, the cost is 0 and said so.
- The same, killed with SIGKILL at seeded moments (answers in flight, mid-commit): a last run finishes
  and every planted decision is one item (crash_harness's oracle).
"""

from __future__ import annotations

import json
import os
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from tests.support import synth
from tests.support.cli_run import cli_env, query, run
from tests.support.crash_harness import Life, Trigger, check_database, check_partial, chunk_states, run_now
from tests.support.fake_anthropic import planted_decisions
from tests.support.fake_chat import ChatRequest, FakeChat, FaultKind
from tests.support.fake_http import JSON

WINDOW = 4096
MARKER = re.compile(r"marker-[0-9a-f]+")
FAULTS: list[FaultKind] = ["server_error", "cut_off", "prose", "too_long", "drop", "cut_off", "server_error", "prose"]


def environment(tmp_path: Path, fake: FakeChat, sources: list[Path], **extra: str) -> dict[str, str]:
    config = tmp_path / "config.toml"
    config.write_text("retry_delay = 0.01\nretry_max_delay = 0.05\nmax_attempts = 3\nrequest_timeout = 10.0\n")
    values = {"CHECKPOINT_CONFIG": str(config), "CHECKPOINT_DB": str(tmp_path / "db" / "c.db"),
              "CHECKPOINT_SOURCES": os.pathsep.join(map(str, sources)), "CHECKPOINT_EXTRACTOR": "openai",
              "CHECKPOINT_OPENAI_BASE_URL": fake.base_url, "CHECKPOINT_OPENAI_MODEL": "local-model",
              "CHECKPOINT_OPENAI_CONTEXT_TOKENS": str(WINDOW)}
    return cli_env(tmp_path / "home", **(values | extra))


def markers(db: Path) -> Counter[str]:
    return Counter(m for (s,) in query(db, "SELECT statement FROM items") for m in MARKER.findall(s))


def test_every_fault_of_a_local_server_and_every_decision_captured_once(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=3, turns=30, chars=12_000, seed=30)
    planted = set().union(*corpus.markers.values())
    with FakeChat(context_tokens=WINDOW, refuse_json_schema=True) as fake:
        fake.script(*FAULTS)
        env = environment(tmp_path, fake, [corpus.claude_root, corpus.codex_root])
        results = []
        for _ in range(6):
            results.append(run(["now"], env))
            if results[-1].rc == 0 and "failed:" not in results[-1].out:
                break
        requests = fake.completions
        base = fake.base_url
    first = results[0]
    assert (f"Using an OpenAI-compatible server at {base} (local-model; 4,096-token window from "
            "openai_context_tokens; a local server: no cost) (as configured).") in first.out, first.out
    assert results[-1].rc == 0, results[-1].out + results[-1].err
    assert markers(tmp_path / "db" / "c.db") == Counter(dict.fromkeys(planted, 1))
    # Every fault was met. Each run learns of the refused schema on its first requests (two in flight),
    # says it once, and asks in JSON mode from then on.
    assert {r.fault for r in requests if r.fault} == set(FAULTS)
    refused = [r for r in requests if r.format_type == "json_schema"]
    assert all(r.status == 400 for r in refused) and len(refused) <= 2 * len(results)
    assert [r.err.count("refused the answer's JSON schema") for r in results] == [1] * len(results)
    # No request overfilled the window (the scripted too_long is the server's word, not a real overflow).
    assert [r.seq for r in requests if r.over_window] == []
    assert max(r.tokens + int((r.body or {})["max_tokens"]) for r in requests) <= WINDOW
    status = json.loads(run(["status", "--json"], env).check().out)
    assert status["totals"]["captured"] == status["totals"]["turns"] > 0
    assert status["usage"]["cost_usd"] == 0 and status["usage"]["requests"] >= len(requests) - 1


def test_killed_with_sigkill_mid_run_every_decision_is_still_one_item(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=2, turns=30, chars=9_000, seed=31)
    sources = [corpus.claude_root, corpus.codex_root]
    for root in sources:
        root.mkdir(parents=True, exist_ok=True)
    planted = set().union(*corpus.markers.values())
    db = tmp_path / "db" / "c.db"
    work = tmp_path / "runs"
    work.mkdir()
    rng = random.Random(30)
    with FakeChat(context_tokens=WINDOW, latency=0.05) as fake:
        fake.script("cut_off", "server_error", "prose")
        env = environment(tmp_path, fake, sources, CHECKPOINT_LEASE_SECONDS="1.0", CHECKPOINT_CONCURRENCY="2")

        def after_requests() -> Trigger:
            base, k = len(fake.completions), rng.randint(1, 4)
            return Trigger(f"after {k} requests", lambda: len(fake.completions) >= base + k, rng.uniform(0, 0.05))

        def after_commits() -> Trigger:
            base, k = chunk_states(db)["captured"], rng.randint(1, 3)
            return Trigger(f"after {k} commits", lambda: chunk_states(db)["captured"] >= base + k)

        lives: list[Life] = []
        triggers: list[Callable[[], Trigger]] = [after_requests, after_commits, after_requests]
        for n, trigger in enumerate(triggers):
            lives.append(run_now(env, work, f"now-{n}", trigger, ["--extractor", "openai"]))
            check_partial(db, planted)
        time.sleep(1.1)  # the killed runs' leases expire
        final = run_now(env, work, "final", None)
    assert sum(life.killed for life in lives) >= 2, [(life.name, life.killed, life.rc) for life in lives]
    assert final.rc == 0, final.err
    checked = check_database(db, sources, 1_000, planted, work)
    assert checked.markers == len(planted) > 0


def test_answers_that_flood_drip_or_never_end_leave_the_chunks_due_for_a_later_run(tmp_path: Path) -> None:
    """Issue 37 (finding 6): each attempt ends at the request's deadline or the answer's byte cap, the
    run says why, no chunk is marked done, and a later run against a well-behaved server captures every
    planted decision once."""
    corpus = synth.write_corpus(tmp_path / "src", sessions=2, turns=12, chars=3_000, seed=37)
    planted = set().union(*corpus.markers.values())
    with FakeChat(context_tokens=WINDOW) as fake:
        floods: list[FaultKind] = ["endless", "drip", "huge"]
        fake.script(*(floods * 40))
        env = environment(tmp_path, fake, [corpus.claude_root, corpus.codex_root],
                          CHECKPOINT_OPENAI_ANSWER_BYTES=str(1 << 20))
        (tmp_path / "config.toml").write_text("retry_delay = 0.01\nretry_max_delay = 0.05\nmax_attempts = 3\n"
                                              "request_timeout = 1.0\n")
        flooded = run(["now"], env)
        faults = {r.fault for r in fake.completions}
        fake.unscript()
        after = run(["now"], env)
    db = tmp_path / "db" / "c.db"
    assert faults == {"endless", "drip", "huge"}
    assert "failed:" in flooded.out or "failed" in flooded.err, flooded.out + flooded.err
    said = flooded.out + flooded.err
    assert ("went past the 1,048,576-byte cap (openai_answer_bytes)" in said or "over the 1,048,576-byte cap" in said
            or "within the request's deadline of 1 s" in said), said
    assert "Traceback" not in flooded.err
    assert after.rc == 0, after.out + after.err
    assert markers(db) == Counter(dict.fromkeys(planted, 1))


def test_a_server_off_this_machine_is_named_in_the_run_line(tmp_path: Path) -> None:
    """Issue 37 (findings 5, 10): a base URL that is not this machine's is said plainly where the run
    names its extractor. The request reaches the fake through an HTTP proxy, as a hosted server's would."""
    corpus = synth.write_corpus(tmp_path / "src", sessions=2, turns=6, chars=2_000, seed=38)
    with FakeChat(context_tokens=WINDOW) as fake:
        env = environment(tmp_path, fake, [corpus.claude_root, corpus.codex_root],
                          CHECKPOINT_OPENAI_BASE_URL="http://models.example.test/v1",
                          HTTP_PROXY=fake.origin, http_proxy=fake.origin, NO_PROXY="", no_proxy="")
        result = run(["now"], env)
        hosts = {r.headers.get("host") for r in fake.completions}
    assert result.rc == 0, result.out + result.err
    assert ("Using an OpenAI-compatible server at http://models.example.test/v1 (local-model; "
            "4,096-token window from openai_context_tokens; cost not counted: no price is known for this server; "
            "your transcripts, redacted, are sent to models.example.test) (as configured).") in result.out, result.out
    assert hosts == {"models.example.test"}


def test_a_short_key_echoed_in_a_401_is_stored_and_shown_nowhere(tmp_path: Path) -> None:
    """Issue 37 (finding 10): a key shorter than any key shape (sk-1234), quoted back by the server's 401."""
    corpus = synth.write_corpus(tmp_path / "src", sessions=2, turns=6, chars=2_000, seed=39)
    short = "sk-1234"
    with FakeChat(context_tokens=WINDOW, api_key="the-right-key", echo_key=True, models_open=True) as fake:
        env = environment(tmp_path, fake, [corpus.claude_root, corpus.codex_root], OPENAI_API_KEY=short)
        now = run(["now"], env)
        status = run(["status", "--json"], env).check()
        echoed = [r for r in fake.requests if r.status == 401]
    assert echoed and now.rc != 0
    assert "authentication failed (401): Incorrect API key provided: <OPENAI_API_KEY>" in now.out + now.err
    db = tmp_path / "db" / "c.db"
    stored = b"".join(p.read_bytes() for p in (db, Path(f"{db}-wal")) if p.exists())
    assert short not in now.out + now.err + status.out + status.err
    assert short.encode() not in stored


# -- a small window and a workspace of many items -----------------------------------------------------

PADDING = (" It is what the team settled on after weighing the other options at length, and every module that"
           " touches this layer follows it from now on, with no exception made for old code.")


def long_statements(request: ChatRequest) -> list[JSON]:
    """The planted decisions, each stated at length (~200 characters, as a model words a real item),
    so that the items already known soon fill more than a 4,096-token window."""
    found = planted_decisions(request.prompt, same_as='"same_as"' in json.dumps(request.response_format))
    return [dict(item, statement=str(item["statement"]) + PADDING) for item in found]


def default_environment(tmp_path: Path, fake: FakeChat, sources: list[Path], **extra: str) -> dict[str, str]:
    """Checkpoint's default settings, but for the server's address and quick retries: no window set."""
    config = tmp_path / "config.toml"
    config.write_text("retry_delay = 0.01\nretry_max_delay = 0.05\nrequest_timeout = 10.0\n")
    return cli_env(tmp_path / "home", CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(tmp_path / "db" / "c.db"),
                   CHECKPOINT_SOURCES=os.pathsep.join(map(str, sources)), CHECKPOINT_EXTRACTOR="openai",
                   CHECKPOINT_OPENAI_BASE_URL=fake.base_url, **extra)


def test_a_4096_token_window_over_a_hundred_items_never_stalls(tmp_path: Path) -> None:
    """The seed's failure class: known items that fill the window must give way, not stall the tail.
    One workspace accumulates well over 100 long items under a 4,096-token llama.cpp server (its window
    read from /props, no setting), with faults: every planted decision is one item, nothing pending."""
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=840, chars=110_000, seed=39, codex_share=0.0)
    planted = set().union(*corpus.markers.values())
    assert len(planted) > 100
    with FakeChat(model="local-model", context_tokens=WINDOW, says_window="llama.cpp",
                  responder=long_statements) as fake:
        fake.script(*FAULTS)
        env = default_environment(tmp_path, fake, [corpus.claude_root, corpus.codex_root])
        results = []
        for _ in range(6):
            results.append(run(["now"], env))
            if results[-1].rc == 0 and "failed:" not in results[-1].out:
                break
        requests = fake.completions
    assert "4,096-token window from llama.cpp's /props n_ctx" in results[0].out, results[0].out
    assert results[-1].rc == 0, results[-1].out + results[-1].err
    assert markers(tmp_path / "db" / "c.db") == Counter(dict.fromkeys(planted, 1))
    assert [r.seq for r in requests if r.over_window] == []
    # The known items went with the chunks: restatements can still be recognised at this window.
    assert sum("Already recorded" in str((r.body or {}).get("messages")) for r in requests) > len(requests) // 2
    status = json.loads(run(["status", "--json"], env).check().out)
    assert status["totals"]["captured"] == status["totals"]["turns"] > 0
    assert status["totals"]["pending"] == 0 and status["totals"]["failed"] == 0


def test_a_4096_token_window_over_a_hundred_items_killed_mid_run_loses_nothing(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=770, chars=95_000, seed=40, codex_share=0.0)
    sources = [corpus.claude_root, corpus.codex_root]
    for root in sources:
        root.mkdir(parents=True, exist_ok=True)
    planted = set().union(*corpus.markers.values())
    assert len(planted) > 100
    db = tmp_path / "db" / "c.db"
    work = tmp_path / "runs"
    work.mkdir()
    rng = random.Random(39)
    with FakeChat(context_tokens=WINDOW, latency=0.02, responder=long_statements) as fake:
        fake.script("cut_off", "server_error", "prose")
        env = default_environment(tmp_path, fake, sources, CHECKPOINT_LEASE_SECONDS="1.0")

        def after_commits() -> Trigger:
            base, k = chunk_states(db)["captured"], rng.randint(5, 15)
            return Trigger(f"after {k} commits", lambda: chunk_states(db)["captured"] >= base + k)

        lives = [run_now(env, work, f"now-{n}", after_commits, ["--extractor", "openai"]) for n in range(3)]
        check_partial(db, planted)
        time.sleep(1.1)  # the killed runs' leases expire
        final = run_now(env, work, "final", None)
    assert sum(life.killed for life in lives) >= 2, [(life.name, life.killed, life.rc) for life in lives]
    assert final.rc == 0, final.err
    checked = check_database(db, sources, 1_000, planted, work)
    assert checked.markers == len(planted)
