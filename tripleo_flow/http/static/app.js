// tripleo-flow's web GUI: a thin client of /v1 (every change goes through the API).
// This module routes the location to its view; each view is a module of its own
// (plans.js, plan.js, executions.js, nodes.js, ...), its DOM helpers in dom.js.
import { ApiError, clearToken, token } from "/gui/api.js";
import { backupsView as backupsPage } from "/gui/backups.js";
import { download, errorText, h, say, state } from "/gui/dom.js";
import { executionView, executionsView } from "/gui/executions.js";
import { followExecution } from "/gui/follow.js";
import { loginView as loginPage } from "/gui/login.js";
import { nodesView as nodesPage } from "/gui/nodes.js";
import { planView } from "/gui/plan.js";
import { plansView } from "/gui/plans.js";
import { validationsView as validationsPage } from "/gui/validations.js";
import { workflowsView as workflowsPage } from "/gui/workflows.js";

const main = document.getElementById("main");
const nav = document.getElementById("nav");
let leaving = new AbortController();  // aborts the current view's streams

function show(title, ...content) {
  document.title = `${title} · tripleo-flow`;
  main.replaceChildren(h("h1", { text: title }), ...content.filter(Boolean));
  main.focus({ preventScroll: true });
}

// The show() of the view route() is drawing now: once the user has gone elsewhere, a
// view whose requests end late draws nothing (it would replace the newer view).
function drawer() {
  const signal = leaving.signal;
  return (title, ...content) => { if (!signal.aborted) show(title, ...content); };
}

// An execution followed live in ``box`` (follow.js), until the view is left.
const followDeploy = (execution, box) => followExecution({ h, state, signal: () => leaving.signal },
                                                         execution, box);

// What a view of plans.js, plan.js or executions.js is given: draw (its show()),
// fail, follow, route, and signal (aborted once the view is left).
const current = () => ({ draw: drawer(), fail, follow: followDeploy, route,
                         signal: leaving.signal });

const loginView = (message = "") => loginPage({ show, route }, message);

// -- nodes, validations, backups and workflows ----------------------------------------

const nodesView = () => nodesPage({ h, show: drawer(), state, errorText, say,
                                    signal: () => leaving.signal });

const validationsView = () => validationsPage({ h, show: drawer(), state, errorText, say,
                                                signal: () => leaving.signal });

const backupsView = () => backupsPage({ h, show: drawer(), errorText, say, download });

const workflowsView = () => workflowsPage({ h, show: drawer(), errorText, say });

// -- routing -------------------------------------------------------------------------

function fail(error) {
  if (error.name === "AbortError") return;
  if (error instanceof ApiError && error.status === 401) return;
  main.append(h("p", { class: "error", role: "alert", text: errorText(error) }));
}

function route() {
  leaving.abort();
  leaving = new AbortController();
  if (!token()) { loginView(); return; }
  nav.hidden = false;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  let view;
  if (parts[0] === "plans" && parts[1]) view = planView(current(), parts[1], parts[2] || "overview");
  else if (parts[0] === "executions" && parts[1]) view = executionView(current(), parts[1]);
  else if (parts[0] === "executions") view = executionsView(current());
  else if (parts[0] === "nodes") view = nodesView();
  else if (parts[0] === "validations") view = validationsView();
  else if (parts[0] === "backups") view = backupsView();
  else if (parts[0] === "workflows") view = workflowsView();
  else view = plansView(current());
  view.catch(fail);
}

window.addEventListener("hashchange", route);
window.addEventListener("unauthorized", (event) => loginView(event.detail));
document.getElementById("logout").addEventListener("click", () => {
  clearToken();
  location.hash = "";
  loginView("Logged out.");
});
route();
