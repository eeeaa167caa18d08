"""From data operations (an Ops table) to the I/O model: files, bursts, phases.

The rule is docs/commands/analyze.md's; this module is its implementation.
Work on operations and bursts is vectorised with numpy (a trace has millions
of operations); the Python loops are over phases and distinct files.
"""
import re

import numpy as np
import pyarrow.compute as pc

import iomodel
from iomodel.models import FORMAT, VERSION, find_runs, format_ranks, validate

DEFAULT_COMM_GAP = 8        # one group of counts: this many calls still join a burst
DEFAULT_IDLE_S = 0.1        # the same, in idle seconds (Darshan)
COMM_BREAK_RATIO = 4        # a break between two groups of counts
IDLE_BREAK_RATIO = 10


# ------------------------------------------------------------------- files

def unique_group_name(path):
    """out.3.dat -> out.{rank}.dat: the name of a group of unique files."""
    head, tail = path.rsplit("/", 1) if "/" in path else ("", path)
    name = re.sub(r"\d+", "{rank}", tail)
    return f"{head}/{name}" if head else name


def file_groups(path_names, path_idx, comm_size, ranks):
    """Per distinct path (index into path_names): its file-group id; and per
    group: {name, paths, unique}.

    A path opened on communicators of one process by a single rank is unique
    and joins the other unique paths with the same name but for digits."""
    npaths = len(path_names)
    order = np.argsort(path_idx, kind="stable")
    cuts = np.searchsorted(path_idx[order], np.arange(npaths + 1))
    groups, gid = [], {}
    of_path = np.zeros(npaths, np.int64)
    for i in np.argsort(path_names):
        sel = order[cuts[i]:cuts[i + 1]]
        if not len(sel):
            continue
        r = ranks[sel]
        unique = bool((comm_size[sel] == 1).all()) and bool((r == r[0]).all())
        key = ("unique", unique_group_name(path_names[i])) if unique else ("shared", path_names[i])
        if key not in gid:
            gid[key] = len(groups)
            groups.append({"name": key[1], "paths": [], "unique": unique})
        groups[gid[key]]["paths"].append(path_names[i])
        of_path[i] = gid[key]
    return of_path, groups


# ------------------------------------------------------------ threshold

def natural_break(values, ratio):
    """The top of the lower group when the sorted distinct values have a gap
    of at least `ratio` (measured on 1 + v); None when they form one group."""
    v = np.unique(np.asarray(values, float))
    if len(v) < 2:
        return None
    r = (1 + v[1:]) / (1 + v[:-1])
    i = int(np.argmax(r))
    return (v[i], v[i + 1]) if r[i] >= ratio else None


# --------------------------------------------------------------- bursts

def _segments(starts, n):
    """Start indices of segments -> (segment id per element, lengths)."""
    seg = np.zeros(n, np.int64)
    if n:
        seg[starts[1:]] = 1
        seg = np.cumsum(seg)
    return seg, np.diff(np.append(starts, n))


def _all_in_segments(flags, starts):
    """Per segment: are all elements true (empty-safe)."""
    return np.minimum.reduceat(flags.astype(np.int8), starts).astype(bool) if len(starts) else \
        np.zeros(0, bool)


