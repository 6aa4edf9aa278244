// The Workflows page: the shipped and user workbooks and their workflows (each one's
// description and inputs), a run of any workflow with its inputs and env (as
// `workflow run NAME --input K=V --env NAME=VALUE`, `execution create --env JSON`:
// POST /v1/workflows/NAME/executions, then its execution page, which follows it), a
// user workbook's validate, create, update and delete (as `workbook
// validate|create|update|delete`: its YAML text, from a file or typed) and
// the actions tasks may run (as `action list`). Shipped workbooks are read-only.
// Every refusal is the API's words (bad YAML, a name that shadows a shipped
// workbook, a missing input).
import { call } from "/gui/api.js";

const enc = encodeURIComponent;

// ui: the page's helpers (h, show, errorText, say).
export async function workflowsView(ui) {
  const { h } = ui;
  const [workbooks, workflows] = await Promise.all([call("GET", "/v1/workbooks"),
                                                    call("GET", "/v1/workflows")]);
  const editor = editorSection(ui);
  ui.show("Workflows",
    h("section", { "aria-labelledby": "workbooks-h" },
      h("h2", { id: "workbooks-h", text: "Workbooks" }),
      h("p", { class: "muted", text: "Shipped workbooks are read-only; add your own below. " +
        "Open a workflow to see its inputs and run it." }),
      workbooks.map((wb) => workbookBlock(ui, wb, workflows, editor))),
    editor.section, actionsSection(ui));
}

function workbookBlock(ui, wb, workflows, editor) {
  const { h } = ui;
  const own = workflows.filter((w) => w.workbook === wb.name)
    .sort((a, b) => a.name.localeCompare(b.name));
  const problem = h("p", { class: "error", role: "alert" });
  const buttons = wb.shipped ? null : h("span", { class: "actions" },
    h("button", { type: "button", text: "Edit", "aria-label": `Edit workbook ${wb.name}`,
      onclick: async () => {
        problem.textContent = "";
        try {
          const full = await call("GET", `/v1/workbooks/${enc(wb.name)}`);
          editor.load(full.definition, full.file);
        } catch (error) { problem.textContent = ui.errorText(error); }
      } }),
    h("button", { type: "button", class: "danger", text: "Delete",
                  "aria-label": `Delete workbook ${wb.name}`,
      onclick: async () => {
        if (!confirm(`Delete workbook ${wb.name} and its workflows?`)) return;
        problem.textContent = "";
        try {
          await call("DELETE", `/v1/workbooks/${enc(wb.name)}`);
          ui.say(`Workbook ${wb.name} deleted.`);
          await workflowsView(ui);
        } catch (error) { problem.textContent = ui.errorText(error); }
      } }));
  return h("div", { class: "workbook", "data-workbook": wb.name },
    h("h3", {}, wb.name, " ", h("span", { class: "muted",
      text: wb.shipped ? "shipped (read-only)" : `user workbook (${wb.file})` }), " ", buttons),
    wb.description ? h("p", { class: "muted", text: wb.description }) : null,
    wb.problems.length ? h("pre", { class: "error", text: wb.problems.join("\n") }) : null,
    problem, own.map((wf) => workflowBlock(ui, wf)));
}

// A workflow, folded: its description and a form of its declared inputs.
function workflowBlock(ui, wf) {
  const { h } = ui;
  const slug = wf.name.replace(/[^A-Za-z0-9_-]/g, "-");
  const problem = h("pre", { class: "error", role: "alert", id: `run-${slug}-problem`, hidden: true });
  const fields = wf.inputs.map((input) => {
    const id = `in-${slug}-${input.name}`;
    const shown = input.required ? "(required)"
      : `default ${JSON.stringify(input.default === undefined ? null : input.default)}`;
    return h("div", { class: "field" },
      h("label", { for: id, text: input.name }), " ",
      h("span", { class: "muted", text: shown }),
      h("input", { id, type: "text", "data-input": input.name, size: 50,
                   "aria-describedby": `${id}-help`, autocomplete: "off" }),
      h("div", { class: "muted", id: `${id}-help`,
                 text: "JSON (a number, true, a list, an object, \"text\") or plain text; " +
                   "empty: not given" }));
  });
  // The execution's environment (Mistral's env, read by env()), as `workflow run --env`.
  const envId = `env-${slug}`;
  const env = h("textarea", { id: envId, rows: 3, cols: 60, spellcheck: "false", class: "mono",
                              "aria-describedby": `${envId}-help` });
  const envField = h("div", { class: "field" },
    h("label", { for: envId, text: "Environment (env)" }), env,
    h("div", { class: "muted", id: `${envId}-help`,
               text: "A JSON object the tasks read with env(), e.g. {\"salutation\": \"hi\"}; " +
                 "empty: none. Values of secret names (password, token, ...) are masked " +
                 "in the execution's record." }));
  const button = h("button", { type: "submit", class: "primary", text: "Run",
                               "aria-label": `Run ${wf.name}` });
  const form = h("form", { "aria-label": `Run ${wf.name}` }, fields,
    wf.inputs.length ? null : h("p", { class: "muted", text: "No inputs." }), envField, problem,
    button);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.hidden = true;
    env.removeAttribute("aria-invalid");
    const input = {};
    for (const field of form.querySelectorAll("input[data-input]")) {
      if (field.value.trim() !== "") input[field.dataset.input] = inputValue(field.value);
    }
    const body = { input };
    if (env.value.trim() !== "") {
      const given = envValue(env.value);
      if (typeof given === "string") {
        problem.textContent = given;
        problem.hidden = false;
        env.setAttribute("aria-invalid", "true");
        env.focus();
        return;  // nothing is sent
      }
      body.env = given;
    }
    button.disabled = true;
    try {
      const execution = await call("POST", `/v1/workflows/${enc(wf.name)}/executions`,
                                   { json: body });
      ui.say(`${wf.name} started.`);
      location.hash = `#/executions/${enc(execution.id)}`;
    } catch (error) {
      problem.textContent = ui.errorText(error);
      problem.hidden = false;
    } finally {
      button.disabled = false;
    }
  });
  return h("details", { class: "workflow", "data-workflow": wf.name },
    h("summary", {}, h("strong", { text: wf.name }), " ", h("span", { class: "muted", text: wf.type })),
    h("p", { class: wf.description ? "" : "muted", text: wf.description || "No description." }),
    form);
}

