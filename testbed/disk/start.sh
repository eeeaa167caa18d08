#!/bin/bash
# Start the throttled-disk VC: a sparse image (IOMODEL_DISK_SIZE, default 1G) in
# testbed/state/disk/ holding ext4, served through throttlefs (a FUSE file system that
# paces every request like one disk head: IOMODEL_DISK_WRITE_BPS / IOMODEL_DISK_READ_BPS
# bytes/s, default 100 MiB/s both, plus IOMODEL_DISK_LATENCY_US per request, default 0),
# a loop device over it, mounted on IOMODEL_DISK_MOUNT (default /tmp/iomodel-testbed/disk).
# Mounted "sync" by default (IOMODEL_DISK_MOUNT_OPTS): every write pays, synced or not.
# Idempotent: a second start keeps what runs.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "$(id -u)" = 0 ] || { echo "start.sh: run as root" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "start.sh: no /dev/fuse (FUSE)" >&2; exit 1; }
mkdir -p "$STATE" "$MNT"
src=$(dirname "${BASH_SOURCE[0]}")/throttlefs.c
if [ ! -x "$DAEMON" ] || [ "$src" -nt "$DAEMON" ]; then
  flags=$(pkg-config --cflags --libs fuse3 2>/dev/null) ||
    { echo "start.sh: building throttlefs needs libfuse3-dev and pkg-config (apt-get install libfuse3-dev pkg-config)" >&2; exit 1; }
  # shellcheck disable=SC2086
  cc -O2 -Wall -Wextra -Werror -o "$DAEMON.new" "$src" $flags
  mv "$DAEMON.new" "$DAEMON"
fi
if [ ! -e "$IMAGE" ]; then
  truncate -s "$DISK_SIZE" "$IMAGE.new"
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 -L iomodel-disk "$IMAGE.new"
  mv "$IMAGE.new" "$IMAGE"
fi
if ! daemon_pid >/dev/null || ! is_mounted "$FUSE_DIR"; then
  mkdir -p "$FUSE_DIR"
  "$DAEMON" "$IMAGE" "$FUSE_DIR" "$WRITE_BPS" "$READ_BPS" "$LATENCY_US" \
    > "$STATE/throttlefs.log" 2>&1 &
  echo $! > "$PIDFILE"
  echo "$WRITE_BPS $READ_BPS $LATENCY_US" > "$STATE/rates"
  for _ in $(seq 50); do is_mounted "$FUSE_DIR" && break; sleep 0.1; done
  is_mounted "$FUSE_DIR" || { echo "start.sh: throttlefs did not mount $FUSE_DIR: $(cat "$STATE/throttlefs.log")" >&2; exit 1; }
fi
dev=$(loop_dev || true)
if [ -z "$dev" ]; then
  dev=$(losetup --find --show "$DEVICE")
  echo "$dev" > "$LOOPFILE"
fi
if ! is_mounted "$MNT"; then
  mount -t ext4 ${MOUNT_OPTS:+-o "$MOUNT_OPTS"} "$dev" "$MNT"
fi
chmod 1777 "$MNT"
read -r w r l < "$STATE/rates"
echo "disk up: $dev on $MNT (${MOUNT_OPTS:-defaults}), throttlefs pid $(cat "$PIDFILE"): write $w B/s, read $r B/s, $l us per request"
