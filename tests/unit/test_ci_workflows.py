"""The GitHub Actions workflows parse, name only scripts that exist, and keep their jobs apart: CI runs
the README's test command from the locks; the release check runs on a schedule and is no part of CI."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.paths import REPO_ROOT

WORKFLOWS = sorted((REPO_ROOT / ".github" / "workflows").glob("*.yml"))


def _load(path: Path) -> dict[Any, Any]:
    loaded = yaml.safe_load(path.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert isinstance(triggers, dict)
    return triggers


def _runs(workflow: dict[Any, Any]) -> list[str]:
    return [step["run"] for job in workflow["jobs"].values() for step in job["steps"] if "run" in step]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_a_workflow_has_triggers_and_jobs_whose_steps_name_existing_scripts(path: Path) -> None:
    workflow = _load(path)
    assert _triggers(workflow)
    for job in workflow["jobs"].values():
        assert job["runs-on"] and job["steps"]
        assert all(("run" in step) != ("uses" in step) for step in job["steps"])
    named = {match for run in _runs(workflow) for match in re.findall(r"bash ((?:\.ci|scripts)/[\w./-]+)", run)}
    assert [script for script in named if not (REPO_ROOT / script).is_file()] == []


def test_ci_runs_the_readme_test_command_and_the_release_check_runs_on_a_schedule_apart() -> None:
    ci = _load(REPO_ROOT / ".github/workflows/ci.yml")
    assert _runs(ci) == ["bash .ci/run"]
    assert "bash scripts/test.sh" in (REPO_ROOT / ".ci/run").read_text()
    assert "bash scripts/test.sh" in (REPO_ROOT / "README.md").read_text()
    check = _load(REPO_ROOT / ".github/workflows/release-check.yml")
    assert "schedule" in _triggers(check) and "pull_request" not in _triggers(check)
    assert any(run.startswith("bash scripts/check-releases.sh") for run in _runs(check))
