"""From data operations (an Ops) to the I/O model: files, bursts, phases.

The rule is docs/commands/analyze.md's; this module is its implementation.
Operations are handled a rank at a time and reduced to bursts (step 2), all
with numpy; phases (step 3) are found over the bursts of all ranks.  The
Python loops are over ranks, phases and distinct files, never operations.
"""
import collections
import dataclasses
import heapq
import math
import re

import numpy as np

import iomodel
from iomodel.models import FORMAT, VERSION, find_runs, format_ranks, validate

from . import collective_splits, extending
from .phase_groups import MAX_DENSE_CELLS, Table, group_bursts
from .trace import interface

DEFAULT_COMM_GAP = 8        # one group of counts: this many calls still join a burst
DEFAULT_IDLE_S = 0.1        # the same, in idle seconds (Darshan)
COMM_BREAK_RATIO = 4        # a break between two groups of counts
IDLE_BREAK_RATIO = 10
MODES = ("sequential", "strided", "random")
MAX_LEVELS = 4              # nested strides deeper than this are "in order, irregular"
META_MAX_BYTES = 4096       # library metadata: operations this small at most ...
META_RATIO = 8              # ... and this many times smaller than the data around them


# ------------------------------------------------------------------- files

def _rank_names(tail, rank, field, offset):
    """The tail with one run of digits that is rank + offset as `field`, one per such run."""
    return [tail[:m.start()] + field + tail[m.end():] for m in re.finditer(r"\d+", tail)
            if int(m.group()) == rank + offset]


def unique_group_names(paths_ranks):
    """{path: group name} for unique files [(path, rank)].  Files whose names
    differ only in digits are one family (out.{n}.dat); in a family where
    every file's name holds its rank's number, the group name puts {rank} in
    its place (part-Part3-of-00000004.data of rank 3 ->
    part-Part{rank}-of-00000004.data), or {rank+1} where every name counts
    from 1; of several such runs in a name, the one that makes the name most
    files share, the last on a tie.  A family whose names do not hold the
    rank is one group, every run of digits as {n}."""
    families = collections.defaultdict(list)
    for path, rank in paths_ranks:
        head, tail = path.rsplit("/", 1) if "/" in path else ("", path)
        families[(head, re.sub(r"\d+", "{n}", tail))].append((path, tail, rank))
    out = {}
    for (head, family), members in families.items():
        options = None
        for field, offset in (("{rank}", 0), ("{rank+1}", 1)):
            options = {p: _rank_names(t, r, field, offset) for p, t, r in members}
            if all(options.values()):
                break
            options = None
        if options is None:
            options = {p: [family] for p, _, _ in members}
        shared = collections.Counter(n for names in options.values() for n in set(names))
        for p, names in options.items():
            name = max(reversed(names), key=lambda n: shared[n])
            out[p] = f"{head}/{name}" if head else name
    return out


def file_groups(ops):
    """Per path index: its file-group id; and per group: {name, paths, unique}.

    A path opened on communicators of one process by a single rank is unique
    and joins the other unique paths with the same name but for the rank's
    number (unique_group_names)."""
    rows = ops.file_rows
    of_path = np.full(max(len(ops.paths), 1), -1, np.int64)   # -1: no data accessed
    sel = (rows["single"] >= 0) & rows["accessed"]          # opened and accessed
    if not sel.any():
        return of_path, []
    path, rank, single = rows["path"][sel], rows["rank"][sel], rows["single"][sel] == 1
    order = np.lexsort((rank, path))
    path, rank, single = path[order], rank[order], single[order]
    first = np.flatnonzero(np.r_[True, path[1:] != path[:-1]])
    nranks = np.add.reduceat(np.r_[True, (path[1:] != path[:-1]) | (rank[1:] != rank[:-1])]
                             .astype(np.int64), first)
    ones = np.logical_and.reduceat(single, first)
    seen = {int(q): (int(r), bool(o and n == 1))             # path -> (lowest rank, unique)
            for q, r, o, n in zip(path[first], rank[first], ones, nranks)}
    groups, gid = [], {}
    unique_names = unique_group_names([(ops.paths[i], r) for i, (r, unique) in seen.items() if unique])
    for i in sorted(seen, key=lambda i: ops.paths[i]):
        unique = seen[i][1]
        name = ops.paths[i]
        key = ("unique", unique_names[name]) if unique else ("shared", name)
        if key not in gid:
            gid[key] = len(groups)
            groups.append({"name": key[1], "paths": [], "unique": unique})
        groups[gid[key]]["paths"].append(name)
        of_path[i] = gid[key]
    return of_path, groups


# --------------------------------------------------------------- threshold

def natural_break(values, ratio):
    """(top of the lower group, bottom of the upper one) when the sorted
    distinct values have a gap of at least `ratio` (measured on 1 + v); None
    when they form one group."""
    v = np.unique(np.asarray(values, float))
    if len(v) < 2:
        return None
    r = (1 + v[1:]) / (1 + v[:-1])
    i = int(np.argmax(r))
    return (v[i], v[i + 1]) if r[i] >= ratio else None


def _solo(r):
    """Per operation: through an open on a one-process communicator."""
    return r.solo if r.solo is not None else np.zeros(len(r), bool)


def _joinable(r, group):
    """Operation i could continue the burst of i - 1: same file, operation,
    routine, collectivity (what a Darshan log's counters tell in place of the
    routine) and kind of open (the rank's own, or the job's)."""
    out = np.zeros(len(r), bool)
    solo = _solo(r)
    out[1:] = (group[1:] == group[:-1]) & (r.write[1:] == r.write[:-1]) & \
        (r.routine[1:] == r.routine[:-1]) & (solo[1:] == solo[:-1]) & \
        (r.collective[1:] == r.collective[:-1])
    return out


def _gaps(r, clock):
    """Communication calls (or idle seconds) between consecutive operations."""
    if clock:
        g = np.zeros(len(r), np.int64)
        g[1:] = r.lclock[1:] - r.lclock[:-1]        # uint32: wraps as the clock does
        return g
    g = np.zeros(len(r))
    g[1:] = np.maximum(r.t_start[1:] - r.t_end[:-1], 0)
    return g


def choose_threshold(values, clock, max_comm_gap, max_idle_s):
    """The burst threshold from the distinct gaps of joinable pairs (the rule)."""
    if clock:
        if max_comm_gap is not None:
            return int(max_comm_gap), f"given: {max_comm_gap}"
        brk = natural_break(values, COMM_BREAK_RATIO)
        if brk:
            lo, hi = int(brk[0]), int(brk[1])
            return lo, (f"auto: the communication calls between consecutive operations fall in "
                        f"two groups, up to {lo} and from {hi}; more than {lo} apart starts a "
                        f"new burst")
        vals = np.unique(values)
        seen = f"(all {int(vals[0])})" if len(vals) == 1 else \
            (f"({int(vals.min())} to {int(vals.max())})" if len(vals) else "(no consecutive operations)")
        return DEFAULT_COMM_GAP, (f"auto: the communication calls between consecutive operations "
                                  f"form one group {seen}; default {DEFAULT_COMM_GAP}")
    if max_idle_s is not None:
        return float(max_idle_s), f"given: {max_idle_s} s"
    brk = natural_break(np.asarray(values) * 1e6, IDLE_BREAK_RATIO)   # in microseconds
    if brk:
        return brk[0] / 1e6, (f"auto: idle times between consecutive operations fall in two "
                              f"groups, up to {brk[0] / 1e6:.6g} s and from {brk[1] / 1e6:.6g} s")
    return DEFAULT_IDLE_S, f"auto: idle times form one group; default {DEFAULT_IDLE_S} s"


