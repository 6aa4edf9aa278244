// tripleo-flow's web GUI: a thin client of /v1 (every change goes through the API).
import { ApiError, call, clearToken, events, setToken, token } from "/gui/api.js";
import { followExecution } from "/gui/follow.js";
import { baremetalInput, baremetalText } from "/gui/deployfiles.js";
import { drawGraph } from "/gui/graph.js";
import { nodesView as nodesPage } from "/gui/nodes.js";
import { rolesTab as rolesPage } from "/gui/roles.js";
import { UPDATE, UPGRADE, lifecycleSection } from "/gui/lifecycle.js";
import { scaleSection } from "/gui/scale.js";
import { validationsView as validationsPage } from "/gui/validations.js";
import { backupsView as backupsPage } from "/gui/backups.js";
import { workflowsView as workflowsPage } from "/gui/workflows.js";
import { passwordsTab as passwordsPage } from "/gui/passwords.js";
import { heatSection } from "/gui/stackheat.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
const enc = encodeURIComponent;
let leaving = new AbortController();  // aborts the current view's streams

// -- small DOM helpers -------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

let ids = 0;
const uid = (prefix) => `${prefix}-${++ids}`;

function say(message) {
  const box = document.getElementById("status");
  box.textContent = message;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { box.textContent = ""; }, 6000);
}

function errorText(error) {
  return error instanceof ApiError ? error.message : String(error.message || error);
}

function show(title, ...content) {
  document.title = `${title} · tripleo-flow`;
  main.replaceChildren(h("h1", { text: title }), ...content.filter(Boolean));
  main.focus({ preventScroll: true });
}

// The show() of the view route() is drawing now: once the user has gone elsewhere, a
// view whose requests end late draws nothing (it would replace the newer view).
function drawer() {
  const signal = leaving.signal;
  return (title, ...content) => { if (!signal.aborted) show(title, ...content); };
}

function state(value) { return h("span", { class: `state-${value}`, text: value }); }

function when(seconds) { return seconds ? new Date(seconds * 1000).toLocaleString() : ""; }

// -- login ---------------------------------------------------------------------

function loginView(message = "") {
  nav.hidden = true;
  const problem = h("p", { class: "error", role: "alert", text: message });
  const input = h("input", { id: "token", type: "password", name: "token", required: true,
                             autocomplete: "current-password", size: 40 });
  const tokenForm = h("form", { "aria-label": "Log in with a token" },
    h("div", { class: "form-row" }, h("label", { for: "token", text: "API token" }), input),
    h("p", { class: "muted", text: "The [api] auth_token of the server (or a Keystone " +
      "token when it uses Keystone). It is kept in this browser tab only." }),
    h("button", { class: "primary", type: "submit", text: "Log in" }));
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    enter(input.value.trim(), problem);
  });
  show("Log in", h("section", {}, problem, tokenForm));
  input.focus();
  // A server on Keystone also takes a user name and password (POST /v1/auth/tokens).
  fetch("/v1/auth", { cache: "no-store", credentials: "omit" })
    .then((response) => (response.ok ? response.json() : null))
    .then((auth) => {
      if (!auth || auth.strategy !== "keystone" || !tokenForm.isConnected) return;
      const keystoneForm = keystoneLoginForm(problem);
      tokenForm.before(keystoneForm, h("h2", { text: "Or with a token" }));
      tokenForm.querySelector("button").textContent = "Log in with the token";
      tokenForm.querySelector("button").classList.remove("primary");
      keystoneForm.querySelector("input").focus();
    })
    .catch(() => {});
}

