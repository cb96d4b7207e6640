"""Finding what a session wrote in its turns' text, and where it still is in a file."""

from __future__ import annotations

import json

from checkpoint.server.anchor import Edit, Span, edits_in, locate
from checkpoint.server.settings import AutoExtraction, DiagnosticsSettings, ServerSettings, engine_overrides, resolve


def test_claude_edit_multiedit_and_write_calls_yield_what_they_wrote() -> None:
    text = "\n".join([
        "Let me change it.",
        "[tool Edit] " + json.dumps({"file_path": "/w/a.py", "old_string": "x", "new_string": "y = 1\nz = 2"}),
        "[tool MultiEdit] " + json.dumps({"file_path": "b.py", "edits": [
            {"old_string": "a", "new_string": "first()"}, {"old_string": "b", "new_string": "second()"}]}),
        "[tool Write] " + json.dumps({"file_path": "/w/c.py", "content": "print('hi')\n"}),
        "[tool Bash] " + json.dumps({"command": "ls"}),
    ])
    assert edits_in(text, cwd="/w") == [
        Edit("/w/a.py", "y = 1\nz = 2"), Edit("/w/b.py", "first()"), Edit("/w/b.py", "second()"),
        Edit("/w/c.py", "print('hi')\n"),
    ]


def test_codex_apply_patch_raw_and_inside_json_arguments() -> None:
    patch = "\n".join([
        "*** Begin Patch", "*** Update File: src/q.py", "@@ class Queue:", " def put(self, job):",
        "-    pass", "+    self.jobs.append(job)", "@@", "+def size(self):", "+    return len(self.jobs)",
        "*** Add File: src/new.py", "+NEW = True", "*** Delete File: src/old.py", "*** End Patch",
    ])
    expected = [
        Edit("/repo/src/q.py", "def put(self, job):\n    self.jobs.append(job)"),
        Edit("/repo/src/q.py", "def size(self):\n    return len(self.jobs)"),
        Edit("/repo/src/new.py", "NEW = True"),
    ]
    assert edits_in(f"[tool apply_patch] {patch}", cwd="/repo") == expected
    as_json = "[tool shell] " + json.dumps({"command": ["apply_patch", patch]})
    assert edits_in(as_json, cwd="/repo") == expected


def test_locate_whole_text_then_longest_surviving_run_else_nothing() -> None:
    doc = "import os\n\n\ndef cache_get(key):\n    return STORE.get(key)\n\n\ndef other():\n    pass\n"
    assert locate(doc, "def cache_get(key):\n    return STORE.get(key)\n") == Span(3, 4)
    # edited since: the unchanged lines still anchor it
    assert locate(doc, "def cache_get(key):\n    return CACHE[key]\n") == Span(3, 3)
    assert locate(doc, "def gone():\n    return 42\n") is None
    assert locate(doc, "pass") is None  # too short to say where anything is


def test_settings_from_the_editor_over_flags_and_environment() -> None:
    env = {"CHECKPOINT_DB": "/env/db", "CHECKPOINT_CHUNK_TOKENS": "3000"}
    engine, daemon, warnings = resolve(
        {"checkpoint": {"chunkTokens": 5000, "db": "", "scope": "all", "idleSeconds": 3,
                        "severity": {"question": "off"}}},
        flags={"chunk_tokens": 4000, "sources": None}, environ=env,
    )
    assert warnings == []
    assert engine.chunk_tokens == 5000 and str(engine.db) == "/env/db"  # "" means "not set here"
    assert daemon.scope == "all" and daemon.auto.idle_seconds == 3
    assert daemon.diagnostics.severity == {"decision": "information", "constraint": "information", "question": "off"}
    assert daemon.diagnostics.severity_of("question") is None
    engine, daemon, warnings = resolve({"idleSeconds": -1, "maxRequests": "many"}, environ=env)
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
        _, daemon, warnings = resolve(bad, environ={})
        assert daemon == ServerSettings()
        option = next(iter(bad))
        assert len(warnings) == 1 and warnings[0].startswith(f"ignoring the editor's daemon settings: {option}:")
