// The simulator's report (`tiresias sim|compare --report FILE`): one self-contained HTML file
// whose data (a JSON block written by src/sim/report_data.cc) is drawn here with uPlot. This
// file and uPlot are bundled at build time (web/build.mjs) and inlined by the CLI, so the
// report opens offline.
import uPlot from "uplot";

const data = JSON.parse(document.getElementById("report-data").textContent);
const colors = ["#3366cc", "#dc3912", "#ff9900", "#109618", "#990099", "#0099c6", "#dd4477", "#66aa00"];
const $ = (id) => document.getElementById(id);
const fmt = (x, d = 1) => (x == null ? "-" : Number(x).toLocaleString("en", { maximumFractionDigits: d }));

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  Object.assign(e, attrs);
  for (const k of kids) e.append(k);
  return e;
}

function table(head, rows) {
  return el("table", {},
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", { textContent: h })))),
    el("tbody", {}, ...rows.map((r) => el("tr", {}, ...r.map((c) => el("td", { textContent: c }))))));
}

function chart(section, title, xLabel, yLabel, xs, series, opts = {}) {
  const box = el("div", { className: "chart" }, el("h3", { textContent: title }));
  $(section).append(box);
  const width = Math.min(920, document.body.clientWidth - 40);
  // `vals` are the data (uPlot's own `values` option means legend formatting).
  new uPlot({
    width, height: 300, series: [{ label: xLabel }, ...series.map(({ vals, ...s }) => s)],
    scales: { x: { time: false, distr: opts.logX ? 3 : 1 } },
    axes: [{ label: xLabel }, { label: yLabel }],
    legend: { live: true },
  }, [xs, ...series.map((s) => s.vals)], box);
}

// CDFs of different runs have different x points: one union x axis, each run stepping.
function cdfChart(section, title, xLabel, key) {
  const xs = [...new Set(data.runs.flatMap((r) => r[key].x))].sort((a, b) => a - b);
  const series = data.runs.map((r, i) => {
    const { x, y } = r[key];
    let k = 0;
    const values = xs.map((v) => {
      while (k < x.length && x[k] <= v) k++;
      return k === 0 ? 0 : y[k - 1];
    });
    return { label: r.label, stroke: colors[i % colors.length], vals: values };
  });
  chart(section, title, xLabel, "fraction of jobs", xs.map((v) => Math.max(v, 1)), series, { logX: true });
}

function timeChart(section, title, yLabel, pick) {
  const xs = [...new Set(data.runs.flatMap((r) => r.series.t_days))].sort((a, b) => a - b);
  const series = data.runs.map((r, i) => {
    const at = new Map(r.series.t_days.map((t, k) => [t, pick(r.series, k)]));
    return { label: r.label, stroke: colors[i % colors.length], vals: xs.map((t) => at.get(t) ?? null), spanGaps: true };
  });
  chart(section, title, "simulated day", yLabel, xs, series);
}

function render() {
  $("title").textContent = data.title;
  $("subtitle").textContent = data.subtitle;
  const cols = ["run", "jobs", "mean JCT (s)", "median", "p95", "p99", "mean queueing (s)", "p95 queueing",
                "makespan (h)", "GPU util", "preemptions"];
  $("summary").append(table(cols, data.runs.map((r) => {
    const m = r.summary, j = m.jct_seconds, q = m.queueing_delay_seconds;
    return [r.label, fmt(m.finished, 0), fmt(j.mean), fmt(j.median), fmt(j.p95), fmt(j.p99), fmt(q.mean),
            fmt(q.p95), fmt(m.makespan_seconds / 3600, 2), fmt(100 * m.gpu_utilisation) + "%", fmt(m.preemptions, 0)];
  })));
  cdfChart("cdfs", "JCT, CDF", "JCT (s, log)", "jct_cdf");
  cdfChart("cdfs", "Queueing delay, CDF", "queueing delay (s, log)", "queueing_cdf");
  const sizes = data.size_classes;
  $("sizes").append(table(["run", ...sizes.map((s) => "mean JCT, " + s + " (s)")],
    data.runs.map((r) => [r.label, ...r.jct_by_size.map((v) => fmt(v))])));
  if (data.runs.every((r) => r.series.t_days.length > 0)) {
    timeChart("time", "GPU utilisation", "busy GPUs / all", (s, k) => s.busy[k] / data.total_gpus);
    timeChart("time", "Waiting jobs", "jobs waiting", (s, k) => s.waiting[k]);
    timeChart("time", "Running jobs", "jobs running", (s, k) => s.running[k]);
    timeChart("time", "Preemptions per hour", "preemptions / h", (s, k) => s.preemptions_per_hour[k]);
  }
  document.body.dataset.rendered = "yes";
}

render();
