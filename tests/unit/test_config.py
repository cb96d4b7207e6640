"""The settings' defaults: the transcript roots each agent writes under, per platform and environment."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from checkpoint import config
from checkpoint.sources import locate
from checkpoint.sources.base import FileRole
from tests.support.claude_code_lines import S

# -- default roots ---------------------------------------------------------------------------------


def test_default_roots_include_codexs_archive_and_claude_desktop(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / ".config"))
    monkeypatch.setattr(sys, "platform", "linux")
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "COPILOT_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(name, raising=False)
    desktop = tmp_path / ".config" / "Claude" / "local-agent-mode-sessions"
    # opencode keeps its data under the XDG data folder on every platform (macOS too).
    assert config.default_sources() == [tmp_path / ".claude" / "projects", tmp_path / ".codex" / "sessions",
                                         tmp_path / ".codex" / "archived_sessions", desktop,
                                         tmp_path / ".gemini" / "tmp", tmp_path / ".copilot" / "session-state",
                                         tmp_path / ".local" / "share" / "opencode"]
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "cop"))
    assert config.default_sources()[5] == tmp_path / "cop" / "session-state"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert config.default_sources()[3] == (tmp_path / "Library" / "Application Support" / "Claude"
                                           / "local-agent-mode-sessions")
    # Under Desktop's folder only the Claude Code transcripts are claimed, not its own .jsonl files.
    session = desktop / "org" / "a1b2" / ".claude" / "projects" / "-w" / f"{S}.jsonl"
    assert locate(session) == FileRole("claude", S)
    assert locate(desktop / "org" / "a1b2" / "audit.jsonl") is None


def test_agent_reminders_are_on_by_default_switched_off_by_env_or_file_and_a_bad_value_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("CHECKPOINT_CONFIG", raising=False)
    assert config.load(environ={}).agent_reminders is True
    assert config.load(environ={"CHECKPOINT_AGENT_REMINDERS": "0"}).agent_reminders is False
    with pytest.raises(config.SettingsError, match=r"CHECKPOINT_AGENT_REMINDERS.*agent_reminders: expected bool"):
        config.load(environ={"CHECKPOINT_AGENT_REMINDERS": "sometimes"})
    path = config.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("agent_reminders = false\n")
    assert config.load(environ={}).agent_reminders is False
    path.write_text('agent_reminders = "sometimes"\n')
    with pytest.raises(config.SettingsError, match=r"agent_reminders: expected bool, got 'sometimes'"):
        config.load(environ={})


def test_tool_output_chars_defaults_to_1000_0_keeps_all_and_a_bad_value_is_refused_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("CHECKPOINT_CONFIG", raising=False)
    assert config.load(environ={}).tool_output_chars == 1000
    assert config.load(environ={"CHECKPOINT_TOOL_OUTPUT_CHARS": "0"}).tool_output_chars == 0
    refused = r"CHECKPOINT_TOOL_OUTPUT_CHARS.*tool_output_chars: must be 0 or more"
    with pytest.raises(config.SettingsError, match=refused):
        config.load(environ={"CHECKPOINT_TOOL_OUTPUT_CHARS": "-5"})
    path = config.config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('tool_output_chars = "lots"\n')
    with pytest.raises(config.SettingsError, match=r"tool_output_chars: expected int, got 'lots'"):
        config.load(environ={})
