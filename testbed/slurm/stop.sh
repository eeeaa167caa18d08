#!/bin/bash
# Stop the testbed's Slurm: cancel its jobs, then stop every daemon start.sh
# started, by PID file (checking the PID is still that daemon), and wait until
# they are gone (SIGKILL after 10 s). Idempotent. --purge also deletes the state.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
export SLURM_CONF=$SLURM_CONF_FILE
if alive "$STATE/slurmctld.pid" slurmctld && alive "$STATE/slurmd.pid" slurmd; then
  # Jobs' slurmstepd processes are not slurmd's children: cancel jobs and let them end.
  if [ -n "$(squeue -h -o %i 2>/dev/null)" ]; then
    scancel -p testbed 2>/dev/null
    for i in $(seq 1 100); do [ -z "$(squeue -h -o %i 2>/dev/null)" ] && break; sleep 0.1; done
  fi
fi
pids=()
for k in "${!PIDFILES[@]}"; do
  f=${PIDFILES[$k]}
  if alive "$f" "${DAEMONS[$k]}"; then p=$(cat "$f"); kill -TERM "$p"; pids+=("$p"); fi
done
left=()
for i in $(seq 1 100); do
  left=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
  [ ${#left[@]} = 0 ] && break
  sleep 0.1
done
for p in "${left[@]}"; do echo "stop.sh: $p still alive, SIGKILL" >&2; kill -KILL "$p" 2>/dev/null; done
rm -f "${PIDFILES[@]}" "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
steps=$(pgrep -x slurmstepd || true)
[ -z "$steps" ] || echo "stop.sh: warning: slurmstepd still running: $steps" >&2
if [ "${1:-}" = --purge ]; then rm -rf "$STATE"; fi
echo "slurm stopped (${#pids[@]} daemons)"
