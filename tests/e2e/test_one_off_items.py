"""Orders about the task at hand (issue 39), through the real `checkpoint` processes: a captured session
said two lasting rules and two orders for its own run ("Don't stop until ...", "... when you're done").
All four stay in the session's items, the orders marked one-off; the SessionStart hook of a later
session and the MCP tools (unless asked for them) are not given the orders; `checkpoint share` refuses
one."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.support.agent_corpus import PlannedSession, capture, write_claude_session

CHECKPOINT = Path(sys.executable).with_name("checkpoint")
ONE_OFF = ["Don't stop until all functions are ported, tests pass, and you have 100% coverage.",
           "We decided to delete all the Python source files when you're done."]
LASTING = ["We'll use Redis for the cache.", "Never commit the generated parser tables."]


def mcp_answers(cwd: Path, env: dict[str, str], *calls: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    params = StdioServerParameters(command=str(CHECKPOINT), args=["mcp"], cwd=str(cwd), env=env)

    async def main() -> list[Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return [await asyncio.wait_for(session.call_tool(name, args), timeout=60) for name, args in calls]

    answers = []
    for result in asyncio.run(main()):
        assert not result.is_error, result.content
        answers.append(json.loads(result.content[0].text))
    return answers



def test_one_off_orders_stay_in_their_session_and_reach_no_later_one(tmp_path: Path) -> None:
    ws, projects, db = tmp_path / "ws", tmp_path / "projects", tmp_path / "data" / "checkpoint.db"
    ws.mkdir()
    write_claude_session(projects, PlannedSession("sess-task", str(ws), [*LASTING, *ONE_OFF]))
    capture(db, projects)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "CHECKPOINT_DB": str(db),
           "CHECKPOINT_SOURCES": str(projects), "CHECKPOINT_EXTRACTOR": "heuristic",
           "XDG_CONFIG_HOME": str(tmp_path / ".config")}

    def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(CHECKPOINT), *args], capture_output=True, text=True, env=env, timeout=60,
                              check=check)

    items: list[dict[str, Any]] = json.loads(cli("items", "--json").stdout)["items"]
    assert sorted((i["statement"], i["lasting"]) for i in items) == sorted(
        [(s, True) for s in LASTING] + [(s, False) for s in ONE_OFF])
    listing = cli("items").stdout
    for item in items:
        line = next(x for x in listing.splitlines() if f"({item['id']})" in x)
        assert ("[one-off: for its own task only]" in line) is (not item["lasting"]), line

    out = subprocess.run([str(CHECKPOINT), "hook", "session-start"], capture_output=True, env=env, timeout=30,
                         input=json.dumps({"session_id": "later", "cwd": str(ws),
                                           "hook_event_name": "SessionStart"}).encode(), check=True).stdout
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "Redis for the cache" in context and "parser tables" in context
    assert "Don't stop until" not in context and "when you're done" not in context

    listed, searched, asked = mcp_answers(ws, env, ("list_decisions", {}), ("search_decisions", {"query": "stop"}),
                                          ("search_decisions", {"query": "stop", "include_one_off": True}))
    assert sorted(i["statement"] for i in listed["items"]) == sorted(LASTING)
    assert searched["items"] == []
    assert [i["statement"] for i in asked["items"]] == [ONE_OFF[0]]

    order = next(i["id"] for i in items if not i["lasting"])
    refused = cli("share", order, check=False)
    assert refused.returncode != 0
    assert f"item {order} is an order about the task it was said in (one-off)" in refused.stderr + refused.stdout
