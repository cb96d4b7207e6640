"""Items become diagnostics on the workspace files their session edited: on the lines it wrote while
they can be found (re-anchored on open and change), else on line 0, with the transcript line as
related information, a severity per kind, and a hover card per item. A superseded item is
tagged Deprecated and names the newer one; an item whose lines are gone says its code changed."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.server.features.diagnostics import STALE
from checkpoint.server.protocol import CMD_NOW, CMD_SUPERSEDE, EDITOR_OPEN_TURN, command_link
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

FUNCTION = "def cache_get(key):\n    return STORE.get(key)"
SOURCE = f'"""Cache module."""\n\nimport os\n\n\n{FUNCTION}\n'


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "cache.py").write_text(SOURCE)
    return ws


@pytest.fixture
def transcript(tmp_path: Path, workspace: Path) -> Transcript:
    t = Transcript(tmp_path / "claude" / "projects", workspace)
    t.write(t.user("Add a cache getter"))
    t.text_records = t.assistant(  # type: ignore[attr-defined]
        "We'll use marker-diag for the cache layer because lookups dominate. Should we add eviction later?",
        edits=[(workspace / "src" / "cache.py", "pass", FUNCTION), (tmp_path / "elsewhere.py", "a", "x = 1")],
    )
    t.write(t.text_records)  # type: ignore[attr-defined]
    return t


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, transcript: Transcript) -> AsyncIterator[Daemon]:
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual"}})
    await d.command(CMD_NOW)
    yield d
    await d.stop()


def expected(item: dict[str, Any], transcript: Transcript, start: int, end: int, end_char: int,
             severity: types.DiagnosticSeverity, title: str) -> types.Diagnostic:
    turn = transcript.text_records[0]  # type: ignore[attr-defined]
    return types.Diagnostic(
        range=types.Range(types.Position(start, 0), types.Position(end, end_char)),
        message=f"{title}: {item['statement']}",
        severity=severity,
        code=item["kind"],
        code_description=types.CodeDescription(href=command_link(EDITOR_OPEN_TURN, item["id"])),
        source="checkpoint",
        related_information=(types.DiagnosticRelatedInformation(
            location=types.Location(uri=transcript.path.as_uri(),
                                    range=types.Range(types.Position(1, 0), types.Position(1, 0))),
            message=f"said in Add a cache getter ({transcript.session_id[:8]}), {turn['timestamp'][:10]}",
        ),),  # the client structures sequences as tuples
        data={"item_id": item["id"], "session_id": transcript.session_id, "kind": item["kind"], "mark": "edited",
              "said": f"said by the agent in Claude Code session Add a cache getter ({transcript.session_id[:8]}),"
                      f" {turn['timestamp'][:10]}"},
    )


async def test_items_are_diagnostics_on_the_lines_the_session_wrote(
    daemon: Daemon, workspace: Path, transcript: Transcript
) -> None:
    uri = (workspace / "src" / "cache.py").as_uri()
    diags = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    by_kind = {i["kind"]: i for i in await daemon.items()}
    assert set(by_kind) == {"decision", "question"}
    assert by_kind["decision"]["rationale"] == "because lookups dominate."
    width = len("    return STORE.get(key)")
    assert sorted(diags, key=lambda d: d.severity or 0) == [
        expected(by_kind["decision"], transcript, 5, 6, width, types.DiagnosticSeverity.Information, "Decision"),
        expected(by_kind["question"], transcript, 5, 6, width, types.DiagnosticSeverity.Hint, "Open question"),
    ]
    # A file outside the workspace gets none; no other file does either.
    assert [u for u, d in daemon.client.diagnostics.items() if d] == [uri]


async def test_reanchored_when_the_document_moves_and_loses_the_lines(daemon: Daemon, workspace: Path) -> None:
    uri = (workspace / "src" / "cache.py").as_uri()
    await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    moved_down = "# new\n# header\n\n" + SOURCE
    daemon.client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=moved_down)
    ))
    moved = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2 and d[0].range.start.line == 8)
    assert {(d.range.start.line, d.range.end.line) for d in moved} == {(8, 9)}
    daemon.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text='"""Cache module."""\n')],
    ))
    lost = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2 and d[0].range.start.line == 0)
    # one line, the first line of code, never a whole file
    assert [d.range for d in lost] == [types.Range(types.Position(0, 0), types.Position(0, 19))] * 2
    # not silently on line 0: the diagnostic says the code it was about changed
    assert all(d.message.endswith(f"({STALE})") and d.data["stale"] is True for d in lost)  # type: ignore[index]
    daemon.client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=SOURCE)],
    ))
    back = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2 and d[0].range.start.line == 5)
    assert not any(STALE in d.message for d in back)


async def test_a_superseded_item_is_struck_through_and_names_the_newer_one(daemon: Daemon, workspace: Path) -> None:
    uri = (workspace / "src" / "cache.py").as_uri()
    diags = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    assert all(d.tags is None for d in diags)
    question = next(d for d in diags if d.message.startswith("Open question"))
    decision = next(d for d in diags if d.message.startswith("Decision"))
    question_id, decision_id = (str(d.data["item_id"]) for d in (question, decision))  # type: ignore[index]
    result = await daemon.command(CMD_SUPERSEDE, {"old": question_id, "new": decision_id, "reason": "settled"})
    assert result == {"old_id": question_id, "new_id": decision_id, "changed": True, "removed": 0,
                      "superseded_by": decision_id}
    struck = await daemon.wait_diagnostics(uri, lambda d: any(x.tags for x in d))
    old = next(d for d in struck if d.code == "question")
    assert list(old.tags or ()) == [types.DiagnosticTag.Deprecated]
    assert old.message.endswith("[superseded by We'll use marker-diag for the cache lay…]")  # one short line
    assert old.data["superseded_by"] == decision_id  # type: ignore[index]
    assert next(d for d in struck if d.code == "decision").tags is None
    hover = await daemon.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(6, 4)))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "*Superseded by:* We'll use marker-diag for the cache layer" in hover.contents.value
    with pytest.raises(JsonRpcInvalidParams, match="would make a loop"):
        await daemon.command(CMD_SUPERSEDE, decision_id, question_id)
    with pytest.raises(JsonRpcInvalidParams, match="`new` is required"):
        await daemon.command(CMD_SUPERSEDE, {"old": question_id})
    undone = await daemon.command(CMD_SUPERSEDE, {"old": question_id, "undo": True})
    assert undone["removed"] == 1 and undone["superseded_by"] is None
    await daemon.wait_diagnostics(uri, lambda d: len(d) == 2 and not any(x.tags for x in d))


async def test_hover_is_a_card_per_item_with_who_when_and_actions(
    daemon: Daemon, workspace: Path, transcript: Transcript
) -> None:
    uri = (workspace / "src" / "cache.py").as_uri()
    diags = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    hover = await daemon.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(6, 4)
    ))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.range == diags[0].range
    cards = hover.contents.value.split("\n\n---\n\n")
    assert [c.split("  \n")[0] for c in cards] == [
        "**Decision** We'll use marker-diag for the cache layer", "**Open question** Should we add eviction later?"]
    decision = cards[0].split("  \n")
    assert decision[1] == "*Why:* because lookups dominate."
    assert re.fullmatch(r"said by the agent in a Claude Code session, (\d+ \w+ ago|yesterday|just now) · new",
                        decision[2]), decision[2]
    assert [re.sub(r"\(.*?\)", "", a) for a in decision[3].split(" · ")] == ["[Open Turn]", "[Accept]", "[Dismiss]"]
    nothing = await daemon.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(2, 0)
    ))
    assert nothing is None


async def test_severity_is_configurable_and_diagnostics_can_be_turned_off(daemon: Daemon, workspace: Path) -> None:
    uri = (workspace / "src" / "cache.py").as_uri()
    await daemon.wait_diagnostics(uri, lambda d: len(d) == 2)
    daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"checkpoint": {"extraction": "manual", "severity": {"decision": "warning", "question": "off"}}}
    ))
    only = await daemon.wait_diagnostics(uri, lambda d: len(d) == 1)
    assert only[0].severity == types.DiagnosticSeverity.Warning and only[0].message.startswith("Decision: ")
    daemon.client.workspace_did_change_configuration(types.DidChangeConfigurationParams(
        settings={"checkpoint": {"extraction": "manual", "diagnostics": False}}
    ))
    await daemon.wait_diagnostics(uri, lambda d: d == [])


async def test_a_huge_or_binary_file_is_not_read_and_its_diagnostic_says_why(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    big, blob = ws / "dump.log", ws / "data.bin"
    with open(big, "wb") as fh:
        fh.write(b"header line of the dump\n")
        fh.truncate(3 * 1024 * 1024)  # over the 2 MB limit, sparse
    blob.write_bytes(b"header line of the blob\n\0\0\0\1")
    t = Transcript(tmp_path / "claude" / "projects", ws)
    t.write(t.user("Trim the dump"))
    t.write(t.assistant("We'll use marker-huge for the dump format because it is smaller.",
                        edits=[(big, "x", "header line of the dump"), (blob, "x", "header line of the blob")]))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual"}})
    try:
        await d.command(CMD_NOW)
        for path, why in ((big, "over 2 MB"), (blob, "not text")):
            [diag] = await d.wait_diagnostics(path.as_uri(), lambda ds: len(ds) == 1)
            assert why in diag.message and diag.range.start.line == 0, diag
            assert isinstance(diag.data, dict) and why in str(diag.data["unread"])
    finally:
        await d.stop()
