"""The layers of daemon/checkpoint import downwards only.

- Below the front ends (everything but `checkpoint.cli`, `checkpoint.server`, `checkpoint.agent` and
  the entry, `checkpoint.__main__` and `checkpoint.startup`: the pipeline and the run layer, the
  store, the sources, the extractors, config, model...) nothing imports a front end: a new front end
  (an MCP server, hooks) must be able to reuse them whole.
- The daemon never imports the CLI: what they share is the run layer (`checkpoint.runner`).
- The agent front ends (MCP server, hooks) import neither the CLI nor the daemon, and only the MCP
  server imports the MCP SDK; the CLI loads them only for `checkpoint mcp` / `checkpoint hook`, so
  `checkpoint scan` and `status` never load the SDK (checked by running them).
- `checkpoint.model` imports nothing else of the package, nor do the leaves that break a circle
  (`checkpoint.extract.names`, `checkpoint.long_lived`); only `checkpoint.__main__` imports the entry.
- In the daemon, the request handlers (`checkpoint.server.requests`) import no feature and only
  `checkpoint.server.app` imports them.
- The store never imports the sources: records both use live in `checkpoint.model`.
- Config never imports the sources: defaults live in `checkpoint.config`.

Rules match by dotted prefix, so they hold for a module that becomes a package (`checkpoint.store.*`)
and for modules not written yet. Every import counts: at the top, inside functions, under
TYPE_CHECKING, relative or absolute, `import a.b` and `from a import b` (b a submodule).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import checkpoint

PACKAGE_DIR = Path(checkpoint.__file__).resolve().parent

FRONT_ENDS = ("checkpoint.cli", "checkpoint.server", "checkpoint.agent", "checkpoint.__main__",
              "checkpoint.startup")


@dataclass(frozen=True)
class Rule:
    importers: tuple[str, ...]  # dotted prefixes of the modules the rule binds
    forbidden: tuple[str, ...]  # dotted prefixes they must not import
    why: str
    exempt: tuple[str, ...] = ()  # importers' prefixes the rule does not bind

    def binds(self, module: str) -> bool:
        return within(module, self.importers) and not within(module, self.exempt)


RULES = (
    Rule(importers=("checkpoint",), exempt=FRONT_ENDS,
         forbidden=("checkpoint.cli", "checkpoint.server", "checkpoint.agent"),
         why="only front ends import front ends"),
    Rule(importers=("checkpoint.server",), forbidden=("checkpoint.cli", "checkpoint.agent"),
         why="the daemon shares the run layer with the CLI, not the CLI itself"),
    Rule(importers=("checkpoint.agent",), forbidden=("checkpoint.cli", "checkpoint.server"),
         why="the agent front ends share the run layer and the store with the CLI and the daemon, not them"),
    Rule(importers=("checkpoint",), exempt=("checkpoint.agent.mcp_server",), forbidden=("mcp",),
         why="only the MCP server loads the MCP SDK"),
    Rule(importers=("checkpoint.model",), forbidden=("checkpoint",),
         why="the shared records import no other module of the package: every layer can import them"),
    Rule(importers=("checkpoint.store",), forbidden=("checkpoint.sources",),
         why="the store never imports the sources (shared records are in checkpoint.model)"),
    Rule(importers=("checkpoint.config",), forbidden=("checkpoint.sources",),
         why="config never imports the sources (defaults are in checkpoint.config)"),
    Rule(importers=("checkpoint",), exempt=("checkpoint.__main__",), forbidden=("checkpoint.startup",),
         why="only `python -m checkpoint` runs the entry: the CLI does not import it back"),
    Rule(importers=("checkpoint.server.requests",), forbidden=("checkpoint.server.features", "checkpoint.server.app"),
         why="a request handler holds no state: what it needs comes from the store or as a parameter"),
    Rule(importers=("checkpoint.server",), exempt=("checkpoint.server.app", "checkpoint.server.requests"),
         forbidden=("checkpoint.server.requests",),
         why="only app.py registers the request handlers: no feature or core module calls one"),
    Rule(importers=("checkpoint.extract.names", "checkpoint.long_lived"), forbidden=("checkpoint",),
         why="a leaf that breaks a circle imports nothing of the package"),
)


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    path: Path
    line: int


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    """Every module `path` imports, wherever in the file the import statement is."""
    importer = module_name(path, root)
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(importer, alias.name, path, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = importer.split(".")
                drop = node.level - 1 if is_package else node.level
                base = ".".join(package[: len(package) - drop] if drop else package)
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            yield Import(importer, module, path, node.lineno)
            for alias in node.names:  # `from checkpoint import cli` imports the module checkpoint.cli
                candidate = f"{module}.{alias.name}"
                if is_module(candidate, root):
                    yield Import(importer, candidate, path, node.lineno)


def is_module(dotted: str, root: Path) -> bool:
    path = root.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def violations(root: Path) -> list[tuple[Import, Rule]]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for imp in imports_of(path, root):
            for rule in RULES:
                if rule.binds(imp.importer) and within(imp.imported, rule.forbidden):
                    found.append((imp, rule))
    return found


def said(imp: Import, rule: Rule) -> str:
    return f"{imp.path}:{imp.line}: {imp.importer} imports {imp.imported}: {rule.why}"


def test_no_layer_imports_one_above_it() -> None:
    broken = [said(imp, rule) for imp, rule in violations(PACKAGE_DIR)]
    assert not broken, "imports against the layering:\n" + "\n".join(broken)


def test_the_rules_see_every_kind_of_import(tmp_path: Path) -> None:
    """The checker itself, on a made-up package: each way of importing a front end is caught, with its line."""
    root = tmp_path / "checkpoint"
    for module in ("cli", "server/__init__", "server/app", "sources/__init__", "sources/tailer", "store/__init__",
                   "store/ingest", "config", "pipeline", "run", "__init__"):
        (root / module).with_suffix(".py").parent.mkdir(parents=True, exist_ok=True)
        (root / module).with_suffix(".py").touch()
    (root / "pipeline.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from checkpoint.server.app import App\n"
        "def run() -> None:\n"
        "    from checkpoint import cli\n"
        "    import checkpoint.server\n"
    )
    (root / "run.py").write_text("from .server import app\n")
    (root / "store" / "ingest.py").write_text("from ..sources.tailer import FileCursor\nfrom .. import model\n")
    (root / "config.py").write_text("from checkpoint import sources\n")
    (root / "server" / "app.py").write_text("from checkpoint import cli\nfrom ..store import ingest\n")
    (root / "cli.py").write_text("from checkpoint.server import app\n")

    found = sorted((imp.importer, imp.imported, imp.line) for imp, _ in violations(root))

    assert found == [
        ("checkpoint.config", "checkpoint.sources", 1),
        ("checkpoint.pipeline", "checkpoint.cli", 6),
        ("checkpoint.pipeline", "checkpoint.server", 7),
        ("checkpoint.pipeline", "checkpoint.server.app", 4),
        ("checkpoint.run", "checkpoint.server", 1),
        ("checkpoint.run", "checkpoint.server.app", 1),
        ("checkpoint.server.app", "checkpoint.cli", 1),
        ("checkpoint.store.ingest", "checkpoint.sources.tailer", 1),
    ]
    imp, rule = next((i, r) for i, r in violations(root) if i.importer == "checkpoint.store.ingest")
    assert said(imp, rule).startswith(f"{root / 'store' / 'ingest.py'}:1: ")


def loaded_by(code: str, env: dict[str, str]) -> set[str]:
    """The top-level packages a fresh interpreter has loaded after running `code`."""
    import json
    import subprocess
    import sys

    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60,
                         check=True, input="")
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_scan_status_and_hooks_start_without_the_heavy_packages(tmp_path: Path) -> None:
    import os

    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CHECKPOINT_DB": str(tmp_path / "c.db"),
           "CHECKPOINT_SOURCES": str(tmp_path / "none"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    # Through the entry, as the console script runs them: it alone routes the hooks.
    quiet = "import contextlib, io\nfrom checkpoint import startup\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    for command in (["scan"], ["status"], ["hook", "session-start"], ["hook", "stop"]):
        loaded = loaded_by(quiet + f"    startup.main({command!r})", env)
        assert "checkpoint" in loaded
        assert not loaded & {"mcp", "pydantic", "anthropic", "pygls"}, (command, loaded & {"mcp", "pydantic"})


# How agents write their tool calls and reasoning into turn text: only sources/ holds it as code.
AGENT_FORMATS = ("[tool ", "MultiEdit", "apply_patch", "(thinking)", "(reasoning)")


def format_literals(root: Path) -> list[str]:
    """String literals (not docstrings, not comments) outside `sources/` that hold an agent's format."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if within(module_name(path, root), ("checkpoint.sources",)):
            continue
        tree = ast.parse(path.read_bytes(), filename=str(path))
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                      and node.body and isinstance(node.body[0], ast.Expr)
                      and isinstance(node.body[0].value, ast.Constant)}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                    and any(mark in node.value for mark in AGENT_FORMATS)):
                found.append(f"{path}:{node.lineno}: {node.value[:60]!r}")
    return found