def consensus(ops, groups_of_ranks, joins, splits):
    """Idle-time splits decided by a vote of the processes: the j-th operation
    of every process on a file (with one operation and routine) starts a new
    burst when it does so on at least half of them.  Without a logical clock,
    the last process to reach a barrier has no idle time before its next
    operation; the others show where the program's steps are."""
    nroutines = len(ops.routines) + 1
    votes, flags, lens = [], [], []
    for r, g, join, split in zip(ops.ranks, groups_of_ranks, joins, splits):
        key = (((g.astype(np.int64) * 2 + r.write) * nroutines + r.routine) * 2 + _solo(r)) * 3 \
            + r.collective + 1
        order = np.argsort(key, kind="stable")
        ks = key[order]
        new = np.ones(len(r), bool)
        new[1:] = ks[1:] != ks[:-1]
        run_start = np.maximum.accumulate(np.where(new, np.arange(len(r)), 0))
        j = np.empty(len(r), np.int64)
        j[order] = np.arange(len(r)) - run_start          # ordinal within (rank, key)
        votes.append(key * 2**32 + j)
        flags.append(split & join)
        lens.append(join)
    vote, split, join = (np.concatenate(x) for x in (votes, flags, lens))
    uniq, inv = np.unique(vote[join], return_inverse=True)
    yes = np.bincount(inv, weights=split[join].astype(float), minlength=len(uniq))
    total = np.bincount(inv, minlength=len(uniq))
    decided = np.zeros(len(vote), bool)
    decided[join] = (yes / np.maximum(total, 1))[inv] >= 0.5
    return np.split(decided, np.cumsum([len(r) for r in ops.ranks])[:-1])


# ---------------------------------------------------------------- metadata

def metadata_ops(r, group):
    """Per operation of a rank: is it an I/O library's own metadata beside its
    data.  Between the data (HDF5's object header read before each dataset's
    collective read): at most META_MAX_BYTES and META_RATIO times smaller than
    both the operations around it that are not that small, which are of one
    file, operation and routine, other than its own, on its file.  At the end
    of the data (HDF5's writes at H5Fclose, through the data's own routine when
    its transfers are independent): the small operations that end a run of one
    key whose other operations all move one size, each at most 1/META_RATIO
    of it (_tail_metadata).  Such operations would split the data's pattern
    into one phase per dataset, or join it as a pattern of their own;
    apart, they form small phases of their own."""
    n = len(r)
    if n < 2:
        return None
    small = r.bytes <= META_MAX_BYTES
    if small.all() or not small.any():
        return None
    meta = _tail_metadata(r, group, small)
    if n >= 3:
        idx = np.arange(n)
        prev = np.maximum.accumulate(np.where(~small, idx, -1))
        nxt = np.minimum.accumulate(np.where(~small, idx, n)[::-1])[::-1]
        ok = small & (prev >= 0) & (nxt < n)
        p, q = np.clip(prev, 0, n - 1), np.clip(nxt, 0, n - 1)
        key = (group.astype(np.int64) * 2 + r.write) * 65536 + r.routine
        meta |= ok & (key[p] == key[q]) & (key != key[p]) & (group == group[p]) & \
            (r.bytes * META_RATIO <= np.minimum(r.bytes[p], r.bytes[q]))
    return meta if meta.any() else None


def _tail_metadata(r, group, small):
    """The small operations that end a run of joinable operations (one file,
    operation, routine, whatever the communication between) whose operations
    before them all move one size, at least META_RATIO times each of theirs."""
    n = len(r)
    idx = np.arange(n)
    starts = np.flatnonzero(~_joinable(r, group))
    ends = np.append(starts[1:], n)                               # one past each run
    last_big = np.maximum.reduceat(np.where(small, -1, idx), starts)
    tail = (last_big >= starts) & (last_big < ends - 1)           # data, then small operations
    meta = np.zeros(n, bool)
    if not tail.any():
        return meta
    s, lb, e = starts[tail], last_big[tail], ends[tail]
    bounds = np.column_stack([s, lb + 1]).ravel()                 # each run's data, then its tail
    lo = np.minimum.reduceat(r.bytes, bounds)[::2]
    hi = np.maximum.reduceat(r.bytes, bounds)[::2]
    tail_hi = np.maximum.reduceat(np.append(r.bytes, 0), np.column_stack([lb + 1, e]).ravel())[::2]
    ok = (lo == hi) & (tail_hi * META_RATIO <= lo)
    for a, b in zip(lb[ok] + 1, e[ok]):          # few runs end so: a loop over them
        meta[a:b] = True
    return meta


def _subset(r, idx):
    """The rank's operations `idx` (in order) as a RankOps of their own."""
    cut = {f.name: (v[idx] if isinstance(v, np.ndarray) else v)
           for f in dataclasses.fields(r) for v in [getattr(r, f.name)]}
    return type(r)(**cut)


def _parts(r, meta):
    """The rank's operations to cut into bursts, each part on its own: its
    data, and apart its library metadata (`meta`, metadata_ops' mask, or
    None): [(RankOps, is metadata, the parts' operations' indices in r or
    None for all)]."""
    if meta is None:
        return [(r, False, None)]
    data, lib = np.flatnonzero(~meta), np.flatnonzero(meta)
    return [(_subset(r, data), False, data), (_subset(r, lib), True, lib)]


# ------------------------------------------------------------------ bursts

def _all(flags, starts):
    """Per segment starting at `starts`: are all elements true."""
    return np.minimum.reduceat(flags.astype(np.int8), starts).astype(bool) if len(starts) else \
        np.zeros(0, bool)


# What a burst keeps (about 100 bytes): the bursts of a large trace are as
# many as half its operations.
BURST_DTYPES = {
    "rank": np.int32, "group": np.int32, "write": np.bool_, "routine": np.int16, "called": np.int16,
    "collective": np.int8, "bytes": np.int64, "t0": np.float64, "t1": np.float64,
    "lc0": np.int64, "comm_between": np.uint32, "noncontig": np.bool_, "offset0": np.int64,
    "known": np.bool_, "iop": np.int32, "rep": np.int32, "first_size": np.int64,
    "stride": np.int64, "const_stride": np.bool_, "mode": np.int8, "k": np.int32,
    "gap_s": np.float64, "gap_comm": np.int64, "busy": np.float64, "idle": np.float64, "reread": np.int64,
    "first_end": np.float64, "npieces": np.int64, "pieces_unknown": np.bool_,
    "buffer_offset": np.int16, "synced": np.bool_, "solo": np.bool_, "meta": np.bool_,
    "end_max": np.int64, "fresh": np.bool_,
}
BURST_FIELDS = tuple(BURST_DTYPES)


def _idle(t0, t1, starts):
    """Per run of operations from each of `starts` (in call order): the time
    within its span when none of them was in progress, the sum of the gaps
    between an operation's start and the latest end of the run's operations
    before it.  Operations that overlap (nonblocking calls, a process's
    threads) count once, so it is never negative: the span less the sum of
    their durations is, when they overlap."""
    n = len(t0)
    if not n:
        return np.zeros(0)
    end = t1                       # the latest end so far in the run: t1 where the ends rise
    if (np.diff(t1) < 0).any():
        # a running maximum that starts afresh with each run: of the ends' ranks in
        # value order, lifted by n times the run's number (an earlier run's never count)
        first = np.zeros(n, np.int64)
        first[starts] = 1
        run = np.cumsum(first) - 1
        order = np.argsort(t1, kind="stable")
        rank = np.empty(n, np.int64)
        rank[order] = np.arange(n)
        end = t1[order][np.maximum.accumulate(run * n + rank) - run * n]
    gap = np.zeros(n)
    gap[1:] = np.maximum(t0[1:] - end[:-1], 0.0)
    gap[starts] = 0.0
    return np.add.reduceat(gap, starts)


