#!/usr/bin/env bash
# Install what the tests need (idempotent; the first run compiles llama-cpp-python, 10-15 minutes, and
# installs Debian's chromium for the browser tests and postgresql for the store's tests, which start their
# own throwaway server on 127.0.0.1), check the code with ruff and the import rules of .importlinter, build the
# documentation site with --strict (any warning fails it), and run the whole suite; any failing step fails the
# command. Extra arguments go to pytest (to both parts below; with your own -m, one serial run of yours).
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" > /dev/null || missing+=(postgresql)
command -v npm > /dev/null || missing+=(npm)  # for the Argdown command line below
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" > /dev/null
fi
# The Argdown command line (npm's @argdown/cli, pinned) into the gitignored .tools/argdown: the argument map's
# Argdown export is parsed by it in tests/render/test_argmap_exports.py (skipped, naming this script, without it).
ARGDOWN_CLI_VERSION=1.7.5
if [ "$(cat .tools/argdown/.installed 2>/dev/null)" != "$ARGDOWN_CLI_VERSION" ]; then
  mkdir -p .tools/argdown
  npm install --prefix .tools/argdown --no-audit --no-fund --silent "@argdown/cli@$ARGDOWN_CLI_VERSION"
  echo "$ARGDOWN_CLI_VERSION" > .tools/argdown/.installed
fi
# A portable llama.cpp build: a native one uses every instruction the CPU reports, and on virtual machines that
# report Intel AMX without enabling it the embedded model dies with a general protection fault at its first token.
export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}"
python3 -m pip install --disable-pip-version-check -q -r requirements.txt
python3 -m ruff check clearside clearside_ui tests bench app.py docs/hooks.py
# lint-imports, run from the repository root (it puts the current directory on sys.path to find the packages);
# no cache, so nothing is left in the work tree. Called through Python: pip may put console scripts off PATH.
python3 -c 'from importlinter.cli import lint_imports_command; lint_imports_command()' --no-logo --no-cache
# The documentation site, into the gitignored site/ (a broken link, a missing page or a stale reference fails it).
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict --site-dir site  # not --quiet: it hides the warnings strict counts
# The suite in two parts. The tests that run no real model spend most of their time waiting (for subprocesses,
# servers, the browser, the database), so they run on CLEARSIDE_TEST_WORKERS processes at once (pytest-xdist;
# default 4). The tests marked `model` then run one at a time: llama.cpp decodes on both cores, and a second
# process beside it makes both spin waiting for each other.
for arg in "$@"; do
  case "$arg" in -m|-m*) exec python3 -m pytest "$@" ;; esac
done
status=0
python3 -m pytest -m "not model" -n "${CLEARSIDE_TEST_WORKERS:-4}" "$@" || status=$?
model_status=0
python3 -m pytest -m model "$@" || model_status=$?
# 5 is pytest's "no test collected": a selection (a file, -k) may hold tests of one part only
if [ "$status" -eq 5 ] && [ "$model_status" -ne 5 ]; then status=0; fi
if [ "$model_status" -ne 0 ] && [ "$model_status" -ne 5 ] && [ "$status" -eq 0 ]; then status=$model_status; fi
exit "$status"
