// Bundles the dashboard (src/) and uPlot into OUT_DIR (argv[2], default dist/): index.html,
// app.js, app.css; and the simulator report's script and style (report.js, report.css), which
// the CLI inlines into a self-contained HTML file. Run at build time by CMake; nothing is
// fetched from the network at run time.
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const out = process.argv[2] || "dist";
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["src/app.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  outfile: join(out, "app.js"),
  logLevel: "warning",
});
await build({
  entryPoints: ["src/report.js"],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2020",
  outfile: join(out, "report.js"),
  logLevel: "warning",
});
writeFileSync(join(out, "report.css"),
  readFileSync("node_modules/uplot/dist/uPlot.min.css", "utf8") + "\n" +
  readFileSync("src/report.css", "utf8"));
const css =
  readFileSync("node_modules/uplot/dist/uPlot.min.css", "utf8") + "\n" +
  readFileSync("src/style.css", "utf8");
writeFileSync(join(out, "app.css"), css);
copyFileSync("src/index.html", join(out, "index.html"));
