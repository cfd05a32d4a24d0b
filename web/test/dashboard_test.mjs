// The dashboard in a real browser: headless Chromium (Debian's) driven by playwright-core.
// Starts `tiresias serve` (4 emulated GPUs, dlas with an 8 GPU-s first queue and running jobs
// ahead of waiting ones inside a queue, so the picture holds still while it is checked),
// makes one job
// running, one preempted and one waiting, then checks that the GPU map, the queues and the
// waiting job's reason appear, that they update when a job ends, that a job page shows its
// timeline and log, and that the charts draw. Then /metrics: `promtool check metrics` (the
// Prometheus project's own parser and linter) accepts it, and a real Prometheus server
// scrapes it with a bearer token, and the counts it stores agree with the API's job list.
// Screenshots go to $TIRESIAS_ARTIFACTS. Exits 77 (skipped) without Chromium or Prometheus.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { ARTIFACTS, BIN, CHROMIUM, CHROMIUM_ARGS, requireTools, signedInPage, sleep, until } from "./util.mjs";

const PROMETHEUS = process.env.PROMETHEUS || "/usr/bin/prometheus";
const PROMTOOL = process.env.PROMTOOL || "/usr/bin/promtool";
requireTools([["Chromium", CHROMIUM, "Debian's chromium"], ["Prometheus", PROMETHEUS, "Debian's prometheus"],
              ["promtool", PROMTOOL, "Debian's prometheus"]]);
const freePort = () => new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const dir = mkdtempSync(join(tmpdir(), "tiresias-dashboard-"));

const serve = spawn(BIN, ["serve", "--state-dir", dir, "--port", "0", "--gpus", "4",
                          "--policy", "dlas", "--opt", "thresholds=8",
                          "--opt", "queue_order=running-first", "--grace", "1"],
                    { stdio: "ignore" });
