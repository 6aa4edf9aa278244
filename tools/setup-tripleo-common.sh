#!/bin/bash
# Build the test-only oracle: virtualenvs with the reference tripleo-common of each
# tripleo-heat-templates series we deploy (18.0.0 for THT 18.x, 12.1.0 for THT 12.x,
# Ussuri), installed --no-deps with only the libraries its config-download
# (tripleo_common/utils/config.py) and inventory (tripleo_common/inventory.py)
# modules import. tests/oracle/tripleo_common_render.py runs in them against an
# ephemeral Heat holding a deployed stack; the differential tests
# (tests/functional/overcloud/test_tripleo_common_oracle.py) compare its
# config-download with ours. The product never imports tripleo-common.
# Idempotent: a venv that already has its version is only checked.
# Environment:
#   TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS  where the venvs go (default
#                                      ~/.local/share/tripleo-flow/tripleo-common), one per
#                                      version: <dir>/18.0.0, <dir>/12.1.0
#   PYTHON                             the Python that creates them (default python3)
#   FORCE=1                            rebuild even when a venv looks complete
set -euo pipefail
cd "$(dirname "$0")/.."

VERSIONS=(18.0.0 12.1.0)
ROOT=${TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS:-$HOME/.local/share/tripleo-flow/tripleo-common}
PYTHON=${PYTHON:-python3}
FORCE=${FORCE:-0}
# What tripleo_common.utils.config and tripleo_common.inventory import (12.1.0 also
# eventlet, through its safe_import of git; and the
# client libraries they reach): not tripleo-common's whole requirements.txt.
LIBRARIES=(python-heatclient PyYAML Jinja2 GitPython openstacksdk keystoneauth1
           oslo.utils oslo.config oslo.concurrency oslo.i18n pbr six eventlet)

step() { printf '[setup-tripleo-common] %s\n' "$*"; }

installed() {  # the tripleo-common version a venv holds, when it imports
    [ -x "$1/bin/python" ] || return 0
    "$1/bin/python" -c "import importlib.metadata as m, tripleo_common.utils.config, \
tripleo_common.inventory; print(m.version('tripleo-common'))" 2>/dev/null || true
}

for version in "${VERSIONS[@]}"; do
    venv="$ROOT/$version"
    if [ "$FORCE" != 1 ] && [ "$(installed "$venv")" = "$version" ]; then
        step "tripleo-common $version present in $venv"
        continue
    fi
    step "tripleo-common $version (--no-deps) + ${LIBRARIES[*]} at $venv (PyPI)"
    start=$SECONDS
    mkdir -p "$ROOT"
    "$PYTHON" -m venv --clear "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c tools/tripleo-common-constraints.txt "${LIBRARIES[@]}"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "tripleo-common==$version"
    got=$(installed "$venv")
    if [ "$got" != "$version" ]; then
        echo "setup-tripleo-common.sh: $venv has '${got:-nothing importable}' after install," \
             "not tripleo-common $version" >&2
        exit 1
    fi
    step "  done in $((SECONDS - start)) s"
done
