// The runs list (newest first, the runs API's filters, paged with the continuation token,
// refreshed while runs are in flight), the start form and the graph versions page.
const STATUSES = ["Pending", "Running", "Completed", "Failed", "Terminated"];
let graphCache = null;

// waitCache holds, per run, the event a Running run of the list waits for ("" for none) and
// the last_updated_at it was read at. The list's rows carry no custom_status, so a Running
// run's is read with GET runs/{id}; every step of a run changes its last_updated_at, so the
// answer holds until that changes, and a run that waits costs one read, not one per refresh.
const waitCache = new Map();
const WAIT_CACHE_MAX = 500;

// waitingFor returns, for the Running runs among runs, the event each waits for.
async function waitingFor(runs) {
  const out = new Map();
  await Promise.all(runs.filter((r) => r.runtime_status === "Running").map(async (r) => {
    const hit = waitCache.get(r.instance_id);
    if (hit && hit.stamp === r.last_updated_at) { out.set(r.instance_id, hit.event); return; }
    let run;
    try { run = await runsApi.getRun(r.instance_id); } catch (e) { return; } // gone since the list: its status alone
    const event = (run.custom_status && run.custom_status.waiting_for_event) || "";
    waitCache.delete(r.instance_id);
    waitCache.set(r.instance_id, { stamp: r.last_updated_at, event });
    if (waitCache.size > WAIT_CACHE_MAX) waitCache.delete(waitCache.keys().next().value);
    out.set(r.instance_id, event);
  }));
  return out;
}

async function graphNames() {
  if (!graphCache) graphCache = (await runsApi.graphs()).graphs;
  return graphCache;
}

function localToRFC3339(v) {
  if (!v) return "";
  const d = new Date(v);
  return isNaN(d) ? v : d.toISOString();
}

async function showRuns(params, view) {
  const main = document.getElementById("main");
  const filters = {
    graph_name: params.get("graph_name") || "", status: params.get("status") || "", graph_hash: params.get("graph_hash") || "",
    created_after: params.get("created_after") || "", created_before: params.get("created_before") || "",
  };
  let graphs = [];
  try { graphs = await graphNames(); } catch (e) { showError(e); }
  if (!view.live()) return;
  const option = (value, label, sel) => el("option", { value, selected: sel }, label);
  const form = el("form", { class: "filters", "aria-label": "Filter runs", onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    const fd = new FormData(form);
    for (const k of ["graph_name", "status", "graph_hash"]) if (fd.get(k)) q.set(k, fd.get(k));
    for (const k of ["created_after", "created_before"]) if (fd.get(k)) q.set(k, localToRFC3339(fd.get(k)));
    location.hash = "#/?" + q.toString();
  } },
  el("label", {}, "Graph ", el("select", { name: "graph_name" }, option("", "any", false), graphs.map((g) => option(g.graph_name, g.graph_name, g.graph_name === filters.graph_name)))),
  el("label", {}, "Status ", el("select", { name: "status" }, option("", "any", false), STATUSES.map((s) => option(s, s, s === filters.status)))),
  el("label", {}, "Created after ", el("input", { type: "datetime-local", name: "created_after", step: "1" })),
  el("label", {}, "Created before ", el("input", { type: "datetime-local", name: "created_before", step: "1" })),
  filters.graph_hash ? el("label", {}, "Graph hash ", el("input", { name: "graph_hash", value: filters.graph_hash, size: 16 })) : null,
  el("button", { type: "submit" }, "Apply filters"),
  el("a", { href: "#/" }, "Clear"));
  const active = Object.entries(filters).filter(([, v]) => v).map(([k, v]) => `${k}=${v}`);
  const body = el("tbody", {});
  const table = el("table", { class: "runs" },
    el("caption", {}, "Runs, newest first", active.length ? ` (${active.join(", ")})` : ""),
    el("thead", {}, el("tr", {}, ["Run", "Graph", "Version", "Status", "Created", "Last updated"].map((h) => el("th", { scope: "col" }, h)))),
    body);
  const more = el("button", { type: "button", id: "load-more", hidden: true }, "Load more runs");
  const summary = el("p", { class: "muted", id: "runs-summary" });
  main.replaceChildren(el("h1", {}, "Runs"), startForm(graphs), form, summary, el("div", { class: "table-wrap" }, table), more);

  let token = null;
  let pages = 0;
  const rowsOf = (runs, waits) => runs.map((r) => el("tr", { "data-run": r.instance_id },
    el("td", {}, el("a", { href: `#/run/${enc(r.instance_id)}` }, r.instance_id)),
    el("td", {}, r.graph_name),
    el("td", {}, el("abbr", { title: r.graph_hash }, `${r.graph_version} · ${r.graph_hash.slice(0, 8)}`)),
    el("td", {}, statusBadge(r.runtime_status, waits.get(r.instance_id))),
    el("td", {}, fmtTime(r.created_at)),
    el("td", {}, fmtTime(r.last_updated_at))));
  const load = async (append) => {
    const q = { ...filters, limit: 25 };
    if (append) q.continuation_token = token;
    const page = await runsApi.listRuns(q);
    if (!view.live()) return null;
    const waits = await waitingFor(page.runs);
    if (!view.live()) return null;
    showError(null);
    if (append) body.append(...rowsOf(page.runs, waits)); else body.replaceChildren(...rowsOf(page.runs, waits));
    token = page.continuation_token;
    pages = append ? pages + 1 : 1;
    more.hidden = !token;
    const n = body.children.length;
    const inFlight = [...body.querySelectorAll(".status-pending, .status-running")].length;
    const refreshing = inFlight ? (pages > 1 ? " (refresh paused while paging)" : " (refreshing)") : "";
    summary.textContent = `${n} run${n === 1 ? "" : "s"} shown` + (inFlight ? `, ${inFlight} in flight${refreshing}` : "") + (token ? "; more available." : ".");
    if (n === 0) body.append(el("tr", {}, el("td", { colspan: 6 }, "No runs match.")));
    return inFlight;
  };
  more.addEventListener("click", () => load(true).catch(showError));
  const refresh = async () => {
    if (pages > 1) { view.timer(refresh, 2000); return; } // the reader is paging: keep the rows
    try {
      const inFlight = await load(false);
      if (inFlight && view.live()) view.timer(refresh, 2000);
    } catch (e) {
      if (!view.live()) return;
      showError(e);
      if (!(e instanceof ApiError) || e.status >= 500) view.timer(refresh, 5000); // transient: try again
    }
  };
  await refresh();
}

