# Shared settings of the throttled-disk testbed VC (sourced by start.sh/stop.sh/run.sh).
# An ext4 file system on a loop device over a sparse file, mounted, and a cgroup v1
# blkio cgroup that throttles the loop device: processes started by run.sh are in it.
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOMODEL_TESTBED_STATE:-$TESTBED_DIR/state}/disk
# Where the file system is mounted: a fixed path by default, named in testbed-disk.yaml.
MNT=${IOMODEL_DISK_MOUNT:-/tmp/iomodel-testbed/disk}
IMAGE=$STATE/disk.img
DISK_SIZE=${IOMODEL_DISK_SIZE:-1G}
MiB=1048576
WRITE_BPS=${IOMODEL_DISK_WRITE_BPS:-$((100 * MiB))}
READ_BPS=${IOMODEL_DISK_READ_BPS:-$WRITE_BPS}
BLKIO_ROOT=/sys/fs/cgroup/blkio
# One cgroup per state directory, so two testbeds (e.g. parallel tests) do not clash.
CGROUP=$BLKIO_ROOT/iomodel-disk-$(printf %s "$STATE" | md5sum | cut -c1-8)
# Mount options. "sync": every write reaches the device before write() returns, so the
# throttle applies to the application's buffered writes too, as on a disk with no
# write-back cache (or once a job writes more than the page cache holds). Without it,
# unsynced writes land in the page cache (GB/s) and only fsync/O_DIRECT is throttled.
MOUNT_OPTS=${IOMODEL_DISK_MOUNT_OPTS-noatime,sync}
LOOPFILE=$STATE/loopdev          # the loop device start.sh attached (e.g. /dev/loop3)

# The loop device attached to $IMAGE, if any (the one start.sh recorded, still backed by it).
loop_dev() {
  local d; [ -s "$LOOPFILE" ] || return 1; d=$(cat "$LOOPFILE")
  [ -b "$d" ] && losetup -n -O BACK-FILE "$d" 2>/dev/null | grep -qxF "$(realpath "$IMAGE")" && echo "$d"
}
is_mounted() { findmnt -rn --mountpoint "$MNT" >/dev/null 2>&1; }