function keystoneLoginForm(problem) {
  const field = (id, label, attrs) => h("div", { class: "form-row" },
    h("label", { for: id, text: label }), h("input", { id, name: id, size: 30, ...attrs }));
  const form = h("form", { "aria-label": "Log in with Keystone" },
    field("ks-user", "User name", { required: true, autocomplete: "username" }),
    field("ks-password", "Password", { type: "password", required: true,
                                       autocomplete: "current-password" }),
    field("ks-project", "Project", { required: true }),
    field("ks-domain", "Domain", { value: "Default", required: true }),
    h("p", { class: "muted", text: "Keystone checks the password and gives this tab a " +
      "token for the project; the password is not kept." }),
    h("button", { class: "primary", type: "submit", text: "Log in with Keystone" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = (id) => form.querySelector(`#${id}`).value.trim();
    const domain = value("ks-domain");
    problem.textContent = "";
    try {
      const response = await fetch("/v1/auth/tokens", {
        method: "POST", cache: "no-store", credentials: "omit",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ username: value("ks-user"),
                               password: form.querySelector("#ks-password").value,
                               project: value("ks-project"), user_domain: domain,
                               project_domain: domain }) });
      const answer = await response.json().catch(() => null);
      form.querySelector("#ks-password").value = "";
      if (!response.ok) {
        problem.textContent = (answer && answer.error && answer.error.message) ||
          `HTTP ${response.status}`;
        return;
      }
      enter(answer.token, problem);
    } catch (error) {
      problem.textContent = errorText(error);
    }
  });
  return form;
}

// Keep ``value`` as this tab's token if the API takes it, and open the plans.
async function enter(value, problem) {
  setToken(value);
  try {
    await call("GET", "/v1/plans");
    // a new hash routes (hashchange); the same one is routed here
    if (location.hash === "#/plans") route();
    else location.hash = "#/plans";
  } catch (error) {
    clearToken();
    problem.textContent = errorText(error);
  }
}

// -- plans -------------------------------------------------------------------------

async function download(path, filename) {
  const response = await call("GET", path, { raw: true });
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

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
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    const query = `name=${enc(name.value)}&description=${enc(description.value)}`;
    button.disabled = true;
    try {
      if (sample.checked) {
        await call("POST", `/v1/plans?${query}&sample=true`);
      } else {
        if (!file.files.length) throw new Error("Choose a .tar.gz of the plan's templates.");
        await call("POST", `/v1/plans?${query}`, { body: file.files[0], type: "application/gzip" });
      }
      say(`Plan ${name.value} created.`);
      onCreated();
    } catch (error) {
      problem.textContent = errorText(error);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

async function plansView(draw = drawer()) {
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
  draw("Plans",
    h("section", { "aria-labelledby": "plans-h" }, h("h2", { id: "plans-h", text: "Plans" }),
      plans.length ? h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "Name" }),
        h("th", { text: "Description" }), h("th", { text: "Deployment" }), h("th", { text: "Actions" }))),
        h("tbody", {}, rows)) : h("p", { class: "muted", text: "No plans yet." })),
    h("section", { "aria-labelledby": "create-h" }, h("h2", { id: "create-h", text: "Create a plan" }),
      createPlanForm(() => plansView().catch(fail))));
}

// -- one plan ------------------------------------------------------------------------

const TABS = [["overview", "Deploy"], ["environments", "Environments"],
              ["parameters", "Parameters"], ["roles", "Roles and networks"], ["passwords", "Passwords"],
              ["history", "History"]];

async function planView(name, tab, draw = drawer()) {
  const tabs = h("nav", { class: "tabs", "aria-label": "Plan" },
    TABS.map(([id, label]) => h("a", { href: `#/plans/${enc(name)}/${id}`, text: label,
                                       "aria-current": id === tab ? "page" : false })));
  const body = h("div", {});
  draw(`Plan ${name}`, tabs, body);
  const views = { overview: deployTab, environments: environmentsTab,
                  parameters: parametersTab, roles: rolesTab, passwords: passwordsTab,
                  history: historyTab };
  await (views[tab] || deployTab)(name, body);
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

async function deployTab(name, body) {
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
      await followDeploy(execution, progress);
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
    scale.replaceChildren(await scaleSection({ h, errorText, say }, name, heat, followDeploy,
                                             refresh) || "");
    const sections = await Promise.all([UPDATE, UPGRADE].map((spec) => lifecycleSection(
      { h, errorText, say }, spec, name, heat, followDeploy, refresh)));
    lifecycle.replaceChildren(...sections.filter(Boolean));
  };
  body.append(h("section", { "aria-labelledby": "deploy-h" },
    h("h2", { id: "deploy-h", text: "Deployment" }), summary, form, progress),
    heatSection({ h, errorText, say, follow: followDeploy }, name), scale, lifecycle);
  await showDayTwo();
  form.addEventListener("deployed", () => showDayTwo().catch(fail));
}

