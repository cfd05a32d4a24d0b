#!/usr/bin/env bash
# gpu_check.sh: end-to-end check of `tiresias serve` on a machine with real NVIDIA GPUs.
# Run from the repository root after `make build` (binary at ${BUILD:-build}/tiresias):
#
#   scripts/gpu_check.sh            # KEEP=1 keeps the temporary state dir for inspection
#
# It starts the daemon in a temporary state dir, checks that it found the GPUs through
# nvidia-smi (and as many as `nvidia-smi -L` lists), runs two concurrent 1-GPU jobs that
# print CUDA_VISIBLE_DEVICES and the GPUs they see, and checks that each job got exactly
# one GPU and that the two jobs got different GPUs. With a single GPU the second job waits
# for the first and only the one-GPU-per-job check applies. Prints PASS/FAIL lines; exits
# nonzero if any check fails. The daemon is stopped on exit.
set -euo pipefail

BUILD=${BUILD:-build}
BIN=${BUILD}/tiresias
SERVE_TIMEOUT_S=${SERVE_TIMEOUT_S:-30}  # for the daemon to listen and report its GPUs
JOB_TIMEOUT_S=${JOB_TIMEOUT_S:-180}     # for both jobs to finish

failures=0
pass() { echo "PASS: $*"; }
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
die() {
  fail "$*"
  exit 1
}

[[ -x $BIN ]] || die "$BIN is not built (run: make build)"
command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi is not on PATH; this check needs NVIDIA GPUs"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tiresias-gpu-check.XXXXXX")
STATE=$WORK/state
SERVE_LOG=$WORK/serve.log
SERVE_PID=""

cleanup() {
  local rc=$?
  if [[ -n $SERVE_PID ]] && kill -0 "$SERVE_PID" 2>/dev/null; then
    kill -TERM "$SERVE_PID" 2>/dev/null || true
    for _ in $(seq 50); do
      kill -0 "$SERVE_PID" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
  fi
  if [[ ${KEEP:-0} == 1 || $rc != 0 ]]; then
    echo "state and logs kept in $WORK"
  else
    rm -rf "$WORK"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The state of job $1 from `tiresias show --json` (python3 when present, else a grep).
job_state() {
  local json
  json=$("$BIN" show --state-dir "$STATE" "$1" --json 2>/dev/null) || return 0
  if command -v python3 >/dev/null 2>&1; then
    printf '%s' "$json" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])' \
      2>/dev/null || true
  else
    printf '%s' "$json" | grep -oE '"state"[[:space:]]*:[[:space:]]*"[a-z]+"' | head -n 1 |
      sed -E 's/.*"([a-z]+)"$/\1/' || true
  fi
}

# --- the daemon ---------------------------------------------------------------------------
mkdir -p "$STATE"
"$BIN" serve --state-dir "$STATE" --port 0 --policy fifo >"$SERVE_LOG" 2>&1 &
SERVE_PID=$!

deadline=$((SECONDS + SERVE_TIMEOUT_S))
until [[ -s $STATE/tiresias.addr ]] && grep -q 'GPUs: [0-9]* (' "$SERVE_LOG"; do
  if ! kill -0 "$SERVE_PID" 2>/dev/null; then
    cat "$SERVE_LOG"
    die "tiresias serve exited during startup"
  fi
  if ((SECONDS >= deadline)); then
    cat "$SERVE_LOG"
    die "tiresias serve did not write tiresias.addr and its GPU line within ${SERVE_TIMEOUT_S}s"
  fi
  sleep 0.2
done
pass "serve is listening at $(cat "$STATE/tiresias.addr")"

# Count GPUs the way the daemon should: one "GPU <i>: ..." line each (MIG devices are
# listed indented beneath their GPU and are not counted).
expected_gpus=$(nvidia-smi -L | grep -c '^GPU ' || true)
gpu_line=$(grep -oE 'GPUs: [0-9]+ \([^)]*\)' "$SERVE_LOG" | head -n 1)
if [[ $gpu_line =~ ^GPUs:\ ([0-9]+)\ \(nvidia-smi\)$ ]]; then
  found_gpus=${BASH_REMATCH[1]}
  if [[ $found_gpus == "$expected_gpus" ]]; then
    pass "serve found $found_gpus GPUs through nvidia-smi"
  else
    fail "serve found $found_gpus GPUs but nvidia-smi -L lists $expected_gpus"
  fi
else
  fail "serve did not find its GPUs through nvidia-smi: '$gpu_line'"
fi
if ((expected_gpus < 1)); then
  die "nvidia-smi -L lists no GPUs"
fi

