"""No Python or shell module under daemon/ or scripts/ is over 700 lines: a module that grows past it
holds more than one job, and is split before it lands (see docs/architecture.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("daemon", "scripts")
SUFFIXES = (".py", ".sh")
MAX_LINES = 700
NOT_OURS = {"node_modules", "__pycache__", ".venv", "build", "dist"}  # installed or generated, not written here


def modules(root: Path) -> list[Path]:
    """Every Python and shell module under `root`, outside installed and generated folders."""
    return sorted(
        path for path in root.rglob("*")
        if path.suffix in SUFFIXES and path.is_file() and not NOT_OURS & set(path.relative_to(root).parts)
    )


def line_count(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def oversized(repo: Path, top: str) -> dict[str, int]:
    """The modules under `repo/top` over MAX_LINES, by path relative to `repo`, with their line counts."""
    counts = {path.relative_to(repo).as_posix(): line_count(path) for path in modules(repo / top)}
    return {name: lines for name, lines in counts.items() if lines > MAX_LINES}


@pytest.mark.parametrize("top", ROOTS)
def test_no_module_is_over_700_lines(top: str) -> None:
    found = modules(REPO / top)
    assert len(found) >= 5, f"found only {len(found)} modules under {top}/: the walk is looking in the wrong place"
    offenders = oversized(REPO, top)
    assert offenders == {}, f"over {MAX_LINES} lines (split them): " + ", ".join(
        f"{name} ({lines})" for name, lines in sorted(offenders.items()))


def test_an_oversized_module_is_named_with_its_line_count(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "scripts" / "fits.sh").write_text("true\n" * MAX_LINES)
    (tmp_path / "scripts" / "notes.md").write_text("words\n" * (MAX_LINES + 5))
    (tmp_path / "scripts" / "node_modules").mkdir()
    (tmp_path / "scripts" / "node_modules" / "vendored.py").write_text("y = 2\n" * (MAX_LINES + 1))
    assert oversized(tmp_path, "scripts") == {"scripts/big.py": MAX_LINES + 1}
