#!/bin/bash
# Install TripleO's validation framework: a virtualenv with ansible-core, validations-libs'
# callback plugins (vf_validation_json writes the framework's JSON log of a run), and
# validations-common's and tripleo-validations' playbooks, roles, modules and lookup
# plugins (all under <venv>/share/ansible), pinned by tools/validations-constraints.txt. tripleo-flow runs
# `validation run` with it when [validations] venv (or TRIPLEO_FLOW_VALIDATIONS_VENV)
# names it. A venv of its own, apart from tools/setup-ansible.sh's: the validation
# packages pin `ansible<2.10`, so they go in without their dependencies, and their
# share/ansible would mix with tripleo-ansible's.
# validations-libs' Python API and CLI are not used (they would need cliff and
# ansible-runner): tripleo-flow starts ansible-playbook itself in a process group it owns,
# so `validation stop` ends every Ansible process; ansible-runner (under pexpect) puts
# ansible-playbook in a session of its own that an outside stop cannot reach.
# Idempotent: when the venv already has these versions, a run only checks it.
# Environment:
#   TRIPLEO_FLOW_VALIDATIONS_VENV  the virtualenv (default ~/.local/share/tripleo-flow/validations-venv)
#   PYTHON                         the Python that creates it (default python3; 3.10-3.12)
#   FORCE=1                        rebuild even when the venv looks complete
set -euo pipefail
cd "$(dirname "$0")/.."

ANSIBLE_CORE_VERSION=2.15.13
VALIDATIONS_LIBS_VERSION=1.9.0
VALIDATIONS_COMMON_VERSION=1.9.0
TRIPLEO_VALIDATIONS_VERSION=16.0.0
VENV=${TRIPLEO_FLOW_VALIDATIONS_VENV:-$HOME/.local/share/tripleo-flow/validations-venv}
PYTHON=${PYTHON:-python3}
FORCE=${FORCE:-0}

step() { printf '[setup-validations] %s\n' "$*"; }
timed() {
    local start=$SECONDS
    "$@"
    step "  done in $((SECONDS - start)) s"
}

installed() {
    [ -x "$VENV/bin/python" ] && [ -x "$VENV/bin/ansible-playbook" ] \
        && [ -d "$VENV/share/ansible/validation-playbooks" ] || return 0
    "$VENV/bin/python" -c "import importlib.metadata as m; \
print(m.version('ansible-core'), m.version('validations-libs'), m.version('validations-common'), m.version('tripleo-validations'))" \
        2>/dev/null || true
}

wanted="$ANSIBLE_CORE_VERSION $VALIDATIONS_LIBS_VERSION $VALIDATIONS_COMMON_VERSION $TRIPLEO_VALIDATIONS_VERSION"
if [ "$FORCE" != 1 ] && [ "$(installed)" = "$wanted" ]; then
    step "ansible-core $ANSIBLE_CORE_VERSION, validations-libs $VALIDATIONS_LIBS_VERSION, validations-common $VALIDATIONS_COMMON_VERSION and tripleo-validations $TRIPLEO_VALIDATIONS_VERSION present in $VENV"
else
    step "ansible-core $ANSIBLE_CORE_VERSION + validations-libs $VALIDATIONS_LIBS_VERSION + validations-common $VALIDATIONS_COMMON_VERSION + tripleo-validations $TRIPLEO_VALIDATIONS_VERSION at $VENV (PyPI)"
    mkdir -p "$(dirname "$VENV")"
    timed "$PYTHON" -m venv --clear "$VENV"
    cp tools/validations-constraints.txt "$VENV/tripleo-flow-constraints.txt"
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        -c "$VENV/tripleo-flow-constraints.txt" "ansible-core==$ANSIBLE_CORE_VERSION"
    timed "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
        "validations-libs==$VALIDATIONS_LIBS_VERSION" "validations-common==$VALIDATIONS_COMMON_VERSION" \
        "tripleo-validations==$TRIPLEO_VALIDATIONS_VERSION"
    got=$(installed)
    if [ "$got" != "$wanted" ]; then
        echo "setup-validations.sh: $VENV has '${got:-nothing}' after install, not '$wanted'" >&2
        exit 1
    fi
fi
# ansible-playbook must start, and the framework's content be where tripleo-flow looks.
"$VENV/bin/ansible-playbook" --version >/dev/null
for sub in validation-playbooks roles library callback_plugins/vf_validation_json.py groups.yaml; do
    [ -e "$VENV/share/ansible/$sub" ] || { echo "setup-validations.sh: no $VENV/share/ansible/$sub" >&2; exit 1; }
done
step "ready: export TRIPLEO_FLOW_VALIDATIONS_VENV=$VENV"
