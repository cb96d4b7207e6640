"""What the daemon really puts on the wire, written down for the VS Code extension's contract test.

The real `checkpoint serve` (heuristic extractor) reads the sample transcripts plus one session that
edits a workspace file, runs checkpoint.now, answers checkpoint/items, triages an item and publishes
a diagnostic. Each payload is written, as JSON, into vscode-extension/test/golden/, where the vitest
test `protocol.test.ts` checks it against the shapes `src/protocol.ts` declares. The files are
committed and rewritten on every run, so `git diff` shows any change to the wire.

Values that differ from run to run (temporary paths, wall-clock stamps) are replaced by fixed ones of
the same JSON type, so the files change only when the wire does.
"""

from __future__ import annotations

import itertools
import json
import shutil
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from checkpoint.server import protocol
from checkpoint.server.requests.items import plain
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.lsp_support import Daemon, Transcript, server_env, slug
from tests.support.samples import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "vscode-extension" / "test" / "golden"
SESSION_ID = "00000000-0000-4000-8000-00000000c0de"
STABLE_TMP = "/tmp/checkpoint-golden"
WALL_CLOCK_KEYS = {"created_at", "finished_at", "until"}  # stamped when the daemon runs
WALL_CLOCK = 1767225600.0
SESSIONS = 9  # the samples that hold a session, and the one written here


# Lists whose order the daemon does not promise (items made in the same second, sessions with the
# same last turn): sorted, so that only a change of the wire changes the file.
UNORDERED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "items": lambda i: i["id"], "sessions": lambda s: s["id"], "problems": lambda p: (p["path"], p["line"]),
}


def stable(value: Any, tmp: Path) -> Any:
    """`value` with the run's temporary directory (also as a Claude project slug) and wall-clock
    stamps replaced by fixed values, and unordered lists sorted."""
    if isinstance(value, dict):
        out: dict[str, Any] = {
            k: (WALL_CLOCK if k in WALL_CLOCK_KEYS and isinstance(v, int | float) else stable(v, tmp))
            for k, v in value.items()
        }
        for key, order in UNORDERED.items():
            if isinstance(listed := out.get(key), list):
                out[key] = sorted(listed, key=order)
        return out
    if isinstance(value, list):
        return [stable(v, tmp) for v in value]
    if isinstance(value, str):
        return value.replace(str(tmp), STABLE_TMP).replace(slug(tmp), slug(Path(STABLE_TMP)))
    return value


def write_golden(name: str, payload: Any, tmp_path: Path) -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    text = json.dumps(stable(plain(payload), tmp_path), indent=2, sort_keys=True, ensure_ascii=False)
    (GOLDEN / f"{name}.json").write_text(text + "\n", encoding="utf-8")


def from_nothing(daemon: Daemon, shown: dict[str, Any]) -> dict[str, Any]:
    """A status as sent, its delta as the daemon's first one would carry the same list: from nothing
    (version 1, since 0), the whole list changed. Which sessions changed since the status before, and
    the version, depend on how the scans fell; the deltas themselves are test_server_workspace_sessions.py's."""
    sent = daemon.sent(shown)
    delta = {"version": 1, "since": 0, "changed": shown["sessions"], "removed": [], "total": len(shown["sessions"])}
    assert sent["workspace_sessions"]["total"] == delta["total"]
    return {**sent, "workspace_sessions": delta}


def counting_uuids() -> Callable[[], uuid.UUID]:
    """uuid4's stand-in while the transcript is written: its record and turn ids, hence the item ids
    derived from them, come out the same on every run."""
    count = itertools.count(1)
    return lambda: uuid.UUID(int=next(count))


@pytest.fixture
def claude_root(tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "claude" / "projects"
    for sample in sorted((SAMPLES / "claude").glob("*.jsonl")):
        target = root / "samples" / sample.name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sample, target)
    with monkeypatch.context() as patch:
        patch.setattr(uuid, "uuid4", counting_uuids())
        t = Transcript(root, workspace / "src", session_id=SESSION_ID)
        t.write(t.user("Make the queue durable."))
        t.write(t.assistant(
            "We'll use marker-queue for the job queue. The queue must never drop a job. "
            "Open question: should retries back off?",
            edits=[(workspace / "src" / "queue.py", "pass", "        self.jobs.append(job)")],
        ))
    assert t.path.parent.name == slug(workspace / "src")
    return root


