"""`checkpoint --version`: what the VS Code extension compares with its bundled daemon's version
before it uses a `checkpoint` found on PATH (vscode-extension/src/environment.ts)."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from checkpoint import cli


def test_version_is_the_installed_distributions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"checkpoint {version('checkpoint')}\n"
