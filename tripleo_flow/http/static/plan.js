// One plan's page: its tabs (Deploy with the day-two operations, Environments,
// Parameters, Roles and networks, Passwords, History).
import { call } from "/gui/api.js";
import { baremetalInput, baremetalText } from "/gui/deployfiles.js";
import { enc, errorText, h, say, state } from "/gui/dom.js";
import { environmentsTab } from "/gui/environments.js";
import { UPDATE, UPGRADE, lifecycleSection } from "/gui/lifecycle.js";
import { parametersTab } from "/gui/parameters.js";
import { passwordsTab as passwordsPage } from "/gui/passwords.js";
import { rolesTab as rolesPage } from "/gui/roles.js";
import { scaleSection } from "/gui/scale.js";
import { heatSection } from "/gui/stackheat.js";

const TABS = [["overview", "Deploy"], ["environments", "Environments"],
              ["parameters", "Parameters"], ["roles", "Roles and networks"], ["passwords", "Passwords"],
              ["history", "History"]];

// app: draw (the view's show), fail (an error shown in the page) and follow (an
// execution followed live in a box, follow.js).
export async function planView(app, name, tab) {
  const tabs = h("nav", { class: "tabs", "aria-label": "Plan" },
    TABS.map(([id, label]) => h("a", { href: `#/plans/${enc(name)}/${id}`, text: label,
                                       "aria-current": id === tab ? "page" : false })));
  const body = h("div", {});
  app.draw(`Plan ${name}`, tabs, body);
  const views = { overview: deployTab, environments: environmentsTab,
                  parameters: parametersTab, roles: rolesTab, passwords: passwordsTab,
                  history: historyTab };
  await (views[tab] || deployTab)(name, body, app);
}

async function deploymentSummary(name) {
  const status = await call("GET", `/v1/plans/${enc(name)}/deployment`);
  const failures = status.deployment_status === "DEPLOY_FAILED"
    ? await call("GET", `/v1/plans/${enc(name)}/deployment/failures`) : [];
  return h("div", { id: "deployment-status" },
    h("p", {}, "Deployment status: ", state(status.deployment_status || "NONE")),
    status.work_dir ? h("p", { class: "muted", text: `Config-download: ${status.work_dir}/config-download` }) : null,
    status.message ? h("p", { text: status.message }) : null,
    failures.length ? h("div", {}, h("h3", { text: "Failed resources" }),
      h("ul", {}, failures.map((f) => h("li", {},
        h("strong", { text: f.resource || f.name || "" }), " ",
        f.status_reason || f.reason || JSON.stringify(f))))) : null);
}

async function deployTab(name, body, app) {
  const summary = h("div", {}, await deploymentSummary(name));
  // "" sends no heat_type: the type the deployment was made with, else the server's default.
  const heat = h("select", { id: "heat-type" },
    [["", "as deployed (else the default)"], ...["native", "processes", "container", "pod",
      "installed"].map((t) => [t, t])]
      .map(([value, text]) => h("option", { value, text })));
  const progress = h("div", { id: "progress", "aria-live": "polite" });
  const button = h("button", { class: "primary", type: "submit", text: "Deploy" });
  // The servers (TripleO's baremetal deployment file): its text goes in the request.
  const servers = baremetalInput(h, "baremetal-file", { "aria-describedby": "baremetal-help" });
  const form = h("form", {},
    h("div", { class: "form-row" }, h("label", { for: "baremetal-file",
      text: "Baremetal deployment (optional)" }), servers),
    h("p", { class: "muted", id: "baremetal-help", text: "The roles' servers " +
      "(pre-provisioned or Ironic nodes), as for deploy --baremetal-deployment." }),
    h("div", { class: "form-row" }, h("label", { for: "heat-type", text: "Heat" }), heat, button));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    button.disabled = true;
    try {
      const input = { plan: name, work_dir: name };
      if (heat.value) input.heat_type = heat.value;
      const text = await baremetalText(servers);
      if (text !== undefined) input.baremetal_deployment = text;
      const execution = await call("POST", "/v1/workflows/deploy/executions", {
        json: { input } });
      await app.follow(execution, progress);
      summary.replaceChildren(await deploymentSummary(name));
      form.dispatchEvent(new Event("deployed"));
    } catch (error) {
      if (error.name !== "AbortError") progress.append(h("p", { class: "error", role: "alert", text: errorText(error) }));
    } finally {
      button.disabled = false;
    }
  });
  // Once the plan has a deployment (shown again after a deploy): servers to delete, and
  // the lifecycle operations (each a table of lifecycle.js).
  const refresh = async () => summary.replaceChildren(await deploymentSummary(name));
  const scale = h("div", {});
  const lifecycle = h("div", {});
  const showDayTwo = async () => {
    scale.replaceChildren(await scaleSection({ h, errorText, say }, name, heat, app.follow,
                                             refresh) || "");
    const sections = await Promise.all([UPDATE, UPGRADE].map((spec) => lifecycleSection(
      { h, errorText, say }, spec, name, heat, app.follow, refresh)));
    lifecycle.replaceChildren(...sections.filter(Boolean));
  };
  body.append(h("section", { "aria-labelledby": "deploy-h" },
    h("h2", { id: "deploy-h", text: "Deployment" }), summary, form, progress),
    heatSection({ h, errorText, say, follow: app.follow }, name), scale, lifecycle);
  await showDayTwo();
  form.addEventListener("deployed", () => showDayTwo().catch(app.fail));
}

