# Shared settings of the GlusterFS testbed VC (sourced by start.sh/stop.sh).
# glusterd and its bricks run in a network namespace reached through veth pairs
# shaped with tc htb (one per data server); the volume is mounted through FUSE in the root namespace.
TESTBED_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${IOMODEL_TESTBED_STATE:-$TESTBED_DIR/state}/gluster
# Where the volume is mounted: a fixed path by default, named in testbed-gluster.yaml.
MNT=${IOMODEL_GLUSTER_MOUNT:-/tmp/iomodel-testbed/gluster}
NS=${IOMODEL_GLUSTER_NS:-iomodel-gl}                  # network namespace of the server(s)
# Data servers: each is a brick on its own host name and address, reached through its
# own veth pair (its own shaped link); one glusterd in the namespace manages them all.
SERVERS=${IOMODEL_GLUSTER_SERVERS:-1}
[[ "$SERVERS" =~ ^[1-9]$ ]] || { echo "IOMODEL_GLUSTER_SERVERS must be 1..9, got '$SERVERS'" >&2; exit 2; }
SUBNET=${IOMODEL_GLUSTER_SUBNET:-10.213.0}             # server i: a /30 in SUBNET's third octet + i-1
SERVER_NAME=${IOMODEL_GLUSTER_HOST:-iomodel-gluster}   # server 1's name; server i > 1: NAME-i
# Server i's veth pair (names <= 15 characters), addresses (.1 host side, .2 server) and name.
veth_host() { if [ "$1" = 1 ]; then echo "${NS:0:10}-h"; else echo "${NS:0:10}-h$1"; fi; }
veth_ns()   { if [ "$1" = 1 ]; then echo "${NS:0:10}-n"; else echo "${NS:0:10}-n$1"; fi; }
subnet_of() { local a b c; IFS=. read -r a b c <<< "$SUBNET"; echo "$a.$b.$((c + $1 - 1))"; }
host_ip()   { echo "$(subnet_of "$1").1"; }
server_ip() { echo "$(subnet_of "$1").2"; }
server_name() { if [ "$1" = 1 ]; then echo "$SERVER_NAME"; else echo "$SERVER_NAME-$1"; fi; }
brick_dir() { if [ "$1" = 1 ]; then echo "$STATE/brick"; else echo "$STATE/brick$1"; fi; }
VETH_HOST=$(veth_host 1); SERVER_IP=$(server_ip 1)
# Gluster refuses 127.0.0.1 (and wants a name) for a brick: the names are put in
# /etc/hosts for the servers' addresses, on lines ending with $HOSTS_TAG.
HOSTS_TAG="# iomodel-testbed $NS"
VOLUME=${IOMODEL_GLUSTER_VOLUME:-iomodel}
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
# The link's bucket: "" (default) for htb's smallest, one packet. Why not tbf, the first
# choice: its bucket (256 KB) let a phase after an idle gap through at once, 20 ms early
# at 100mbit, so identical phases of an application took 70 or 87 ms (testbed/README.md).
BURST=${IOMODEL_GLUSTER_BURST:-}
# shape DEV [-n NS]: one htb class at $RATE as DEV's root qdisc (idempotent). The quantum
# only matters between classes; set, it keeps htb from warning about its default.
shape() {
  local dev=$1; shift
  tc "$@" qdisc show dev "$dev" | grep -q "^qdisc htb 1: root" ||   # htb has no "change"
    tc "$@" qdisc replace dev "$dev" root handle 1: htb default 1
  tc "$@" class replace dev "$dev" parent 1: classid 1:1 htb rate "$RATE" quantum 60000 \
    ${BURST:+burst "$BURST" cburst "$BURST"}
}
# TCP congestion control of the testbed's links, set on their routes (both ends), not
# the machine's: BBR (this machine's default) measures the delivery rate behind htb
# wrongly (tens of Gbit/s on a 100mbit link), and once the links had carried a few MB in
# parallel, fpp_io's read phase took 160 ms instead of 90 in 6 of 10 runs, one 64 KiB read
# stalling ~70 ms (cubic: 0 of 10, testbed/README.md). "" keeps the machine's default.
CONGCTL=${IOMODEL_GLUSTER_CONGCTL-cubic}
# route I DEV [-n NS]: server I's /30 on DEV, with $CONGCTL (idempotent)
route() {
  local i=$1 dev=$2 src; shift 2
  if [ "${1:-}" = -n ]; then src=$(server_ip "$i"); else src=$(host_ip "$i"); fi
  ip "$@" route replace "$(subnet_of "$i").0/30" dev "$dev" proto kernel scope link src "$src" \
    ${CONGCTL:+congctl "$CONGCTL"}
}
# Write-behind (Gluster's client translator) acknowledges writes before the server has
# them and flushes in close(): a traced phase would end before its data moved, and the
# flush would land in MPI_File_close, outside every phase. Off by default ("on" to keep it).
WRITE_BEHIND=${IOMODEL_GLUSTER_WRITE_BEHIND:-off}
# With several servers, sharding spreads one file over the bricks (as a parallel file
# system stripes it): shards of SHARD_SIZE (Gluster's minimum is 4MB). "" to keep whole
# files on one brick each (Gluster's distribute places a file by its name's hash).
SHARD_SIZE=${IOMODEL_GLUSTER_SHARD_SIZE-4MB}
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
# The namespace, its links and its /etc/hosts lines are the machine's, not a
# state's: the state that made them is recorded beside the namespace, so that
# a VC with another state (a test's) neither joins nor removes them.
OWNER_FILE=/run/iomodel-testbed-$NS.state
owner() { cat "$OWNER_FILE" 2>/dev/null || true; }
ours() { [ -z "$(owner)" ] || [ "$(owner)" = "$STATE" ]; }
gcli() { ip netns exec "$NS" gluster --mode=script --glusterd-sock="$SOCK" --log-file="$LOGDIR/cli.log" "$@"; }
# The brick processes' PID files (glusterd writes them under its run-directory).
brick_pidfiles() { find "$RUNDIR" -name '*.pid' ! -name glusterd.pid 2>/dev/null; }
