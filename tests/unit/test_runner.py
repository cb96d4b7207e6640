"""The run layer's pieces: run options built once from the settings, the extractor choice and its
sentence, and the run report's one JSON form and one sentence (what the CLI prints and the daemon sends)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from checkpoint import redact, runner
from checkpoint.answer import Extraction
from checkpoint.config import Settings
from checkpoint.extract import Windowed, fitted_chunk_tokens
from checkpoint.extract.choose import choose_extractor
from checkpoint.extract.heuristic import HeuristicExtractor
from checkpoint.model import ChunkInput, Failure, RunReport, Usage


class _Narrow:
    """An extractor whose model reads a small window."""

    name = "narrow"
    description = "a narrow test extractor"

    def __init__(self, budget: int) -> None:
        self.budget = budget

    def chunk_budget(self) -> int:
        return self.budget

    def extract(self, chunk: ChunkInput) -> Extraction:
        return Extraction(chunk_id=chunk.chunk_id, items=[], extractor=self.name)


def test_run_options_carry_every_engine_setting(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "db", sources=[], max_requests=7, max_tokens=9_000, max_cost=1.5,
                        concurrency=3, known_items=4, lease_seconds=12.0, at_risk_days=2.0, chunk_tokens=5_000,
                        redact=False)
    options = runner.RunOptions.from_settings(settings)
    assert options.budget == runner.Budget(7, 9_000, 1.5)
    assert (options.concurrency, options.known_items, options.lease_seconds, options.at_risk_days) == (3, 4, 12.0, 2.0)
    assert options.redactor is redact.OFF and options.chunk_tokens == 5_000
    assert runner.RunOptions.from_settings(settings, concurrency=1).concurrency == 1


def test_new_chunks_fit_the_window_of_an_extractor_that_declares_one(tmp_path: Path) -> None:
    settings = Settings(db=tmp_path / "db", sources=[], chunk_tokens=5_000)
    assert isinstance(_Narrow(1), Windowed) and not isinstance(HeuristicExtractor(), Windowed)
    assert fitted_chunk_tokens(_Narrow(800), 5_000) == 800 and fitted_chunk_tokens(_Narrow(9_000), 5_000) == 5_000
    narrow = runner.RunOptions.from_settings(settings, _Narrow(800))
    assert narrow.chunk_tokens == 800 and narrow.scan_settings(settings).chunk_tokens == 800
    offline = runner.RunOptions.from_settings(settings, HeuristicExtractor())
    assert offline.scan_settings(settings) is settings


def test_the_budget_left_after_what_was_spent() -> None:
    left = runner.Budget(5, 1_000, 2.0).less(Usage(input_tokens=400, output_tokens=200, requests=2, cost_usd=0.5))
    assert left == runner.Budget(3, 400, 1.5)
    assert runner.Budget(1, None, None).less(Usage(requests=4)) == runner.Budget(0, None, None)


@pytest.mark.parametrize(("wanted", "key", "name", "fallback", "sentence"), [
    ("heuristic", None, "heuristic", False,
     "Using the offline heuristic extractor (phrase rules, no network), as configured."),
    (None, None, "heuristic", True,
     "No ANTHROPIC_API_KEY set and `claude-nowhere` not found on PATH (install Claude Code: npm install -g "
     "@anthropic-ai/claude-code, or set claude_command); `codex-nowhere` is not on PATH (codex_command = "
     "'codex-nowhere'; install it with `npm install -g @openai/codex`, or set codex_command): using the offline "
     "heuristic extractor (phrase rules, no network). For a model: set ANTHROPIC_API_KEY, log in to `claude` or "
     "`codex`, or set openai_base_url to a local model server (Ollama, llama.cpp, LM Studio, vLLM)."),
    ("anthropic", None, "heuristic", True,
     "The Claude extractor was asked for, but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is set: using the"
     " offline heuristic extractor instead (phrase rules, no network)."),
    (None, "k", "anthropic", False, "Using Claude (claude-haiku-4-5) (ANTHROPIC_API_KEY is set)."),
])
def test_the_choice_of_extractor_says_which_and_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wanted: str | None, key: str | None, name: str,
    fallback: bool, sentence: str,
) -> None:
    if key:
        monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    # A command that is nowhere: the choice must not depend on a `claude` of the machine running the test.
    settings = Settings(db=tmp_path / "db", sources=[], extractor=wanted, claude_command="claude-nowhere",
                        codex_command="codex-nowhere")
    choice = choose_extractor(settings)
    assert (choice.extractor.name, choice.fallback, choice.sentence) == (name, fallback, sentence)


def test_the_run_report_has_one_sentence_and_one_json_form() -> None:
    report = RunReport(run_id=1, extractor="anthropic", tried=4, captured=2, failed=1, lost=1, resplit=1,
                       items_added=3, new_kinds=Counter({"question": 1, "decision": 2}))
    report.failures.append(Failure(9, "s1", "overloaded"))
    assert report.sentence() == (
        "Extracted 4 chunks with the anthropic extractor: 2 captured, 1 failed, 1 not captured (taken over by"
        " another worker), 1 re-split into smaller chunks; 3 new items (2 decisions, 1 open question).")
    assert RunReport(run_id=1, extractor="heuristic", tried=1, captured=1, items_added=1,
                     new_kinds=Counter({"constraint": 1})).sentence() == (
        "Extracted 1 chunk with the heuristic extractor: 1 captured, 0 failed; 1 new item (1 constraint).")
    data = report.as_dict()
    assert data["sentence"] == report.sentence()
    assert data["failures"] == [{"chunk_id": 9, "session_id": "s1", "cause": "overloaded", "lost": False}]
    assert {"extractor", "tried", "captured", "failed", "lost", "resplit", "items_added", "items_attributed",
            "usage", "models", "stopped_by", "redacted", "left", "failures"} <= set(data)


def test_reports_of_several_sessions_add_up() -> None:
    total = RunReport(run_id=1, extractor="heuristic", tried=2, captured=2, items_added=1)
    part = RunReport(run_id=2, extractor="heuristic", tried=1, failed=1, stopped_by="request budget of 3 reached",
                     usage=Usage(requests=1, input_tokens=10), models=Counter({"m": 1}))
    part.failures.append(Failure(3, "s2", "boom"))
    total.absorb(part)
    assert (total.tried, total.captured, total.failed, total.items_added) == (3, 2, 1, 1)
    assert total.stopped_by == part.stopped_by and total.usage.requests == 1 and total.models == Counter({"m": 1})
    assert [f.chunk_id for f in total.failures] == [3]