@pytest_asyncio.fixture
async def daemon(tmp_path: Path, workspace: Path, claude_root: Path) -> AsyncIterator[Daemon]:
    codex_root = tmp_path / "codex" / "sessions" / "2026" / "01" / "05"
    codex_root.mkdir(parents=True)
    for n, sample in enumerate(sorted((SAMPLES / "codex").glob("*.jsonl")), start=1):
        shutil.copyfile(sample, codex_root / f"rollout-2026-01-05T10-{n:02d}-00-{uuid.UUID(int=0xC0DE0 + n)}.jsonl")
    roots = [claude_root, tmp_path / "codex" / "sessions"]
    env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", roots)
    d = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual", "scope": "all"}})
    yield d
    await d.stop()


@pytest.mark.asyncio(loop_scope="function")
async def test_the_daemon_payloads_are_written_as_golden_files(
    daemon: Daemon, workspace: Path, tmp_path: Path
) -> None:
    before = await daemon.wait_status(
        lambda s: s["sessions_total"] == SESSIONS, what="every session read, nothing extracted yet")
    assert before["last_run"] is None
    assert [s["id"] for s in before["sessions"]] == [SESSION_ID]  # the workspace's; the rest are asked for
    first = next(sent for sent in daemon.record.wire if sent["workspace_sessions"]["changed"])
    assert first["workspace_sessions"]["since"] == 0  # the first delta is from nothing: the whole list
    write_golden("status-before-run", from_nothing(daemon, before), tmp_path)
    listed = await daemon.sessions()
    assert listed["total"] == SESSIONS == len(listed["sessions"])
    write_golden("sessions-result", listed, tmp_path)

    now = await daemon.command(protocol.CMD_NOW)
    assert now["run"]["extractor"] == "heuristic" and now["run"]["captured"] > 0
    write_golden("now-result", now, tmp_path)

    after = await daemon.wait_status(lambda s: s["last_run"] and not s["running"], what="the run's status")
    write_golden("status-after-run", from_nothing(daemon, after), tmp_path)

    raw = await daemon.client.protocol.send_request_async(
        protocol.CHECKPOINT_ITEMS, {"scope": "all"})
    items = plain(raw)
    assert {i["kind"] for i in items["items"]} == {"decision", "constraint", "question"}
    write_golden("items-result", items, tmp_path)

    uri = (workspace / "src" / "queue.py").as_uri()
    diagnostics = await daemon.wait_diagnostics(uri, lambda d: len(d) == 3)
    write_golden("diagnostic-data", sorted((plain(d.data) for d in diagnostics), key=lambda d: d["kind"]), tmp_path)

    # Open Turn: the decision's turn as it was said, with the turns around it.
    turn = plain(await daemon.client.protocol.send_request_async(
        protocol.CHECKPOINT_TURN, {"item": mine_decision(items)}))
    assert [t["cited"] for t in turn["turns"]].count(True) >= 1
    write_golden("turn-result", turn, tmp_path)

    # By hand, as the editor's "Mark as Superseded by…" does; then search finds both ends of the link.
    mine = {i["kind"]: i["id"] for i in items["items"] if i["session_id"] == SESSION_ID}
    old, new = mine["constraint"], mine["decision"]
    superseded = await daemon.command(protocol.CMD_SUPERSEDE, {"old": old, "new": new, "reason": "golden"})
    assert superseded["changed"] is True and superseded["superseded_by"] == new
    write_golden("supersede-result", superseded, tmp_path)
    found = plain(await daemon.client.protocol.send_request_async(
        protocol.CHECKPOINT_SEARCH, {"query": "queue", "scope": "all"}))
    assert {old, new} <= {h["id"] for h in found["items"]}
    write_golden("search-result", found, tmp_path)
    struck = await daemon.wait_diagnostics(uri, lambda d: any(plain(x.data).get("superseded_by") for x in d))
    write_golden("diagnostic-data-superseded",
                 sorted((plain(d.data) for d in struck), key=lambda d: d["kind"]), tmp_path)
    undone = await daemon.command(protocol.CMD_SUPERSEDE, {"old": old, "undo": True})
    assert undone["removed"] == 1
    write_golden("supersede-undo-result", undone, tmp_path)

    decision = next(i for i in items["items"] if i["session_id"] == SESSION_ID and i["kind"] == "decision")
    triage = await daemon.command(protocol.CMD_DISMISS, decision["id"])
    assert triage["changed"] is True
    write_golden("triage-result", triage, tmp_path)

    # The panel's session menu: Open Transcript's files, then Forget (a Codex sample session).
    files = plain(await daemon.client.protocol.send_request_async(protocol.CHECKPOINT_TRANSCRIPTS,
                                                                   {"session": SESSION_ID}))
    assert len(files["files"]) == 1
    write_golden("transcripts-result", files, tmp_path)
    codex = next(s["id"] for s in listed["sessions"] if s["agent"] == "codex")
    forgotten = await daemon.command(protocol.CMD_FORGET, codex)
    assert forgotten["removed"]["sessions"] == 1
    write_golden("forget-result", forgotten, tmp_path)


