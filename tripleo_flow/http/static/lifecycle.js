// The Deploy tab's lifecycle sections: the minor update (`overcloud update prepare|run|
// converge`) and the major upgrade, each a table of operations and their options drawn
// by one function (another lifecycle operation is one more table, listed where app.js
// draws the sections). Each operation starts its workflow over
// the HTTP API (POST /v1/workflows/{name}/executions, as the CLI runs the same workflow),
// after the CLI's confirmation, and is followed live as a deploy is; a refusal is shown
// in the server's words.
import { call } from "/gui/api.js";
import { startAndFollow } from "/gui/follow.js";
import {
  baremetalInput, baremetalText, environmentDirectoryInput, environmentFilesInput,
  userEnvironments,
} from "/gui/deployfiles.js";

const enc = encodeURIComponent;

// One option of an operation. input: the workflow input it sets; flag: the CLI option
// it stands for; kind: "text" (sent when not empty), "list" (comma-separated, sent as a
// list), "count" (a whole number), "vars" (Ansible extra vars: key=value pairs or a JSON
// object, sent as a mapping), "off" (a checkbox that sends false when checked:
// --stack-only), "on" (a checkbox that sends true when checked: --run-validations), "heat" (the Deploy form's Heat choice, not drawn again); required: the
// operation is not started without it (said at once); value(plan): its first value.
const HEAT = { input: "heat_type", flag: "--heat-type", kind: "heat" };
const WORK_DIR = { input: "work_dir", flag: "--work-dir", kind: "text", label: "Work dir",
                   value: (plan) => plan,
                   help: "a name in the server's work area (the Deploy above uses the plan's "
                     + "name) or a path under [api] allowed_paths" };
const CONNECTION = { input: "ansible_connection", flag: "--ansible-connection", kind: "text",
                     label: "Ansible connection", placeholder: "ssh",
                     help: "local: run on the server itself" };
const TAGS = { input: "ansible_tags", flag: "--tags", kind: "text", label: "Tags",
               placeholder: "tags, comma-separated" };
const SKIP_TAGS = { input: "ansible_skip_tags", flag: "--skip-tags", kind: "text",
                    label: "Skip tags", placeholder: "tags, comma-separated" };

// tripleoclient's run options (update, upgrade and external runs; forks on converge too).
const FORKS = { input: "ansible_forks", flag: "--ansible-forks", kind: "count",
                label: "Ansible forks", placeholder: "min(4 x CPUs, 100)",
                help: "hosts Ansible works on at once (0: the default)" };
const SSH_USER = { input: "ssh_user", flag: "--ssh-user", kind: "text", label: "SSH user",
                   placeholder: "the inventory's user",
                   help: "the user Ansible logs in as on every host" };
const STATIC_INVENTORY = { input: "static_inventory", flag: "--static-inventory",
                           kind: "text", label: "Static inventory",
                           placeholder: "config-download's inventory",
                           help: "an inventory file on the server, under [api] allowed_paths" };
const EXTRA_VARS = { input: "extra_vars", flag: "-e/--extra-vars", kind: "vars",
                     label: "Extra vars", placeholder: "name=value name2=value2, or {\"name\": …}",
                     help: "variables for the external playbook: name=value pairs (text) or a "
                       + "JSON object; they are kept in the execution's inputs" };
// tripleoclient gives ansible-playbook its own -v level (none: 0; -v: -vv; --debug: -vvv).
const VERBOSITY = { input: "ansible_verbosity", flag: "-v", kind: "count",
                    label: "Ansible verbosity", placeholder: "0",
                    help: "ansible-playbook's -v count, 0 to 6 (the CLI's -v level)" };
const RUN_OPTIONS = [FORKS, SSH_USER, STATIC_INVENTORY, VERBOSITY];

// tripleoclient's deploy options a prepare and a converge take (as the Deploy form's).
const RUN_VALIDATIONS = { input: "run_validations", flag: "--run-validations", kind: "on",
                          label: "run the pre-deployment validations first" };
