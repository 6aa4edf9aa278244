// The Executions pages: the executions, newest first, a page at a time; one
// execution's task graph and tasks followed live, with its Resume, Pause, Cancel,
// Fail and Succeed, the Rerun of a failed task and the completion of an action a task
// waits for.
import { call, events } from "/gui/api.js";
import { completeForms } from "/gui/complete.js";
import { enc, errorText, h, say, state, when } from "/gui/dom.js";
import { drawGraph } from "/gui/graph.js";

// One page of executions, newest first, and the path of the next page (the Link
// header with rel="next"; null after the last page).
async function executionsPage(path) {
  const response = await call("GET", path, { raw: true });
  const link = /<([^>]*)>\s*;\s*rel="?next"?/.exec(response.headers.get("Link") || "");
  return { list: await response.json(), next: link ? link[1] : null };
}

// app: draw (the view's show).
export async function executionsView(app) {
  let page = await executionsPage("/v1/executions?sort_dir=desc");
  const row = (e) => h("tr", {},
    h("td", {}, h("a", { href: `#/executions/${enc(e.id)}`, text: e.id })),
    h("td", { text: e.workflow }), h("td", {}, state(e.state)),
    h("td", { text: when(e.created_at || e.started_at) }));
  const body = h("tbody", {}, page.list.map(row));
  const problem = h("span", { class: "error", role: "alert" });
  const more = h("button", { type: "button", id: "more-executions", text: "Older executions",
    onclick: async () => {
      more.disabled = true;
      try {
        page = await executionsPage(page.next);
        body.append(...page.list.map(row));
        problem.textContent = "";
      } catch (error) {
        problem.textContent = errorText(error);
      }
      more.disabled = false;
      more.hidden = !page.next;
    } });
  more.hidden = !page.next;
  app.draw("Executions", h("table", {},
    h("thead", {}, h("tr", {}, h("th", { text: "Execution" }), h("th", { text: "Workflow" }),
      h("th", { text: "State" }), h("th", { text: "Started" }))), body),
    h("p", {}, more, " ", problem));
}

// States an execution can be resumed from (the server decides; 409 otherwise).
const RESUMABLE = new Set(["INTERRUPTED", "PAUSED", "SUSPENDED"]);
// States an execution can be cancelled from (one that ended is left as it is).
const CANCELLABLE = new Set(["RUNNING", "PENDING", ...RESUMABLE]);
// States of a failed execution (Mistral's ERROR): its failed tasks can be rerun.
const FAILED = new Set(["ERROR"]);
// States an execution can be stopped with ERROR from (a paused one is left as it is).
const STOPPABLE = new Set(["RUNNING", "PENDING", "SUSPENDED", "INTERRUPTED"]);

// Milliseconds between looks for the child executions of a running task.
const CHILD_POLL_MS = 1000;

// Links to the child executions of a task that runs a sub-workflow (a `workflow:`
// task: one per item and attempt), in the order they started.
function childLinks(task, ids) {
  if (!ids.length) return null;
  return h("ul", { class: "children", "aria-label": `Executions of task ${task.name}` },
    ids.map((child, n) => h("li", {}, h("a", { href: `#/executions/${enc(child)}`,
      text: ids.length > 1 ? `execution ${n + 1}: ${child}` : `execution ${child}`,
      "aria-label": `Execution ${ids.length > 1 ? `${n + 1} ` : ""}of task ${task.name}` }))));
}

function taskDetail(task) {
  const bits = [];
  if (task.progress) bits.push(`${task.progress.done}/${task.progress.total}`);
  return bits.join(" ");
}

