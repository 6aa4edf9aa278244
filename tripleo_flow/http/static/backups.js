// The Backups page: make an encrypted backup of everything tripleo-flow keeps (as
// `backup create --passphrase-file`), list the backups kept on the server with a
// download of each (its encrypted bytes) and a delete, and restore an archive from
// this computer (as `backup restore [--force]`): uploaded, then restored with its
// passphrase. Refusals are the API's words, as the CLI's. A passphrase goes only in
// a JSON body, and its field is emptied once sent.
import { call } from "/gui/api.js";

const enc = encodeURIComponent;

// ui: the page's helpers (h, show, errorText, say, download).
export async function backupsView(ui) {
  const { h } = ui;
  const list = h("section", { id: "backup-list", "aria-labelledby": "backups-h" });
  const refresh = () => listSection(ui, list).catch((error) => {
    list.replaceChildren(h("h2", { id: "backups-h", text: "Backups" }),
      h("p", { class: "error", role: "alert", text: ui.errorText(error) }));
  });
  ui.show("Backups", createSection(ui, refresh), list, restoreSection(ui, refresh));
  await refresh();
}

function sizeText(bytes) {
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
  if (bytes >= 1 << 10) return `${(bytes / (1 << 10)).toFixed(1)} KiB`;
  return `${bytes} B`;
}

function createSection(ui, refresh) {
  const { h } = ui;
  const passphrase = h("input", { type: "password", id: "backup-passphrase",
                                  autocomplete: "new-password", size: 30 });
  const problem = h("p", { class: "error", role: "alert", id: "backup-problem" });
  const done = h("p", { id: "backup-made", role: "status" });
  const button = h("button", { type: "submit", class: "primary", text: "Back up" });
  const form = h("form", { id: "backup-form" },
    h("div", { class: "form-row" },
      h("label", { for: "backup-passphrase", text: "Passphrase" }), passphrase, button),
    h("p", { class: "muted", text: "A backup holds every password of the cloud: it is "
      + "encrypted with this passphrase, which the server does not keep. Without it the "
      + "backup cannot be restored." }),
    problem, done);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    done.textContent = "";
    button.disabled = true;
    const secret = passphrase.value;
    passphrase.value = "";
    try {
      const made = await call("POST", "/v1/backups", { json: { passphrase: secret } });
      done.textContent = `Backup ${made.id} made: ${made.files} files, plans `
        + `${(made.plans || []).join(", ") || "none"}, ${made.executions} executions.`;
      ui.say("Backup made");
      await refresh();
    } catch (error) {
      problem.textContent = ui.errorText(error);
    } finally {
      button.disabled = false;
    }
  });
  return h("section", { "aria-labelledby": "backup-create-h" },
    h("h2", { id: "backup-create-h", text: "Make a backup" }), form);
}

async function listSection(ui, box) {
  const { h } = ui;
  const backups = await call("GET", "/v1/backups");
  const problem = h("p", { class: "error", role: "alert", id: "backup-list-problem" });
  const rows = backups.map((b) => h("tr", { "data-backup": b.id },
    h("td", { text: b.created }), h("td", { class: "mono", text: b.id }),
    h("td", { text: sizeText(b.size) }), h("td", { text: b.encrypted ? "yes" : "no" }),
    h("td", {},
      h("a", { href: `/v1/backups/${enc(b.id)}`, text: "Download",
               "aria-label": `Download backup ${b.id}`,
        onclick: (event) => {
          event.preventDefault();
          problem.textContent = "";
          ui.download(`/v1/backups/${enc(b.id)}`, `tripleo-flow-backup-${b.id}.tfbackup`)
            .catch((error) => { problem.textContent = ui.errorText(error); });
        } }), " ",
      h("button", { type: "button", class: "danger", text: "Delete",
                    "aria-label": `Delete backup ${b.id}`,
        onclick: async () => {
          if (!confirm(`Delete backup ${b.id}?`)) return;
          problem.textContent = "";
          try {
            await call("DELETE", `/v1/backups/${enc(b.id)}`);
            ui.say(`Backup ${b.id} deleted`);
            await listSection(ui, box);
          } catch (error) {
            problem.textContent = ui.errorText(error);
          }
        } }))));
  box.replaceChildren(h("h2", { id: "backups-h", text: "Backups" }),
    rows.length ? h("div", { class: "table-scroll" }, h("table", { id: "backups" },
      h("thead", {}, h("tr", {}, ["Created (UTC)", "Id", "Size", "Encrypted", ""]
        .map((t) => h("th", { text: t })))), h("tbody", {}, rows)))
      : h("p", { class: "muted", id: "no-backups", text: "No backups yet." }),
    problem);
}

