"""End to end with the claude-code extractor: the real `checkpoint` process runs the REAL Claude Code
CLI (2.1.328, pinned; scripts/install-agent-clis.sh), which talks over HTTP to the fake API on
127.0.0.1 (never the live API), with a temp HOME (`clean_env`) and a dummy key or planted login.

- A multi-session corpus with CHECKPOINT_EXTRACTOR=claude-code under injected 500/529 faults and a
  run killed mid-way, then rerun: every planted decision is captured exactly once, the faults were
  retried by Checkpoint (Claude Code's own retries are off), no transcript of the extractor's runs is
  written under HOME, and HOME/.claude/projects is one of the sources.
- A transcript of an extractor run that does exist (the CLI run without --no-session-persistence in
  the extractor's working directory) is not ingested; the same file under another slug is.
- No API key but a subscription-style login (a planted ~/.claude/.credentials.json): chosen
  automatically, and it extracts.
- `claude` missing: `now` says so and why, and falls back. `claude` failing (the fake refuses its key):
  the run stops, and `now` and `status` give the cause with its fix; the key is never printed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from checkpoint.config import extractor_workdir
from checkpoint.extract.prompt import SYSTEM_PROMPT
from checkpoint.sources.claude_code import project_slugs
from tests.support import cli_run, synth
from tests.support.agent_clis import agent_cli, clean_env
from tests.support.fake_anthropic import FakeAnthropic

MODEL = "claude-haiku-4-5"
DUMMY_KEY = "sk-ant-dummy-stands-in-for-a-login-4242"


@dataclass
class Setup:
    home: Path
    db: Path
    corpus: synth.Corpus
    fake: FakeAnthropic

    @property
    def own_projects(self) -> Path:
        return self.home / ".claude" / "projects"

    def env(self, **extra: str) -> dict[str, str]:
        config = self.home / "checkpoint.toml"
        config.write_text("retry_delay = 0.05\nretry_max_delay = 0.2\nrequest_timeout = 30.0\n")
        sources = os.pathsep.join(str(p) for p in (self.corpus.claude_root, self.corpus.codex_root, self.own_projects))
        env = clean_env(self.home, ANTHROPIC_BASE_URL=self.fake.base_url, ANTHROPIC_API_KEY=DUMMY_KEY,
                        CHECKPOINT_EXTRACTOR="claude-code", CHECKPOINT_MODEL=MODEL, CHECKPOINT_DB=str(self.db),
                        CHECKPOINT_SOURCES=sources, CHECKPOINT_CHUNK_TOKENS="16000", CHECKPOINT_CONFIG=str(config),
                        CHECKPOINT_LEASE_SECONDS="1", LC_ALL="C.UTF-8", PYTHONDONTWRITEBYTECODE="1")
        return env | extra

    def run(self, *args: str, env: dict[str, str] | None = None) -> cli_run.Result:
        result = cli_run.run(list(args), env or self.env(), timeout=120)
        assert DUMMY_KEY not in result.out + result.err
        return result

    def markers(self, env: dict[str, str] | None = None) -> Counter[tuple[str, str]]:
        items = self.run("items", "--json", env=env).check().json()["items"]
        return Counter((sid, marker) for sid, _, marker in cli_run.item_markers(items))


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[Setup]:
    agent_cli("claude")  # installed (once), or the test fails saying how to install it
    home = tmp_path / "home"
    home.mkdir()
    corpus = synth.write_corpus(tmp_path / "corpus", sessions=4, turns=30, chars=9_000, seed=11)
    with FakeAnthropic() as fake:
        yield Setup(home, tmp_path / "data" / "checkpoint.db", corpus, fake)


def planted(corpus: synth.Corpus) -> Counter[tuple[str, str]]:
    return Counter((sid, m) for sid, ms in corpus.markers.items() for m in ms)


def transcripts_under(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.jsonl")) if folder.exists() else []


def test_every_planted_decision_once_under_faults_and_a_killed_run(setup: Setup) -> None:
    started = time.monotonic()
    setup.fake.set_rates({"api_error": 0.15, "overloaded": 0.15}, seed=4)
    env = setup.env(CHECKPOINT_CHUNK_TOKENS="1500")  # several chunks per session: a run to kill mid-way
    logs = setup.home.parent
    killed = cli_run.start(["now"], env, logs / "killed.out", logs / "killed.err")
    deadline = time.monotonic() + 60
    while sum(r.status == 200 for r in setup.fake.message_requests) < 3 and time.monotonic() < deadline:
        assert killed.poll() is None, (logs / "killed.out").read_text() + (logs / "killed.err").read_text()
        time.sleep(0.05)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    answered_before_rerun = len(setup.fake.message_requests)

    for _ in range(4):  # the killed run's leases expire after 1 s; a rerun then takes its chunks
        time.sleep(1.2)
        now = setup.run("now", env=env)
        # The version the installed CLI says (the pinned one in CI, the newest in scripts/check-releases.sh).
        version = subprocess.run([str(agent_cli("claude")), "--version"], capture_output=True, text=True,
                                 timeout=60).stdout.split()[0]
        assert "Using Claude through the Claude Code CLI (claude-haiku-4-5; the CLI's own login): " \
               f"Claude Code {version}, api_key login (as configured)." in now.out, now.out
        status = setup.run("status", "--json", env=env).check().json()
        if status["totals"]["pending"] == 0 and status["totals"]["failed"] == 0:
            break
    assert status["totals"]["captured"] == status["totals"]["turns"] > 0, now.out

    assert setup.markers() == planted(setup.corpus)  # every one, exactly once
    requests = setup.fake.message_requests
    faults = Counter(r.fault for r in requests if r.fault)
    assert faults["api_error"] and faults["overloaded"], faults
    assert len(requests) > answered_before_rerun
    assert {r.model for r in requests} == {MODEL}
    # Claude Code's own retries are off: each faulted request is Checkpoint's attempt, counted.
    spent = sum(s["usage"]["requests"] for s in status["sessions"])
    rerun_requests = len(requests) - answered_before_rerun
    assert spent >= rerun_requests, (spent, rerun_requests)
    # No transcript of any extractor run under the temp HOME, though it was one of the sources.
    assert transcripts_under(setup.own_projects) == []
    assert transcripts_under(extractor_workdir(setup.db)) == []
    print(f"claude-code e2e: {len(requests)} requests, faults {dict(faults)}, "
          f"{time.monotonic() - started:.1f} s")


def test_a_transcript_of_an_extractor_run_is_not_ingested_even_when_it_exists(setup: Setup) -> None:
    workdir = extractor_workdir(setup.db)
    workdir.mkdir(parents=True)
    marker = "marker-0e0e0e0e0e0e"
    request = f"Session own-run (claude).\n[t1 user]\nWe'll use {marker} for the audit layer.\n"
    env = setup.env(CHECKPOINT_EXTRACTOR="heuristic")  # which extractor reads the corpus is not the point here
    # The CLI as an older one might run it: persisting its session, in the extractor's working directory.
    subprocess.run([str(agent_cli("claude")), "-p", "--output-format", "json", "--tools", "",
                    "--system-prompt", SYSTEM_PROMPT, "--model", MODEL, "--json-schema", '{"type":"object"}'],
                   input=request, env=env, cwd=workdir, capture_output=True, text=True, timeout=60, check=True)
    written = transcripts_under(setup.own_projects)
    assert len(written) == 1 and written[0].parent.name in project_slugs(workdir), written

    setup.run("now", env=env).check()
    assert marker not in {m for _, m in setup.markers(env)}
    sessions = {s["id"] for s in setup.run("status", "--json", env=env).check().json()["sessions"]}
    assert written[0].stem not in sessions

    # The control: the same file under another project's slug is a session like any other.
    elsewhere = setup.own_projects / "-home-dev-elsewhere" / written[0].name
    elsewhere.parent.mkdir()
    shutil.copy(written[0], elsewhere)
    setup.run("now", env=env).check()
    sessions = {s["id"] for s in setup.run("status", "--json", env=env).check().json()["sessions"]}
    assert written[0].stem in sessions


def test_a_subscription_login_is_chosen_automatically_and_extracts(setup: Setup) -> None:
    credentials = setup.home / ".claude" / ".credentials.json"
    credentials.parent.mkdir(parents=True)
    credentials.write_text(json.dumps({"claudeAiOauth": {
        "accessToken": "sk-ant-oat01-planted", "refreshToken": "sk-ant-ort01-planted", "expiresAt": 4102444800000,
        "scopes": ["user:inference", "user:profile"], "subscriptionType": "pro"}}))
    credentials.chmod(0o600)
    env = {k: v for k, v in setup.env().items() if k not in ("ANTHROPIC_API_KEY", "CHECKPOINT_EXTRACTOR")}

    now = setup.run("now", env=env).check()

    assert "claude.ai login (no ANTHROPIC_API_KEY set; the claude CLI is logged in)." in now.out, now.out
    assert "with the claude-code extractor" in now.out
    assert setup.markers(env) == planted(setup.corpus)
    assert {r.auth for r in setup.fake.message_requests} == {"bearer"}
    assert transcripts_under(setup.own_projects) == []


def test_without_a_login_the_automatic_choice_says_why_and_falls_back(setup: Setup) -> None:
    env = {k: v for k, v in setup.env().items() if k not in ("ANTHROPIC_API_KEY", "CHECKPOINT_EXTRACTOR")}
    now = setup.run("now", env=env).check()
    assert ("Using the offline heuristic extractor (phrase rules, no network): no ANTHROPIC_API_KEY; Claude Code is "
            "not logged in (run `claude auth login`); ") in now.out, now.out
    assert "\nFor a model: " in now.out
    assert setup.fake.message_requests == []


def test_claude_missing_says_why_in_now_and_falls_back(setup: Setup) -> None:
    env = setup.env(PATH="/usr/bin:/bin")
    now = setup.run("now", env=env).check()
    assert ("The claude-code extractor was asked for, but `claude` not found on PATH (install Claude Code: "
            "npm install -g @anthropic-ai/claude-code, or set claude_command): using the offline heuristic "
            "extractor instead") in now.out, now.out
    assert "with the heuristic extractor" in now.out
    assert setup.fake.message_requests == []


def test_claude_failing_stops_the_run_with_its_cause_in_now_and_status(setup: Setup) -> None:
    setup.fake.api_key = "sk-ant-the-only-key-the-fake-takes"  # the CLI's dummy key is refused: 401

    now = setup.run("now")

    assert now.rc == 1, now.out
    cause = "Claude Code's login was refused (401: Invalid API key · Fix external API key): run `claude auth login`"
    assert f"Stopped: {MODEL}: {cause}; the rest stays pending" in now.out, now.out
    status = setup.run("status").check()
    assert f"failing: {MODEL}: {cause}" in status.out, status.out
    assert len(setup.fake.message_requests) <= 2  # not retried: no other chunk would fare better
    totals = setup.run("status", "--json").check().json()["totals"]
    assert totals["captured"] == 0 and totals["pending"] + totals["failed"] == totals["turns"]
