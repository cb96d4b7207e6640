#!/usr/bin/env bash
# Run the suite against the newest releases, on purpose and apart from CI (which installs from the
# locks, scripts/lock.sh), and report what moved and what broke:
#
#     bash scripts/check-releases.sh [--lowest] [--report FILE] [--with-editor] [-- PYTEST ARGS...]
#
# Python: a fresh venv resolved anew from pyproject's ranges (the newest each range admits, or with
# --lowest the oldest each direct range admits: is our floor still true?), plus the newest releases
# past our upper bounds, listed only. npm: the newest agent CLIs (Claude Code, Codex, Gemini CLI,
# Copilot CLI, opencode) are installed and the tests that drive them run against those; the
# extension's packages are refreshed within their ranges for lint, compile and vitest
# (--with-editor also runs the code-server end-to-end test, ~10 min more).
#
# Prints a Markdown report (also written to FILE) and exits 1 when a step failed, 0 when all passed.
# It checks the committed tree (HEAD), copied into a temp folder where all its work lives: the
# repository's .venv, node_modules and locks are never touched.
# .github/workflows/release-check.yml runs it weekly.
set -uo pipefail
cd "$(dirname "$0")/.."
RESOLUTION=highest
REPORT=""
EDITOR=0
while [ $# -gt 0 ]; do
  case "$1" in
    --lowest) RESOLUTION=lowest-direct ;;
    --report) REPORT="$(realpath -m "$2")"; shift ;;
    --with-editor) EDITOR=1 ;;
    --) shift; break ;;
    *) echo "check-releases: unknown option $1 (see the comment at the top of this script)" >&2; exit 2 ;;
  esac
  shift
done
PYTEST_ARGS=("$@")

WORK="$(mktemp -d "${TMPDIR:-/tmp}/checkpoint-releases.XXXXXX")"
# The committed tree (HEAD), copied: what is checked does not change under the run, and the
# repository's own .venv, node_modules and locks are never touched.
git clone -q --no-hardlinks . "$WORK/src"  # a repository (tests ask git for its files), at HEAD
cd "$WORK/src"
REPO="$PWD"
log() { echo "check-releases: $*" >&2; }
OUT="$WORK/report.md"
failed=()
step() {  # NAME COMMAND...: run it, log to $WORK/NAME.log, remember a failure
  local name="$1"; shift
  log "$name"
  if ! "$@" >"$WORK/$name.log" 2>&1; then
    failed+=("$name")
  fi
}

# --- Python: resolve anew and compare with the lock ------------------------------------------------
UV_VERSION=0.13.9
UV_DIR="${CHECKPOINT_UV_DIR:-$HOME/.cache/checkpoint-uv/$UV_VERSION}"
if [ ! -x "$UV_DIR/bin/uv" ]; then
  python3 -m venv "$UV_DIR" && "$UV_DIR/bin/python" -m pip install -q --disable-pip-version-check "uv==$UV_VERSION"
fi
UV="$UV_DIR/bin/uv"
"$UV" pip compile -q --python-version 3.11 --no-header --no-annotate --resolution "$RESOLUTION" \
  pyproject.toml locks/build.in --extra test -o "$WORK/resolved.txt" 2>"$WORK/resolve.log" || failed+=("resolve")
# Past our upper bounds: every requirement's name alone, the newest release of each, against the lock.
python3 - "$WORK/unbounded.in" <<'EOF'
import re, sys, tomllib
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
reqs = project["dependencies"] + project["optional-dependencies"]["test"]
open(sys.argv[1], "w").write("".join(re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] + "\n" for r in reqs))
EOF
"$UV" pip compile -q --python-version 3.11 --no-header --no-annotate "$WORK/unbounded.in" -o "$WORK/unbounded.txt" \
  2>>"$WORK/resolve.log" || true

pins() {  # "name version" per line, names normalised, sorted for join
  grep -oE '^[A-Za-z0-9][A-Za-z0-9._-]*==[^ ;\\]+' "$1" | awk -F'==' '{ n = tolower($1); gsub(/[._]/, "-", n); print n, $2 }' \
    | sort -k1,1
}
table() { awk '$2 != $3 { printf "| %s | %s | %s |\n", $1, $2, $3 }'; }
python_moves="$(join -a2 -e '(new)' -o 0,1.2,2.2 <(pins locks/python.txt) <(pins "$WORK/resolved.txt") | table)"
past_bounds="$( [ -f "$WORK/unbounded.txt" ] && join -o 0,1.2,2.2 <(pins locks/python.txt) <(pins "$WORK/unbounded.txt") | table \
  || echo "| (could not resolve the names alone: $WORK/resolve.log) | | |")"

python3 -m venv "$WORK/venv"
PY="$WORK/venv/bin/python"
step python-install bash -c "'$PY' -m pip install -q --disable-pip-version-check -r '$WORK/resolved.txt' \
  && '$PY' -m pip install -q --disable-pip-version-check --no-deps -e '$REPO'"

