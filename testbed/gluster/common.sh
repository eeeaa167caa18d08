# Shared settings of the one-server GlusterFS testbed VC (sourced by start.sh/stop.sh).
# glusterd and its brick run in a network namespace reached through a veth pair
# shaped with tc tbf; the volume is mounted through FUSE in the root namespace.
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOMODEL_TESTBED_STATE:-$TESTBED_DIR/state}/gluster
# Where the volume is mounted: a fixed path by default, named in testbed-gluster.yaml.
MNT=${IOMODEL_GLUSTER_MOUNT:-/tmp/iomodel-testbed/gluster}
NS=${IOMODEL_GLUSTER_NS:-iomodel-gl}                  # network namespace of the server
VETH_HOST=${NS:0:10}-h; VETH_NS=${NS:0:10}-n           # interface names: <= 15 characters
SUBNET=${IOMODEL_GLUSTER_SUBNET:-10.213.0}             # a /30: .1 host side, .2 server
HOST_IP=$SUBNET.1; SERVER_IP=$SUBNET.2
# Gluster refuses 127.0.0.1 (and wants a name) for a brick: this name is put in
# /etc/hosts for the server's address, on a line ending with $HOSTS_TAG.
SERVER_NAME=${IOMODEL_GLUSTER_HOST:-iomodel-gluster}
HOSTS_TAG="# iomodel-testbed $NS"
VOLUME=${IOMODEL_GLUSTER_VOLUME:-iomodel}
BRICK=$STATE/brick
WORKDIR=$STATE/glusterd                                 # glusterd's working-directory
RUNDIR=$STATE/run                                       # its run-directory (brick PID files)
LOGDIR=$STATE/log
SOCK=$RUNDIR/glusterd.socket                            # the CLI's socket
# The link's rate, tc syntax ("1gbit", "300mbit") or a network class (the names EC2
# used in the paper's time): low = 100mbit, moderate = 300mbit, high = 1gbit, 10gigabit = 10gbit.
RATE=${IOMODEL_GLUSTER_RATE:-1gbit}
case "${RATE,,}" in
  low) RATE=100mbit ;; moderate) RATE=300mbit ;; high) RATE=1gbit ;; 10gigabit) RATE=10gbit ;;
esac
BURST=${IOMODEL_GLUSTER_BURST:-256kb}
# FUSE mount options. direct-io-mode=enable: no kernel page cache on the client, so every
# byte read or written crosses the shaped link (by default a file read back after being
# written comes from the client's page cache, ~5 GB/s). "" for Gluster's defaults.
MOUNT_OPTS=${IOMODEL_GLUSTER_MOUNT_OPTS-direct-io-mode=enable}
GLUSTERD_PIDFILE=$STATE/glusterd.pid
CLIENT_PIDFILE=$STATE/client.pid

alive() { [ -s "$1" ] || return 1; local p; p=$(cat "$1"); kill -0 "$p" 2>/dev/null || return 1
          [ -z "${2:-}" ] || [ "$(cat /proc/$p/comm 2>/dev/null)" = "$2" ]; }
is_mounted() { findmnt -rn --mountpoint "$MNT" >/dev/null 2>&1; }
ns_exists() { ip netns list 2>/dev/null | grep -qE "^$NS( |$)"; }
gcli() { ip netns exec "$NS" gluster --mode=script --glusterd-sock="$SOCK" --log-file="$LOGDIR/cli.log" "$@"; }
# The brick processes' PID files (glusterd writes them under its run-directory).
brick_pidfiles() { find "$RUNDIR" -name '*.pid' ! -name glusterd.pid 2>/dev/null; }
