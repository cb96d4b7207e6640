"""The release's version, printed, once every place that states it agrees: the daemon
(checkpoint.__version__, which pyproject.toml reads), the VS Code extension's package.json, the
Claude Code plugin's plugin.json and its entry in the repository's marketplace file. Exit 1 and say
which differ otherwise (scripts/release.sh stops there)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def versions(root: Path = ROOT) -> dict[str, str]:
    init = (root / "daemon" / "checkpoint" / "__init__.py").read_text()
    found = re.search(r'^__version__ = "([^"]+)"', init, re.M)
    marketplace = json.loads((root / ".claude-plugin" / "marketplace.json").read_text())
    listed = [p.get("version", "") for p in marketplace["plugins"] if p["name"] == "checkpoint"]
    return {
        "daemon/checkpoint/__init__.py": found[1] if found else "",
        "vscode-extension/package.json": json.loads(
            (root / "vscode-extension" / "package.json").read_text())["version"],
        "claude-plugin/.claude-plugin/plugin.json": json.loads(
            (root / "claude-plugin" / ".claude-plugin" / "plugin.json").read_text())["version"],
        ".claude-plugin/marketplace.json": listed[0] if listed else "",
    }


def main() -> int:
    found = versions()
    if len(set(found.values())) != 1:
        print("release: the versions differ: " + ", ".join(f"{k} {v or '(none)'}" for k, v in found.items()),
              file=sys.stderr)
        return 1
    print(next(iter(found.values())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
