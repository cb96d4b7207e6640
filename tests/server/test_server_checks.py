"""`checkpoint serve` and decisions that check themselves: an open file's lines that an accepted
decision's check finds breaking it get a diagnostic (the decision's statement, a warning for a decision),
re-checked as the document changes (after typing pauses), with a Quick Fix that writes the suppression
comment; a workspace whose decision is shared through a record, with no session of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_support import Daemon, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

RECORD = ("---\nstatus: accepted\ndate: 2026-12-01\ndecision-makers: A\nid: 7a84faa51a2b\nkind: decision\nfiles: []\n"
          'checks:\n  - {"uses": "requests"}\n---\n\n# We use httpx instead of requests\n')
API = "import os\nimport requests\n\n\ndef fetch(url):\n    return requests.get(url)\n"


async def test_an_open_file_breaking_a_shared_decision_gets_diagnostics_and_a_fix(tmp_path: Path) -> None:
    ws = tmp_path / "app"
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "docs" / "decisions").mkdir(parents=True)
    (ws / "docs" / "decisions" / "a.md").write_text(RECORD)
    (ws / "src").mkdir()
    (ws / "src" / "api.py").write_text(API)
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "projects"])
    daemon = await Daemon.start(env, [ws], {"checkpoint": {"extraction": "manual", "rescanSeconds": 600}})
    try:
        uri = (ws / "src" / "api.py").as_uri()
        daemon.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=API)))
        found = await daemon.wait_diagnostics(uri, lambda d: len(d) == 2, timeout=30)
        assert [(d.range.start.line, d.severity, d.code) for d in found] == [
            (1, types.DiagnosticSeverity.Warning, found[0].code), (5, types.DiagnosticSeverity.Warning, found[0].code)]
        assert str(found[0].code).startswith("check:")
        assert found[0].message == ("Breaks decision 7a84faa5 (shared in docs/decisions/a.md): "
                                    "We use httpx instead of requests")

        actions = await daemon.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), range=found[0].range,
            context=types.CodeActionContext(diagnostics=[found[0]])))
        assert actions is not None
        [fix] = [a for a in actions if isinstance(a, types.CodeAction)]
        assert fix.title == "Checkpoint: Dismiss for this line" and fix.edit is not None
        assert fix.edit.changes is not None
        [edit] = fix.edit.changes[uri]
        assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (1, 15, "  # checkpoint: ignore")

        fixed = "import os\nimport httpx\n\n\ndef fetch(url):\n    return httpx.get(url)\n"
        daemon.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
        await daemon.wait_diagnostics(uri, lambda d: d == [], timeout=30)
    finally:
        await daemon.stop()
