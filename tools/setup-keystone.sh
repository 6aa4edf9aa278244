#!/bin/bash
# Install the Keystone the keystone functional tests start (tests/fixtures_keystone.py):
# a virtualenv with keystone 27 (2025.1) from PyPI, pinned by tools/keystone-constraints.txt,
# and waitress to serve its WSGI app (keystone.wsgi.api:application).
# Idempotent: when the venv already has this keystone, a run only checks it.
# Measured on the loaded 2-core dev machine: first run ~60 s (pip 47 s; 24 s with pip's
# wheel cache warm), ~195 MB, all wheels; a second run ~3 s.
# Environment:
#   TRIPLEO_FLOW_KEYSTONE_VENV  the virtualenv (default ~/.local/share/tripleo-flow/keystone-venv,
#                               which is where the tests look when the variable is unset)
#   PYTHON                      the Python that creates it (default python3; 3.10-3.12)
#   FORCE=1                     rebuild even when the venv looks complete
set -euo pipefail
cd "$(dirname "$0")/.."

KEYSTONE_VERSION=27.1.0
VENV=${TRIPLEO_FLOW_KEYSTONE_VENV:-$HOME/.local/share/tripleo-flow/keystone-venv}
PYTHON=${PYTHON:-python3}
FORCE=${FORCE:-0}

step() { printf '[setup-keystone] %s\n' "$*"; }
timed() {
    local start=$SECONDS
    "$@"
    step "  done in $((SECONDS - start)) s"
}

installed_version() {
    [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/keystone-manage" ] \
        && [ -x "$VENV/bin/waitress-serve" ] || return 0
    "$VENV/bin/python" -c \
        "import importlib.metadata as m; print(m.version('keystone'))" 2>/dev/null || true
}

if [ "$FORCE" != 1 ] && [ "$(installed_version)" = "$KEYSTONE_VERSION" ]; then
    step "keystone $KEYSTONE_VERSION present in $VENV"
else
    step "keystone $KEYSTONE_VERSION virtualenv at $VENV (PyPI)"
    mkdir -p "$(dirname "$VENV")"
    timed "$PYTHON" -m venv --clear "$VENV"
    cp tools/keystone-constraints.txt "$VENV/tripleo-flow-constraints.txt"
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$VENV/tripleo-flow-constraints.txt" "keystone==$KEYSTONE_VERSION" waitress
    got=$(installed_version)
    if [ "$got" != "$KEYSTONE_VERSION" ]; then
        echo "setup-keystone.sh: $VENV has keystone '${got:-none}' after install," \
             "not $KEYSTONE_VERSION" >&2
        exit 1
    fi
fi
# The app must import (catches a broken or half-built venv); keystone-manage must run.
# (PYTHONWARNINGS: eventlet's deprecation notice on import is not news.)
PYTHONWARNINGS=ignore "$VENV/bin/python" -c \
    "import keystone.server.wsgi, keystonemiddleware.auth_token, waitress"
PYTHONWARNINGS=ignore "$VENV/bin/keystone-manage" --version >/dev/null
step "ready: export TRIPLEO_FLOW_KEYSTONE_VENV=$VENV"