const OVERCLOUD_SSH_USER = {
  input: "overcloud_ssh_user", flag: "--overcloud-ssh-user", kind: "text",
  label: "Overcloud SSH user", placeholder: "[ansible] ssh_user",
  help: "the user config-download's inventory names; it must already log in (no user is "
    + "created on the servers)" };
// Files on the user's computer (deployfiles.js, as the Deploy form's): the environment
// directory's and the -e files become user_environments (the directory's first, as the
// CLI's), the baremetal deployment file's text baremetal_deployment.
const ENVIRONMENT_DIRECTORY = {
  input: "user_environments", flag: "--environment-directory", kind: "envdir",
  label: "Environment directory",
  help: "its *.yaml files, in name order, before the -e files (with the files they refer to); "
    + "the browser reads no directory by itself: choose ~/.tripleo/environments here "
    + "if the CLI's default should apply" };
const ENVIRONMENT_FILES = {
  input: "user_environments", flag: "-e/--environment-file", kind: "envfiles",
  label: "Environment files",
  help: "the plan's user environments from now on, in the order chosen" };
const BAREMETAL = {
  input: "baremetal_deployment", flag: "--baremetal-deployment", kind: "baremetal",
  label: "Baremetal deployment",
  help: "the roles' servers (pre-provisioned or Ironic nodes), as for deploy" };
const DEPLOY_OPTIONS = [ENVIRONMENT_DIRECTORY, ENVIRONMENT_FILES, BAREMETAL, RUN_VALIDATIONS,
                        OVERCLOUD_SSH_USER];

// The options several operations (and families) take, for other tables to reuse.
export const OPTIONS = { HEAT, WORK_DIR, CONNECTION, TAGS, SKIP_TAGS, FORKS, SSH_USER,
                         STATIC_INVENTORY, EXTRA_VARS, VERBOSITY, RUN_VALIDATIONS,
                         OVERCLOUD_SSH_USER, ENVIRONMENT_DIRECTORY, ENVIRONMENT_FILES,
                         BAREMETAL };

// The file choosers of the file kinds (deployfiles.js).
const CHOOSERS = { envdir: environmentDirectoryInput, envfiles: environmentFilesInput,
                   baremetal: baremetalInput };

// A lifecycle operation family: its title, the CLI's confirmation, the plan environment
// that says it is prepared (the stage shown), the options its operations share, and its
// operations in order (each with the workflow it starts and the CLI's options).
export const UPDATE = {
  id: "update",
  title: "Minor update",
  command: "overcloud update",
  verb: "Update",
  prepared: "environments/lifecycle/update-prepare.yaml",
  // Options of every operation, drawn once above them.
  shared: [WORK_DIR],
  intro: "As overcloud update: prepare updates the stack with THT's update-prepare "
    + "environment (and writes config-download), run runs the update steps on the nodes or "
    + "roles of the limit, one group at a time, and converge takes the environment out and "
    + "deploys again (with the Heat chosen above).",
  prompt: "You are about to run an UPDATE command. Take a backup first. Are you sure you "
    + "want to update?",
  operations: [
    { id: "prepare", workflow: "tripleo.update.prepare",
      help: "The stack updated with the update-prepare environment; no playbook runs.",
      options: [HEAT, WORK_DIR, ...DEPLOY_OPTIONS] },
    { id: "run", workflow: "tripleo.update.run",
      help: "update_steps_playbook.yaml (or the playbooks named) on the limit only; "
        + "refused until an update is prepared.",
      options: [
        { input: "limit", flag: "--limit", kind: "text", label: "Limit", required: true,
          placeholder: "Controller, or node names",
          help: "the nodes or roles to update, comma-separated (required)" },
        { input: "playbooks", flag: "--playbook", kind: "list", label: "Playbooks",
          placeholder: "update_steps_playbook.yaml",
          help: "config-download playbooks to run in order, comma-separated" },
        TAGS, SKIP_TAGS, WORK_DIR, CONNECTION, ...RUN_OPTIONS] },
    { id: "external-run", workflow: "tripleo.update.external_run",
      title: "overcloud external-update run", button: "External update run",
      help: "external_update_steps_playbook.yaml, run from this machine; refused until an "
        + "update is prepared.",
      options: [
        { input: "limit", flag: "--limit", kind: "text", label: "Limit",
          placeholder: "every host",
          help: "the nodes or roles to run them for, comma-separated" },
        TAGS, SKIP_TAGS, WORK_DIR, CONNECTION, ...RUN_OPTIONS, EXTRA_VARS] },
    { id: "converge", workflow: "tripleo.update.converge",
      help: "The update-prepare environment taken out, the plan deployed with its deploy "
        + "steps.",
      options: [
        HEAT, WORK_DIR,
        { input: "run_ansible", flag: "--stack-only", kind: "off",
          label: "stack only (no deploy steps playbook)" },
        CONNECTION, TAGS, SKIP_TAGS,
        { input: "ansible_limit", flag: "--limit", kind: "text", label: "Limit",
          placeholder: "every node", help: "the deploy steps on these nodes or roles only" },
        FORKS, VERBOSITY, ...DEPLOY_OPTIONS] },
  ],
};

