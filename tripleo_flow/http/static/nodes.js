// The Nodes page: Ironic's nodes and every node operation the CLI offers (node import,
// introspect, provide, manage, clean, delete, provision, unprovision), each started as
// the same tripleo.nodes workflow through /v1/nodes, followed live, its refusal shown
// as the API words it (with what to run next).
import { ApiError, call, events } from "/gui/api.js";

// What each selection button starts, with the words of its confirmation when it has one.
const VERBS = [
  ["introspect", "Introspect", null],
  ["provide", "Provide", null],
  ["manage", "Manage", null],
  ["clean", "Clean", "Clean the selected nodes (erase their disks' metadata)?"],
  ["delete", "Delete", "Delete the selected nodes from Ironic?"],
];

// ui: the page's helpers (h, show, state, errorText, say, signal).
export async function nodesView(ui) {
  const { h } = ui;
  const nodes = await listNodes(ui);
  if (nodes === null) return;
  const progress = h("div", { id: "node-progress", "aria-live": "polite" });
  const holder = h("div", { id: "node-table" });
  const reload = async () => {
    const fresh = await listNodes(ui);
    if (fresh !== null) holder.replaceChildren(nodeTable(ui, fresh, run));
  };
  const run = (verb, body) => startAndFollow(ui, verb, body, progress, reload);
  holder.append(nodeTable(ui, nodes, run));
  ui.show("Nodes", holder, progress, registerForm(ui, run), provisionForm(ui, run));
}

async function listNodes(ui) {
  try {
    return await call("GET", "/v1/nodes");
  } catch (error) {
    if (!(error instanceof ApiError) || error.status === 401) throw error;
    ui.show("Nodes", ui.h("p", { class: "muted", role: "status", text: ui.errorText(error) }));
    return null;
  }
}

function capabilities(node) {
  const c = (node.properties || {}).capabilities;
  return typeof c === "string" ? c : c ? JSON.stringify(c) : "";
}

function nodeTable(ui, nodes, run) {
  const { h } = ui;
  const picked = new Set();
  const buttons = [];
  const allManageable = h("input", { type: "checkbox", id: "all-manageable" });
  const andProvide = h("input", { type: "checkbox", id: "introspect-provide" });
  // introspect, provide and clean also take "every manageable node" instead of a list
  const refresh = () => {
    for (const [button, verb] of buttons) {
      const byAll = allManageable.checked && ["introspect", "provide", "clean"].includes(verb);
      button.disabled = !(picked.size > 0 || byAll);
    }
  };
  allManageable.addEventListener("change", refresh);
  for (const [verb, label, confirmText] of VERBS) {
    const button = h("button", { type: "button", "data-verb": verb, text: label,
      class: verb === "delete" ? "danger" : null, disabled: true,
      onclick: () => {
        if (confirmText && !window.confirm(confirmText)) return;
        const body = allManageable.checked && !picked.size ? { all_manageable: true }
          : { nodes: [...picked] };
        if (verb === "introspect" && andProvide.checked) body.provide = true;
        run(verb, body);
      } });
    buttons.push([button, verb]);
  }
  const rows = nodes.map((n) => {
    const name = n.name || n.uuid;
    const box = h("input", { type: "checkbox", "aria-label": `Select ${name}`,
      onchange: (event) => {
        if (event.target.checked) picked.add(name); else picked.delete(name);
        refresh();
      } });
    return h("tr", { "data-node": name }, h("td", {}, box), h("td", { text: name }),
      h("td", {}, ui.state(n.provision_state)), h("td", { text: n.power_state || "" }),
      h("td", { text: n.resource_class || "" }), h("td", { text: capabilities(n) }));
  });
  const table = nodes.length ? h("table", { id: "nodes" },
    h("thead", {}, h("tr", {}, ["", "Name", "Provision state", "Power", "Resource class",
                                "Capabilities"].map((t) => h("th", { text: t })))),
    h("tbody", {}, rows))
    : h("p", { class: "muted", id: "no-nodes",
               text: "No nodes. Register them from an instackenv.json file below." });
  return h("section", { "aria-labelledby": "nodes-h" },
    h("h2", { id: "nodes-h", text: "Nodes in Ironic" }), table,
    h("p", { class: "actions" }, ...buttons.map(([b]) => b)),
    h("p", {}, h("label", {}, allManageable, " every manageable node (no selection)"), " ",
      h("label", {}, andProvide, " introspect, then provide")));
}