// An execution followed live in ``box`` (follow.js), until the view is left.
const followDeploy = (execution, box) => followExecution({ h, state, signal: () => leaving.signal },
                                                         execution, box);

function environmentChoice(name, group, env, apply) {
  const id = uid("env");
  const exclusive = Boolean(group.mutually_exclusive);
  const input = h("input", { id, type: exclusive ? "radio" : "checkbox", name: exclusive ? `g-${group.title}` : env.file,
                             checked: env.enabled, "data-file": env.file });
  input.addEventListener("change", () => {
    const changes = {};
    if (exclusive) {
      for (const other of group.environments) changes[other.file] = other.file === env.file;
    } else {
      changes[env.file] = input.checked;
    }
    apply(changes);
  });
  return h("div", { class: "env" }, input, " ",
    h("label", { for: id, text: env.title || env.file }), " ",
    h("span", { class: "muted", text: env.file }),
    env.description ? h("div", { class: "muted", text: env.description }) : null,
    env.requires && env.requires.length ? h("div", { class: "muted", text: `Requires: ${env.requires.join(", ")}` }) : null);
}

async function environmentsTab(name, body) {
  const problem = h("p", { class: "error", role: "alert", id: "environments-error" });
  const list = h("div", {});
  const apply = async (changes) => {
    problem.textContent = "";
    try {
      await call("PUT", `/v1/plans/${enc(name)}/capabilities`, { json: { environments: changes } });
      say("Environments updated.");
    } catch (error) {
      problem.textContent = errorText(error);
    }
    await render();
  };
  const render = async () => {
    const topics = await call("GET", `/v1/plans/${enc(name)}/capabilities`);
    list.replaceChildren(...Object.entries(topics).map(([title, topic]) => h("section", {},
      h("h2", { text: title }), topic.description ? h("p", { class: "muted", text: topic.description }) : null,
      (topic.environment_groups || []).map((group) => {
        const fields = h("fieldset", {}, h("legend", { text: group.title + (group.mutually_exclusive ? " (choose one)" : "") }),
          group.environments.map((env) => environmentChoice(name, group, env, apply)));
        if (group.mutually_exclusive) {
          const none = uid("env");
          const off = h("input", { id: none, type: "radio", name: `g-${group.title}`,
                                   checked: !group.environments.some((e) => e.enabled) });
          off.addEventListener("change", () => apply(Object.fromEntries(group.environments.map((e) => [e.file, false]))));
          fields.append(h("div", { class: "env" }, off, " ", h("label", { for: none, text: "None" })));
        }
        return fields;
      }))));
  };
  await render();
  body.append(problem, list);
}

function parameterInput(id, entry) {
  // A hidden (NoEcho) parameter's value or default is never shown.
  const current = entry.hidden ? null : entry.value_set ? entry.value : entry.default;
  if (entry.type === "boolean") {
    return h("select", { id }, ["true", "false"].map((v) =>
      h("option", { value: v, text: v, selected: String(current) === v })));
  }
  const allowed = entry.constraints && entry.constraints.AllowedValues;
  if (Array.isArray(allowed)) {
    return h("select", { id }, allowed.map((v) => h("option", { value: v, text: v, selected: v === current })));
  }
  const text = current === null || current === undefined ? ""
    : typeof current === "string" ? current : JSON.stringify(current);
  const attrs = { id, type: entry.hidden ? "password" : "text", value: text, size: 40,
                  placeholder: entry.hidden ? (entry.value_set ? "(set, hidden)" : "(hidden)") : false,
                  autocomplete: entry.hidden ? "new-password" : "off" };
  if (entry.type === "number") attrs.inputmode = "decimal";
  return h("input", attrs);
}

// The value as the user typed it, in the parameter's type when it parses (the
// server checks it and answers an error shown beside the field).
function typedValue(entry, raw) {
  if (entry.type === "boolean") return raw === "true";
  if (entry.type === "number" && raw.trim() !== "" && !Number.isNaN(Number(raw))) return Number(raw);
  const list = entry.type === "comma_delimited_list" && raw.trim().startsWith("[");
  if (entry.type === "json" || list) { try { return JSON.parse(raw); } catch (e) { return raw; } }
  return raw;
}

