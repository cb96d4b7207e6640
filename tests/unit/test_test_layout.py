"""The tests mirror the code. Inside a tier (tests/unit, tests/server, tests/e2e, tests/properties), a
test module under a folder tests exactly the code module its path names: tests/unit/sources/test_codex.py
tests daemon/checkpoint/sources/codex.py, and test_<package>.py in that package's folder tests the
package as a whole (tests/unit/store/test_store.py). Modules directly in a tier folder may span many
modules and keep a descriptive name. No test module imports another: what tests share lives in
tests/support/ (and tests/data/)."""

from __future__ import annotations

import ast
from pathlib import Path

import checkpoint
from tests.support.paths import REPO_ROOT

TESTS_DIR = REPO_ROOT / "tests"
# The tiers: the packages under tests/ but the shared ones (tests/conftest.py refuses a test outside them).
TIERS = sorted(p.name for p in TESTS_DIR.iterdir() if (p / "__init__.py").is_file() and p.name != "support")
PACKAGE_DIR = Path(checkpoint.__file__).resolve().parent
# What a test module may import from the tests package.
SHARED = ("tests.support", "tests.data")
# Test modules in a mirrored folder that span several modules of that package, each with why.
CROSS_CUTTING = {
    "unit/sources/test_reader_contract.py": "one contract, parametrised over every registered reader",
    "unit/sources/test_checkpoint_context.py": "Checkpoint's own context read back by three readers",
    "unit/sources/test_skim.py": "the skim of two readers (and base) against their full parse",
    "unit/sources/test_real_cli.py": "Claude Code and Codex read from one real-CLI corpus in one scan",
    "unit/redact/test_fast_paths.py": "the engine's and the gate's fast paths against the plain ones",
    "e2e/extract/test_llama_cpp.py": "the openai extractor against a real llama.cpp server (xllamacpp)",
    "unit/sources/test_expiring_agents.py": "which agents' sessions are at risk: registry, store and runner",
}


def _python_files() -> list[Path]:
    return sorted(p for p in TESTS_DIR.rglob("*.py") if "data" not in p.relative_to(TESTS_DIR).parts)


def _module_name(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_of(path: Path) -> str:
    module = _module_name(path)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _imports(source: str, package: str) -> list[str]:
    """Every module `source` imports, relative imports resolved against `package` (the importer's)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]) if node.level else ""
            module = ".".join(part for part in (base, node.module) if part)
            # `from tests import support` imports the module it names: check that, not the package.
            found += [f"{module}.{alias.name}" for alias in node.names] if module == "tests" else [module]
    return found


def _mirrors_code(relative: Path) -> bool:
    """tests/<tier>/<folders>/test_<name>.py against daemon/checkpoint/<folders>/<name>.py, the package
    <folders>/<name>/, or the folder's own package when <name> is the folder's name."""
    folders, name = relative.parts[1:-1], relative.stem.removeprefix("test_")
    package = PACKAGE_DIR.joinpath(*folders)
    if not (package / "__init__.py").is_file():
        return False
    return (package / f"{name}.py").is_file() or (package / name / "__init__.py").is_file() or name == folders[-1]


def test_no_test_module_imports_another_test_module() -> None:
    offending = {
        str(path.relative_to(TESTS_DIR)): module
        for path in _python_files()
        for module in _imports(path.read_text(), _package_of(path))
        if (module == "tests" or module.startswith("tests."))
        and not any(module == shared or module.startswith(shared + ".") for shared in SHARED)
    }
    assert offending == {}


def test_every_test_module_in_a_mirrored_folder_names_an_existing_code_module() -> None:
    unmatched = [
        str(relative)
        for path in sorted(TESTS_DIR.glob("*/*/**/test_*.py"))
        if (relative := path.relative_to(TESTS_DIR)).parts[0] in TIERS
        and str(relative) not in CROSS_CUTTING
        and not _mirrors_code(relative)
    ]
    assert unmatched == []


def test_every_mirrored_folder_is_a_package() -> None:
    """So that tests/unit/sources/test_codex.py and tests/unit/extract/test_codex.py are two modules."""
    folders = {p.parent for tier in TIERS for p in (TESTS_DIR / tier).rglob("test_*.py")}
    assert sorted(str(f.relative_to(TESTS_DIR)) for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_cross_cutting_allow_list_names_only_files_that_exist() -> None:
    # test_reader_contract.py comes with the reader contract; until then it is the one name it may miss.
    missing = sorted(name for name in CROSS_CUTTING if not (TESTS_DIR / name).is_file())
    assert missing == []


def test_the_rules_catch_what_they_name() -> None:
    """The checks above on what breaks them (an import of another test module, absolute or relative; a
    mirrored test of no code module) and on the forms that pass."""
    assert _mirrors_code(Path("unit/sources/test_codex.py"))
    assert _mirrors_code(Path("unit/store/test_store.py"))  # the package as a whole
    assert not _mirrors_code(Path("unit/sources/test_readers_today.py"))
    assert not _mirrors_code(Path("unit/nowhere/test_codex.py"))
    source = ("from tests.unit.test_samples import x\nfrom . import test_codex\nfrom ..support import y\n"
              "from tests.support import synth\nimport tests.e2e.test_cli\nfrom tests import unit\n")
    assert _imports(source, "tests.unit.sources") == [
        "tests.unit.test_samples", "tests.unit.sources", "tests.unit.support", "tests.support",
        "tests.e2e.test_cli", "tests.unit"]
