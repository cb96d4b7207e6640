"""`checkpoint --version`: what the VS Code extension compares with its bundled daemon's version
before it uses a `checkpoint` found on PATH (vscode-extension/src/environment.ts)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from checkpoint import cli


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"checkpoint {version('checkpoint-decisions')}\n"


def test_the_daemon_starts_without_the_version_lookup() -> None:
    """The daemon's serverInfo carries the same version, read without importlib.metadata (40-50 ms
    of every start of an editor's daemon)."""
    probe = ("import sys\nfrom checkpoint.server import server\n"
             "print(server.CheckpointServer().version, 'importlib.metadata' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [version("checkpoint-decisions"), "False"]


def test_a_scan_loads_neither_the_version_lookup_nor_logging(tmp_path: Path) -> None:
    """What a scan does not need it does not import (each costs milliseconds at every start): the
    version is looked up only for `--version`, logging only by a process that logs (the server)."""
    roots = tmp_path / "roots"
    roots.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    probe = (
        "import sys\n"
        "from checkpoint import cli\n"
        "try:\n"
        f"    cli.main(['scan', '--db', {str(tmp_path / 'db' / 'c.db')!r}, '--source', {str(roots)!r}])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('importlib.metadata', 'logging') if m in sys.modules))\n"
    )
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Looked in" in done.stdout + done.stderr, done  # no transcripts: said on stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout


@pytest.mark.parametrize("argv", [["mcp"], ["hook", "stop"]])
def test_the_cli_leaves_hook_and_mcp_to_the_entry(argv: list[str], tmp_path: Path) -> None:
    """The entry (checkpoint.startup) alone routes `hook` and `mcp` to their front ends: the CLI, called
    by itself with one, says so and starts neither (it used to route them too)."""
    probe = ("import sys\nfrom checkpoint import cli\ncode = cli.main(sys.argv[1:])\n"
             "print(code, 'checkpoint.agent.hooks' in sys.modules, 'checkpoint.agent.mcp_server' in sys.modules)")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CHECKPOINT_DB": str(tmp_path / "c.db"),
           "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=60, env=env,
                          input="{}")
    assert done.stdout.split() == ["2", "False", "False"], done.stderr
    assert f"`{argv[0]}` runs through the `checkpoint` command (checkpoint.startup)" in done.stderr
    assert not (tmp_path / "c.db").exists()
