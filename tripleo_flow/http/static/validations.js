// The Validations page: the installed validations (by group, as `validation list
// --group` shows them), a run of the chosen ones or of a group through the same
// tripleo.validations.run workflow the CLI runs (POST /v1/validations/run), each
// validation's start and end live, a stop, and the results: status per validation and
// host, and the log of any one of them.
import { ApiError, call, events } from "/gui/api.js";

const enc = encodeURIComponent;

// ui: the page's helpers (h, show, state, errorText, say, signal).
export async function validationsView(ui) {
  const { h } = ui;
  let validations, plans;
  try {
    [validations, plans] = await Promise.all([call("GET", "/v1/validations"),
                                              call("GET", "/v1/plans")]);
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
    ui.show("Validations", h("p", { class: "muted", role: "status", text: ui.errorText(error) }));
    return;
  }
  const progress = h("div", { id: "validation-progress", "aria-live": "polite" });
  const results = h("section", { id: "results", "aria-labelledby": "results-h" });
  const plan = h("select", { id: "validation-plan" },
    h("option", { value: "", text: "none (this machine, localhost)" }),
    plans.map((p) => h("option", { value: p.name, text: p.name })));
  const showResults = () => resultsSection(ui, results, plan.value).catch((error) => {
    results.replaceChildren(h("p", { class: "error", role: "alert", text: ui.errorText(error) }));
  });
  plan.addEventListener("change", showResults);
  const run = (body) => startAndFollow(ui, body, progress, showResults);
  ui.show("Validations", runForm(ui, validations, plan, run), progress, results);
  await showResults();
}

function groupsOf(validations) {
  return [...new Set(validations.flatMap((v) => v.groups || []))].sort();
}

function runForm(ui, validations, plan, run) {
  const { h } = ui;
  const picked = new Set();
  const group = h("select", { id: "validation-group" },
    h("option", { value: "", text: "every group" }),
    groupsOf(validations).map((g) => h("option", { value: g, text: g })));
  const extra = h("textarea", { id: "extra-vars", rows: 2, cols: 50,
                                placeholder: '{"minimal_cpu_count": 4}' });
  const localhost = h("input", { type: "checkbox", id: "validation-localhost" });
  const problem = h("p", { class: "error", role: "alert", id: "run-problem" });
  const runPicked = h("button", { type: "button", class: "primary", id: "run-selected",
                                  text: "Run selected", disabled: true });
  const runGroup = h("button", { type: "button", id: "run-group", text: "Run the group",
                                 disabled: true });
  const rows = validations.map((v) => {
    const box = h("input", { type: "checkbox", "aria-label": `Select ${v.id}`,
      onchange: (event) => {
        if (event.target.checked) picked.add(v.id); else picked.delete(v.id);
        runPicked.disabled = picked.size === 0;
      } });
    return h("tr", { "data-validation": v.id, "data-groups": (v.groups || []).join(" ") },
      h("td", {}, box), h("td", { text: v.id }), h("td", { text: (v.groups || []).join(", ") }),
      h("td", { text: v.description || v.name || "" }));
  });
  group.addEventListener("change", () => {
    runGroup.disabled = group.value === "";
    for (const row of rows) {
      row.hidden = group.value !== "" && !row.dataset.groups.split(" ").includes(group.value);
    }
  });
  // The body of POST /v1/validations/run; null (with the reason shown) when it cannot be.
  const body = (which) => {
    problem.textContent = "";
    const out = which === "group" ? { group: group.value } : { validations: [...picked] };
    if (plan.value) out.plan = plan.value;
    if (!plan.value || localhost.checked) out.inventory = "localhost";
    if (extra.value.trim()) {
      try {
        out.extra_vars = JSON.parse(extra.value);
      } catch (error) {
        problem.textContent = `Extra vars are not JSON: ${error.message}`;
        return null;
      }
    }
    return out;
  };
  runPicked.addEventListener("click", () => { const b = body("picked"); if (b) run(b); });
  runGroup.addEventListener("click", () => { const b = body("group"); if (b) run(b); });
  return h("section", { "aria-labelledby": "run-h" },
    h("h2", { id: "run-h", text: "Run validations" }),
    h("div", { class: "form-row" }, h("label", { for: "validation-group", text: "Group" }), group,
      h("label", { for: "validation-plan", text: "Plan" }), plan,
      h("label", {}, localhost, " on this machine (not the plan's inventory)")),
    h("div", { class: "table-scroll" }, h("table", { id: "validations" },
      h("thead", {}, h("tr", {}, ["", "Validation", "Groups", "Description"]
        .map((t) => h("th", { text: t })))),
      h("tbody", {}, rows))),
    h("div", { class: "form-row" }, h("label", { for: "extra-vars", text: "Extra vars (JSON)" }),
      extra),
    h("p", { class: "muted", text: "A plan keeps the results and gives its last deployment's "
      + "inventory; without one they run on this machine. Extra vars set the validations' "
      + "parameters." }),
    h("p", { class: "actions" }, runPicked, runGroup), problem);
}

