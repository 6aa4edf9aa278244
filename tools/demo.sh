#!/usr/bin/env bash
# The main job on embedded defaults (local plan store; Heat of type processes:
# heat-api and 4 heat-engine workers on a private MariaDB and RabbitMQ, all child
# processes on loopback, no container image): the upstream tripleo-heat-templates
# 18.0.0, unmodified, deployed onto two pre-provisioned servers.
#   1. Heat's own virtualenv and Debian's mariadb-server, rabbitmq-server
#      (tools/setup-heat.sh with SKIP_IMAGES=1, as root; once, ~2-3 min)
#   2. tripleo-heat-templates 18.0.0 from its PyPI sdist (cached, checked)
#   3. plan create (renders the j2 templates, generates passwords)
#   4. deploy --baremetal-deployment (one controller, one compute, managed: false;
#      the shipped tripleo_flow/examples/baremetal-deployment.yaml): deployed-server
#      environment generated -> ephemeral Heat -> stack (~800 resources, about
#      5 minutes on a busy 2-core machine) -> config-download -> DB dump -> Heat stopped
#   5. deployment status and where the Ansible project is
#
#   bash tools/demo.sh            the real templates (about 6 minutes)
#   bash tools/demo.sh --sample   the small shipped sample plan (under a minute)
#
# Running it again recreates the plan and deploys it afresh in a new work dir
# (a recreated plan has new passwords, which a redeploy over the old work dir
# rightly refuses: CephClusterFSID cannot change on a deployed cloud).
set -euo pipefail
cd "$(dirname "$0")/.."
SAMPLE=false
case "${1:-}" in
    --sample) SAMPLE=true ;;
    "") ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "usage: bash tools/demo.sh [--sample]" >&2; exit 2 ;;
esac
bash tools/bootstrap.sh
TF="$PWD/.venv/bin/tripleo-flow"
# Heat's virtualenv, and MariaDB and RabbitMQ (run as private children, never as the
# system's services) for the default heat type processes.
if [ "$(id -u)" = 0 ]; then
    TRIPLEO_FLOW="$TF" SKIP_IMAGES=1 bash tools/setup-heat.sh
elif command -v mariadbd >/dev/null && command -v rabbitmq-server >/dev/null; then
    $TF heat install
else
    echo "demo.sh: the default heat type (processes) needs Debian's mariadb-server," \
         "mariadb-client and rabbitmq-server: run as root (or: sudo SKIP_IMAGES=1" \
         "bash tools/setup-heat.sh)." >&2
    exit 1
fi
if $SAMPLE; then
    PLAN=${PLAN:-sample}
    SOURCE=(--sample)
    DEPLOY_ARGS=()
else
    PLAN=${PLAN:-overcloud}
    THT=$(.venv/bin/python tools/fetch_tht.py "${THT_VERSION:-18.0.0}" | tail -1)
    SOURCE=(--templates "$THT")
    DEPLOY_ARGS=(--baremetal-deployment tripleo_flow/examples/baremetal-deployment.yaml)
fi
if $TF plan list -f value -c name | grep -qx "$PLAN"; then
    $TF plan delete "$PLAN" --force
fi
$TF plan create "$PLAN" "${SOURCE[@]}"
$TF role list --plan "$PLAN"
WORK_DIR=${WORK_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/tripleo-flow/demo/$PLAN-$(date +%Y%m%d-%H%M%S)}
$TF deploy --plan "$PLAN" --work-dir "$WORK_DIR" "${DEPLOY_ARGS[@]}"
$TF deployment status --plan "$PLAN"
$TF plan environment list "$PLAN"
echo "Ansible project: $WORK_DIR/config-download; Heat database dump: $WORK_DIR/heat-launcher"
