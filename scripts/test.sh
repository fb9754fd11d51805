#!/usr/bin/env bash
# Install what the tests need (idempotent; the first run compiles llama-cpp-python, 10-15 minutes,
# and installs Debian's chromium for the browser test) and run the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x /usr/bin/chromium ]; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium > /dev/null
fi
python3 -m pip install --disable-pip-version-check -q -r requirements.txt
python3 -m pytest "$@"
