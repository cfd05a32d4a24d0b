// The dashboard of tiresias serve: a single page that polls the API every two seconds and
// shows the cluster (nodes x GPUs coloured by job), the queues (each job's attained service,
// wait and why it waits), the virtual clusters (quota, GPUs held and borrowed, waiting work),
// a job's page (timeline, explain, live log) and charts (JCT and
// queueing CDFs, GPU use, queue lengths, preemptions per hour). It signs in with a session or
// API token kept in sessionStorage (from `#token=` in the URL, or the sign-in form).
import uPlot from "uplot";

const POLL_MS = 2000;
const CHART_JOBS = 5000;  // the jobs the CDF charts are drawn from, latest first
const LOG_KEEP = 256 * 1024;  // characters of a job's log kept on its page (the newest)
const state = { token: null, view: "cluster", job: null, logOffset: null, logFile: null, charts: {} };

// ---- API ----------------------------------------------------------------------------------
async function api(path) {
  const r = await fetch(path, { headers: { Authorization: "Bearer " + state.token } });
  if (r.status === 401) {  // not known (no token, or one not valid): sign in again; 403 is known, not allowed
    const body = await r.json().catch(() => ({}));
    throw Object.assign(new Error(body.error || "not signed in"), { auth: true });
  }
  if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.statusText);
  return r;
}
const json = async (path) => (await api(path)).json();

// ---- helpers ------------------------------------------------------------------------------
const $ = (id) => document.getElementById(id);
function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else if (k === "style") e.style.cssText = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  // Each text in a <bdi>: a job's name or user with a right-to-left override cannot reorder
  // what follows it on the line.
  for (const c of children) {
    if (c instanceof Node) e.append(c);
    else e.append(Object.assign(document.createElement("bdi"), { textContent: String(c) }));
  }
  return e;
}
function jobColor(id) {
  const h = (id * 137.508) % 360;  // golden angle: neighbouring ids far apart
  return `hsl(${h.toFixed(0)}, 55%, 45%)`;
}
function human(s) {
  if (s == null || s < 0) return "-";
  s = Math.round(s);
  if (s < 60) return s + "s";
  if (s < 3600) return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s";
  return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
}
function gpuHours(gpuSeconds) {
  return (gpuSeconds / 3600).toFixed(gpuSeconds < 360 ? 3 : 1);
}
function goJob(id) {
  location.hash = "#job/" + id;
}

// ---- views --------------------------------------------------------------------------------
async function renderCluster() {
  const nodes = await json("/v1/nodes");
  const root = $("view-cluster");
  root.replaceChildren(el("h2", {}, `Cluster (${nodes.policy}, ${nodes.placement} placement)`));
  for (const n of nodes.nodes) {
    const title = el("h3", {}, `${n.name}: ${n.gpus_busy} of ${n.gpus_total} GPUs busy`);
    if (n.emulated) title.append(el("span", { class: "badge", "data-test": "emulated" }, "EMULATED"));
    const gpus = el("div", { class: "gpus" });
    for (const g of n.gpus) {
      const busy = g.job != null;
      const cell = el(
        "div",
        {
          class: "gpu" + (busy ? " busy" : ""),
          "data-gpu": g.index,
          style: busy ? `background:${jobColor(g.job)}` : "",
          title: busy ? gpuJob(g) : "free",
        },
        el("strong", {}, "GPU " + g.index),
        busy ? gpuJob(g) : "free",
      );
      if (busy) cell.addEventListener("click", () => goJob(g.job));
      gpus.append(cell);
    }
    root.append(el("div", { class: "node" }, title, gpus));
  }
}

// Who holds a GPU, as its user names the job (an array's task as ARRAY_INDEX).
function gpuJob(g) {
  return `job ${g.ref ?? g.job}${g.starting ? " (starting)" : g.stopping ? " (stopping)" : ""}`;
}

