#!/usr/bin/env bash
# Install what the tests need (idempotent; the first run compiles llama-cpp-python, 10-15 minutes)
# and run the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip install --disable-pip-version-check -q -r requirements.txt
python3 -m pytest "$@"
