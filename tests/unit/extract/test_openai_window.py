"""The window of an OpenAI-compatible server as the server says it (checkpoint.extract.openai_window),
against the fake chat-completions server speaking each convention (tests/support/fake_chat.py): the
setting wins, each server's own word is read, a model's maximum alone counts only to the safe default,
and a server that says nothing gets the safe default; the extractor says which window and why."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkpoint.config import Settings
from checkpoint.extract.openai_compatible import OpenAICompatibleExtractor
from checkpoint.extract.openai_window import server_window
from tests.support.fake_chat import FakeChat, SaysWindow


def settings(fake: FakeChat, tmp_path: Path, **extra: object) -> Settings:
    values: dict[str, object] = {"db": tmp_path / "c.db", "sources": [], "openai_base_url": fake.base_url,
                                 "request_timeout": 5.0}
    return Settings(**(values | extra))  # type: ignore[arg-type]


@pytest.mark.parametrize(("says", "why"), [
    ("vllm", "from vLLM's /v1/models max_model_len"),
    ("llama.cpp", "from llama.cpp's /props n_ctx"),
    ("ollama", "from Ollama's /api/ps context_length of the loaded model"),
    ("ollama-show", "from Ollama's /api/show num_ctx"),
    ("lmstudio", "from LM Studio's /api/v0/models loaded_context_length"),
])
def test_each_servers_own_word_for_its_window_is_read(tmp_path: Path, says: SaysWindow, why: str) -> None:
    with FakeChat(model="qwen2.5:7b", context_tokens=32_768, says_window=says) as fake:
        found = server_window(settings(fake, tmp_path), "qwen2.5:7b")
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path))
        base = fake.base_url
    assert (found.tokens, found.why) == (32_768, why)
    # The extractor asks for the first listed model's window, and says which window it uses and why.
    assert extractor.window.max_input_tokens == 32_768 and extractor.model == "qwen2.5:7b"
    assert extractor.description == (f"an OpenAI-compatible server at {base} (qwen2.5:7b; 32,768-token window {why}; "
                                     "a local server: no cost)")


def test_the_setting_wins_and_the_server_is_not_asked(tmp_path: Path) -> None:
    with FakeChat(model="m", context_tokens=32_768, says_window="llama.cpp") as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path, openai_context_tokens=8192, openai_model="m"))
    assert (extractor.window.max_input_tokens, extractor.window.source) == (8192, "from openai_context_tokens")
    assert fake.requests == []
    assert "8,192-token window from openai_context_tokens;" in extractor.description


def test_a_models_maximum_alone_counts_only_up_to_the_safe_default(tmp_path: Path) -> None:
    # Ollama with the model not loaded and no num_ctx: it runs the model at its own default, whatever
    # the model allows, and drops what does not fit without an error.
    with FakeChat(model="m", context_tokens=32_768, model_max=131_072, says_window="ollama-info") as fake:
        found = server_window(settings(fake, tmp_path), "m")
    assert found.tokens == 4096
    assert found.why == ("assumed: Ollama's /api/show model_info context_length says the model allows 131,072, but "
                         "the server runs it at its own default unless told more (set openai_context_tokens to the "
                         "real window)")
    with FakeChat(model="m", context_tokens=2048, model_max=2048, says_window="ollama-info") as fake:
        small = server_window(settings(fake, tmp_path), "m")
    assert (small.tokens, small.why) == (2048, "from Ollama's /api/show model_info context_length")


def test_a_server_that_says_nothing_gets_the_safe_default_said_as_assumed(tmp_path: Path) -> None:
    with FakeChat(model="m", context_tokens=32_768) as fake:
        extractor = OpenAICompatibleExtractor(settings(fake, tmp_path))
        asked = sorted({(r.method, r.path) for r in fake.requests})
    assert extractor.window.max_input_tokens == 4096
    assert "4,096-token window assumed: the server does not say its window (set openai_context_tokens to the " \
           "real one)" in extractor.description
    assert asked == [("GET", "/api/ps"), ("GET", "/api/v0/models"), ("GET", "/props"), ("GET", "/v1/models"),
                     ("POST", "/api/show")]
