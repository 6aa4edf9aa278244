// "Inspect the stack" on a plan's Deploy tab: the ephemeral Heat of the deployment's
// work dir (named as the plan), as `launch heat --heat-dir PLAN --restore-db`, `heat
// status` and `launch heat --kill` do: its status (GET /v1/plans/NAME/deployment/heat),
// a start on the deployment's database dump and a stop (which dumps it again) through
// the same tripleo.heat.launch / tripleo.heat.kill workflows, each followed live, with
// the endpoint and how to list the stacks on the server. Refusals are the API's words.
import { call } from "/gui/api.js";

const enc = encodeURIComponent;

// ui: the page's helpers (h, errorText, say, follow(execution, box)).
export function heatSection(ui, plan) {
  const { h } = ui;
  const status = h("div", { id: "heat-status", "aria-live": "polite" });  // (the page's one role=status is the toast)
  const progress = h("div", { id: "heat-progress", "aria-live": "polite" });
  const problem = h("p", { class: "error", role: "alert", id: "heat-problem" });
  const refresh = async () => {
    const s = await call("GET", `/v1/plans/${enc(plan)}/deployment/heat`);
    // (a wrapper: h() drops the null parts, which replaceChildren would write as "null")
    status.replaceChildren(h("div", {},
      h("p", {}, s.running ? `Heat (${s.heat_type}) runs` : "No Heat runs for this deployment",
        s.running ? (s.api_answers ? " and answers." : ", but its API does not answer yet.") : ".",
        s.dump ? "" : " No database dump yet: deploy first."),
      s.running && s.endpoint ? h("p", {}, "Endpoint: ", h("code", { id: "heat-endpoint", text: s.endpoint })) : null,
      s.running ? h("p", { class: "muted" }, "List its stacks on the server: ",
        h("code", { id: "heat-hint",
                    text: `OS_CLIENT_CONFIG_FILE=${s.heat_dir}/clouds.yaml openstack --os-cloud heat stack list` }),
        ` (${s.heat_dir}: the deployment's heat-dir in the server's data area).`) : null));
  };
  const run = (workflow, input, done) => async () => {
    problem.textContent = "";
    try {
      const execution = await call("POST", `/v1/workflows/${workflow}/executions`, { json: { input } });
      await ui.follow(execution, progress);
      const ended = await call("GET", `/v1/executions/${enc(execution.id)}`);
      if (ended.state !== "SUCCESS") problem.textContent = ended.error || `${workflow}: ${ended.state}`;
      else ui.say(done);
      await refresh();
    } catch (error) {
      if (error.name !== "AbortError") problem.textContent = ui.errorText(error);
    }
  };
  const section = h("section", { "aria-labelledby": "heat-h", id: "inspect-stack" },
    h("h2", { id: "heat-h", text: "Inspect the stack" }),
    h("p", { class: "muted", text: "Start a Heat on the deployment's database dump to read " +
      "its stack, then stop it (its database is dumped again)." }),
    status,
    h("p", { class: "actions" },
      h("button", { type: "button", id: "heat-start", text: "Start Heat on the dump",
                    onclick: run("tripleo.heat.launch", { heat_dir: plan, restore_db: true },
                                 "Heat started.") }),
      h("button", { type: "button", id: "heat-stop", class: "danger", text: "Stop Heat",
                    onclick: run("tripleo.heat.kill", { heat_dir: plan }, "Heat stopped.") })),
    problem, progress);
  refresh().catch((error) => { problem.textContent = ui.errorText(error); });
  return section;
}
