#!/bin/bash
# Install what the ephemeral-Heat functional tests and benchmarks need (Debian 12, root).
# Idempotent: a second run only checks (a few seconds).  Measured on the loaded 2-core
# dev machine (first run):
#   apt-get install (mariadb, rabbitmq, podman, runc...)  ~60-90 s
#   pip install 'tripleo-flow[podman]' bindings            ~5 s
#   tripleo-flow heat install (Heat venv from PyPI)        ~65-120 s
#   tripleo-flow heat image build                          ~5-8 min
#       debian base rootfs (mmdebstrap) + import   ~2 min
#       heat image (podman build, pip in it)       ~2-3.5 min
#       services image (mariadb + rabbitmq rootfs) ~3 min
# Set SKIP_IMAGES=1 to skip podman, runc, mmdebstrap and the images (the native and
# MariaDB tests need none of them; tests/functional/heat/test_container.py and
# test_pod.py then fail). Set IMAGES_LATER=1 to install what the images need but not
# build them (tools/run-tests.sh builds them in the background while the tests run).
# Environment:
#   TRIPLEO_FLOW            the tripleo-flow command (default: tripleo-flow on PATH); its
#                           Python must have the podman bindings (installed here with pip)
#   TRIPLEO_FLOW_HEAT_VENV  Heat's virtualenv (default ~/.local/share/tripleo-flow/heat-venv,
#                           which is where the tests look when the variable is unset)
set -euo pipefail

TRIPLEO_FLOW=${TRIPLEO_FLOW:-tripleo-flow}
VENV=${TRIPLEO_FLOW_HEAT_VENV:-$HOME/.local/share/tripleo-flow/heat-venv}
SKIP_IMAGES=${SKIP_IMAGES:-0}
IMAGES_LATER=${IMAGES_LATER:-0}

step() { printf '[setup-heat] %s\n' "$*"; }
timed() {
    local start=$SECONDS
    "$@"
    step "  done in $((SECONDS - start)) s"
}

if [ "$(id -u)" != 0 ]; then
    echo "setup-heat.sh: run as root (it installs Debian packages)" >&2
    exit 1
fi

packages=(mariadb-server mariadb-client rabbitmq-server)
if [ "$SKIP_IMAGES" != 1 ]; then
    packages+=(podman runc mmdebstrap uidmap)
fi
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    timed apt-get update -qq
    # The tests (and --heat-type processes) run their own private mariadbd and RabbitMQ;
    # policy-rc.d may refuse to start the system ones, which is fine.
    timed apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    step "Debian packages present: ${packages[*]}"
fi
# Heat type processes starts its own RabbitMQ (and epmd) on loopback; where installing
# the package started the system's, listening on every address, stop it.
systemctl disable --now rabbitmq-server epmd.socket epmd.service >/dev/null 2>&1 || true

tf_python=$(head -1 "$(command -v "$TRIPLEO_FLOW")" | sed 's/^#!//')
if [ "$SKIP_IMAGES" != 1 ] && ! "$tf_python" -c 'import podman' 2>/dev/null; then
    step "pip install podman (bindings for tripleo-flow's Python: $tf_python)"
    timed "$tf_python" -m pip install --quiet 'podman>=5.0'
fi

conf=$(mktemp --suffix=.conf)
trap 'rm -f "$conf"' EXIT
printf '[heat]\nvenv = %s\n' "$VENV" > "$conf"
step "Heat virtualenv at $VENV (tripleo-flow heat install)"
timed "$TRIPLEO_FLOW" --config-file "$conf" heat install -f value -c installed
"$VENV/bin/python" -c "import heat.cmd.all"
"$VENV/bin/openstack" --version

if [ "$SKIP_IMAGES" != 1 ] && [ "$IMAGES_LATER" = 1 ]; then
    step "images: left for later (IMAGES_LATER=1)"
elif [ "$SKIP_IMAGES" != 1 ]; then
    step "images (tripleo-flow heat image build)"
    timed "$TRIPLEO_FLOW" --config-file "$conf" heat image build -f value -c built
fi
step "ready: export TRIPLEO_FLOW_HEAT_VENV=$VENV"
