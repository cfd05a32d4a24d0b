#!/usr/bin/env bash
# Runs one libFuzzer target: first over every input of its seed corpus (fuzz/corpus/NAME,
# left untouched: new inputs go to WORK/new), then a random search for $FUZZ_SECONDS
# (default 5) seconds. Exit 0: no crash, hang (> 10 s per input), leak or sanitizer report.
# Otherwise libFuzzer prints the report and saves the input as WORK/artifacts/crash-* (or
# leak-*, timeout-*); reproduce with `TARGET FILE`.
# Usage: fuzz/run_fuzzer.sh TARGET CORPUS_DIR WORK_DIR
set -euo pipefail
bin=$1 corpus=$2 work=$3
seconds=${FUZZ_SECONDS:-5}
dict="$(dirname "$0")/dict/$(basename "$corpus").dict"
mkdir -p "$work/new" "$work/artifacts"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
      -artifact_prefix="$work/artifacts/")
[[ -f "$dict" ]] && args+=(-dict="$dict")
exec "$bin" "${args[@]}" "$work/new" "$corpus"
