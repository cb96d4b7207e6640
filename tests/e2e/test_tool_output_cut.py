"""Tool output as context, by a named policy (issue 40): each tool result is stored and sent as its
head with its size and kind, what was left out is counted under policy `tool_output` and said by
`checkpoint now` and `checkpoint status`; what the person said and what the agent wrote to files are
never cut. End to end: the real `checkpoint` process, a Claude Code transcript on disk, the real
anthropic SDK against the fake API (which sees exactly what is sent)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import cli_env, query, run
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.lsp_support import Transcript

SAID = "We'll use marker-0a1b2c3d4e5f for the queue. " + "The person explains at length why. " * 150
WRITTEN = "def put(self, job):\n" + "    self.jobs.append(job)  # kept whole\n" * 150
OUTPUT = "\n".join(f"test_{n} PASSED in 0.01s" for n in range(400))  # ~10,000 characters of tool output


def test_tool_output_is_sent_as_its_head_and_the_rest_is_counted(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    db = home / ".local" / "share" / "checkpoint" / "checkpoint.db"
    transcript = Transcript(home / ".claude" / "projects", project)
    transcript.write(transcript.user(SAID))
    transcript.write(transcript.assistant("Writing the queue.", edits=[(project / "q.py", "pass", WRITTEN)]))
    msg = "msg_bash_0001"
    transcript.write([
        transcript._assistant_line(msg, {"type": "tool_use", "id": "toolu_bash_1", "name": "Bash",
                                         "input": {"command": "pytest"}}),
        transcript._record(type="user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_bash_1", "content": OUTPUT}]}),
    ])

    with FakeAnthropic() as fake:
        env = cli_env(home, **fake.env(), CHECKPOINT_EXTRACTOR="anthropic", CHECKPOINT_TOOL_OUTPUT_CHARS="500")
        now = run(["now"], env).check()
        prompts = "\n".join(block["text"] for r in fake.message_requests if r.body for m in r.body["messages"]
                             for block in m["content"] if block.get("type") == "text")

    (kept, chars), = query(db, "SELECT records, chars FROM drops WHERE policy = 'tool_output'")
    assert kept == 1 and len(OUTPUT) - 500 <= chars < len(OUTPUT)
    assert (f"Tool output left out by policy (tool_output_chars): {chars:,} characters of tool results in 1 record"
            in now.out), now.out
    # Sent: the head, and a line saying how much of what was left out; never the rest.
    assert "test_0 PASSED" in prompts and "test_399 PASSED" not in prompts
    assert f"characters left out; {400:,} lines of text)" in prompts
    # What the person said and what the agent wrote are sent whole (the edit as the call's input).
    assert SAID.strip() in prompts
    assert json.dumps(WRITTEN)[1:-1] in prompts  # the Edit call, its arguments as JSON
    (edit,), = query(db, "SELECT text FROM turn_edits")
    assert edit.strip() == WRITTEN.strip()
    # The item said by the person is captured.
    assert query(db, "SELECT count(*) FROM items WHERE statement LIKE '%marker-0a1b2c3d4e5f%'") == [(1,)]

    status = run(["status"], env).check().out
    assert f"tool_output 1 record ({chars} chars)" in status, status
