"""An item's files (checkpoint.extract.item_files, applied by runner.validate): those its statement names,
resolved against the workspace, and those its own turn or the same speaker's next turn edited, each
with where it came from; never every file the chunk's turns wrote."""

from __future__ import annotations

from pathlib import Path

from checkpoint import runner
from checkpoint.answer import Extraction, ItemDraft
from checkpoint.extract.item_files import item_files, named_files
from checkpoint.model import ChunkInput, ItemKind, Role, TurnSlice

W = "/home/dev/shop"


def chunk(*turns: tuple[str, Role, str, tuple[str, ...]], cwd: str = W) -> ChunkInput:
    return ChunkInput(chunk_id=1, session_id="s", agent="claude", cwd=cwd,
                      turns=[TurnSlice(tid, n, role, text, files) for n, (tid, role, text, files) in
                             enumerate(turns, start=1)], token_estimate=100)


def test_paths_a_statement_names_not_urls_versions_or_module_paths() -> None:
    assert named_files("Keep src/billing.py free of I/O; see https://example.com/a/b.py and the Justfile.") == [
        "src/billing.py", "Justfile"]
    assert named_files("Use os.path for paths, bump to v1.2, keep ./embedder/base.py and Cargo.toml.") == [
        "embedder/base.py", "Cargo.toml"]
    assert named_files("Nothing named here, e.g. no file.") == []
    assert named_files("Leave /etc/passwd and ~/.ssh/config alone, read and/or write I/O.") == [
        "/etc/passwd", "~/.ssh/config"]


def test_a_decision_naming_a_file_just_before_its_edit_gets_that_file_and_not_the_others() -> None:
    c = chunk(("u1", Role.USER, "Keep src/billing.py free of network calls.", ()),
              ("a1", Role.ASSISTANT, "I'll refactor it.", ()),
              ("r1", Role.TOOL, "edited", (f"{W}/src/billing.py", f"{W}/src/http.py")),
              ("a2", Role.ASSISTANT, "Also updated the README.", ()),
              ("r2", Role.TOOL, "edited", (f"{W}/README.md",)))
    assert item_files(c, ["u1"], "Keep src/billing.py free of network calls.") == {
        f"{W}/src/billing.py": "statement"}


def test_an_agents_item_gets_its_own_turns_edits_and_the_file_it_names() -> None:
    c = chunk(("u1", Role.USER, "Tidy the build.", ()),
              ("a1", Role.ASSISTANT, "I'll keep the Justfile and move the flags to Cargo.toml.", ()),
              ("r1", Role.TOOL, "edited", (f"{W}/Cargo.toml",)),
              ("u2", Role.USER, "Now the docs.", ()),
              ("a2", Role.ASSISTANT, "Updated the guide.", ()),
              ("r2", Role.TOOL, "edited", (f"{W}/docs/guide.md",)))
    assert item_files(c, ["a1"], "Keep the Justfile; flags go to Cargo.toml.") == {
        "Justfile": "statement", f"{W}/Cargo.toml": "statement+edit"}


def test_the_next_turn_of_the_same_speaker_counts_and_another_speakers_does_not() -> None:
    c = chunk(("a1", Role.ASSISTANT, "We'll use a ring buffer for the log.", ()),
              ("r1", Role.TOOL, "read the file", ()),
              ("a2", Role.ASSISTANT, "Writing it now.", ()),
              ("r2", Role.TOOL, "edited", (f"{W}/src/log.rs",)),
              ("u1", Role.USER, "Good. Use serde for the config.", ()),
              ("a3", Role.ASSISTANT, "Done.", ()),
              ("r3", Role.TOOL, "edited", (f"{W}/src/config.rs",)))
    assert item_files(c, ["a1"], "We'll use a ring buffer for the log.") == {f"{W}/src/log.rs": "edit"}
    assert item_files(c, ["u1"], "Use serde for the config.") == {}


def test_a_named_file_is_resolved_against_the_workspace(tmp_path: Path) -> None:
    (tmp_path / "embedder").mkdir()
    (tmp_path / "embedder" / "base.py").write_text("")
    c = chunk(("u1", Role.USER, "The embedder interface lives in embedder/base.py.", ()), cwd=str(tmp_path))
    assert item_files(c, ["u1"], "The embedder interface lives in embedder/base.py.") == {
        str(tmp_path / "embedder" / "base.py"): "statement"}


def test_validation_replaces_a_models_every_file_with_the_items_own() -> None:
    c = chunk(("u1", Role.USER, "Keep src/billing.py pure.", ()),
              ("a1", Role.ASSISTANT, "Sure.", ()),
              ("r1", Role.TOOL, "edited", (f"{W}/src/billing.py", f"{W}/src/a.py", f"{W}/src/b.py")))
    every = [f"{W}/src/billing.py", f"{W}/src/a.py", f"{W}/src/b.py"]
    answer = Extraction(chunk_id=1, extractor="openai", items=[
        ItemDraft(kind=ItemKind.CONSTRAINT, statement="Keep src/billing.py pure.", turn_ids=["t1"], files=every)])
    clean, _ = runner.validate(c, answer)
    [item] = clean.items
    assert item.files == [f"{W}/src/billing.py"]
    assert item.file_sources == {f"{W}/src/billing.py": "statement"}


def test_an_item_citing_no_turn_has_only_the_files_it_names() -> None:
    c = chunk(("u1", Role.USER, "Refactor.", ()),
              ("a1", Role.ASSISTANT, "Done.", ()),
              ("r1", Role.TOOL, "edited", (f"{W}/src/a.py", f"{W}/src/b.py")))
    answer = Extraction(chunk_id=1, extractor="openai", items=[
        ItemDraft(kind=ItemKind.DECISION, statement="Keep src/a.py small.", turn_ids=[])])
    clean, attributed = runner.validate(c, answer)
    assert attributed == 1 and clean.items[0].files == [f"{W}/src/a.py"]
