#!/usr/bin/env bash
# Install code-server (VS Code 1.100.3 served to a browser) and Debian's Chromium for the VS Code
# end-to-end test, from the npm registry and Debian's packages only. What npm installs is locked:
# scripts/code-server/package-lock.json (code-server, node-gyp, node-pre-gyp) and
# scripts/code-server/lib-vscode-npm-shrinkwrap.json for code-server's lib/vscode (the shrinkwrap
# code-server ships there lacks tslib, so `npm ci` refuses it and `npm install` would resolve it anew).
#
# code-server's own install script downloads ripgrep and prebuilt binaries from elsewhere, so it is
# skipped (--ignore-scripts) and the native modules are built here from source instead.
#
# Idempotent: a finished install leaves a marker naming the lock's hash and the next call returns at
# once. The install lives outside the repo, in $CHECKPOINT_CODE_SERVER_DIR (default
# ~/.cache/checkpoint-code-server), and is built in a temporary folder that is moved into place only
# when complete.
#
#     bash scripts/install-code-server.sh        # prints the path of the code-server launcher last
set -euo pipefail

LOCK_DIR="$(cd "$(dirname "$0")/code-server" && pwd)"
VERSION="$(node -p "require('$LOCK_DIR/package.json').dependencies['code-server']")"
LOCK_HASH="$(cat "$LOCK_DIR/package-lock.json" "$LOCK_DIR/lib-vscode-npm-shrinkwrap.json" | sha256sum | cut -c1-12)"
DIR="${CHECKPOINT_CODE_SERVER_DIR:-$HOME/.cache/checkpoint-code-server}"
MARKER="$DIR/.installed-$VERSION-$LOCK_HASH"
BIN="$DIR/node_modules/code-server/out/node/entry.js"
APT_PACKAGES=(build-essential pkg-config libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev ripgrep chromium)

log() { echo "install-code-server: $*" >&2; }

# node-gyp (and argon2's node-pre-gyp) would download Node's headers into a cache under $HOME, which
# a new machine has not got and cannot fetch offline. The running Node ships them: point both at
# its prefix (the directory holding include/node), taken from the node on PATH, not assumed.
if [ -z "${npm_config_nodedir:-}" ]; then
  node_prefix="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
  if [ ! -f "$node_prefix/include/node/node.h" ]; then
    log "no Node headers in $node_prefix/include/node: install a Node that ships its headers (Debian: nodejs) or set npm_config_nodedir"
    exit 1
  fi
  export npm_config_nodedir="$node_prefix"
fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
  log "installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
  else
    SUDO=
  fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [ -f "$MARKER" ] && [ -f "$BIN" ]; then
  log "code-server $VERSION already installed in $DIR"
  echo "$BIN"
  exit 0
fi

start=$(date +%s)
mkdir -p "$(dirname "$DIR")"
WORK="$(mktemp -d "$(dirname "$DIR")/.checkpoint-code-server.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "building code-server $VERSION in $WORK (about four minutes)"

cd "$WORK"
cp "$LOCK_DIR/package.json" "$LOCK_DIR/package-lock.json" .
npm ci --no-audit --no-fund --loglevel=error --ignore-scripts >&2
NODE_GYP="$WORK/node_modules/.bin/node-gyp"
NODE_PRE_GYP="$WORK/node_modules/.bin/node-pre-gyp"

cd "$WORK/node_modules/code-server/lib/vscode"
cp "$LOCK_DIR/lib-vscode-npm-shrinkwrap.json" npm-shrinkwrap.json
npm ci --no-audit --no-fund --loglevel=error --omit=dev --ignore-scripts >&2
mkdir -p node_modules/@vscode/ripgrep/bin
cp /usr/bin/rg node_modules/@vscode/ripgrep/bin/rg
# Every native module VS Code's server side needs (kerberos, @parcel/watcher, @vscode/spdlog,
# node-pty, native-watchdog, ...): build each from source against the installed Node's headers.
while IFS= read -r gyp; do
  mod="$(dirname "$gyp")"
  log "building $mod"
  (cd "$mod" && "$NODE_GYP" rebuild >/dev/null 2>"$WORK/gyp.log") || {
    cat "$WORK/gyp.log" >&2
    log "failed to build $mod"
    exit 1
  }
done < <(find node_modules -name binding.gyp -not -path '*/test/*' -not -path '*/deps/*' \
           -not -path '*/node-addon-api/*' | sort)
ln -sfn node_modules node_modules.asar

cd "$WORK/node_modules/argon2"
log "building argon2"
PATH="$(dirname "$NODE_GYP"):$PATH" "$NODE_PRE_GYP" rebuild --build-from-source >/dev/null 2>"$WORK/gyp.log" || {
  cat "$WORK/gyp.log" >&2
  exit 1
}

touch "$WORK/$(basename "$MARKER")"
rm -rf "$DIR"
mv "$WORK" "$DIR"
trap - EXIT
log "installed code-server $VERSION in $DIR in $(( $(date +%s) - start ))s"
echo "$BIN"