function startForm(graphs) {
  const input = el("textarea", { name: "input", rows: 3, cols: 40, spellcheck: "false" }, '{"user_message": "I want a refund for invoice 42"}');
  const select = el("select", { name: "graph" }, graphs.map((g) => el("option", { value: g.graph_name }, g.graph_name)));
  const id = el("input", { name: "instance_id", placeholder: "a new id" });
  const form = el("form", { class: "start", onsubmit: async (ev) => {
    ev.preventDefault();
    const body = { input: undefined };
    try { body.input = JSON.parse(input.value || "{}"); } catch (e) { body.input = input.value; }
    if (id.value) body.instance_id = id.value;
    try {
      const res = await runsApi.startRun(select.value, JSON.stringify(body));
      showError(null);
      notice(`Run ${res.id} started.`);
      location.hash = `#/run/${enc(res.id)}`;
    } catch (e) { showError(e); }
  } },
  el("label", {}, "Graph ", select), " ",
  el("label", {}, "Instance id (optional) ", id),
  el("label", { class: "block" }, "Input (the initial state, JSON) ", input),
  el("button", { type: "submit" }, "Start run"));
  return el("details", { class: "panel" }, el("summary", {}, "Start a run"), form);
}

async function showGraphs(view) {
  const main = document.getElementById("main");
  main.replaceChildren(el("h1", {}, "Graph versions"), el("p", { class: "muted" },
    "Each graph's versions (hashes) and their unfinished runs: an old version can leave the deployment once it has none."));
  const graphs = await graphNames();
  for (const g of graphs) {
    let v;
    try { v = await runsApi.versions(g.graph_name); } catch (e) { v = { versions: [], error: e.message }; }
    if (!view.live()) return;
    const rows = v.versions.map((x) => el("tr", {},
      el("td", {}, el("code", {}, x.graph_hash)), el("td", {}, x.graph_version),
      el("td", {}, [x.registered ? "registered" : "not registered here", x.latest ? "latest" : ""].filter(Boolean).join(", ")),
      el("td", {}, x.unfinished_runs > 0
        ? el("a", { href: `#/?graph_name=${enc(g.graph_name)}&graph_hash=${x.graph_hash}&status=Running` }, `${x.unfinished_runs} unfinished`)
        : "0 unfinished")));
    main.append(el("section", { class: "panel" }, el("h2", {}, g.graph_name),
      v.error ? el("p", { class: "error-inline" }, v.error) : null,
      el("div", { class: "table-wrap" }, el("table", {},
        el("thead", {}, el("tr", {}, ["Hash", "Version", "Registration", "Unfinished runs"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, rows)))));
  }
}