// Label of the checkbox that replaces the server's state (what the API calls force).
const REPLACE = "replace the state this server holds (it is kept aside)";

// A restore's refusal in this page's terms: the API names its "force": true, here it
// is the replace checkbox.
function restoreRefusal(ui, error) {
  if (error && error.reason === "restore-would-replace") {
    const held = (error.details.holding || []).join(", ") || "state";
    return `This server already holds ${held}; restoring would replace it. Tick `
      + `"${REPLACE}" and restore again to replace it, keeping it aside on the server.`;
  }
  return ui.errorText(error);
}

function restoreSection(ui, refresh) {
  const { h } = ui;
  const file = h("input", { type: "file", id: "restore-file" });
  const passphrase = h("input", { type: "password", id: "restore-passphrase",
                                  autocomplete: "off", size: 30 });
  const force = h("input", { type: "checkbox", id: "restore-force" });
  const problem = h("p", { class: "error", role: "alert", id: "restore-problem" });
  const done = h("div", { id: "restore-done", role: "status" });
  const button = h("button", { type: "submit", class: "danger", text: "Restore" });
  const form = h("form", { id: "restore-form" },
    h("div", { class: "form-row" }, h("label", { for: "restore-file", text: "Archive" }), file),
    h("div", { class: "form-row" },
      h("label", { for: "restore-passphrase", text: "Its passphrase" }), passphrase),
    h("div", { class: "form-row" }, h("label", {}, force, ` ${REPLACE}`)),
    h("p", { class: "actions" }, button),
    problem, done);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    problem.textContent = "";
    done.replaceChildren();
    const archive = file.files[0];
    if (!archive) { problem.textContent = "Choose the backup archive to restore."; return; }
    const secret = passphrase.value;
    passphrase.value = "";
    button.disabled = true;
    let upload = null;
    try {
      upload = await call("POST", "/v1/uploads", { body: archive,
                                                   type: "application/octet-stream" });
      const restored = await call("POST", "/v1/backups/restore", { json: {
        upload: upload.id, passphrase: secret, force: force.checked } });
      upload = null;  // the server deleted it
      done.replaceChildren(h("p", { text: `Restored ${restored.files} files from the backup `
        + `of ${restored.created_at} (tripleo-flow ${restored.tripleo_flow_version}): plans `
        + `${(restored.plans || []).join(", ") || "none"}, ${restored.executions} executions.` }),
        restored.previous ? h("p", { class: "muted",
          text: `The state replaced is kept aside on the server: ${restored.previous}` }) : null);
      ui.say("Backup restored");
      await refresh();
    } catch (error) {
      problem.textContent = restoreRefusal(ui, error);
    } finally {
      button.disabled = false;
      if (upload) call("DELETE", `/v1/uploads/${enc(upload.id)}`).catch(() => {});
    }
  });
  return h("section", { "aria-labelledby": "restore-h" },
    h("h2", { id: "restore-h", text: "Restore a backup" }),
    h("p", { class: "muted", text: "The archive is checked whole before anything changes: a "
      + "wrong passphrase or a damaged archive is refused and the server is left as it was. "
      + "Refused while a workflow runs." }),
    form);
}
