"""An unknown extractor name is refused, wherever it comes from (the config file, the environment,
the command line), through the real `checkpoint` entry: exit 2, one line on stderr naming the
setting, where it came from, the bad value and the known names; nothing runs, nothing is written,
no request leaves. (The old code ran another extractor without a word.) The daemon's path, the
editor's settings, is tests/server/test_server_extractor_name.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from checkpoint.config import EXTRACTORS
from tests.support.cli_run import cli_env, run
from tests.support.fake_anthropic import FakeAnthropic

KNOWN = f"(known: {', '.join(EXTRACTORS)}; leave it unset to choose automatically)"  # as registered


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def test_an_unknown_extractor_name_exits_2_with_one_line_saying_where_it_came_from(
    tmp_path: Path, fake: FakeAnthropic
) -> None:
    home, config, db = tmp_path / "home", tmp_path / "config.toml", tmp_path / "db" / "c.db"
    transcript = home / ".claude" / "projects" / "-w" / "5e55a0a0-0000-4000-8000-000000000001.jsonl"
    transcript.parent.mkdir(parents=True)
    transcript.write_text('{"type":"user","uuid":"u1","sessionId":"5e55a0a0-0000-4000-8000-000000000001",'
                          '"message":{"role":"user","content":"We\'ll use SQLite."}}\n')
    cases = [  # (environment, config file, arguments, where)
        ({"CHECKPOINT_EXTRACTOR": "bogus"}, "", ["now"], "environment variable CHECKPOINT_EXTRACTOR"),
        ({"CHECKPOINT_EXTRACTOR": "Anthropic"}, "", ["now", "--json"], "environment variable CHECKPOINT_EXTRACTOR"),
        ({}, 'extractor = "bogus"\n', ["now"], str(config)),
        ({}, 'extractor = "claude"\n', ["scan"], str(config)),
        ({}, "", ["now", "--extractor", "bogus"], "the command line"),
        # A good name in the file does not excuse a bad one on top of it, nor the reverse.
        ({"CHECKPOINT_EXTRACTOR": "heuristic"}, "", ["now", "--extractor", "bogus"], "the command line"),
        ({"CHECKPOINT_EXTRACTOR": "bogus"}, 'extractor = "heuristic"\n', ["now"],
         "environment variable CHECKPOINT_EXTRACTOR"),
        ({"CHECKPOINT_EXTRACTOR": "bogus"}, "", ["serve"], "environment variable CHECKPOINT_EXTRACTOR"),
    ]
    for env_extra, toml, args, where in cases:
        config.write_text(toml)
        env = cli_env(home, **fake.env(), CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db), **env_extra)
        result = run(args, env, timeout=30)
        bad = env_extra.get("CHECKPOINT_EXTRACTOR") if where != str(config) else toml.split('"')[1]
        if "--extractor" in args:
            bad = args[-1]
        said = f"checkpoint: error in the settings: {where}: extractor: unknown extractor {bad!r} {KNOWN}"
        assert (result.rc, result.out, result.err.splitlines()) == (2, "", [said]), (args, env_extra, toml, result)
        assert not db.exists()
    assert fake.message_requests == []


def test_every_known_extractor_name_is_taken_and_listed_in_the_help(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "home", CHECKPOINT_DB=str(tmp_path / "c.db"))
    help_text = run(["now", "--help"], env).check().out
    assert "--extractor {" + ",".join(EXTRACTORS) + "}" in help_text, help_text
    for name in EXTRACTORS:  # each is a valid setting (which one runs and why is choose.py's to say)
        result = run(["scan", "--json"], {**env, "CHECKPOINT_EXTRACTOR": name})
        assert result.rc == 0, result
    assert "Using the offline heuristic" in run(["now", "--extractor", "heuristic"], env).check().out
