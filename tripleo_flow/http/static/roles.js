// A plan's "Roles and networks" tab: which roles the plan deploys, each one's count and
// networks, and the networks it uses (enabled, subnet, VLAN). A save replaces the plan's
// roles_data.yaml or network_data.yaml through PUT /v1/plans/{plan}/roles or /networks:
// the same update_roles / update_networks workflows as `tripleo-flow role set` and
// `network set`, the server's refusal shown as it words it.
import { call } from "/gui/api.js";

const enc = encodeURIComponent;
let ids = 0;
const uid = (prefix) => `${prefix}-${++ids}`;

// ui: the page's helpers (h, errorText, say).
export async function rolesTab(ui, plan, body) {
  const [roles, networks, params] = await Promise.all([
    call("GET", `/v1/plans/${enc(plan)}/roles?detail=true`),
    call("GET", `/v1/plans/${enc(plan)}/networks?detail=true`),
    call("GET", `/v1/plans/${enc(plan)}/parameters`)]);
  const again = () => {
    body.replaceChildren();
    return rolesTab(ui, plan, body);
  };
  body.append(rolesSection(ui, plan, roles, networks, params || {}, again),
              networksSection(ui, plan, networks, again));
}

const netName = (n) => (typeof n === "string" ? n : n.name);
const roleNets = (r) => (!r.networks ? [] : Array.isArray(r.networks)
  ? r.networks.map((n) => (typeof n === "string" ? n : n.name)) : Object.keys(r.networks));

// ``role`` with only the networks ``chosen`` (in the form it was written: a list, or a
// mapping whose new entries take the network's default subnet).
function withNetworks(role, chosen, networks) {
  const out = { ...role };
  if (role.networks && !Array.isArray(role.networks)) {
    out.networks = {};
    for (const name of chosen) {
      const net = networks.find((n) => netName(n) === name) || {};
      const lower = net.name_lower || name.toLowerCase();
      out.networks[name] = role.networks[name] || { subnet: `${lower}_subnet` };
    }
  } else if (chosen.length || role.networks) {
    out.networks = chosen;
  }
  return out;
}

function rolesSection(ui, plan, roles, networks, values, again) {
  const { h } = ui;
  const problem = h("p", { class: "error", role: "alert", id: "roles-error" });
  const usable = networks.filter((n) => n.enabled !== false).map(netName);
  const rows = roles.map((role) => {
    const keep = h("input", { type: "checkbox", checked: true, "data-keep": role.name,
                              "aria-label": `Deploy role ${role.name}` });
    const nets = usable.map((net) => h("label", { class: "inline" },
      h("input", { type: "checkbox", "data-network": net, checked: roleNets(role).includes(net),
                   "aria-label": `${role.name} on ${net}` }), ` ${net}`));
    const row = h("tr", { "data-role": role.name }, h("td", {}, keep),
      h("td", { text: role.name }), h("td", {}, nets),
      h("td", {}, countForm(ui, plan, role.name, values[`${role.name}Count`] ?? role.CountDefault ?? "")),
      h("td", { text: values[`Overcloud${role.name}Flavor`] ?? "" }));
    row.item = role;  // (not .role: that is the ARIA role attribute)
    return row;
  });
  const copyFrom = h("select", { id: "new-role-from" },
    roles.map((r) => h("option", { value: r.name, text: r.name })));
  const newName = h("input", { id: "new-role-name", type: "text", size: 16,
                               placeholder: "e.g. ComputeHCI" });
  const save = h("button", { type: "button", class: "primary", id: "save-roles", text: "Save roles" });
  save.addEventListener("click", async () => {
    problem.textContent = "";
    // A role keeps the networks not offered here (disabled ones), in their order.
    const chosen = rows.filter((row) => row.querySelector("[data-keep]").checked).map((row) => {
      const ticked = [...row.querySelectorAll("[data-network]")].filter((box) => box.checked)
        .map((box) => box.dataset.network);
      const had = roleNets(row.item);
      const kept = had.filter((net) => !usable.includes(net) || ticked.includes(net));
      return withNetworks(row.item, [...kept, ...ticked.filter((net) => !had.includes(net))],
                          networks);
    });
    if (newName.value.trim()) {
      // A new role: a copy of another's services and networks, without its primary tags.
      const base = roles.find((r) => r.name === copyFrom.value) || {};
      const name = newName.value.trim();
      const copy = { ...base, name, CountDefault: 0,
                     HostnameFormatDefault: `%stackname%-${name.toLowerCase()}-%index%` };
      copy.tags = (base.tags || []).filter((t) => !["primary", "controller"].includes(t));
      if (!copy.tags.length) delete copy.tags;
      delete copy.description;
      chosen.push(copy);
    }
    await replace(ui, plan, "roles", { roles: chosen }, save, problem, again);
  });
  return h("section", { "aria-labelledby": "roles-h" }, h("h2", { id: "roles-h", text: "Roles" }),
    h("table", { id: "roles" }, h("thead", {}, h("tr", {},
      ["Deploy", "Role", "Networks", "Count", "Flavor"].map((t) => h("th", { text: t })))),
    h("tbody", {}, rows)),
    h("div", { class: "form-row" }, h("label", { for: "new-role-name", text: "Add a role" }), newName,
      h("label", { for: "new-role-from", text: "with the services of" }), copyFrom),
    h("p", { class: "muted", text: "Saving replaces the plan's roles_data.yaml with the roles "
      + "kept (and the one added), as role set FILE does, then renders the templates again. "
      + "A count is set at once, as the role's <Role>Count parameter." }),
    h("p", {}, save), problem, fileForm(ui, plan, "roles", "roles_data.yaml", again));
}