// The major upgrade (`overcloud upgrade prepare|run|converge`, `overcloud external-upgrade
// run`): the same drawing as UPDATE, its own workflows (workbooks/upgrade.yaml).
const LIMIT_OF = (what, required) => ({
  input: "limit", flag: "--limit", kind: "text", label: "Limit", required,
  placeholder: required ? "Controller, or node names" : "every host",
  help: `the nodes or roles to ${what}, comma-separated${required ? " (required)" : ""}` });

export const UPGRADE = {
  id: "upgrade",
  title: "Major upgrade",
  command: "overcloud upgrade",
  verb: "Upgrade",
  prepared: "environments/lifecycle/upgrade-prepare.yaml",
  shared: [WORK_DIR],
  intro: "As overcloud upgrade: prepare updates the stack with THT's upgrade-prepare "
    + "environment (in place of an update's), run runs the upgrade, deploy and post-upgrade "
    + "steps on the nodes or roles of the limit, external-upgrade run runs the external "
    + "upgrade steps from this machine, and converge takes the environment out and deploys "
    + "again (with the Heat chosen above).",
  prompt: "You are about to run an UPGRADE command. Take a backup first. Are you sure you "
    + "want to upgrade?",
  operations: [
    { id: "prepare", workflow: "tripleo.upgrade.prepare",
      help: "The stack updated with the upgrade-prepare environment; no playbook runs.",
      options: [HEAT, WORK_DIR, ...DEPLOY_OPTIONS] },
    { id: "run", workflow: "tripleo.upgrade.run",
      help: "upgrade_steps_playbook.yaml, deploy_steps_playbook.yaml and "
        + "post_upgrade_steps_playbook.yaml (or the playbooks named) on the limit only; "
        + "refused until an upgrade is prepared.",
      options: [
        LIMIT_OF("upgrade", true),
        { input: "playbooks", flag: "--playbook", kind: "list", label: "Playbooks",
          placeholder: "upgrade_steps_playbook.yaml, …",
          help: "config-download playbooks to run in order, comma-separated" },
        TAGS, SKIP_TAGS, WORK_DIR, CONNECTION, ...RUN_OPTIONS] },
    { id: "external-run", workflow: "tripleo.upgrade.external_run",
      title: "overcloud external-upgrade run", button: "External upgrade run",
      help: "external_upgrade_steps_playbook.yaml, run from this machine; refused until an "
        + "upgrade is prepared.",
      options: [LIMIT_OF("run them for", false), TAGS, SKIP_TAGS, WORK_DIR, CONNECTION,
                ...RUN_OPTIONS, EXTRA_VARS] },
    { id: "converge", workflow: "tripleo.upgrade.converge",
      help: "The upgrade-prepare environment taken out, the plan deployed with its deploy "
        + "steps.",
      options: UPDATE.operations.find((o) => o.id === "converge").options },
  ],
};

