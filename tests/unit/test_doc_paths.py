"""The docs and the docstrings name only paths that exist. README.md, docs/*.md and every docstring
under daemon/, tests/ and scripts/ are read for repository paths: `daemon/...`, `tests/...`,
`scripts/...`, `docs/...`, `vscode-extension/...`, module paths inside the package (`store/scope.py`,
`checkpoint/config.py`, a folder such as `server/features/`), and, in the docs, a module named alone
(`pipeline.py`). A path renamed or removed without its mentions fails here, with where it is named."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

from tests.support.paths import REPO_ROOT

PACKAGE = REPO_ROOT / "daemon" / "checkpoint"
ROOTS = ("daemon/", "tests/", "scripts/", "docs/", "vscode-extension/", "claude-plugin/")
# Paths that are not the repository's: in a user's repository, or built.
ELSEWHERE = ("docs/decisions", "vscode-extension/dist/")
# Module names said alone in the docs that are not this repository's, each with why.
NOT_OURS = {"a.py": "an example file an agent edits", "store.py": "a file of a user's repository, in an example",
            "setup.py": "esbonio's, the model of server/app.py"}
_PATH = re.compile(r"(?<![\w./-])((?:[\w.-]+/)+[\w.-]*)")
_ALONE = re.compile(r"(?<![\w/.-])([\w-]+\.(?:py|ts))\b")


def subpackages(package: Path = PACKAGE) -> tuple[str, ...]:
    return (*sorted(p.name + "/" for p in package.iterdir() if (p / "__init__.py").is_file()), "checkpoint/")


def named_paths(text: str, subpackages: tuple[str, ...]) -> Iterator[str]:
    """The repository paths `text` names: placeholders (`test_<module>.py`, `*.py`) and a package's
    subfolder said without a file or a trailing slash (`server/tool`, `checkpoint/status`: names of
    other things) are not paths."""
    for match in _PATH.finditer(text):
        if match.end() < len(text) and text[match.end()] in "<{*[…":
            continue
        path = match.group(1).rstrip(".,;:)")
        repository = path.startswith(ROOTS) and not path.startswith(ELSEWHERE)
        module = path.startswith(subpackages) and (".py" in path or path.endswith("/"))
        if repository or module:
            yield path


def exists(path: str, repo: Path = REPO_ROOT) -> bool:
    if path.startswith(ROOTS):
        where = repo / path
    elif path.startswith("checkpoint/"):
        where = repo / "daemon" / path
    else:
        where = repo / "daemon" / "checkpoint" / path
    if where.exists():
        return True
    # `agent/answers.clean`, `tests/support/edit_fixtures.PROJECT`: a name in a module
    module, dot, _ = where.name.partition(".")
    return bool(dot) and not where.name.endswith(".py") and (where.parent / f"{module}.py").is_file()


def docstrings(path: Path) -> Iterator[tuple[int, str]]:
    for node in ast.walk(ast.parse(path.read_bytes(), filename=str(path))):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text and node.body:
                yield node.body[0].lineno, text


def docs(repo: Path = REPO_ROOT) -> list[Path]:
    return [repo / "README.md", *sorted((repo / "docs").glob("*.md"))]


def missing_paths(repo: Path = REPO_ROOT) -> list[str]:
    package = repo / "daemon" / "checkpoint"
    subs = subpackages(package)
    ours = {p.name for top in ("daemon", "tests", "scripts", "vscode-extension/src", "vscode-extension/test")
            if (repo / top).is_dir() for p in (repo / top).rglob("*") if p.suffix in (".py", ".ts")
            and "node_modules" not in p.parts}
    found = []
    for doc in docs(repo):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), start=1):
            found += [f"{doc.relative_to(repo)}:{number}: {p}" for p in named_paths(line, subs) if not exists(p, repo)]
            found += [f"{doc.relative_to(repo)}:{number}: {m.group(1)}" for m in _ALONE.finditer(line)
                      if m.group(1) not in ours and m.group(1) not in NOT_OURS]
    for top in ("daemon", "tests", "scripts"):
        for path in sorted((repo / top).rglob("*.py")):
            if "data" in path.relative_to(repo / top).parts:
                continue
            for number, text in docstrings(path):
                found += [f"{path.relative_to(repo)}:{number}: {p}" for p in named_paths(text, subs)
                          if not exists(p, repo)]
    return found


def test_every_path_the_docs_and_docstrings_name_exists() -> None:
    missing = missing_paths()
    assert not missing, "paths named but not in the repository (renamed? removed?):\n" + "\n".join(missing)


def test_the_check_finds_a_stale_path_and_passes_the_rest(tmp_path: Path) -> None:
    package = tmp_path / "daemon" / "checkpoint"
    (package / "store").mkdir(parents=True)
    for name in ("__init__.py", "store/__init__.py", "store/scope.py", "config.py"):
        (package / name).write_text('"""A module."""\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text(
        "See store/scope.py and checkpoint/config.py, `config.py`, daemon/checkpoint/store/ and\n"
        "docs/decisions/x.md (a user's); the LSP method checkpoint/status; tests/<tier>/test_<module>.py.\n"
        "Gone: store/schema.py, `cli.py`.\n")
    (package / "store" / "scope.py").write_text(
        '"""Scoping (tests/unit/store/test_scope.py).\n\nUses store/scope.Scope and daemon/checkpoint/cli/."""\n')
    assert missing_paths(tmp_path) == [
        "README.md:3: store/schema.py", "README.md:3: cli.py",
        "daemon/checkpoint/store/scope.py:1: tests/unit/store/test_scope.py",
        "daemon/checkpoint/store/scope.py:1: daemon/checkpoint/cli/",
    ]
