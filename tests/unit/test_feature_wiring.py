"""How the daemon's features are put together: built in dependency order, none reaching another
through the server, none importing another at run time (what they ask of each other is a
constructor parameter; what they tell each other is an event)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import checkpoint.server
from checkpoint.server import events
from checkpoint.server.app import build_features
from checkpoint.server.features.checks import CheckDiagnostics
from checkpoint.server.features.diagnostics import Diagnostics
from checkpoint.server.features.extraction import ExtractionFeature
from checkpoint.server.features.status import StatusFeature
from checkpoint.server.features.team import TeamRecords
from checkpoint.server.features.watcher import Watcher
from checkpoint.server.server import CheckpointServer

SERVER_DIR = Path(checkpoint.server.__file__).parent
FEATURES_DIR = SERVER_DIR / "features"
FEATURE_MODULES = {"status", "watcher", "extraction", "diagnostics", "team", "checks"}


def _feature_files(name: str) -> list[Path]:
    """The modules of one feature's package (server/features/<name>/)."""
    return sorted((FEATURES_DIR / name).rglob("*.py"))


def _runtime_imports(tree: ast.Module) -> set[str]:
    """Modules imported outside `if TYPE_CHECKING:` blocks."""
    found: set[str] = set()

    def visit(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                continue
            if isinstance(node, ast.ImportFrom) and node.module:
                found.add(node.module)
                found.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            for field in ("body", "orelse", "finalbody", "handlers"):
                visit([n for n in getattr(node, field, []) if isinstance(n, ast.stmt)])

    visit(tree.body)
    return found


def test_every_feature_package_is_a_known_feature() -> None:
    assert {p.parent.name for p in FEATURES_DIR.glob("*/__init__.py")} == FEATURE_MODULES


def test_no_feature_imports_another_at_run_time() -> None:
    for name in FEATURE_MODULES:
        others = tuple(f"checkpoint.server.features.{other}" for other in FEATURE_MODULES - {name})
        for path in _feature_files(name):
            imported = _runtime_imports(ast.parse(path.read_text()))
            reached = {m for m in imported if any(m == o or m.startswith(o + ".") for o in others)}
            assert not reached, f"{path.relative_to(SERVER_DIR)} imports {reached}"


def test_no_server_module_reaches_a_feature_through_the_server() -> None:
    for path in SERVER_DIR.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in FEATURE_MODULES:
                owner = node.value
                owner_name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                assert owner_name not in ("server", "ls"), f"{path.name}:{node.lineno} reaches server.{node.attr}"


def test_server_module_builds_no_feature() -> None:
    imported = _runtime_imports(ast.parse((SERVER_DIR / "server.py").read_text()))
    assert not {m for m in imported if m.startswith("checkpoint.server.features")}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[CheckpointServer]:
    server = CheckpointServer({"db": str(tmp_path / "checkpoint.db"), "sources": [str(tmp_path / "projects")]})
    yield server
    assert server.close()


def test_features_are_built_with_what_they_depend_on_and_hooked_in_order(server: CheckpointServer) -> None:
    built = build_features(server)
    assert [type(f) for f in server.features] == [StatusFeature, Watcher, ExtractionFeature, Diagnostics,
                                                     TeamRecords, CheckDiagnostics]
    assert built.extraction.watcher is built.watcher
    assert built.status.extraction is built.extraction


def test_new_turns_resume_paused_background_extraction_through_the_bus(server: CheckpointServer) -> None:
    built = build_features(server)
    built.extraction.paused = "budget reached"
    server.events.publish(events.TurnsAdded(0))
    assert built.extraction.paused == "budget reached"  # chunks only: still waiting for turns
    server.events.publish(events.TurnsAdded(3))
    assert built.extraction.paused is None