# --- two 1-GPU jobs -----------------------------------------------------------------------
# Single quotes on purpose: the job's own shell expands $CUDA_VISIBLE_DEVICES.
# shellcheck disable=SC2016
JOB_CMD='echo CVD=$CUDA_VISIBLE_DEVICES; nvidia-smi --query-gpu=index,uuid --format=csv,noheader; sleep 5'
ids=()
for name in gpu-check-a gpu-check-b; do
  out=$("$BIN" submit --parsable --state-dir "$STATE" --gpus 1 --name "$name" -- sh -c "$JOB_CMD") ||
    die "submit $name failed: $out"
  id=$(printf '%s' "$out" | tr -d '[:space:]')
  [[ $id =~ ^[0-9]+$ ]] || die "submit $name printed '$out', not a job id"
  ids+=("$id")
done
pass "submitted jobs ${ids[*]}"

deadline=$((SECONDS + JOB_TIMEOUT_S))
declare -A state
overlapped=0  # 1 once a poll saw both jobs running
while :; do
  done_count=0
  running=0
  for id in "${ids[@]}"; do
    state[$id]=$(job_state "$id")
    case ${state[$id]} in
      finished | failed | cancelled) done_count=$((done_count + 1)) ;;
      running) running=$((running + 1)) ;;
      *) ;;
    esac
  done
  ((running == 2)) && overlapped=1
  ((done_count == ${#ids[@]})) && break
  if ((SECONDS >= deadline)); then
    fail "jobs not done within ${JOB_TIMEOUT_S}s: $(for id in "${ids[@]}"; do printf '%s=%s ' "$id" "${state[$id]:-?}"; done)"
    break
  fi
  sleep 1
done

# Sets SEEN_UUID to the one GPU job $1 saw, or to "" after printing a FAIL line.
# nvidia-smi (NVML) may ignore CUDA_VISIBLE_DEVICES and list every GPU; then the GPU a CUDA
# program would see is the one CUDA_VISIBLE_DEVICES names (an index or a UUID) in that list.
SEEN_UUID=""
seen_uuid() {
  local id=$1 log=$STATE/tiresias-jobs/$1/output.log cvd rows n index uuid
  SEEN_UUID=""
  if [[ ! -f $log ]]; then
    fail "job $id: no log at $log"
    return 0
  fi
  cvd=$(sed -n 's/^CVD=//p' "$log" | head -n 1)
  rows=$(grep -E '^ *[0-9]+, *GPU-' "$log" || true)
  n=$(grep -c . <<<"$rows" || true)
  if [[ -z $cvd || $cvd == *,* ]]; then
    fail "job $id: CUDA_VISIBLE_DEVICES='$cvd', expected exactly one GPU"
  elif ((n == 1)); then
    SEEN_UUID=$(sed -E 's/^ *[0-9]+, *//' <<<"$rows")
  elif ((n == expected_gpus && n > 1)); then
    echo "NOTE: job $id: nvidia-smi ignores CUDA_VISIBLE_DEVICES here; using CVD=$cvd"
    while IFS=', ' read -r index uuid; do
      if [[ $cvd == "$index" || $uuid == "$cvd"* ]]; then
        SEEN_UUID=$uuid
        break
      fi
    done <<<"$rows"
    [[ -n $SEEN_UUID ]] || fail "job $id: CUDA_VISIBLE_DEVICES=$cvd names none of its GPUs"
  else
    fail "job $id: nvidia-smi listed $n GPUs, expected 1: $(tr '\n' ' ' <"$log")"
  fi
}

uuids=()
for id in "${ids[@]}"; do
  if [[ ${state[$id]:-} != finished ]]; then
    fail "job $id ended '${state[$id]:-unknown}', expected finished"
    if [[ -f $STATE/tiresias-jobs/$id/output.log ]]; then
      cat "$STATE/tiresias-jobs/$id/output.log"
    fi
    continue
  fi
  seen_uuid "$id"
  if [[ -n $SEEN_UUID ]]; then
    pass "job $id saw exactly one GPU: $SEEN_UUID"
    uuids+=("$SEEN_UUID")
  fi
done

if ((expected_gpus >= 2)); then
  if ((overlapped)); then
    pass "the two jobs ran at the same time"
  else
    fail "the two jobs were never seen running at the same time"
  fi
  if ((${#uuids[@]} == 2)) && [[ ${uuids[0]} != "${uuids[1]}" ]]; then
    pass "the two concurrent jobs got different GPUs"
  else
    fail "the two jobs did not get two different GPUs: ${uuids[*]:-none}"
  fi
else
  echo "NOTE: one GPU only: the jobs ran one after the other; the distinct-GPU check is skipped"
  ((${#uuids[@]} >= 1)) || fail "no job saw a GPU"
fi

if ((failures > 0)); then
  echo "FAIL: $failures check(s) failed"
  exit 1
fi
echo "PASS: all GPU checks passed"
