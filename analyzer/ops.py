"""The analyzer's input: the data operations of an application, whatever the source.

A trace (through `ops_from_trace`, which streams the rank files) and a Darshan
log (analyzer/darshan.py) both become an `Ops`: per rank, numpy columns of its
data operations in call order (`RankOps`), plus the application's metadata.
The phase finder (analyzer/phases.py) reads only this.  `Ops.table` shows the
same as one pyarrow table (OPS_SCHEMA), built on demand:

    rank        int32    MPI_COMM_WORLD rank
    path        string   file path as the application named it
    write       bool     write (else read)
    routine     string   MPI routine (null: unknown)
    collective  bool     (null: unknown)
    bytes       int64    bytes moved
    offset      int64    first absolute byte in the file (-1: unknown)
    end         int64    one past the last byte (-1: unknown; from a trace, only
                         for operations that are one contiguous range)
    pieces      int32    contiguous ranges the access covers (0: unknown)
    t_start     float64  seconds since time zero
    t_end       float64  when it completed (nonblocking: at its Wait/Test/_end)
    lclock      int64    communication calls the rank made before it (-1: unknown)
    comm_size   int32    size of the communicator the file was opened on (-1: unknown;
                         from a trace, only 1 is kept: the analyzer needs no more)
    pointer     string   explicit / individual / shared / ordered (null: unknown)
    nonblocking bool     (null: unknown)
    buffer_offset int16  where its memory buffer sat within 4 KiB (null: unknown; a
                         trace records it, a Darshan log does not)
"""
import functools
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

OPS_SCHEMA = pa.schema([
    ("rank", pa.int32()), ("path", pa.string()), ("write", pa.bool_()), ("routine", pa.string()),
    ("collective", pa.bool_()), ("bytes", pa.int64()), ("offset", pa.int64()), ("end", pa.int64()),
    ("pieces", pa.int32()), ("t_start", pa.float64()), ("t_end", pa.float64()),
    ("lclock", pa.int64()), ("comm_size", pa.int32()), ("pointer", pa.string()),
    ("nonblocking", pa.bool_()), ("buffer_offset", pa.int16()),
])

FEATURES = ("explicit_offsets", "individual_pointers", "shared_pointers", "blocking",
            "nonblocking", "collective", "independent")
RANK_COLUMNS = ("path", "write", "routine", "collective", "bytes", "offset", "pieces",
                "t_start", "t_end", "lclock")


@dataclass
class RankOps:
    """One rank's data operations, in call order, as numpy columns (48 bytes
    an operation), and what the analyzer needs of its files."""
    rank: int
    path: np.ndarray        # int32 index into Ops.paths
    write: np.ndarray       # bool
    routine: np.ndarray     # int16 index into Ops.routines ("" = unknown)
    collective: np.ndarray  # int8: 1, 0, -1 unknown
    bytes: np.ndarray       # int64
    offset: np.ndarray      # int64, -1 unknown
    pieces: np.ndarray      # int32, 0 unknown
    t_start: np.ndarray     # float64
    t_end: np.ndarray       # float64
    lclock: np.ndarray      # uint32 (Ops.has_clock False: unknown, zeros)
    extent: dict            # path index -> one past the highest byte accessed (-1 unknown)
    single: dict            # path index -> every open of it was on a one-process communicator
    reread: np.ndarray = None  # bool: it reads back what the rank wrote in the same open
                               # (analyzer/reread.py); None: opens unknown (Darshan)
    buffer_offset: np.ndarray = None  # int16: its buffer's address mod 4096, -1 unknown;
                                      # None: none known (Darshan, version-1 traces)
    solo: np.ndarray = None    # bool: the open it went through was on a one-process
                               # communicator (rank 0's own MPI_COMM_SELF open of a
                               # shared file); None: unknown
    lower: dict = None         # what MPI-IO read and wrote underneath (_lower), or None
    synced: np.ndarray = None  # bool: a write the rank then synced (fsync, fdatasync,
                               # MPI_File_sync on its file before its next data access); None: none
    called: np.ndarray = None  # int16: the routine called, where `routine` is the one it counts
                               # as in a burst (trace.burst_routine: fputc's is fwrite); None: the same
    fresh: np.ndarray = None   # bool: the rank deleted or truncated its file since its last access
                               # to it (_fresh); None: never

    def __len__(self):
        return len(self.write)


