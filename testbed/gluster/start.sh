#!/bin/bash
# Start the one-server GlusterFS VC: a network namespace ($IOMODEL_GLUSTER_NS, default
# iomodel-gl) joined to the root namespace by a veth pair shaped both ways with tc tbf
# (IOMODEL_GLUSTER_RATE: a tc rate or low/moderate/high), glusterd inside it with its
# state in testbed/state/gluster/, a one-brick volume on the host name iomodel-gluster
# (added to /etc/hosts), mounted through FUSE on IOMODEL_GLUSTER_MOUNT (default
# /tmp/iomodel-testbed/gluster) in the root namespace. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "$(id -u)" = 0 ] || { echo "start.sh: run as root" >&2; exit 1; }
for b in glusterd gluster glusterfs mount.glusterfs ip tc; do
  command -v $b >/dev/null || { echo "start.sh: $b missing: apt-get install glusterfs-server iproute2" >&2; exit 1; }
done
mkdir -p "$STATE" "$BRICK" "$WORKDIR" "$RUNDIR" "$LOGDIR" "$MNT"

# --- network: namespace, veth pair, addresses, shaping, host name
if ! ns_exists; then ip netns add "$NS"; fi
ip -n "$NS" link set lo up
if ! ip link show "$VETH_HOST" >/dev/null 2>&1; then
  ip link add "$VETH_HOST" type veth peer name "$VETH_NS" netns "$NS"
fi
ip addr replace "$HOST_IP/30" dev "$VETH_HOST"
ip -n "$NS" addr replace "$SERVER_IP/30" dev "$VETH_NS"
ip link set "$VETH_HOST" up
ip -n "$NS" link set "$VETH_NS" up
# tbf on both ends: host -> server (writes) and server -> host (reads).
tc qdisc replace dev "$VETH_HOST" root tbf rate "$RATE" burst "$BURST" latency 50ms
tc -n "$NS" qdisc replace dev "$VETH_NS" root tbf rate "$RATE" burst "$BURST" latency 50ms
if ! grep -qF "$HOSTS_TAG" /etc/hosts; then
  # append in place (/etc/hosts may be a bind mount: no rename)
  echo "$SERVER_IP $SERVER_NAME $HOSTS_TAG" >> /etc/hosts
fi

# --- glusterd in the namespace, its state here (not /var/lib/glusterd)
cat > "$STATE/glusterd.vol" <<VOL
volume management
    type mgmt/glusterd
    option working-directory $WORKDIR
    option run-directory $RUNDIR
    option glusterd-sockfile $SOCK
    option transport-type socket
    option transport.socket.bind-address $SERVER_IP
    option transport.socket.keepalive-time 10
    option transport.socket.keepalive-interval 2
    option transport.socket.read-fail-log off
    option transport.socket.listen-port 24007
    option ping-timeout 0
    option event-threads 1
    option max-port 60999
end-volume
VOL
if ! alive "$GLUSTERD_PIDFILE" glusterd; then
  ip netns exec "$NS" glusterd -f "$STATE/glusterd.vol" -p "$GLUSTERD_PIDFILE" \
     -l "$LOGDIR/glusterd.log"
fi
for i in $(seq 1 100); do gcli volume list >/dev/null 2>&1 && break; sleep 0.1; done
gcli volume list >/dev/null 2>&1 || { echo "start.sh: glusterd not answering; see $LOGDIR" >&2; exit 1; }

# --- the volume: one brick on the server's name
if ! gcli volume info "$VOLUME" >/dev/null 2>&1; then
  gcli volume create "$VOLUME" transport tcp "$SERVER_NAME:$BRICK" force >/dev/null
fi
if ! gcli volume info "$VOLUME" | grep -q '^Status: Started'; then
  gcli volume start "$VOLUME" force >/dev/null
fi
# until the brick is online
for i in $(seq 1 100); do
  gcli volume status "$VOLUME" detail 2>/dev/null | grep -qE '^Online +: Y' && break; sleep 0.1
done

# --- FUSE mount in the root namespace
if ! is_mounted; then
  mount -t glusterfs -o "log-file=$LOGDIR/client.log${MOUNT_OPTS:+,$MOUNT_OPTS}" "$SERVER_NAME:/$VOLUME" "$MNT"
fi
chmod 1777 "$MNT"
pid=$(pgrep -x glusterfs -a | awk -v m="$MNT" '$NF == m {print $1}' | head -1)
[ -n "$pid" ] && echo "$pid" > "$CLIENT_PIDFILE"
echo "gluster up: volume $VOLUME on $SERVER_NAME ($SERVER_IP, netns $NS, $RATE each way) mounted on $MNT"
