#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian 12 machine (root), then
# run the style checks and every test: unit and functional (real Swift, Redis,
# MariaDB, heat-all, podman, Keystone, Ironic).
# Usage: tools/run-tests.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { printf '\n== %s (+%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

# chromium: the GUI's browser tests (Playwright drives it; never `playwright install`).
APT_PACKAGES=(redis-server zookeeper tmux git libvirt-dev pkg-config gcc chromium)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Services are started by the tests themselves, as private children on 127.0.0.1.
systemctl disable --now redis-server zookeeper >/dev/null 2>&1 || true

step "virtualenvs"
bash tools/bootstrap.sh --tests
export TRIPLEO_FLOW_SWIFT_BIN="$PWD/.venv-swift/bin"

step "Keystone virtualenv (tools/setup-keystone.sh)"
export TRIPLEO_FLOW_KEYSTONE_VENV=${TRIPLEO_FLOW_KEYSTONE_VENV:-$HOME/.local/share/tripleo-flow/keystone-venv}
bash tools/setup-keystone.sh

step "Ironic virtualenv (tools/setup-ironic.sh)"
export TRIPLEO_FLOW_IRONIC_VENV=${TRIPLEO_FLOW_IRONIC_VENV:-$HOME/.local/share/tripleo-flow/ironic-venv}
bash tools/setup-ironic.sh

step "Ansible virtualenv with tripleo-ansible (tools/setup-ansible.sh)"
export TRIPLEO_FLOW_ANSIBLE_VENV=${TRIPLEO_FLOW_ANSIBLE_VENV:-$HOME/.local/share/tripleo-flow/ansible-venv}
bash tools/setup-ansible.sh

step "validations virtualenv: validations-common, tripleo-validations (tools/setup-validations.sh)"
export TRIPLEO_FLOW_VALIDATIONS_VENV=${TRIPLEO_FLOW_VALIDATIONS_VENV:-$HOME/.local/share/tripleo-flow/validations-venv}
bash tools/setup-validations.sh

step "tripleo-common oracles for the differential tests (tools/setup-tripleo-common.sh)"
export TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS=${TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS:-$HOME/.local/share/tripleo-flow/tripleo-common}
bash tools/setup-tripleo-common.sh

step "ephemeral Heat: MariaDB, podman, Heat virtualenv, images (tools/setup-heat.sh)"
export TRIPLEO_FLOW_HEAT_VENV=${TRIPLEO_FLOW_HEAT_VENV:-$HOME/.local/share/tripleo-flow/heat-venv}
TRIPLEO_FLOW="$PWD/.venv/bin/tripleo-flow" bash tools/setup-heat.sh

step "tripleo-heat-templates trees (PyPI sdists, cached)"
.venv/bin/python tools/fetch_tht.py 12.1.0 >/dev/null
.venv/bin/python tools/fetch_tht.py 18.0.0 >/dev/null

step "ruff"
.venv/bin/ruff check tripleo_flow tests bench tools
step "mypy"
.venv/bin/mypy tripleo_flow

step "pytest"
.venv/bin/python -m pytest -p no:cacheprovider -q --durations=30 tests "$@"
step "done"
