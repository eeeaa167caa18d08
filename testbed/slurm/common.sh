# Shared settings of the single-node Slurm testbed (sourced by start.sh/stop.sh/env.sh).
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOMODEL_TESTBED_STATE:-$TESTBED_DIR/state}/slurm
SLURM_CONF_FILE=$STATE/slurm.conf
MUNGE_SOCKET=$STATE/munge/munge.socket.2
# Ports on this host only; overridable so two testbeds (or a system Slurm) do not clash.
CTLD_PORT=${IOMODEL_SLURMCTLD_PORT:-16817}
SLURMD_PORT=${IOMODEL_SLURMD_PORT:-16818}
NODE=$(hostname -s)
# CPUs declared (the machine may have fewer: config_overrides lets slurmd accept it),
# so that srun -n 4 runs 4 ranks on a 2-core machine without -O.
NODE_CPUS=${IOMODEL_SLURM_CPUS:-8}
PIDFILES=("$STATE/slurmd.pid" "$STATE/slurmctld.pid" "$STATE/munge/munged.pid")
DAEMONS=(slurmd slurmctld munged)

# Is the daemon of PID file $1 alive and named $2 (not a reused PID)?
alive() { [ -s "$1" ] || return 1; local p; p=$(cat "$1"); kill -0 "$p" 2>/dev/null || return 1
          [ -z "${2:-}" ] || [ "$(cat /proc/$p/comm 2>/dev/null)" = "$2" ]; }