def rank_bursts(r, group, same, gap, clock, nroutines, meta=False, shared=None):
    """Step 2 on one rank: its bursts as arrays (BURST_FIELDS), the request
    sizes of its bursts of several sizes ({index: tuple}), their nests of
    strides, and the ends of the writes of its `stashed` bursts (one after
    the other, in burst order; `shared`: which file groups are shared).
    `key` is (file group, operation, routine) and `k` the burst's place among
    the rank's bursts with that key (step 3 joins the k-th ones of every rank)."""
    n = len(r)
    starts = np.flatnonzero(~same)
    length = np.diff(np.append(starts, n))
    size, off = r.bytes, r.offset
    last = starts + length - 1
    b = {
        "rank": np.full(len(starts), r.rank, np.int32), "group": group[starts].astype(np.int32),
        "write": r.write[starts], "routine": r.routine[starts], "collective": r.collective[starts],
        "called": (r.routine if r.called is None else r.called)[starts],
        "solo": _solo(r)[starts], "meta": np.full(len(starts), meta),
        "bytes": np.add.reduceat(size, starts), "t0": np.minimum.reduceat(r.t_start, starts),
        "t1": np.maximum.reduceat(r.t_end, starts),
        # time inside the burst's I/O calls (without the computation between them)
        "busy": np.add.reduceat(np.maximum(r.t_end - r.t_start, 0.0), starts),
        # time between them, when none was in progress (compute_s)
        "idle": _idle(r.t_start, r.t_end, starts),
        "first_end": r.t_end[starts],
        # bytes read back from what the rank wrote in the same open (analyzer/reread.py)
        "reread": np.add.reduceat(np.where(r.reread, size, 0), starts) if r.reread is not None
        else np.zeros(len(starts), np.int64),
        "lc0": r.lclock[starts].astype(np.int64) if clock else np.full(len(starts), -1),
        "comm_between": np.maximum.reduceat(np.where(same, gap, 0), starts).astype(np.int64)
        if np.issubdtype(gap.dtype, np.integer) else np.zeros(len(starts), np.int64),
        "noncontig": np.maximum.reduceat(r.pieces, starts) > 1, "offset0": off[starts],
        # contiguous ranges the burst's operations cover (their mean length: offsets.piece)
        "npieces": np.add.reduceat(r.pieces.astype(np.int64), starts),
        "pieces_unknown": np.maximum.reduceat(r.pieces == 0, starts),
        "known": _all(off >= 0, starts),
    }
    # the highest end the burst's operations reach (-1: not all known)
    op_ends = off + size
    b["end_max"] = np.maximum.reduceat(op_ends, starts) if n else np.zeros(0, np.int64)
    b["end_max"][~b["known"]] = -1
    # the rank deleted or truncated the file just before the burst (RankOps.fresh)
    b["fresh"] = np.maximum.reduceat(r.fresh, starts) if r.fresh is not None and n else np.zeros(len(starts), bool)
    # the rank synced the file (fsync, MPI_File_sync) after the burst's last write
    b["synced"] = r.synced[last] if r.synced is not None else np.zeros(len(starts), bool)
    # where the burst's buffers sat within 4 KiB: -1 unknown, -2 not the same for all
    bo = r.buffer_offset if r.buffer_offset is not None else np.full(n, -1, np.int16)
    b["buffer_offset"] = np.where(_all(bo == np.repeat(bo[starts], length), starts), bo[starts], -2)
    # the pattern: the shortest exact period of the request sizes
    first = size[starts]
    uniform = _all(size == np.repeat(first, length), starts)
    iop = np.ones(len(starts), np.int32)
    mixed = {}
    for k in np.flatnonzero(~uniform):       # bursts of several sizes: few, a loop is fine
        s = size[starts[k]: starts[k] + length[k]]
        p = next(p for p in range(2, len(s) + 1)
                 if len(s) % p == 0 and np.array_equal(s, np.tile(s[:p], len(s) // p)))
        iop[k] = p
        mixed[int(k)] = tuple(int(x) for x in s[:p])
    rep = length // iop
    b.update(iop=iop, rep=rep, first_size=first)
    # offsets: contiguous runs, constant stride between repetitions
    d = np.zeros(n, np.int64)
    d[1:] = off[1:] - off[:-1]
    prev = np.zeros(n, np.int64)
    prev[1:] = size[:-1]
    b["contiguous"] = _all(~same | (d == prev), starts)
    d1 = np.where(length > 1, d[np.minimum(starts + 1, n - 1)], 0)
    b["stride"] = d1
    b["const_stride"] = _all(~same | (d == np.repeat(d1, length)), starts)
    for k, s in mixed.items():               # stride between the repetitions' first operations
        o = off[starts[k]: starts[k] + length[k]]
        dd = np.diff(o[:: iop[k]])
        b["const_stride"][k] = len(dd) == 0 or bool((dd == dd[0]).all())
        b["stride"][k] = int(dd[0]) if len(dd) else 0
        b["contiguous"][k] = bool((np.diff(o) == size[starts[k]: starts[k] + length[k] - 1]).all())
    # in order: no operation starts before the one before it (it may go over
    # a range again: HDF5 fills a chunk, then writes its data)
    newfile = np.zeros(n, bool)       # a family's next file starts afresh: not a step back
    newfile[1:] = r.path[1:] != r.path[:-1]
    in_order = _all(~same | (d >= 0) | newfile, starts)
    b["mode"] = modes(b, in_order)
    irregular = (b["mode"] == 2) & b["known"] & in_order
    nested = {}
    for k in np.flatnonzero(irregular):      # few, long: a loop
        o = off[starts[k]: starts[k] + length[k]: iop[k]]
        levels = stride_levels(o)
        if levels:
            nested[int(k)] = levels
    b["mode"][irregular] = 1
    del b["contiguous"]
    key = _burst_key(b, nroutines)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    new = np.ones(len(key), bool)
    new[1:] = ks[1:] != ks[:-1]
    k = np.empty(len(key), np.int64)
    k[order] = np.arange(len(key)) - np.maximum.accumulate(np.where(new, np.arange(len(key)), 0))
    b["k"] = k
    # since the rank's previous burst ended (or time zero)
    b["gap_s"] = b["t0"] - np.r_[0.0, b["t1"][:-1]]
    lc1 = r.lclock[last].astype(np.int64)
    b["gap_comm"] = (b["lc0"] - np.r_[0, lc1[:-1]]) % 2**32 if clock else np.full(len(key), -1)
    if shared is not None:
        kept = stashed(b, shared)
        return b, mixed, nested, op_ends[np.repeat(kept, length)] if kept.any() else np.zeros(0, np.int64)
    return b, mixed, nested, None


def stashed(b, shared):
    """Which of the bursts `b` keep their writes' ends, for the share of a
    phase's writes that extend their file (analyzer/extending.py): the
    independent writes of known offsets to a shared file."""
    return b["write"] & (b["collective"] == 0) & b["known"] & shared[b["group"]]


def stash_starts(b, shared):
    """Where each burst's writes' ends start in the stash of the bursts `b`
    (-1: none kept), and how many a burst has."""
    n = b["rep"].astype(np.int64) * b["iop"]
    kept = stashed(b, shared)
    at = np.cumsum(np.where(kept, n, 0)) - np.where(kept, n, 0)
    return np.where(kept, at, -1), n


def _in_rank_order(cut, shared=None):
    """The bursts of a rank's parts (_parts) as one set, in the order of their
    first operations: [(bursts, mixed, nested, first op, stash)] -> (bursts,
    mixed, nested, stash)."""
    if len(cut) == 1:
        return cut[0][:3] + (cut[0][4],)
    order = np.argsort(np.concatenate([c[3] for c in cut]), kind="stable")
    where = np.empty(len(order), np.int64)
    where[order] = np.arange(len(order))
    b, mixed, nested, base = {}, {}, {}, 0
    for f in BURST_FIELDS:
        b[f] = np.concatenate([c[0][f] for c in cut])[order]
    for _, m, nst, first, _ in cut:
        mixed.update({int(where[base + k]): v for k, v in m.items()})
        nested.update({int(where[base + k]): v for k, v in nst.items()})
        base += len(first)
    ends = None
    if shared is not None:          # each burst's run of the stash, moved with it
        at, n = stash_starts({f: np.concatenate([c[0][f] for c in cut]) for f in STASH_KEY_FIELDS}, shared)
        flat = np.concatenate([c[4] for c in cut])
        at, n = at[order], np.where(at[order] >= 0, n[order], 0)
        ends = flat[np.repeat(at - np.cumsum(n) + n, n) + np.arange(int(n.sum()))]
    return b, mixed, nested, ends


# what stash_starts reads of a burst
STASH_KEY_FIELDS = ("write", "collective", "known", "group", "rep", "iop")


def stride_levels(o):
    """The nested strides of increasing offsets `o` (a repetition's first
    operations), outermost first: [[count, stride], ...], each level `count`
    copies of the one inside it, `stride` apart; None when the offsets are not
    such a nest of 2 to MAX_LEVELS levels.  IOR's segmented file at 4 ranks,
    -s 10 -b 1m -t 256k: [[10, 4 MiB], [4, 256 KiB]]."""
    levels = []
    while len(o) > 1 and len(levels) < MAX_LEVELS:
        d = np.diff(o)
        brk = np.flatnonzero(d != d[0])
        if not len(brk):
            levels.append([len(o), int(d[0])])
            break
        m = int(brk[0]) + 1            # operations of the innermost level
        if m == 1 or len(o) % m:
            return None
        blocks = o.reshape(-1, m)
        if not (blocks - blocks[:, :1] == np.arange(m) * d[0]).all():
            return None
        levels.append([m, int(d[0])])
        o = blocks[:, 0]
    else:
        return None
    return levels[::-1] if len(levels) >= 2 else None


def modes(b, in_order):
    """Per burst: 0 sequential, 1 strided, 2 random (step 4 of the rule): an
    operation through a view is strided; otherwise one that starts before the
    one before it makes the burst random, whatever its strides."""
    seq = b["contiguous"] & ~b["noncontig"]
    strided = b["noncontig"] | (b["const_stride"] & ~seq & in_order)
    return np.where(seq, 0, np.where(strided, 1, 2))


# --------------------------------------------------------------- the model

def _prepare(r, of_path, clock):
    """A rank's operations' file groups, joinable pairs and gaps."""
    g = of_path[r.path]
    return g, _joinable(r, g), _gaps(r, clock)


def rank_gap_values(r, of_path, clock):
    """Pass 1 on one rank: its library metadata (metadata_ops' mask, or None)
    and the distinct gaps of its data's joinable pairs, for the threshold (the
    application's rhythm: a library's metadata, written as its caches flush,
    does not set it)."""
    meta = metadata_ops(r, of_path[r.path]) if clock else None
    values = set()
    for part, is_meta, _ in _parts(r, meta):
        if not is_meta:
            _, j, gap = _prepare(part, of_path, clock)
            values.update(np.unique(gap[j]).tolist())
    return meta, values


def _collective_order(part, g, is_meta, nroutines):
    return collective_splits.in_key_order(part.collective, _solo(part), g, part.write, part.routine,
                                          is_meta, nroutines)


def rank_wishes(r, meta, of_path, threshold, nroutines):
    """Where the rank, on its own, would split its collective bursts (a
    trace's; collective_splits): (vote keys, wishes)."""
    keys, wishes = [], []
    for part, is_meta, _ in _parts(r, meta):
        at, vk, first = _collective_order(part, of_path[part.path], is_meta, nroutines)
        if len(at) > 1:
            wish, _ = collective_splits.own_wishes(at, first, part.lclock, threshold)
            keys.append(vk[~first])
            wishes.append(wish[~first])
    if len(keys) != 1:      # none, or a data and a metadata part: one sorted array
        k, w = np.concatenate(keys or [np.zeros(0, np.int64)]), np.concatenate(wishes or [np.zeros(0, bool)])
        order = np.argsort(k)
        return k[order], w[order]
    return keys[0], wishes[0]


def _cut(part, is_meta, idx, of_path, clock, threshold, vote, contest, nroutines):
    """One part's cuts (_cuts); with `contest`, its collective operations split
    where their communicator decided, and the bursts it keeps whole across the
    process's own operations cut apart from them."""
    if contest is not None and len(contest[0]):
        at, vk, first = _collective_order(part, of_path[part.path], is_meta, nroutines)
        if len(at) > 1:
            wish, across = collective_splits.own_wishes(at, first, part.lclock, threshold)
            split, hit = collective_splits.decided(vk, wish, contest)
            kept_across = hit & ~split & across
            forced = np.full(len(part), -1, np.int8)     # the communicator's split, where it decides
            forced[at[~first]] = split[~first]
            sub = [np.arange(len(part))]
            if kept_across.any():
                mine = np.zeros(len(part), bool)
                mine[collective_splits.spanning(at, split, kept_across)] = True
                sub = [x for x in (np.flatnonzero(~mine), np.flatnonzero(mine)) if len(x)]
            for s in sub:
                p = part if len(s) == len(part) else _subset(part, s)
                g, j, gap = _prepare(p, of_path, clock)
                f = forced[s]
                cut = np.where(f >= 0, f == 1, gap > threshold)
                yield p, is_meta, (s if idx is None else idx[s]), g, gap, j & ~cut
            return
    g, j, gap = _prepare(part, of_path, clock)
    split = vote if vote is not None else gap > threshold
    yield part, is_meta, idx, g, gap, j & ~split


def _cuts(r, meta, of_path, clock, threshold, vote=None, contest=None, nroutines=1):
    """A rank's parts (_parts) with their file groups, gaps, and which
    operations continue the burst before them."""
    for part, is_meta, idx in _parts(r, meta):
        yield from _cut(part, is_meta, idx, of_path, clock, threshold, vote, contest, nroutines)


def rank_burst_count(r, meta, of_path, clock, threshold, vote=None, contest=None, nroutines=1):
    """How many bursts rank_reduce makes of the rank (without making them)."""
    return sum(int(np.count_nonzero(~same))
               for *_, same in _cuts(r, meta, of_path, clock, threshold, vote, contest, nroutines))


def rank_reduce(r, meta, of_path, clock, threshold, nroutines, vote=None, contest=None, shared=None):
    """Pass 2 on one rank: its bursts (BURST_FIELDS, in call order), their
    request sizes and nested strides by burst index, its collective calls
    (_collective_calls), its time inside its data calls and, with `shared`
    (which file groups are shared), the stash of its writes' ends (rank_bursts)."""
    cut, calls = [], None
    for part, is_meta, idx, g, gap, same in _cuts(r, meta, of_path, clock, threshold, vote, contest,
                                                  nroutines):
        b, m, nst, ends = rank_bursts(part, g, same, gap, clock, nroutines, is_meta, shared)
        calls = _merge_calls(calls, _collective_calls(part, b, nroutines))
        first = np.flatnonzero(~same)
        cut.append((b, m, nst, idx[first] if idx is not None else first, ends))
    b, m, nst, ends = _in_rank_order(cut, shared)
    if len(cut) > 1:        # parts interleave: the gap before a burst is since the rank's last operation
        first = np.sort(np.concatenate([c[3] for c in cut]))
        before = np.maximum.accumulate(r.t_end)
        b["gap_s"] = b["t0"] - np.where(first > 0, before[np.maximum(first - 1, 0)], 0.0)
        if clock:
            b["gap_comm"] = np.where(first > 0, (r.lclock[first].astype(np.int64)
                                                 - r.lclock[np.maximum(first - 1, 0)]) % 2**32, b["lc0"])
    return b, m, nst, calls, float(np.maximum(r.t_end - r.t_start, 0.0).sum()), ends


def build_model(ops, max_comm_gap=None, max_idle_s=None, consume=False, workers=None):
    """The I/O model (a dict in the docs/model-format.md format) of an Ops.
    With consume, each rank's operations are dropped once reduced to bursts
    (the Ops is spent), which halves the memory a large trace needs.  With
    `workers` (analyzer/parallel.py), the ranks' operations are in the
    workers and `ops` holds only what they told of them: the per-rank passes
    run there, in parallel."""
    of_path, groups = file_groups(ops)
    features = ops.features()
    extent, nprocs = _file_stats(ops, of_path, len(groups))
    clock = len(ops) > 0 and ops.has_clock
    of_path = of_path.astype(np.int32)
    nroutines = len(ops.routines)

    # pass 1: the distinct gaps of joinable pairs, for the threshold; library
    # metadata apart, from a trace (its logical clock says what came between)
    meta_of = {}
    if workers is not None:
        values = workers.gap_values(of_path, clock)
    else:
        values = set()
        for i, r in enumerate(ops.ranks):
            meta, v = rank_gap_values(r, of_path, clock)
            if meta is not None:
                meta_of[i] = meta
            values |= v
    threshold, rule = choose_threshold(np.array(sorted(values)), clock, max_comm_gap, max_idle_s)
    votes = None
    if not clock and ops.ranks:   # idle time: the processes vote (small inputs: Darshan logs)
        prep = [_prepare(r, of_path, clock) for r in ops.ranks]
        votes = consensus(ops, [x[0] for x in prep], [x[1] for x in prep],
                          [x[2] > threshold for x in prep])
        del prep
    # a trace's collective bursts split where their communicator decides (collective_splits)
    contest = None
    if clock and collective_splits.votable(len(groups), nroutines):
        if workers is not None:
            tallied = workers.wishes(threshold)
        else:
            tally = collective_splits.Tally()
            for i, r in enumerate(ops.ranks):
                if len(r):
                    tally.add(*rank_wishes(r, meta_of.get(i), of_path, threshold, nroutines))
            tallied = tally.result()
        contest = collective_splits.contested(tallied)
    lower = _lower_layer(ops, of_path)
    merged, stash = None, []
    shared = np.array([not g["unique"] for g in groups] or [False], bool)
    if workers is not None:
        merged, bursts, calls, in_calls, mixed, nested = workers.bursts(threshold, contest, lower, shared)
        base, stash = (len(bursts["rank"]) if merged is None else 0), None
    else:
        # pass 2: bursts, a rank at a time, into arrays sized for the worst case
        # (one burst an operation): pages never written are never resident
        total = len(ops)
        bursts = {f: np.empty(total, t) for f, t in BURST_DTYPES.items()}
        mixed, nested, base, calls = {}, {}, 0, None
        in_calls = []                # per rank: its time inside its data calls
        for i in range(len(ops.ranks)):
            r = ops.ranks[i]
            if len(r):
                b, m, nst, c, busy, ends = rank_reduce(r, meta_of.pop(i, None), of_path, clock, threshold,
                                                       nroutines, votes[i] if votes is not None else None,
                                                       contest, shared)
                in_calls.append(busy)
                stash.append(ends)
                calls = _merge_calls(calls, c)
                n = len(b["rank"])
                for f in BURST_FIELDS:
                    bursts[f][base:base + n] = b[f]
                mixed.update({base + k: v for k, v in m.items()})
                nested.update({base + k: v for k, v in nst.items()})
                base += n
            if consume:
                ops.ranks[i] = None
                if i % 256 == 255:
                    _release_freed_memory()
        if consume:
            _release_freed_memory()
    if merged is None:
        bursts = {f: a[:base] for f, a in bursts.items()}
        bursts["mixed"] = np.zeros(base, bool)
        bursts["mixed"][list(mixed)] = True
    if stash is not None:
        stash = np.concatenate(stash or [np.zeros(0, np.int64)])
    phases, order = _phases(ops, bursts, mixed, calls, nested, lower, clock,
                            threads=workers.jobs if workers is not None else 1, merged=merged,
                            stash=(stash, shared))
    del bursts, calls
    for ph in phases:
        if groups[ph["file"]]["unique"]:
            ph.pop("own_open", None)
    files = _files(groups, phases, extent, nprocs)
    synced_notes = ([], [])
    if ops.syncs:        # a Darshan log: its counters tell some phases' syncs
        from .darshan import mark_synced
        synced_notes = mark_synced(phases, files, ops.syncs, ops.source["module"])
    model = {
        "format": FORMAT, "version": VERSION,
        "application": _application(ops, phases, features, in_calls),
        "source": dict(ops.source),
        "analysis": {
            "max_comm_gap": threshold if clock else None,
            "max_idle_s": None if clock else threshold,
            "threshold_rule": rule,
            "iomodel_version": iomodel.__version__,
        },
        "files": files,
        "phases": phases,
        "runs": find_runs(phases),
        "order": order,
        "weight": int(sum(p["weight"] for p in phases)),
        "storage_capacity": int(sum(f["size"] for f in files)),
    }
    model["source"]["inferred"] = model["source"].get("inferred", []) + synced_notes[0]
    model["source"]["unavailable"] = model["source"].get("unavailable", []) + synced_notes[1]
    if model["source"].get("module"):    # a Darshan log: its DXT module says the interface
        for ph in phases:
            ph["interface"] = ph["interface"] or ("MPI-IO" if model["source"]["module"] == "DXT_MPIIO"
                                                  else "POSIX")
    return validate(model)


MAX_ALIGN_CELLS = 4_000_000     # bursts x bursts of one key beyond which the k-th pairing stays


def align_by_clock(b, key):
    """Step 3's pairing where the processes have different numbers of bursts
    of a key: each process's bursts are put at the places of the bursts of
    the process with the most (the lowest rank of those) whose logical clock
    they are nearest to, in order (the least total distance), rather than at
    their own k-th place.  Rank 0 reading a header through the job's open, the
    communication that hands it out, then every process reading its arrays:
    rank 0's second burst and the others' first are one phase.  In place, on
    the bursts `b` (in rank order) whose keys are `key` (_burst_key)."""
    if not len(b["rank"]):
        return
    for k in _uneven_keys(key, b["rank"]).tolist():
        sel = np.flatnonzero(key == k)
        if (b["collective"][sel] == 1).any():   # all the communicator's processes make those
            continue
        ranks = b["rank"][sel]
        per = {int(r): sel[ranks == r] for r in np.unique(ranks)}    # each in k order (rank order kept)
        ref = max(per, key=lambda r: (len(per[r]), -r))
        ref_lc = b["lc0"][per[ref]].astype(float)
        for r, mine in per.items():
            if len(mine) == len(ref_lc) or len(mine) * len(ref_lc) > MAX_ALIGN_CELLS:
                continue
            b["k"][mine] = _nearest_in_order(b["lc0"][mine].astype(float), ref_lc)


def _uneven_keys(key, rank):
    """The burst keys of which the processes that have any have different numbers."""
    width = int(rank.max()) + 1
    top = int(key.max()) + 1
    if top <= MAX_DENSE_CELLS:
        dense = np.zeros(top, bool)
        dense[key] = True
        keys = np.flatnonzero(dense)
    if top > MAX_DENSE_CELLS or len(keys) * width > MAX_DENSE_CELLS:
        uk, counts = np.unique(key * width + rank, return_counts=True)
        by_key = np.flatnonzero(np.r_[True, uk[1:] // width != uk[:-1] // width])
        lo, hi = np.minimum.reduceat(counts, by_key), np.maximum.reduceat(counts, by_key)
        return (uk[by_key] // width)[lo != hi]
    index = np.zeros(top, np.int64)              # key -> its row: a table, not a sort of the bursts
    index[keys] = np.arange(len(keys))
    counts = np.bincount(index[key] * width + rank, minlength=len(keys) * width).reshape(len(keys), width)
    present = counts > 0
    lo = np.where(present, counts, np.iinfo(np.int64).max).min(axis=1)
    return keys[lo != counts.max(axis=1)]


def _nearest_in_order(x, ref):
    """Increasing places in `ref` for the values `x` (len(x) <= len(ref)) with
    the least sum of |x_i - ref[place_i]| (dynamic programming, a row of
    numpy at a time)."""
    m, n = len(x), len(ref)
    idx = np.arange(n)
    best = np.abs(x[0] - ref)
    came = np.zeros((m, n), np.int64)
    for i in range(1, m):
        run = np.minimum.accumulate(best)                      # best over places 0..j
        at = np.maximum.accumulate(np.where(best == run, idx, 0))   # ... and where
        before = np.full(n, np.inf)
        before[1:] = run[:-1]                                  # a place left of j
        came[i, 1:] = at[:-1]
        best = before + np.abs(x[i] - ref)
    places = np.empty(m, np.int64)
    places[-1] = int(np.argmin(best))
    for i in range(m - 1, 0, -1):
        places[i - 1] = came[i, places[i]]
    return places


def _lower_layer(ops, of_path):
    """What MPI-IO read and wrote underneath the ranks' calls, on the files
    of the model (IOMODEL_UNDER_MPI=1): {(file group, write): columns rank,
    t_start, t_end, bytes sorted by t_start}; {} when the trace has none."""
    parts = [(r.rank, r.lower) for r in ops.ranks if r is not None and r.lower is not None]
    if not parts:
        return {}
    col = {k: np.concatenate([lw[k] for _, lw in parts]) for k in ("path", "write", "t_start", "t_end",
                                                                  "bytes")}
    col["rank"] = np.concatenate([np.full(len(lw["path"]), rk) for rk, lw in parts])
    group = of_path[col["path"]]
    out = {}
    for g, w in set(zip(group.tolist(), col["write"].tolist())):
        if g < 0:
            continue
        sel = np.flatnonzero((group == g) & (col["write"] == w))
        sel = sel[np.argsort(col["t_start"][sel], kind="stable")]
        out[(g, w)] = {k: col[k][sel] for k in ("rank", "t_start", "t_end", "bytes")}
    return out


def _aggregators(lower, phase, ranks, busy):
    """A collective phase's aggregators: the processes that read or wrote its
    file underneath its calls, during the phase; with the bytes they moved
    there and the mean time an aggregator and another process spent in the
    phase's calls.  None without the lower layer."""
    lw = lower.get((phase["file"], phase["operation"] == "write"))
    if lw is None:
        return None
    lo = np.searchsorted(lw["t_start"], phase["start_s"], side="left")
    hi = np.searchsorted(lw["t_start"], phase["end_s"], side="right")
    inside = np.arange(lo, hi)
    inside = inside[lw["t_end"][inside] <= phase["end_s"]]
    agg = np.unique(lw["rank"][inside])
    is_agg = np.isin(ranks, agg)
    out = {"ranks": format_ranks(agg) if len(agg) else "", "bytes": int(lw["bytes"][inside].sum()),
           "time_s": float(busy[is_agg].mean()) if is_agg.any() else None,
           "others_time_s": float(busy[~is_agg].mean()) if (~is_agg).any() else None}
    return out


# step 3's numbers of a phase that are one reduction of its bursts: name ->
# (how two processes' numbers merge, the column reduced); flags are int8
NUMBERS = {
    "rank_lo": ("lo", "rank"), "rank_hi": ("hi", "rank"), "weight": ("add", "bytes"),
    "t0": ("lo", "t0"), "t1": ("hi", "t1"), "entry": ("hi", "t0"), "lc0": ("lo", "lc0"),
    "reread": ("add", "reread"), "npieces": ("add", "npieces"),
    "pieces_unknown": ("hi", "pieces_unknown"), "comm_between": ("hi", "comm_between"),
    "gap_s": ("lo", "gap_s"), "gap_comm": ("lo", "gap_comm"), "mode": ("hi", "mode"),
    "known": ("lo", "known"), "noncontig": ("hi", "noncontig"),
    "coll_lo": ("lo", "collective"), "coll_hi": ("hi", "collective"), "first": ("lo", "offset0"),
    "buf_lo": ("lo", "buffer_offset"), "buf_hi": ("hi", "buffer_offset"),
    "synced": ("lo", "synced"), "solo": ("lo", "solo"), "meta": ("lo", "meta"),
    "fs_lo": ("lo", "first_size"), "fs_hi": ("hi", "first_size"), "rep_lo": ("lo", "rep"),
    "rep_hi": ("hi", "rep"), "mixed": ("hi", "mixed"), "const": ("lo", "const_stride"),
    # the stride between repetitions, of the bursts that repeat
    "stride_lo": ("lo", None), "stride_hi": ("hi", None),
    # the longest a process computed between the phase's operations
    "compute": ("hi", "idle"),
    "nops_lo": ("lo", None), "nops_hi": ("hi", None),   # operations a burst: its pattern, rep times
    "end_hi": ("hi", "end_max"), "fresh": ("hi", "fresh"),
}
MERGE = {"lo": np.minimum, "hi": np.maximum, "add": np.add}
FIRSTS = ("group", "write", "called", "first_size", "rep", "buffer_offset")   # the lowest rank's


def phase_numbers(grp):
    """NUMBERS of a grouping of bursts (analyzer/phase_groups.py), and the
    count of each phase: {name: array by phase}."""
    s = grp.s
    big = np.iinfo(np.int64).max
    # made one at a time, when reduced: each is a column's worth of memory
    derived = {"stride_lo": lambda: np.where(s("rep") > 1, s("stride"), big),
               "stride_hi": lambda: np.where(s("rep") > 1, s("stride"), -big),
               "nops_lo": lambda: s("rep").astype(np.int64) * s("iop")}
    derived["nops_hi"] = derived["nops_lo"]
    red = {"lo": grp.lo, "hi": grp.hi, "add": grp.add}
    out = {"count": grp.count}
    for name, (how, col) in NUMBERS.items():
        x = derived[name]() if col is None else s(col)
        out[name] = red[how](x.astype(np.int8) if x.dtype == np.bool_ else x)
    return out


def _agg(n):
    """The numbers _phase reads, from the reductions `n` (arrays by phase)."""
    agg = dict(n)
    for f in ("pieces_unknown", "noncontig", "mixed", "known", "synced", "solo", "meta", "const"):
        agg[f] = n[f] == 1            # any (hi) or all (lo) of the bursts
    agg["uniform"] = (n["fs_lo"] == n["fs_hi"]) & (n["rep_lo"] == n["rep_hi"]) & ~agg["mixed"]
    return agg


class PhaseBursts:
    """What _phase reads of one phase's bursts one by one (where its
    processes differ): the bursts `sel` of `b`."""

    def __init__(self, b, sel, mixed, nested):
        self.b, self.sel, self.mixed, self.nested = b, sel, mixed, nested

    def ranks(self):
        return self.b["rank"][self.sel]

    def patterns(self):
        """Per burst: (its request sizes, its rep)."""
        b = self.b
        return [(self.mixed.get(int(i), (int(b["first_size"][i]),)), int(b["rep"][i])) for i in self.sel]

    def nest(self):
        """The nest of strides every burst has, or None."""
        levels = [self.nested.get(int(i)) for i in self.sel] if self.nested else [None]
        return levels[0] if levels[0] and all(x == levels[0] for x in levels) else None

    def starts(self):
        return self.b["offset0"][self.sel]

    def busy(self):
        return self.b["busy"][self.sel]


def _phases(ops, b, mixed, calls=None, nested=None, lower=None, clock=False, threads=1, merged=None,
            stash=(None, None)):
    """Step 3: the k-th bursts with one key (file group, operation, routine)
    of all processes are one phase.  Its numbers are per-phase reductions of
    the bursts grouped by phase (analyzer/phase_groups.py); only phases whose
    processes differ are looked at burst by burst.  `calls`: the collective
    calls' last entry and last exit (_collective_calls), for the collective
    phases' io_time_s.  With `clock`, bursts are paired by their logical
    clock where the processes differ (align_by_clock).  `threads`: how many
    sort the bursts by phase, where they must be sorted.  `merged`: the
    numbers already reduced by the workers (analyzer/parallel.py), in place
    of the bursts.  `stash`: the ends of the bursts' independent writes to
    shared files (rank_bursts) and which file groups are shared, for the
    writes that extend their file (extending_writes)."""
    if merged is not None:
        grp, n, detail = merged, merged.numbers, merged.detail
        extending = merged.extending
    else:
        if not len(b["rank"]):
            return [], []
        nroutines = len(ops.routines)
        grp = group_bursts(b, lambda c: _burst_key(c, nroutines), BURST_KEY_FIELDS,
                           (lambda key: align_by_clock(b, key)) if clock else None, threads)
        mixed, nested = grp.reindex(mixed, nested or {})
        n = phase_numbers(grp)
        n["busy"] = grp.hi(_busy_after_entry(grp.s, n["entry"], grp.spread))
        n["affine"], n["per_rank"] = grp.affine(grp.s("offset0"))
        n.update({"first_" + g: grp.first(g) for g in FIRSTS})
        detail = lambda p: PhaseBursts(grp.b, grp.sel(p), mixed, nested)  # noqa: E731
        extending = _extending_in_table(grp, n, *stash) if isinstance(grp, Table) and not lower else {}
    agg = _agg(n)
    agg["busy"], agg["early"], agg["skew"] = _collective_busy(agg, calls, grp.keys, grp.kmul)
    cols = {k: v.tolist() for k, v in agg.items()}
    out = [_phase(ops, p, detail, cols, lower or {}) for p in range(grp.nph)]
    for p, count in extending.items():
        out[p]["extending_writes"] = count
    # number the phases: in the order every process met them, then by first start
    edges = grp.edges
    position = _phase_order(out, edges)
    for i, p in enumerate(out):
        p["id"] = position[i] + 1
    out.sort(key=lambda p: p["id"])
    return out, sorted([position[x] + 1, position[y] + 1] for x, y in edges)


def _extending_in_table(table, n, stash, shared):
    """{phase: how many of its writes extend the file in lockstep} of the
    phases that qualify (extending.qualifying), where every process has the
    same bursts (a Table, as the workers' Merged); {} without a stash."""
    if stash is None or not _agg(n)["uniform"].all():
        return {}
    need, file_end = extending.qualifying(n, shared)
    if not len(need):
        return {}
    at, _ = stash_starts({f: table.b[f] for f in STASH_KEY_FIELDS}, shared)
    out = {}
    for p in need.tolist():
        ends = extending.phase_ends(stash, at[table.sel(p)], int(n["nops_lo"][p]))
        out[p] = extending.count_extending(ends, extending.block_thresholds(
            int(file_end[p]), [extending.round_maxima(ends)])[0])
    return out


BURST_KEY_FIELDS = ("group", "write", "routine", "solo", "meta", "collective")


def _burst_key(b, nroutines):
    """A burst's key: its file group, operation, routine, collectivity, kind
    of open and whether it is library metadata (step 3 joins the k-th bursts of
    every rank with one key).  A burst
    through a rank's own one-process open of a shared file (HACC-IO's rank 0
    reading the header before all read their arrays) is not the k-th burst of
    the others' through the job's open."""
    return ((((b["group"].astype(np.int64) * 2 + b["write"]) * (nroutines + 1) + b["routine"]) * 2
             + b["solo"]) * 2 + b["meta"]) * 3 + b["collective"] + 1


def _collective_calls(r, b, nroutines):
    """One entry per collective operation of the rank (numpy columns): its
    burst's key and k, its place j in the burst, its start t0 and end t1.  The
    j-th operation of the k-th bursts with one key is one collective call of
    every process in the phase."""
    sel = np.flatnonzero(b["collective"] == 1)
    if not len(sel):
        return None
    nops = b["rep"].astype(np.int64) * b["iop"]      # a burst's operations: its pattern, rep times
    starts = np.cumsum(nops) - nops
    lens = nops[sel]
    j = np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    idx = np.repeat(starts[sel], lens) + j
    t0, t1 = r.t_start[idx], r.t_end[idx]
    return {"key": np.repeat(_burst_key(b, nroutines)[sel], lens),
            "k": np.repeat(b["k"][sel].astype(np.int64), lens), "j": j,
            "t0": t0, "t1": t1, "t0_first": t0.copy(), "t1_first": t1.copy()}


CALL_KEYS = ("key", "k", "j")


def _merge_calls(acc, new):
    """The calls seen so far, each with its last entry (t0), last exit (t1),
    first entry (t0_first) and the exit of the process that entered first
    (t1_first) over the ranks read: one entry per call, not per rank and call.
    Ranks usually make the same calls in the same order: then elementwise;
    otherwise grouped by call."""
    if new is None:
        return acc
    if acc is None:
        return new
    if len(acc["j"]) == len(new["j"]) and all(np.array_equal(acc[c], new[c]) for c in CALL_KEYS):
        np.maximum(acc["t0"], new["t0"], out=acc["t0"])
        np.maximum(acc["t1"], new["t1"], out=acc["t1"])
        first = new["t0_first"] < acc["t0_first"]
        acc["t1_first"][first] = new["t1_first"][first]
        np.minimum(acc["t0_first"], new["t0_first"], out=acc["t0_first"])
        return acc
    cat = {c: np.concatenate([acc[c], new[c]]) for c in acc}
    # per call: the maxima, and the first entry with its process's exit (the
    # row of the least t0_first, sorted last-key-first by lexsort)
    order = np.lexsort((cat["t0_first"], cat["j"], cat["k"], cat["key"]))
    cat = {c: v[order] for c, v in cat.items()}
    new_call = np.r_[True, (np.diff(cat["key"]) != 0) | (np.diff(cat["k"]) != 0) | (np.diff(cat["j"]) != 0)]
    starts = np.flatnonzero(new_call)
    return {**{c: cat[c][starts] for c in CALL_KEYS},
            "t0": np.maximum.reduceat(cat["t0"], starts), "t1": np.maximum.reduceat(cat["t1"], starts),
            "t0_first": cat["t0_first"][starts], "t1_first": cat["t1_first"][starts]}


def _collective_busy(agg, calls, phase_keys, kmul):
    """A phase's io_time_s.  Of a collective phase whose processes made as many
    calls: the sum over its calls of the time from the last process's entry to
    the last process's exit.  A collective call mostly cannot do its I/O before
    every process has called it (what it did so is returned beside), and is
    done for the phase when the last one leaves: a process that enters early
    waits for the others' computation, and one that
    leaves early (a non-aggregator of a two-phase write) waits later, in the
    next collective call or in a synchronizing call between them, such as
    MPI_File_set_view, that is no I/O call (S3D's four writes per file: each
    process's own calls held 108 ms of a 122 ms phase on the Gluster VC, its
    calls from last entry to last exit 122 ms, a replay 123 ms).  Else the
    slowest process's time in its calls, less the time its first call waited
    for the last process to enter a collective one (_busy_after_entry).
    Returns it and, of the former phases, the sum over their calls of the
    time the process that entered first spent in a call it left before the
    last process entered (0 for the other calls; NaN for the other phases):
    I/O it did on its own, which the time from the last entry leaves out.
    Open MPI's collective write of contiguous parts at 2 processes is such
    (each process writes its part alone), at 3 or more it is not (the first
    in waits for the last); a call the first process leaves after the last
    entry does not tell, and counts 0."""
    busy = agg["busy"]
    if calls is None:
        return busy, np.full(len(busy), np.nan), np.full(len(busy), np.nan)
    ck = calls["key"] * kmul + calls["k"]
    p = np.searchsorted(phase_keys, ck)
    found = p < len(phase_keys)
    found[found] = phase_keys[p[found]] == ck[found]
    dur = np.maximum(calls["t1"] - calls["t0"], 0.0)
    per_call = np.bincount(p[found], weights=dur[found], minlength=len(phase_keys))
    alone = np.where(calls["t1_first"] <= calls["t0"], calls["t1_first"] - calls["t0_first"], 0.0)
    ncalls = np.bincount(p[found], minlength=len(phase_keys))
    early = np.bincount(p[found], weights=alone[found], minlength=len(phase_keys))
    # arrival skew: from the first process's entry to the last's, summed over the calls
    skew = np.bincount(p[found], weights=np.maximum(calls["t0"] - calls["t0_first"], 0.0)[found],
                       minlength=len(phase_keys))
    same = (agg["coll_lo"] == 1) & (agg["coll_hi"] == 1) & (agg["nops_lo"] == agg["nops_hi"])
    return np.where(same, per_call, busy), np.where(same & (ncalls > 0), early, np.nan), \
        np.where(same & (ncalls > 0), skew, np.nan)


def _busy_after_entry(s, entry, spread):
    """Per burst (grouped by phase): its time inside its I/O calls, less, when
    its first call is collective, the time that call waited for the last
    process to enter it.  A collective call cannot do its I/O before every
    process has called it; the wait is the skew left by what came before
    (non-aggregators leave a two-phase collective write early and wait in the
    next collective call for the aggregators to finish it), which the previous
    phase or the computation already holds and a replay, whose processes start
    each phase together, does not have."""
    t0 = s("t0")
    # the wait, up to the end of that first call: max(min(entry, end) - t0, 0),
    # in one array (each fresh one is page faults over millions of bursts)
    wait = np.minimum(spread(entry), s("first_end"))    # entry: the last process's first call
    wait -= t0
    np.maximum(wait, 0.0, out=wait)
    wait[s("collective") != 1] = 0.0
    return np.subtract(s("busy"), wait, out=wait)


def _phase_order(phases, edges):
    """Position of each phase: a topological order of the per-process
    sequences (deterministic whatever the timing), ties by first start: of
    the phases that no unplaced one precedes, the one with the least key next
    (networkx's lexicographical_topological_sort, done with a heap here because
    importing networkx costs 0.1 s, a tenth of a small trace's analysis)."""
    key = [(p["start_s"], p["file"], i) for i, p in enumerate(phases)]
    after = [[] for _ in phases]
    waits = [0] * len(phases)
    for x, y in set(edges):
        after[x].append(y)
        waits[y] += 1
    ready = [key[i] for i in range(len(phases)) if not waits[i]]
    heapq.heapify(ready)
    seq = []
    while ready:
        i = heapq.heappop(ready)[2]
        seq.append(i)
        for j in after[i]:
            waits[j] -= 1
            if not waits[j]:
                heapq.heappush(ready, key[j])
    if len(seq) < len(phases):     # a cycle: processes met them in different orders
        seq = sorted(range(len(phases)), key=lambda i: key[i])
    return {i: pos for pos, i in enumerate(seq)}


def _phase(ops, p, detail, c, lower):
    """One phase's entry from its aggregates `c` (lists by phase) and, when
    its processes differ, from its bursts (`detail(p)`: a PhaseBursts)."""
    npr = c["count"][p]
    weight = c["weight"][p]
    lo_rank, hi_rank = c["rank_lo"][p], c["rank_hi"][p]
    ranks = (f"{lo_rank}" if npr == 1 else f"{lo_rank}-{hi_rank}") if hi_rank - lo_rank + 1 == npr \
        else format_ranks(detail(p).ranks())
    if c["uniform"][p]:
        uniform, rep, sizes = True, c["first_rep"][p], [c["first_first_size"][p]]
        rs = rs_min = rs_max = sizes[0]
    else:                                    # processes differ: group them by pattern
        sig = detail(p).patterns()
        uniform = all(x == sig[0] for x in sig)
        rep = sig[0][1] if len({r for _, r in sig}) == 1 else 1
        sizes = list(sig[0][0]) * (sig[0][1] // rep)   # the lowest rank's stand for the phase
        per = [sum(x) * (r // rep) for x, r in sig]
        rs, rs_min, rs_max = (sum(per) // npr, min(per), max(per)) if not uniform else \
            (sum(sizes), sum(sizes), sum(sizes))
    cl, ch = c["coll_lo"][p], c["coll_hi"][p]
    phase = {
        "id": 0, "file": c["first_group"][p], "operation": "write" if c["first_write"][p] else "read",
        "routine": ops.routines[c["first_called"][p]] or None,
        "interface": interface(ops.routines[c["first_called"][p]]) if ops.routines[c["first_called"][p]]
        else None,
        "collective": None if cl != ch or cl < 0 else bool(cl),
        "np": npr, "ranks": ranks, "iop": len(sizes), "request_sizes": sizes,
        "rs": int(rs), "rs_min": int(rs_min), "rs_max": int(rs_max),
    }
    if not uniform:
        grp = {}
        for i, (x, r) in zip(detail(p).ranks().tolist(), sig):
            grp.setdefault((x, r), []).append(i)
        phase["rs_groups"] = [{"ranks": format_ranks(rk), "rs": int(sum(x) * (r // rep)),
                               "request_sizes": list(x) * (r // rep)}
                              for (x, r), rk in sorted(grp.items(), key=lambda kv: kv[1][0])]
    known = c["known"][p]
    per_rank = c["per_rank"][p] if known and c["affine"][p] else None
    stride = c["stride_lo"][p] if known and c["const"][p] and \
        c["stride_lo"][p] == c["stride_hi"][p] else None
    offsets = {"first": c["first"][p] if known else None, "per_rank": per_rank, "stride": stride,
               "contiguous": (not c["noncontig"][p]) if known else None}
    nest = detail(p).nest() if known else None
    if nest:
        offsets["nested"] = nest             # every process's: one nest of strides
    if known and c["noncontig"][p] and not c["pieces_unknown"][p]:
        # what MPI-IO meets: pieces this long (collective buffering, data sieving)
        offsets["piece"] = int(round(weight / c["npieces"][p]))
    if known and npr > 1 and per_rank is None:
        firsts = detail(p).starts()
        offsets["starts"] = (firsts - firsts.min()).tolist()
    t0, t1 = c["t0"][p], c["t1"][p]
    clock = c["lc0"][p] >= 0
    phase.update({
        "rep": int(rep), "weight": int(weight),
        "access_mode": MODES[c["mode"][p]] if known else "unknown",
        "offsets": offsets,
        "logical_time": {"first": c["lc0"][p] if clock else None,
                         "comm_between": c["comm_between"][p] if clock else None},
        "start_s": t0, "end_s": t1, "duration_s": max(t1 - t0, 0.0),
        "io_time_s": float(c["busy"][p]),
        "bandwidth_Bps": weight / (t1 - t0) if t1 > t0 else None,
        "gap_s": c["gap_s"][p],
        "gap_comm": c["gap_comm"][p] if c["gap_comm"][p] >= 0 else None,
    })
    if phase["collective"] and npr > 1 and math.isfinite(c["early"][p]) and c["early"][p] > 0:
        phase["done_early_s"] = float(c["early"][p])
    if phase["collective"] and npr > 1 and math.isfinite(c["skew"][p]):
        phase["arrival_skew_s"] = float(c["skew"][p])
    phase["compute_s"] = float(c["compute"][p])
    if phase["collective"] and lower:
        agg = _aggregators(lower, phase, detail(p).ranks(), detail(p).busy())
        if agg is not None:
            phase["aggregators"] = agg
    if phase["operation"] == "read" and ops.has_reread:
        phase["reread_bytes"] = int(c["reread"][p])
    # where its buffers sat: one offset for all, or else the lowest rank's (its request
    # sizes stand for the phase's too); absent when unknown or mixed within that rank
    boff = c["buf_lo"][p] if c["buf_lo"][p] == c["buf_hi"][p] else c["first_buffer_offset"][p]
    if boff >= 0:
        phase["buffer_offset"] = int(boff)
    if c["meta"][p]:
        phase["metadata"] = True         # a library's own, between its data (metadata_ops)
    if c["solo"][p]:
        phase["own_open"] = True         # through opens of one process each (dropped for unique files)
    if phase["operation"] == "write" and c["synced"][p]:
        phase["synced"] = True           # every process synced the file after its writes
    return phase


def _release_freed_memory():
    """Give the heap freed by the spent operations back to the system: they
    were many small arrays, and the bursts' large arrays cannot reuse it."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _file_stats(ops, of_path, ng):
    """Per file group: the highest byte accessed + 1, and the processes that accessed it."""
    rows = ops.file_rows
    acc = rows["accessed"]
    g = of_path[rows["path"][acc]]
    keep = g >= 0                        # a path no group holds (not opened) counts nowhere
    g, rank = g[keep], rows["rank"][acc][keep]
    extent = np.full(ng, -1, np.int64)
    np.maximum.at(extent, g, rows["extent"][acc][keep])
    pairs = np.unique(np.stack([g, rank]), axis=1) if len(g) else np.zeros((2, 0), np.int64)
    return extent, np.bincount(pairs[0], minlength=ng).astype(np.int64)


def _files(groups, phases, extent, nprocs):
    files = []
    for gid, g in enumerate(groups):
        ph = [p for p in phases if p["file"] == gid]
        iof = sum(p["weight"] for p in ph if p["operation"] == "write")
        inf = sum(p["weight"] for p in ph if p["operation"] == "read")
        role = "inout" if iof and inf else ("output" if iof else "input")
        by_mode = {}
        for p in ph:
            by_mode[p["access_mode"]] = by_mode.get(p["access_mode"], 0) + p["weight"]
        files.append({
            "id": gid, "name": g["name"], "paths": g["paths"],
            "access_type": "unique" if g["unique"] else "shared",
            "np": int(nprocs[gid]),
            "access_mode": max(sorted(by_mode), key=lambda m: by_mode[m]) if by_mode else "sequential",
            "role": role, "iof_size": int(iof), "inf_size": int(inf),
            "size": int(iof if role != "input" else inf),
            "extent": int(extent[gid]) if extent[gid] >= 0 else None,
        })
    return files


def _application(ops, phases, features, in_calls=()):
    spans = sorted((p["start_s"], p["end_s"]) for p in phases)
    io_time, cur = 0.0, None
    for s, e in spans:  # union of the phases' intervals
        if cur and s <= cur[1]:
            cur[1] = max(cur[1], e)
        else:
            if cur:
                io_time += cur[1] - cur[0]
            cur = [s, e]
    if cur:
        io_time += cur[1] - cur[0]
    return {
        "name": ops.name, "command": list(ops.command), "np": int(ops.np),
        "hosts": dict(ops.hosts), "run_time_s": ops.run_time_s,
        "io_time_s": io_time if phases else 0.0, "features": features,
        # as an application's own timers count it: each process's time in its I/O calls
        "process_io_time_s": {"max": max(in_calls), "mean": sum(in_calls) / len(in_calls)}
        if in_calls and all(map(math.isfinite, in_calls)) else None,
    }
