// Logging in: with the API's token, or (on a Keystone server) a user name and
// password that Keystone exchanges for a token; the token is kept in this tab only.
import { call, clearToken, setToken } from "/gui/api.js";
import { errorText, h } from "/gui/dom.js";

const nav = document.getElementById("nav");

// app: show (draw a view) and route (draw the view of the location).
export function loginView(app, message = "") {
  nav.hidden = true;
  const problem = h("p", { class: "error", role: "alert", text: message });
  const input = h("input", { id: "token", type: "password", name: "token", required: true,
                             autocomplete: "current-password", size: 40 });
  const tokenForm = h("form", { "aria-label": "Log in with a token" },
    h("div", { class: "form-row" }, h("label", { for: "token", text: "API token" }), input),
    h("p", { class: "muted", text: "The [api] auth_token of the server (or a Keystone " +
      "token when it uses Keystone). It is kept in this browser tab only." }),
    h("button", { class: "primary", type: "submit", text: "Log in" }));
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    enter(app, input.value.trim(), problem);
  });
  app.show("Log in", h("section", {}, problem, tokenForm));
  input.focus();
  // A server on Keystone also takes a user name and password (POST /v1/auth/tokens).
  fetch("/v1/auth", { cache: "no-store", credentials: "omit" })
    .then((response) => (response.ok ? response.json() : null))
    .then((auth) => {
      if (!auth || auth.strategy !== "keystone" || !tokenForm.isConnected) return;
      const keystoneForm = keystoneLoginForm(app, problem);
      tokenForm.before(keystoneForm, h("h2", { text: "Or with a token" }));
      tokenForm.querySelector("button").textContent = "Log in with the token";
      tokenForm.querySelector("button").classList.remove("primary");
      keystoneForm.querySelector("input").focus();
    })
    .catch(() => {});
}

function keystoneLoginForm(app, problem) {
  const field = (id, label, attrs) => h("div", { class: "form-row" },
    h("label", { for: id, text: label }), h("input", { id, name: id, size: 30, ...attrs }));
  const form = h("form", { "aria-label": "Log in with Keystone" },
    field("ks-user", "User name", { required: true, autocomplete: "username" }),
    field("ks-password", "Password", { type: "password", required: true,
                                       autocomplete: "current-password" }),
    field("ks-project", "Project", { required: true }),
    field("ks-domain", "Domain", { value: "Default", required: true }),
    h("p", { class: "muted", text: "Keystone checks the password and gives this tab a " +
      "token for the project; the password is not kept." }),
    h("button", { class: "primary", type: "submit", text: "Log in with Keystone" }));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const value = (id) => form.querySelector(`#${id}`).value.trim();
    const domain = value("ks-domain");
    problem.textContent = "";
    try {
      const response = await fetch("/v1/auth/tokens", {
        method: "POST", cache: "no-store", credentials: "omit",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ username: value("ks-user"),
                               password: form.querySelector("#ks-password").value,
                               project: value("ks-project"), user_domain: domain,
                               project_domain: domain }) });
      const answer = await response.json().catch(() => null);
      form.querySelector("#ks-password").value = "";
      if (!response.ok) {
        problem.textContent = (answer && answer.error && answer.error.message) ||
          `HTTP ${response.status}`;
        return;
      }
      enter(app, answer.token, problem);
    } catch (error) {
      problem.textContent = errorText(error);
    }
  });
  return form;
}

// Keep ``value`` as this tab's token if the API takes it, and open the plans.
async function enter(app, value, problem) {
  setToken(value);
  try {
    await call("GET", "/v1/plans");
    // a new hash routes (hashchange); the same one is routed here
    if (location.hash === "#/plans") app.route();
    else location.hash = "#/plans";
  } catch (error) {
    clearToken();
    problem.textContent = errorText(error);
  }
}
