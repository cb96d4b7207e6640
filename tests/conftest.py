"""Shared fixtures (every test gets its own database file and transcript roots under tmp_path) and the
tiers: each test is marked with the folder it sits in, so `pytest -m unit` runs the fast tier alone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from checkpoint.config import Settings
from checkpoint.store import Store
from tests.support.paths import HOOK_BUDGET

# Helpers that assert for the tests: rewritten like the tests' own asserts, so a failure shows the values.
pytest.register_assert_rewrite("tests.support.reader_checks")

TIERS = ("unit", "server", "e2e", "properties")  # folders under tests/, and markers (pyproject)
HERE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by these marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test with its tier; a test outside the tiers would escape every `-m` run, so refuse it."""
    outside = set()
    for item in items:
        path = item.path.resolve()
        if not path.is_relative_to(HERE):
            continue
        folder = path.relative_to(HERE).parts[0]
        if folder in TIERS:
            item.add_marker(getattr(pytest.mark, folder))
        else:
            outside.add(str(item.path))
    if outside:
        raise pytest.UsageError(f"tests outside the tiers {TIERS} (move them into one): {sorted(outside)}")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing a test runs may touch the real ~/.claude, ~/.codex, ~/.gemini, ~/.copilot or ~/.local."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME",
                "COPILOT_HOME", "CHECKPOINT_DB", "CHECKPOINT_SOURCES", "CHECKPOINT_CONFIG", "CHECKPOINT_EXTRACTOR",
                "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    # Whether the pre-edit hook answers must not depend on how loaded the machine is (its 0.8 s budget
    # made tests fail only under load): tests.support.paths.HOOK_BUDGET.
    for var, value in HOOK_BUDGET.items():
        monkeypatch.setenv(var, value)


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
