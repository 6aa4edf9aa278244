#!/usr/bin/env bash
# The real Swift the tests and the plan benchmarks start (.venv-swift: swift 2.38.3, the
# swift CLI, keystonemiddleware for the proxy that authenticates with Keystone).
# Idempotent: an existing .venv-swift is only checked (keystonemiddleware added if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv-swift/bin/swift-proxy-server ]; then
    "$PYTHON" -m venv .venv-swift
    .venv-swift/bin/pip install -q swift==2.38.3 python-swiftclient
fi
# Apart, so an existing .venv-swift gets it too (~5 s).
if ! .venv-swift/bin/python -c 'import keystonemiddleware.auth_token' 2>/dev/null; then
    .venv-swift/bin/pip install -q keystonemiddleware
fi
echo "[setup-swift] ready: export TRIPLEO_FLOW_SWIFT_BIN=$PWD/.venv-swift/bin"
