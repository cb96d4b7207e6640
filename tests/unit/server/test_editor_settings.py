"""The extension's settings are generated from the Python ones: package.json's
`contributes.configuration` and src/settingsSchema.ts are what scripts/vscode_settings.py writes
(a developer who changed a setting runs it), and what they declare is what the daemon takes."""

from __future__ import annotations

from typing import Any

from checkpoint import config
from checkpoint.server import editor_settings
from checkpoint.server.settings import OPTIONS, ServerSettings, layered_settings
from scripts import vscode_settings

RERUN = "out of date: run `.venv/bin/python -m scripts.vscode_settings` and commit what it writes"


def test_package_json_and_settings_schema_ts_are_what_the_python_settings_generate() -> None:
    current = vscode_settings.PACKAGE_JSON.read_text()
    assert current == vscode_settings.package_json(current), f"vscode-extension/package.json is {RERUN}"
    assert vscode_settings.SCHEMA_TS.read_text() == vscode_settings.schema_ts(), f"src/settingsSchema.ts is {RERUN}"


def _sent(setting: editor_settings.EditorSetting, value: Any) -> dict[str, Any]:
    """The setting as the extension sends it: `severity.decision` inside `severity`."""
    assert setting.option is not None
    outer, _, inner = setting.option.partition(".")
    return {"checkpoint": {outer: {inner: value} if inner else value}}


def test_every_allowed_value_the_editor_offers_is_taken_by_the_daemon_and_an_unlisted_one_refused() -> None:
    offered = 0
    for setting in editor_settings.SETTINGS:
        values = editor_settings.schema(setting).get("enum", [])
        for value in values:
            if setting.option == "extractor" and value == editor_settings.AUTO_EXTRACTOR:
                continue  # the editor's "unset": never sent (its default)
            engine, daemon, warnings = layered_settings(_sent(setting, value), environ={})
            assert warnings == [], (setting.id, value)
            option = str(setting.option)
            taken: dict[str, str | None] = {"extractor": engine.extractor, "scope": daemon.scope,
                                            "marks": daemon.diagnostics.marks, "extraction": daemon.auto.extraction, **{
                                                f"severity.{k}": v for k, v in daemon.diagnostics.severity.items()}}
            assert taken[option] == value, (setting.id, value)
            offered += 1
        if values:
            _, _, warnings = layered_settings(_sent(setting, "no-such-value"), environ={})
            assert len(warnings) == 1 and "no-such-value" in warnings[0], (setting.id, warnings)
    assert offered == len(config.EXTRACTORS) + 2 + 2 + 2 + 3 * 5  # extractors, scope, extraction, marks, severities


def test_the_editors_defaults_are_the_daemons_but_marks_and_an_engine_setting_at_its_default_sets_nothing() -> None:
    sent: dict[str, dict[str, Any]] = {"checkpoint": {}}
    for setting in editor_settings.SETTINGS:
        if setting.option is None:
            continue
        default = editor_settings.schema(setting)["default"]
        if setting.option == "extractor":
            assert default == editor_settings.AUTO_EXTRACTOR
            continue
        if setting.editor_default is not None:
            # the one editor default that is not the daemon's (VS Code shows CodeLens): it is sent
            assert (setting.id, default) == ("diagnostics.marks", "codelens")
            assert ServerSettings.from_options({"marks": default}).diagnostics.marks == "codelens"
            continue
        outer, _, inner = setting.option.partition(".")
        if inner:
            sent["checkpoint"].setdefault(outer, {})[inner] = default
        else:
            sent["checkpoint"][outer] = default
    engine, daemon, warnings = layered_settings(sent, environ={})
    assert (engine, daemon, warnings) == (config.load({}, environ={}), ServerSettings(), [])


def test_an_option_the_editor_sends_is_one_the_daemon_reads_and_paths_are_marked() -> None:
    options = {s.option for s in editor_settings.SETTINGS if s.option is not None}
    unknown = {o for o in options if o.partition(".")[0] not in config.NAMES | set(OPTIONS)}
    assert unknown == set()
    assert {s.id for s in editor_settings.SETTINGS if editor_settings.is_path(s)} == {"sources", "database"}
    assert [s.id for s in editor_settings.SETTINGS if s.option is None] == ["command"]
