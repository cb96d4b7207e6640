"""Which repository a folder is in, read from `.git` on disk: a clone, its worktrees (a `.git` file
naming a git directory whose `commondir` names the clone's, and git's metadata there names it back), a
subfolder, and no repository at all; a `.git` file naming a git directory that does not list the folder
as its worktree is a repository of its own (issue 37)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from checkpoint.repository import Repository, repository_of, workspace_key


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _clone_with_worktree(tmp_path: Path) -> tuple[Path, Path]:
    clone = tmp_path / "app"
    clone.mkdir()
    _git("init", "-q", "-b", "main", cwd=clone)
    _git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "one", cwd=clone)
    _git("worktree", "add", "-q", "-b", "topic", str(tmp_path / "app-topic"), cwd=clone)
    return clone, tmp_path / "app-topic"


def test_a_clone_its_worktree_and_their_subfolders_are_one_repository(tmp_path: Path) -> None:
    clone, worktree = _clone_with_worktree(tmp_path)
    (clone / "src" / "deep").mkdir(parents=True)
    common = str((clone / ".git").resolve())
    assert repository_of(str(clone)) == Repository(root=str(clone.resolve()), common_dir=common)
    assert repository_of(str(worktree)) == Repository(root=str(worktree.resolve()), common_dir=common)
    assert repository_of(str(clone / "src" / "deep")) == Repository(root=str(clone.resolve()), common_dir=common)
    # a folder below one, gone from the disk (or never there), is still the repository's
    assert workspace_key(str(worktree / "gone" / "folder")) == common


def test_a_folder_in_no_repository_is_its_own_workspace(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert repository_of(str(tmp_path / "plain")) is None
    assert workspace_key(str(tmp_path / "plain") + "/") == str(tmp_path / "plain")


def test_a_git_file_that_names_nothing_is_no_repository(tmp_path: Path) -> None:
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / ".git").write_text("not a gitdir line\n")
    assert repository_of(str(tmp_path / "odd")) is None


def test_a_git_file_naming_the_clone_git_directory_is_a_repository_of_its_own(tmp_path: Path) -> None:
    clone, _ = _clone_with_worktree(tmp_path)
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / ".git").write_text(f"gitdir: {clone / '.git'}\n")
    assert repository_of(str(forged)) == Repository(root=str(forged.resolve()),
                                                    common_dir=str((forged / ".git").resolve()))


def test_a_git_file_naming_a_worktree_that_is_not_it_is_a_repository_of_its_own(tmp_path: Path) -> None:
    clone, worktree = _clone_with_worktree(tmp_path)
    admin = clone / ".git" / "worktrees" / "app-topic"
    assert (admin / "gitdir").is_file()  # git lists the real worktree there
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / ".git").write_text(f"gitdir: {admin}\n")
    assert repository_of(str(forged)) is not None
    assert repository_of(str(forged)).common_dir == str((forged / ".git").resolve())  # type: ignore[union-attr]
    assert workspace_key(str(worktree)) == str((clone / ".git").resolve())  # the genuine one is the clone's


def test_a_real_submodule_is_its_own_git_directory_and_a_copy_of_its_link_is_not(tmp_path: Path) -> None:
    library = tmp_path / "lib"
    library.mkdir()
    _git("init", "-q", "-b", "main", cwd=library)
    _git("-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "one", cwd=library)
    app = tmp_path / "app"
    app.mkdir()
    _git("init", "-q", "-b", "main", cwd=app)
    _git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "vendor/lib", cwd=app)
    modules = str((app / ".git" / "modules" / "vendor" / "lib").resolve())
    assert repository_of(str(app / "vendor" / "lib")) == Repository(
        root=str((app / "vendor" / "lib").resolve()), common_dir=modules)
    copied = tmp_path / "copied"
    copied.mkdir()
    (copied / ".git").write_text(f"gitdir: {modules}\n")
    assert repository_of(str(copied)) == Repository(root=str(copied.resolve()),
                                                    common_dir=str((copied / ".git").resolve()))
