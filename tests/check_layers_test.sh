#!/usr/bin/env bash
# Proves scripts/check_layers.sh bites: a tree with includes against the layers fails and
# names each one (and only those; tests are exempt), a tree that follows them passes.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
check="$here/../scripts/check_layers.sh"
fail() { echo "FAIL: $*"; exit 1; }

out="$("$check" "$here/data/layers/bad")"; rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "bad tree: exit $rc, want 1"
grep -q '^policy/bad.cc: includes "placement/...' <<<"$out" || fail "policy -> placement not named"
grep -q '^core/scheduler.h: includes "policy/...' <<<"$out" || fail "core -> policy not named"
[[ $(grep -c 'includes "' <<<"$out") -eq 2 ]] || fail "want exactly 2 violations (x_test.cc is exempt)"

out="$("$check" "$here/data/layers/good")"; rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "good tree: exit $rc, want 0"
echo "ok"
