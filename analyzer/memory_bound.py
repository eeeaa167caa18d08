"""How much of a trace an analysis process may hold (`analyze --max-memory`).

A worker holds its block of rank traces whole when it fits in the bound,
else reads it in pieces, each pass reading a piece again from the trace
(analyzer/parallel.py).  A piece's size comes from what a process holds per
raw byte of rank trace while it reads and reduces it (bench/analyze_mpi.py
measures it: docs/performance.md).
"""
import os
import tempfile

# what a process holds before any trace: the interpreter, numpy, pyarrow (75 to 77 MiB measured)
BASE_BYTES = 96 << 20
# a piece's peak, per raw byte of its rank traces (read, linked, reduced to bursts: 4.0 to 4.8 measured)
PEAK_PER_RAW_BYTE = 5.0
# the least bound a process may be given
MIN_BOUND = 256 << 20
# process 0 keeps the analysis beside its own piece: half its bound is the analysis's
ANALYZER_SHARE = 0.5
# of the node's memory, the share the default bound gives the analysis's processes there
NODE_SHARE = 0.8


def node_memory():
    """The memory this process's node (or its cgroup: a Slurm job's) has, in bytes."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for limit in _cgroup_limits():
        total = min(total, limit)
    return total


def _cgroup_limits():
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().splitlines()
    except OSError:
        return
    for line in lines:
        _, controllers, where = line.split(":", 2)
        if controllers == "":
            name = f"/sys/fs/cgroup{where}/memory.max"             # cgroup v2
        elif "memory" in controllers.split(","):
            name = f"/sys/fs/cgroup/memory{where}/memory.limit_in_bytes"     # v1
        else:
            continue
        try:
            with open(name) as f:
                text = f.read().strip()
        except OSError:
            continue
        if text.isdigit():
            yield int(text)


def budget(max_memory, processes_here):
    """A process's bound in bytes: `max_memory`, or a share of its node's
    memory for each of the analysis's `processes_here` on it."""
    if max_memory is not None:
        return int(max_memory)
    return int(node_memory() * NODE_SHARE / max(processes_here, 1))


def piece_bytes(bound, analyzer=False):
    """Raw bytes of rank traces a worker may hold at once under `bound`
    (process 0, `analyzer`, also keeps the analysis)."""
    room = bound - BASE_BYTES
    if analyzer:
        room *= ANALYZER_SHARE
    return max(int(room / PEAK_PER_RAW_BYTE), 1)      # below that: one rank trace a piece


# file systems whose files are memory: a spill there takes what the bound saves
IN_MEMORY = {"tmpfs", "ramfs"}


def spill_dir():
    """Where a worker reading its block in pieces keeps each piece's operations
    between passes (loading them is some 30 times faster than reading and
    linking the trace again): the temporary directory ($TMPDIR, else /tmp),
    unless it is in memory; None: each pass reads the trace again."""
    base = tempfile.gettempdir()
    return None if _fs_type(base) in IN_MEMORY else base


def _fs_type(path):
    """The type of the file system `path` is on (the longest mount point over it)."""
    path, best, kind = os.path.realpath(path), -1, None
    try:
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1:3] for line in f]
    except OSError:
        return None
    for point, fs in mounts:
        point = point.replace("\\040", " ")
        if (path == point or path.startswith(point.rstrip("/") + "/")) and len(point) > best:
            best, kind = len(point), fs
    return kind