function registerForm(ui, run) {
  const { h } = ui;
  const file = h("input", { type: "file", id: "instackenv", accept: ".json,application/json",
                            required: true });
  const initial = h("select", { id: "initial-state" },
    ["manageable", "enroll", "available"].map((s) => h("option", { value: s, text: s })));
  const introspect = h("input", { type: "checkbox", id: "register-introspect" });
  const provide = h("input", { type: "checkbox", id: "register-provide" });
  const problem = h("p", { class: "error", role: "alert" });
  const form = h("form", { id: "register-form", onsubmit: async (event) => {
    event.preventDefault();
    problem.textContent = "";
    let nodes;
    try {
      const parsed = JSON.parse(await file.files[0].text());
      nodes = Array.isArray(parsed) ? parsed : parsed.nodes;
      if (!Array.isArray(nodes)) throw new Error("it has no \"nodes\" list");
    } catch (error) {
      problem.textContent = `Not an instackenv.json file: ${error.message}`;
      return;
    }
    const body = { nodes, initial_state: initial.value };
    if (introspect.checked) body.introspect = true;
    if (provide.checked) body.provide = true;
    run("register", body);
  } },
  h("p", {}, h("label", { for: "instackenv", text: "instackenv.json " }), file),
  h("p", {}, h("label", { for: "initial-state", text: "Leave new nodes " }), initial, " ",
    h("label", {}, introspect, " then introspect"), " ", h("label", {}, provide, " then provide")),
  h("button", { type: "submit", class: "primary", text: "Register nodes" }), problem);
  return h("section", { "aria-labelledby": "register-h" },
    h("h2", { id: "register-h", text: "Register nodes" }),
    h("p", { class: "muted", text: "As node import: TripleO's instackenv.json node list; "
      + "new nodes are left manageable unless you choose otherwise." }), form);
}

function provisionForm(ui, run) {
  const { h } = ui;
  const plan = h("input", { id: "provision-plan", value: "overcloud", required: true });
  const file = h("input", { type: "file", id: "provision-file", accept: ".yaml,.yml",
                            required: true });
  const hostnames = h("input", { id: "unprovision-hostnames",
                                 placeholder: "host names, comma-separated" });
  const everything = h("input", { type: "checkbox", id: "unprovision-all" });
  const problem = h("p", { class: "error", role: "alert" });
  // Provision reads the file; unprovision releases the host names given, or every node
  // of the plan, or else the file's instances marked provisioned: false.
  const start = async (verb) => {
    problem.textContent = "";
    const body = { plan: plan.value };
    const names = hostnames.value.split(",").map((s) => s.trim()).filter(Boolean);
    if (verb === "unprovision" && names.length) body.hostnames = names;
    else if (verb === "unprovision" && everything.checked) body.all_nodes = true;
    else if (!file.files.length) { problem.textContent = "Choose a baremetal deployment file."; return; }
    else body.baremetal_deployment = await file.files[0].text();
    if (verb === "unprovision" && !window.confirm("Release these servers' nodes?")) return;
    run(verb, body);
  };
  return h("section", { "aria-labelledby": "provision-h" },
    h("h2", { id: "provision-h", text: "Provision" }),
    h("p", { class: "muted", text: "As node provision / unprovision: the servers of a "
      + "baremetal deployment file, deployed from available nodes or released." }),
    h("p", {}, h("label", { for: "provision-plan", text: "Plan " }), plan),
    h("p", {}, h("label", { for: "provision-file", text: "Baremetal deployment " }), file),
    h("p", {}, h("label", { for: "unprovision-hostnames", text: "Release only " }), hostnames,
      " ", h("label", {}, everything, " release every node of the plan")),
    h("p", {}, h("button", { type: "button", id: "provision", text: "Provision",
                             onclick: () => start("provision") }), " ",
      h("button", { type: "button", id: "unprovision", class: "danger", text: "Unprovision",
                    onclick: () => start("unprovision") })),
    problem);
}

// Start a node workflow, then show its tasks and the nodes' states as they change, and
// how it ended: its error and the commands it names when it failed.
async function startAndFollow(ui, verb, body, box, reload) {
  const { h } = ui;
  const path = verb === "register" ? "/v1/nodes" : `/v1/nodes/${verb}`;
  box.replaceChildren(h("h2", { text: verb }), h("p", { text: "Starting…" }));
  let execution;
  try {
    execution = await call("POST", path, { json: body });
  } catch (error) {
    box.replaceChildren(h("p", { class: "error", role: "alert", text: ui.errorText(error) }));
    return;
  }
  const log = h("ol", { class: "events", id: "node-events", "aria-label": "Node events" });
  const end = h("p", { id: "node-end" });
  box.replaceChildren(h("h2", { text: verb }),
    h("p", {}, "Execution ", h("a", { href: `#/executions/${encodeURIComponent(execution.id)}`,
                                      text: execution.id })), log, end);
  await events(`/v1/executions/${encodeURIComponent(execution.id)}/events`, (kind, data) => {
    if (kind === "task") {
      const p = data.progress;
      const what = p && p.stage === "node" ? ` ${p.status}` : "";
      log.append(h("li", { text: `${data.name}: ${data.state}${what}` }));
    }
  }, ui.signal());
  const done = await call("GET", `/v1/executions/${encodeURIComponent(execution.id)}`);
  end.replaceChildren("Execution ", ui.state(done.state));
  if (done.error) {
    end.append(h("span", { class: "error", role: "alert", text: ` ${done.error}` }));
    for (const hint of done.hints || []) {
      end.append(h("span", { class: "muted", text: ` (CLI: ${hint.command})` }));
    }
  }
  ui.say(`${verb}: ${done.state}`);
  await reload();
}
