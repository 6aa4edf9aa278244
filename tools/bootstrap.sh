#!/usr/bin/env bash
# Create the project's virtualenvs on a fresh machine (idempotent).
#   .venv            tripleo-flow (editable) with its test tools
#   .venv-swift      a real Swift server for the tests and the benchmark (with
#                    keystonemiddleware, for the proxy that authenticates with Keystone)
# The tests' Keystone has a virtualenv of its own: tools/setup-keystone.sh.
# Usage: tools/bootstrap.sh [--tests]
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
want_tests=0
[ "${1:-}" = "--tests" ] && want_tests=1

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/pip install -q --upgrade pip >/dev/null
.venv/bin/pip install -q -e .
if [ "$want_tests" = 1 ]; then
    .venv/bin/pip install -q -e '.[redis,zookeeper,podman,openstack,ansible,keystone,gui-tests,javascript]' \
        -r test-requirements.txt
    if [ ! -x .venv-swift/bin/swift-proxy-server ]; then
        "$PYTHON" -m venv .venv-swift
        .venv-swift/bin/pip install -q swift==2.38.3 python-swiftclient
    fi
    # Apart, so an existing .venv-swift gets it too (~5 s).
    if ! .venv-swift/bin/python -c 'import keystonemiddleware.auth_token' 2>/dev/null; then
        .venv-swift/bin/pip install -q keystonemiddleware
    fi
fi
