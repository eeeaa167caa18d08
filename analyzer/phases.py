"""From data operations (an Ops) to the I/O model: files, bursts, phases.

The rule is docs/commands/analyze.md's; this module is its implementation.
Operations are handled a rank at a time and reduced to bursts (step 2), all
with numpy; phases (step 3) are found over the bursts of all ranks.  The
Python loops are over ranks, phases and distinct files, never operations.
"""
import re

import numpy as np

import iomodel
from iomodel.models import FORMAT, VERSION, find_runs, format_ranks, validate

DEFAULT_COMM_GAP = 8        # one group of counts: this many calls still join a burst
DEFAULT_IDLE_S = 0.1        # the same, in idle seconds (Darshan)
COMM_BREAK_RATIO = 4        # a break between two groups of counts
IDLE_BREAK_RATIO = 10
MODES = ("sequential", "strided", "random")


# ------------------------------------------------------------------- files

def unique_group_name(path):
    """out.3.dat -> out.{rank}.dat: the name of a group of unique files."""
    head, tail = path.rsplit("/", 1) if "/" in path else ("", path)
    name = re.sub(r"\d+", "{rank}", tail)
    return f"{head}/{name}" if head else name


def file_groups(ops):
    """Per path index: its file-group id; and per group: {name, paths, unique}.

    A path opened on communicators of one process by a single rank is unique
    and joins the other unique paths with the same name but for digits."""
    seen = {}                                    # path -> (ranks, all comm sizes 1)
    for r in ops.ranks:
        for p in np.unique(r.path):
            single = bool((r.comm_size[r.path == p] == 1).all())
            ranks, ones = seen.get(int(p), (set(), True))
            seen[int(p)] = (ranks | {r.rank}, ones and single)
    groups, gid = [], {}
    of_path = np.zeros(max(len(ops.paths), 1), np.int64)
    for i in sorted(seen, key=lambda i: ops.paths[i]):
        ranks, ones = seen[i]
        unique = ones and len(ranks) == 1
        name = ops.paths[i]
        key = ("unique", unique_group_name(name)) if unique else ("shared", name)
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


def _joinable(r, group):
    """Operation i could continue the burst of i - 1: same file, operation, routine."""
    out = np.zeros(len(r), bool)
    out[1:] = (group[1:] == group[:-1]) & (r.write[1:] == r.write[:-1]) & \
        (r.routine[1:] == r.routine[:-1])
    return out


def _gaps(r, clock):
    """Communication calls (or idle seconds) between consecutive operations."""
    if clock:
        g = np.zeros(len(r), np.int64)
        g[1:] = (r.lclock[1:] - r.lclock[:-1]) % 2**32
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
        key = (g * 2 + r.write) * nroutines + r.routine
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


# ------------------------------------------------------------------ bursts

def _all(flags, starts):
    """Per segment starting at `starts`: are all elements true."""
    return np.minimum.reduceat(flags.astype(np.int8), starts).astype(bool) if len(starts) else \
        np.zeros(0, bool)


BURST_FIELDS = ("rank", "group", "write", "routine", "collective", "bytes", "t0", "t1", "lc0",
                "lc1", "comm_between", "noncontig", "offset0", "known", "iop", "rep", "rs",
                "first_size", "contiguous", "stride", "const_stride")


