#!/bin/bash
# Install what the ephemeral-Heat functional tests and benchmarks need (Debian 12, root).
# Idempotent: a second run only checks.  Measured on the 2-core dev machine:
#   apt-get install mariadb-server mariadb-client   ~40-60 s (first time), ~1 s after
#   tripleo-flow heat install                        ~65-90 s (first time), ~1 s after
# Environment:
#   TRIPLEO_FLOW            the tripleo-flow command (default: tripleo-flow on PATH)
#   TRIPLEO_FLOW_HEAT_VENV  where Heat's virtualenv goes (default:
#                           ~/.local/share/tripleo-flow/heat-venv, what the tests use)
set -euo pipefail

TRIPLEO_FLOW=${TRIPLEO_FLOW:-tripleo-flow}
VENV=${TRIPLEO_FLOW_HEAT_VENV:-$HOME/.local/share/tripleo-flow/heat-venv}

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

packages=(mariadb-server mariadb-client)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    step "apt-get install ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    timed apt-get update -qq
    # The tests run their own private mariadbd; policy-rc.d may refuse to start the
    # system one, which is fine.
    timed apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
    step "Debian packages present: ${packages[*]}"
fi

conf=$(mktemp --suffix=.conf)
trap 'rm -f "$conf"' EXIT
printf '[heat]\nvenv = %s\n' "$VENV" > "$conf"
step "Heat virtualenv at $VENV (tripleo-flow heat install)"
timed "$TRIPLEO_FLOW" --config-file "$conf" heat install -f value -c installed

"$VENV/bin/python" -c "import heat.cmd.all"
"$VENV/bin/openstack" --version
step "ready: export TRIPLEO_FLOW_HEAT_VENV=$VENV"
