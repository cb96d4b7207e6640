"""The daemon honours the engine settings the CLI honours: the same run layer builds one run from
them for both. Each test sets a setting in the config file both front ends read, runs `checkpoint
serve` (through pytest-lsp) and, where a model is needed, the fake Anthropic API, and checks what
reached the model or what the run did; `known_items` is checked against the CLI's own run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from checkpoint.server.protocol import CMD_NOW
from tests.support.cli_run import cli_env, query, run
from tests.support.fake_anthropic import FakeAnthropic, ModelSpec, known_items
from tests.support.lsp_support import Daemon, Transcript, server_env

pytestmark = pytest.mark.asyncio(loop_scope="function")

MODEL = "claude-haiku-4-5"
SESSION = "5e55a0a0-0000-4000-8000-000000000001"  # the same in both front ends' databases: the same item ids


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as running:
        yield running


def configure(home: Path, **values: object) -> None:
    """The config file both front ends read (the daemon's HOME is this one too)."""
    conf = home / ".config" / "checkpoint"
    conf.mkdir(parents=True, exist_ok=True)
    conf.joinpath("config.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in values.items()))


def claude_env(fake: FakeAnthropic) -> dict[str, str]:
    return {**fake.env(), "CHECKPOINT_EXTRACTOR": "anthropic"}


async def start(tmp_path: Path, home: Path, db: Path, root: Path, **env: str) -> Daemon:
    return await Daemon.start(server_env(home, db, [root], **env), [], {"checkpoint": {"extraction": "manual"}})


def recorded(transcript: Transcript, start: int, count: int) -> None:
    """`count` user turns, each planting one decision the fake answers with."""
    for n in range(start, start + count):
        transcript.write(transcript.user(f"We'll use marker-{n:04x} for part {n}."))


def known_markers(fake: FakeAnthropic) -> list[list[str]]:
    """Per message request: the markers of the items listed under "Already recorded", sorted."""
    return [sorted(known_items(prompt_of(r.body or {}))) for r in fake.message_requests]


def prompt_of(body: dict[str, Any]) -> str:
    """The text of a request's user messages, as the fake's responder reads it."""
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        texts += [b["text"] for b in blocks if message["role"] == "user" and b.get("type") == "text"]
    return "\n\n".join(texts)


async def test_known_items_reach_the_model_as_configured_like_with_the_cli(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    # Run 1 captures three decisions; run 2, on one more turn, shows the model the latest known items:
    # the configured one, not the default 30.
    shown: dict[str, list[list[str]]] = {}
    for front in ("cli", "daemon"):
        base = tmp_path / front
        home, db, root = base / "home", base / "db" / "checkpoint.db", base / "claude" / "projects"
        configure(home, known_items=1)
        transcript = Transcript(root, base / "project", session_id=SESSION)
        recorded(transcript, 0xA0, 3)
        before = len(fake.message_requests)
        if front == "cli":
            env = cli_env(home, **claude_env(fake))
            args = ["--db", str(db), "--source", str(root)]
            run(["now", *args], env=env).check()
            recorded(transcript, 0xA3, 1)
            run(["now", *args], env=env).check()
        else:
            daemon = await start(tmp_path, home, db, root, **claude_env(fake))
            try:
                await daemon.wait_status(lambda s: s["totals"]["turns"] == 3, what="the first turns")
                first = await daemon.command(CMD_NOW)
                assert first["run"]["captured"] == 1 and first["run"]["items_added"] == 3, first
                recorded(transcript, 0xA3, 1)
                await daemon.wait_status(lambda s: s["totals"]["turns"] == 4, what="the new turn")
                second = await daemon.command(CMD_NOW)
                assert second["run"]["captured"] == 1 and second["run"]["failed"] == 0, second
            finally:
                await daemon.stop()
        shown[front] = known_markers(fake)[before:]
    assert len(shown["cli"]) == 2 and shown["cli"][0] == [], shown
    assert len(shown["cli"][1]) == 1, shown  # one of the three, as configured (the default shows 30)
    assert shown["daemon"] == shown["cli"], shown


async def test_new_chunks_fit_the_model_window_as_with_the_cli(tmp_path: Path) -> None:
    # A window far smaller than the configured chunk size: the CLI forms chunks that fit it from the
    # start (none is found too large and re-split when sent), and so must the daemon.
    with FakeAnthropic(models=[ModelSpec(MODEL, max_input_tokens=3_000, max_tokens=500)]) as fake:
        home, db, root = tmp_path / "home", tmp_path / "db" / "checkpoint.db", tmp_path / "claude" / "projects"
        root.mkdir(parents=True)
        configure(home, chunk_tokens=50_000, output_tokens=500)
        daemon = await start(tmp_path, home, db, root, **claude_env(fake))
        try:
            empty = await daemon.command(CMD_NOW)  # the extractor is chosen and its window learnt
            assert empty["run"]["tried"] == 0
            transcript = Transcript(root, tmp_path / "project")
            for n in range(40):
                transcript.write(transcript.user(f"We'll use marker-{n:04x} for part {n}. " + "words " * 120))
            await daemon.wait_status(lambda s: s["totals"]["turns"] == 40, what="the turns")
            result = await daemon.command(CMD_NOW)
        finally:
            await daemon.stop()
    run = result["run"]
    assert run["failed"] == 0 and run["captured"] > 1, run
    assert run["tried"] == run["captured"], f"a chunk was formed too large for the window and re-split: {run}"
    sizes = [size for (size,) in query(db, "SELECT tokens FROM chunks")]
    assert sizes and max(sizes) < 3_000, sizes


async def test_the_request_budget_holds_across_the_sessions_of_one_run(tmp_path: Path) -> None:
    home, db, root = tmp_path / "home", tmp_path / "db" / "checkpoint.db", tmp_path / "claude" / "projects"
    configure(home, max_requests=3, chunk_tokens=300)
    for s in range(2):
        transcript = Transcript(root, tmp_path / f"project{s}")
        for n in range(4):
            transcript.write(transcript.user(f"We'll use marker-{s}{n:03x} for part {n}. " + "words " * 150))
    daemon = await start(tmp_path, home, db, root)
    try:
        await daemon.wait_status(lambda s: s["totals"]["turns"] == 8, what="the turns")
        result = await daemon.command(CMD_NOW)
        status = await daemon.wait_status(lambda s: s["last_run"], what="the last run")
    finally:
        await daemon.stop()
    run = result["run"]
    assert run["tried"] == 3 and run["captured"] == 3, run
    assert run["stopped_by"] == "request budget of 3 reached", run
    assert query(db, "SELECT count(*) FROM chunks WHERE state = 'captured'") == [(3,)]
    assert status["last_run"]["stopped_by"] == run["stopped_by"]


async def test_the_token_budget_stops_a_daemon_run_with_the_model(tmp_path: Path, fake: FakeAnthropic) -> None:
    home, db, root = tmp_path / "home", tmp_path / "db" / "checkpoint.db", tmp_path / "claude" / "projects"
    configure(home, max_tokens=8_000, chunk_tokens=400, concurrency=1)
    transcript = Transcript(root, tmp_path / "project")
    for n in range(6):
        transcript.write(transcript.user(f"We'll use marker-{n:04x} for part {n}. " + "words " * 150))
    daemon = await start(tmp_path, home, db, root, **claude_env(fake))
    try:
        await daemon.wait_status(lambda s: s["totals"]["turns"] == 6, what="the turns")
        result = await daemon.command(CMD_NOW)
    finally:
        await daemon.stop()
    run = result["run"]
    billed = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    spent = sum(r.usage[key] for r in fake.message_requests if r.usage for key in billed)
    assert run["stopped_by"] == "token budget of 8,000 reached", run
    assert 0 < run["captured"] < 6 and spent <= 8_000, (run, spent)
