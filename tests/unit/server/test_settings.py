"""The daemon's settings: the editor's options over flags and the environment, each refused by name."""

from __future__ import annotations

from checkpoint.server.settings import (
    AutoExtraction,
    DiagnosticsSettings,
    ServerSettings,
    engine_overrides,
    layered_settings,
)


def test_settings_from_the_editor_over_flags_and_environment() -> None:
    env = {"CHECKPOINT_DB": "/env/db", "CHECKPOINT_CHUNK_TOKENS": "3000"}
    engine, daemon, warnings = layered_settings(
        {"checkpoint": {"chunkTokens": 5000, "db": "", "scope": "all", "idleSeconds": 3,
                        "severity": {"question": "off"}}},
        flags={"chunk_tokens": 4000, "sources": None}, environ=env,
    )
    assert warnings == []
    assert engine.chunk_tokens == 5000 and str(engine.db) == "/env/db"  # "" means "not set here"
    assert daemon.scope == "all" and daemon.auto.idle_seconds == 3
    assert daemon.diagnostics.severity == {"decision": "information", "constraint": "information", "question": "off"}
    assert daemon.diagnostics.severity_of("question") is None
    engine, daemon, warnings = layered_settings({"idleSeconds": -1, "maxRequests": "many"}, environ=env)
    assert daemon == ServerSettings() and engine.chunk_tokens == 3000
    assert len(warnings) == 2 and "max_requests" in warnings[0] and "idleSeconds" in warnings[1]
    assert engine_overrides({"fallbackModels": ["a"], "unknownKey": 1}) == {"fallback_models": ["a"]}


def test_daemon_settings_accept_both_spellings_and_refuse_what_they_cannot_use() -> None:
    """Typed by hand (the daemon starts without pydantic): each bad value is refused with the option's
    name as sent, and the daemon keeps its defaults."""
    assert ServerSettings.from_options({"max_pending_turns": 7, "rescanSeconds": 2, "diagnostics": False,
                                        "extraction": "manual", "chunkTokens": 1}) == ServerSettings(
        rescan_seconds=2.0, auto=AutoExtraction(extraction="manual", max_pending_turns=7),
        diagnostics=DiagnosticsSettings(enabled=False))
    for bad in ({"scope": "everything"}, {"extraction": None}, {"idleSeconds": True}, {"idleSeconds": "20"},
                {"rescanSeconds": 0}, {"maxPendingTurns": 1.5}, {"diagnostics": "yes"},
                {"severity": {"question": "loud"}}, {"severity": "off"}):
        _, daemon, warnings = layered_settings(bad, environ={})
        assert daemon == ServerSettings()
        option = next(iter(bad))
        assert len(warnings) == 1 and warnings[0].startswith(f"ignoring the editor's daemon settings: {option}:")
