"""Where the real agent CLIs are (installed, pinned, by scripts/install-agent-clis.sh), and a clean
environment to run one in: a temp HOME, no real credentials, no side traffic."""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from tests.support.paths import HOOK_BUDGET

ROOT = Path(__file__).resolve().parents[2]
# The user's HOME when the tests start: tests give each CLI (and often themselves) a temp HOME, and
# the install (kept under HOME/.cache) must not be repeated under each of them.
_HOME_AT_START = os.environ.get("HOME", str(Path.home()))


@functools.cache
def bin_dir() -> Path:
    """The folder holding the `claude`, `codex` and `gemini` launchers (scripts/test.sh exports it; a test run
    on its own installs them, once)."""
    given = os.environ.get("CHECKPOINT_AGENT_CLIS_BIN")
    if given:
        return Path(given)
    out = subprocess.run(["bash", str(ROOT / "scripts" / "install-agent-clis.sh")], check=True,
                         capture_output=True, text=True, timeout=600, env=os.environ | {"HOME": _HOME_AT_START})
    found = Path(out.stdout.strip().splitlines()[-1])
    os.environ["CHECKPOINT_AGENT_CLIS_BIN"] = str(found)  # for the processes the tests start, too
    return found


def agent_cli(name: str) -> Path:
    path = bin_dir() / name
    if not path.exists():
        raise FileNotFoundError(f"{path}: not installed (run bash scripts/install-agent-clis.sh)")
    return path


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment for an agent CLI that can touch nothing of the real user's: HOME and the
    agents' config folders in `home`, no credentials inherited, telemetry off."""
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR")}
    env = keep | HOOK_BUDGET | {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "CODEX_HOME": str(home / ".codex"),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
    }
    env["PATH"] = f"{bin_dir()}{os.pathsep}{env.get('PATH', '')}"
    return env | extra