class Ops:
    # a Darshan log's syncs per written file, from its counters (analyzer/darshan.py,
    # mark_synced); None for a trace, whose syncs are per operation (RankOps.synced)
    syncs = None

    def __init__(self, table, name, command, np, hosts, run_time_s=None, source=None,
                 final_lclock=None, ranks=None, paths=None, routines=None):
        """From a table (OPS_SCHEMA, Darshan) or from per-rank columns (traces)."""
        self._table = table
        self.name, self.command, self.np, self.hosts = name, list(command), np, hosts
        self.run_time_s = run_time_s
        self.source = source or {}
        self.final_lclock = final_lclock
        self.has_clock = table is None or (len(table) > 0 and _compute().min(table["lclock"]).as_py() >= 0)
        if ranks is None:
            ranks, paths, routines = _split_table(table)
        self.ranks, self.paths, self.routines = ranks, paths, routines
        # which reads reread is known only when every rank's opens are
        self.has_reread = bool(ranks) and all(r.reread is not None for r in ranks)

    def __len__(self):
        return sum(len(r) for r in self.ranks)

    # computed from the ranks when first read; the parallel analysis sets them
    # from its workers' lists instead (analyzer/parallel.py)
    @functools.cached_property
    def file_rows(self):
        """The ranks' files as rank_file_rows gives them."""
        return rank_file_rows(self.ranks)

    @functools.cached_property
    def used(self):
        """(routine indices, collectivity values) of the ranks' operations, as ranks_used."""
        return ranks_used(self.ranks)

    @property
    def table(self):
        if self._table is None:
            self._table = _join_ranks(self)
        return self._table

    def features(self):
        from .trace import routine_traits
        routine, coll = self.used
        traits = [routine_traits(n) for n in {self.routines[i] for i in routine.tolist()} - {""}]

        def known(flag):
            return any(t[flag] for t in traits) if traits else None
        ptr = {t["pointer"] for t in traits}
        return {
            "explicit_offsets": "explicit" in ptr if traits else None,
            "individual_pointers": "individual" in ptr if traits else None,
            "shared_pointers": bool(ptr & {"shared", "ordered"}) if traits else None,
            "blocking": any(not (t["nonblocking"] or t["split"]) for t in traits) if traits else None,
            "nonblocking": any(t["nonblocking"] or t["split"] for t in traits) if traits else None,
            "collective": None if (coll < 0).any() or not len(coll) else bool((coll == 1).any()),
            "independent": None if (coll < 0).any() or not len(coll) else bool((coll == 0).any()),
        } if traits or len(coll) else {k: None for k in FEATURES}


def rank_file_rows(ranks):
    """One row per (rank, path index) a rank opened or accessed, as arrays:
    rank, path, single (1: every open of it on a one-process communicator,
    0: not, -1: not opened), accessed, and extent (one past the highest byte
    accessed, -1 unknown or not accessed)."""
    rows = [(r.rank, q, int(r.single[q]) if q in r.single else -1, q in r.extent, r.extent.get(q, -1))
            for r in ranks for q in sorted(r.single.keys() | r.extent.keys())]
    cols = list(zip(*rows)) or [(), (), (), (), ()]
    return {"rank": np.array(cols[0], np.int64), "path": np.array(cols[1], np.int64),
            "single": np.array(cols[2], np.int8), "accessed": np.array(cols[3], bool),
            "extent": np.array(cols[4], np.int64)}


def ranks_used(ranks):
    """(the routine indices, the collectivity values) the ranks' operations have."""
    def union(arrays, dtype):
        arrays = [a for a in arrays if len(a)]
        if not arrays:
            return np.zeros(0, dtype)
        if min(int(a.min()) for a in arrays) < 0:
            return np.unique(np.concatenate(arrays))
        seen = np.zeros(max(int(a.max()) for a in arrays) + 1, bool)    # small values: marks, no sort
        for a in arrays:
            seen[a] = True
        return np.flatnonzero(seen).astype(arrays[0].dtype)
    return (union([r.routine for r in ranks], np.int16), union([r.collective for r in ranks], np.int8))


