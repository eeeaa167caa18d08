"""The bursts grouped into phases (step 3): the k-th bursts with one key of
every process are one phase.

Two layouts behind one interface: per-phase reductions (lo, hi, add), a
per-phase value spread back over the bursts (spread), each phase's bursts
(sel) and the pairs of phases that follow one another on some process
(edges).  Phases are numbered in the order of their keys either way.

- Table: every process has the same sequence of burst keys (BT-IO, IOR,
  S3D-IO, any job whose processes do the same I/O).  The bursts in rank order
  are then a table, a row a process and a column a phase; the reductions run
  down the columns and no burst is sorted or moved.
- Sorted: any other job.  The bursts are sorted by phase, then rank, in
  place, and the reductions run over each phase's stretch (reduceat).
"""
import numpy as np

# phases x phases (or keys x ranks, phases.py) below which a dense table replaces a sort
MAX_DENSE_CELLS = 1 << 25


def group_bursts(b, key_of, fields, pair=None, threads=1):
    """The bursts `b` (columns, in rank order) grouped by phase: by their
    burst key (`key_of(columns)`, of the columns `fields`) and their place k
    among the process's bursts of that key.  A Table where the processes'
    sequences of keys are equal; else, after `pair(keys)` (which may move the
    bursts' k where the processes have different numbers of a key), a Sorted,
    which sorts `b` in place (`threads` share that).  The phase key is
    key * kmul + k."""
    grp = table_of(b, key_of, fields)
    if grp is None:
        key = key_of(b)
        if pair is not None:
            pair(key)
        kmul = int(b["k"].max()) + 1
        grp = Sorted(b, key * kmul + b["k"], threads)
        grp.kmul = kmul
    return grp


def table_of(b, key_of, fields):
    """The bursts `b` as a Table (see group_bursts), or None; its kmul set."""
    kmul = int(b["k"].max()) + 1
    grp = Table.of(b, (*fields, "k"), lambda c: key_of(c) * kmul + c["k"])
    if grp is not None:
        grp.kmul = kmul
    return grp


class Table:
    """R processes with the same P burst keys in the same order."""

    @classmethod
    def of(cls, b, fields, pkey_of):
        """A Table of the bursts `b` if every process's have the same values
        of `fields` (what their phase key, `pkey_of(columns)`, is made of) in
        the same order; else None.  Compared a field at a time: no key is made
        for more than the first process's bursts."""
        rank = b["rank"]
        nb = len(rank)
        width = int(np.argmax(rank != rank[0])) or nb     # the first process's bursts
        if nb % width:
            return None
        rows = nb // width
        if rows > 1:
            if not (rank.reshape(rows, width) == rank[::width, None]).all():
                return None
            for f in fields:
                x = b[f].reshape(rows, width)
                if not (x == x[0]).all():
                    return None
        row0 = pkey_of({f: b[f][:width] for f in fields})
        if len(np.unique(row0)) != width:
            return None
        return cls(b, row0, rows)

    def __init__(self, b, row0, rows):
        self.b, self.rows, self.width = b, rows, len(row0)
        self.col = np.argsort(row0, kind="stable")            # phase p is column col[p]
        self.phase_of_col = np.empty(self.width, np.int64)
        self.phase_of_col[self.col] = np.arange(self.width)
        self.keys = row0[self.col]
        self.nph = self.width
        self.count = np.full(self.nph, rows, np.int64)
        self.edges = order_edges({"rank": np.zeros(self.width, np.int32)}, self.phase_of_col, self.nph)

    def s(self, f):
        return self.b[f].reshape(self.rows, self.width)

    def lo(self, x):
        return x.min(axis=0)[self.col]

    def hi(self, x):
        return x.max(axis=0)[self.col]

    def add(self, x):
        return x.sum(axis=0)[self.col]

    def spread(self, v):
        return v[self.phase_of_col]            # a row, broadcast down the table

    def first(self, f):
        """Each phase's lowest rank's value of `f`."""
        return self.b[f][:self.width][self.col]

    def steps(self, off):
        """Per phase: whether the differences of `off` from row to row are all
        the first's (so for one row), and that first (0 for one row)."""
        if self.rows < 2:
            return np.ones(self.nph, bool), np.zeros(self.nph, np.int64)
        d = np.diff(off, axis=0)
        return (d == d[0]).all(axis=0)[self.col], d[0][self.col]

    def affine(self, off):
        """Whether each phase's first offsets are affine in the rank, and the
        step from its first process to its second."""
        steady, step = self.steps(off)
        return steady & (self.rows > 1), step

    def sel(self, p):
        return self.col[p] + self.width * np.arange(self.rows)

    def reindex(self, *dicts):
        """Dicts by a burst's place in rank order, by its place in `b`."""
        return list(dicts)


