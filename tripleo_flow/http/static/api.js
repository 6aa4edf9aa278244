// The API client of the GUI: the token lives in sessionStorage and goes in the
// X-Auth-Token header, never in a URL.
const KEY = "tripleo-flow-token";

export function token() { return sessionStorage.getItem(KEY); }
export function setToken(value) { sessionStorage.setItem(KEY, value); }
export function clearToken() { sessionStorage.removeItem(KEY); }

// reason and details: set on the errors a page words in its own terms (the API's
// machine-readable "reason", e.g. "restore-would-replace", and what it needs).
export class ApiError extends Error {
  constructor(status, kind, message, reason = null, details = {}) {
    super(message);
    this.status = status; this.kind = kind; this.reason = reason; this.details = details;
  }
}

async function failure(response) {
  let kind = "error", message = `HTTP ${response.status}`, reason = null, details = {};
  try {
    const body = await response.json();
    if (body && body.error) {
      ({ kind, message } = body.error);
      reason = body.error.reason || null;
      details = body.error.details || {};
    }
  } catch (e) { /* not JSON */ }
  if (response.status === 401) {
    clearToken();
    window.dispatchEvent(new CustomEvent("unauthorized", { detail: message }));
  }
  return new ApiError(response.status, kind, message, reason, details);
}

// A request to the API; the parsed JSON answer (null when empty). Options:
// json (a body to send as JSON), body + type (raw), raw (return the Response).
export async function call(method, path, options = {}) {
  const headers = { "X-Auth-Token": token() || "" };
  let body;
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.json);
  } else if (options.body !== undefined) {
    headers["Content-Type"] = options.type || "application/octet-stream";
    body = options.body;
  }
  const response = await fetch(path, { method, headers, body, signal: options.signal,
                                       cache: "no-store", credentials: "omit" });
  if (!response.ok) throw await failure(response);
  if (options.raw) return response;
  if (response.status === 204) return null;
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

// Follow GET path as server-sent events (fetch, so the token stays in a header):
// onEvent(name, data) for each message until the stream ends or signal aborts.
export async function events(path, onEvent, signal) {
  const response = await call("GET", path, { raw: true, signal });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}