def rank_bursts(r, group, same, gap):
    """Step 2 on one rank: its bursts as arrays (BURST_FIELDS), and the
    request sizes of its bursts of several sizes ({index: tuple})."""
    n = len(r)
    starts = np.flatnonzero(~same)
    length = np.diff(np.append(starts, n))
    size, off = r.bytes, r.offset
    last = starts + length - 1
    b = {
        "rank": np.full(len(starts), r.rank, np.int64), "group": group[starts],
        "write": r.write[starts], "routine": r.routine[starts], "collective": r.collective[starts],
        "bytes": np.add.reduceat(size, starts), "t0": np.minimum.reduceat(r.t_start, starts),
        "t1": np.maximum.reduceat(r.t_end, starts), "lc0": r.lclock[starts], "lc1": r.lclock[last],
        "comm_between": np.maximum.reduceat(np.where(same, gap, 0), starts).astype(np.int64)
        if np.issubdtype(gap.dtype, np.integer) else np.zeros(len(starts), np.int64),
        "noncontig": np.maximum.reduceat(r.pieces, starts) > 1, "offset0": off[starts],
        "known": _all(off >= 0, starts),
    }
    # the pattern: the shortest exact period of the request sizes
    first = size[starts]
    uniform = _all(size == np.repeat(first, length), starts)
    iop = np.ones(len(starts), np.int64)
    mixed = {}
    for k in np.flatnonzero(~uniform):       # bursts of several sizes: few, a loop is fine
        s = size[starts[k]: starts[k] + length[k]]
        p = next(p for p in range(2, len(s) + 1)
                 if len(s) % p == 0 and np.array_equal(s, np.tile(s[:p], len(s) // p)))
        iop[k] = p
        mixed[int(k)] = tuple(int(x) for x in s[:p])
    rep = length // iop
    b.update(iop=iop, rep=rep, first_size=first,
             rs=np.where(iop == 1, first, b["bytes"] // np.maximum(rep, 1)))
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
    return b, mixed


def modes(b):
    """Per burst: 0 sequential, 1 strided, 2 random (step 4 of the rule)."""
    seq = b["contiguous"] & ~b["noncontig"]
    strided = b["noncontig"] | (b["const_stride"] & ~seq)
    return np.where(seq, 0, np.where(strided, 1, 2))


# --------------------------------------------------------------- the model

def build_model(ops, max_comm_gap=None, max_idle_s=None):
    """The I/O model (a dict in the docs/model-format.md format) of an Ops."""
    of_path, groups = file_groups(ops)
    clock = len(ops) > 0 and all((r.lclock >= 0).all() for r in ops.ranks)
    grp = [of_path[r.path] for r in ops.ranks]
    joins = [_joinable(r, g) for r, g in zip(ops.ranks, grp)]
    gaps = [_gaps(r, clock) for r in ops.ranks]
    values = np.unique(np.concatenate([np.unique(g[j]) for g, j in zip(gaps, joins)] or [[]]))
    threshold, rule = choose_threshold(values, clock, max_comm_gap, max_idle_s)
    splits = [g > threshold for g in gaps]
    if not clock and ops.ranks:
        splits = consensus(ops, grp, joins, splits)
    parts, mixed, base = [], {}, 0
    for r, g, j, s, gap in zip(ops.ranks, grp, joins, splits, gaps):
        if not len(r):
            continue
        b, m = rank_bursts(r, g, j & ~s, gap)
        mixed.update({base + k: v for k, v in m.items()})
        base += len(b["rank"])
        parts.append(b)
    del joins, gaps, splits
    bursts = {k: np.concatenate([p[k] for p in parts]) for k in BURST_FIELDS} if parts else \
        {k: np.zeros(0, np.int64) for k in BURST_FIELDS}
    phases, order = _phases(ops, bursts, mixed)
    files = _files(ops, groups, phases, of_path)
    model = {
        "format": FORMAT, "version": VERSION,
        "application": _application(ops, phases),
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
    model["source"].setdefault("unavailable", [])
    model["source"].setdefault("inferred", [])
    return validate(model)


def _phases(ops, b, mixed):
    """Step 3: the k-th burst of each process with the same file, operation
    and routine are one phase."""
    nb = len(b["rank"])
    key = (b["group"] * 2 + b["write"]) * (len(ops.routines) + 1) + b["routine"]
    order = np.lexsort((np.arange(nb), key, b["rank"]))
    k = np.zeros(nb, np.int64)
    if nb:
        ks, kr = key[order], b["rank"][order]
        new = np.ones(nb, bool)
        new[1:] = (ks[1:] != ks[:-1]) | (kr[1:] != kr[:-1])
        run_start = np.maximum.accumulate(np.where(new, np.arange(nb), 0))
        k[order] = np.arange(nb) - run_start
    _, phase_of = np.unique(key * (int(k.max(initial=0)) + 1) + k, return_inverse=True)
    mode = modes(b)
    # gaps: since the rank's previous burst ended (or time zero)
    prev = np.zeros(nb, bool)
    prev[1:] = b["rank"][1:] == b["rank"][:-1]
    gap_s = b["t0"] - np.where(prev, np.roll(b["t1"], 1), 0.0)
    clock = bool((b["lc0"] >= 0).all())
    gap_comm = (b["lc0"] - np.where(prev, np.roll(b["lc1"], 1), 0)) % 2**32 if clock else None
    members = np.argsort(phase_of, kind="stable")   # by phase, then rank (bursts are by rank)
    cuts = np.flatnonzero(np.diff(phase_of[members])) + 1
    out = [_phase(ops, b, sel, mode, mixed, gap_s, gap_comm)
           for sel in (np.split(members, cuts) if nb else [])]
    # number the phases: in the order every process met them, then by first start
    edges = _order_edges(b, phase_of, len(out))
    position = _phase_order(out, edges)
    for i, p in enumerate(out):
        p["id"] = position[i] + 1
    out.sort(key=lambda p: p["id"])
    return out, sorted([position[x] + 1, position[y] + 1] for x, y in edges)


def _order_edges(b, phase_of, nphases):
    """Pairs (x, y): phase y follows phase x on some rank."""
    if len(phase_of) < 2:
        return []
    same = b["rank"][1:] == b["rank"][:-1]
    src, dst = phase_of[:-1][same], phase_of[1:][same]
    keep = src != dst
    pairs = np.unique(src[keep].astype(np.int64) * nphases + dst[keep])
    return [(int(p // nphases), int(p % nphases)) for p in pairs]


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


def _phase(ops, b, sel, mode, mixed, gap_s, gap_comm):
    ranks = b["rank"][sel]
    npr = len(sel)
    weight = int(b["bytes"][sel].sum())
    rep_all = b["rep"][sel]
    simple = not any(int(i) in mixed for i in sel)
    if simple and (b["first_size"][sel] == b["first_size"][sel[0]]).all() and \
            (rep_all == rep_all[0]).all():
        uniform, rep, sizes = True, int(rep_all[0]), [int(b["first_size"][sel[0]])]
    else:                                    # processes differ: group them by pattern
        sig = [(mixed.get(int(i), (int(b["first_size"][i]),)), int(b["rep"][i])) for i in sel]
        uniform = all(x == sig[0] for x in sig)
        rep = sig[0][1] if len({r for _, r in sig}) == 1 else 1
        sizes = list(sig[0][0]) * (sig[0][1] // rep)   # the lowest rank's stand for the phase
    if uniform:
        rs = sum(sizes)
        rs_min = rs_max = rs
    else:
        per_rank = [sum(s) * (r // rep) for s, r in sig]
        rs, rs_min, rs_max = sum(per_rank) // npr, min(per_rank), max(per_rank)
    routine = ops.routines[b["routine"][sel[0]]] or None
    coll = np.unique(b["collective"][sel])
    phase = {
        "id": 0, "file": int(b["group"][sel[0]]),
        "operation": "write" if b["write"][sel[0]] else "read", "routine": routine,
        "collective": None if len(coll) != 1 or coll[0] < 0 else bool(coll[0]),
        "np": npr, "ranks": format_ranks(ranks), "iop": len(sizes), "request_sizes": sizes,
        "rs": int(rs), "rs_min": int(rs_min), "rs_max": int(rs_max),
    }
    if not uniform:
        grp = {}
        for i, (s, r) in zip(ranks, sig):
            grp.setdefault((s, r), []).append(int(i))
        phase["rs_groups"] = [{"ranks": format_ranks(rk), "rs": int(sum(s) * (r // rep)),
                               "request_sizes": list(s) * (r // rep)}
                              for (s, r), rk in sorted(grp.items(), key=lambda x: x[1][0])]
    known = bool(b["known"][sel].all())
    firsts = b["offset0"][sel]
    per_rank = None
    if known and npr > 1:
        d = np.diff(firsts)
        per_rank = int(d[0]) if (d == d[0]).all() else None
    multi = rep_all > 1
    strides = b["stride"][sel][multi]
    stride = int(strides[0]) if known and len(strides) and b["const_stride"][sel].all() and \
        (strides == strides[0]).all() else None
    offsets = {"first": int(firsts.min()) if known else None, "per_rank": per_rank,
               "stride": stride, "contiguous": bool(not b["noncontig"][sel].any()) if known else None}
    if known and npr > 1 and per_rank is None:
        offsets["starts"] = (firsts - firsts.min()).tolist()
    t0, t1 = float(b["t0"][sel].min()), float(b["t1"][sel].max())
    lc0 = b["lc0"][sel]
    clock = bool((lc0 >= 0).all())
    phase.update({
        "rep": int(rep), "weight": weight,
        "access_mode": MODES[int(mode[sel].max())] if known else "sequential",
        "offsets": offsets,
        "logical_time": {"first": int(lc0.min()) if clock else None,
                         "comm_between": int(b["comm_between"][sel].max()) if clock else None},
        "start_s": t0, "end_s": t1, "duration_s": max(t1 - t0, 0.0),
        "bandwidth_Bps": weight / (t1 - t0) if t1 > t0 else None,
        "gap_s": float(gap_s[sel].min()),
        "gap_comm": int(gap_comm[sel].min()) if gap_comm is not None else None,
    })
    return phase


def _files(ops, groups, phases, of_path):
    ng = len(groups)
    extent = np.full(ng, -1, np.int64)
    nprocs = np.zeros(ng, np.int64)
    for r in ops.ranks:
        g = of_path[r.path]
        np.maximum.at(extent, g, np.where(r.offset >= 0, r.end, -1))
        nprocs[np.unique(g)] += 1
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
