#!/bin/bash
# Install the Ironic that `tripleo-flow launch ironic` starts and the node tests run against:
# a virtualenv with ironic 29.0.x (2025.1) from PyPI, pinned by tools/ironic-constraints.txt.
# It also gets sushy-tools' Redfish emulator with libvirt-python, which the redfish tests
# run on libvirt's in-process test driver (no libvirtd, no KVM); libvirt-python builds
# against Debian's libvirt-dev (and pkg-config, gcc).
# Idempotent: when the venv already has this ironic, a run only checks it.
# Environment:
#   TRIPLEO_FLOW_IRONIC_VENV  the virtualenv (default ~/.local/share/tripleo-flow/ironic-venv,
#                             which is where `tripleo-flow launch ironic` and the tests look)
#   PYTHON                    the Python that creates it (default python3; 3.10-3.12)
#   FORCE=1                   rebuild even when the venv looks complete
set -euo pipefail
cd "$(dirname "$0")/.."

IRONIC_VERSION=29.0.6
SUSHY_TOOLS_VERSION=2.2.0
LIBVIRT_PYTHON_VERSION=9.0.0   # Debian 12's libvirt
VENV=${TRIPLEO_FLOW_IRONIC_VENV:-$HOME/.local/share/tripleo-flow/ironic-venv}
PYTHON=${PYTHON:-python3}
FORCE=${FORCE:-0}

step() { printf '[setup-ironic] %s\n' "$*"; }
timed() {
    local start=$SECONDS
    "$@"
    step "  done in $((SECONDS - start)) s"
}

installed_version() {
    [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/ironic" ] \
        && [ -x "$VENV/bin/ironic-dbsync" ] && [ -x "$VENV/bin/sushy-emulator" ] || return 0
    "$VENV/bin/python" -c \
        "import importlib.metadata as m; print(m.version('ironic'))" 2>/dev/null || true
}

if [ "$FORCE" != 1 ] && [ "$(installed_version)" = "$IRONIC_VERSION" ]; then
    step "ironic $IRONIC_VERSION present in $VENV"
else
    step "ironic $IRONIC_VERSION virtualenv at $VENV (PyPI)"
    mkdir -p "$(dirname "$VENV")"
    timed "$PYTHON" -m venv --clear "$VENV"
    cp tools/ironic-constraints.txt "$VENV/tripleo-flow-constraints.txt"
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$VENV/tripleo-flow-constraints.txt" "ironic==$IRONIC_VERSION" \
        "sushy-tools==$SUSHY_TOOLS_VERSION" "libvirt-python==$LIBVIRT_PYTHON_VERSION"
    got=$(installed_version)
    if [ "$got" != "$IRONIC_VERSION" ]; then
        echo "setup-ironic.sh: $VENV has ironic '${got:-none}' after install," \
             "not $IRONIC_VERSION" >&2
        exit 1
    fi
fi
# The service must import (catches a broken or half-built venv).
PYTHONWARNINGS=ignore "$VENV/bin/python" -c \
    "import ironic.cmd.singleprocess, ironic.drivers.fake_hardware, sushy_tools, libvirt"
PYTHONWARNINGS=ignore "$VENV/bin/ironic-dbsync" --version >/dev/null
step "ready: export TRIPLEO_FLOW_IRONIC_VENV=$VENV"
