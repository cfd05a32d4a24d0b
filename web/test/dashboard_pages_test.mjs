// The dashboard's events and job pages on a busy serve, in headless Chromium (playwright-core):
// a held array of 250 tasks makes more events than the page shows, and the Events view shows
// the newest (it asked for the oldest after a point, which crept forward by a page a poll); an
// array task's page is found by its ref (7_2) and titled so (it asked /v1/jobs/NaN); a job with
// a large log shows its tail (its page read the log from byte 0, 1 MiB a poll, and kept it
// all); held jobs are listed in the Queues view; the page asks for no favicon. Screenshots go to $TIRESIAS_ARTIFACTS. Exits 77 (skipped) without Chromium.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { ARTIFACTS, BIN, CHROMIUM, CHROMIUM_ARGS, connect, requireTools, signedInPage, stopServe, until } from "./util.mjs";

requireTools([["Chromium", CHROMIUM, "Debian's chromium"]]);
const dir = mkdtempSync(join(tmpdir(), "tiresias-dashboard-pages-"));
const serve = spawn(BIN, ["serve", "--state-dir", dir, "--port", "0", "--gpus", "1", "--grace", "1"],
                    { stdio: "ignore" });
let browser, call;
try {
  const served = await connect(dir);
  const { url, headers } = served;
  call = served.call;

  // 250 held tasks (a submit event each), then a job writing 6,000 lines of 100 characters.
  const array = await call("POST", "/v1/jobs",
                           { name: "many", argv: ["true"], array: "0-249", hold: true, cwd: "/tmp" });
  assert.ok(array.id, JSON.stringify(array));
  const big = (await call("POST", "/v1/jobs", { name: "big-log", cwd: "/tmp", argv: ["sh", "-c",
    "echo FIRST-LINE; i=0; while [ $i -lt 6000 ]; do printf '%099d\\n' $i; i=$((i+1)); done; " +
    "echo LAST-LINE; sleep 60"] })).id;
  await until("big log written", async () => {
    const r = await fetch(`${url}/v1/jobs/${big}/logs?tail_lines=1`, { headers });
    return (await r.text()).includes("LAST-LINE");
  }, 20000);

  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const { page, errors } = await signedInPage(browser, url, call);

  // Events: the newest first, the big job's among them, though 250 submits came before.
  await page.click("nav a[data-view=events]");
  await until("the newest events", async () =>
    (await page.locator("#view-events tr td a").allInnerTexts()).includes("#" + big));
  const refs = await page.locator("#view-events tr td a").allInnerTexts();
  assert.ok(refs.includes(`#${array.id}_249`), refs.slice(0, 5).join(" "));
  assert.ok(!refs.includes(`#${array.id}_0`), "the oldest submits are not shown");
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-events.png"), fullPage: true });

  // Held tasks are in no queue of the core: the Queues view lists them as not eligible.
  await page.click("nav a[data-view=queues]");
  await until("held tasks shown", async () =>
    (await page.locator('.queue[data-queue="not eligible"] .job').count()) === 250);
  assert.match(await page.locator(`.job[data-job="${array.id}"] .reason`).innerText(), /^Held/);

  // An array task's page, by its ref.
  await page.goto(`${url}/#job/${array.id}_2`);
  await until("task page", async () => (await page.locator("#job-title").innerText()) === `Job ${array.id}_2`);
  await page.waitForSelector("#job-timeline li[data-kind=submit]");

  // The big job's page: its last lines, not its first.
  await page.goto(`${url}/#job/${big}`);
  await until("log tail", async () => (await page.locator("#job-log").innerText()).includes("LAST-LINE"));
  const log = await page.locator("#job-log").innerText();
  assert.ok(!log.includes("FIRST-LINE"), "the page starts at the log's tail");
  assert.ok(log.length < 64 * 1024, `the tail only: ${log.length} characters`);
  assert.deepEqual(errors, [], "no script errors");
  // The page asks for no favicon (the browser's /favicon.ico was counted as an API error).
  const metrics = await (await fetch(url + "/metrics", { headers })).text();
  assert.doesNotMatch(metrics, /tiresias_api_errors_total\{[^}]*route="\/dashboard"/);
  console.log(`dashboard pages test passed; screenshots in ${ARTIFACTS}`);
} finally {
  if (browser) await browser.close();
  await stopServe(serve, call, dir);
}