// A parameter's description, constraints and default (a hidden one's never shown).
function helpText(entry) {
  const constraints = Object.entries(entry.constraints || {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  return [entry.description, constraints.join("; "),
          entry.hidden ? "" : `Default: ${JSON.stringify(entry.default)}`]
    .filter(Boolean).join(" · ");
}

function parameterRow(plan, name, entry) {
  const id = uid("param");
  let input = parameterInput(id, entry);
  const error = h("p", { class: "field-error", id: `${id}-error`, role: "alert" });
  input.setAttribute("aria-describedby", `${id}-error ${id}-help`);
  const save = h("button", { type: "submit", text: "Set", "aria-label": `Set ${name}` });
  const reset = h("button", { type: "button", text: "Reset", "aria-label": `Reset ${name}`,
                               disabled: !entry.value_set });
  const help = h("p", { class: "muted", id: `${id}-help`, text: helpText(entry) });
  const form = h("form", { class: "param", "data-parameter": name },
    h("div", {}, h("label", { for: id, text: name }), h("p", { class: "muted", text: entry.type })),
    h("div", {}, h("div", { class: "form-row" }, input, save, reset), error, help));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    input.removeAttribute("aria-invalid");
    try {
      await call("PUT", `/v1/plans/${enc(plan)}/parameters`,
                 { json: { parameters: { [name]: typedValue(entry, input.value) }, validate: true } });
      reset.disabled = false;
      say(`${name} set.`);
    } catch (e) {
      error.textContent = errorText(e);
      input.setAttribute("aria-invalid", "true");
    }
  });
  reset.addEventListener("click", async () => {
    try {
      await call("POST", `/v1/plans/${enc(plan)}/parameters/reset`, { json: { names: [name] } });
      reset.disabled = true;
      error.textContent = "";
      input.removeAttribute("aria-invalid");
      // The value set is gone: never show it as current while the default is read
      // (an ephemeral Heat validates the plan, seconds on a busy server).
      input.value = "";
      input.disabled = true;
      input.setAttribute("placeholder", "reading the default…");
      say(`${name} reset; reading its default…`);
      // The field shows the default again: the schema read anew (Heat's default of a
      // parameter the plan set was that value).
      const schema = await call("GET", `/v1/plans/${enc(plan)}/parameters/schema`);
      const now = (schema.parameters || {})[name] || { ...entry, value_set: false };
      const fresh = parameterInput(id, now);
      fresh.setAttribute("aria-describedby", input.getAttribute("aria-describedby"));
      input.replaceWith(fresh);
      input = fresh;
      help.textContent = helpText(now);
      say(`${name} reset to its default.`);
    } catch (e) {
      input.disabled = false;
      error.textContent = errorText(e);
    }
  });
  return form;
}