async function renderQueues() {
  const [q, pending] = await Promise.all([json("/v1/queues"), json("/v1/jobs?state=pending")]);
  const root = $("view-queues");
  const cols = el("div", { class: "queues" });
  // Jobs that wait but are in no queue: held, behind a dependency or their array's limit
  // (a user whose job was held could not find it here).
  const queued = new Set(q.queues.flatMap((x) => x.jobs.map((j) => j.id)));
  const idle = pending.filter((j) => !queued.has(j.id));
  if (idle.length) {
    q.queues.push({ name: "not eligible", jobs: idle.map((j) => ({ ...j,
      reason: j.reason + (j.message ? ": " + j.message : "") })) });
  }
  for (const queue of q.queues) {
    const col = el("div", { class: "queue", "data-queue": queue.name },
                   el("h3", {}, `${queue.name} (${queue.jobs.length})`));
    for (const j of queue.jobs) {
      const waiting = j.state === "pending";
      const next = j.next_transition_in_s != null
        ? (waiting ? "promotion in " : "demotion in ") + human(j.next_transition_in_s) : "";
      col.append(el("div", { class: "job" + (waiting ? " waiting" : ""), "data-job": j.id,
                            onclick: () => goJob(j.id) },
        el("div", {}, el("strong", {}, `#${j.ref ?? j.id} ${j.name}`), ` ${j.user}${j.vc ? " (" + j.vc + ")" : ""}, ${j.gpus} GPU, ${j.state}`),
        el("div", {}, `attained ${gpuHours(j.attained_gpu_s)} GPU-h, waited ${human(j.wait_s)}${next ? ", " + next : ""}`),
        el("div", { class: "reason", "data-reason": "" }, j.reason)));
    }
    cols.append(col);
  }
  root.replaceChildren(el("h2", {}, `Queues (${q.policy})`), cols);
}

async function renderVcs() {
  const t = await json("/v1/vcs");
  const root = $("view-vcs");
  if (!t.vcs.length) {
    root.replaceChildren(el("h2", {}, "Virtual clusters"),
      el("p", {}, "No tenants: one cluster, no quotas (serve --tenants FILE declares them)."));
    return;
  }
  const how = (t.borrow ? "unused quota is lent and reclaimed by preemption" : "fixed quotas, nothing lent") +
    (t.half_life_hours > 0 ? `; borrowers by usage with a ${t.half_life_hours} h half-life` : "");
  // A bar per VC on the cluster's scale: its quota outlined, what it holds filled, the part
  // beyond its quota (borrowed) hatched.
  const scale = Math.max(t.gpus, ...t.vcs.map((v) => (v.running_gpus ?? 0) + (v.waiting_gpus ?? 0)), 1);
  const pct = (n) => `${(100 * n / scale).toFixed(2)}%`;
  const rows = t.vcs.map((v) => {
    const held = v.running_gpus ?? 0, borrowed = v.borrowed_gpus ?? 0;
    const bar = el("div", { class: "vcbar", title: `${held} of ${v.quota} GPUs, ${borrowed} borrowed` },
      el("div", { class: "quota", style: `width:${pct(v.quota)}` }),
      el("div", { class: "held", style: `width:${pct(held - borrowed)}` }),
      el("div", { class: "borrowed", style: `left:${pct(held - borrowed)};width:${pct(borrowed)}` }));
    return el("tr", { "data-vc": v.name },
      el("th", {}, v.name + (v.name === t.default_vc ? " (default)" : "")),
      el("td", { "data-field": "quota" }, v.quota), el("td", { "data-field": "running" }, held),
      el("td", { "data-field": "borrowed" }, borrowed),
      el("td", { "data-field": "waiting" }, `${v.waiting_jobs ?? 0} jobs, ${v.waiting_gpus ?? 0} GPUs`),
      el("td", {}, (v.usage_gpu_hours ?? 0).toFixed(2)), el("td", {}, bar),
      el("td", {}, (v.users || []).join(", ")));
  });
  root.replaceChildren(el("h2", {}, `Virtual clusters (${t.gpus} GPUs; ${how})`),
    el("table", { class: "vcs" }, el("tr", {}, ...["VC", "quota", "running", "borrowed", "waiting",
      "usage GPU-h", "GPUs held against quota", "users"].map((h) => el("th", {}, h))), ...rows));
}

