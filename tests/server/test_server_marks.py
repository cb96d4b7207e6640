"""Marks on the lines a decision concerns, never on a whole file (issue 38): a session edits three
lines of a long file and rewrites another. The real daemon (heuristic extractor) publishes one
diagnostic per item per file: on the three edited lines; in the rewritten file on the line naming
what the statement names, else one line (the file's first line of code) at Information severity at
most. The hover on a line is one short card per item with who and when in relative time and its
actions as command links, at most MAX_CARDS of them. Open Turn's request gives the turn's words."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from checkpoint.anchor import MAX_MARK_LINES
from checkpoint.server.features.diagnostics.cards import MAX_CARDS
from checkpoint.server.protocol import CHECKPOINT_TURN, CMD_ACCEPT, CMD_NOW, CMD_REOPEN
from checkpoint.server.requests.items import plain
from tests.support.long_file import EDITED_NEW, EDITED_OLD, LONG
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

UTIL_OLD = '"""Utilities."""\n'
UTIL = ('"""Utilities, rewritten."""\n# Keep this module small.\n\nimport os\n\n\n'
        + "".join(f"def util_{n}(path):\n    return os.path.join(path, '{n}')\n\n\n" for n in range(10))
        + "def parse_config(text):\n    return dict(line.split('=', 1) for line in text.splitlines())\n")
FIRST_CODE_LINE = 3  # `import os`: the docstring and the comment above it are not code
PARSE_LINE = UTIL.splitlines().index("def parse_config(text):")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "long.py").write_text(LONG)
    (ws / "src" / "util.py").write_text(UTIL)
    return ws


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path) -> AsyncIterator[Daemon]:
    t = Transcript(tmp_path / "claude" / "projects", workspace)
    t.write(t.user("Make the total exact"))
    t.write(t.assistant("We'll use marker-total for compute_total because cents add up.",
                        edits=[(workspace / "src" / "long.py", EDITED_OLD, EDITED_NEW)]))
    t.write(t.user("Rewrite the utilities"))
    t.write(t.assistant(
        "We'll use marker-parse for parse_config because one parser is enough. "
        "We'll use marker-retry for the retry layer because it is simpler. "
        "We'll use marker-logs for the log layer because it is quieter. "
        "We'll use marker-queue for the job queue because it is durable. "
        "Should we add a cache later?",
        edits=[(workspace / "src" / "util.py", UTIL_OLD, UTIL)]))
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [tmp_path / "claude" / "projects"])
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual",
                                                             "severity": {"decision": "warning"}}})
    await d.command(CMD_NOW)
    yield d
    await d.stop()


def _item_id(d: types.Diagnostic) -> str:
    assert isinstance(d.data, dict)
    return str(d.data["item_id"])


async def test_marks_cover_the_edited_lines_or_the_named_line_or_one_line(daemon: Daemon, workspace: Path) -> None:
    long_uri, util_uri = (workspace / "src" / "long.py").as_uri(), (workspace / "src" / "util.py").as_uri()
    [edited] = await daemon.wait_diagnostics(long_uri, lambda d: len(d) == 1)
    util = await daemon.wait_diagnostics(util_uri, lambda d: len(d) == 5)
    # the three lines the session wrote in a 122-line file, at the severity the settings give decisions
    assert edited.range == types.Range(types.Position(60, 0), types.Position(62, len("    return round(subtotal, 2)")))
    assert edited.severity == types.DiagnosticSeverity.Warning
    assert isinstance(edited.data, dict) and edited.data["mark"] == "edited" and "stale" not in edited.data
    assert edited.code == "decision" and edited.code_description is not None
    assert edited.code_description.href.startswith("command:checkpoint.openTurn?")
    assert _item_id(edited) in edited.code_description.href
    by_statement = {d.message.split(": ", 1)[1]: d for d in util}
    named = by_statement["We'll use marker-parse for parse_config"]
    end = len("def parse_config(text):")
    assert named.range == types.Range(types.Position(PARSE_LINE, 0), types.Position(PARSE_LINE, end))
    assert isinstance(named.data, dict) and named.data["mark"] == "named"
    assert named.severity == types.DiagnosticSeverity.Warning
    # naming nothing in the rewritten file: one line, the first line of code, never above Information
    rest = [d for s, d in by_statement.items() if "parse_config" not in s]
    for d in rest:
        line = types.Range(types.Position(FIRST_CODE_LINE, 0), types.Position(FIRST_CODE_LINE, len("import os")))
        assert d.range == line and isinstance(d.data, dict) and d.data["mark"] == "line", d
    assert {d.severity for d in rest if d.code == "decision"} == {types.DiagnosticSeverity.Information}
    assert [d.severity for d in rest if d.code == "question"] == [types.DiagnosticSeverity.Hint]
    # never a whole file, one diagnostic per item per file
    for uri, text in ((long_uri, LONG), (util_uri, UTIL)):
        shown = daemon.client.diagnostics[uri]
        assert all(d.range.end.line - d.range.start.line < MAX_MARK_LINES for d in shown)
        assert all(d.range.end.line - d.range.start.line + 1 < len(text.splitlines()) for d in shown)
        assert len({_item_id(d) for d in shown}) == len(shown)


async def test_the_hover_is_one_short_card_per_item_bounded(daemon: Daemon, workspace: Path) -> None:
    util_uri, long_uri = (workspace / "src" / "util.py").as_uri(), (workspace / "src" / "long.py").as_uri()
    await daemon.wait_diagnostics(util_uri, lambda d: len(d) == 5)
    await daemon.wait_diagnostics(long_uri, lambda d: len(d) == 1)
    one = await daemon.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=long_uri), position=types.Position(61, 4)))
    assert one is not None and isinstance(one.contents, types.MarkupContent)
    text = one.contents.value
    assert text.startswith("**Decision** We'll use marker-total for compute\\_total  \n*Why:* because cents add up.")
    assert re.search(r"said by the agent in a Claude Code session, (\d+ (minute|hour|day|week|month|year)s? ago|"
                     r"yesterday|just now) · new", text), text
    for action in ("Open Turn", "Accept", "Dismiss"):
        assert re.search(rf"\[{action}\]\(command:checkpoint\.\w+\?%5B%22[0-9a-f]+%22%5D\)", text), action
    assert "Open Decision Record" not in text  # a captured item has no record
    assert "---" not in text and len(text.splitlines()) <= 5  # one card, a few lines
    # five items on the first line of code: MAX_CARDS cards, then how many more
    many = await daemon.client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=util_uri), position=types.Position(FIRST_CODE_LINE, 2)))
    assert many is not None and isinstance(many.contents, types.MarkupContent)
    shown = many.contents.value.split("\n\n---\n\n")
    assert len(shown) == MAX_CARDS + 1 and shown[-1] == "*1 more on this line: see Problems or the Checkpoint panel*"
    assert all(card.count("[Open Turn](") == 1 for card in shown[:-1])


async def test_the_turn_is_given_as_it_was_said_with_the_turns_around_it(daemon: Daemon, workspace: Path) -> None:
    [edited] = await daemon.wait_diagnostics((workspace / "src" / "long.py").as_uri(), lambda d: len(d) == 1)
    answer = plain(await daemon.client.protocol.send_request_async(CHECKPOINT_TURN, {"item": _item_id(edited)}))
    assert answer["item"]["id"] == _item_id(edited)
    cited = [t for t in answer["turns"] if t["cited"]]
    assert [t["text"] for t in cited] == ["We'll use marker-total for compute_total because cents add up."]
    assert cited[0]["role"] == "assistant" and cited[0]["line"] == 2 and cited[0]["uri"].startswith("file://")
    assert cited[0]["timestamp"].startswith("2026-01-05T10:")
    # the prompt before it, in session order
    first = answer["turns"][0]
    assert (first["role"], first["text"]) == ("user", "Make the total exact")
    with pytest.raises(JsonRpcInvalidParams, match="no item nope"):
        await daemon.client.protocol.send_request_async(CHECKPOINT_TURN, {"item": "nope"})


async def test_an_accept_or_a_dismiss_is_undone_by_reopening(daemon: Daemon, workspace: Path) -> None:
    [edited] = await daemon.wait_diagnostics((workspace / "src" / "long.py").as_uri(), lambda d: len(d) == 1)
    item_id = _item_id(edited)
    assert (await daemon.command(CMD_ACCEPT, item_id))["state"] == "accepted"
    assert await daemon.command(CMD_REOPEN, item_id) == {"id": item_id, "state": "new", "changed": True}
    assert [i["state"] for i in await daemon.items(state="any") if i["id"] == item_id] == ["new"]