async function parametersTab(name, body) {
  const note = h("p", { class: "muted", id: "schema-loading",
                        text: "Reading the parameter schema (an ephemeral Heat validates the plan)…" });
  body.append(note);
  const schema = await call("GET", `/v1/plans/${enc(name)}/parameters/schema`);
  const filter = h("input", { id: "param-filter", type: "search", placeholder: "Filter by name" });
  const groups = new Map();
  for (const [param, entry] of Object.entries(schema.parameters).sort()) {
    const where = (entry.paths && entry.paths[0]) || "";
    if (!groups.has(where)) groups.set(where, []);
    groups.get(where).push(parameterRow(name, param, entry));
  }
  const sections = [...groups.entries()].sort().map(([where, rows]) =>
    h("section", {}, h("h2", { text: where ? `Nested template ${where}` : "Top-level template" }), rows));
  filter.addEventListener("input", () => {
    const needle = filter.value.toLowerCase();
    for (const form of body.querySelectorAll("form.param")) {
      form.hidden = needle !== "" && !form.dataset.parameter.toLowerCase().includes(needle);
    }
  });
  note.remove();
  body.append(h("div", { class: "form-row" }, h("label", { for: "param-filter", text: "Filter" }), filter), ...sections);
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

const rolesTab = (name, body) => rolesPage({ h, errorText, say }, name, body);

const passwordsTab = (name, body) => passwordsPage({ h, errorText, say, follow: followDeploy },
                                                   name, body);

// -- executions ----------------------------------------------------------------------

// One page of executions, newest first, and the path of the next page (the Link
// header with rel="next"; null after the last page).
async function executionsPage(path) {
  const response = await call("GET", path, { raw: true });
  const link = /<([^>]*)>\s*;\s*rel="?next"?/.exec(response.headers.get("Link") || "");
  return { list: await response.json(), next: link ? link[1] : null };
}

async function executionsView(draw = drawer()) {
  let page = await executionsPage("/v1/executions?sort_dir=desc");
  const row = (e) => h("tr", {},
    h("td", {}, h("a", { href: `#/executions/${enc(e.id)}`, text: e.id })),
    h("td", { text: e.workflow }), h("td", {}, state(e.state)),
    h("td", { text: when(e.created_at || e.started_at) }));
  const body = h("tbody", {}, page.list.map(row));
  const problem = h("span", { class: "error", role: "alert" });
  const more = h("button", { type: "button", id: "more-executions", text: "Older executions",
    onclick: async () => {
      more.disabled = true;
      try {
        page = await executionsPage(page.next);
        body.append(...page.list.map(row));
        problem.textContent = "";
      } catch (error) {
        problem.textContent = errorText(error);
      }
      more.disabled = false;
      more.hidden = !page.next;
    } });
  more.hidden = !page.next;
  draw("Executions", h("table", {},
    h("thead", {}, h("tr", {}, h("th", { text: "Execution" }), h("th", { text: "Workflow" }),
      h("th", { text: "State" }), h("th", { text: "Started" }))), body),
    h("p", {}, more, " ", problem));
}

// States an execution can be resumed from (the server decides; 409 otherwise).
const RESUMABLE = new Set(["INTERRUPTED", "PAUSED", "SUSPENDED"]);
// States an execution can be cancelled from (one that ended is left as it is).
const CANCELLABLE = new Set(["RUNNING", "PENDING", ...RESUMABLE]);
// States an execution can be stopped with ERROR from (a paused one is left as it is).
const STOPPABLE = new Set(["RUNNING", "PENDING", "SUSPENDED", "INTERRUPTED"]);

function taskDetail(task) {
  const bits = [];
  if (task.progress) bits.push(`${task.progress.done}/${task.progress.total}`);
  return bits.join(" ");
}

async function executionView(id, draw = drawer()) {
  const execution = await call("GET", `/v1/executions/${enc(id)}`);
  const graph = await call("GET", `/v1/workflows/${enc(execution.workflow)}`);
  const picture = h("div", { class: "graph", id: "graph" });
  const stateBox = h("span", {}, state(execution.state));
  const resumeProblem = h("span", { class: "error", role: "alert" });
  // A button that POSTs to /v1/executions/ID/<verb> (with `stop`: PUTs its state there,
  // as Mistral's execution update), then says so (409... shown beside it).
  const verbButton = (verb, text, done, stop = null) => {
    const button = h("button", { type: "button", id: verb, text, onclick: async () => {
      button.disabled = true;
      try {
        if (stop) await call("PUT", `/v1/executions/${enc(id)}`, { json: { state: stop } });
        else await call("POST", `/v1/executions/${enc(id)}/${verb}`);
        done();
      } catch (error) {
        resumeProblem.textContent = errorText(error);
        button.disabled = false;
      }
    } });
    return button;
  };
  // Not while "pausing": its running tasks still end in the process that runs it.
  const resume = RESUMABLE.has(execution.state) && !execution.pausing ? verbButton("resume", "Resume", () => {
    say(`Execution ${id} resumed.`);
    route();  // follow it again from the start
  }) : null;
  const pause = execution.state === "RUNNING" ? verbButton("pause", "Pause", () => {
    say(`Execution ${id} pauses once its running tasks end.`);
  }) : null;
  // Mistral's CANCELLED: its running tasks end, none starts, it is never resumed.
  const cancel = CANCELLABLE.has(execution.state) ? verbButton("cancel", "Cancel", () => {
    say(`Execution ${id} cancelled: its running tasks end, no new one starts.`);
    route();  // drawn again, CANCELLED, without Pause, Resume or Cancel
  }) : null;
  // Mistral's stop with ERROR or SUCCESS: its running tasks end, none starts.
  const stopped = (end) => () => {
    say(`Execution ${id} stopped with state ${end}: its running tasks end, no new one starts.`);
    route();
  };
  const fail = STOPPABLE.has(execution.state) ? verbButton("fail", "Fail", stopped("ERROR"), "ERROR") : null;
  const succeed = execution.state === "RUNNING" ? verbButton("succeed", "Succeed", stopped("SUCCESS"), "SUCCESS") : null;
  const tasksBody = h("tbody", {});
  const tasks = new Map();
  draw(`Execution ${execution.id}`,
    h("p", {}, `Workflow ${execution.workflow}: `, stateBox, " ", resume, pause, " ", cancel,
      " ", fail, " ", succeed, " ", resumeProblem),
    execution.state_info ? h("p", { class: "state-info", text: execution.state_info }) : null,
    execution.error ? h("pre", { class: "error", text: execution.error }) : null,
    h("h2", { text: "Task graph" }), picture,
    h("h2", { text: "Tasks" }),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "Task" }), h("th", { text: "Started" }),
      h("th", { text: "State" }), h("th", { text: "Published / error" }))), tasksBody),
    h("h2", { text: "Input" }), h("pre", { text: JSON.stringify(execution.input, null, 2) }),
    execution.output !== null ? h("div", {}, h("h2", { text: "Output" }),
      h("pre", { text: JSON.stringify(execution.output, null, 2) })) : null);
  const update = drawGraph(picture, graph);
  const record = (task) => {
    update(task.name, task.state, taskDetail(task));
    const row = h("tr", { "data-task": task.name }, h("td", { text: task.name }),
      h("td", { text: when(task.started_at) }), h("td", {}, state(task.state)),
      h("td", {}, task.error ? h("pre", { class: "error", text: task.error }) : null,
        Object.keys(task.published || {}).length ? h("pre", { text: JSON.stringify(task.published, null, 2) }) : null));
    if (tasks.has(task.name)) tasks.get(task.name).replaceWith(row);
    else tasksBody.append(row);
    tasks.set(task.name, row);
  };
  for (const task of await call("GET", `/v1/executions/${enc(id)}/tasks`)) record(task);
  await events(`/v1/executions/${enc(id)}/events`, (kind, data) => {
    if (kind === "task") record(data);
    else if (kind === "execution") {
      stateBox.replaceChildren(state(data.state));
      if (resume && !RESUMABLE.has(data.state)) resume.remove();
      if (pause && data.state !== "RUNNING") pause.remove();
      if (cancel && !CANCELLABLE.has(data.state)) cancel.remove();
      if (fail && !STOPPABLE.has(data.state)) fail.remove();
      if (succeed && data.state !== "RUNNING") succeed.remove();
      if (!resume && RESUMABLE.has(data.state)) route();  // paused: drawn again, with Resume
    }
  }, leaving.signal);
}

