#!/usr/bin/env bash
# Install what scripts/bench.py measures Checkpoint against (ccusage, pinned in
# scripts/bench-tools/package-lock.json) from the npm registry. ccusage ships its native binary
# inside a registry package (@ccusage/ccusage-<platform>), so nothing else is downloaded.
#
# Idempotent, as scripts/install-agent-clis.sh: the install lives outside the repo, in
# $CHECKPOINT_BENCH_TOOLS_DIR (default ~/.cache/checkpoint-bench-tools/<hash of the lock file>),
# built in a temporary folder moved into place only when complete. Prints the folder of the
# `ccusage` launcher last.
#
#     bash scripts/install-bench-tools.sh
set -euo pipefail
cd "$(dirname "$0")/bench-tools"

log() { echo "install-bench-tools: $*" >&2; }

hash="$(sha256sum package-lock.json | cut -c1-12)"
DIR="${CHECKPOINT_BENCH_TOOLS_DIR:-$HOME/.cache/checkpoint-bench-tools/$hash}"
BIN="$DIR/node_modules/.bin"
if [ -f "$DIR/.installed" ] && [ -x "$BIN/ccusage" ]; then
  echo "$BIN"
  exit 0
fi

mkdir -p "$(dirname "$DIR")"
WORK="$(mktemp -d "$(dirname "$DIR")/.bench-tools.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
cp package.json package-lock.json "$WORK/"
start=$(date +%s)
# npm install, not npm ci: the lock holds only the platform packages the registry had when it was
# written (an optional package it lacks is skipped, as npm skips any optional package that fails).
(cd "$WORK" && npm install --no-audit --no-fund --loglevel=error >&2)
touch "$WORK/.installed"
rm -rf "$DIR"
mv "$WORK" "$DIR"
trap - EXIT
log "installed $(cd "$DIR" && node -p "Object.entries(require('./package.json').dependencies).map(([n,v])=>n+'@'+v).join(', ')") in $(( $(date +%s) - start )) s into $DIR"
echo "$BIN"
