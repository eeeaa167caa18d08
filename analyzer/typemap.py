"""A file view's byte ranges from its filetype's description (the trace's type
records, docs/trace-format.md): the constructor tree the tracer read with
MPI_Type_get_envelope / MPI_Type_get_contents, flattened here with numpy the
first time a view's pieces are needed, as the tracer's own flattening does
(tracer/typeflat.c): blocks of (offset, length) in type-map order, empty ones
dropped, adjacent ones merged, a type whose lower bound is 0 and extent its
size one block.
"""
import numpy as np

# the trace's combiner codes (tracer/runtime.h, IOM_T_*)
NAMED, DUP, CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, \
    STRUCT, SUBARRAY, RESIZED = range(12)
COMBINERS = ("named", "dup", "contiguous", "vector", "hvector", "indexed", "hindexed",
             "indexed_block", "hindexed_block", "struct", "subarray", "resized")
# pieces a view may flatten to (128 MiB of int64 pairs); beyond, none are kept and the view
# is marked capped (mapped as contiguous, as any view not decoded exactly)
MAX_BLOCKS = 1 << 23


class DescriptionError(ValueError):
    """A description that does not hold together (a child missing, counts that
    disagree with the record): the trace is damaged."""


def check_counts(comb, ints, na, nd):
    """Raise DescriptionError unless a record's integers, addresses and types are
    as many as MPI_Type_get_contents gives for its combiner (MPI 4.0, 5.1.13)."""
    if comb >= len(COMBINERS):
        raise DescriptionError(f"combiner {comb}, which this iomodel does not know")
    n = int(ints[0]) if len(ints) else -1
    want = {NAMED: (0, 0, 0), DUP: (0, 0, 1), CONTIGUOUS: (1, 0, 1), VECTOR: (3, 0, 1),
            HVECTOR: (2, 1, 1), INDEXED: (2 * n + 1, 0, 1), HINDEXED: (n + 1, n, 1),
            INDEXED_BLOCK: (n + 2, 0, 1), HINDEXED_BLOCK: (2, n, 1), STRUCT: (n + 1, n, n),
            SUBARRAY: (3 * n + 2, 0, 1), RESIZED: (0, 2, 1)}[comb]
    if (len(ints), na, nd) != want or n < -1:
        raise DescriptionError(f"a {COMBINERS[comb]} type with {len(ints)} integers, {na} addresses "
                               f"and {nd} types, not {want[0]}, {want[1]} and {want[2]}")


MAX_SIZE = 1 << 62            # bytes a type may hold: past this no MPI type describes memory
UNDEFINED = -32766            # MPI_UNDEFINED: MPI_Type_size of a type past 2 GiB (both ABIs)


