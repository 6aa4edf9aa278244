// The Deploy tab's "Delete servers" section, as `overcloud node delete`: choose servers
// of the plan's last deployment (GET /v1/plans/{plan}/deployment/servers) or name host
// names, confirm, and start the same tripleo.scale.delete_nodes workflow (its scale-down
// playbook, the removal parameters, the stack update), followed live as a deploy is.
import { ApiError, call } from "/gui/api.js";
import { startAndFollow } from "/gui/follow.js";

const enc = encodeURIComponent;
export const WORKFLOW = "tripleo.scale.delete_nodes";

// ui: the page's helpers (h, errorText, say); follow(execution, box): the deploy's live
// progress; done(): called after the run (the deployment summary read again).
export async function scaleSection(ui, plan, heat, follow, done) {
  const { h } = ui;
  // Only a plan deployed (or tried) can have servers: never ask for a plan's without.
  const status = await call("GET", `/v1/plans/${enc(plan)}/deployment`);
  if (["NONE", "DEPLOYING", undefined].includes(status.deployment_status)) return null;
  let servers;
  try {
    servers = await call("GET", `/v1/plans/${enc(plan)}/deployment/servers`);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status !== 404) throw error;
    return null;  // nothing deployed: nothing to delete
  }
  const problem = h("p", { class: "error", role: "alert", id: "scale-error" });
  const progress = h("div", { id: "scale-progress", "aria-live": "polite" });
  const boxes = Object.entries(servers).sort().map(([role, hosts]) => h("fieldset", {},
    h("legend", { text: role }), hosts.map((host) => h("label", { class: "inline" },
      h("input", { type: "checkbox", "data-host": host, "aria-label": `Delete ${host}` }),
      ` ${host}`))));
  const others = h("input", { id: "scale-hosts", type: "text", size: 40,
                              placeholder: "host names, comma-separated" });
  const skip = h("input", { type: "checkbox", id: "skip-scale-playbook" });
  const button = h("button", { type: "button", class: "danger", id: "delete-servers",
                               text: "Delete servers" });
  button.addEventListener("click", async () => {
    problem.textContent = "";
    const chosen = [...document.querySelectorAll("[data-host]")].filter((b) => b.checked)
      .map((b) => b.dataset.host);
    const hosts = [...new Set([...chosen, ...others.value.split(",").map((s) => s.trim())
      .filter(Boolean)])];
    if (!hosts.length) {
      problem.textContent = "Choose the servers to delete, or name them.";
      return;
    }
    if (!window.confirm(`${hosts.map((x) => `- ${x}`).join("\n")}\n`
        + "Are you sure you want to delete these overcloud nodes?")) {
      ui.say("Nothing deleted.");
      return;
    }
    button.disabled = true;
    const input = { plan, hosts, work_dir: plan, run_ansible: !skip.checked };
    if (heat.value) input.heat_type = heat.value;
    await startAndFollow(ui, WORKFLOW, input, follow, progress, done, problem);
    button.disabled = false;
  });
  return h("section", { "aria-labelledby": "scale-h" },
    h("h2", { id: "scale-h", text: "Delete servers" }),
    h("p", { class: "muted", text: "As overcloud node delete: the scale-down playbook runs "
      + "on the servers leaving, then the plan's counts and removal policies are set and "
      + "the stack is updated (with the Heat chosen above)." }),
    boxes.length ? boxes : h("p", { class: "muted", id: "no-servers",
      text: "The last deployment names no servers (no AnsibleHostVarsMap output)." }),
    h("div", { class: "form-row" }, h("label", { for: "scale-hosts", text: "Other host names" }),
      others),
    h("p", {}, h("label", {}, skip, " skip the scale-down playbook (servers already gone)")),
    h("p", {}, button), problem, progress);
}
