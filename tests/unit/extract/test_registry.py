"""The extractor registry (checkpoint.extract.registry) is the one list of extractors: the settings'
names, the editor's setting (package.json's enum and its descriptions), the CLI's help and what choose
builds all follow it, and reading it loads no extractor."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checkpoint import config
from checkpoint.extract import registry
from tests.support.cli_run import cli_env, run
from tests.support.paths import REPO_ROOT

PACKAGE_JSON = REPO_ROOT / "vscode-extension" / "package.json"


def test_the_editor_setting_offers_exactly_the_registered_extractors_with_their_descriptions() -> None:
    properties = json.loads(PACKAGE_JSON.read_text(encoding="utf-8"))["contributes"]["configuration"]["properties"]
    setting = properties["checkpoint.extractor"]
    expected = {
        "enum": [registry.AUTOMATIC, *registry.NAMES],
        "enumDescriptions": [registry.AUTOMATIC_DESCRIPTION, *(e.description for e in registry.ENTRIES)],
        "default": registry.AUTOMATIC,
    }
    assert {key: setting.get(key) for key in expected} == expected


def test_the_settings_take_the_registered_names() -> None:
    assert config.EXTRACTORS == registry.NAMES == tuple(entry.name for entry in registry.ENTRIES)
    assert len(registry.NAMES) == len(registry.ENTRIES)  # no name registered twice
    assert registry.OFFLINE in registry.NAMES
    for name in registry.NAMES:
        assert config.Settings(extractor=name).extractor == name
    with pytest.raises(config.SettingsError, match=f"known: {', '.join(registry.NAMES)};"):
        config.Settings(extractor="auto")  # the editor's word for unset is not a name the engine takes


def test_each_entry_names_settings_that_exist() -> None:
    unknown = {e.name: sorted(set(e.settings) - config.NAMES) for e in registry.ENTRIES}
    assert unknown == {name: [] for name in registry.NAMES}


def test_each_factory_builds_the_extractor_of_its_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")  # the SDK's client wants one to exist
    settings = config.Settings(db=tmp_path / "c.db", sources=[tmp_path / "none"])
    built = {entry.name: entry.factory(settings).name for entry in registry.ENTRIES}
    assert built == {name: name for name in registry.NAMES}


def test_reading_the_registry_loads_no_extractor() -> None:
    """config reads the names at every command's start: no extractor module, SDK or pydantic with them."""
    probe = ("import sys, checkpoint.config\n"
             "print(sorted(m for m in sys.modules if m.startswith('checkpoint.extract.')"
             " or m.split('.')[0] in ('anthropic', 'pydantic', 'subprocess')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["['checkpoint.extract.names']"]


def test_the_cli_help_describes_every_registered_extractor(tmp_path: Path) -> None:
    help_text = " ".join(run(["now", "--help"], cli_env(tmp_path / "home")).check().out.split())
    assert "--extractor {" + ",".join(registry.NAMES) + "}" in help_text
    for entry in registry.ENTRIES:
        assert f"{entry.name}: {' '.join(entry.description.rstrip('.').split())}" in help_text
