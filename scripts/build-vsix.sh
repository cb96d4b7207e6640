#!/usr/bin/env bash
# Build the platform-specific .vsix: the extension plus, in bundled/, every wheel `checkpoint serve`
# needs on that platform (the project's own wheel, its dependencies for each CPython it covers, and
# pip itself), so the extension installs its daemon offline on first start (src/environment.ts).
#
#     bash scripts/build-vsix.sh [TARGET]     # TARGET: linux-x64 (default), linux-arm64, darwin-x64,
#                                             # darwin-arm64, win32-x64; prints the .vsix path last
#
# Wheels come from the package index at build time only, exactly as locks/vsix.txt pins them (with
# their hashes; bash scripts/lock.sh refreshes it). pydantic-core, orjson, watchfiles, jiter,
# rpds-py, google-re2, pyyaml, ... are binary wheels per CPython version, hence one download per
# version in PYTHONS; pure-Python ones are shared.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
TARGET="${1:-linux-x64}"
PYTHONS=(3.11 3.12 3.13 3.14)
PY="${CHECKPOINT_BUILD_PYTHON:-$REPO/.venv/bin/python}"
[ -x "$PY" ] || PY=python3

case "$TARGET" in
  linux-x64) PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux_2_5_x86_64 manylinux1_x86_64) ;;
  linux-arm64) PLATFORMS=(manylinux_2_28_aarch64 manylinux_2_17_aarch64 manylinux2014_aarch64) ;;
  darwin-x64) PLATFORMS=(macosx_10_12_x86_64 macosx_10_9_x86_64 macosx_11_0_x86_64 macosx_10_15_x86_64) ;;
  darwin-arm64) PLATFORMS=(macosx_11_0_arm64 macosx_14_0_arm64 macosx_10_12_universal2 macosx_10_9_universal2) ;;
  win32-x64) PLATFORMS=(win_amd64) ;;
  *) echo "build-vsix: unknown target $TARGET" >&2; exit 2 ;;
esac

log() { echo "build-vsix: $*" >&2; }
EXT="$REPO/vscode-extension"
BUNDLED="$EXT/bundled"
rm -rf "$BUNDLED"
mkdir -p "$BUNDLED/wheels"

# The project's wheel, built from this checkout with the locked setuptools of the venv (scripts/test.sh).
"$PY" -m pip wheel -q --no-deps --no-build-isolation -w "$BUNDLED/wheels" "$REPO" >&2
WHEEL="$(ls "$BUNDLED"/wheels/checkpoint_decisions-*.whl)"  # the distribution checkpoint-decisions
plat_args=()
for p in "${PLATFORMS[@]}"; do plat_args+=(--platform "$p"); done
# A CPython for which some dependency has no wheel on this platform (google-re2 on macOS x86_64 after
# 3.12) is left out, and said; the manifest names only the ones covered.
covered=()
for v in "${PYTHONS[@]}"; do
  log "wheels for CPython $v on $TARGET"
  if "$PY" -m pip download -q --only-binary=:all: "${plat_args[@]}" --implementation cp \
    --python-version "$v" -d "$BUNDLED/wheels" --require-hashes --no-deps -r "$REPO/locks/vsix.txt" \
    >"$BUNDLED/pip.log" 2>&1; then
    covered+=("$v")
  else
    log "CPython $v left out on $TARGET: $(grep -m1 'No matching distribution' "$BUNDLED/pip.log" || tail -1 "$BUNDLED/pip.log")"
  fi
done
rm -f "$BUNDLED/pip.log"
[ "${#covered[@]}" -gt 0 ] || { log "no CPython has every wheel on $TARGET"; exit 1; }

# What the extension reads: the daemon's version, the Pythons covered, and a key that changes with
# any wheel (a rebuilt 0.1.0 gets a new environment too).
KEY="$(cd "$BUNDLED/wheels" && ls | LC_ALL=C sort | xargs sha256sum | sha256sum | cut -c1-12)"
VERSION="$(basename "$WHEEL" | cut -d- -f2)"
"$PY" - "$BUNDLED/manifest.json" "$VERSION" "$KEY" "$TARGET" "${covered[@]}" <<'EOF'
import json, sys
out, version, key, target, *pythons = sys.argv[1:]
json.dump({"version": version, "key": key, "target": target, "pythons": pythons}, open(out, "w"), indent=2)
EOF

cd "$EXT"
npm run -s compile
node esbuild.mjs --production
mkdir -p dist
VSIX="$EXT/dist/checkpoint-$TARGET.vsix"
npx vsce package --target "$TARGET" --no-dependencies -o "$VSIX" >&2
log "$(du -h "$VSIX" | cut -f1) $VSIX ($(ls "$BUNDLED/wheels" | wc -l) wheels, daemon $VERSION, CPython ${covered[*]})"
echo "$VSIX"
