"""End to end with Gemini CLI: the REAL gemini CLI (0.61.0, pinned; scripts/install-agent-clis.sh)
writes a session under a temp HOME, talking to the fake Gemini API on 127.0.0.1; then the real
`checkpoint` process, with no CHECKPOINT_SOURCES (so HOME/.gemini/tmp is found as a default root),
extracts through the fake Anthropic API: the decision the model said once is exactly one item, in
the Gemini session, whose workspace is the folder gemini ran in; a second `now` adds nothing."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from pathlib import Path

from tests.support import cli_run
from tests.support.agent_clis import agent_cli, clean_env
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_gemini import FakeGemini, GeminiRequest
from tests.support.gemini_transcripts import SETTINGS

MARKER = "marker-9e0e0e0e"


def _answer(request: GeminiRequest) -> str | list[dict[str, object]]:
    if "write_file" in request.responses:
        return f"Done. We'll use {MARKER} for the cache layer."
    return [{"functionCall": {"name": "write_file", "args": {"file_path": "cache.md", "content": "# Cache\n"}}}]


def test_a_decision_in_a_real_gemini_session_is_one_item(tmp_path: Path) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    (home / ".gemini").mkdir(parents=True)
    work.mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps(SETTINGS))
    with FakeGemini(responder=_answer) as gemini:
        result = subprocess.run([str(agent_cli("gemini")), "-p", "Decide on the cache and note it in cache.md.",
                                 "-m", "gemini-2.5-flash", "--skip-trust", "--approval-mode", "yolo"],
                                cwd=work, env=clean_env(home, **gemini.env()), capture_output=True, text=True,
                                timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (work / "cache.md").read_text() == "# Cache\n"
    [session_file] = (home / ".gemini" / "tmp").glob("*/chats/session-*.jsonl")

    db = tmp_path / "data" / "checkpoint.db"
    with FakeAnthropic() as fake:
        env = cli_run.cli_env(home, CHECKPOINT_DB=str(db), CHECKPOINT_EXTRACTOR="anthropic",
                              CHECKPOINT_MODEL="claude-haiku-4-5", **fake.env())
        cli_run.run(["now"], env).check()
        items = cli_run.run(["items", "--json"], env).check().json()["items"]
        again = cli_run.run(["now"], env).check()
    markers = Counter(m for _, _, m in cli_run.item_markers(items))
    assert markers == Counter({MARKER: 1}), (items, again.out)
    [(session_id, agent, cwd)] = cli_run.query(db, "SELECT id, agent, cwd FROM sessions")
    assert (agent, cwd) == ("gemini", str(work))
    assert session_id == json.loads(session_file.read_text().splitlines()[0])["sessionId"]
    assert items[0]["session_id"] == session_id
    touched = [json.loads(f) for (f,) in cli_run.query(db, "SELECT files FROM turns WHERE files != '[]'")]
    assert touched == [[str(work / "cache.md")]]
    sent = [r for r in fake.requests if r.endpoint == "messages"]
    assert len(sent) == 1 and "<session_context>" not in json.dumps(sent[0].body)
