#!/usr/bin/env bash
# The main job on embedded defaults: a local plan store under $XDG_DATA_HOME
# (or ~/.local/share)/tripleo-flow, no services needed.  Creates the shipped
# sample plan (rendering its templates and generating its passwords), shows it
# and lists the plans.  Run it again and the plan is recreated.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/bootstrap.sh
TF=.venv/bin/tripleo-flow
PLAN=${PLAN:-sample}
if $TF plan list -f value -c name | grep -qx "$PLAN"; then
    $TF plan delete "$PLAN" --force
fi
$TF plan create "$PLAN" --sample --description "tripleo-flow sample plan"
$TF roles list --plan "$PLAN"
$TF capabilities show --plan "$PLAN"
$TF plan show "$PLAN"
$TF plan list
