#!/bin/bash
# Stop the throttled-disk VC: unmount, detach the loop device, unmount throttlefs and
# end it (by its PID). Idempotent. --purge also deletes the disk image and the state.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rc=0
if is_mounted "$MNT"; then
  umount "$MNT" || { echo "stop.sh: umount $MNT failed (busy? fuser -vm $MNT)" >&2; rc=1; }
fi
[ -d "$MNT" ] && ! is_mounted "$MNT" && rmdir "$MNT" 2>/dev/null
[ -z "${IOMODEL_DISK_MOUNT:-}" ] && rmdir /tmp/iomodel-testbed 2>/dev/null
dev=$(loop_dev || true)
if [ -n "$dev" ] && ! is_mounted "$MNT"; then
  losetup -d "$dev" || rc=1
  rm -f "$LOOPFILE"
fi
if [ $rc = 0 ]; then
  if is_mounted "$FUSE_DIR"; then umount "$FUSE_DIR" || rc=1; fi
  pid=$(daemon_pid || true)
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null
    for _ in $(seq 50); do [ -d /proc/"$pid" ] || break; sleep 0.1; done
    [ -d /proc/"$pid" ] && { kill -9 "$pid"; sleep 0.1; }
  fi
  [ -d /proc/"${pid:-0}" ] && rc=1 || rm -f "$PIDFILE"
  [ -d "$FUSE_DIR" ] && ! is_mounted "$FUSE_DIR" && rmdir "$FUSE_DIR" 2>/dev/null
fi
if [ "${1:-}" = --purge ] && [ $rc = 0 ]; then rm -rf "$STATE"; fi
echo "disk stopped${dev:+ ($dev detached)}"
exit $rc
