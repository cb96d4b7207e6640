"""A Claude Code transcript in a temp HOME whose chunks the fake Anthropic API answers (the anthropic
extractor, room for absurd answers), with the markers its default responder recognises and the turns' ids."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_home import Home, claude_record, line
from tests.support.fake_anthropic import FakeAnthropic


def claude_home(tmp_path: Path, fake: FakeAnthropic, texts: list[str]) -> Home:
    h = Home(tmp_path)
    h.env.update(fake.env(), CHECKPOINT_EXTRACTOR="anthropic")
    config = tmp_path / "config.toml"
    config.write_text("output_tokens = 60000\n")  # room for absurd answers, so they are not cut short
    h.env["CHECKPOINT_CONFIG"] = str(config)
    h.path.write_bytes(b"".join(line(claude_record(n, text)) for n, text in enumerate(texts, start=1)))
    return h


def marker(n: int) -> str:
    """A marker the fake's default responder recognises (hex digits)."""
    return f"marker-00{n:02d}ab"


def turn_id(n: int) -> str:
    return f"00000000-0000-4000-8000-{n:012d}"