@pytest.mark.asyncio(loop_scope="function")
async def test_a_failed_run_is_written_as_golden_files(tmp_path: Path, workspace: Path, claude_root: Path) -> None:
    """Failures, causes and last_error are empty in a heuristic run: a refusing (fake) API fills them."""
    for sample in (claude_root / "samples").iterdir():
        sample.unlink()  # only the one session: one refused chunk
    with FakeAnthropic() as fake:
        fake.set_rates({"refusal": 1.0}, seed=1)
        env = server_env(tmp_path / "home", tmp_path / "db" / "checkpoint.db", [claude_root],
                         CHECKPOINT_EXTRACTOR="anthropic", ANTHROPIC_BASE_URL=fake.base_url,
                         ANTHROPIC_API_KEY="sk-ant-golden-0000")
        daemon = await Daemon.start(env, [workspace], {"checkpoint": {"extraction": "manual"}})
        try:
            now = await daemon.command(protocol.CMD_NOW)
            assert now["run"]["failed"] == 1 and now["run"]["failures"]
            write_golden("now-result-failed", now, tmp_path)
            status = await daemon.wait_status(lambda s: s["last_run"] and s["sessions"][0]["causes"])
            write_golden("status-after-failed-run", from_nothing(daemon, status), tmp_path)
            # The session with its cause, as a client out of step asks for the workspace's list.
            listed = await daemon.workspace_sessions()
            assert listed["sessions"] == status["sessions"] and listed["total"] == 1
            assert listed["version"] > 0
            # fixed: how many deltas came before depends on how the scans fell
            write_golden("workspace-sessions-result", {**listed, "version": 1}, tmp_path)
        finally:
            await daemon.stop()


def mine_decision(items: dict[str, Any]) -> str:
    return str(next(i["id"] for i in items["items"] if i["session_id"] == SESSION_ID and i["kind"] == "decision"))


def test_the_protocol_names_are_written_for_the_extension() -> None:
    """The extension's constants.ts is checked against these, so a rename on one side fails a test."""
    commands = {"now": protocol.CMD_NOW, "dismiss": protocol.CMD_DISMISS, "accept": protocol.CMD_ACCEPT,
                "reopen": protocol.CMD_REOPEN,
                "supersede": protocol.CMD_SUPERSEDE, "share": protocol.CMD_SHARE, "forget": protocol.CMD_FORGET}
    assert set(commands.values()) == set(protocol.COMMANDS)  # a new command is added here too
    editor_commands = {"openTurn": protocol.EDITOR_OPEN_TURN, "acceptItem": protocol.EDITOR_ACCEPT,
                       "dismissItem": protocol.EDITOR_DISMISS, "openRecord": protocol.EDITOR_OPEN_RECORD}
    assert set(editor_commands.values()) == set(protocol.EDITOR_COMMANDS)
    names = {
        "server_name": protocol.SERVER_NAME,
        "methods": {"status": protocol.CHECKPOINT_STATUS, "items": protocol.CHECKPOINT_ITEMS,
                    "search": protocol.CHECKPOINT_SEARCH, "sessions": protocol.CHECKPOINT_SESSIONS,
                    "workspaceSessions": protocol.CHECKPOINT_WORKSPACE_SESSIONS, "turn": protocol.CHECKPOINT_TURN,
                    "transcripts": protocol.CHECKPOINT_TRANSCRIPTS},
        "commands": commands,
        # the extension's own commands the daemon links to (hover actions, a diagnostic's code)
        "editor_commands": editor_commands,
        "diagnostic_source": protocol.DIAGNOSTIC_SOURCE,
    }
    GOLDEN.mkdir(parents=True, exist_ok=True)
    (GOLDEN / "protocol-names.json").write_text(json.dumps(names, indent=2, sort_keys=True) + "\n", encoding="utf-8")
