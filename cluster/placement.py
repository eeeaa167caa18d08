"""Where a distributed file system puts a file-per-process point's files, and
names that spread them evenly over its data servers.

Gluster's DHT places a file on the server its name hashes to (within its
directory's layout), so two ranks' files land on one server or on two by the
luck of their names: a profile whose names were chosen without looking mixes
the placements point by point (on the testbed's two servers such points ran at
11.4, 15.1 or 22.4 MiB/s as all, three quarters or half of their data sat on
one server).  Each such point's name is picked so that its files spread evenly: the profile measures the servers
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
    """The data server ("host:brick root") that holds a file named `path`, or
    None when the file system cannot say.  A file of that name is created for
    the question and removed after it; one already there (say, left by an
    interrupted sweep) is asked and kept."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        created = True
    except FileExistsError:
        created = False
    except OSError:
        return None
    try:
        info = os.getxattr(path, PATHINFO).decode(errors="replace")
    except OSError:
        return None
    finally:
        if created:
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