def _split_table(table):
    """An OPS_SCHEMA table -> per-rank columns (rows already sorted by rank)."""
    path = table["path"].dictionary_encode().combine_chunks()
    routine = table["routine"].fill_null("").dictionary_encode().combine_chunks()
    coll = table["collective"]
    cols = {
        "path": path.indices.to_numpy().astype(np.int32),
        "write": table["write"].to_numpy(zero_copy_only=False).astype(bool),
        "routine": routine.indices.to_numpy().astype(np.int16),
        "collective": np.where(coll.is_null().to_numpy(zero_copy_only=False), -1,
                               coll.fill_null(False).to_numpy(zero_copy_only=False)).astype(np.int8),
        **{k: table[k].to_numpy() for k in ("bytes", "offset", "t_start", "t_end")},
        "lclock": np.maximum(table["lclock"].to_numpy(), 0).astype(np.uint32),
        "pieces": table["pieces"].to_numpy().astype(np.int32),
        "buffer_offset": table["buffer_offset"].fill_null(-1).to_numpy().astype(np.int16),
    }
    end = table["end"].to_numpy()
    comm_size = table["comm_size"].to_numpy()
    rank = table["rank"].to_numpy()
    order = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[order], np.unique(rank), side="left").tolist() + [len(rank)]
    ranks = []
    for i, r in enumerate(np.unique(rank)):
        sel = order[bounds[i]:bounds[i + 1]]
        p = cols["path"][sel]
        extent = {int(q): int(end[sel][p == q].max()) for q in np.unique(p)}
        single = {int(q): bool((comm_size[sel][p == q] == 1).all()) for q in np.unique(p)}
        ranks.append(RankOps(int(r), **{k: v[sel] for k, v in cols.items()},
                             extent=extent, single=single, solo=comm_size[sel] == 1))
    return ranks, path.dictionary.to_pylist(), routine.dictionary.to_pylist()


def _compute():
    """pyarrow.compute, imported where used: importing it takes a share of every analysis's start."""
    import pyarrow.compute as pc
    return pc


def _join_ranks(ops):
    """Per-rank columns -> one OPS_SCHEMA table."""
    from .trace import routine_traits
    pc = _compute()
    cat = {k: np.concatenate([getattr(r, k) for r in ops.ranks]) if ops.ranks else np.zeros(0)
           for k in RANK_COLUMNS}
    rank = np.concatenate([np.full(len(r), r.rank, np.int32) for r in ops.ranks]) if ops.ranks \
        else np.zeros(0, np.int32)
    routines = ops.routines or [""]
    cat["routine"] = np.concatenate([r.routine if r.called is None else r.called for r in ops.ranks]) \
        if ops.ranks else cat["routine"]
    traits = [routine_traits(n) if n else None for n in routines]
    ptr = pa.array([t["pointer"] if t else None for t in traits], pa.string())
    nonb = pa.array([(t["nonblocking"] or t["split"]) if t else None for t in traits], pa.bool_())
    rid = pa.array(cat["routine"].astype(np.int32))
    coll = cat["collective"].astype(np.int8)
    # per operation here: its end when it is one contiguous range, and the
    # communicator size as far as the analyzer kept it (1, else -1: unknown)
    end = np.where((cat["offset"] >= 0) & (cat["pieces"] == 1), cat["offset"] + cat["bytes"], -1)
    bufoff = np.concatenate([r.buffer_offset if r.buffer_offset is not None
                             else np.full(len(r), -1, np.int16) for r in ops.ranks]) if ops.ranks \
        else np.zeros(0, np.int16)
    single = np.concatenate([r.solo if r.solo is not None else
                             np.array([r.single.get(int(q), False) for q in r.path], bool)
                             for r in ops.ranks]) if ops.ranks else np.zeros(0, bool)
    return pa.table({
        "rank": pa.array(rank, pa.int32()),
        "path": pa.DictionaryArray.from_arrays(pa.array(cat["path"].astype(np.int32)),
                                               pa.array(ops.paths, pa.string())).cast(pa.string()),
        "write": pa.array(cat["write"].astype(bool)),
        "routine": pa.array([routines[i] or None for i in cat["routine"]], pa.string())
        if len(routines) < 2 else pc.take(pa.array([r or None for r in routines], pa.string()), rid),
        "collective": pa.array(coll == 1, mask=coll < 0),
        "bytes": pa.array(cat["bytes"].astype(np.int64)),
        "offset": pa.array(cat["offset"].astype(np.int64)),
        "end": pa.array(end.astype(np.int64)),
        "pieces": pa.array(cat["pieces"].astype(np.int32)),
        "t_start": pa.array(cat["t_start"].astype(np.float64)),
        "t_end": pa.array(cat["t_end"].astype(np.float64)),
        "lclock": pa.array(cat["lclock"].astype(np.int64) if ops.has_clock
                           else np.full(len(rank), -1, np.int64)),
        "comm_size": pa.array(np.where(single, 1, -1).astype(np.int32)),
        "pointer": pc.take(ptr, rid),
        "nonblocking": pc.take(nonb, rid),
        "buffer_offset": pa.array(bufoff, pa.int16(), mask=bufoff < 0),
    }, schema=OPS_SCHEMA)


