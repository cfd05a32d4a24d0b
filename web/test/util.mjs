// What the browser tests share: the Chromium to drive (skipping, exit 77, without it), where
// screenshots go, and polling until something holds.
import { existsSync, mkdirSync } from "node:fs";
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
