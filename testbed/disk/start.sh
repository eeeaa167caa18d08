#!/bin/bash
# Start the throttled-disk VC: a sparse file (IOMODEL_DISK_SIZE, default 1G) in
# testbed/state/disk/, ext4 on a loop device over it, mounted on IOMODEL_DISK_MOUNT
# (default /tmp/iomodel-testbed/disk), and a blkio cgroup (cgroup v1) throttling the
# loop device to IOMODEL_DISK_WRITE_BPS / IOMODEL_DISK_READ_BPS bytes/s (default
# 100 MiB/s both). Mounted "sync" by default (IOMODEL_DISK_MOUNT_OPTS): every write
# is throttled, synced or not. Idempotent. Replays and applications run through
# testbed/disk/run.sh, in the throttling cgroup.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "$(id -u)" = 0 ] || { echo "start.sh: run as root" >&2; exit 1; }
[ -d "$BLKIO_ROOT" ] || { echo "start.sh: no cgroup v1 blkio at $BLKIO_ROOT" >&2; exit 1; }
mkdir -p "$STATE" "$MNT"

if [ ! -e "$IMAGE" ]; then
  truncate -s "$DISK_SIZE" "$IMAGE.new"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -L iomodel-disk "$IMAGE.new"
  mv "$IMAGE.new" "$IMAGE"
fi
dev=$(loop_dev || true)
if [ -z "$dev" ]; then
  dev=$(losetup --find --show "$IMAGE")
  echo "$dev" > "$LOOPFILE"
fi
if ! is_mounted; then
  mount -t ext4 ${MOUNT_OPTS:+-o "$MOUNT_OPTS"} "$dev" "$MNT"
fi
chmod 1777 "$MNT"
majmin=$(lsblk -dn -o MAJ:MIN "$dev" | tr -d ' ')
mkdir -p "$CGROUP"
echo "$majmin $WRITE_BPS" > "$CGROUP/blkio.throttle.write_bps_device"
echo "$majmin $READ_BPS" > "$CGROUP/blkio.throttle.read_bps_device"
echo "$CGROUP" > "$STATE/cgroup"
echo "disk up: $dev ($majmin) on $MNT (${MOUNT_OPTS:-defaults}), write $WRITE_BPS B/s, read $READ_BPS B/s, cgroup $CGROUP"
