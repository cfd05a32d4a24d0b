// The simulator's HTML report in a real browser (Debian's headless Chromium driven by
// playwright-core): `tiresias compare --report` of three policies on the Philly trace (a
// synthetic workload without ../shared), under 5 MB, opened from the file
// with every network request refused (it must open offline), then checked: the summary has a
// row per run, the CDF and time charts draw (uPlot canvases with their legends), the size
// table is there, and the page raised no error. A screenshot goes to $TIRESIAS_ARTIFACTS.
// Exits 77 (skipped) without Chromium.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { ARTIFACTS, BIN, CHROMIUM, requireTools } from "./util.mjs";

requireTools([["Chromium", CHROMIUM, "Debian's chromium"]]);
const dir = mkdtempSync(join(tmpdir(), "tiresias-report-"));
const report = join(dir, "report.html");
// The Philly trace (../shared, read in place) when present, else a synthetic workload.
const philly = new URL("../../../shared/traces/philly.csv", import.meta.url).pathname;
const workload = existsSync(philly) ? ["--trace", philly, "--cluster", "2x32x8"]
                                    : ["--synthetic", "3000", "--cluster", "1x4x8"];
if (!existsSync(philly)) console.log(`note: ${philly} is absent (../shared): a synthetic workload instead`);
// gittins reads its default history from ../shared too: srtf stands in without it.
const policies = existsSync(philly) ? ["fifo", "dlas", "gittins"] : ["fifo", "dlas", "srtf"];
const labels = policies.map((p) => p + "+tiresias");  // the default placement
const run = spawnSync(BIN, ["compare", ...workload, "--policies", policies.join(","), "--report", report],
                      { encoding: "utf8" });
assert.equal(run.status, 0, run.stdout + run.stderr);
const bytes = statSync(report).size;
assert.ok(bytes < 5 * 1024 * 1024, `report is ${bytes} bytes`);

const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
try {
  const page = await browser.newPage({ viewport: { width: 1000, height: 800 } });
  const errors = [], fetched = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file://")) return route.continue();
    fetched.push(url);
    return route.abort();
  });
  await page.goto("file://" + report);
  await page.waitForSelector("body[data-rendered=yes]", { timeout: 10000 });
  assert.deepEqual(errors, []);
  assert.deepEqual(fetched, [], "the report fetched something: it must be self-contained");
  const rows = await page.$$eval("#summary tbody tr", (trs) => trs.map((tr) => tr.cells[0].textContent));
  assert.deepEqual(rows, labels);
  // 2 CDFs + 4 charts over time, each a uPlot with one legend entry per run.
  const charts = await page.$$eval(".uplot", (us) => us.map((u) => ({
    title: u.parentElement.querySelector("h3").textContent,
    canvas: u.querySelector("canvas") != null,
    legend: [...u.querySelectorAll(".u-legend .u-series .u-label")].map((l) => l.textContent),
  })));
  assert.equal(charts.length, 6, JSON.stringify(charts));
  for (const c of charts) {
    assert.ok(c.canvas, c.title);
    assert.deepEqual(c.legend.slice(1), labels, c.title);
  }
  assert.deepEqual(charts.map((c) => c.title), ["JCT, CDF", "Queueing delay, CDF", "GPU utilisation",
                                                "Waiting jobs", "Running jobs", "Preemptions per hour"]);
  const sizes = await page.$$eval("#sizes tbody tr", (trs) => trs.length);
  assert.equal(sizes, 3);
  await page.screenshot({ path: join(ARTIFACTS, "report.png"), fullPage: true });
  console.log(`PASS: the report (${bytes} bytes) opens offline, with its table and 6 charts; ` +
              "screenshot in " + ARTIFACTS);
} finally {
  await browser.close();
}
