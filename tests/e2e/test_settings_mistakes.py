"""A new user's settings mistakes, through the real `checkpoint` entry: a CHECKPOINT_CONFIG that names no
file is an error naming the path (not silently ignored), an unknown setting in the config file is
answered with the one it most likely meant, and an unknown option before the command is called
unknown (not "the following arguments are required: command")."""

from __future__ import annotations

from pathlib import Path

from tests.support.cli_run import cli_env, run


def test_a_config_file_that_does_not_exist_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "config.toml"
    env = cli_env(tmp_path / "home", CHECKPOINT_CONFIG=str(missing))

    for command in (["status"], ["now"], ["items"]):
        done = run(command, env)
        assert (done.rc, done.out) == (2, ""), command
        assert done.err == (f"checkpoint: error in the settings: CHECKPOINT_CONFIG names {missing}, which does not "
                            "exist (create it, or unset CHECKPOINT_CONFIG)\n"), command
    assert not (tmp_path / "home" / ".local").exists()  # nothing was written


def test_an_unknown_setting_says_which_one_was_meant(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("chunk_token = 2000\nconcurency = 2\nno_such_thing = 1\n")

    done = run(["status"], cli_env(tmp_path / "home", CHECKPOINT_CONFIG=str(config)))

    assert (done.rc, done.out) == (2, "")
    assert done.err == (f"checkpoint: error in the settings: {config}: unknown settings: chunk_token (did you mean "
                        "chunk_tokens?), concurency (did you mean concurrency?), no_such_thing\n")


def test_an_unknown_option_before_the_command_is_called_unknown(tmp_path: Path) -> None:
    env = cli_env(tmp_path / "home")

    for args in (["--bogus"], ["--bogus", "status"], ["--db", "x.db", "status"]):
        done = run(args, env)
        assert (done.rc, done.out) == (2, ""), args
        assert done.err.startswith("usage: checkpoint "), (args, done.err)
        assert done.err.splitlines()[-1] == (
            f"checkpoint: error: unknown option {args[0]} (a command's options come after it: "
            f"`checkpoint COMMAND --help` lists them)"), args
        assert "the following arguments are required" not in done.err
    assert run(["--version"], env).check().out.startswith("checkpoint ")
