// Workflows started and followed live, as a deploy is: the stack's share of the work done (a bar
// that never runs backwards), its resources complete of total, the running task and every
// task event, then how it ended. A task that runs a sub-workflow as an execution of its
// own (the deploy inside an update, a scale-down, ...) is followed into that execution,
// found by its parent_id among the newest executions, so its stack progress shows too.
import { call, events } from "/gui/api.js";

const enc = encodeURIComponent;
// Milliseconds between looks for the sub-executions of a running task.
const CHILD_POLL_MS = 1000;

// ui: the page's helpers (h, state, signal); box: where the progress is drawn.
export async function followExecution(ui, execution, box) {
  const { h, state } = ui;
  const signal = ui.signal();
  // (shown once a stack reports progress: a run of playbooks only has none)
  const bar = h("progress", { id: "stack-progress", max: 1, value: 0, hidden: true,
                              "aria-label": "Stack resources complete" });
  const counts = h("p", { id: "stack-counts", text: "Starting…" });
  const running = h("p", { id: "running-task" });
  const log = h("ol", { class: "events", id: "events", "aria-label": "Events" });
  const end = h("p", { id: "execution-end" });
  let resources = 0;  // the stack's resource total at the last look
  box.replaceChildren(h("p", {}, "Execution ",
    h("a", { href: `#/executions/${enc(execution.id)}`, text: execution.id })), bar, counts, running, log, end);
  const followed = new Set([execution.id]);
  const streams = [];
  const runningTasks = new Map();  // "execution/task" -> its label, while it runs

  // Look for the sub-executions of ``parent`` while one of its tasks runs.
  const watchChildren = async (parent, key, prefix) => {
    while (runningTasks.has(key) && !signal.aborted) {
      const newest = await call("GET", "/v1/executions?sort_dir=desc&limit=20", { signal });
      for (const child of newest.filter((e) => e.parent_id === parent && !followed.has(e.id))) {
        followed.add(child.id);
        streams.push(stream(child.id, `${prefix}${runningTasks.get(key)} › `));
      }
      await new Promise((resolve) => { setTimeout(resolve, CHILD_POLL_MS); });
    }
  };

  const onEvent = (id, prefix) => (kind, data) => {
    if (kind === "task") {
      const p = data.progress;
      if (p && p.total) {
        // A stack's share of the work done never goes down; its resource total grows as
        // nested stacks appear, so the bar is drawn from the share when there is one.
        const share = typeof p.share === "number" ? p.share : p.done / p.total;
        bar.max = 1;
        bar.hidden = false;
        bar.value = Math.max(bar.value, Math.min(1, share));
        resources = p.total;
        counts.textContent = `${p.stage}: ${Math.floor(bar.value * 100)}% — ${p.done} of ${p.total} resources complete (${p.status || ""})`;
      }
      const stack = data.result && data.result.action && data.result.status;
      if (data.state === "SUCCESS" && stack && String(data.result.status).endsWith("_COMPLETE")) {
        bar.hidden = false;
        bar.value = bar.max;  // the stack's final status, as the task's result reports it
        counts.textContent = `stack: ${data.result.status} (${resources} resources)`;
      }
      const key = `${id}/${data.name}`;
      if (data.state === "RUNNING") {
        running.textContent = `Running: ${prefix}${data.name}`;
        if (!runningTasks.has(key)) {
          runningTasks.set(key, data.name);
          streams.push(watchChildren(id, key, prefix).catch(() => {}));
        }
      } else {
        runningTasks.delete(key);
      }
      const pct = p && typeof p.share === "number" ? ` ${Math.floor(p.share * 100)}%` : "";
      const line = `${prefix}${data.name}: ${data.state}${p ? `${pct} ${p.done}/${p.total} ${p.status || ""}` : ""}` +
        (data.error ? ` — ${data.error}` : "");
      if (data.state !== "PENDING") {  // (a subworkflow lists its tasks PENDING at first)
        log.append(h("li", { text: line }));
        log.scrollTop = log.scrollHeight;
      }
    } else if (kind === "execution" && id === execution.id) {
      runningTasks.clear();
      running.textContent = "";
      if (counts.textContent === "Starting…") counts.textContent = "";  // it never started
      end.replaceChildren("Execution ", state(data.state), data.error ? h("span", { class: "error", role: "alert", text: ` ${data.error}` }) : "");
    }
  };
  const stream = (id, prefix) => events(`/v1/executions/${enc(id)}/events`, onEvent(id, prefix),
                                        signal).catch((error) => {
    if (id === execution.id || error.name === "AbortError") throw error;
  });
  await stream(execution.id, "");
  runningTasks.clear();
  await Promise.allSettled(streams);
}

// Start workflow ``name`` with ``input`` (POST /v1/workflows/{name}/executions, as the
// CLI runs it), follow it in ``box`` with ``follow``, then ``done()``; a refusal of the
// start is shown in ``problem``. ui: the page's helpers (errorText).
export async function startAndFollow(ui, name, input, follow, box, done, problem) {
  try {
    const execution = await call("POST", `/v1/workflows/${enc(name)}/executions`,
                                 { json: { input } });
    await follow(execution, box);
    await done();
  } catch (error) {
    if (error.name !== "AbortError") problem.textContent = ui.errorText(error);
  }
}
