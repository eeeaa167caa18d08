#!/bin/bash
# testbed/disk/run.sh CMD [ARGS...]: run CMD in the throttled-disk VC's blkio cgroup
# (its children, e.g. MPI ranks, inherit it), so its synced I/O to the VC's disk is throttled.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ $# -gt 0 ] || { echo "usage: run.sh CMD [ARGS...]" >&2; exit 2; }
[ -d "$CGROUP" ] && is_mounted || { echo "run.sh: the disk VC is not started (testbed/disk/start.sh)" >&2; exit 1; }
echo $$ > "$CGROUP/cgroup.procs"
exec "$@"