def _extents(path, end):
    """path index -> the highest end among the operations on it."""
    if not len(path):
        return {}
    counts = np.bincount(path)
    present = np.flatnonzero(counts)
    if len(present) == 1:           # the common case: no sort
        return {int(present[0]): int(end.max())}
    # grouped by path (a stable sort) and reduced a group at a time (ufunc.at is slow)
    starts = np.concatenate(([0], np.cumsum(counts[present])[:-1]))
    m = np.maximum.reduceat(end[np.argsort(path, kind="stable")], starts)
    return dict(zip(present.tolist(), m.tolist()))


def _written_and_read(l, is_write, nopens):
    """Per event: is it a data access through an open that both writes and
    reads (only those can reread, so only theirs need each piece's range)."""
    data = l.data & (l.open_idx >= 0)
    wr = is_write[l.routine]
    both = (np.bincount(l.open_idx[data & wr], minlength=max(nopens, 1)) > 0) & \
        (np.bincount(l.open_idx[data & ~wr], minlength=max(nopens, 1)) > 0)
    return data & both[np.maximum(l.open_idx, 0)]


def _extents_of(sel, ext_ev, ext_off, ext_len):
    """The extents (contiguous absolute ranges, by event index, sorted) of the
    selected events `sel` (sorted), renumbered to their position in `sel`."""
    if not len(ext_ev):             # the common case: no open both writes and reads
        return np.zeros(0, np.intp), ext_off, ext_len
    pos = np.searchsorted(sel, ext_ev)
    hit = pos < len(sel)
    hit[hit] = sel[pos[hit]] == ext_ev[hit]
    return pos[hit], ext_off[hit], ext_len[hit]


def _trait_arrays(routines):
    """Per routine index (and one more, for none): what its name says."""
    from .trace import routine_traits
    from .trace import POSIX_READS, POSIX_WRITES, UNDER_MPI
    traits = [routine_traits(n) for n in routines]
    base = [n[:-len(UNDER_MPI)] if n.endswith(UNDER_MPI) else None for n in routines]
    return {k: np.array([bool(t[k]) for t in traits] + [False], bool)
            for k in ("data", "write", "collective")} | \
        {"ordered": np.array([t["pointer"] == "ordered" for t in traits] + [False], bool),
         "mpi": np.array([t["interface"] == "MPI-IO" for t in traits] + [False], bool),
         # a read or write MPI-IO made underneath a call (IOMODEL_UNDER_MPI=1)
         "lower": np.array([b in POSIX_READS | POSIX_WRITES for b in base] + [False], bool),
         "lower_write": np.array([b in POSIX_WRITES for b in base] + [False], bool)}


@dataclass
class _Ordered:
    """An ordered-pointer call, fixed up once every rank has been read."""
    rank_index: int
    op_index: int
    path: str
    comm_rank: int
    k: int
    start: int
    nbytes: int
    view: tuple = field(default=None)   # (disp, blocks, extent) or None: contiguous
    nest: object = None                 # the view's typenest.Nest, when it has one (blocks None)


SYNCS = ("fsync", "fdatasync", "MPI_File_sync")