async function historyTab(name, body) {
  const problem = h("p", { class: "error", role: "alert" });
  const list = h("tbody", {});
  const render = async () => {
    const versions = await call("GET", `/v1/plans/${enc(name)}/history`);
    list.replaceChildren(...versions.map((v) => h("tr", { "data-version": v.version },
      h("td", { text: v.version }), h("td", { text: v.last_modified || "" }),
      h("td", { text: v.current ? "current" : "" }),
      h("td", {}, v.current ? null : h("button", { type: "button", text: "Restore",
        "aria-label": `Restore version ${v.version}`, onclick: async () => {
          problem.textContent = "";
          try {
            await call("POST", `/v1/plans/${enc(name)}/restore`, { json: { version: v.version } });
            say(`Version ${v.version} restored.`);
            await render();
          } catch (e) {
            problem.textContent = errorText(e);
          }
        } })))));
  };
  await render();
  body.append(h("section", { "aria-labelledby": "history-h" },
    h("h2", { id: "history-h", text: "Versions of plan-environment.yaml" }), problem,
    h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "Version" }), h("th", { text: "Modified" }),
      h("th", { text: "" }), h("th", { text: "Actions" }))), list)));
}

// The roles and networks, then the plan's j2 templates rendered again (after its files
// changed), as `tripleo-flow plan render` does: the workflow
// tripleo.plan.render_deployment_plan, followed live.
async function rolesTab(name, body, app) {
  await rolesPage({ h, errorText, say }, name, body);
  const progress = h("div", { id: "render-progress", "aria-live": "polite" });
  // (a refusal of the start; how a started rendering ended shows in its progress)
  const problem = h("p", { class: "error", role: "alert", id: "render-problem" });
  const done = h("p", { id: "render-done" });
  const button = h("button", { type: "button", id: "render-plan", text: "Render templates",
    onclick: async () => {
      button.disabled = true;
      problem.textContent = "";
      done.textContent = "";
      try {
        const execution = await call("POST", "/v1/workflows/tripleo.plan.render_deployment_plan/executions",
                                     { json: { input: { plan: name } } });
        const ended = await app.follow(execution, progress)
          || await call("GET", `/v1/executions/${enc(execution.id)}`);
        if (ended.state !== "SUCCESS") return;  // its end and error are shown followed
        const out = ended.output || {};
        done.textContent = `Rendered ${out.rendered} template(s): ${out.written} written, ` +
          `${out.removed} removed.`;
        say(`The templates of ${name} were rendered again.`);
      } catch (error) {
        if (error.name !== "AbortError") problem.textContent = errorText(error);
      } finally {
        button.disabled = false;
      }
    } });
  body.append(h("section", { "aria-labelledby": "render-h" },
    h("h2", { id: "render-h", text: "Templates" }),
    h("p", { class: "muted", text: "Render the plan's j2 templates again (after its roles, " +
      "networks or files were changed), as plan render does." }),
    h("p", {}, button), problem, progress, done));
}

const passwordsTab = (name, body, app) => passwordsPage({ h, errorText, say, follow: app.follow },
                                                        name, body);
