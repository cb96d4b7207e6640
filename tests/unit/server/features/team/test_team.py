"""server/features/team/__init__.py's watch covers a repository's top and the folders on the way to its record folder
that exist, never the rest of the repository's tree."""

from __future__ import annotations

from pathlib import Path

from checkpoint.server.features.team import on_the_way


def test_the_folders_on_the_way_to_the_records_are_those_that_exist(tmp_path: Path) -> None:
    target = tmp_path / "docs" / "decisions"
    (tmp_path / "src" / "deep").mkdir(parents=True)
    assert on_the_way(tmp_path, target) == [tmp_path]
    (tmp_path / "docs").mkdir()
    assert on_the_way(tmp_path, target) == [tmp_path, tmp_path / "docs"]
    target.mkdir()
    assert on_the_way(tmp_path, target) == [tmp_path, tmp_path / "docs", target]