O_TRUNC = 0o1000     # Linux's open flag; no MPI_MODE_* has this bit (Open MPI's and MPICH's end at 256)


def _fresh(r, sel, path, pindex):
    """Per kept operation (the events `sel`, on the paths `path`): the rank
    deleted its file (MPI_File_delete, unlink) or opened it truncated (a POSIX
    or stdio open with O_TRUNC) since its last access to it: the file's end
    starts again (analyzer/extending.py).  None where the rank did neither."""
    resets = [(x["seq"], x["path"]) for x in r.named if x.get("kind") == 1]
    resets += [(o["seq"], o["path"]) for o in r.opens
               if o["amode"] & O_TRUNC and not r.routines[r.events["op"][o["seq"]]].startswith("MPI_")]
    resets = [(seq, pindex[name]) for seq, name in resets if name in pindex]
    if not resets or not len(sel):
        return None
    # the operations by (path, event), and each reset's next one on its path (one search, however
    # many files a rank opens truncated: a log a step)
    span = int(sel.max()) + 2
    order = np.lexsort((sel, path))
    keys = path[order].astype(np.int64) * span + sel[order]
    seq, q = np.array(resets, np.int64).T
    at = np.searchsorted(keys, q * span + seq, side="right")
    hit = at < len(keys)
    hit[hit] = path[order[at[hit]]] == q[hit]
    out = np.zeros(len(sel), bool)
    out[order[at[hit]]] = True
    return out


def _synced(link, sel, path_of_open, rindex, write):
    """Per kept operation (sel): a write the rank synced, its next call on the
    file a sync before any other data access (IOR's -e); None without syncs."""
    from .tracefile import F_ERROR
    ids = [rindex[n] for n in SYNCS if n in rindex]
    if not ids or not len(sel):
        return None
    is_sync = np.isin(link.routine, ids) & ((link.raw.events["flags"] & F_ERROR) == 0) & \
        (link.open_idx >= 0)
    syncs = np.flatnonzero(is_sync)
    if not len(syncs):
        return None
    k = np.searchsorted(sel, syncs) - 1        # the last kept operation before each sync
    ok = k >= 0
    k, syncs = k[ok], syncs[ok]
    same = path_of_open[link.open_idx[sel[k]]] == path_of_open[link.open_idx[syncs]]
    out = np.zeros(len(sel), bool)
    out[k[same]] = True
    return out & write


def _lower(link, path_of_open, is_lower, is_lower_write):
    """The reads and writes MPI-IO made underneath the rank's calls (traced
    with IOMODEL_UNDER_MPI=1) as columns path, write, t_start, t_end, bytes;
    None when there are none."""
    from .tracefile import F_ERROR
    ev = link.raw.events
    sel = np.flatnonzero(is_lower[link.routine] & ((ev["flags"] & F_ERROR) == 0) & (link.open_idx >= 0))
    if not len(sel):
        return None
    return {"path": path_of_open[link.open_idx[sel]], "write": is_lower_write[link.routine[sel]],
            "t_start": link.raw.t_start[sel], "t_end": link.raw.t_end[sel],
            "bytes": link.nbytes[sel].astype(np.int64)}


def ops_from_trace(trace, name=None, command=None):
    """The data operations of a Trace, read rank file by rank file so that
    memory holds one rank's events at a time (calls that returned an error
    are left out)."""
    read = read_ranks(trace.scan())
    for o, off, npieces, end in place_ordered(read.ordered):
        read.fix((o.rank_index, o.op_index, off, npieces, end))
    read.coverage.add_empty(trace.empty_ranks)
    read.coverage.add_damage(trace.errors)      # read past with partial=True
    return read.ops(trace.path, name, command)


