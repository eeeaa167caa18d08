#!/bin/bash
# Stop the throttled-disk VC: unmount, detach the loop device, remove the cgroup
# (processes still in it are moved back to the root cgroup first). Idempotent.
# --purge also deletes the disk image and the state.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rc=0
if is_mounted; then
  umount "$MNT" || { echo "stop.sh: umount $MNT failed (busy? fuser -vm $MNT)" >&2; rc=1; }
fi
[ -d "$MNT" ] && ! is_mounted && rmdir "$MNT" 2>/dev/null
[ -z "${IOMODEL_DISK_MOUNT:-}" ] && rmdir /tmp/iomodel-testbed 2>/dev/null
dev=$(loop_dev || true)
if [ -n "$dev" ] && ! is_mounted; then
  losetup -d "$dev" || rc=1
  rm -f "$LOOPFILE"
fi
if [ -d "$CGROUP" ]; then
  while read -r p; do echo "$p" > "$BLKIO_ROOT/cgroup.procs" 2>/dev/null; done < "$CGROUP/cgroup.procs"
  rmdir "$CGROUP" || rc=1
fi
rm -f "$STATE/cgroup"
if [ "${1:-}" = --purge ] && [ $rc = 0 ]; then rm -rf "$STATE"; fi
echo "disk stopped${dev:+ ($dev detached)}"
exit $rc