def check_type(comb, size, ints, addrs, kids, types):
    """Raise DescriptionError unless a type record describes a type MPI could
    make: counts and block lengths not negative, a subarray's subsizes and starts
    within its sizes, and a size that is its children's as its constructor
    makes it (MPI 4.0, 5.1.2 to 5.1.8): a damaged record is refused, not
    turned into a view no application had."""
    if size == UNDEFINED:           # a size MPI_Type_size could not give: the rest is checked
        size = None
    elif not 0 <= size <= MAX_SIZE:
        raise DescriptionError(f"a {COMBINERS[comb]} type of size {size}")
    if comb == NAMED:
        return
    ch = [types[k]["size"] for k in kids]
    n = int(ints[0]) if len(ints) else 0
    vals = [int(x) for x in ints]
    if comb == CONTIGUOUS:
        want, counts = n * ch[0], [n]
    elif comb in (VECTOR, HVECTOR):
        want, counts = vals[0] * vals[1] * ch[0], vals[:2]
    elif comb in (INDEXED, HINDEXED):
        want, counts = sum(vals[1:1 + n]) * ch[0], vals[1:1 + n]
    elif comb in (INDEXED_BLOCK, HINDEXED_BLOCK):
        want, counts = n * vals[1] * ch[0], vals[:2]
    elif comb == STRUCT:
        want, counts = sum(b * c for b, c in zip(vals[1:1 + n], ch)), vals[1:1 + n]
    elif comb == SUBARRAY:
        sizes, subs, starts = vals[1:1 + n], vals[1 + n:1 + 2 * n], vals[1 + 2 * n:1 + 3 * n]
        if n < 1 or vals[1 + 3 * n] not in (0, 1) or any(
                not (sz >= 1 and 0 <= sb <= sz and 0 <= st <= sz - sb) for sz, sb, st in zip(sizes, subs, starts)):
            raise DescriptionError(f"a subarray of sizes {sizes}, subsizes {subs} and starts {starts} "
                                   f"(order {vals[1 + 3 * n] if len(vals) > 3 * n + 1 else '?'}), "
                                   "which MPI would not make")
        want, counts = ch[0], []
        for sb in subs:
            want *= sb
    else:                                   # DUP, RESIZED
        want, counts = ch[0], []
    if any(c < 0 for c in counts):
        raise DescriptionError(f"a {COMBINERS[comb]} type with a negative count or block length ({counts})")
    if size is not None and UNDEFINED not in ch and size != want:
        raise DescriptionError(f"a {COMBINERS[comb]} type of size {size}, where its constructor makes "
                               f"{want} from its parts")


def merge(off, ln):
    """Blocks in order: empty ones dropped, each run of adjacent ones one block."""
    keep = ln > 0
    off, ln = off[keep], ln[keep]
    if len(off) < 2:
        return off, ln
    starts = np.flatnonzero(np.concatenate(([True], off[1:] != off[:-1] + ln[:-1])))
    return off[starts], np.add.reduceat(ln, starts)


def repeat(child, bases):
    """The child's blocks at each of `bases` in turn (type-map order)."""
    off, ln = child
    if len(bases) * len(off) > MAX_BLOCKS:
        raise OverflowError
    if len(off) == 1 and off[0] == 0 and len(bases) > 1 and np.all(np.diff(bases) == ln[0]):
        return np.array([bases[0]], np.int64), np.array([ln[0] * len(bases)], np.int64)
    return (np.add.outer(np.asarray(bases, np.int64), off).ravel(),
            np.tile(ln, len(bases)))


def arange(n):
    """0 .. n-1, refused past MAX_BLOCKS before anything is allocated."""
    if n > MAX_BLOCKS:
        raise OverflowError
    return np.arange(max(0, n), dtype=np.int64)


def runs(displs, counts, step):
    """Start of each element of blocks of counts[i] elements at displs[i], step apart."""
    counts = np.asarray(counts, np.int64)
    counts = np.where(counts > 0, counts, 0)
    total = int(counts.sum())
    if total > MAX_BLOCKS:
        raise OverflowError
    first = np.repeat(np.asarray(displs, np.int64), counts)
    within = arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return first + within * step


def _subarray(node, child, child_ext):
    ints = node["ints"]
    n = int(ints[0])
    if n < 1 or len(ints) < 3 * n + 2:
        raise DescriptionError(f"a subarray of {n} dimensions with {len(ints)} integers")
    sizes, subs, starts, order = ints[1:1 + n], ints[1 + n:1 + 2 * n], ints[1 + 2 * n:1 + 3 * n], ints[1 + 3 * n]
    # order as the trace codes it: 0 C (the last dimension fastest), 1 Fortran
    dims = list(range(n - 1, -1, -1)) if order == 0 else list(range(n))     # fastest first
    stride = np.zeros(n, np.int64)
    stride[dims[0]] = child_ext
    for a, b in zip(dims, dims[1:]):
        stride[b] = stride[a] * int(sizes[a])
    base = int(np.dot(np.asarray(starts, np.int64), stride))
    # a contiguous element: the run along the fastest dimension grows over each one covered whole
    off, ln = child
    whole = len(off) == 1 and off[0] == 0 and ln[0] == child_ext
    k, count = 0, int(subs[dims[0]])
    if whole:
        while k + 1 < n and subs[dims[k]] == sizes[dims[k]]:
            k += 1
            count *= int(subs[dims[k]])
    starts_ = np.array([base], np.int64)
    for d in reversed(dims[k + 1:]):                                        # slowest first
        if len(starts_) * int(subs[d]) > MAX_BLOCKS:
            raise OverflowError
        starts_ = np.add.outer(starts_, arange(int(subs[d])) * stride[d]).ravel()
    if whole:
        return starts_, np.full(len(starts_), count * child_ext, np.int64)
    if len(starts_) * count > MAX_BLOCKS:
        raise OverflowError
    return repeat(child, np.add.outer(starts_, arange(count) * child_ext).ravel())