@dataclass
class RanksRead:
    """What read_ranks gathers from a run of rank traces: their operations
    (RankOps, path and routine indices into .paths and .routines, in the order
    first seen) and the application's metadata."""
    ranks: list = field(default_factory=list)
    ordered: list = field(default_factory=list)    # _Ordered, placed once every rank is read
    paths: list = field(default_factory=list)
    routines: list = field(default_factory=list)
    hosts: dict = field(default_factory=dict)      # hostname -> ranks, in the order seen
    finals: dict = field(default_factory=dict)     # rank -> its last logical clock
    fin_end: dict = field(default_factory=dict)    # rank -> when its MPI_Finalize returned
    nranks: int = 0
    first_command: list = None
    coverage: object = None

    def fix(self, fix):
        """An ordered call's place in the file (place_ordered)."""
        rank_index, j, off, npieces, end = fix
        ro = self.ranks[rank_index]
        ro.offset[j], ro.pieces[j] = off, npieces
        q = int(ro.path[j])
        ro.extent[q] = max(ro.extent.get(q, -1), end)

    def ops(self, path, name=None, command=None):
        ranks = sorted(self.ranks, key=lambda r: r.rank)
        source = {"kind": "trace", "path": str(path), "unavailable": [],
                  "inferred": self.coverage.approximations()}
        partial = self.coverage.partial()
        if partial:
            source["partial"] = partial
        from .trace import Trace
        return Ops(None, name or Trace.program_name_of(self.first_command),
                   command or list(self.first_command or []), self.nranks, self.hosts,
                   max(self.fin_end.values(), default=None), source=source,
                   final_lclock=self.finals, ranks=ranks, paths=self.paths, routines=self.routines)


def read_ranks(rank_traces):
    """Each rank trace in turn to its RankOps (RanksRead); ordered-pointer
    calls are left for place_ordered, which needs every rank's."""
    from .coverage import Coverage
    from .linking import link_rank, resolve_rank
    from .reread import reread_mask
    from .trace import burst_routine
    from .tracefile import F_ERROR, F_NOPOS, buffer_offsets
    out = RanksRead(coverage=Coverage())
    routines, paths, ranks, ordered = out.routines, out.paths, out.ranks, out.ordered
    rindex, pindex = {}, {}
    fin_name = "MPI_Finalize"
    for r in rank_traces:
        out.coverage.add(r)
        if any(nm not in rindex for nm in r.routines) or not ranks:
            for nm in r.routines + [burst_routine(x) for x in r.routines]:
                rindex.setdefault(nm, len(routines))
                if len(routines) < len(rindex):
                    routines.append(nm)
            kind = np.array([rindex[burst_routine(x)] for x in routines] + [0], np.int32)
            t = _trait_arrays(routines)
            is_data, is_write, is_coll, is_ordered = t["data"], t["write"], t["collective"], t["ordered"]
            is_mpi = t["mpi"]
            is_lower, is_lower_write = t["lower"], t["lower_write"]
        index = np.array([rindex[nm] for nm in r.routines] or [0], np.int32)
        l = link_rank(r, index, is_data)
        abs_off, abs_end, resolved, pieces, (ext_ev, ext_off, ext_len) = resolve_rank(
            l, need=_written_and_read(l, is_write, len(r.opens)))
        ev = r.events
        # a POSIX or stdio call that moved nothing (a read at the end of the file) is no
        # access; a process's 0-byte share of a collective MPI-IO call is one
        keep = l.data & ((ev["flags"] & F_ERROR) == 0) & (l.open_idx >= 0) & \
            ((l.nbytes > 0) | is_mpi[l.routine])
        sel = np.flatnonzero(keep)
        inexact = int(np.count_nonzero(keep & (l.view_idx >= 0) & ~resolved & (l.nbytes > 0) &
                                       ((ev["flags"] & F_NOPOS) == 0)))
        if inexact:
            out.coverage.inexact[r.rank] = inexact
        for o in r.opens:
            if o["path"] not in pindex:
                pindex[o["path"]] = len(paths)
                paths.append(o["path"])
        path_of_open = np.array([pindex[o["path"]] for o in r.opens] + [-1], np.int32)
        single = {}
        for o in r.opens:
            q = pindex[o["path"]]
            single[q] = single.get(q, True) and o["comm_size"] == 1
        oid = l.open_idx[sel]
        solo_of_open = np.array([o["comm_size"] == 1 for o in r.opens] + [False], bool)
        nonblocking = np.isfinite(l.t_complete[sel])
        t_end = np.where(nonblocking, l.t_complete[sel], r.t_end[sel])
        rid = l.routine[sel]
        coll = is_coll[rid] | ((ev["flags"][sel] & 1) != 0)
        ro = RankOps(
            rank=r.rank, path=path_of_open[oid], write=is_write[rid],
            routine=kind[rid].astype(np.int16), collective=coll.astype(np.int8),
            bytes=l.nbytes[sel], offset=abs_off[sel], pieces=pieces[sel],
            t_start=r.t_start[sel], t_end=t_end, lclock=ev["lclock"][sel].astype(np.uint32),
            extent=_extents(path_of_open[oid], abs_end[sel]), single=single,
            reread=reread_mask(oid, is_write[rid], resolved[sel] & (abs_off[sel] >= 0),
                               *_extents_of(sel, ext_ev, ext_off, ext_len)),
            buffer_offset=buffer_offsets(r.buffers, len(ev["flags"]))[sel] if r.buffers else None,
            synced=_synced(l, sel, path_of_open, rindex, is_write[rid]), solo=solo_of_open[oid],
            fresh=_fresh(r, sel, path_of_open[oid], pindex),
            lower=_lower(l, path_of_open, is_lower, is_lower_write),
            called=rid.astype(np.int16) if (kind[rid] != rid).any() else None)
        # ordered calls: their start depends on the lower ranks' bytes (place_ordered)
        kth = {}
        for j in np.flatnonzero(is_ordered[rid]):
            o = r.opens[oid[j]]
            k = kth[o["path"]] = kth.get(o["path"], -1) + 1
            v = l.view_idx[sel[j]]
            view, nest = None, None
            if v >= 0:
                rv = r.views[v]
                nest = rv["nest"] if "type_id" in rv else None
                view = (rv["disp"], None if nest else rv["blocks"], rv["filetype_extent"])
            ordered.append(_Ordered(len(ranks), int(j), o["path"], o["comm_rank"], k,
                                    int(l.start[sel[j]]), int(l.nbytes[sel[j]]), view, nest))
        ranks.append(ro)
        out.hosts[r.hostname] = out.hosts.get(r.hostname, 0) + 1
        out.finals[r.rank] = r.final_lclock
        fin = rindex.get(fin_name)
        if fin is not None:
            t = r.t_end[l.routine == fin]
            if len(t):
                out.fin_end[r.rank] = float(t.max())
        out.nranks = max(out.nranks, r.nranks)
        if not out.first_command:    # the first rank's that has one (a killed rank 0 may not)
            out.first_command = r.command
    return out


