"""A file view's byte ranges from its filetype's description (the trace's type
records, docs/trace-format.md): the constructor tree the tracer read with
MPI_Type_get_envelope / MPI_Type_get_contents, flattened here with numpy the
first time a view's pieces are needed, as the tracer's own flattening does
(tracer/typeflat.c): blocks of (offset, length) in type-map order, empty ones
dropped, adjacent ones merged, a type whose lower bound is 0 and extent its
size one block.
"""
from contextvars import ContextVar

import numpy as np

# the trace's combiner codes (tracer/runtime.h, IOM_T_*)
NAMED, DUP, CONTIGUOUS, VECTOR, HVECTOR, INDEXED, HINDEXED, INDEXED_BLOCK, HINDEXED_BLOCK, \
    STRUCT, SUBARRAY, RESIZED = range(12)
COMBINERS = ("named", "dup", "contiguous", "vector", "hvector", "indexed", "hindexed",
             "indexed_block", "hindexed_block", "struct", "subarray", "resized")
# pieces a view may flatten to (128 MiB of int64 pairs); beyond, none are kept and the view
# is marked capped (mapped as contiguous, as any view not decoded exactly)
MAX_BLOCKS = 1 << 23
# what the flattening under way may still make: MAX_BLOCKS, or less of a rank's budget (flatten)
_CAP = ContextVar("blocks_cap", default=MAX_BLOCKS)


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
    if len(bases) * len(off) > _CAP.get():
        raise OverflowError
    if len(off) == 1 and off[0] == 0 and len(bases) > 1 and np.all(np.diff(bases) == ln[0]):
        return np.array([bases[0]], np.int64), np.array([ln[0] * len(bases)], np.int64)
    return (np.add.outer(np.asarray(bases, np.int64), off).ravel(),
            np.tile(ln, len(bases)))


def arange(n):
    """0 .. n-1, refused past the cap (MAX_BLOCKS) before anything is allocated."""
    if n > _CAP.get():
        raise OverflowError
    return np.arange(max(0, n), dtype=np.int64)


def runs(displs, counts, step):
    """Start of each element of blocks of counts[i] elements at displs[i], step apart."""
    counts = np.asarray(counts, np.int64)
    counts = np.where(counts > 0, counts, 0)
    total = int(counts.sum())
    if total > _CAP.get():
        raise OverflowError
    first = np.repeat(np.asarray(displs, np.int64), counts)
    within = arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return first + within * step