def test_only_the_sources_hold_an_agents_tool_call_format() -> None:
    found = format_literals(PACKAGE_DIR)
    assert not found, "an agent's turn-text format outside checkpoint.sources:\n" + "\n".join(found)


def test_the_format_check_sees_literals_not_prose(tmp_path: Path) -> None:
    root = tmp_path / "checkpoint"
    (root / "sources").mkdir(parents=True)
    (root / "sources" / "reader.py").write_text('TOOL = "[tool "\n')
    (root / "server.py").write_text(
        '"""Parses `[tool Edit]` lines."""\n'
        "# (thinking) in a comment\n"
        "def f() -> str:\n"
        '    """MultiEdit, apply_patch."""\n'
        '    return f"[tool {1}]" + "(reasoning) "\n'
    )
    assert [line.split(": ", 1)[0] for line in format_literals(root)] == [f"{root / 'server.py'}:5"] * 2


def test_now_choosing_offline_automatically_does_not_load_the_sdk(tmp_path: Path) -> None:
    """No API key, no claude CLI: the automatic choice ends offline without importing the Anthropic SDK
    (about 1.5 s and 50 MB for nothing), whether `claude` is missing or there but not logged in."""
    import os

    fake_claude = tmp_path / "bin" / "claude"
    fake_claude.parent.mkdir()
    fake_claude.write_text("#!/bin/sh\n[ \"$1\" = --version ] && echo '2.1.328 (Claude Code)' && exit 0\n"
                           "echo '{\"loggedIn\": false}'\n")
    fake_claude.chmod(0o755)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CHECKPOINT_DB": str(tmp_path / "c.db"),
           "CHECKPOINT_SOURCES": str(tmp_path / "none"), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    quiet = "import contextlib, io\nfrom checkpoint import cli\nwith contextlib.redirect_stdout(io.StringIO()):\n"
    for claude in ("checkpoint-test-no-such-claude", str(fake_claude)):
        loaded = loaded_by(quiet + "    cli.main(['now'])", {**env, "CHECKPOINT_CLAUDE_COMMAND": claude})
        assert "checkpoint" in loaded
        assert "anthropic" not in loaded, claude
