#!/usr/bin/env bash
# Create the project's virtualenvs on a fresh machine (idempotent).
#   .venv            tripleo-flow (editable) with its test tools
#   .venv-swift      a real Swift server for the tests and the benchmark (with
#                    keystonemiddleware, for the proxy that authenticates with Keystone)
# The tests' Keystone has a virtualenv of its own: tools/setup-keystone.sh; .venv-swift is
# made by tools/setup-swift.sh.
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
    # SWIFT=later: the caller builds .venv-swift itself (tools/run-tests.sh, at the same
    # time as the services' virtualenvs).
    [ "${SWIFT:-now}" = later ] || bash tools/setup-swift.sh
fi
