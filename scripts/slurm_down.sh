#!/usr/bin/env bash
# slurm_down.sh DIR: tears down the private Slurm cluster scripts/slurm_up.sh made under DIR.
# Cancels its jobs (so their processes end through Slurm), then stops the daemons by the PIDs
# their pid files record (SIGTERM to all at once, SIGKILL after 5 s), then kills strays of
# this cluster only: slurmstepd processes (they keep DIR/log/slurmd.NODE.log open) and job
# processes (a Slurm job id and DIR's slurm.conf in their environment). Never matches by name,
# so other clusters and other users' processes are left alone. Leaves DIR's files in place.
set -uo pipefail
DIR=${1:?usage: slurm_down.sh DIR}
[ -d "$DIR" ] || exit 0
DIR=$(cd "$DIR" && pwd)
export SLURM_CONF="$DIR/etc/slurm.conf"

alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }
pidof_file() { [ -f "$1" ] && tr -dc '0-9' <"$1"; }
stop_pids() {  # PIDS...: TERM all at once, then KILL what is left after 5 s
  local pid left
  for pid in "$@"; do alive "$pid" && kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    left=0
    for pid in "$@"; do alive "$pid" && left=1; done
    [ $left = 0 ] && return 0
    sleep 0.1
  done
  for pid in "$@"; do alive "$pid" && kill -KILL "$pid" 2>/dev/null; done
  return 0
}

ctld=$(pidof_file "$DIR/run/slurmctld.pid")
if alive "$ctld" && [ -f "$SLURM_CONF" ]; then
  timeout 10 scancel --full --quiet --partition=gpu 2>/dev/null
  timeout 10 scancel --quiet --state=PENDING 2>/dev/null
  for _ in $(seq 50); do
    [ -z "$(timeout 5 squeue -h -t R,CG -o %i 2>/dev/null)" ] && break
    sleep 0.1
  done
fi
daemons=("$ctld")
for f in "$DIR"/run/slurmd.*.pid; do [ -f "$f" ] && daemons+=("$(pidof_file "$f")"); done
stop_pids "${daemons[@]}"
# Strays: slurmstepd (and job processes) of this cluster outlive a killed slurmd. A stepd
# wipes its environment but keeps its node's log open; a job process carries SLURM_JOB_ID and
# this cluster's SLURM_CONF; daemons started by slurm_up.sh carry TIRESIAS_SLURM_DIR.
for p in /proc/[0-9]*; do
  pid=${p#/proc/}
  [ "$pid" = $$ ] && continue
  if grep -qzxF "TIRESIAS_SLURM_DIR=$DIR" "$p/environ" 2>/dev/null ||
    { grep -qzxF "SLURM_CONF=$SLURM_CONF" "$p/environ" 2>/dev/null &&
      grep -qz "^SLURM_JOB_ID=" "$p/environ" 2>/dev/null; } ||
    ls -l "$p/fd" 2>/dev/null | grep -qF -- "-> $DIR/log/"; then
    kill -KILL "$pid" 2>/dev/null
  fi
done
stop_pids "$(pidof_file "$DIR/run/munged.pid")"
rm -f "$DIR"/run/*.pid
exit 0
