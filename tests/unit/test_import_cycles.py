"""No two modules of daemon/checkpoint import each other, directly or around a circle, at module level.
An import under `if TYPE_CHECKING:` (a type needed only for checking) and one inside a function (loaded
on use, which is how the lazy extractors and the entry's routes load) do not count: neither runs when
the module is imported. A submodule's import of its own package's `__init__` is implied by Python and
not counted either; `from package import name` counts as importing the package, unless `name` is a
submodule (then it is that submodule). Imports inside functions may not close a circle either, but for
the ones listed in ON_USE_CIRCLES with why they stay."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import checkpoint

PACKAGE_DIR = Path(checkpoint.__file__).resolve().parent


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _module_level(body: list[ast.stmt], on_use: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported: not in a function, not under
    TYPE_CHECKING (its `else:` does run). With `on_use`, those inside functions too."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level(node.body, on_use)
            yield from _module_level(node.orelse, on_use)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level(block, on_use)
        elif isinstance(node, ast.With | ast.ClassDef | ast.For | ast.While | ast.FunctionDef | ast.AsyncFunctionDef):
            function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)  # its body runs on use
            yield from _module_level(node.body if on_use or not function else [], on_use)


def import_graph(root: Path, on_use: bool = False) -> dict[str, set[str]]:
    """Each module of the package under `root`, and the modules of the package it imports at module
    level (with `on_use`, inside its functions too)."""
    paths = {module_name(p, root): p for p in root.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for me, path in paths.items():
        is_package = path.name == "__init__.py"
        found: set[str] = set()
        for node in _module_level(ast.parse(path.read_bytes(), filename=str(path)).body, on_use):
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
                continue
            if node.level:
                parts = me.split(".")
                drop = node.level - 1 if is_package else node.level
                base = ".".join(parts[: len(parts) - drop] if drop else parts)
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            submodules = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in paths]
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(module)
        graph[me] = {m for m in found if m in paths and m != me}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_modules_import_each_other_at_module_level() -> None:
    graph = import_graph(PACKAGE_DIR)
    assert len(graph) > 50  # the walk found the package
    found = cycles(graph)
    assert found == [], "modules importing each other at module level:\n" + "\n".join(
        " <-> ".join(group) + ": " + "; ".join(f"{m} imports {sorted(graph[m] & set(group))}" for m in group)
        for group in found)


# Circles closed only by an import inside a function (it runs on first use, when both modules are
# loaded): each with why it stays. A new one fails the test below.
ON_USE_CIRCLES = {
    ("checkpoint.redact", "checkpoint.redact.outside"):
        "the facade re-exports hide_secrets, which builds the facade's cached redactor when first called",
}


def test_no_new_circle_through_an_import_on_use() -> None:
    found = {tuple(group) for group in cycles(import_graph(PACKAGE_DIR, on_use=True))}
    assert found == set(ON_USE_CIRCLES), found


def test_the_check_sees_a_circle_and_ignores_what_does_not_run_on_import(tmp_path: Path) -> None:
    root = tmp_path / "checkpoint"
    (root / "store").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "config.py": "from checkpoint.extract import registry\n",
        "extract/__init__.py": "",
        "extract/registry.py": "from checkpoint import config\n",  # a circle of two
        "store/__init__.py": "from checkpoint.store.items import Items\n",
        "store/items.py": "from checkpoint.store.connection import Base\n",  # its package: implied, not counted
        "store/connection.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n    from checkpoint.store import Store\n"  # for checking only
            "def f() -> None:\n    from checkpoint import model\n"),  # on use only
        "model.py": "from checkpoint.store import connection\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    graph = import_graph(root)
    assert graph["checkpoint.store.connection"] == set()
    assert graph["checkpoint.model"] == {"checkpoint.store.connection"}
    assert cycles(graph) == [["checkpoint.config", "checkpoint.extract.registry"]]
    on_use = import_graph(root, on_use=True)
    assert on_use["checkpoint.store.connection"] == {"checkpoint.model"}  # TYPE_CHECKING still not counted
    assert cycles(on_use) == [["checkpoint.config", "checkpoint.extract.registry"],
                              ["checkpoint.model", "checkpoint.store.connection"]]
