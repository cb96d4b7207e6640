#!/usr/bin/env bash
# Build everything a release ships, in one command, into dist/release/<version>/:
#   - the daemon's wheel and sdist (checkpoint-decisions; `pip wheel` / `python -m build`-free: pip's
#     own PEP 517 front end builds both, setuptools from the index);
#   - the VS Code extension's .vsix for every platform (scripts/build-vsix.sh TARGET: the extension with
#     the daemon's wheels for that platform, so it installs offline);
#   - SHA256SUMS over all of them (`sha256sum -c SHA256SUMS` checks a download).
# The versions must agree (pyproject's checkpoint.__version__, the extension's package.json, the Claude
# Code plugin's plugin.json and the marketplace's entry): a release with two versions is refused.
#
#     bash scripts/release.sh                      # every platform; prints the folder last
#     RELEASE_TARGETS="linux-x64" bash scripts/release.sh   # some platforms only (a quick local check)
#     RELEASE_TARGETS=none bash scripts/release.sh          # the wheel and sdist only
#
# Publishing is .github/workflows/release.yml's job, on a tag v<version>: PyPI by trusted publishing
# (no token), the .vsix files with vsce (VS Code Marketplace) and ovsx (Open VSX).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"
PY="${CHECKPOINT_BUILD_PYTHON:-$REPO/.venv/bin/python}"
[ -x "$PY" ] || PY=python3
read -r -a TARGETS <<< "${RELEASE_TARGETS:-linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64}"
[ "${TARGETS[*]}" != none ] || TARGETS=()
log() { echo "release: $*" >&2; }

VERSION="$("$PY" scripts/release_versions.py)"  # refuses (exit 1, says which) when the versions differ
OUT="$REPO/dist/release/$VERSION"
rm -rf "$OUT"
mkdir -p "$OUT"

log "wheel and sdist of checkpoint-decisions $VERSION"
"$PY" -m pip wheel -q --no-deps -w "$OUT" "$REPO" >&2
SDIST_WORK="$(mktemp -d)"
trap 'rm -rf "$SDIST_WORK"' EXIT
# The sdist from the tracked files only (a clone's .venv, node_modules and caches never ship).
git -C "$REPO" archive --format=tar HEAD | tar -x -C "$SDIST_WORK"
mkdir -p "$SDIST_WORK/.backend"
# The build backend pyproject.toml asks for, fresh from the index (a venv's own setuptools may be older).
"$PY" -m pip install -q --disable-pip-version-check --target "$SDIST_WORK/.backend" "setuptools>=77" >&2
(cd "$SDIST_WORK" && PYTHONPATH="$SDIST_WORK/.backend" "$PY" -c \
  'import sys; from setuptools import build_meta as b; b.build_sdist(sys.argv[1])' "$OUT") >&2

for target in ${TARGETS[@]+"${TARGETS[@]}"}; do
  log "vsix for $target"
  vsix="$(bash scripts/build-vsix.sh "$target" | tail -1)"
  cp "$vsix" "$OUT/"
done

(cd "$OUT" && shopt -s nullglob && sha256sum -- *.whl *.tar.gz *.vsix > SHA256SUMS)
log "$(ls "$OUT" | wc -l) files in $OUT:"
cat "$OUT/SHA256SUMS" >&2
echo "$OUT"