class Bursts:
    """Per-rank runs of repeated operations (step 2 of the rule)."""

    def __init__(self, ops, group_of_op, same):
        """same[i]: operation i continues the burst of operation i - 1."""
        t = ops
        n = len(group_of_op)
        self.rank = t["rank"]
        gap = np.zeros(n, np.int64)
        if n:
            gap[1:] = np.where(t["lclock"][1:] >= 0, (t["lclock"][1:] - t["lclock"][:-1]) % 2**32, 0)
        starts = np.flatnonzero(~same)
        seg, length = _segments(starts, n)
        self.starts, self.length, self.op_burst = starts, length, seg
        size = t["bytes"]
        self.b_rank = self.rank[starts]
        self.b_group = group_of_op[starts]
        self.b_write = t["write"][starts]
        self.b_routine = t["routine"][starts]
        self.b_bytes = np.add.reduceat(size, starts) if n else np.zeros(0, np.int64)
        self.b_t0 = np.minimum.reduceat(t["t_start"], starts) if n else np.zeros(0)
        self.b_t1 = np.maximum.reduceat(t["t_end"], starts) if n else np.zeros(0)
        self.b_lc0 = t["lclock"][starts]
        last = starts + length - 1
        self.b_lc1 = t["lclock"][last]
        inner = np.where(same, gap, 0)
        self.b_comm_between = np.maximum.reduceat(inner, starts) if n else np.zeros(0, np.int64)
        self.b_noncontig = np.maximum.reduceat(t["pieces"], starts) > 1 if n else np.zeros(0, bool)
        self.b_offset0 = t["offset"][starts]
        self.b_known = _all_in_segments(t["offset"] >= 0, starts)
        self._pattern(size, starts, length)
        self._offsets(t["offset"], size, starts, length, same)

    def _pattern(self, size, starts, length):
        """iop, rep and request sizes: the shortest exact period of the sizes."""
        nb = len(starts)
        first = size[starts]
        uniform = _all_in_segments(size == np.repeat(first, length), starts)
        self.iop = np.ones(nb, np.int64)
        self.sizes = {}                       # burst -> tuple of request sizes (iop > 1 only)
        for b in np.flatnonzero(~uniform):    # mixed sizes: few bursts, loop is fine
            s = size[starts[b]: starts[b] + length[b]]
            n = len(s)
            for p in range(2, n + 1):
                if n % p == 0 and np.array_equal(s, np.tile(s[:p], n // p)):
                    break
            self.iop[b] = p
            self.sizes[b] = tuple(int(x) for x in s[:p])
        self.rep = length // self.iop
        self.rs = np.where(self.iop == 1, first, self.b_bytes // np.maximum(self.rep, 1))
        self.first_size = first

    def _offsets(self, offset, size, starts, length, same):
        """Per burst: contiguous run, constant stride between repetitions."""
        n = len(offset)
        d = np.zeros(n, np.int64)
        if n:
            d[1:] = offset[1:] - offset[:-1]
        prev_size = np.zeros(n, np.int64)
        if n:
            prev_size[1:] = size[:-1]
        inside = same  # d[i] is inside the burst for i not at a burst start
        self.contiguous = _all_in_segments(~inside | (d == prev_size), starts)
        second = np.minimum(starts + 1, max(n - 1, 0))
        d1 = np.where(length > 1, d[second], 0)
        self.stride = np.where(length > 1, d1, 0)
        self.const_stride = _all_in_segments(~inside | (d == np.repeat(d1, length)), starts)
        for b, s in self.sizes.items():       # mixed sizes: stride between repetitions
            o = offset[starts[b]: starts[b] + length[b]][:: self.iop[b]]
            dd = np.diff(o)
            self.const_stride[b] = len(dd) == 0 or bool((dd == dd[0]).all())
            self.stride[b] = int(dd[0]) if len(dd) else 0
            sz = size[starts[b]: starts[b] + length[b]]
            self.contiguous[b] = bool((np.diff(offset[starts[b]: starts[b] + length[b]]) == sz[:-1]).all())

    def modes(self):
        """Per burst: 0 sequential, 1 strided, 2 random (step 4 of the rule)."""
        seq = self.contiguous & ~self.b_noncontig
        strided = self.b_noncontig | (self.const_stride & ~seq)
        return np.where(seq, 0, np.where(strided, 1, 2))


MODES = ("sequential", "strided", "random")


# --------------------------------------------------------------- the model

def _table_arrays(ops):
    t = ops.table
    routine = t["routine"].fill_null("").dictionary_encode().combine_chunks()
    path = t["path"].dictionary_encode().combine_chunks()
    coll = t["collective"]
    return {
        "rank": t["rank"].to_numpy().astype(np.int64),
        "path_idx": path.indices.to_numpy().astype(np.int64),
        "path_names": path.dictionary.to_pylist(),
        "write": t["write"].to_numpy(zero_copy_only=False).astype(bool),
        "routine": routine.indices.to_numpy().astype(np.int64),
        "routine_names": routine.dictionary.to_pylist(),
        # 1 collective, 0 independent, -1 unknown
        "collective": np.where(coll.is_null().to_numpy(zero_copy_only=False), -1,
                               coll.fill_null(False).to_numpy(zero_copy_only=False).astype(np.int8)),
        "bytes": t["bytes"].to_numpy().astype(np.int64),
        "offset": t["offset"].to_numpy().astype(np.int64),
        "end": t["end"].to_numpy().astype(np.int64),
        "pieces": t["pieces"].to_numpy().astype(np.int64),
        "t_start": t["t_start"].to_numpy(),
        "t_end": t["t_end"].to_numpy(),
        "lclock": t["lclock"].to_numpy().astype(np.int64),
        "comm_size": t["comm_size"].to_numpy().astype(np.int64),
    }


def joinable(a, group_of_op):
    """Operation i could continue the burst of i - 1: same rank, file, operation, routine."""
    n = len(group_of_op)
    out = np.zeros(n, bool)
    if n:
        out[1:] = ((a["rank"][1:] == a["rank"][:-1]) & (group_of_op[1:] == group_of_op[:-1]) &
                   (a["write"][1:] == a["write"][:-1]) & (a["routine"][1:] == a["routine"][:-1]))
    return out


def consensus(a, group_of_op, join, split):
    """Idle-time splits decided by a vote of the processes: the j-th operation
    of every process on a file (with one operation and routine) starts a new
    burst when it does so on at least half of them.  Without a logical clock,
    the last process to reach a barrier has no idle time before its next
    operation; the others show where the program's steps are."""
    key = (group_of_op * 2 + a["write"]) * (int(a["routine"].max(initial=0)) + 1) + a["routine"]
    n = len(key)
    order = np.lexsort((np.arange(n), key, a["rank"]))
    ks, rs = key[order], a["rank"][order]
    new = np.ones(n, bool)
    new[1:] = (ks[1:] != ks[:-1]) | (rs[1:] != rs[:-1])
    run_start = np.maximum.accumulate(np.where(new, np.arange(n), 0))
    j = np.empty(n, np.int64)
    j[order] = np.arange(n) - run_start          # ordinal within (rank, key)
    vote = key * (int(j.max(initial=0)) + 1) + j
    uniq, inv = np.unique(vote[join], return_inverse=True)
    yes = np.bincount(inv, weights=split[join].astype(float), minlength=len(uniq))
    total = np.bincount(inv, minlength=len(uniq))
    decided = np.zeros(n, bool)
    decided[join] = (yes / np.maximum(total, 1))[inv] >= 0.5
    return decided


def choose_threshold(a, group_of_op, has_clock, max_comm_gap, max_idle_s):
    """The burst threshold and the gap measure it applies to (see the rule)."""
    n = len(group_of_op)
    join = joinable(a, group_of_op)
    if has_clock:
        gap = np.zeros(n, np.int64)
        if n:
            gap[1:] = (a["lclock"][1:] - a["lclock"][:-1]) % 2**32
        if max_comm_gap is not None:
            return gap, int(max_comm_gap), f"given: {max_comm_gap}", "comm"
        brk = natural_break(gap[join], COMM_BREAK_RATIO)
        if brk:
            lo, hi = int(brk[0]), int(brk[1])
            return gap, lo, (f"auto: the communication calls between consecutive operations fall in "
                             f"two groups, up to {lo} and from {hi}; more than {lo} apart starts a "
                             f"new burst"), "comm"
        vals = np.unique(gap[join])
        seen = f"(all {int(vals[0])})" if len(vals) == 1 else \
            (f"({int(vals.min())} to {int(vals.max())})" if len(vals) else "(no consecutive operations)")
        return gap, DEFAULT_COMM_GAP, (f"auto: the communication calls between consecutive "
                                       f"operations form one group {seen}; default "
                                       f"{DEFAULT_COMM_GAP}"), "comm"
    idle = np.zeros(n)
    if n:
        idle[1:] = np.maximum(a["t_start"][1:] - a["t_end"][:-1], 0)
    if max_idle_s is not None:
        return idle, float(max_idle_s), f"given: {max_idle_s} s", "idle"
    brk = natural_break(idle[join] * 1e6, IDLE_BREAK_RATIO)  # in microseconds
    if brk:
        lo = brk[0] / 1e6
        return idle, lo, (f"auto: idle times between consecutive operations fall in two groups, up "
                          f"to {brk[0] / 1e6:.6g} s and from {brk[1] / 1e6:.6g} s"), "idle"
    return idle, DEFAULT_IDLE_S, f"auto: idle times form one group; default {DEFAULT_IDLE_S} s", "idle"


def build_model(ops, max_comm_gap=None, max_idle_s=None):
    """The I/O model (a dict in the docs/model-format.md format) of an Ops."""
    a = _table_arrays(ops)
    n = len(a["rank"])
    of_path, groups = file_groups(a["path_names"], a["path_idx"], a["comm_size"], a["rank"])
    group_of_op = of_path[a["path_idx"]] if n else np.zeros(0, np.int64)
    has_clock = bool(n) and bool((a["lclock"] >= 0).all())
    gap, threshold, rule, measure = choose_threshold(a, group_of_op, has_clock, max_comm_gap, max_idle_s)
    join = joinable(a, group_of_op)
    split = gap > threshold
    if measure == "idle":
        split = consensus(a, group_of_op, join, split)
    b = Bursts(a, group_of_op, join & ~split)
    phases, order = _phases(a, b, groups)
    files = _files(a, groups, phases, group_of_op)
    weight = sum(p["weight"] for p in phases)
    model = {
        "format": FORMAT, "version": VERSION,
        "application": _application(ops, phases),
        "source": dict(ops.source),
        "analysis": {
            "max_comm_gap": threshold if measure == "comm" else None,
            "max_idle_s": threshold if measure == "idle" else None,
            "threshold_rule": rule,
            "iomodel_version": iomodel.__version__,
        },
        "files": files,
        "phases": phases,
        "runs": find_runs(phases),
        "order": order,
        "weight": int(weight),
        "storage_capacity": int(sum(f["size"] for f in files)),
    }
    model["source"].setdefault("unavailable", [])
    model["source"].setdefault("inferred", [])
    return validate(model)


def _phases(a, b, groups):
    """Step 3: bursts of different processes at the same point form a phase."""
    nb = len(b.starts)
    # k: occurrence of (group, write, routine) among the rank's bursts
    key = (b.b_group * 2 + b.b_write) * (len(a["routine_names"]) + 1) + b.b_routine
    order = np.lexsort((np.arange(nb), key, b.b_rank))
    k = np.zeros(nb, np.int64)
    if nb:
        ks, kr = key[order], b.b_rank[order]
        new = np.ones(nb, bool)
        new[1:] = (ks[1:] != ks[:-1]) | (kr[1:] != kr[:-1])
        run_start = np.maximum.accumulate(np.where(new, np.arange(nb), 0))
        k[order] = np.arange(nb) - run_start
    pkey = key * (int(k.max()) + 1 if nb else 1) + k
    uniq, phase_of_burst = np.unique(pkey, return_inverse=True)
    modes = b.modes()
    # gaps: since the rank's previous burst (or time zero)
    prev_same_rank = np.zeros(nb, bool)
    if nb:
        prev_same_rank[1:] = b.b_rank[1:] == b.b_rank[:-1]
    prev_end = np.where(prev_same_rank, np.roll(b.b_t1, 1), 0.0)
    prev_lc = np.where(prev_same_rank, np.roll(b.b_lc1, 1), 0)
    gap_s = b.b_t0 - prev_end
    gap_comm = (b.b_lc0 - prev_lc) % 2**32 if (b.b_lc0 >= 0).all() else np.full(nb, -1)
    members = np.argsort(phase_of_burst, kind="stable")
    cuts = np.flatnonzero(np.diff(phase_of_burst[members])) + 1
    out = []
    for sel in np.split(members, cuts) if nb else []:
        sel = sel[np.argsort(b.b_rank[sel], kind="stable")]
        out.append(_phase(a, b, groups, sel, modes, gap_s, gap_comm))
    # number the phases: in the order every process met them, then by first start
    edges = _order_edges(b, phase_of_burst)
    position = _phase_order(out, edges)
    for i, p in enumerate(out):
        p["id"] = position[i] + 1
    out.sort(key=lambda p: p["id"])
    ids = np.array([position[i] + 1 for i in range(len(out))], np.int64)
    order = sorted([int(ids[x]), int(ids[y])] for x, y in edges)
    return out, order


def _phase_order(phases, edges):
    """Position of each phase: a topological order of the per-process
    sequences (deterministic whatever the timing), ties by first start."""
    import networkx as nx
    g = nx.DiGraph()
    g.add_nodes_from(range(len(phases)))
    g.add_edges_from(edges)
    key = {i: (p["start_s"], p["file"], i) for i, p in enumerate(phases)}
    try:
        seq = list(nx.lexicographical_topological_sort(g, key=lambda i: key[i]))
    except nx.NetworkXUnfeasible:  # processes met them in different orders
        seq = sorted(range(len(phases)), key=lambda i: key[i])
    return {i: pos for pos, i in enumerate(seq)}


def _phase(a, b, groups, sel, modes, gap_s, gap_comm):
    ranks = b.b_rank[sel]
    g = int(b.b_group[sel[0]])
    write = bool(b.b_write[sel[0]])
    routine = a["routine_names"][b.b_routine[sel[0]]] or None
    sig = [(b.sizes.get(i, (int(b.first_size[i]),)), int(b.rep[i])) for i in sel]
    npr = len(sel)
    weight = int(b.b_bytes[sel].sum())
    uniform = all(s == sig[0] for s in sig)
    if uniform or len({r for _, r in sig}) == 1:
        rep = sig[0][1]
    else:
        rep = 1  # processes repeat a different number of times: one repetition of each burst
    # the lowest rank's sizes stand for the phase; rs_groups has everyone's
    sizes = list(sig[0][0]) * (sig[0][1] // rep)
    per_rank_rs = [sum(s) * (r // rep) for s, r in sig]
    rs = sum(per_rank_rs) // npr if not uniform else sum(sizes)
    phase = {
        "id": 0, "file": g, "operation": "write" if write else "read", "routine": routine,
        "collective": _collective(a, b, sel), "np": npr, "ranks": format_ranks(ranks),
        "iop": len(sizes), "request_sizes": sizes,
        "rs": int(rs), "rs_min": int(min(per_rank_rs)), "rs_max": int(max(per_rank_rs)),
    }
    if not uniform:
        grp = {}
        for i, (s, r) in zip(ranks, sig):
            grp.setdefault((s, r), []).append(int(i))
        phase["rs_groups"] = [{"ranks": format_ranks(rk), "rs": int(sum(s) * (r // rep)),
                               "request_sizes": list(s) * (r // rep)}
                              for (s, r), rk in sorted(grp.items(), key=lambda x: x[1][0])]
    mode = int(modes[sel].max())
    known = bool(b.b_known[sel].all())
    firsts = b.b_offset0[sel]
    per_rank = None
    if known and npr > 1:
        d = np.diff(firsts)
        per_rank = int(d[0]) if (d == d[0]).all() else None
    strides = b.stride[sel]
    multi = b.rep[sel] > 1
    stride = None
    if known and multi.any() and b.const_stride[sel].all() and (strides[multi] == strides[multi][0]).all():
        stride = int(strides[multi][0])
    offsets = {"first": int(firsts.min()) if known else None, "per_rank": per_rank,
               "stride": stride, "contiguous": bool(not b.b_noncontig[sel].any()) if known else None}
    if known and npr > 1 and per_rank is None:
        offsets["starts"] = [int(x - firsts.min()) for x in firsts]
    t0, t1 = float(b.b_t0[sel].min()), float(b.b_t1[sel].max())
    lc0 = b.b_lc0[sel]
    phase.update({
        "rep": int(rep), "weight": weight,
        "access_mode": MODES[mode] if known else "sequential",
        "offsets": offsets,
        "logical_time": {"first": int(lc0.min()) if (lc0 >= 0).all() else None,
                         "comm_between": int(b.b_comm_between[sel].max()) if (lc0 >= 0).all() else None},
        "start_s": t0, "end_s": t1, "duration_s": max(t1 - t0, 0.0),
        "bandwidth_Bps": weight / (t1 - t0) if t1 > t0 else None,
        "gap_s": float(gap_s[sel].min()),
        "gap_comm": int(gap_comm[sel].min()) if (gap_comm[sel] >= 0).all() else None,
    })
    return phase


def _collective(a, b, sel):
    vals = np.unique(a["collective"][b.starts[sel]])
    return None if len(vals) != 1 or vals[0] < 0 else bool(vals[0])


def _order_edges(b, burst_phase):
    """Pairs (x, y): phase y follows phase x on some rank."""
    if len(burst_phase) < 2:
        return []
    same = b.b_rank[1:] == b.b_rank[:-1]
    src, dst = burst_phase[:-1][same], burst_phase[1:][same]
    keep = src != dst
    if not keep.any():
        return []
    return [(int(x), int(y)) for x, y in np.unique(np.stack([src[keep], dst[keep]], axis=1), axis=0)]


def _files(a, groups, phases, group_of_op):
    ng = len(groups)
    ends = np.where(a["offset"] >= 0, a["end"], -1)
    extent = np.full(ng, -1, np.int64)
    np.maximum.at(extent, group_of_op, ends)
    pairs = np.unique(group_of_op * (int(a["rank"].max(initial=0)) + 1) + a["rank"])
    nprocs = np.bincount(pairs // (int(a["rank"].max(initial=0)) + 1), minlength=ng)
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


def _application(ops, phases):
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
        "io_time_s": io_time if phases else 0.0, "features": ops.features(),
    }
