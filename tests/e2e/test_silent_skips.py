"""Nothing under a transcript root is skipped in silence: a project folder that is a symlink is read
(once, however many links lead to it; a link that points nowhere is said), and lines skipped as too
long are read once the limit is raised, the skip then no longer counted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import cli_env, run
from tests.support.lsp_support import Transcript


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return cli_env(tmp_path / "home", CHECKPOINT_DB=str(tmp_path / "db" / "c.db"),
                   CHECKPOINT_SOURCES=str(tmp_path / "claude"), CHECKPOINT_EXTRACTOR="heuristic", **extra)


def status(tmp_path: Path, **extra: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run(["status", "--json"], env(tmp_path, **extra)).check().out)
    return data


def test_a_symlinked_project_folder_is_read_and_a_dangling_one_is_said(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "claude", tmp_path / "proj")
    t.write(t.user("We'll use marker-linked for the cache layer."))
    kept_elsewhere = tmp_path / "elsewhere" / t.path.parent.name
    kept_elsewhere.parent.mkdir()
    t.path.parent.rename(kept_elsewhere)
    t.path.parent.symlink_to(kept_elsewhere)  # the project folder, a link to where it is kept
    (tmp_path / "claude" / "-second-link").symlink_to(kept_elsewhere)  # the same folder again
    (tmp_path / "claude" / "-nowhere").symlink_to(tmp_path / "gone")
    (tmp_path / "claude" / "-loop").symlink_to(tmp_path / "claude")  # walked already: nothing to add, nothing said
    (tmp_path / "claude" / "-disk").symlink_to("/")  # would crawl the disk: said, not followed
    result = run(["now"], env(tmp_path)).check()
    assert "No transcripts found" not in result.out + result.err
    warnings = [line for line in result.err.splitlines() if "warning" in line]
    assert len(warnings) == 2, result.err
    assert any(str(tmp_path / "claude" / "-nowhere") in w and "not there" in w for w in warnings), warnings
    assert any(str(tmp_path / "claude" / "-disk") in w and "holds the transcript folder" in w for w in warnings)
    data = status(tmp_path)
    assert [(s["turns"], s["captured"]) for s in data["sessions"]] == [(1, 1)], data["sessions"]
    items = json.loads(run(["items", "--json"], env(tmp_path)).check().out)["items"]
    assert [i["statement"] for i in items] == ["We'll use marker-linked for the cache layer."], items


def test_lines_skipped_as_too_long_are_read_once_the_limit_is_raised(tmp_path: Path) -> None:
    t = Transcript(tmp_path / "claude", tmp_path / "proj")
    t.write(t.user("We'll use marker-short for the queue."))
    t.write(t.user("We'll use marker-long for the cache layer. " + "The cache keeps every page warm. " * 200))
    t.write(t.user("We'll use marker-after for the logs."))
    small = {"CHECKPOINT_MAX_LINE_BYTES": "2048"}
    run(["now"], env(tmp_path, **small)).check()
    before = status(tmp_path, **small)
    assert before["sessions"][0]["turns"] == 2
    assert before["sessions"][0]["dropped"]["oversized_line"]["records"] == 1, before["sessions"][0]["dropped"]
    assert any("exceeds 2048" in p["message"] for p in before["problems"]), before["problems"]
    run(["now"], env(tmp_path)).check()  # the default limit, 16 MiB: the long line is read now
    after = status(tmp_path)
    assert (after["sessions"][0]["turns"], after["sessions"][0]["captured"]) == (3, 3), after["sessions"]
    assert not any("exceeds" in p["message"] for p in after["problems"]), after["problems"]
    assert "oversized_line" not in after["sessions"][0]["dropped"], after["sessions"][0]["dropped"]
    items = json.loads(run(["items", "--json"], env(tmp_path)).check().out)["items"]
    assert sorted(i["statement"].split()[2] for i in items) == ["marker-after", "marker-long", "marker-short"]
