#!/usr/bin/env bash
# Set up everything the tests need in .venv, then run every check: lint, types, tests.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
.venv/bin/ruff check daemon tests scripts
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
