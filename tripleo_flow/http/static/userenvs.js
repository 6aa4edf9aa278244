// A plan's environments in the order they apply, and the user's own among them added
// and removed, as `plan environment list / add / remove` do (the same add_environments
// and remove_environments workflows, through /v1/plans/NAME/environments).
import { call } from "/gui/api.js";
import { environmentFilesInput, userEnvironments } from "/gui/deployfiles.js";
import { enc, errorText, h, say } from "/gui/dom.js";

export async function userEnvironmentsSection(plan) {
  const problem = h("p", { class: "error", role: "alert", id: "user-environments-error" });
  const rows = h("tbody", {});
  const show = (environments) => rows.replaceChildren(...environments.map((env) =>
    h("tr", { "data-environment": env.path },
      h("td", { text: env.order }), h("td", { text: env.path }),
      h("td", { text: env.user ? "user" : "plan" }),
      h("td", {}, env.user ? h("button", { type: "button", class: "danger", text: "Remove",
        "aria-label": `Remove environment ${env.path}`, onclick: () => remove(env.path) }) : null))));
  const send = async (path, body, said) => {
    problem.textContent = "";
    try {
      const answer = await call("POST", path, { json: body });
      show(answer.environments);
      say(said(answer));
      return true;
    } catch (error) {
      problem.textContent = errorText(error);
      return false;
    }
  };
  const remove = (path) => {
    if (!confirm(`Remove environment ${path} and its files from plan ${plan}?`)) return;
    send(`/v1/plans/${enc(plan)}/environments/remove`, { paths: [path] },
         (a) => `Removed ${a.removed.join(", ")}.`);
  };
  const files = environmentFilesInput(h, "add-environment-files");
  const position = h("input", { id: "add-environment-position", type: "number", min: 1, size: 4 });
  const button = h("button", { type: "submit", text: "Add environments" });
  const form = h("form", { "aria-label": "Add environment files" },
    h("div", { class: "form-row" },
      h("label", { for: "add-environment-files", text: "Environment files" }), files,
      h("label", { for: "add-environment-position", text: "at position (among the user's; default last)" }),
      position, button));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const chosen = await userEnvironments(null, files);
    if (!chosen.length) {
      problem.textContent = "Choose one or more environment files.";
      return;
    }
    button.disabled = true;
    const body = { environments: chosen };
    if (position.value) body.position = Number(position.value);
    if (await send(`/v1/plans/${enc(plan)}/environments`, body,
                   (a) => `Added ${a.added.join(", ")}.`)) {
      files.value = "";
    }
    button.disabled = false;
  });
  const refresh = async () => show(await call("GET", `/v1/plans/${enc(plan)}/environments`));
  await refresh();
  const section = h("section", { "aria-labelledby": "user-environments-h" },
    h("h2", { id: "user-environments-h", text: "Environments in order" }),
    h("p", { class: "muted", text: "The environments the plan applies, in order: the user's " +
      "own last (as plan environment add -e FILE). A file refers to others by relative " +
      "path: add those it needs with it." }),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "#" }), h("th", { text: "Path" }),
      h("th", { text: "Kind" }), h("th", { text: "" }))), rows), problem, form);
  section.refresh = refresh;  // (after the capabilities' environments change)
  return section;
}