// The field of one option (null for the Heat choice, read from the Deploy form).
function field(ui, id, option, plan) {
  const { h } = ui;
  if (option.kind === "heat") return null;
  if (CHOOSERS[option.kind]) {  // (two of them set one input: the kind tells them apart)
    const own = `${id}-${option.kind}`;
    return h("div", { class: "field" }, h("label", { for: own, text: option.label }),
      CHOOSERS[option.kind](h, own, { "data-input": option.input, "data-kind": option.kind,
                                      "aria-describedby": `${own}-help` }),
      h("div", { class: "muted", id: `${own}-help`, text: `${option.flag}: ${option.help}` }));
  }
  if (option.kind === "off" || option.kind === "on") {
    return h("div", { class: "field" }, h("label", { class: "inline" },
      h("input", { type: "checkbox", id, "data-input": option.input }), ` ${option.label}`),
      h("div", { class: "muted", text: option.flag }));
  }
  const input = h(option.kind === "vars" ? "textarea" : "input", {
    id, type: option.kind === "vars" ? false : "text", "data-input": option.input,
    inputmode: option.kind === "count" ? "numeric" : false,
    rows: option.kind === "vars" ? 2 : false,
    value: option.value ? option.value(plan) : false,
    placeholder: option.placeholder || false, required: option.required || false,
    "aria-describedby": `${id}-help` });
  return h("div", { class: "field" }, h("label", { for: id, text: option.label }), input,
    h("div", { class: "muted", id: `${id}-help`,
               text: [option.flag, option.help].filter(Boolean).join(": ") }));
}

