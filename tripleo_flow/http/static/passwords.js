// A plan's Passwords tab: the names of its generated passwords (GET
// /v1/plans/NAME/passwords: the API never serves a value, nor does this page) and
// their rotation through the same tripleo.parameters.rotate_passwords workflow as
// `password rotate [--password NAME]... [--do-not-rotate NAME]...`, after a
// confirmation: it changes the passwords of a running cloud at its next deploy.
import { call } from "/gui/api.js";

const enc = encodeURIComponent;
const ROTATE = "tripleo.parameters.rotate_passwords";

// ui: the page's helpers (h, errorText, say, follow(execution, box)).
export async function passwordsTab(ui, plan, body) {
  const { h } = ui;
  const names = (await call("GET", `/v1/plans/${enc(plan)}/passwords`)).sort();
  const picks = names.map((name) => h("label", { class: "inline" },
    h("input", { type: "checkbox", "data-password": name }), ` ${name}`));
  const progress = h("div", { id: "rotate-progress", "aria-live": "polite" });
  const problem = h("p", { class: "error", role: "alert", id: "rotate-problem" });
  const done = h("div", { id: "rotate-done", role: "status" });
  const button = h("button", { type: "submit", class: "danger", text: "Rotate passwords" });
  const form = h("form", { id: "rotate-form" },
    h("p", { class: "muted", text: "Rotation draws new values for the passwords ticked, " +
      "or for every rotatable one when none is; the cloud takes them at its next deploy. " +
      "Values are never shown here." }),
    names.length ? h("fieldset", {}, h("legend", { text: "Passwords (names only)" }), picks)
      : h("p", { class: "muted", id: "no-passwords", text: "The plan has no generated passwords." }),
    h("p", {}, button), problem);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    done.replaceChildren();
    progress.replaceChildren();
    const chosen = [...form.querySelectorAll("input[data-password]:checked")]
      .map((box) => box.dataset.password);
    const what = chosen.length ? `${chosen.length} password(s) (${chosen.join(", ")})`
      : "every rotatable password";
    if (!confirm(`Rotate ${what} of plan ${plan}? A deployed cloud gets the new values at ` +
                 "its next deploy; anything using the old ones must be updated too.")) return;
    button.disabled = true;
    try {
      const execution = await call("POST", `/v1/workflows/${ROTATE}/executions`, {
        json: { input: { plan, rotate: chosen.length ? chosen : null } } });
      const ended = await ui.follow(execution, progress);
      const finished = ended || await call("GET", `/v1/executions/${enc(execution.id)}`);
      if (finished.state !== "SUCCESS") {
        problem.textContent = finished.error || `Rotation ${finished.state}.`;
        return;
      }
      const result = (finished.output || {}).result || {};
      const changed = [...Object.keys(result.previous || {}), ...(result.sealed || []),
                       ...(result.absent || [])].sort();
      done.replaceChildren(h("p", { text: `Rotated ${changed.length} password(s): ` +
        `${changed.join(", ") || "none"}.` }));
      ui.say(`Passwords of ${plan} rotated.`);
    } catch (error) {
      if (error.name !== "AbortError") problem.textContent = ui.errorText(error);
    } finally {
      button.disabled = false;
    }
  });
  body.append(h("section", { "aria-labelledby": "passwords-h" },
    h("h2", { id: "passwords-h", text: "Passwords" }), form, progress, done));
}
