"""The one scoping rule (store/scope.py): which sessions, and so which items, belong to workspace
folders. Every surface asks it: the daemon's status, sessions, items and search, the agent hooks and
MCP tools, the CLI's search."""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from checkpoint.answer import Extraction, ItemDraft
from checkpoint.model import FileCursor, ItemKind, Role, ScannedTurn, SessionInfo, TurnDraft
from checkpoint.store import Store


def _session(store: Store, session_id: str, cwd: str, *later: str) -> None:
    """A session first run in `cwd` that later worked in `later` folders, with one item."""
    turns = [ScannedTurn(TurnDraft(id=f"{session_id}-t", role=Role.USER, text=f"we use {session_id}"), 1, 10, 5)]
    store.ingest(FileCursor(f"/t/{session_id}.jsonl"), "claude", session_id, False, {}, turns,
                 SessionInfo(id=session_id, agent="claude", cwd=cwd, cwds=tuple(later)), Counter(), Counter(), [],
                 chunk_tokens=100_000)
    [chunk] = store.claim_chunks(1, "me", session_id=session_id)
    store.commit_extraction(Extraction(chunk_id=chunk.chunk_id, extractor="test", items=[
        ItemDraft(kind=ItemKind.DECISION, statement=f"decided {session_id}", turn_ids=[f"{session_id}-t"])]), "me")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """/ws (a checkout) with ws/sub, /link -> /ws, and /wsx (a sibling whose name starts alike)."""
    (tmp_path / "ws" / "sub").mkdir(parents=True)
    (tmp_path / "wsx").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "ws")
    return tmp_path


@pytest.fixture
def store(tmp_path: Path, tree: Path) -> Iterator[Store]:
    s = Store(tmp_path / "db")
    _session(s, "root", str(tree / "ws"))
    _session(s, "below", str(tree / "ws" / "sub"))
    _session(s, "sibling", str(tree / "wsx"))
    _session(s, "via-link", str(tree / "link" / "sub"))
    _session(s, "moved-in", str(tree / "elsewhere"), str(tree / "ws" / "sub" / "deeper"))
    _session(s, "moved-out", str(tree / "ws"), str(tree / "wsx"))
    _session(s, "odd_name", "/w/a_b")
    _session(s, "no-cwd", "")
    try:
        yield s
    finally:
        s.close()


def _items_of(store: Store, folders: list[str]) -> set[str]:
    return {i.session_id for i in store.items(workspaces=folders)}


def test_a_session_belongs_to_the_folder_it_worked_in_or_below_by_any_of_its_cwds(store: Store, tree: Path) -> None:
    ws = str(tree / "ws")
    inside = {"root", "below", "via-link", "moved-in", "moved-out"}
    assert set(store.folder_sessions([ws])) == inside
    # The same answer for the items, the agent reads and the search.
    assert _items_of(store, [ws]) == inside
    assert {i.session_id for i in store.workspace_items([ws]).items} == inside
    assert {s.id for s in store.workspace_sessions([ws])} == inside
    assert {item.session_id for item, _ in store.search("decided", workspaces=[ws]).hits} == inside


def test_a_folder_holds_whole_path_components_and_a_path_means_itself(store: Store, tree: Path) -> None:
    """`ws` does not hold `wsx`; `_` and `%` are no wildcards; a trailing separator changes nothing."""
    assert set(store.folder_sessions([str(tree / "wsx")])) == {"sibling", "moved-out"}
    assert set(store.folder_sessions([str(tree / "ws") + "/"])) == set(store.folder_sessions([str(tree / "ws")]))
    assert set(store.folder_sessions(["/w/a_b"])) == {"odd_name"}
    assert store.folder_sessions(["/w/axb", "/w/a%"]) == {}
    assert store.folder_sessions([]) == {} and _items_of(store, []) == set()


def test_symlinks_are_resolved_on_the_folders_side_and_the_sessions(store: Store, tree: Path) -> None:
    """A folder opened through a symlink holds the sessions recorded by the real path, and a session
    recorded through the symlink belongs to the real folder (`via-link` ran in link/sub)."""
    assert set(store.folder_sessions([str(tree / "link")])) == set(store.folder_sessions([str(tree / "ws")]))
    assert set(store.folder_sessions([str(tree / "ws" / "sub")])) == {"below", "via-link", "moved-in"}


def test_each_session_is_shown_under_the_deepest_folder_of_its_first_cwd_else_of_a_later_one(
    store: Store, tree: Path
) -> None:
    ws, sub, wsx = str(tree / "ws"), str(tree / "ws" / "sub"), str(tree / "wsx")
    assert store.folder_sessions([ws, sub, wsx]) == {
        "root": ws, "below": sub, "via-link": sub, "moved-in": sub, "moved-out": ws, "sibling": wsx}


def test_no_folder_given_is_every_session(store: Store) -> None:
    """Scope "all" asks no folder: every item, those of sessions with no cwd too."""
    assert {i.session_id for i in store.items()} == {
        "root", "below", "sibling", "via-link", "moved-in", "moved-out", "odd_name", "no-cwd"}


def test_two_worktrees_of_one_repository_share_their_items_and_a_restatement_merges(tmp_path: Path) -> None:
    """A workspace is a repository: the clone, a worktree of it and a subfolder of either hold each
    other's sessions; a folder outside stays apart."""
    clone, worktree = tmp_path / "app", tmp_path / "app-topic"
    clone.mkdir()
    for args in (["init", "-q", "-b", "main"], ["-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q",
                                                  "--allow-empty", "-m", "one"],
                 ["worktree", "add", "-q", "-b", "topic", str(worktree)]):
        subprocess.run(["git", *args], cwd=clone, check=True, capture_output=True)
    (worktree / "lib").mkdir()
    (tmp_path / "elsewhere").mkdir()
    store = Store(tmp_path / "db")
    _session(store, "in-clone", str(clone))
    _session(store, "in-worktree", str(worktree / "lib"))
    _session(store, "apart", str(tmp_path / "elsewhere"))
    for folder in (clone, worktree, worktree / "lib"):
        assert set(store.folder_sessions([str(folder)])) == {"in-clone", "in-worktree"}
        assert _items_of(store, [str(folder)]) == {"in-clone", "in-worktree"}
    assert set(store.folder_sessions([str(tmp_path / "elsewhere")])) == {"apart"}
    # the same words said in the other worktree are the same item, citing both sessions
    turns = [ScannedTurn(TurnDraft(id="again-t", role=Role.USER, text="again"), 1, 10, 5)]
    store.ingest(FileCursor("/t/again.jsonl"), "claude", "again", False, {}, turns,
                 SessionInfo(id="again", agent="claude", cwd=str(worktree)), Counter(), Counter(), [],
                 chunk_tokens=100_000)
    [chunk] = store.claim_chunks(1, "me", session_id="again")
    assert store.commit_extraction(Extraction(chunk_id=chunk.chunk_id, extractor="test", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="decided in-clone", turn_ids=["again-t"])]), "me") == 0
    [merged] = [i for i in store.items() if i.statement == "decided in-clone"]
    assert merged.turn_ids == ("in-clone-t", "again-t")