// PUT the plan's ``noun`` (roles or networks; ``body``: the list, or {yaml: a file's text}),
// say the names stored and draw the tab again; a refusal shown in ``problem``, as the
// server words it.
async function replace(ui, plan, noun, body, button, problem, again, from = "") {
  problem.textContent = "";
  button.disabled = true;
  try {
    const answer = await call("PUT", `/v1/plans/${enc(plan)}/${noun}`, { json: body });
    ui.say(`${noun[0].toUpperCase()}${noun.slice(1)} saved${from}: ${answer[noun].join(", ")}.`);
    await again();
  } catch (error) {
    problem.textContent = ui.errorText(error);
    button.disabled = false;
  }
}

// Replace the plan's ``noun`` with those of a YAML file chosen here, as `noun set FILE`:
// its text goes to the server, which reads it within its YAML limits.
function fileForm(ui, plan, noun, fileName, again) {
  const { h } = ui;
  const id = `${noun}-file`;
  const file = h("input", { id, type: "file", accept: ".yaml,.yml", "aria-describedby": `${id}-help` });
  const problem = h("p", { class: "error", role: "alert", id: `${id}-error` });
  const button = h("button", { type: "button", id: `${id}-replace`,
                               text: `Replace the ${noun} from the file` });
  button.addEventListener("click", async () => {
    problem.textContent = "";
    const chosen = file.files[0];
    if (!chosen) {
      problem.textContent = `Choose a ${fileName} (a YAML list of ${noun}).`;
      return;
    }
    await replace(ui, plan, noun, { yaml: await chosen.text() }, button, problem, again,
                  ` from ${chosen.name}`);
  });
  return h("div", { class: "from-file" },
    h("div", { class: "form-row" }, h("label", { for: id, text: `Or from a ${fileName}` }), file,
      button),
    h("p", { class: "muted", id: `${id}-help`, text: `The file's ${noun} replace the plan's, as `
      + `${noun} set FILE does (the same workflow, then the templates rendered again).` }),
    problem);
}

// A role's count, set as its <Role>Count parameter (checked by the server).
function countForm(ui, plan, role, current) {
  const { h } = ui;
  const id = uid("count");
  const input = h("input", { id, type: "text", inputmode: "numeric", size: 4, value: current,
                             "aria-describedby": `${id}-error` });
  const error = h("span", { class: "field-error", id: `${id}-error`, role: "alert" });
  const form = h("form", { class: "form-row", "data-role": role },
    h("label", { for: id, class: "visually-hidden", text: `${role} count` }), input,
    h("button", { type: "submit", text: "Set", "aria-label": `Set ${role} count` }), error);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    const raw = input.value.trim();
    const value = raw !== "" && !Number.isNaN(Number(raw)) ? Number(raw) : raw;
    try {
      await call("PUT", `/v1/plans/${enc(plan)}/parameters`,
                 { json: { parameters: { [`${role}Count`]: value }, validate: true } });
      ui.say(`${role} count set to ${raw}.`);
    } catch (e) {
      error.textContent = ui.errorText(e);
    }
  });
  return form;
}

function networksSection(ui, plan, networks, again) {
  const { h } = ui;
  const problem = h("p", { class: "error", role: "alert", id: "networks-error" });
  const rows = networks.map((net) => {
    const name = netName(net);
    const enabled = h("input", { type: "checkbox", "data-enabled": name,
                                 checked: net.enabled !== false, "aria-label": `Use network ${name}` });
    const subnet = h("input", { type: "text", size: 18, value: net.ip_subnet || "",
                                "aria-label": `${name} subnet` });
    const vlan = h("input", { type: "text", inputmode: "numeric", size: 5,
                              value: net.vlan ?? "", "aria-label": `${name} VLAN` });
    const row = h("tr", { "data-network": name }, h("td", {}, enabled), h("td", { text: name }),
      h("td", {}, subnet), h("td", {}, vlan), h("td", { text: net.vip ? "yes" : "" }));
    // The network as edited: every other key kept as it was.
    row.edited = () => {
      const out = { ...net };
      if (enabled.checked) delete out.enabled; else out.enabled = false;
      if (subnet.value.trim()) out.ip_subnet = subnet.value.trim(); else delete out.ip_subnet;
      const v = vlan.value.trim();
      if (v === "") delete out.vlan;
      else out.vlan = Number.isNaN(Number(v)) ? v : Number(v);
      return out;
    };
    return row;
  });
  const save = h("button", { type: "button", class: "primary", id: "save-networks",
                             text: "Save networks" });
  save.addEventListener("click", () => replace(
    ui, plan, "networks", { networks: rows.map((row) => row.edited()) }, save, problem, again));
  return h("section", { "aria-labelledby": "nets-h" }, h("h2", { id: "nets-h", text: "Networks" }),
    h("table", { id: "networks" }, h("thead", {}, h("tr", {},
      ["Use", "Network", "Subnet", "VLAN", "VIP"].map((t) => h("th", { text: t })))),
    h("tbody", {}, rows)),
    h("p", { class: "muted", text: "Saving replaces the plan's network_data.yaml (a network "
      + "not used is kept with enabled: false), as network set FILE does, then renders the "
      + "templates again." }),
    h("p", {}, save), problem, fileForm(ui, plan, "networks", "network_data.yaml", again));
}