# --- npm: the newest agent CLIs -------------------------------------------------------------------
mkdir -p "$WORK/agent-clis"
npm_moves=""
latest_manifest="$(cd scripts/agent-clis && node -e '
  const m = require("./package.json"); const { execSync } = require("child_process");
  const rows = []; const out = { name: m.name, private: true, dependencies: {}, optionalDependencies: {} };
  for (const field of ["dependencies", "optionalDependencies"])
    for (const [name, pinned] of Object.entries(m[field] || {})) {
      const newest = execSync(`npm view ${name} version`, { encoding: "utf8" }).trim();
      out[field][name] = newest; if (newest !== pinned) rows.push(`| ${name} | ${pinned} | ${newest} |`);
    }
  require("fs").writeFileSync(process.argv[1], JSON.stringify(out, null, 2));
  console.log(rows.join("\n"));' "$WORK/agent-clis/package.json")" && npm_moves="$latest_manifest" || failed+=("npm-view")
step agent-clis-install bash -c "cd '$WORK/agent-clis' && npm install --no-audit --no-fund --loglevel=error \
  && { [ ! -x node_modules/opencode-linux-x64/bin/opencode ] \
       || ln -sf ../opencode-linux-x64/bin/opencode node_modules/.bin/opencode; }"
export CHECKPOINT_AGENT_CLIS_BIN="$WORK/agent-clis/node_modules/.bin"
CHECKPOINT_LOCAL_MODEL_DIR="$(bash scripts/install-local-model.sh 2>>"$WORK/local-model.log")"
export CHECKPOINT_LOCAL_MODEL_DIR

# --- the suite ------------------------------------------------------------------------------------
if [[ ! " ${failed[*]} " =~ " python-install " ]]; then
  step ruff "$WORK/venv/bin/ruff" check daemon tests scripts
  step mypy "$WORK/venv/bin/mypy"
  step pytest "$PY" -m pytest -q -p no:cacheprovider --junitxml="$WORK/pytest.xml" "${PYTEST_ARGS[@]}"
fi
step extension bash -c "cd vscode-extension && npm install --ignore-scripts --no-audit --no-fund --loglevel=error \
  && npm run -s lint && npm run -s compile && npx vitest run"
if [ "$EDITOR" = 1 ]; then
  step editor-e2e bash -c "CHECKPOINT_BUILD_PYTHON='$PY' CHECKPOINT_E2E_VSIX=\"\$(bash scripts/build-vsix.sh linux-x64)\" \
    && export CHECKPOINT_E2E_VSIX && cd vscode-extension && node e2e/run.mjs"
fi

# --- the report -----------------------------------------------------------------------------------
broken_tests="$( [ -f "$WORK/pytest.xml" ] && python3 - "$WORK/pytest.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).iter("testcase"):
    for bad in list(case.findall("failure")) + list(case.findall("error")):
        first = (bad.get("message") or "").strip().splitlines()[:1]
        print(f"- `{case.get('classname')}::{case.get('name')}`: {first[0][:200] if first else bad.tag}")
EOF
)"
{
  echo "# Release check ($(date -u +%Y-%m-%d), resolution: $RESOLUTION)"
  echo
  echo "## Python: resolved anew against locks/python.txt"
  if [ -n "$python_moves" ]; then echo "| package | locked | now |"; echo "|---|---|---|"; echo "$python_moves"
  else echo "Nothing moved: the lock holds what the ranges resolve to today."; fi
  echo
  echo "## Python: newer releases our upper bounds leave out"
  if [ -n "$past_bounds" ]; then echo "| package | locked | newest |"; echo "|---|---|---|"; echo "$past_bounds"
  else echo "None."; fi
  echo
  echo "## npm: the agent CLIs the tests drive"
  if [ -n "$npm_moves" ]; then echo "| package | pinned | newest |"; echo "|---|---|---|"; echo "$npm_moves"
  else echo "Every pin is the newest release."; fi
  echo
  echo "## Result"
  if [ "${#failed[@]}" -eq 0 ]; then echo "Every step passed."
  else
    echo "Failed steps: ${failed[*]} (logs in $WORK)."
    for name in "${failed[@]}"; do
      [ "$name" = pytest ] && continue
      echo; echo "### $name"; echo '```'; tail -15 "$WORK/$name.log" 2>/dev/null; echo '```'
    done
  fi
  if [ -n "$broken_tests" ]; then echo; echo "### Tests that failed"; echo "$broken_tests"; fi
  [ -f "$WORK/pytest.log" ] && { echo; echo "pytest: $(tail -1 "$WORK/pytest.log")"; }
} >"$OUT"
cat "$OUT"
[ -n "$REPORT" ] && cp "$OUT" "$REPORT"
[ "${#failed[@]}" -eq 0 ]