// Extra vars as tripleoclient's -e reads them: name=value pairs (the value a text) or a
// JSON object (any values); a string saying what is wrong otherwise. The server checks
// the names.
function extraVars(text) {
  if (text.startsWith("{")) {
    let value;
    try {
      value = JSON.parse(text);
    } catch (error) {
      return `The extra vars are not valid JSON (${error.message}).`;
    }
    return value && typeof value === "object" && !Array.isArray(value) ? value
      : "Give the extra vars as a JSON object.";
  }
  const vars = {};
  for (const pair of text.split(/\s+/)) {
    const at = pair.indexOf("=");
    if (at < 1) return `Give the extra vars as name=value pairs ('${pair}' has no name=).`;
    vars[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return vars;
}

// The workflow input of one operation from its fields (a shared option's in the
// section); a string naming what is missing or wrong when an option cannot be sent.
async function inputOf(spec, section, form, operation, plan, heat) {
  const input = { plan };
  for (const option of operation.options) {
    if (option.kind === "heat") {
      if (heat.value) input[option.input] = heat.value;  // none: as deployed
      continue;
    }
    const root = spec.shared.includes(option) ? section : form;
    if (option.kind === "envdir") continue;  // read with the -e files
    if (option.kind === "envfiles") {
      const chooser = (kind) => root.querySelector(`[data-kind="${kind}"]`);
      const found = await userEnvironments(chooser("envdir"), chooser("envfiles"));
      if (found.length) input[option.input] = found;  // none: the plan's kept
      continue;
    }
    const box = root.querySelector(`[data-input="${option.input}"]`);
    if (option.kind === "baremetal") {
      const text = await baremetalText(box);
      if (text !== undefined) input[option.input] = text;
      continue;
    }
    if (option.kind === "off" || option.kind === "on") {
      if (box.checked) input[option.input] = option.kind === "on";
      continue;
    }
    const text = box.value.trim();
    if (!text) {
      if (option.required) return `Give the ${option.label.toLowerCase()} (${option.help}).`;
      continue;
    }
    if (option.kind === "count") {
      if (!/^\d+$/.test(text)) return `Give the ${option.label.toLowerCase()} as a whole number.`;
      input[option.input] = Number(text);
    } else if (option.kind === "vars") {
      const vars = extraVars(text);
      if (typeof vars === "string") return vars;
      input[option.input] = vars;
    } else {
      input[option.input] = option.kind === "list"
        ? text.split(",").map((s) => s.trim()).filter(Boolean) : text;
    }
  }
  return input;
}

// Whether the plan holds the family's prepare environment (null when unreadable).
async function preparedNow(plan, spec) {
  try {
    const list = await call("GET", `/v1/plans/${enc(plan)}/environments`);
    return list.some((e) => (typeof e === "string" ? e : e && e.path) === spec.prepared);
  } catch (error) {
    return null;
  }
}

// The section of ``spec`` (UPDATE) for a deployed plan, or null for a plan never
// deployed. ui: the page's helpers (h, errorText, say); heat: the Deploy form's Heat
// choice; follow(execution, box): the deploy's live progress; done(): after each run.
export async function lifecycleSection(ui, spec, plan, heat, follow, done) {
  const { h } = ui;
  const status = await call("GET", `/v1/plans/${enc(plan)}/deployment`);
  if (["NONE", "DEPLOYING", undefined].includes(status.deployment_status)) return null;
  const stage = h("p", { id: `${spec.id}-stage`, "aria-live": "polite" });
  const showStage = async () => {
    const prepared = await preparedNow(plan, spec);
    stage.textContent = prepared === null ? ""
      : prepared ? `Prepared: the plan holds ${spec.prepared} (run, then converge).`
        : `Not prepared (${spec.command} prepare first).`;
  };
  const progress = h("div", { id: `${spec.id}-progress`, "aria-live": "polite" });
  const section = h("section", { "aria-labelledby": `${spec.id}-h`, id: spec.id },
    h("h2", { id: `${spec.id}-h`, text: spec.title }),
    h("p", { class: "muted", text: spec.intro }), stage,
    spec.shared.map((option) => field(ui, `${spec.id}-${option.input}`, option, plan)));
  const buttons = [];
  const forms = spec.operations.map((operation) => {
    const name = operation.button || `${spec.verb} ${operation.id}`;  // "Update run"
    const base = `${spec.id}-${operation.id}`;
    const problem = h("p", { class: "error", role: "alert", id: `${base}-error` });
    const button = h("button", { type: "submit", class: "primary", id: `${base}-start`,
                                 text: name });
    buttons.push(button);
    // (novalidate: a missing required option is said in the page's words, as alert)
    const form = h("form", { "aria-labelledby": `${base}-h`, "data-operation": operation.id,
                             novalidate: true },
      h("h3", { id: `${base}-h`, text: operation.title || `${spec.command} ${operation.id}` }),
      h("p", { class: "muted", text: operation.help }),
      operation.options.filter((option) => !spec.shared.includes(option))
        .map((option) => field(ui, `${base}-${option.input}`, option, plan)),
      h("p", {}, button), problem);
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      problem.textContent = "";
      const input = await inputOf(spec, section, form, operation, plan, heat);
      if (typeof input === "string") {
        problem.textContent = input;
        return;
      }
      const title = operation.title || `${spec.command} ${operation.id}`;
      if (!window.confirm(`${title} of plan ${plan}\n${spec.prompt}`)) {
        ui.say(`Nothing started: ${name.toLowerCase()} not confirmed.`);
        return;
      }
      buttons.forEach((b) => { b.disabled = true; });
      progress.replaceChildren(ui.h("p", { text: `Starting ${name.toLowerCase()}…` }));
      await startAndFollow(ui, operation.workflow, input, follow, progress, done, problem);
      buttons.forEach((b) => { b.disabled = false; });
      await showStage().catch(() => {});
    });
    return form;
  });
  await showStage();
  section.append(h("div", { class: "lifecycle" }, forms), progress);
  return section;
}
