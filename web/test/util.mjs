// What the browser tests share: the Chromium to drive (skipping, exit 77, without it), where
// screenshots go, and polling until something holds.
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
export const BIN = process.env.TIRESIAS_BINARY;
export const ARTIFACTS = process.env.TIRESIAS_ARTIFACTS || join(tmpdir(), "tiresias-artifacts");

// Exits 77 (skipped) when a tool the test needs is missing.
export function requireTools(tools) {
  for (const [what, path, how] of tools) {
    if (!existsSync(path)) {
      console.log(`SKIP: no ${what} at ${path} (make deps installs ${how})`);
      process.exit(77);
    }
  }
  mkdirSync(ARTIFACTS, { recursive: true });
}

// Flags for Debian's headless Chromium in a container, with no background traffic.
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
  "--no-first-run", "--disable-background-networking", "--disable-component-update",
  "--disable-sync"];

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls `pred` every 100 ms until it is truthy (its value is returned) or `ms` pass.
export async function until(what, pred, ms = 10000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred().catch(() => false);
    if (v) return v;
    if (Date.now() > end) throw new Error("timed out waiting for " + what);
    await sleep(100);
  }
}

// Once the serve of state directory `dir` is up: its address, its admin token, the headers
// that carry it, and `call(method, path, body)`, which answers the reply's JSON.
export async function connect(dir) {
  await until("serve", async () => existsSync(join(dir, "tiresias.addr")));
  const url = readFileSync(join(dir, "tiresias.addr"), "utf8").trim();
  const token = readFileSync(join(dir, "tiresias.token"), "utf8").trim();
  const headers = { Authorization: "Bearer " + token, "Content-Type": "application/json" };
  const call = async (method, path, body) =>
    (await fetch(url + path, { method, headers, body: body && JSON.stringify(body) })).json();
  return { url, token, headers, call };
}

// A page of `browser` signed in to the dashboard at `url` the way `tiresias dashboard` does it
// (a session token, asked with `call`, in the URL), and the script errors it reports.
export async function signedInPage(browser, url, call, height = 900) {
  const page = await browser.newPage({ viewport: { width: 1400, height } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  const session = await call("POST", "/v1/sessions", {});
  await page.goto(`${url}/#token=${session.token}`);
  return { page, errors };
}

// Stops `serve` (its process) after cancelling its jobs, which outlive it, through `call`
// (none when it never came up), and removes its state directory `dir`.
export async function stopServe(serve, call, dir) {
  try {
    for (const j of await call("GET", "/v1/jobs")) await call("POST", `/v1/jobs/${j.id}/cancel`, {});
    await until("jobs gone", async () => (await call("GET", "/v1/jobs")).every((j) => !j.pid), 10000);
  } catch (e) {
    console.log("cleanup: " + e.message);
  }
  serve.kill("SIGTERM");
  await sleep(300);
  rmSync(dir, { recursive: true, force: true });
}