// The env as typed: a JSON object, or why it is not one (a string).
function envValue(text) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return `The environment (env) is not valid JSON: ${e.message}. Give a JSON object, ` +
      "e.g. {\"salutation\": \"hi\"}.";
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    const kind = value === null ? "null" : Array.isArray(value) ? "a list" : `a ${typeof value}`;
    return `The environment (env) must be a JSON object ({"name": value, ...}), not ${kind}.`;
  }
  return value;
}

// A value as typed: JSON when it parses as JSON, else the text itself.
function inputValue(text) {
  try { return JSON.parse(text); } catch (e) { return text; }
}

// The YAML of a user workbook, typed or read from a file, and what the server says of it.
function editorSection(ui) {
  const { h } = ui;
  const file = h("input", { type: "file", id: "workbook-file", accept: ".yaml,.yml,text/yaml" });
  const text = h("textarea", { id: "workbook-text", rows: 14, cols: 90, spellcheck: "false",
                               class: "mono" });
  const problem = h("pre", { class: "error", role: "alert", id: "workbook-problem", hidden: true });
  const done = h("p", { role: "status", id: "workbook-done" });
  let filename = "workbook.yaml";
  file.addEventListener("change", async () => {
    if (!file.files.length) return;
    filename = file.files[0].name;
    text.value = await file.files[0].text();
  });
  const send = (method, path, verb) => async () => {
    problem.hidden = true;
    done.textContent = "";
    try {
      const made = await call(method, path, { json: { definition: text.value, filename } });
      if (verb === "valid") {
        done.textContent = `${filename}: valid`;
        return;
      }
      ui.say(`Workbook ${made.name} ${verb}.`);
      await workflowsView(ui);
      document.getElementById("workbook-done").textContent =
        `Workbook ${made.name} ${verb}: ${made.workflows.join(", ")}`;
    } catch (error) {
      problem.textContent = ui.errorText(error);
      problem.hidden = false;
    }
  };
  const section = h("section", { "aria-labelledby": "editor-h" },
    h("h2", { id: "editor-h", text: "Add or replace a user workbook" }),
    h("div", { class: "form-row" }, h("label", { for: "workbook-file", text: "From a file" }), file),
    h("div", { class: "field" }, h("label", { for: "workbook-text", text: "Workbook (YAML)" }), text),
    h("p", { class: "actions" },
      h("button", { type: "button", id: "workbook-validate", text: "Validate",
                    onclick: send("POST", "/v1/workbooks/validate", "valid") }),
      h("button", { type: "button", class: "primary", id: "workbook-create", text: "Create",
                    onclick: send("POST", "/v1/workbooks", "created") }),
      h("button", { type: "button", id: "workbook-update", text: "Update",
                    onclick: send("PUT", "/v1/workbooks", "updated") })),
    h("p", { class: "muted", text: "Update replaces the user workbook of the name the YAML " +
      "gives; its workflows are named WORKBOOK.WORKFLOW." }),
    problem, done);
  const load = (definition, name) => {
    text.value = definition;
    filename = name || "workbook.yaml";
    text.focus();
  };
  return { section, load };
}

// The actions tasks may run, read when the section is opened.
function actionsSection(ui) {
  const { h } = ui;
  const body = h("div", {});
  const details = h("details", { id: "actions" }, h("summary", {}, h("strong", { text: "Actions" }),
    " ", h("span", { class: "muted", text: "what a workbook's tasks may run" })), body);
  details.addEventListener("toggle", async () => {
    if (!details.open || body.childElementCount) return;
    try {
      const actions = await call("GET", "/v1/actions");
      body.append(h("div", { class: "table-scroll" }, h("table", {}, h("thead", {}, h("tr", {},
        ["Action", "Inputs", "Description"].map((t) => h("th", { text: t })))),
      h("tbody", {}, actions.map((a) => h("tr", { "data-action": a.name },
        h("td", { class: "mono", text: a.name }),
        h("td", { text: a.inputs.map((i) => (i.required ? i.name
          : `${i.name}=${JSON.stringify(i.default === undefined ? null : i.default)}`)).join(", ") }),
        h("td", { class: a.error ? "error" : "", text: a.error ? `BROKEN: ${a.error}` : a.description })))))));
    } catch (error) {
      body.append(h("p", { class: "error", role: "alert", text: ui.errorText(error) }));
    }
  });
  return h("section", {}, details);
}