// -- nodes, validations and backups --------------------------------------------------

const nodesView = () => nodesPage({ h, show: drawer(), state, errorText, say,
                                    signal: () => leaving.signal });

const validationsView = () => validationsPage({ h, show: drawer(), state, errorText, say,
                                                signal: () => leaving.signal });

const backupsView = () => backupsPage({ h, show: drawer(), errorText, say, download });

const workflowsView = () => workflowsPage({ h, show: drawer(), errorText, say });

// -- routing -------------------------------------------------------------------------

function fail(error) {
  if (error.name === "AbortError") return;
  if (error instanceof ApiError && error.status === 401) return;
  main.append(h("p", { class: "error", role: "alert", text: errorText(error) }));
}

function route() {
  leaving.abort();
  leaving = new AbortController();
  if (!token()) { loginView(); return; }
  nav.hidden = false;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  let view;
  if (parts[0] === "plans" && parts[1]) view = planView(parts[1], parts[2] || "overview");
  else if (parts[0] === "executions" && parts[1]) view = executionView(parts[1]);
  else if (parts[0] === "executions") view = executionsView();
  else if (parts[0] === "nodes") view = nodesView();
  else if (parts[0] === "validations") view = validationsView();
  else if (parts[0] === "backups") view = backupsView();
  else if (parts[0] === "workflows") view = workflowsView();
  else view = plansView();
  view.catch(fail);
}

window.addEventListener("hashchange", route);
window.addEventListener("unauthorized", (event) => loginView(event.detail));
document.getElementById("logout").addEventListener("click", () => {
  clearToken();
  location.hash = "";
  loginView("Logged out.");
});
route();
