"""The sources package: every public sample read the same twice, and the registry routing each file
to its reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from checkpoint.model import ReadProblem
from checkpoint.sources import READERS, locate, transcript_paths
from checkpoint.sources.base import FileRole
from tests.support.claude_code_lines import CLAUDE, S
from tests.support.codex_lines import CODEX, CODEX_ID, codex_line
from tests.support.reader_lines import parse_all, sample_lines, turns
from tests.support.samples import CLAUDE_SAMPLES, CODEX_SAMPLES


@pytest.mark.parametrize("path", CLAUDE_SAMPLES + CODEX_SAMPLES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_samples_read_the_same_twice(path: Path) -> None:
    reader = CLAUDE if path.parent.name == "claude" else CODEX
    lines = sample_lines(path)
    first, second = parse_all(reader, lines), parse_all(reader, lines)
    assert first == second
    assert turns(first)


# -- the registry ---------------------------------------------------------------------------------


def test_registry_routes_each_file_to_its_reader(roots: tuple[Path, Path]) -> None:
    claude_root, codex_root = roots
    rollout = codex_root / "2026" / "01" / "05" / f"rollout-2026-01-05T10-00-00-{CODEX_ID}.jsonl"
    session_file = claude_root / "-home-me-w" / f"{S}.jsonl"
    for p in (rollout, session_file, codex_root / "history.jsonl.txt"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    warnings: list[ReadProblem] = []
    listed = sorted(transcript_paths([claude_root, codex_root], warnings))
    assert listed == [(claude_root, str(session_file)), (codex_root, str(rollout))]
    # A rollout is claimed once its first line (session_meta: whose sub-agent it may be) is written.
    assert locate(rollout) is None
    rollout.write_text(codex_line("session_meta", {"id": CODEX_ID, "cwd": "/w"}) + "\n")
    assert [locate(Path(path)) for _, path in listed] == [FileRole("claude", S), FileRole("codex", CODEX_ID)]
    assert warnings == []
    assert set(READERS) == {"claude", "codex", "gemini", "copilot", "opencode"}
    assert locate(rollout, [CLAUDE]) is None and locate(session_file, [CODEX]) is None
