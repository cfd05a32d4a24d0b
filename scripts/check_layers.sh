#!/usr/bin/env bash
# The include check: every `#include "module/..."` in src/ must point down the layers
#
#   common <- core <- {policy, placement, trace} <- engine <- {sim, store, exec} <- live <- api <- cli
#
# A module may include its own headers and those of the modules listed for it below; peers
# (policy, placement and trace; sim, store and exec) do not include each other. Unit tests
# (*_test.cc) integrate several modules and are exempt. Prints each violation as
# `file: includes "x" (module may include: ...)` and exits 1 if there is any.
# Usage: scripts/check_layers.sh [SRC_DIR]   (default: src beside this script)
set -euo pipefail
src="${1:-$(dirname "$0")/../src}"

declare -A allowed=(
  [common]=""
  [core]="common"
  [policy]="common core"
  [placement]="common core"
  [trace]="common core"
  [engine]="common core policy placement trace"
  [sim]="common core trace engine"
  [store]="common core"
  [exec]="common core"
  [live]="common core engine store exec"
  [api]="common core store live"
  [cli]="common core policy placement trace engine sim store exec live api"
)

bad=0
while IFS= read -r -d '' file; do
  rel="${file#"$src"/}"
  mod="${rel%%/*}"
  [[ "$rel" == *_test.cc ]] && continue
  if [[ -z "${allowed[$mod]+set}" ]]; then
    echo "$rel: module '$mod' is not in the layer table (scripts/check_layers.sh)"
    bad=1
    continue
  fi
  while IFS= read -r dep; do
    [[ "$dep" == "$mod" ]] && continue
    if [[ " ${allowed[$mod]} " != *" $dep "* ]]; then
      echo "$rel: includes \"$dep/...\" ($mod may include: ${allowed[$mod]:-nothing else})"
      bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^/"]*\)\/.*/\1/p' "$file")
done < <(find "$src" -type f \( -name '*.h' -o -name '*.cc' \) -print0 | sort -z)

if [[ $bad -ne 0 ]]; then
  echo "include check: FAILED (an include points against the layers)"
  exit 1
fi
echo "include check: ok"