// Start a run, show each validation's start and end as it happens, a Stop button
// while it runs, and how it ended; then the results again.
async function startAndFollow(ui, body, box, after) {
  const { h } = ui;
  box.replaceChildren(h("p", { text: "Starting…" }));
  let execution;
  try {
    execution = await call("POST", "/v1/validations/run", { json: body });
  } catch (error) {
    box.replaceChildren(h("p", { class: "error", role: "alert", text: ui.errorText(error) }));
    return;
  }
  const id = execution.id;
  const log = h("ol", { class: "events", id: "validation-events", "aria-label": "Validation events" });
  const end = h("p", { id: "validation-end" });
  const stop = h("button", { type: "button", id: "stop-run", class: "danger", text: "Stop",
    onclick: async () => {
      stop.disabled = true;
      try {
        await call("POST", "/v1/validations/stop", { json: { execution: id } });
        ui.say("Stopping the validations…");
      } catch (error) {
        end.replaceChildren(h("span", { class: "error", role: "alert", text: ui.errorText(error) }));
      }
    } });
  // One row per validation of this run: running, then its status per host as soon as
  // its record is stored (read when the next one starts: the stream shows only the last
  // report of a task, and a quick validation's end is soon followed by the next start).
  const runId = (execution.input || {}).run_id;
  const rows = new Map();
  const tbody = h("tbody", {});
  const table = h("table", { id: "run-table", hidden: true }, h("thead", {}, h("tr", {},
    ["Validation", "Status", "Hosts", "Reasons"].map((t) => h("th", { text: t })))), tbody);
  const row = (name) => {
    if (!rows.has(name)) {
      table.hidden = false;
      const tr = h("tr", { "data-validation": name }, h("td", { text: name }),
                   h("td", {}, ui.state("PENDING")), h("td", {}), h("td", {}));
      rows.set(name, tr);
      tbody.append(tr);
    }
    return rows.get(name);
  };
  const mark = (record) => {
    const cells = row(record.validation).children;
    cells[1].replaceChildren(ui.state(record.status));
    cells[2].textContent = hosts(record);
    cells[3].textContent = reasons(record);
  };
  const query = body.plan ? `?plan=${enc(body.plan)}` : "";
  const stored = async () => {
    for (const record of await call("GET", `/v1/validations/results${query}`)) {
      if (record.run_id === runId) mark(record);
    }
  };
  box.replaceChildren(h("section", { "aria-labelledby": "run-progress-h" },
    h("h2", { id: "run-progress-h", text: "Validation run" }),
    h("p", {}, "Execution ", h("a", { href: `#/executions/${enc(id)}`, text: id }), " ", stop),
    table,
    h("h3", { text: "Events" }), log, end));
  await events(`/v1/executions/${enc(id)}/events`, (kind, data) => {
    if (kind !== "task") return;
    const p = data.progress;
    if (p && p.stage === "validation") {
      log.append(h("li", { text: p.status }));
      const [name, status] = p.status.split(": ");
      if (status === "running") {
        row(name).children[1].replaceChildren(ui.state("RUNNING"));
        stored().catch(() => {});
      }
    } else if (data.name === "select_validations" && data.result
               && Array.isArray(data.result.validations)) {
      data.result.validations.forEach(row);  // the validations chosen, pending
    }
    if (!p && ["SUCCESS", "ERROR"].includes(data.state)) {
      log.append(h("li", { class: "muted", text: `${data.name}: ${data.state}` }));
    }
  }, ui.signal());
  await stored();
  stop.remove();
  const done = await call("GET", `/v1/executions/${enc(id)}`);
  end.replaceChildren("Execution ", ui.state(done.state));
  const counts = (done.output || {}).counts;
  if (counts) {
    end.append(` — ${Object.entries(counts).map(([k, v]) => `${v} ${k}`).join(", ")}`);
  }
  if (done.error) end.append(h("span", { class: "error", role: "alert", text: ` ${done.error}` }));
  for (const hint of done.hints || []) {
    end.append(h("span", { class: "muted", text: ` (CLI: ${hint.command})` }));
  }
  ui.say(`Validations: ${done.state}`);
  await after();
}

function hosts(record) {
  return Object.entries(record.hosts || {}).sort().map(([host, status]) => `${host}: ${status}`)
    .join(", ");
}

function reasons(record) {
  return (record.reasons || []).map((r) => (r.host ? `${r.host}: ${r.reason}` : r.reason))
    .join("; ");
}

// The stored results of ``plan`` ("" for runs without one), newest first; each opens
// its log (as `validation show-result ID --plan P`).
async function resultsSection(ui, box, plan) {
  const { h } = ui;
  const query = plan ? `?plan=${enc(plan)}` : "";
  const records = await call("GET", `/v1/validations/results${query}`);
  const detail = h("div", { id: "result-detail" });
  const open = async (record) => {
    const one = await call("GET", `/v1/validations/results/${enc(record.id)}${query}`);
    detail.replaceChildren(h("h3", { text: `${one.validation}: ${one.status}` }),
      reasons(one) ? h("p", { class: "error", text: reasons(one) }) : null,
      h("pre", { id: "result-log", tabindex: 0, text: one.log || "(no log)" }));
    detail.scrollIntoView({ block: "nearest" });
  };
  const rows = records.map((r) => h("tr", { "data-result": r.id, "data-validation": r.validation },
    h("td", { text: r.validation }), h("td", {}, ui.state(r.status)), h("td", { text: hosts(r) }),
    h("td", { text: reasons(r) }),
    h("td", { text: r.started_at || "" }),
    h("td", {}, h("button", { type: "button", text: "Log", "aria-label": `Log of ${r.validation} ${r.id}`,
      onclick: () => open(r).catch((error) => detail.replaceChildren(
        h("p", { class: "error", role: "alert", text: ui.errorText(error) }))) }))));
  box.replaceChildren(h("h2", { id: "results-h", text: plan ? `Results of plan ${plan}`
                                                          : "Results of runs without a plan" }),
    records.length ? h("table", { id: "validation-results" },
      h("thead", {}, h("tr", {}, ["Validation", "Status", "Hosts", "Reasons", "Started", ""]
        .map((t) => h("th", { text: t })))), h("tbody", {}, rows))
      : h("p", { class: "muted", id: "no-results", text: "No results yet." }), detail);
}
