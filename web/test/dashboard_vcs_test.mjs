// The dashboard's VCs page in a real browser (headless Chromium via playwright-core): serve
// with two virtual clusters of 2 GPUs each on 4 emulated GPUs. vision (the default VC) runs
// three 1-GPU jobs, one on a GPU lent by nlp, which runs one; the page shows vision at 3 of
// 2 with 1 borrowed. nlp then claims its quota: vision's borrower is preempted (1 s grace)
// and the page shows both VCs at their quota and vision's job waiting. A job's page names its
// VC. Screenshots go to $TIRESIAS_ARTIFACTS. Exits 77 (skipped) without Chromium.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import assert from "node:assert/strict";
import { chromium } from "playwright-core";
import { ARTIFACTS, BIN, CHROMIUM, CHROMIUM_ARGS, connect, requireTools, signedInPage, stopServe, until } from "./util.mjs";

requireTools([["Chromium", CHROMIUM, "Debian's chromium"]]);
const dir = mkdtempSync(join(tmpdir(), "tiresias-dashboard-vcs-"));

writeFileSync(join(dir, "tenants.json"), JSON.stringify({
  default_vc: "vision",
  vcs: [{ name: "vision", quota: 2 }, { name: "nlp", quota: 2 }],
}));
const serve = spawn(BIN, ["serve", "--state-dir", dir, "--port", "0", "--gpus", "4", "--grace", "1",
                          "--tenants", join(dir, "tenants.json")], { stdio: "ignore" });
let browser, call;
try {
  const served = await connect(dir);
  const { url } = served;
  call = served.call;
  const submit = async (name, vc) => (await call("POST", "/v1/jobs",
    { name, gpus: 1, argv: ["sleep", "120"], cwd: "/tmp", ...(vc ? { vc } : {}) })).id;
  const running = async () => (await call("GET", "/v1/jobs")).filter((j) => j.state === "running").length;

  const v1 = await submit("v1"), v2 = await submit("v2"), v3 = await submit("v3");
  await submit("n1", "nlp");
  await until("four running", async () => (await running()) === 4, 15000);

  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
  const { page, errors } = await signedInPage(browser, url, call, 700);
  await page.click("nav a[data-view=vcs]");
  const cell = (vc, field) => page.locator(`tr[data-vc=${vc}] td[data-field=${field}]`).innerText();
  await until("vision borrowing on the page", async () => (await cell("vision", "borrowed")) === "1");
  assert.equal(await cell("vision", "quota"), "2");
  assert.equal(await cell("vision", "running"), "3");
  assert.equal(await cell("nlp", "running"), "1");
  assert.match(await page.locator("#view-vcs h2").innerText(), /lent and reclaimed by preemption/);
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-vcs-borrowing.png"), fullPage: true });

  // nlp claims its quota: vision's last job gives its GPU back within the grace.
  await submit("n2", "nlp");
  await until("nlp at its quota on the page", async () =>
    (await cell("nlp", "running")) === "2" && (await cell("vision", "borrowed")) === "0", 15000);
  assert.equal(await cell("vision", "waiting"), "1 jobs, 1 GPUs");
  const v3job = await call("GET", `/v1/jobs/${v3}`);
  assert.equal(v3job.state, "pending");
  assert.equal(v3job.reason, "VcQuota");
  await page.screenshot({ path: join(ARTIFACTS, "dashboard-vcs-reclaimed.png"), fullPage: true });

  await page.goto(`${url}/#job/${v1}`);
  await until("the job page names its VC", async () =>
    /VC\s+vision/.test(await page.locator("#job-info").innerText()));
  assert.deepEqual(errors, [], "no script errors");
  assert.ok(v2 > v1);
  console.log("ok: the VCs page shows quotas, borrowing and the reclaim");
} finally {
  if (browser) await browser.close();
  await stopServe(serve, call, dir);
}