class Sorted:
    """The bursts sorted by phase, then rank."""

    def __init__(self, b, pkey, threads=1):
        nb = len(pkey)
        order = np.argsort(pkey, kind="stable")
        sk = pkey[order]
        self.head = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
        self.keys = sk[self.head]
        del sk
        self.nph = len(self.head)
        self.count = np.diff(np.r_[self.head, nb])
        self.phase_sorted = np.repeat(np.arange(self.nph), self.count)
        phase_of = np.empty(nb, np.int32 if self.nph < 1 << 31 else np.int64)
        phase_of[order] = self.phase_sorted
        self.edges = order_edges(b, phase_of, self.nph)       # from the bursts in rank order
        del phase_of
        sort_in_place(b, order, threads)
        self.b = b
        self.inverse = np.empty(nb, np.int64)
        self.inverse[order] = np.arange(nb)

    def s(self, f):
        return self.b[f]

    def lo(self, x):
        return np.minimum.reduceat(x, self.head)

    def hi(self, x):
        return np.maximum.reduceat(x, self.head)

    def add(self, x):
        return np.add.reduceat(x, self.head)

    def spread(self, v):
        return v[self.phase_sorted]

    def first(self, f):
        return self.b[f][self.head]

    def affine(self, off):
        nb = len(off)
        d = np.r_[0, np.diff(off)]
        dfirst = d[np.minimum(self.head + 1, nb - 1)]
        inside = np.ones(nb, bool)
        inside[self.head] = False
        ok = self.lo((~inside | (d == dfirst[self.phase_sorted])).astype(np.int8)) == 1
        return ok & (self.count > 1), dfirst

    def sel(self, p):
        return np.arange(self.head[p], self.head[p] + self.count[p])

    def reindex(self, *dicts):
        """(Once: the permutation's memory goes then.)"""
        out = [{int(self.inverse[k]): v for k, v in d.items()} for d in dicts]
        self.inverse = None
        return out


def order_edges(b, phase_of, nphases):
    """Pairs (x, y): phase y follows phase x on some rank (`b` and `phase_of`
    in rank order)."""
    if len(phase_of) < 2:
        return []
    cells = nphases * nphases
    moved = (b["rank"][1:] == b["rank"][:-1]) & (phase_of[:-1] != phase_of[1:])
    if cells < MAX_DENSE_CELLS:
        # a table of every pair (the last cell for none): no sort of millions, and
        # no copies of the bursts' phases (each a fresh page-faulted array)
        pair = np.multiply(phase_of[:-1], nphases, dtype=np.int32)
        pair += phase_of[1:].astype(np.int32, copy=False)
        pair[~moved] = cells
        seen = np.zeros(cells + 1, bool)
        seen[pair] = True
        pairs = np.flatnonzero(seen[:cells])
    else:
        pairs = np.unique(phase_of[:-1][moved].astype(np.int64) * nphases + phase_of[1:][moved])
    return [(int(p // nphases), int(p % nphases)) for p in pairs]


def sort_in_place(b, order, threads=1):
    """Each column of the bursts `b` permuted by `order`, through one scratch
    array per item size: a fresh array per column would be memory the system
    must hand over (and zero) anew, a large share of the analysis of a large
    trace (bench/analyzer_bench.py).  With threads > 1 (`analyze -j`: the
    cores are the analyzer's once its workers are done), each thread permutes
    a share of the columns: np.take releases the GIL."""
    if threads <= 1:
        b.update(_permuted(list(b.items()), order))
        return
    from concurrent.futures import ThreadPoolExecutor
    items = sorted(b.items(), key=lambda kv: -kv[1].dtype.itemsize)
    with ThreadPoolExecutor(threads) as pool:
        for part in pool.map(lambda share: _permuted(share, order), [items[i::threads] for i in range(threads)]):
            b.update(part)


def _permuted(items, order):
    """{name: column permuted by `order`} of the columns `items`, each
    permuted into the memory of one spent before it of its item size."""
    scratch, out = {}, {}             # item size -> a spent column's memory (every column has len(order) rows)
    for f, col in items:
        size = col.dtype.itemsize
        tmp = scratch[size].view(col.dtype) if size in scratch else np.empty(len(col), col.dtype)
        np.take(col, order, out=tmp)
        out[f] = tmp
        scratch[size] = col.view(np.dtype(f"V{size}"))
    return out