def _need(limit, unit):
    """Elements of `unit` data bytes that cover the first `limit` bytes (None: all)."""
    return None if limit is None or unit <= 0 else -(-limit // unit)


def _first(n, need):
    """The first min(n, need) of n (need None: all)."""
    return n if need is None else min(n, need)


def _subarray(node, child, child_ext, need):
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
    # the runs, slowest dimensions outermost: the first ones that hold `need` elements
    slow = list(reversed(dims[k + 1:]))
    shape = [int(subs[d]) for d in slow]
    nruns = 1
    for x in shape:
        nruns *= x
    nruns = _first(nruns, _need(need, count))
    idx = np.unravel_index(arange(nruns), shape) if shape else ()
    starts_ = np.full(nruns, base, np.int64)
    for d, i in zip(slow, idx):
        starts_ += i.astype(np.int64) * stride[d]
    if whole:
        lens = np.full(len(starts_), count * child_ext, np.int64)
        if need is not None and len(lens):         # the last run cut to the elements needed
            lens[-1] = (need - (len(lens) - 1) * count) * child_ext if need < len(lens) * count else lens[-1]
        return starts_, lens
    if len(starts_) * count > _CAP.get():
        raise OverflowError
    return repeat(child, _cut(np.add.outer(starts_, arange(count) * child_ext).ravel(), need))


def _cut(bases, need):
    """The first `need` element starts (all: None)."""
    return bases if need is None else bases[:need]


def _node_blocks(node, kid, kid_size, limit):
    """A node's blocks covering at least its first `limit` data bytes (None:
    all), from its children's: kid(i, limit) -> ((offsets, lengths), extent),
    kid_size(i) their sizes.  A child is cut short only where one of it is
    all that is needed."""
    c, ints, addrs = node["comb"], node["ints"], node["addrs"]
    if c == NAMED:
        return np.array([0], np.int64), np.array([node["size"]], np.int64)
    if not node["kids"]:
        raise DescriptionError(f"a {COMBINERS[c]} type without its element type")
    if c in (DUP, RESIZED):
        return kid(0, limit)[0]
    if c == STRUCT:
        count, parts, left = int(ints[0]), [], limit
        for i in range(count):
            if left is not None and left <= 0:
                break
            size = kid_size(i)
            need = _need(left, size)
            reps = _first(int(ints[1 + i]), need)
            child, ext = kid(i, left if need == 1 else None)
            parts.append(repeat(child, runs([addrs[i]], [reps], ext)))
            left = None if left is None or size <= 0 else left - reps * size
        if not parts:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    need = _need(limit, kid_size(0))              # elements of the child that cover `limit`
    child, ext = kid(0, limit if need == 1 else None)
    if c == CONTIGUOUS:
        return repeat(child, arange(_first(int(ints[0]), need)) * ext)
    if c == SUBARRAY:
        return _subarray(node, child, ext, need)
    if c in (VECTOR, HVECTOR):
        count, blen = int(ints[0]), int(ints[1])
        step = int(ints[2]) * ext if c == VECTOR else int(addrs[0])
        count = _first(count, _need(need, blen))
        return repeat(child, _cut(runs(arange(count) * step, np.full(count, blen), ext), need))
    count = int(ints[0])
    if c in (INDEXED, HINDEXED):
        blens = ints[1:1 + count].astype(np.int64)
        displs = ints[1 + count:1 + 2 * count].astype(np.int64) * ext if c == INDEXED else addrs[:count]
    else:                                       # INDEXED_BLOCK, HINDEXED_BLOCK
        displs = ints[2:2 + count].astype(np.int64) * ext if c == INDEXED_BLOCK else addrs[:count]
        blens = np.full(len(displs), int(ints[1]), np.int64)
    if need is not None:                        # the blocks up to the one that reaches `need`
        keep = int(np.searchsorted(np.cumsum(np.maximum(blens, 0)), need)) + 1
        blens, displs = blens[:keep], displs[:keep]
    return repeat(child, _cut(runs(displs, blens, ext), need))


RANK_BLOCKS = MAX_BLOCKS        # pieces a rank's types may hold at once (128 MiB of pairs)
MEMO_INNER = 1 << 16            # an inner type kept for the next view up to this many pieces


def flatten(types, root, memo=None, limit=None):
    """(blocks as an (n, 2) int64 array of offset and length, capped) of type `root`
    of a rank's type records {id: node}: as the tracer's iom_flatten, or, with
    `limit`, the first blocks only, those that hold the type's first `limit`
    data bytes (or more): accesses through a view need no more of its
    filetype than they move.  memo: the rank's types flattened so far, by
    id, kept across calls; all they hold together is at most RANK_BLOCKS
    pieces, past which a view is capped too (mapped as contiguous), so that a
    small trace describing huge types cannot take memory without bound (a
    reader holding every rank at once gives all their memos one "budget")."""
    memo = {} if memo is None else memo

    def blocks(tid, lim, depth=0):
        got = memo.get(tid)
        if got is not None and (got[2] is None or (lim is not None and got[2] >= lim)):
            return got[0], got[1]
        node = types.get(tid)
        if node is None or depth > 64:
            raise DescriptionError(f"type {tid} is not in the trace's type records before its use")
        kids = node["kids"]
        off, ln = merge(*_node_blocks(node, lambda i, lm: (blocks(kids[i], lm, depth + 1),
                                                           types[kids[i]]["extent"]),
                                      lambda i: types[kids[i]]["size"], lim))
        if depth and len(off) > MEMO_INNER:     # a large inner type: its parent holds its pieces
            return off, ln
        budget = memo.setdefault("budget", [0])
        held = budget[0] - (len(got[0]) if got is not None else 0) + len(off)
        if held > RANK_BLOCKS:
            raise OverflowError
        budget[0] = held
        memo[tid] = (off, ln, None if lim is None or lim >= max(node["size"], 0) else lim)
        return off, ln

    top = types.get(root)
    if top is None:
        raise DescriptionError(f"type {root} is not in the trace's type records before its use")
    if top["lb"] == 0 and top["extent"] == top["size"]:
        off, ln = np.array([0], np.int64), np.array([top["size"]], np.int64)
        capped = False
    else:
        cap = _CAP.set(max(0, min(MAX_BLOCKS, RANK_BLOCKS - memo.setdefault("budget", [0])[0])))
        try:
            off, ln = blocks(root, limit)
            capped = False
        except OverflowError:
            off, ln, capped = np.zeros(0, np.int64), np.zeros(0, np.int64), True
        finally:
            _CAP.reset(cap)
    off, ln = merge(off, ln)
    return np.stack([off, ln], axis=1) if len(off) else np.zeros((0, 2), np.int64), capped