async function renderEvents() {
  // The newest 200 (limit= with after= gave the oldest after a point, which crept forward)
  const ev = await json("/v1/events?latest=200");
  const rows = ev.slice().reverse().map((e) => el("tr", {},
    el("td", {}, new Date(e.time_ms).toLocaleTimeString()), el("td", {}, e.kind),
    el("td", {}, e.job == null ? "" : el("a", { href: "#job/" + e.job }, "#" + (e.ref ?? e.job))),
    el("td", {}, e.text)));
  $("view-events").replaceChildren(el("h2", {}, "Events"),
    el("table", {}, el("tr", {}, el("th", {}, "time"), el("th", {}, "kind"), el("th", {}, "job"),
                       el("th", {}, "what")), ...rows));
}

async function renderJob(arg) {  // a job's id or an array task's ref (7_2)
  const root = $("view-job");
  if (state.job !== arg) {  // a new job page: reset the log
    state.job = arg;
    state.logOffset = null;  // the log starts at its tail
    state.logFile = null;
    root.replaceChildren(el("h2", { id: "job-title" }, `Job ${arg}`), el("div", { id: "job-info" }),
      el("h3", {}, "Why"), el("ul", { id: "job-explain" }),
      el("h3", {}, "Timeline"), el("ul", { id: "job-timeline", class: "timeline" }),
      el("h3", {}, "Log"), el("pre", { id: "job-log", class: "log" }));
  }
  const job = await json(`/v1/jobs/${encodeURIComponent(arg)}`);
  const id = job.id;
  $("job-title").textContent = `Job ${job.ref ?? id}`;
  // The newest 1000 events (limit= gave the first); explain by its ref: an array's first task
  // has the array's id, whose explain is the array's.
  const [ev, why] = await Promise.all([json(`/v1/events?latest=1000&job=${id}`),
                                       json(`/v1/jobs/${job.ref ?? id}/explain`)]);
  $("job-info").replaceChildren(el("table", {}, ...[
    ["name", job.name], ["user", job.user], ["VC", job.vc || "-"], ["state", job.state], ["GPUs", job.gpus],
    ["queue", job.queue ?? "-"], ["attained", gpuHours(job.attained_gpu_s ?? 0) + " GPU-h"],
    ["preemptions", job.preemptions], ["attempt", job.attempt], ["message", job.message],
  ].map(([k, v]) => el("tr", {}, el("th", {}, k), el("td", {}, v ?? "-")))));
  $("job-explain").replaceChildren(...why.reasons.map((r) => el("li", {}, r)));
  $("job-timeline").replaceChildren(...ev.map((e) => el("li", { "data-kind": e.kind },
    `${new Date(e.time_ms).toLocaleTimeString()} ${e.kind}: ${e.text}`)));
  try {  // the log follows live from its last lines; only the owner and admins may read it
    const file = state.logFile ? `&log_file=${state.logFile}` : "";  // rotated: read to its end
    const at = state.logOffset == null ? "tail_lines=200" : `offset=${state.logOffset}`;
    const r = await api(`/v1/jobs/${id}/logs?${at}${file}`);
    const text = await r.text();
    state.logOffset = Number(r.headers.get("X-Next-Offset") ?? state.logOffset ?? 0);
    state.logFile = r.headers.get("X-Log-File") || state.logFile;
    const pre = $("job-log");
    if (text) pre.append(text);
    if (text && pre.textContent.length > LOG_KEEP) {  // a bounded page: the newest output
      pre.textContent = "(earlier output not shown: `tiresias logs " + (job.ref ?? id) +
        "` has it all)\n" + pre.textContent.slice(-LOG_KEEP);
    }
  } catch (e) {
    $("job-log").textContent = e.message;
  }
}

function cdf(values) {
  const xs = values.filter((v) => v >= 0).sort((a, b) => a - b);
  return [xs, xs.map((_, i) => (i + 1) / xs.length)];
}
function plot(key, target, series, data, opts = {}) {
  const width = Math.max(300, $(target).clientWidth || 500);
  if (state.charts[key]) state.charts[key].destroy();
  state.charts[key] = new uPlot(
    { width, height: 220, series: [{}, ...series], scales: { x: { time: opts.time ?? false } },
      axes: [{ label: opts.x ?? "" }, { label: opts.y ?? "" }] },
    data, $(target));
}

