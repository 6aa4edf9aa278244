// The GUI's small DOM helpers, shared by its views.
import { ApiError, call } from "/gui/api.js";

export const enc = encodeURIComponent;

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

let ids = 0;
export const uid = (prefix) => `${prefix}-${++ids}`;

export function say(message) {
  const box = document.getElementById("status");
  box.textContent = message;
  clearTimeout(say.timer);
  say.timer = setTimeout(() => { box.textContent = ""; }, 6000);
}

export function errorText(error) {
  return error instanceof ApiError ? error.message : String(error.message || error);
}

// A form's submit: ``work()`` runs with ``button`` disabled; what it throws is shown
// in ``problem`` (cleared as it starts).
export function onSubmit(form, button, problem, work) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    button.disabled = true;
    try {
      await work();
    } catch (error) {
      problem.textContent = errorText(error);
    } finally {
      button.disabled = false;
    }
  });
}

export function state(value) { return h("span", { class: `state-${value}`, text: value }); }

export function when(seconds) { return seconds ? new Date(seconds * 1000).toLocaleString() : ""; }

// Save what GET ``path`` answers as ``filename`` (the browser's download).
export async function download(path, filename) {
  const response = await call("GET", path, { raw: true });
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: filename });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}
