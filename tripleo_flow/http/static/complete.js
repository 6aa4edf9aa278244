// Completing an asynchronous action a task waits for (std.async_noop, an ad-hoc action
// on it, ...), as `tripleo-flow execution complete` does: Mistral's action execution
// update, POST /v1/executions/ID/tasks/TASK/complete {state, output, item}.
import { call } from "/gui/api.js";
import { enc, errorText, h, say } from "/gui/dom.js";

// The output as `execution complete --output` reads it: JSON, or else the text as
// given; nothing typed sends no output.
export function outputValue(text) {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch (error) {
    return text;
  }
}

// The forms of one execution's page, kept by task and action execution, so that a task
// drawn again (an event) keeps what was typed in its form.
export function completeForms(executionId) {
  const forms = new Map();
  const form = (task, waiting) => {
    const item = waiting.item === null || waiting.item === undefined ? null : waiting.item;
    const what = item === null ? `task ${task.name}` : `item ${item} of task ${task.name}`;
    const choice = h("select", { "aria-label": `State to complete ${what} with` },
      h("option", { value: "SUCCESS", text: "SUCCESS" }),
      h("option", { value: "ERROR", text: "ERROR" }));
    const output = h("textarea", { rows: 2, cols: 36, placeholder: "Output: JSON, or text",
                                   "aria-label": `Output to complete ${what} with` });
    const problem = h("span", { class: "error", role: "alert" });
    const submit = h("button", { type: "submit", text: item === null ? "Complete" : `Complete item ${item}` });
    const node = h("form", { class: "complete", "aria-label": `Complete ${what}` },
      choice, " ", output, " ", submit, " ", problem);
    node.addEventListener("submit", async (event) => {
      event.preventDefault();
      submit.disabled = true;
      const body = { state: choice.value };
      const value = outputValue(output.value);
      if (value !== undefined) body.output = value;
      if (item !== null) body.item = item;
      try {
        await call("POST", `/v1/executions/${enc(executionId)}/tasks/${enc(task.name)}/complete`,
                   { json: body });
        problem.textContent = "";
        say(`The action of task ${task.name} completed with ${body.state}: the execution goes on.`);
      } catch (error) {
        problem.textContent = errorText(error);  // e.g. 409 when it was completed meanwhile
        submit.disabled = false;
      }
    });
    return node;
  };
  // The forms of a task's waiting actions (none once it waits no more).
  return (task) => {
    const shown = [];
    for (const waiting of task.waiting || []) {
      const key = `${task.name}\n${waiting.id}`;
      if (!forms.has(key)) forms.set(key, form(task, waiting));
      shown.push(forms.get(key));
    }
    return shown.length ? h("div", { class: "waiting" }, shown) : null;
  };
}
