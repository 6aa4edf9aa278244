#!/usr/bin/env bash
# Install everything the tests need on a fresh Debian 12 machine (root), then
# run the style checks and every test: unit and functional (real Swift, Redis,
# MariaDB, heat-all, podman, Keystone, Ironic).
# Usage: tools/run-tests.sh [pytest args...]   (they are added to pytest's `tests`)
#        tools/run-tests.sh --setup-only      (install everything, run nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
setup_only=0
if [ "${1:-}" = "--setup-only" ]; then
    setup_only=1
    shift
fi
start=$(date +%s)
step() { printf '\n== %s (+%ss)\n' "$*" "$(( $(date +%s) - start ))"; }

# chromium: the GUI's browser tests (Playwright drives it; never `playwright install`).
# openssh-server: std.ssh's tests start their own sshd on loopback.  The second line is
# tools/setup-heat.sh's (MariaDB, RabbitMQ, podman, the image tools), installed by the
# same apt-get so that one update and one dpkg run serve both (setup-heat.sh then finds
# them present).
APT_PACKAGES=(redis-server zookeeper tmux git libvirt-dev pkg-config gcc chromium openssh-server
              mariadb-server mariadb-client rabbitmq-server podman runc mmdebstrap uidmap)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
logs=$(mktemp -d)
apt_pid=""
if [ "${#missing[@]}" -gt 0 ]; then
    # Debian's packages and tripleo-flow's own virtualenv (PyPI only) do not depend on
    # each other: apt-get runs while bootstrap.sh builds .venv.
    step "apt-get install ${missing[*]} in the background (log in $logs/apt.log)"
    (
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}"
    ) > "$logs/apt.log" 2>&1 &
    apt_pid=$!
fi

step "virtualenv .venv (tools/bootstrap.sh --tests)"
SWIFT=later bash tools/bootstrap.sh --tests
if [ -n "$apt_pid" ]; then
    if ! wait "$apt_pid"; then
        echo "== apt-get install failed; its output:" >&2
        tail -n 40 "$logs/apt.log" >&2
        exit 1
    fi
    step "Debian packages installed"
fi
# Services are started by the tests themselves, as private children on 127.0.0.1.
systemctl disable --now redis-server zookeeper ssh >/dev/null 2>&1 || true
export TRIPLEO_FLOW_SWIFT_BIN="$PWD/.venv-swift/bin"

# The service virtualenvs (and .venv-swift) do not depend on each other: they are built at
# the same time, each logging to its own file, while Heat's set-up (apt, its virtualenv,
# images) runs in the foreground.
export TRIPLEO_FLOW_KEYSTONE_VENV=${TRIPLEO_FLOW_KEYSTONE_VENV:-$HOME/.local/share/tripleo-flow/keystone-venv}
export TRIPLEO_FLOW_IRONIC_VENV=${TRIPLEO_FLOW_IRONIC_VENV:-$HOME/.local/share/tripleo-flow/ironic-venv}
export TRIPLEO_FLOW_ANSIBLE_VENV=${TRIPLEO_FLOW_ANSIBLE_VENV:-$HOME/.local/share/tripleo-flow/ansible-venv}
export TRIPLEO_FLOW_VALIDATIONS_VENV=${TRIPLEO_FLOW_VALIDATIONS_VENV:-$HOME/.local/share/tripleo-flow/validations-venv}
export TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS=${TRIPLEO_FLOW_TRIPLEO_COMMON_VENVS:-$HOME/.local/share/tripleo-flow/tripleo-common}
export TRIPLEO_FLOW_HEAT_VENV=${TRIPLEO_FLOW_HEAT_VENV:-$HOME/.local/share/tripleo-flow/heat-venv}
declare -A setups=(
    [swift]=tools/setup-swift.sh
    [keystone]=tools/setup-keystone.sh [ironic]=tools/setup-ironic.sh
    [ansible]=tools/setup-ansible.sh [validations]=tools/setup-validations.sh
    [tripleo-common]=tools/setup-tripleo-common.sh)
declare -A pids=()
step "virtualenvs at the same time: ${!setups[*]} (logs in $logs)"
for name in "${!setups[@]}"; do
    bash "${setups[$name]}" > "$logs/$name.log" 2>&1 &
    pids[$name]=$!
done

step "ephemeral Heat: MariaDB, podman, Heat virtualenv (tools/setup-heat.sh)"
TRIPLEO_FLOW="$PWD/.venv/bin/tripleo-flow" IMAGES_LATER=1 bash tools/setup-heat.sh

# The container images (5-9 min on a new machine, mostly downloads) are built while the
# tests run: the few tests that need them run last and wait for this outcome
# (tests/heat_images.py). A second setup-heat.sh only checks what the first installed.
export TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS="$logs/images.status"
export TRIPLEO_FLOW_TEST_HEAT_IMAGES_LOG="$logs/images.log"
step "Heat images in the background (log in $TRIPLEO_FLOW_TEST_HEAT_IMAGES_LOG)"
(
    if TRIPLEO_FLOW="$PWD/.venv/bin/tripleo-flow" bash tools/setup-heat.sh \
            > "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_LOG" 2>&1; then
        echo ok > "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS.tmp"
    else
        echo "failed: exit $?" > "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS.tmp"
    fi
    mv "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS.tmp" "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS"
) &
images_pid=$!

failed=0
for name in "${!pids[@]}"; do
    if wait "${pids[$name]}"; then
        step "$name virtualenv ready ($(tail -n 1 "$logs/$name.log"))"
    else
        echo "== ${setups[$name]} failed; its output:" >&2
        grep -v '^WARNING: Location' "$logs/$name.log" | tail -n 40 >&2
        failed=1
    fi
done
[ "$failed" = 0 ] || exit 1

step "tripleo-heat-templates trees (PyPI sdists, cached)"
.venv/bin/python tools/fetch_tht.py 12.1.0 >/dev/null
.venv/bin/python tools/fetch_tht.py 18.0.0 >/dev/null
# TripleO's own Train workbooks (tests/unit/engine/test_train_workbooks.py validates them).
step "tripleo-common 11.3.0 sdist (its Train Mistral workbooks, cached)"
.venv/bin/python tools/fetch_sdist.py tripleo-common 11.3.0 >/dev/null

if [ "$setup_only" = 1 ]; then
    step "set-up done but the Heat images (--setup-only: no check or test run); waiting for the images"
    wait "$images_pid" || true
    step "Heat images: $(cat "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS" 2>/dev/null || echo unknown)"
    exit 0
fi

step "ruff"
.venv/bin/ruff check tripleo_flow tests bench tools
step "mypy"
.venv/bin/mypy tripleo_flow

# With PYTHONDONTWRITEBYTECODE set (as on CI's machines) no process writes a .pyc, so
# each of the hundreds of test processes (CLI, HTTP servers, workers, conductors)
# would compile tripleo_flow again: compiled once here (compileall writes regardless).
step "byte-compile tripleo_flow and tests"
.venv/bin/python -m compileall -q -j 2 tripleo_flow tests bench tools >/dev/null

step "pytest"
status=0
.venv/bin/python -m pytest -p no:cacheprovider -q --durations=30 tests "$@" || status=$?
# A run that selected no image test may end first: the build is let finish (a build
# killed half-way would only be redone by the next run).
wait "$images_pid" || true
step "done (Heat images: $(cat "$TRIPLEO_FLOW_TEST_HEAT_IMAGES_STATUS" 2>/dev/null || echo unknown))"
exit "$status"
