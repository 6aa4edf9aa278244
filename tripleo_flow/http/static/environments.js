// A plan's Environments tab: its environments in order with the user's own (added and
// removed: userenvs.js), then its capabilities map's environments, each group's choice
// (one of a mutually exclusive group) applied at once.
import { call } from "/gui/api.js";
import { enc, errorText, h, say, uid } from "/gui/dom.js";
import { userEnvironmentsSection } from "/gui/userenvs.js";

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

export async function environmentsTab(name, body) {
  const problem = h("p", { class: "error", role: "alert", id: "environments-error" });
  const list = h("div", {});
  const users = await userEnvironmentsSection(name);
  const apply = async (changes) => {
    problem.textContent = "";
    try {
      await call("PUT", `/v1/plans/${enc(name)}/capabilities`, { json: { environments: changes } });
      say("Environments updated.");
    } catch (error) {
      problem.textContent = errorText(error);
    }
    await render();
    await users.refresh();
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
  body.append(users, problem, list);
}
