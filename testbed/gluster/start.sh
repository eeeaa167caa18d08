#!/bin/bash
# Start the GlusterFS VC: a network namespace ($IOMODEL_GLUSTER_NS, default iomodel-gl)
# joined to the root namespace by one veth pair per data server
# (IOMODEL_GLUSTER_SERVERS, default 1), each shaped both ways with tc htb
# (IOMODEL_GLUSTER_RATE: a tc rate or low/moderate/high) and its route pinned to TCP
# cubic (IOMODEL_GLUSTER_CONGCTL), glusterd inside it with its
# state in testbed/state/gluster/, a distributed volume of one brick per server on the
# host names iomodel-gluster, iomodel-gluster-2, ... (added to /etc/hosts; sharded when
# several), write-behind off, mounted through FUSE on IOMODEL_GLUSTER_MOUNT (default
# /tmp/iomodel-testbed/gluster) in the root namespace. Idempotent.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
[ "$(id -u)" = 0 ] || { echo "start.sh: run as root" >&2; exit 1; }
for b in glusterd gluster glusterfs mount.glusterfs ip tc; do
  command -v $b >/dev/null || { echo "start.sh: $b missing: apt-get install glusterfs-server iproute2" >&2; exit 1; }
done
if [ -n "$CONGCTL" ] && ! grep -qw -- "$CONGCTL" /proc/sys/net/ipv4/tcp_available_congestion_control; then
  echo "start.sh: IOMODEL_GLUSTER_CONGCTL=$CONGCTL is not available here (tcp_available_congestion_control: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control))" >&2
  exit 2
fi
mkdir -p "$STATE" "$WORKDIR" "$RUNDIR" "$LOGDIR" "$MNT"

# --- network: namespace; per data server a veth pair, addresses, shaping, host name
# the volume kept in $STATE (stop.sh without --purge) has its bricks: starting it
# again with another count would claim servers it does not use
if [ -s "$STATE/volume-servers" ] && [ "$(cat "$STATE/volume-servers")" != "$SERVERS" ]; then
  echo "start.sh: the volume in $STATE was made for $(cat "$STATE/volume-servers") data server(s); remove it (stop.sh --purge) to start with $SERVERS" >&2
  exit 1
fi
if [ -s "$STATE/servers" ] && [ "$(cat "$STATE/servers")" != "$SERVERS" ] && ns_exists; then
  echo "start.sh: this VC runs with $(cat "$STATE/servers") data server(s); stop it (stop.sh --purge) to change to $SERVERS" >&2
  exit 1
fi
if ns_exists && ! ours; then
  echo "start.sh: the Gluster VC of $(owner) runs in namespace $NS; stop it first (IOMODEL_TESTBED_STATE=$(dirname "$(owner)") testbed/gluster/stop.sh), or give this one another IOMODEL_GLUSTER_NS" >&2
  exit 1
fi
echo "$SERVERS" > "$STATE/servers"
if ! ns_exists; then ip netns add "$NS"; fi
echo "$STATE" > "$OWNER_FILE"
ip -n "$NS" link set lo up
for i in $(seq 1 "$SERVERS"); do
  vh=$(veth_host "$i"); vn=$(veth_ns "$i")
  if ! ip link show "$vh" >/dev/null 2>&1; then
    ip link add "$vh" type veth peer name "$vn" netns "$NS"
  fi
  ip addr replace "$(host_ip "$i")/30" dev "$vh"
  ip -n "$NS" addr replace "$(server_ip "$i")/30" dev "$vn"
  ip link set "$vh" up
  ip -n "$NS" link set "$vn" up
  # htb on both ends: host -> server (writes) and server -> host (reads).
  shape "$vh"
  shape "$vn" -n "$NS"
  route "$i" "$vh"
  route "$i" "$vn" -n "$NS"
  if ! grep -qE "^$(server_ip "$i") $(server_name "$i") $HOSTS_TAG\$" /etc/hosts; then
    # append in place (/etc/hosts may be a bind mount: no rename)
    echo "$(server_ip "$i") $(server_name "$i") $HOSTS_TAG" >> /etc/hosts
  fi
  mkdir -p "$(brick_dir "$i")"
done

# --- glusterd in the namespace, its state here (not /var/lib/glusterd)
cat > "$STATE/glusterd.vol" <<VOL
volume management
    type mgmt/glusterd
    option working-directory $WORKDIR
    option run-directory $RUNDIR
    option glusterd-sockfile $SOCK
    option transport-type socket
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

# --- the volume: one brick per data server, each on its server's name (distributed)
if ! gcli volume info "$VOLUME" >/dev/null 2>&1; then
  bricks=(); for i in $(seq 1 "$SERVERS"); do bricks+=("$(server_name "$i"):$(brick_dir "$i")"); done
  gcli volume create "$VOLUME" transport tcp "${bricks[@]}" force >/dev/null
  echo "$SERVERS" > "$STATE/volume-servers"      # kept until stop.sh --purge
  gcli volume set "$VOLUME" performance.write-behind "$WRITE_BEHIND" >/dev/null
  if [ "$SERVERS" -gt 1 ] && [ -n "$SHARD_SIZE" ]; then
    gcli volume set "$VOLUME" features.shard on >/dev/null
    gcli volume set "$VOLUME" features.shard-block-size "$SHARD_SIZE" >/dev/null
  fi
fi
if ! gcli volume info "$VOLUME" | grep -q '^Status: Started'; then
  gcli volume start "$VOLUME" force >/dev/null
fi
# until the brick is online
for i in $(seq 1 100); do
  [ "$(gcli volume status "$VOLUME" detail 2>/dev/null | grep -cE '^Online +: Y')" = "$SERVERS" ] && break; sleep 0.1
done

# --- FUSE mount in the root namespace
if ! is_mounted; then
  mount -t glusterfs -o "log-file=$LOGDIR/client.log${MOUNT_OPTS:+,$MOUNT_OPTS}" "$SERVER_NAME:/$VOLUME" "$MNT"
fi
chmod 1777 "$MNT"
pid=$(pgrep -x glusterfs -a | awk -v m="$MNT" '$NF == m {print $1}' | head -1)
[ -n "$pid" ] && echo "$pid" > "$CLIENT_PIDFILE"
echo "gluster up: volume $VOLUME, $SERVERS data server(s) from $SERVER_NAME ($SERVER_IP, netns $NS), $RATE each way per server, TCP ${CONGCTL:-default}, write-behind $WRITE_BEHIND${SHARD_SIZE:+$([ "$SERVERS" -gt 1 ] && echo ", shards of $SHARD_SIZE")}, mounted on $MNT"
