// The Plans page: the plans, each one's export, update and delete, and a new plan's creation.
import { ApiError, call } from "/gui/api.js";
import { download, enc, errorText, h, onSubmit, say, state } from "/gui/dom.js";

async function deletePlan(plan, row) {
  if (!confirm(`Delete plan ${plan.name} and all its files?`)) return;
  try {
    await call("DELETE", `/v1/plans/${enc(plan.name)}`);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 409)) throw error;
    // The CLI's guard: a plan with a recorded deployment needs --force.
    if (!confirm(`${error.message}\n\nDelete it anyway (force)?`)) return;
    await call("DELETE", `/v1/plans/${enc(plan.name)}?force=true`);
  }
  row.remove();
  say(`Plan ${plan.name} deleted.`);
}

function createPlanForm(onCreated) {
  const name = h("input", { id: "plan-name", type: "text", required: true, value: "overcloud" });
  const description = h("input", { id: "plan-description", type: "text" });
  const file = h("input", { id: "plan-file", type: "file", accept: ".tar.gz,.tgz,application/gzip" });
  const sample = h("input", { id: "plan-sample", type: "checkbox", checked: true });
  const problem = h("p", { class: "error", role: "alert" });
  sample.addEventListener("change", () => { file.disabled = sample.checked; });
  file.disabled = true;
  const button = h("button", { class: "primary", type: "submit", text: "Create plan" });
  const form = h("form", {},
    h("div", { class: "form-row" }, h("label", { for: "plan-name", text: "Name" }), name,
      h("label", { for: "plan-description", text: "Description" }), description),
    h("div", { class: "form-row" }, sample, h("label", { for: "plan-sample", text: "The shipped sample plan" })),
    h("div", { class: "form-row" }, h("label", { for: "plan-file", text: "or templates (.tar.gz)" }), file),
    problem, button);
  onSubmit(form, button, problem, async () => {
    const query = `name=${enc(name.value)}&description=${enc(description.value)}`;
    if (sample.checked) {
      await call("POST", `/v1/plans?${query}&sample=true`);
    } else {
      if (!file.files.length) throw new Error("Choose a .tar.gz of the plan's templates.");
      await call("POST", `/v1/plans?${query}`, { body: file.files[0], type: "application/gzip" });
    }
    say(`Plan ${name.value} created.`);
    onCreated();
  });
  return form;
}

// A plan's templates replaced by an archive's, as `plan update NAME DIR|TARBALL` does:
// its parameter values, passwords and user files are kept (PUT /v1/plans/NAME).
function updatePlanForm(plans) {
  const choice = h("select", { id: "update-plan-name" },
    plans.map((p) => h("option", { value: p.name, text: p.name })));
  const file = h("input", { id: "update-plan-file", type: "file", accept: ".tar.gz,.tgz,application/gzip" });
  const problem = h("p", { class: "error", role: "alert", id: "update-plan-error" });
  const button = h("button", { type: "submit", text: "Update plan" });
  const form = h("form", { "aria-label": "Update a plan's templates" },
    h("div", { class: "form-row" }, h("label", { for: "update-plan-name", text: "Plan" }), choice,
      h("label", { for: "update-plan-file", text: "templates (.tar.gz)" }), file),
    h("p", { class: "muted", text: "The plan's templates are replaced by the archive's; its " +
      "parameter values, passwords and user environments are kept, as plan update does." }),
    problem, button);
  onSubmit(form, button, problem, async () => {
    if (!file.files.length) throw new Error("Choose a .tar.gz of the plan's templates.");
    await call("PUT", `/v1/plans/${enc(choice.value)}`, { body: file.files[0], type: "application/gzip" });
    say(`Plan ${choice.value} updated.`);
    file.value = "";
  });
  return form;
}

// app: draw (the view's show) and fail (an error shown in the page).
export async function plansView(app) {
  const plans = await call("GET", "/v1/plans");
  const rows = plans.map((plan) => {
    const row = h("tr", {},
      h("td", {}, h("a", { href: `#/plans/${enc(plan.name)}`, text: plan.name })),
      h("td", { text: plan.description || "" }),
      h("td", {}, state(plan.deployment_status || "NONE")));
    row.append(h("td", { class: "actions" },
      h("button", { type: "button", text: "Export", "aria-label": `Export ${plan.name}`,
                    onclick: () => download(`/v1/plans/${enc(plan.name)}/export`, `${plan.name}.tar.gz`)
                      .catch((e) => say(errorText(e))) }),
      h("button", { type: "button", class: "danger", text: "Delete", "aria-label": `Delete ${plan.name}`,
                    onclick: () => deletePlan(plan, row).catch((e) => say(errorText(e))) })));
    return row;
  });
  app.draw("Plans",
    h("section", { "aria-labelledby": "plans-h" }, h("h2", { id: "plans-h", text: "Plans" }),
      plans.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "Name" }),
        h("th", { text: "Description" }), h("th", { text: "Deployment" }), h("th", { text: "Actions" }))),
        h("tbody", {}, rows)) : h("p", { class: "muted", text: "No plans yet." })),
    h("section", { "aria-labelledby": "create-h" }, h("h2", { id: "create-h", text: "Create a plan" }),
      createPlanForm(() => plansView(app).catch(app.fail))),
    plans.length ? h("section", { "aria-labelledby": "update-h" },
      h("h2", { id: "update-h", text: "Update a plan's templates" }), updatePlanForm(plans)) : null);
}
