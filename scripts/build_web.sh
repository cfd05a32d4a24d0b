#!/usr/bin/env bash
# Bundles the dashboard (web/) into OUT_DIR: installs its npm packages when missing or stale
# (npm ci, from package-lock.json: the npm registry is reached at build time only), then
# runs web/build.mjs. Usage: scripts/build_web.sh OUT_DIR
set -euo pipefail
out="$1"
cd "$(dirname "$0")/../web"
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
node build.mjs "$out"
