#!/usr/bin/env bash
# The main job on embedded defaults (local plan store, native heat-all on SQLite,
# no other services): the upstream tripleo-heat-templates 18.0.0, unmodified,
# deployed onto two pre-provisioned servers.
#   1. Heat's own virtualenv (tripleo-flow heat install; once, ~1-2 min)
#   2. tripleo-heat-templates 18.0.0 from its PyPI sdist (cached, checked)
#   3. plan create (renders the j2 templates, generates passwords)
#   4. deploy --baremetal-deployment (one controller, one compute, managed: false;
#      the shipped tripleo_flow/examples/baremetal-deployment.yaml): deployed-server
#      environment generated -> ephemeral Heat -> stack (~800 resources, about
#      8 minutes here) -> config-download -> DB dump -> Heat stopped
#   5. deployment status and where the Ansible project is
#
#   bash tools/demo.sh            the real templates (about 10 minutes)
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
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) echo "usage: bash tools/demo.sh [--sample]" >&2; exit 2 ;;
esac
bash tools/bootstrap.sh
TF="$PWD/.venv/bin/tripleo-flow"
$TF heat install
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
$TF deploy --plan "$PLAN" --heat-type native --work-dir "$WORK_DIR" "${DEPLOY_ARGS[@]}"
$TF deployment status --plan "$PLAN"
$TF plan environment list "$PLAN"
echo "Ansible project: $WORK_DIR/config-download; Heat database dump: $WORK_DIR/heat-launcher"