async function renderCharts() {
  // The latest jobs only: a serve keeps every job it ran, and this view is polled.
  const [jobs, stats] = await Promise.all([json(`/v1/jobs?newest=1&limit=${CHART_JOBS}`),
                                           json("/v1/stats")]);
  // The jobs tiresias_job_completion_seconds counts: every end but a cancel.
  const done = jobs.filter((j) => ["finished", "failed", "timeout"].includes(j.state));
  plot("jct", "chart-jct", [{ label: "fraction of jobs", stroke: "#3366cc" }],
       cdf(done.map((j) => (j.end_ms - j.submitted_at_ms) / 1000)), { x: "JCT (s)" });
  plot("wait", "chart-wait", [{ label: "fraction of jobs", stroke: "#cc6633" }],
       cdf(jobs.filter((j) => j.first_start_ms != null)
           .map((j) => (j.first_start_ms - j.submitted_at_ms) / 1000)), { x: "queueing delay (s)" });
  const s = stats.samples;
  const t = s.map((x) => x.time_ms / 1000);
  plot("util", "chart-util", [{ label: "busy GPUs", stroke: "#2e8b57" }, { label: "fragmented", stroke: "#f0ad4e" }],
       [t, s.map((x) => x.gpus_busy), s.map((x) => x.gpus_fragmented)], { time: true });
  const k = s.reduce((m, x) => Math.max(m, x.waiting_by_queue.length), 1);
  const qs = [...Array(k).keys()];
  plot("queues", "chart-queues", qs.map((q) => ({ label: "Q" + (q + 1), stroke: jobColor(q + 3) })),
       [t, ...qs.map((q) => s.map((x) => x.waiting_by_queue[q] ?? 0))], { time: true });
  const perHour = s.map((x, i) => {
    if (i === 0) return 0;
    const dt = (x.time_ms - s[i - 1].time_ms) / 3.6e6;
    return dt > 0 ? (x.preemptions - s[i - 1].preemptions) / dt : 0;
  });
  plot("preempt", "chart-preempt", [{ label: "preemptions/hour", stroke: "#c0392b" }], [t, perHour], { time: true });
}

// ---- routing and polling ------------------------------------------------------------------
function route() {
  const h = location.hash.replace(/^#/, "");
  const params = new URLSearchParams(h.includes("=") ? h : "");
  if (params.get("token")) {  // `tiresias dashboard` opens the page with a session token
    sessionStorage.setItem("tiresias-token", params.get("token"));
    history.replaceState(null, "", location.pathname + "#cluster");
    return route();
  }
  const [view, arg] = (h && !h.includes("=") ? h : "cluster").split("/");
  state.view = view;
  state.jobArg = arg;
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.dataset.view === view);
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== "view-" + view;
  refresh();
}

async function refresh() {
  state.token = sessionStorage.getItem("tiresias-token");
  if (!state.token) {  // signed out: no view shows (a route() since may have shown one)
    if ($("login").hidden) return showLogin();
    for (const v of document.querySelectorAll(".view")) v.hidden = true;
    return;  // (the sign-in form keeps its message)
  }
  try {
    if (!state.me) {
      state.me = await json("/v1/whoami");
      $("who").textContent = `${state.me.user}${state.me.admin ? " (admin)" : ""}`;
    }
    if (state.view === "cluster") await renderCluster();
    else if (state.view === "queues") await renderQueues();
    else if (state.view === "vcs") await renderVcs();
    else if (state.view === "charts") await renderCharts();
    else if (state.view === "events") await renderEvents();
    else if (state.view === "job") await renderJob(state.jobArg);
    $("status").textContent = "updated " + new Date().toLocaleTimeString();
    $("status").className = "";
    $("login").hidden = true;
  } catch (e) {
    if (e.auth) return showLogin(e.message);
    $("status").textContent = e.message;
    $("status").className = "stale";
  }
}

function showLogin(message) {
  sessionStorage.removeItem("tiresias-token");
  state.me = null;
  $("who").textContent = "";
  $("login").hidden = false;
  for (const v of document.querySelectorAll(".view")) v.hidden = true;
  $("login-error").textContent = message || "";
}

$("login-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem("tiresias-token", $("token").value.trim());
  route();
});
window.addEventListener("hashchange", route);
setInterval(refresh, POLL_MS);
route();