def _node_blocks(node, kids):
    """A node's blocks from its children's ((offsets, lengths), extent)."""
    c, ints, addrs = node["comb"], node["ints"], node["addrs"]
    if c == NAMED:
        return np.array([0], np.int64), np.array([node["size"]], np.int64)
    if not kids:
        raise DescriptionError(f"a {COMBINERS[c]} type without its element type")
    child, ext = kids[0]
    if c in (DUP, RESIZED):
        return child
    if c == CONTIGUOUS:
        return repeat(child, arange(int(ints[0])) * ext)
    if c == VECTOR:
        count, blen, stride = (int(x) for x in ints[:3])
        return repeat(child, runs(arange(count) * stride * ext, np.full(len(arange(count)), blen), ext))
    if c == HVECTOR:
        count, blen = (int(x) for x in ints[:2])
        return repeat(child, runs(arange(count) * int(addrs[0]), np.full(len(arange(count)), blen), ext))
    count = int(ints[0])
    if c == INDEXED:
        return repeat(child, runs(ints[1 + count:1 + 2 * count].astype(np.int64) * ext, ints[1:1 + count], ext))
    if c == HINDEXED:
        return repeat(child, runs(addrs[:count], ints[1:1 + count], ext))
    if c == INDEXED_BLOCK:
        displs = ints[2:2 + count].astype(np.int64)
        return repeat(child, runs(displs * ext, np.full(len(displs), int(ints[1])), ext))
    if c == HINDEXED_BLOCK:
        return repeat(child, runs(addrs[:count], np.full(len(addrs[:count]), int(ints[1])), ext))
    if c == STRUCT:
        parts = [repeat(kids[i][0], runs([addrs[i]], [ints[1 + i]], kids[i][1])) for i in range(count)]
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    if c == SUBARRAY:
        return _subarray(node, child, ext)
    raise DescriptionError(f"combiner {c}, which this iomodel does not know")


def flatten(types, root, memo=None):
    """(blocks as an (n, 2) int64 array of offset and length, capped) of type `root`
    of a rank's type records {id: node}: as the tracer's iom_flatten.  memo: the
    rank's types flattened so far, by id, kept across calls."""
    memo = {} if memo is None else memo

    def blocks(tid, depth=0):
        if tid in memo:
            return memo[tid]
        node = types.get(tid)
        if node is None or depth > 64:
            raise DescriptionError(f"type {tid} is not in the trace's type records before its use")
        kids = [(blocks(k, depth + 1), types[k]["extent"]) for k in node["kids"]]
        memo[tid] = merge(*_node_blocks(node, kids))
        return memo[tid]

    top = types.get(root)
    if top is None:
        raise DescriptionError(f"type {root} is not in the trace's type records before its use")
    if top["lb"] == 0 and top["extent"] == top["size"]:
        off, ln = np.array([0], np.int64), np.array([top["size"]], np.int64)
        capped = False
    else:
        try:
            off, ln = blocks(root)
            capped = False
        except OverflowError:
            off, ln, capped = np.zeros(0, np.int64), np.zeros(0, np.int64), True
    off, ln = merge(off, ln)
    return np.stack([off, ln], axis=1) if len(off) else np.zeros((0, 2), np.int64), capped
