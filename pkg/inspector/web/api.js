// The runs API, relative to the page: the page is /<prefix>/inspector, the API /<prefix>/….
// The function key comes from ?code= once (then leaves the address bar) or from the key form,
// and is kept for the tab (sessionStorage); it is sent as x-functions-key.
const KEY_STORAGE = "funcgraph.inspector.key";
const API_BASE = new URL(".", location.href);
let functionKey = "";

function initKey() {
  const url = new URL(location.href);
  const names = [...url.searchParams.keys()].filter((k) => k.toLowerCase() === "code");
  if (names.length > 0) {
    functionKey = url.searchParams.get(names[0]) || "";
    names.forEach((k) => url.searchParams.delete(k));
    history.replaceState(null, "", url.pathname + url.search + url.hash);
    saveKey(functionKey);
  } else {
    try { functionKey = sessionStorage.getItem(KEY_STORAGE) || ""; } catch (e) { functionKey = ""; }
  }
}

function saveKey(key) {
  functionKey = key;
  try { sessionStorage.setItem(KEY_STORAGE, key); } catch (e) { /* private mode: the key lasts until reload */ }
}

// ApiError carries the API's answer: the status and its "error" member, word for word.
class ApiError extends Error {
  constructor(status, body, text) {
    super(apiMessage(status, body, text));
    this.status = status;
    this.body = body;
  }
}

function apiMessage(status, body, text) {
  if (body && typeof body === "object" && typeof body.error === "string") {
    let msg = `HTTP ${status}: ${body.error}`;
    if (Array.isArray(body.details)) {
      msg += " (" + body.details.map((d) => `${(d.loc || []).join(".") || "body"}: ${d.msg}`).join("; ") + ")";
    }
    if (body.runtime_status) msg += ` [runtime_status ${body.runtime_status}]`;
    return msg;
  }
  if (status === 401) return "HTTP 401: the function key is missing or was refused (the host answers 401 with no body). Type the key in the Function key field.";
  if (status === 403) return "HTTP 403: forbidden.";
  return `HTTP ${status}: ${text ? text.slice(0, 300) : "no body"}`;
}

// apiCall sends method path (relative to the API base) and returns the parsed JSON body, or
// throws an ApiError for any non-2xx answer, or an Error when the network failed.
async function apiCall(method, path, options = {}) {
  const url = new URL(path, API_BASE);
  for (const [k, v] of Object.entries(options.query || {})) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const headers = { Accept: "application/json" };
  if (functionKey) headers["x-functions-key"] = functionKey;
  let body;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = options.body;
  }
  let res;
  try {
    res = await fetch(url, { method, headers, body, cache: "no-store", credentials: "same-origin", signal: options.signal });
  } catch (e) {
    if (options.signal && options.signal.aborted) throw e; // the view that asked is gone
    throw new Error(`network error calling ${method} ${url.pathname}: ${e.message}`);
  }
  const text = await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch (e) { parsed = null; }
  if (!res.ok) throw new ApiError(res.status, parsed, text);
  return parsed;
}

const enc = encodeURIComponent;

const runsApi = {
  listRuns: (query) => apiCall("GET", "runs", { query }),
  getRun: (id) => apiCall("GET", `runs/${enc(id)}`),
  history: (id, token) => apiCall("GET", `runs/${enc(id)}/history`, { query: { limit: 1000, continuation_token: token } }),
  // feed answers the run's history after seq `after` of `run` (an earlier answer's run; ""
  // for the run the id holds), and its live channel from `liveAfter`, waiting up to `wait`
  // seconds for more.
  feed: (id, after, run, wait, signal, liveAfter) => apiCall("GET", `runs/${enc(id)}/feed`,
    { query: { after, run, wait, live: true, live_after: liveAfter || 0 }, signal }),
  startRun: (graph, body) => apiCall("POST", `graphs/${enc(graph)}/runs`, { body }),
  sendEvent: (id, event, body) => apiCall("POST", `runs/${enc(id)}/events/${enc(event)}`, { body }),
  cancel: (id, reason) => apiCall("POST", `runs/${enc(id)}/cancel`, { body: JSON.stringify(reason === "" ? {} : { reason }) }),
  purge: (id) => apiCall("DELETE", `runs/${enc(id)}`),
  // rewind continues a Failed run from the step that failed: 202 with its status; 409 for a
  // run that is not Failed, 404 for an unknown one.
  rewind: (id, reason) => apiCall("POST", `runs/${enc(id)}/rewind`, { body: JSON.stringify(reason === "" ? {} : { reason }) }),
  graphs: () => apiCall("GET", "graphs"),
  manifest: (graph, hash) => apiCall("GET", `graphs/${enc(graph)}/manifest`, { query: { graph_hash: hash } }),
  versions: (graph) => apiCall("GET", `graphs/${enc(graph)}/versions`),
};

// feedEvent is a feed item in the shape of a history event (its seq as sequence).
function feedEvent(item) {
  return { sequence: item.seq, type: item.type, name: item.name, node: item.node, timestamp: item.timestamp, data: item.data };
}

// DOM helpers. el("p", {class: "x"}, "text", child) builds an element; strings become text
// nodes, never HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

function showError(err) {
  const box = document.getElementById("error");
  if (!err) { box.hidden = true; box.textContent = ""; return; }
  box.textContent = err.message || String(err);
  box.hidden = false;
}

function notice(text) { document.getElementById("notice").textContent = text; }

const FINISHED = new Set(["Completed", "Failed", "Terminated"]);
const STATUS_MARK = { Pending: "◌", Running: "▶", Completed: "✓", Failed: "✗", Terminated: "■" };

// statusBadge is a run's status pill. A Running run that waits for an event says so instead,
// "‖ Waiting for approval" (‖ marks a waiting node in the graph too); it keeps the class of
// its status, so it still counts as in flight.
function statusBadge(status, waitingFor) {
  const waiting = status === "Running" && waitingFor ? waitingFor : "";
  return el("span", {
    class: `status status-${String(status).toLowerCase()}` + (waiting ? " status-waiting" : ""),
    title: waiting ? `Running, waiting for the event '${waiting}'` : null,
  }, el("span", { "aria-hidden": "true" }, waiting ? "‖" : STATUS_MARK[status] || "?"), " ", waiting ? `Waiting for ${waiting}` : status);
}

function fmtTime(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toISOString().replace("T", " ").replace(/\.(\d{3})\d*Z$/, ".$1Z");
}

function fmtDuration(ms) {
  if (!(ms >= 0)) return "";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

function pretty(v) { return JSON.stringify(v, null, 2); }
