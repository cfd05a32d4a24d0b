#!/usr/bin/env bash
# slurm_node.sh DIR kill|start NODE: a node of the scripts/slurm_up.sh cluster under DIR dies
# or comes back, for fault tests. `kill` is a machine death: SIGKILL to the node's slurmd (its
# pid file), its slurmstepd processes (they keep DIR/log/slurmd.NODE.log open), then its job
# processes (SLURMD_NODENAME=NODE with this cluster's SLURM_CONF). `start` starts its slurmd
# again; with ReturnToService=2 Slurm takes the node back once it registers.
set -uo pipefail
DIR=${1:?usage: slurm_node.sh DIR kill|start NODE}
WHAT=${2:?usage: slurm_node.sh DIR kill|start NODE}
NODE=${3:?usage: slurm_node.sh DIR kill|start NODE}
DIR=$(cd "$DIR" && pwd)
CONF="$DIR/etc/slurm.conf"
case "$WHAT" in
  kill)
    # Slurm's own daemons first, then the job processes: a job process killed while its
    # slurmstepd lives is reported as the job's end (WTERMSIG 9, a failed job), which a machine
    # death never reports. Pid order does not give that (pids wrap).
    pid=$(tr -dc '0-9' <"$DIR/run/slurmd.$NODE.pid" 2>/dev/null)
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
    jobs=()
    for p in /proc/[0-9]*; do
      q=${p#/proc/}
      if ls -l "$p/fd" 2>/dev/null | grep -qF -- "-> $DIR/log/slurmd.$NODE.log"; then
        kill -KILL "$q" 2>/dev/null  # a slurmstepd
      elif grep -qzxF "SLURMD_NODENAME=$NODE" "$p/environ" 2>/dev/null &&
        grep -qzxF "SLURM_CONF=$CONF" "$p/environ" 2>/dev/null; then
        kill -STOP "$q" 2>/dev/null  # a job process: frozen until its stepd is gone
        jobs+=("$q")
      fi
    done
    for q in "${jobs[@]}"; do kill -KILL "$q" 2>/dev/null; done
    ;;
  start)
    TIRESIAS_SLURM_DIR="$DIR" /usr/sbin/slurmd -f "$CONF" -N "$NODE"
    ;;
  *)
    echo "slurm_node.sh: kill or start, not '$WHAT'" >&2
    exit 2
    ;;
esac
