"""Shared fixtures: every test gets its own database file and transcript roots under tmp_path."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from checkpoint.config import Settings
from checkpoint.store import Store


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a test runs may touch the real ~/.claude, ~/.codex or ~/.local."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "CHECKPOINT_DB",
                "CHECKPOINT_SOURCES", "CHECKPOINT_CONFIG", "CHECKPOINT_EXTRACTOR", "ANTHROPIC_API_KEY",
                "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    claude = tmp_path / "claude" / "projects"
    codex = tmp_path / "codex" / "sessions"
    claude.mkdir(parents=True)
    codex.mkdir(parents=True)
    return claude, codex


@pytest.fixture
def settings(tmp_path: Path, roots: tuple[Path, Path]) -> Settings:
    return Settings(db=tmp_path / "db" / "checkpoint.db", sources=list(roots), chunk_tokens=2000)


@pytest.fixture
def store(settings: Settings) -> Iterator[Store]:
    s = Store(settings.db)
    yield s
    s.close()
