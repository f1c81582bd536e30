// The router: #/ (runs, with filters as query), #/run/<id>, #/graphs. Each view gets a token
// that dies when the user navigates, so its timers and late answers are dropped and its
// waiting requests (signal) aborted.
let currentView = null;

function newView() {
  if (currentView) currentView.close();
  const timers = new Set();
  const aborter = new AbortController();
  let alive = true;
  const view = {
    live: () => alive,
    signal: aborter.signal,
    timer: (fn, ms) => { const t = setTimeout(() => { timers.delete(t); if (alive) fn(); }, ms); timers.add(t); },
    close: () => { alive = false; timers.forEach(clearTimeout); aborter.abort(); },
  };
  currentView = view;
  return view;
}

async function route() {
  const view = newView();
  const hash = location.hash.replace(/^#/, "") || "/";
  const [path, query] = hash.split("?");
  document.getElementById("nav-runs").toggleAttribute("aria-current", !path.startsWith("/graphs"));
  document.getElementById("nav-graphs").toggleAttribute("aria-current", path.startsWith("/graphs"));
  showError(null);
  try {
    if (path.startsWith("/run/")) {
      const id = decodeURIComponent(path.slice("/run/".length));
      document.title = `Run ${id} — funcgraph run inspector`;
      await showRun(id, view);
    } else if (path.startsWith("/graphs")) {
      document.title = "Graph versions — funcgraph run inspector";
      await showGraphs(view);
    } else {
      document.title = "Runs — funcgraph run inspector";
      await showRuns(new URLSearchParams(query || ""), view);
    }
  } catch (e) {
    if (view.live()) showError(e);
  }
}

function keyState() {
  document.getElementById("key-state").textContent = functionKey ? "key set for this tab" : "no key";
}

function init() {
  initKey();
  keyState();
  document.getElementById("key-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = document.getElementById("key-input");
    saveKey(input.value.trim());
    input.value = "";
    graphCache = null;
    keyState();
    notice("Function key updated.");
    route();
  });
  window.addEventListener("hashchange", () => { route(); document.getElementById("main").focus({ preventScroll: true }); });
  route();
}

init();
