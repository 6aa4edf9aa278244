#!/usr/bin/env bash
# The main job on embedded defaults: a whole deployment of the shipped sample
# plan with a local plan store (under $XDG_DATA_HOME, or ~/.local/share,
# /tripleo-flow), a native heat-all on SQLite, and no other services.
#   1. Heat's own virtualenv (tripleo-flow heat install; once, ~1-2 min)
#   2. plan create --sample (renders templates, generates passwords)
#   3. deploy: ephemeral Heat -> stack -> config-download -> DB dump -> Heat stopped
#   4. deployment status and the rendered Ansible project
# Running it again recreates the plan and deploys it afresh in a new work dir
# (a recreated plan has new passwords, which a redeploy over the old work dir
# rightly refuses: CephClusterFSID cannot change on a deployed cloud).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/bootstrap.sh
TF="$PWD/.venv/bin/tripleo-flow"
PLAN=${PLAN:-sample}
$TF heat install
if $TF plan list -f value -c name | grep -qx "$PLAN"; then
    $TF plan delete "$PLAN" --force
fi
$TF plan create "$PLAN" --sample --description "tripleo-flow sample plan"
$TF roles list --plan "$PLAN"
WORK_DIR=${WORK_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/tripleo-flow/demo/$PLAN-$(date +%Y%m%d-%H%M%S)}
$TF deploy --plan "$PLAN" --heat-type native --work-dir "$WORK_DIR"
$TF deployment status --plan "$PLAN"
$TF plan list
echo "Ansible project: $WORK_DIR/config-download; Heat database dump: $WORK_DIR/heat-launcher"
