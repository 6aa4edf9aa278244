#!/bin/bash
# Install the Ansible that runs TripleO's config-download: a virtualenv with the ansible
# package (ansible-core and the collections TripleO's playbooks use: ansible.posix,
# community.general, containers.podman, openstack.cloud...) and tripleo-ansible's roles,
# modules and plugins (<venv>/share/ansible), pinned by tools/ansible-constraints.txt.
# jmespath: the json_query filter that config-download's deployments.yaml (tripleo-common's)
# runs on the controller for every software deployment.
# tripleo-flow uses it when [ansible] venv (or TRIPLEO_FLOW_ANSIBLE_VENV) names it.
# Idempotent: when the venv already has these versions, a run only checks it.
# Environment:
#   TRIPLEO_FLOW_ANSIBLE_VENV  the virtualenv (default ~/.local/share/tripleo-flow/ansible-venv)
#   PYTHON                     the Python that creates it (default python3; 3.10-3.12)
#   FORCE=1                    rebuild even when the venv looks complete
set -euo pipefail
cd "$(dirname "$0")/.."

ANSIBLE_VERSION=8.7.0
TRIPLEO_ANSIBLE_VERSION=6.0.0
VENV=${TRIPLEO_FLOW_ANSIBLE_VENV:-$HOME/.local/share/tripleo-flow/ansible-venv}
PYTHON=${PYTHON:-python3}
FORCE=${FORCE:-0}

step() { printf '[setup-ansible] %s\n' "$*"; }
timed() {
    local start=$SECONDS
    "$@"
    step "  done in $((SECONDS - start)) s"
}

installed() {
    [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/ansible-playbook" ] \
        && [ -d "$VENV/share/ansible/roles" ] || return 0
    "$VENV/bin/python" -c "import importlib.metadata as m, requests, jsonschema, jmespath; \
print(m.version('ansible'), m.version('tripleo-ansible'))" 2>/dev/null || true
}

wanted="$ANSIBLE_VERSION $TRIPLEO_ANSIBLE_VERSION"
if [ "$FORCE" != 1 ] && [ "$(installed)" = "$wanted" ]; then
    step "ansible $ANSIBLE_VERSION and tripleo-ansible $TRIPLEO_ANSIBLE_VERSION present in $VENV"
else
    step "ansible $ANSIBLE_VERSION + tripleo-ansible $TRIPLEO_ANSIBLE_VERSION at $VENV (PyPI)"
    mkdir -p "$(dirname "$VENV")"
    timed "$PYTHON" -m venv --clear "$VENV"
    cp tools/ansible-constraints.txt "$VENV/tripleo-flow-constraints.txt"
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$VENV/tripleo-flow-constraints.txt" "ansible==$ANSIBLE_VERSION" requests jsonschema jmespath
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "tripleo-ansible==$TRIPLEO_ANSIBLE_VERSION"
    got=$(installed)
    if [ "$got" != "$wanted" ]; then
        echo "setup-ansible.sh: $VENV has '${got:-nothing}' after install, not '$wanted'" >&2
        exit 1
    fi
fi
# ansible-playbook must start, and tripleo-ansible's content be where tripleo-flow looks.
"$VENV/bin/ansible-playbook" --version >/dev/null
for sub in roles plugins/modules plugins/action plugins/filter; do
    [ -d "$VENV/share/ansible/$sub" ] || { echo "setup-ansible.sh: no $VENV/share/ansible/$sub" >&2; exit 1; }
done
step "ready: export TRIPLEO_FLOW_ANSIBLE_VENV=$VENV"