// app: draw (the view's show), route (draw the view of the location again) and
// signal (aborted once the view is left).
export async function executionView(app, id) {
  const execution = await call("GET", `/v1/executions/${enc(id)}`);
  const graph = await call("GET", `/v1/workflows/${enc(execution.workflow)}`);
  const picture = h("div", { class: "graph", id: "graph" });
  // A failed execution reads ERROR (Mistral's); "(undone)" when its completed tasks were undone.
  const shownState = (e) => [state(e.state), e.reverted ? " (undone)" : ""];
  const stateBox = h("span", {}, ...shownState(execution));
  const resumeProblem = h("span", { class: "error", role: "alert" });
  // A button that POSTs to /v1/executions/ID/<verb> (with `stop`: PUTs its state there,
  // as Mistral's execution update), then says so (409... shown beside it).
  const verbButton = (verb, text, done, stop = null) => {
    const button = h("button", { type: "button", id: verb, text, onclick: async () => {
      button.disabled = true;
      try {
        if (stop) await call("PUT", `/v1/executions/${enc(id)}`, { json: { state: stop } });
        else await call("POST", `/v1/executions/${enc(id)}/${verb}`);
        done();
      } catch (error) {
        resumeProblem.textContent = errorText(error);
        button.disabled = false;
      }
    } });
    return button;
  };
  // Not while "pausing": its running tasks still end in the process that runs it.
  const resume = RESUMABLE.has(execution.state) && !execution.pausing ? verbButton("resume", "Resume", () => {
    say(`Execution ${id} resumed.`);
    app.route();  // follow it again from the start
  }) : null;
  const pause = execution.state === "RUNNING" ? verbButton("pause", "Pause", () => {
    say(`Execution ${id} pauses once its running tasks end.`);
  }) : null;
  // Mistral's CANCELLED: its running tasks end, none starts, it is never resumed.
  const cancel = CANCELLABLE.has(execution.state) ? verbButton("cancel", "Cancel", () => {
    say(`Execution ${id} cancelled: its running tasks end, no new one starts.`);
    app.route();  // drawn again, CANCELLED, without Pause, Resume or Cancel
  }) : null;
  // Mistral's stop with ERROR or SUCCESS: its running tasks end, none starts.
  const stopped = (end) => () => {
    say(`Execution ${id} stopped with state ${end}: its running tasks end, no new one starts.`);
    app.route();
  };
  const fail = STOPPABLE.has(execution.state) ? verbButton("fail", "Fail", stopped("ERROR"), "ERROR") : null;
  const succeed = execution.state === "RUNNING" ? verbButton("succeed", "Succeed", stopped("SUCCESS"), "SUCCESS") : null;
  const tasksBody = h("tbody", {});
  const tasks = new Map();
  const completions = completeForms(id);
  let failed = FAILED.has(execution.state);
  // Mistral's task rerun of a failed task (PUT /v1/executions/ID/tasks/NAME): the
  // completed tasks keep their results, the execution goes on (drawn again, followed).
  const rerunButton = (task) => {
    const button = h("button", { type: "button", class: "rerun", text: "Rerun",
      "aria-label": `Rerun task ${task.name}`, onclick: async () => {
        button.disabled = true;
        try {
          await call("PUT", `/v1/executions/${enc(id)}/tasks/${enc(task.name)}`,
                     { json: { state: "RUNNING" } });
          say(`Task ${task.name} of execution ${id} rerun: the execution goes on.`);
          app.route();
        } catch (error) {
          resumeProblem.textContent = errorText(error);
          button.disabled = false;
        }
      } });
    return button;
  };
  app.draw(`Execution ${execution.id}`,
    h("p", {}, `Workflow ${execution.workflow}: `, stateBox, " ", resume, pause, " ", cancel,
      " ", fail, " ", succeed, " ", resumeProblem),
    execution.parent_id ? h("p", { id: "parent-execution" }, "Sub-workflow of task ",
      h("strong", { text: execution.parent_task || "" }), " of execution ",
      h("a", { href: `#/executions/${enc(execution.parent_id)}`, text: execution.parent_id })) : null,
    execution.state_info ? h("p", { class: "state-info", text: execution.state_info }) : null,
    execution.error ? h("pre", { class: "error", text: execution.error }) : null,
    h("h2", { text: "Task graph" }), picture,
    h("h2", { text: "Tasks" }),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", { text: "Task" }), h("th", { text: "Started" }),
      h("th", { text: "State" }), h("th", { text: "Published / error" }))), tasksBody),
    h("h2", { text: "Input" }), h("pre", { text: JSON.stringify(execution.input, null, 2) }),
    // (its secrets masked by the server)
    Object.keys(execution.env || {}).length ? h("div", {}, h("h2", { text: "Environment (env)" }),
      h("pre", { id: "execution-env", text: JSON.stringify(execution.env, null, 2) })) : null,
    execution.output !== null ? h("div", {}, h("h2", { text: "Output" }),
      h("pre", { text: JSON.stringify(execution.output, null, 2) })) : null);
  const update = drawGraph(picture, graph);
  // A task's child executions: those its record lists (once it has ended), and while
  // it runs those found by parent_id and parent_task among the newest executions.
  const children = new Map();
  const latest = new Map();  // task name -> its last record
  const watched = new Set();
  // (only a `workflow:` task starts child executions)
  const subworkflows = new Set((graph.tasks || []).filter((t) => t.workflow).map((t) => t.name));
  const watchChildren = async (name) => {
    watched.add(name);
    while (latest.get(name).state === "RUNNING" && !app.signal.aborted) {
      const newest = await call("GET", "/v1/executions?sort_dir=desc&limit=50",
                                { signal: app.signal });
      const found = newest.filter((e) => e.parent_id === id && e.parent_task === name)
        .sort((a, b) => (a.created_at || 0) - (b.created_at || 0)).map((e) => e.id);
      if (found.some((child) => !(children.get(name) || []).includes(child))) {
        children.set(name, [...new Set([...(children.get(name) || []), ...found])]);
        record(latest.get(name));
      }
      await new Promise((resolve) => { setTimeout(resolve, CHILD_POLL_MS); });
    }
    watched.delete(name);
  };
  const record = (task) => {
    latest.set(task.name, task);
    if ((task.executions || []).length) children.set(task.name, task.executions);
    if (task.state === "RUNNING" && subworkflows.has(task.name) && !watched.has(task.name)) {
      watchChildren(task.name).catch(() => {});
    }
    update(task.name, task.state, taskDetail(task));
    const row = h("tr", { "data-task": task.name },
      h("td", {}, task.name, childLinks(task, children.get(task.name) || [])),
      h("td", { text: when(task.started_at) }),
      h("td", {}, state(task.state), task.reverted ? " (undone)" : null,
        failed && task.error ? [" ", rerunButton(task)] : null, completions(task)),
      h("td", {}, task.error ? h("pre", { class: "error", text: task.error }) : null,
        Object.keys(task.published || {}).length ? h("pre", { text: JSON.stringify(task.published, null, 2) }) : null));
    if (tasks.has(task.name)) tasks.get(task.name).replaceWith(row);
    else tasksBody.append(row);
    tasks.set(task.name, row);
  };
  for (const task of await call("GET", `/v1/executions/${enc(id)}/tasks`)) record(task);
  await events(`/v1/executions/${enc(id)}/events`, (kind, data) => {
    if (kind === "task") record(data);
    else if (kind === "execution") {
      stateBox.replaceChildren(...shownState(data));
      if (resume && !RESUMABLE.has(data.state)) resume.remove();
      if (pause && data.state !== "RUNNING") pause.remove();
      if (cancel && !CANCELLABLE.has(data.state)) cancel.remove();
      if (fail && !STOPPABLE.has(data.state)) fail.remove();
      if (succeed && data.state !== "RUNNING") succeed.remove();
      if (!resume && RESUMABLE.has(data.state)) app.route();  // paused: drawn again, with Resume
      if (!failed && FAILED.has(data.state)) {  // its failed tasks get their Rerun button
        failed = true;
        for (const task of [...latest.values()]) record(task);
      }
    }
  }, app.signal);
}
