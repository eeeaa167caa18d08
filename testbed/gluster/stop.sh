#!/bin/bash
# Stop the GlusterFS VC: unmount the FUSE mount (its client process ends), stop the
# volume, stop glusterd and any brick left by PID file (checking the PID is still
# that process; SIGKILL after 10 s), delete the namespace (and with it the veth
# pairs) and the /etc/hosts lines start.sh added. Idempotent.
# --purge also deletes the state (glusterd's store, the brick, logs).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rc=0
client=$(cat "$CLIENT_PIDFILE" 2>/dev/null || true)
if is_mounted; then
  umount "$MNT" || { echo "stop.sh: umount $MNT failed (busy? fuser -vm $MNT)" >&2; rc=1; }
fi
[ -d "$MNT" ] && ! is_mounted && rmdir "$MNT" 2>/dev/null
# PIDs: glusterd, bricks, FUSE client (the client ends on unmount)
pids=() names=() socks=() logs=()
if alive "$GLUSTERD_PIDFILE" glusterd; then pids+=("$(cat "$GLUSTERD_PIDFILE")"); names+=(glusterd); fi
for f in $(brick_pidfiles); do
  if alive "$f" glusterfsd; then
    p=$(cat "$f"); pids+=("$p"); names+=(glusterfsd)
    # its socket (-S, under /var/run/gluster) and log (-l, /var/log/glusterfs/bricks/)
    arg() { tr '\0' '\n' < /proc/$p/cmdline | grep -A1 -x -- "$1" | tail -1; }
    socks+=("$(arg -S)"); logs+=("$(arg -l)")
  fi
done
if [ -n "$client" ] && [ "$(cat /proc/$client/comm 2>/dev/null)" = glusterfs ]; then
  pids+=("$client"); names+=(glusterfs)
fi
# stop the volume while glusterd runs (it stops the brick)
if ns_exists && alive "$GLUSTERD_PIDFILE" glusterd; then
  gcli volume stop "$VOLUME" force >/dev/null 2>&1 || true
fi
for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
left=()
for i in $(seq 1 100); do
  left=()
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=("$p"); done
  [ ${#left[@]} = 0 ] && break
  sleep 0.1
done
for p in "${left[@]}"; do echo "stop.sh: $p still alive, SIGKILL" >&2; kill -KILL "$p" 2>/dev/null; done
rm -f "$GLUSTERD_PIDFILE" "$CLIENT_PIDFILE" $(brick_pidfiles)
# what the brick leaves outside the state: its socket; its log is moved into the state
for s in "${socks[@]}"; do case "$s" in *.socket) rm -f "$s" ;; esac; done
for l in "${logs[@]}"; do case "$l" in *.log) [ -f "$l" ] && mkdir -p "$LOGDIR" && cat "$l" >> "$LOGDIR/brick.log" && rm -f "$l" ;; esac; done
[ -z "${IOMODEL_GLUSTER_MOUNT:-}" ] && rmdir /tmp/iomodel-testbed 2>/dev/null
# network: the namespace (its end of the veth goes with it, and so does the pair),
# only if this state made it: another state's VC keeps running
if ours; then
  if ns_exists; then ip netns delete "$NS" || rc=1; fi
  n=$(cat "$STATE/servers" 2>/dev/null || echo "$SERVERS")
  for i in $(seq 1 "$n"); do
    vh=$(veth_host "$i")
    if ip link show "$vh" >/dev/null 2>&1; then ip link delete "$vh" || rc=1; fi
  done
  if grep -qF "$HOSTS_TAG" /etc/hosts; then
    # rewrite in place (/etc/hosts may be a bind mount: no rename)
    hosts=$(grep -vF "$HOSTS_TAG" /etc/hosts); printf '%s\n' "$hosts" > /etc/hosts
  fi
  rm -f "$OWNER_FILE"
else
  echo "stop.sh: namespace $NS belongs to the Gluster VC of $(owner): left running" >&2
fi
rm -f "$STATE/servers"
if [ "${1:-}" = --purge ] && [ $rc = 0 ]; then rm -rf "$STATE"; fi
echo "gluster stopped (${#pids[@]} processes: ${names[*]:-none})"
exit $rc
