"""Where a distributed file system puts a file-per-process point's files, and
names that spread them evenly over its data servers.

Gluster's DHT places a file on the server its name hashes to (within its
directory's layout), so two ranks' files land on one server or on two by the
luck of their names.  `iomodel characterize` chose its names without looking:
on the testbed's two servers, its np-2 file-per-process points at 64 KiB x
1024 had both files on one server and at 256 KiB x 512 one on each, so the
profile mixed the two placements, point by point, and fpp_io, whose files
were one per server, was predicted +20% from it.  Now each such point's name
is picked so that its files spread evenly: the profile measures the servers
sharing the work as evenly as the file count allows.

The file system is asked, not modelled: a file of the name is created, its
`glusterfs.pathinfo` virtual extended attribute names the brick that holds
it, and it is removed (the file IOR then creates by that name lands on the same
brick).  A file system that cannot say (no such attribute: not Gluster) keeps
the name as it was.
"""
import os
import re

PATHINFO = "glusterfs.pathinfo"
# the first brick in a pathinfo answer: <POSIX(/brick/root):host:/brick/root/path>
_BRICK_RE = re.compile(r"<POSIX\(([^)]*)\):([^:>]+):")
# names tried per point before keeping the most even placement found
TRIES = 64


def server_of(path):
    """The data server ("host:brick root") that holds a new file named `path`,
    or None when the file system cannot say.  The probe file is created only if
    no file has that name, and removed."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return None
    try:
        os.close(fd)
        info = os.getxattr(path, PATHINFO).decode(errors="replace")
    except OSError:
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    m = _BRICK_RE.search(info)
    return f"{m.group(2)}:{m.group(1)}" if m else None


def rank_file(base, rank):
    """The name of a rank's file with -F: IOR's and iomodel_replay's base.%08d."""
    return f"{base}.{rank:08d}"


def placement(base, np):
    """{server: files} of the np rank files named from `base`, or None."""
    counts = {}
    for r in range(np):
        s = server_of(rank_file(base, r))
        if s is None:
            return None
        counts[s] = counts.get(s, 0) + 1
    return counts


def spread_name(base, np, servers, tries=TRIES):
    """(name, {server: files}): `base`, or `base` with the first suffix .s1,
    .s2, ... whose np rank files sit at most ceil(np / servers) to a server
    (the most even placement found in `tries` names otherwise).  (base, None)
    when the file system cannot say where a file goes, or np or servers is 1."""
    if np < 2 or servers < 2:
        return base, None
    goal = -(-np // servers)
    best = None
    for k in range(tries):
        name = base if k == 0 else f"{base}.s{k}"
        counts = placement(name, np)
        if counts is None:
            return base, None
        if best is None or max(counts.values()) < max(best[1].values()):
            best = (name, counts)
        if max(counts.values()) <= goal:
            break
    return best