def place_ordered(ordered):
    """Where the ordered-pointer calls (_Ordered, of every rank) fall: rank r's
    data follows that of the lower ranks in the same call, from the lowest
    pointer its ranks saw (linking.apply_ordered says why).  Yields
    (the _Ordered, its offset, pieces, end)."""
    from . import linking
    from .views import contiguous, map_through_view, span_through_view
    groups = {}
    for o in ordered:
        groups.setdefault((o.path, o.k), []).append(o)
    for members in groups.values():
        before = min((o.start for o in members if o.start >= 0), default=-1)
        if before < 0:      # no rank knew the pointer (F_NOPOS): nothing to place
            continue
        for o in sorted(members, key=lambda o: o.comm_rank):
            start = before
            before += o.nbytes
            if o.nest is not None:      # the pointer's byte when no byte moved
                first, last, count = o.nest.span([start], [max(o.nbytes, 1)])
                off = o.view[0] + int(first[0])
                end, npieces = (o.view[0] + int(last[0]), int(count[0])) if o.nbytes else (off, 1)
            elif o.view is None or contiguous(o.view[1], o.view[2]):
                disp = o.view[0] if o.view else 0
                off, end, npieces = disp + start, disp + start + o.nbytes, 1
            elif o.nbytes and (span := span_through_view([start], [o.nbytes], *o.view))[2][0] > linking.PIECES_HELD:
                off, end, npieces = (int(x[0]) for x in span)      # too many pieces to make one by one
            else:
                _, offs, lens = map_through_view([start], [o.nbytes], *o.view)
                if len(offs):
                    off, end, npieces = int(offs[0]), int((offs + lens).max()), len(offs)
                else:       # no byte moved: where the pointer sits in the file
                    _, at, _ = map_through_view([start], [1], *o.view)
                    off = end = int(at[0]) if len(at) else o.view[0] + start
                    npieces = 1
            yield o, off, npieces, end
