// A plan's Parameters tab: its parameter schema (an ephemeral Heat validates the
// plan), each parameter set or reset, grouped by the template that declares it.
import { call } from "/gui/api.js";
import { enc, errorText, h, say, uid } from "/gui/dom.js";

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

export async function parametersTab(name, body) {
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
