# Shared settings of the throttled-disk testbed VC (sourced by start.sh/stop.sh).
# An ext4 file system on a loop device over disk.img, mounted. The loop device's file
# is served by throttlefs (throttlefs.c), a FUSE file system over the image in the state
# directory that paces every request like one disk head, so all I/O to the VC's disk is
# throttled, whichever process makes it.
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOMODEL_TESTBED_STATE:-$TESTBED_DIR/state}/disk
# Where the file system is mounted: a fixed path by default, named in testbed-disk.yaml.
MNT=${IOMODEL_DISK_MOUNT:-/tmp/iomodel-testbed/disk}
IMAGE=$STATE/disk.img
DISK_SIZE=${IOMODEL_DISK_SIZE:-1G}
MiB=1048576
WRITE_BPS=${IOMODEL_DISK_WRITE_BPS:-$((100 * MiB))}
READ_BPS=${IOMODEL_DISK_READ_BPS:-$WRITE_BPS}
LATENCY_US=${IOMODEL_DISK_LATENCY_US:-0}     # per request, besides bytes / rate (a seek)
FUSE_DIR=$STATE/fuse                          # throttlefs's mount: FUSE_DIR/disk.img
DEVICE=$FUSE_DIR/disk.img                     # the loop device's backing file
DAEMON=$STATE/throttlefs                      # built from throttlefs.c by start.sh
PIDFILE=$STATE/throttlefs.pid
# Mount options. "sync": every write reaches the device before write() returns, as on a
# disk with no write-back cache (or once a job writes more than the page cache holds).
# Without it, unsynced writes land in the page cache (GB/s) and only fsync/O_DIRECT pay.
MOUNT_OPTS=${IOMODEL_DISK_MOUNT_OPTS-noatime,sync}
LOOPFILE=$STATE/loopdev          # the loop device start.sh attached (e.g. /dev/loop3)

# The loop device attached to $DEVICE, if any (the one start.sh recorded, still backed by it).
loop_dev() {
  local d; [ -s "$LOOPFILE" ] || return 1; d=$(cat "$LOOPFILE")
  [ -b "$d" ] && losetup -n -O BACK-FILE "$d" 2>/dev/null | grep -qxF "$DEVICE" && echo "$d"
}
is_mounted() { findmnt -rn --mountpoint "$1" >/dev/null 2>&1; }
daemon_pid() {
  local p; [ -s "$PIDFILE" ] || return 1; p=$(cat "$PIDFILE")
  [ "$(cat /proc/"$p"/comm 2>/dev/null)" = throttlefs ] && echo "$p"
}
