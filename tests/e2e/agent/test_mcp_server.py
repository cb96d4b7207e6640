"""`checkpoint mcp` through the MCP SDK's own stdio client: the real server process, started in a
workspace folder, over a database the real `checkpoint now` filled from transcripts of two workspaces.

Every tool answers with items and their provenance (session, agent, time, transcript path and line,
files), scoped to the workspace; bad arguments are a clear tool error (is_error, a message naming the
argument), not a crash; SQL and FTS syntax in a query means itself; an empty database and a missing
one answer with nothing, not an error."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

import checkpoint
from checkpoint.agent.answers import ANSWER_CHARS
from checkpoint.model import AGENT_ANSWER_MARK
from checkpoint.store import Store
from checkpoint.store.search import query_terms
from tests.support.agent_corpus import PlannedSession, capture, write_claude_session

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
TOOLS = {"search_decisions", "list_decisions", "get_decision", "checkpoint_status", "check_file", "search_said"}


class Workspaces:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.alpha = tmp / "ws" / "alpha"
        self.beta = tmp / "ws" / "beta"
        self.db = tmp / "data" / "checkpoint.db"
        self.root = tmp / "projects"
        for folder in (self.alpha / "sub", self.beta):
            folder.mkdir(parents=True)


@pytest.fixture
def ws(tmp_path: Path) -> Workspaces:
    w = Workspaces(tmp_path)
    write_claude_session(w.root, PlannedSession("sess-alpha-1", str(w.alpha), [
        "We'll use SQLite for the store because it is one file.",
        "The API must never log keys.",
        "We'll use a 100% coverage gate on the parser.",
    ]))
    write_claude_session(w.root, PlannedSession("sess-alpha-2", str(w.alpha / "sub"), [
        "We decided to use orjson for speed.",
    ]), day=2)
    write_claude_session(w.root, PlannedSession("sess-beta-1", str(w.beta), [
        "We'll use Postgres for the beta service.",
        "We'll use SQLite for beta's cache too.",
    ]))
    capture(w.db, w.root)
    return w


def _env(db: Path, tmp: Path) -> dict[str, str]:
    return {"CHECKPOINT_DB": str(db), "HOME": str(tmp), "XDG_CONFIG_HOME": str(tmp / ".config"),
            "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


Calls = Callable[[ClientSession], Coroutine[Any, Any, Any]]


def with_server(cwd: Path, db: Path, tmp: Path, calls: Calls) -> Any:
    """Start `checkpoint mcp` in `cwd`, initialize, run `calls` on the session, stop the server."""
    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(cwd), env=_env(db, tmp))

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await asyncio.wait_for(calls(session), timeout=60)

    return asyncio.run(main())


def answer(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    text = result.content[0].text
    assert text.startswith(AGENT_ANSWER_MARK)  # how the transcript reader knows Checkpoint's own answer
    data: dict[str, Any] = json.loads(text)
    return data


def error_text(result: Any) -> str:
    assert result.is_error, result.content
    return str(result.content[0].text)


def test_the_tools_are_listed_read_only(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = with_server(ws.alpha, ws.db, ws.tmp, calls)
    assert {t.name for t in tools} == TOOLS
    assert all(t.annotations and t.annotations.read_only_hint for t in tools)
    search = next(t for t in tools if t.name == "search_decisions")
    assert search.input_schema["required"] == ["query"]


def test_list_decisions_holds_the_workspace_and_its_subfolders_with_provenance(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        listed = answer(await session.call_tool("list_decisions", {}))
        sqlite = next(i for i in listed["items"] if "SQLite for the store" in i["statement"])
        return (listed, await session.call_tool("list_decisions", {"workspace": str(ws.beta), "kind": "decision"}),
                answer(await session.call_tool("get_decision", {"id": sqlite["id"]}))["item"])

    alpha, beta_result, sqlite = with_server(ws.alpha, ws.db, ws.tmp, calls)
    beta = answer(beta_result)
    statements = [i["statement"] for i in alpha["items"]]
    assert any("SQLite for the store" in s for s in statements)
    assert any("orjson" in s for s in statements)  # a session in a subfolder belongs to the workspace
    assert not any("Postgres" in s or "beta" in s for s in statements)
    assert alpha["left_out"] == 0 and alpha["total"] == len(alpha["items"])
    # the provenance is get_decision's: a list is compact
    assert sqlite["session"]["id"] == "sess-alpha-1" and sqlite["session"]["agent"] == "claude"
    assert sqlite["session"]["cwd"] == str(ws.alpha)
    source = sqlite["sources"][0]
    assert source["transcript"].endswith("sess-alpha-1.jsonl") and source["line"] == 2
    assert sqlite["recorded_at"].endswith("Z")
    # newest first: the subfolder's session was captured with the others, the order is by item time
    assert [i["kind"] for i in beta["items"]] == ["decision", "decision"]
    assert {"Postgres" in i["statement"] or "SQLite" in i["statement"] for i in beta["items"]} == {True}


def test_search_finds_the_item_with_its_transcript_line_and_keeps_to_the_workspace(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return (await session.call_tool("search_decisions", {"query": "sqlite store"}),
                await session.call_tool("search_decisions", {"query": "SQLite", "workspace": "/"}),
                await session.call_tool("search_decisions", {"query": "sqlite", "limit": 1, "workspace": "/"}))

    here, everywhere, one = (answer(r) for r in with_server(ws.alpha, ws.db, ws.tmp, calls))
    store = Store(ws.db)
    try:
        [found] = [store.item(i["id"]) for i in here["items"]]
        assert found is not None and found.session_id == "sess-alpha-1" and found.sources[0].line == 2
        assert {i.session_id for i in (store.item(j["id"]) for j in everywhere["items"]) if i} == {
            "sess-alpha-1", "sess-beta-1"}
    finally:
        store.close()
    assert here["searched"].startswith(f"the sessions run in {ws.alpha} and below it")
    assert everywhere["searched"] == "every workspace"
    assert one["shown"] == 1 and one["total"] == 2 and one["left_out"] == 1
    assert "left out" in one["note"]


QUERIES = [
    "' OR 1=1 --", "sqlite\" OR \"", "NEAR(sqlite store)", "sqlite*", "%", "_", "store; DROP TABLE items;",
    "^sqlite", "sqlite AND NOT store", "(", "\\", "column:statement", "sqlite%", "s_lite",
]


def test_a_query_with_sql_or_fts_syntax_means_its_characters(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return ([await session.call_tool("search_decisions", {"query": q, "workspace": "/"}) for q in QUERIES],
                await session.call_tool("search_decisions", {"query": "100%", "workspace": "/"}))

    results, percent = with_server(ws.alpha, ws.db, ws.tmp, calls)
    reader = Store.read_only(ws.db)
    try:
        for query, result in zip(QUERIES, results, strict=True):
            assert not result.is_error, (query, result.content)
            words = query_terms(query)  # the full-text search reads only a query's words: the rest is no syntax
            for shown in answer(result)["items"]:
                item = reader.item(shown["id"])
                assert item is not None
                text = (item.statement + " " + (item.rationale or "")).lower()
                assert any(word.lower() in text for word in words), (query, item)
    finally:
        reader.close()
    assert [i["statement"] for i in answer(percent)["items"]] == ["We'll use a 100% coverage gate on the parser."]
    sqlite = {i["id"] for i in answer(results[QUERIES.index("sqlite*")])["items"]}
    assert sqlite and {i["id"] for i in answer(results[QUERIES.index("sqlite%")])["items"]} == sqlite
    assert answer(results[QUERIES.index("%")])["items"] == []  # no word: nothing
    store = Store(ws.db)
    try:
        assert len(store.items()) > 5  # the items table is still there
    finally:
        store.close()


def test_get_decision_gives_every_source_turn(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        listed = answer(await session.call_tool("search_decisions", {"query": "never log keys"}))
        item_id = listed["items"][0]["id"]
        return item_id, await session.call_tool("get_decision", {"id": item_id})

    item_id, result = with_server(ws.alpha, ws.db, ws.tmp, calls)
    got = answer(result)
    assert got["item"]["id"] == item_id and got["item"]["kind"] == "constraint"
    assert len(got["excerpts"]) == 1
    excerpt = got["excerpts"][0]
    assert excerpt["text"] == "The API must never log keys." and excerpt["line"] == 4
    assert excerpt["transcript"].endswith("sess-alpha-1.jsonl") and excerpt["role"] == "assistant"
    assert excerpt["chars_left_out"] == 0


def test_checkpoint_status_counts_the_workspace_turns(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return await session.call_tool("checkpoint_status", {})

    status = answer(with_server(ws.alpha, ws.db, ws.tmp, calls))
    assert status["total"] == {"sessions": 2, "turns": 8, "captured": 8, "pending": 0, "failed": 0}
    assert {s["id"] for s in status["sessions"]} == {"sess-alpha-1", "sess-alpha-2"}


def test_bad_arguments_are_clear_tool_errors(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        bad: list[tuple[str, dict[str, Any]]] = [
            ("search_decisions", {"query": "   "}),
            ("search_decisions", {"query": "sqlite", "limit": 0}),
            ("list_decisions", {"limit": 500}),
            ("list_decisions", {"kind": "verdict"}),
            ("list_decisions", {"workspace": "relative/folder"}),
            ("get_decision", {"id": "no-such-item"}),
            ("get_decision", {}),
            ("search_decisions", {"query": 42}),
            ("no_such_tool", {}),
        ]
        return [await session.call_tool(name, args) for name, args in bad]

    errors = [error_text(r) for r in with_server(ws.alpha, ws.db, ws.tmp, calls)]
    assert "query is empty" in errors[0]
    assert "limit must be between 1 and 50, not 0" in errors[1]
    assert "not 500" in errors[2]
    assert "kind" in errors[3]
    assert "absolute" in errors[4] and "relative/folder" in errors[4]
    assert "no item with id 'no-such-item'" in errors[5]
    assert "id" in errors[6]
    assert "query" in errors[7]
    assert "no_such_tool" in errors[8]


def test_an_empty_database_and_a_missing_one_answer_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    Store(empty).close()
    (tmp_path / "ws").mkdir()

    async def calls(session: ClientSession) -> Any:
        return [answer(await session.call_tool(name, args)) for name, args in [
            ("search_decisions", {"query": "sqlite"}), ("list_decisions", {}), ("checkpoint_status", {})]]

    search, listed, status = with_server(tmp_path / "ws", empty, tmp_path, calls)
    assert search["items"] == [] and search["total"] == 0 and listed["items"] == []
    assert status["total"]["sessions"] == 0
    missing = with_server(tmp_path / "ws", tmp_path / "nowhere" / "c.db", tmp_path, calls)
    assert "no database" in missing[0]["note"] and missing[1]["items"] == []
    assert not (tmp_path / "nowhere").exists()  # the server reads; it never creates a database


def test_superseded_items_are_left_out_of_search_and_list(ws: Workspaces) -> None:
    store = Store(ws.db)
    try:
        old = next(i.id for i in store.items() if "SQLite for the store" in i.statement)
        new = next(i.id for i in store.items() if "orjson" in i.statement)
        store.supersede(old, new, reason="orjson replaces it")
    finally:
        store.close()

    async def calls(session: ClientSession) -> Any:
        return (await session.call_tool("list_decisions", {}),
                await session.call_tool("search_decisions", {"query": "SQLite"}),
                await session.call_tool("get_decision", {"id": old}))

    listed, searched, got = (answer(r) for r in with_server(ws.alpha, ws.db, ws.tmp, calls))
    assert old not in {i["id"] for i in listed["items"]} and new in {i["id"] for i in listed["items"]}
    assert searched["items"] == [] and searched["total"] == 0
    assert (got["item"]["id"], got["item"]["superseded_by"]) == (old, new)  # still there, asked for by id


def test_what_an_answer_or_error_echoes_is_capped(ws: Workspaces) -> None:
    huge_query = "sqlite " + "x" * 5_000_000
    huge_id = "i" * 1_000_000

    async def calls(session: ClientSession) -> Any:
        return [await session.call_tool("search_decisions", {"query": huge_query}),
                await session.call_tool("get_decision", {"id": huge_id}),
                await session.call_tool("list_decisions", {"workspace": "w" * 1_000_000})]

    searched, got, listed = with_server(ws.alpha, ws.db, ws.tmp, calls)
    for result in (searched, got, listed):
        assert len(result.content[0].text) <= ANSWER_CHARS, len(result.content[0].text)
    assert "query" in error_text(searched) and "5000007 characters" in error_text(searched)
    assert "no item with id 'iiii" in error_text(got) and "1000000 characters" in error_text(got)
    assert "absolute" in error_text(listed)


def test_a_tool_call_arriving_just_before_stdin_closes_is_answered(ws: Workspaces) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "search_decisions", "arguments": {"query": "sqlite"}}},
    ]
    stdin = "".join(json.dumps(m) + "\n" for m in messages)  # then stdin ends
    done = subprocess.run([str(CHECKPOINT), "mcp"], input=stdin, capture_output=True, text=True, timeout=60,
                          cwd=ws.alpha, env=_env(ws.db, ws.tmp))
    answers = {m.get("id"): m for m in map(json.loads, done.stdout.splitlines())}
    assert set(answers) == {1, 2}, (done.stdout, done.stderr)
    assert "SQLite" in answers[2]["result"]["content"][0]["text"], answers[2]
    assert done.returncode == 0, done.stderr


def test_a_folder_without_items_says_how_many_the_other_workspaces_hold_and_how_to_ask(ws: Workspaces) -> None:
    elsewhere = ws.tmp / "home-like"
    elsewhere.mkdir()

    async def calls(session: ClientSession) -> Any:
        return [answer(await session.call_tool(name, args)) for name, args in [
            ("list_decisions", {}), ("search_decisions", {"query": "sqlite"}), ("checkpoint_status", {}),
            ("list_decisions", {"workspace": "/"}), ("search_decisions", {"query": "nothing-anywhere"})]]

    listed, searched, status, everywhere, nowhere = with_server(elsewhere, ws.db, ws.tmp, calls)
    store = Store(ws.db)
    try:
        recorded = store.workspace_items(["/"], limit=1).total
    finally:
        store.close()
    assert listed["items"] == [] and searched["items"] == [] and status["sessions"] == []
    how = 'pass workspace (a folder, or "/" for every workspace), or run `checkpoint search WORDS`'
    assert listed["hint"].startswith(f"{recorded} items recorded in other workspaces: {how}")
    assert searched["hint"].startswith(f"2 items match in other workspaces: {how}")  # the two SQLite items
    assert status["hint"].startswith(f"{recorded} items recorded in other workspaces")
    assert "hint" not in everywhere and everywhere["total"] == recorded
    assert "hint" not in nowhere  # no match anywhere: nothing to point at


def test_list_and_search_answer_compactly_and_say_their_bound(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return (answer(await session.call_tool("list_decisions", {"workspace": "/"})),
                answer(await session.call_tool("search_decisions", {"query": "sqlite", "workspace": "/"})))

    listed, searched = with_server(ws.alpha, ws.db, ws.tmp, calls)
    for result in (listed, searched):
        assert result["items"]
        for item in result["items"]:
            assert list(item) == ["id", "kind", "state", "statement", "said_at", "files", "accepted_by"]
            assert item["said_at"].startswith("2026-") or item["said_at"].endswith("Z")
        assert "statement cut at 300 characters" in result["each_item"] and "get_decision" in result["each_item"]
    per_item = (len(json.dumps(listed["items"])) + 2) / len(listed["items"])
    assert per_item < 400, per_item  # a list of 18 items was 15,276 characters (850 an item)


def test_bad_arguments_are_one_line_naming_the_argument_and_what_it_takes(ws: Workspaces) -> None:
    bad: list[tuple[str, dict[str, Any]]] = [
        ("list_decisions", {"kind": "verdict"}), ("search_decisions", {"query": 42}),
        ("get_decision", {}), ("list_decisions", {"limit": "many"})]

    async def calls(session: ClientSession) -> Any:
        return [error_text(await session.call_tool(name, args)) for name, args in bad]

    kind, query, missing, limit = with_server(ws.alpha, ws.db, ws.tmp, calls)
    for text in (kind, query, missing, limit):
        assert "\n" not in text and "http" not in text and "validation error" not in text, text
    assert kind == "list_decisions: kind must be 'decision', 'constraint' or 'question', not 'verdict'"
    assert query == "search_decisions: query must be a valid string, not '42'"
    assert missing == "get_decision: id is required"
    assert limit.startswith("list_decisions: limit must be a valid integer") and "'many'" in limit


def test_the_server_says_its_version_and_a_session_is_titled_as_the_cli_titles_it(ws: Workspaces) -> None:
    with sqlite3.connect(ws.db) as conn:  # most real transcripts give no title: the CLI shows the folder
        conn.execute("UPDATE sessions SET title = NULL WHERE id = 'sess-alpha-1'")
    conn.close()

    async def calls(session: ClientSession) -> Any:
        listed = answer(await session.call_tool("list_decisions", {}))
        return (answer(await session.call_tool("checkpoint_status", {})),
                answer(await session.call_tool("get_decision", {"id": listed["items"][0]["id"]})))

    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(ws.alpha), env=_env(ws.db, ws.tmp))

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            return init.server_info, await calls(session)

    info, (status, got) = asyncio.run(main())
    assert (info.name, info.version) == ("checkpoint", checkpoint.__version__)
    cli = subprocess.run([str(CHECKPOINT), "status"], cwd=ws.alpha, env=_env(ws.db, ws.tmp), capture_output=True,
                         text=True, timeout=60)
    shown = [line.rsplit("  ", 1)[1] for line in cli.stdout.splitlines() if line.startswith("  sess-alp")]
    titles = {s["id"]: s["title"] for s in status["sessions"]}
    assert titles == {"sess-alpha-1": str(ws.alpha), "sess-alpha-2": "Go on with part 0."}
    assert sorted(shown) == sorted(t if len(t) <= 60 else t[:59] + "…" for t in titles.values())  # cut at 60
    assert got["item"]["session"]["title"] == titles[got["item"]["session"]["id"]]


def test_search_said_finds_what_was_said_with_its_transcript_line_in_the_workspace(ws: Workspaces) -> None:
    async def calls(session: ClientSession) -> Any:
        return (answer(await session.call_tool("search_said", {"query": "orjson speed"})),
                answer(await session.call_tool("search_said", {"query": "Postgres"})),
                answer(await session.call_tool("search_said", {"query": "Postgres", "workspace": "/"})))

    mine, not_here, everywhere = with_server(ws.alpha, ws.db, ws.tmp, calls)
    [passage] = mine["passages"]
    assert passage["session_id"] == "sess-alpha-2" and passage["agent"] == "claude" and passage["role"] == "assistant"
    assert passage["transcript"].endswith("sess-alpha-2.jsonl") and passage["line"] == 2
    assert "orjson for speed" in passage["snippet"]
    assert not_here["passages"] == []
    assert [p["session_id"] for p in everywhere["passages"]] == ["sess-beta-1"]


def test_check_file_names_the_lines_that_break_a_shared_accepted_decision(tmp_path: Path) -> None:
    """A clone with no database: the decision record's check finds the file's lines; a path outside the
    workspace is a tool error."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "docs" / "decisions").mkdir(parents=True)
    (repo / "docs" / "decisions" / "a.md").write_text(
        "---\nstatus: accepted\ndate: 2026-12-01\ndecision-makers: A\nid: abcdef0123\nkind: decision\nfiles: []\n"
        'checks:\n  - {"uses": "requests"}\n---\n\n# We use httpx instead of requests\n')
    (repo / "src").mkdir()
    (repo / "src" / "api.py").write_text("import httpx\nimport requests\n")

    async def calls(session: ClientSession) -> Any:
        return (await session.call_tool("check_file", {"path": "src/api.py"}),
                await session.call_tool("check_file", {"path": str(tmp_path / "elsewhere.py")}))

    found, outside = with_server(repo, tmp_path / "no.db", tmp_path, calls)
    body = answer(found)
    assert body["file"] == "src/api.py" and body["checks"] == 1
    assert [(h["line"], h["item"], h["statement"]) for h in body["hits"]] == [
        (2, "abcdef0123", "We use httpx instead of requests")]
    assert "not inside the workspace" in error_text(outside)
