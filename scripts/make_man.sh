#!/usr/bin/env bash
# Generates the tiresias(1) man page at build time: help2man over `tiresias --help` and
# `--version`, with a COMMANDS section made of every subcommand's own --help and the exit
# codes. Usage: make_man.sh TIRESIAS_BINARY OUT.1
set -euo pipefail
bin=$1
out=$2
include=$(mktemp)
trap 'rm -f "$include"' EXIT
{
  echo "[name]"
  echo "tiresias \\- GPU cluster manager for distributed deep learning (NSDI'19 Tiresias)"
  echo "[commands]"
  # The subcommands as `tiresias --help` lists them (internal ones start with "_").
  "$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && NF {print $1}' |
    while read -r cmd; do
      echo ".SS $cmd"
      echo ".nf"
      "$bin" "$cmd" --help | sed -e "s#^Usage: [^ ]*tiresias #Usage: tiresias #" -e 's/\\/\\e/g' -e 's/^\./\\\&./'
      echo ".fi"
    done
  echo "[exit status]"
  echo "0 success; 1 a runtime error (no server, a refused request, a job not found); 2 a usage"
  echo "error (unknown command or flag, a value out of range). \\fBtiresias wait\\fR returns 0"
  echo "when every job finished, else the worst job's exit code, 124 when --timeout ran out and"
  echo "125 when a job was cancelled or timed out (see README, The CLI)."
  echo "[see also]"
  echo "The README of the tiresias project: policies, the REST API and its JSON fields."
} >"$include"
help2man --no-info --no-discard-stderr --section 1 --include "$include" \
  --name "GPU cluster manager for distributed deep learning" --output "$out" "$bin"
