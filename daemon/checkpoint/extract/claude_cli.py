"""Is the user's Claude Code CLI there, recent enough and logged in? Asked without calling a model,
and without the answer's schema or any SDK: the automatic choice (choose.py) asks it on every `now`
and the daemon's start, most often to end offline, so it must cost only the two short `claude`
processes it runs. The extractor itself (claude_code.py) checks the version again once per run."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from checkpoint.extract.missing_commands import claude_not_found
from checkpoint.redact.outside import hide_secrets

if TYPE_CHECKING:
    from checkpoint.config import Settings

# The oldest version whose flags claude_code.py uses is not known exactly: 2.1.328 is the one checked
# (every flag it passes is in its --help). Older 2.1 releases have them too by their changelog; older
# than 2.1 is refused with a cause that says to update.
MIN_VERSION = (2, 1, 0)
PROBE_SECONDS = 20.0
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
FIX_LOGIN = "run `claude auth login`"


@dataclass(frozen=True)
class CliStatus:
    usable: bool
    cause: str  # why not, naming the fix; when usable, what it runs as ("Claude Code 2.1.328, claude.ai login")
    version: str | None = None


_probes: dict[tuple[str, ...], CliStatus] = {}
_probes_lock = threading.Lock()




def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return hide_secrets(lines[-1])[:300] if lines else ""


def version_status(command: str) -> CliStatus:
    """`claude --version` against MIN_VERSION (fast: it starts no session)."""
    path = shutil.which(command)
    if path is None:
        return CliStatus(False, claude_not_found(command))
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=PROBE_SECONDS,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CliStatus(False, f"`{command} --version` did not run ({type(exc).__name__}; reinstall Claude Code)")
    found = _VERSION.search(out.stdout)
    if out.returncode != 0 or found is None:
        return CliStatus(False, f"`{command} --version` failed (exit {out.returncode}: "
                                f"{last_line(out.stderr or out.stdout)}; reinstall Claude Code)")
    version = tuple(int(g) for g in found.groups())
    if version < MIN_VERSION:
        need = ".".join(map(str, MIN_VERSION))
        return CliStatus(False, f"Claude Code {found.group(0)} is older than {need}, whose flags the claude-code "
                                "extractor uses (run `claude update`)", found.group(0))
    return CliStatus(True, f"Claude Code {found.group(0)}", found.group(0))


def cli_status(command: str) -> CliStatus:
    """Whether `command` is a Claude Code recent enough and logged in, without calling a model:
    `claude --version`, then `claude auth status --json` (it reads the login the CLI would use: the
    credentials file or keychain, an API key or token in its environment, an apiKeyHelper). Cached per
    process, per command and environment (tests change HOME between cases)."""
    key = (command, *(os.environ.get(v, "") for v in ("PATH", "HOME", "CLAUDE_CONFIG_DIR")),
           *(str(bool(os.environ.get(v))) for v in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")))
    with _probes_lock:
        cached = _probes.get(key)
    if cached is not None:
        return cached
    status = version_status(command)
    if status.usable:
        status = _login_status(command, status)
    with _probes_lock:
        _probes[key] = status
    return status


def _login_status(command: str, found: CliStatus) -> CliStatus:
    path = shutil.which(command) or command
    try:
        out = subprocess.run([path, "auth", "status", "--json"], capture_output=True, text=True,
                             timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL, env=child_env(None))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CliStatus(False, f"`{command} auth status` did not run ({type(exc).__name__})", found.version)
    try:
        status = json.loads(out.stdout)
    except ValueError:
        status = None
    if not isinstance(status, dict):
        return CliStatus(False, f"`{command} auth status` said nothing readable (exit {out.returncode}: "
                                f"{last_line(out.stderr or out.stdout)})", found.version)
    if status.get("loggedIn") is not True:
        return CliStatus(False, f"Claude Code is not logged in ({FIX_LOGIN})", found.version)
    method = status.get("authMethod") or "unknown"
    return CliStatus(True, f"{found.cause}, {method} login", found.version)


def child_env(settings: Settings | None) -> dict[str, str]:
    """The user's environment (their login, proxy, gateway), with Claude Code's own retries off and
    its side traffic (telemetry, update checks) stopped. CLAUDECODE marks a nested session: a
    Checkpoint started from a Claude Code hook must still start a plain one."""
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT")}
    env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    if settings is not None:
        env["CLAUDE_CODE_MAX_RETRIES"] = "0"
        env["API_TIMEOUT_MS"] = str(int(settings.request_timeout * 1000))
        env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(settings.output_tokens)
    return env