let browser, prom;
try {
  await until("serve", async () => existsSync(join(dir, "tiresias.addr")));
  const url = readFileSync(join(dir, "tiresias.addr"), "utf8").trim();
  const token = readFileSync(join(dir, "tiresias.token"), "utf8").trim();
  const headers = { Authorization: "Bearer " + token, "Content-Type": "application/json" };
  const call = async (method, path, body) => {
    const r = await fetch(url + path, { method, headers, body: body && JSON.stringify(body) });
    return path === "/metrics" ? r.text() : r.json();
  };
  const job = (id) => call("GET", `/v1/jobs/${id}`);
  const submit = async (name, gpus) =>
    (await call("POST", "/v1/jobs", { name, gpus, argv: ["sleep", "60"], cwd: "/tmp" })).id;

  // A (4 GPUs) runs and is demoted after 2 s (8 GPU-s); B (1 GPU, Q1) then preempts it and
  // runs for 8 s in Q1; C (4 GPUs, Q1) waits behind B for GPUs.
  const a = await submit("big-a", 4);
  await until("A demoted", async () => (await job(a)).queue === "Q2");
  const b = await submit("small-b", 1);
  await until("A preempted, B running", async () =>
    (await job(a)).preemptions === 1 && (await job(b)).state === "running");
  const c = await submit("waiting-c", 4);
  await until("C waiting", async () => (await job(c)).state === "pending");

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
  const { page, errors } = await signedInPage(browser, url, call);

  // The GPU map: B on one GPU of four, labelled emulated.
  await page.waitForSelector(".gpu.busy");
  assert.equal(await page.locator(".gpu").count(), 4);
  assert.equal(await page.locator(".gpu.busy").count(), 1);
  assert.match(await page.locator(".gpu.busy").first().innerText(), new RegExp(`job ${b}`));
  assert.equal(await page.locator("[data-test=emulated]").count(), 1);
  assert.match(await page.locator("#who").innerText(), /admin/);
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-cluster.png"), fullPage: true });

  // The queues: C waits in Q1 with its reason; A (preempted, demoted) waits in Q2.
  await page.click("nav a[data-view=queues]");
  const cCard = page.locator(`.queue[data-queue=Q1] .job[data-job="${c}"]`);
  await cCard.waitFor();
  const reason = await cCard.locator(".reason").innerText();
  assert.ok(reason.length > 0, "the waiting job says why it waits");
  const explained = await call("GET", `/v1/jobs/${c}/explain`);
  assert.equal(reason, explained.reasons[0], "the same reason as explain");
  await page.locator(`.queue[data-queue=Q2] .job[data-job="${a}"]`).waitFor();
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-queues.png"), fullPage: true });

  // It updates live: cancel B; C (Q1) takes all four GPUs and leaves the waiting list.
  await call("POST", `/v1/jobs/${b}/cancel`, {});
  await page.locator(`.job[data-job="${c}"]:not(.waiting)`).waitFor({ timeout: 10000 });
  await page.locator(`.job[data-job="${b}"]`).waitFor({ state: "detached" });

  // A job page: its timeline (start, preempt, demote) and its log.
  await page.click(`.job[data-job="${a}"]`);
  await page.waitForSelector("#job-timeline li[data-kind=preempt]");
  const kinds = await page.locator("#job-timeline li").evaluateAll((ls) => ls.map((l) => l.dataset.kind));
  for (const k of ["submit", "start", "demote", "preempt"]) assert.ok(kinds.includes(k), `timeline has ${k}: ${kinds}`);
  await until("log", async () => (await page.locator("#job-log").innerText()).includes("job " + a));
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-job.png"), fullPage: true });

  // The charts draw (uPlot canvases).
  await page.click("nav a[data-view=charts]");
  await page.waitForSelector("#chart-util canvas");
  assert.equal(await page.locator(".charts canvas").count(), 5);
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-charts.png"), fullPage: true });
  assert.deepEqual(errors, [], "no script errors");

  // /metrics: Prometheus's own parser and linter accept it...
  const text = await call("GET", "/metrics");
  const check = spawnSync(PROMTOOL, ["check", "metrics"], { input: text, encoding: "utf8" });
  assert.equal(check.status, 0, "promtool check metrics:\n" + check.stdout + check.stderr);
  for (const name of ["tiresias_jobs", "tiresias_jobs_waiting", "tiresias_gpus",
                      "tiresias_preemptions_total", "tiresias_job_completion_seconds",
                      "tiresias_scheduling_pass_seconds", "tiresias_api_request_seconds",
                      "tiresias_journal_commit_seconds"]) {
    assert.match(text, new RegExp(`^# TYPE ${name} `, "m"), name + " is exposed");
  }
  // ...and a real Prometheus server scrapes it (bearer token) and stores what the API says.
  const promPort = await freePort();
  const promDir = join(dir, "prometheus");
  mkdirSync(promDir);
  writeFileSync(join(promDir, "token"), token);
  writeFileSync(join(promDir, "prometheus.yml"), [
    "global: {scrape_interval: 1s}",
    "scrape_configs:",
    "  - job_name: tiresias",
    `    static_configs: [{targets: ["${url.replace(/^http:\/\//, "")}"]}]`,
    `    authorization: {credentials_file: ${join(promDir, "token")}}`,
  ].join("\n") + "\n");
  prom = spawn(PROMETHEUS, [`--config.file=${join(promDir, "prometheus.yml")}`,
                            `--storage.tsdb.path=${join(promDir, "data")}`,
                            `--web.listen-address=127.0.0.1:${promPort}`], { stdio: "ignore" });
  const query = async (q) => (await (await fetch(
    `http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`)).json()).data.result;
  await until("Prometheus scraped serve", async () => {
    const up = await query("up");
    return up.length === 1 && up[0].value[1] === "1";
  }, 30000);
  const list = await call("GET", "/v1/jobs");
  const stored = await query("tiresias_jobs");
  assert.equal(stored.length, 8, "one series per state (timeout too)");
  for (const series of stored) {
    const n = list.filter((j) => j.state === series.metric.state).length;
    assert.equal(Number(series.value[1]), n, `tiresias_jobs{state=${series.metric.state}}`);
  }
  const preempt = await query("tiresias_preemptions_total");
  assert.equal(Number(preempt[0].value[1]), list.reduce((s, j) => s + j.preemptions, 0));
  // Every query of the sample Grafana dashboard is valid PromQL over what serve exposes.
  const grafana = JSON.parse(readFileSync(new URL("../../docs/grafana-dashboard.json", import.meta.url)));
  for (const panel of grafana.panels) {
    for (const target of panel.targets) {
      const r = await (await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=` +
                                   encodeURIComponent(target.expr))).json();
      assert.equal(r.status, "success", `${panel.title}: ${target.expr}: ${r.error}`);
    }
  }
  console.log(`dashboard test passed; screenshots in ${ARTIFACTS}`);
} finally {
  if (browser) await browser.close();
  if (prom) prom.kill("SIGTERM");
  // Jobs outlive serve: cancel ours (and only ours) before stopping it.
  try {
    const url = readFileSync(join(dir, "tiresias.addr"), "utf8").trim();
    const token = readFileSync(join(dir, "tiresias.token"), "utf8").trim();
    const auth = { Authorization: "Bearer " + token };
    const list = await (await fetch(url + "/v1/jobs", { headers: auth })).json();
    for (const j of list) await fetch(`${url}/v1/jobs/${j.id}/cancel`, { method: "POST", headers: auth });
    await until("jobs gone", async () =>
      (await (await fetch(url + "/v1/jobs", { headers: auth })).json()).every((j) => !j.pid), 10000);
  } catch (e) {
    console.log("cleanup: " + e.message);
  }
  serve.kill("SIGTERM");
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
