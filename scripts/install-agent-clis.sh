#!/usr/bin/env bash
# Install the real agent CLIs the tests drive (Claude Code, Codex, Gemini CLI, Copilot CLI and opencode, pinned in
# scripts/agent-clis/package-lock.json) from the npm registry. Each ships its native binary inside a
# registry package, so nothing else is downloaded.
#
# Idempotent: the install lives outside the repo, in $CHECKPOINT_AGENT_CLIS_DIR (default
# ~/.cache/checkpoint-agent-clis/<hash of the lock file>), built in a temporary folder that is moved
# into place only when complete. Prints the folder of the `claude`, `codex`, `gemini`, `copilot` and `opencode` launchers last.
#
#     bash scripts/install-agent-clis.sh
set -euo pipefail
cd "$(dirname "$0")/agent-clis"

log() { echo "install-agent-clis: $*" >&2; }

hash="$(sha256sum package-lock.json | cut -c1-12)"
DIR="${CHECKPOINT_AGENT_CLIS_DIR:-$HOME/.cache/checkpoint-agent-clis/$hash}"
BIN="$DIR/node_modules/.bin"
# opencode only where its platform package is in the lock (linux-x64, see below).
if [ -f "$DIR/.installed" ] && [ -x "$BIN/claude" ] && [ -x "$BIN/codex" ] && [ -x "$BIN/gemini" ] && [ -x "$BIN/copilot" ] \
    && { [ -x "$BIN/opencode" ] || [ "$(uname -sm)" != "Linux x86_64" ]; }; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$(dirname "$DIR")"
WORK="$(mktemp -d "$(dirname "$DIR")/.agent-clis.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp package.json package-lock.json "$WORK/"
start=$(date +%s)
(cd "$WORK" && npm ci --no-audit --no-fund --loglevel=error >&2)
# opencode: its platform package, which holds the native binary, and a launcher next to the others.
# (The npm package opencode-ai lists one optional package per platform; the registry reachable here
# answers 404 for all but linux-x64, so a lock listing opencode-ai cannot be written and `npm ci`
# refuses one without them.)
if [ -x "$WORK/node_modules/opencode-linux-x64/bin/opencode" ]; then
  ln -sf ../opencode-linux-x64/bin/opencode "$WORK/node_modules/.bin/opencode"
fi
touch "$WORK/.installed"
rm -rf "$DIR"
mv "$WORK" "$DIR"
trap - EXIT
log "installed $(cd "$DIR" && node -p "Object.entries({...require('./package.json').dependencies, ...require('./package.json').optionalDependencies}).map(([n,v])=>n+'@'+v).join(', ')") in $(( $(date +%s) - start )) s into $DIR"
echo "$BIN"
