"""Numbers out of range and roots that are the whole disk or the home folder are refused, wherever
they come from, through the real `checkpoint` entry: exit 2, one line on stderr naming the setting
(and the layer it came from), nothing written. The old code took them: `--max-requests -1` and
`CHECKPOINT_MAX_COST=-1` quietly extracted nothing, `--chunk-tokens 0` and `--concurrency 0` were
accepted, a root symlinked to `/` crawled the disk. A bad `--kind` is one line too, not argparse's
usage."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_run import cli_env, run


def test_out_of_range_numbers_are_refused_in_one_line_naming_the_setting(tmp_path: Path) -> None:
    home, config, db = tmp_path / "home", tmp_path / "config.toml", tmp_path / "db" / "c.db"
    home.mkdir()
    cases = [  # (environment, config file, arguments, the line said)
        ({}, "", ["now", "--max-requests", "-1"],
         "the command line: max_requests: must be 0 or more (unset: no limit), not -1"),
        ({"CHECKPOINT_MAX_COST": "-1"}, "", ["now"],
         "environment variable CHECKPOINT_MAX_COST: max_cost: must be 0 or more (US dollars; unset: no limit),"
         " not -1.0"),
        ({"CHECKPOINT_MAX_COST": "nan"}, "", ["now"], "environment variable CHECKPOINT_MAX_COST: max_cost: must be"),
        ({}, "", ["now", "--max-tokens", "-5"], "the command line: max_tokens: must be 0 or more"),
        ({}, "", ["scan", "--chunk-tokens", "0"],
         "the command line: chunk_tokens: must be 100 or more (tokens), not 0"),
        ({}, "", ["now", "--concurrency", "0"], "the command line: concurrency: must be from 1 to 64, not 0"),
        ({}, "concurrency = 1000\n", ["now"], f"{config}: concurrency: must be from 1 to 64, not 1000"),
        ({"CHECKPOINT_LEASE_SECONDS": "-3"}, "", ["status"],
         "environment variable CHECKPOINT_LEASE_SECONDS: lease_seconds: must be more than 0 (seconds), not -3.0"),
        ({"CHECKPOINT_MAX_LINE_BYTES": "0"}, "", ["scan"],
         "environment variable CHECKPOINT_MAX_LINE_BYTES: max_line_bytes: must be 1024 or more (bytes), not 0"),
        ({}, "known_items = -1\n", ["now"], f"{config}: known_items: must be 0 or more, not -1"),
        ({}, "max_attempts = 0\n", ["now"], f"{config}: max_attempts: must be 1 or more, not 0"),
        ({}, "", ["items", "--kind", "decisions"],
         "checkpoint: error in the options: --kind: unknown kind 'decisions' (allowed: decision, constraint,"
         " question)"),
        ({}, "", ["search", "x", "--kind", "Decision"], "--kind: unknown kind 'Decision'"),
    ]
    for env_extra, toml, args, said in cases:
        config.write_text(toml)
        env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db), **env_extra)
        result = run(args, env, timeout=30)
        lines = result.err.splitlines()
        assert (result.rc, result.out, len(lines)) == (2, "", 1), (args, env_extra, toml, result)
        assert said in lines[0], (said, lines[0])
        assert not db.exists()
    # At the edges, the values are taken.
    config.write_text("max_requests = 0\nconcurrency = 64\nchunk_tokens = 100\n")
    env = cli_env(home, CHECKPOINT_CONFIG=str(config), CHECKPOINT_DB=str(db), CHECKPOINT_MAX_COST="0",
                  CHECKPOINT_SOURCES=str(tmp_path / "none"))
    run(["scan"], env, timeout=30).check()


def test_a_source_root_that_is_the_disk_or_home_itself_is_refused(tmp_path: Path) -> None:
    home, db = tmp_path / "home", tmp_path / "db" / "c.db"
    home.mkdir()
    to_root, to_home = tmp_path / "to-root", tmp_path / "to-home"
    to_root.symlink_to("/")
    to_home.symlink_to(home)
    cases = [  # (environment, arguments, what it is)
        ({}, ["scan", "--source", "/"], "the file system's root"),
        ({}, ["scan", "--source", str(to_root)], "the file system's root"),
        ({"CHECKPOINT_SOURCES": str(to_root)}, ["status"], "the file system's root"),
        ({}, ["now", "--source", str(home)], "the home folder itself"),
        ({"CHECKPOINT_SOURCES": f"{tmp_path / 'fine'}:{to_home}"}, ["scan"], "the home folder itself"),
        ({}, ["scan", "--source", f"{home}/.claude/.."], "the home folder itself"),
    ]
    empty_config = tmp_path / "empty-config.toml"  # not the user's: a CHECKPOINT_CONFIG must exist
    empty_config.write_text("")
    for env_extra, args, what in cases:
        env = cli_env(home, CHECKPOINT_CONFIG=str(empty_config), CHECKPOINT_DB=str(db), **env_extra)
        result = run(args, env, timeout=30)
        lines = result.err.splitlines()
        assert (result.rc, result.out, len(lines)) == (2, "", 1), (args, env_extra, result)
        assert lines[0].startswith("checkpoint: error in the settings: ") and "sources: " in lines[0], lines[0]
        assert what in lines[0] and "name the folder that holds the transcripts" in lines[0], lines[0]
        assert not db.exists()
    # A folder inside home is fine.
    env = cli_env(home, CHECKPOINT_CONFIG=str(empty_config), CHECKPOINT_DB=str(db))
    run(["scan", "--source", str(home / ".claude" / "projects")], env, timeout=30).check()
