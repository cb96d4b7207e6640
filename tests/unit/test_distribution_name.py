"""The distribution is `checkpoint-decisions`: the name `checkpoint` on PyPI is someone else's (a 2009
media archive manager), so an install command naming it would install their code. The import package
and the `checkpoint` command keep their name; every place that tells a user how to install, or that
builds or installs the wheel, names the distribution."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.support.paths import REPO_ROOT

DISTRIBUTION = "checkpoint-decisions"
WHEEL_PREFIX = "checkpoint_decisions-"  # a wheel's file name: the distribution name normalised (PEP 427)
# An install that names plain `checkpoint` (the other project), in any client's words.
INSTALLS_PLAIN = re.compile(r"(?:pip3?|pipx|uv tool|uv pip) install (?:-\S+ )*['\"]?checkpoint(?![\w-])"
                            r"|\bcheckpoint==")
TEXT_SUFFIXES = {".py", ".md", ".ts", ".mjs", ".json", ".sh", ""}
SKIP_PARTS = {"node_modules", "out", "dist", "bundled", ".venv", "data", "__pycache__"}


def _texts() -> list[Path]:
    roots = [REPO_ROOT / name for name in ("README.md", "docs", "daemon/checkpoint", "scripts", "claude-plugin",
                                           ".claude-plugin", "vscode-extension/src", "vscode-extension/e2e",
                                           "vscode-extension/README.md")]
    found: list[Path] = []
    for root in roots:
        candidates = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        found += [p for p in candidates if p.suffix in TEXT_SUFFIXES
                  and not SKIP_PARTS & set(p.relative_to(REPO_ROOT).parts)]
    return found


def test_the_project_is_distributed_under_a_name_of_its_own() -> None:
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == DISTRIBUTION
    assert project["scripts"] == {"checkpoint": "checkpoint.startup:main"}  # the command keeps its name


def test_no_text_tells_anyone_to_install_the_other_checkpoint() -> None:
    offending = [f"{path.relative_to(REPO_ROOT)}: {match.group(0)}" for path in _texts()
                 for match in INSTALLS_PLAIN.finditer(path.read_text(errors="replace"))]
    assert offending == []


def test_the_readme_and_the_messages_name_the_distribution_but_install_from_a_clone() -> None:
    """Named as what it will be on PyPI, but no install line names it until it is published there:
    such a line fails (issue 42). The install lines name a clone."""
    readme = (REPO_ROOT / "README.md").read_text()
    assert f"`{DISTRIBUTION}`" in readme and "pipx install /path/to/clone" in readme
    launcher = (REPO_ROOT / "claude-plugin" / "bin" / "checkpoint-launch").read_text()
    assert "pipx install $CLONE (or: uv tool install $CLONE;" in launcher
    for text in (readme, launcher, (REPO_ROOT / "vscode-extension" / "src" / "settings.ts").read_text()):
        assert f"pipx install {DISTRIBUTION}" not in text and f"uv tool install {DISTRIBUTION}" not in text
    constants = (REPO_ROOT / "vscode-extension" / "src" / "constants.ts").read_text()
    assert f"export const DISTRIBUTION = '{DISTRIBUTION}';" in constants
    environment = (REPO_ROOT / "vscode-extension" / "src" / "environment.ts").read_text()
    assert "`${DISTRIBUTION}==${manifest.version}`" in environment  # the bundled wheel installed by its name


def test_the_vsix_build_picks_the_wheel_by_its_new_file_name() -> None:
    script = (REPO_ROOT / "scripts" / "build-vsix.sh").read_text()
    assert f'"$BUNDLED"/wheels/{WHEEL_PREFIX}*.whl' in script
    assert "wheels/checkpoint-*.whl" not in script
