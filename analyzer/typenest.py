"""A file view's pattern read from its filetype's description, without
flattening it: most filetypes real codes set (subarrays, vectors, evenly
spaced indexed blocks, and these nested) are a regular nest, equal blocks at
base + i_1*stride_1 + ... + i_L*stride_L, outermost level first.  From the
nest an access's first byte, end and number of pieces are arithmetic (no
table of the view's pieces, however many it has), and its pieces are made
only for the accesses that need them.

Only nests whose blocks come in increasing order with a gap between each two
(every level's stride past the extent of the levels inside it) are taken:
then the flattening merges nothing, and the nest's blocks are the flattened
view's one for one (analyzer/typemap.py; the property test in
tests/test_typenest.py).  The next tile may start where a tile's last block
ends (a vector not resized does): then an access's pieces that meet there
are one.  Any other description gives None, and the view is flattened.
"""
import functools
import math
from dataclasses import dataclass

import numpy as np

from .typemap import (CONTIGUOUS, DUP, HINDEXED, HINDEXED_BLOCK, HVECTOR, INDEXED, INDEXED_BLOCK,
                      NAMED, RESIZED, STRUCT, SUBARRAY, VECTOR)

# offsets and counts past this are not taken as a nest (int64 arithmetic stays exact)
LIMIT = 1 << 60


@dataclass(frozen=True)
class Nest:
    base: int
    counts: tuple       # per level, outermost first
    strides: tuple      # bytes, per level
    block: int          # bytes of every block
    extent: int         # the filetype's extent: one tile of the view
    touch: bool = False  # a tile's last block ends where the next tile's first begins

    @functools.cached_property
    def nblocks(self):
        return math.prod(self.counts)

    @functools.cached_property
    def size(self):
        return self.nblocks * self.block

    def offsets(self, b):
        """Offset within the filetype of block numbers `b` (type-map order)."""
        rem = np.asarray(b, np.int64)
        off = np.full(len(rem), self.base, np.int64)
        for c, s in zip(reversed(self.counts), reversed(self.strides)):
            rem, digit = np.divmod(rem, c)
            off += digit * s
        return off

    def _locate(self, x):
        """(global block number: tile * nblocks + block, its tile, block, byte
        within it) of data-stream bytes x."""
        tile, r = np.divmod(x, self.size)
        b, w = np.divmod(r, self.block)
        return tile * self.nblocks + b, tile, b, w

    def span(self, start, length):
        """Per access of data-stream bytes [start, start + length), length > 0:
        (first byte, end, pieces) within the view (add its displacement)."""
        start = np.asarray(start, np.int64)
        g0, t0, b0, w0 = self._locate(start)
        g1, t1, b1, w1 = self._locate(start + np.asarray(length, np.int64) - 1)
        first = t0 * self.extent + self.offsets(b0) + w0
        end = t1 * self.extent + self.offsets(b1) + w1 + 1
        return first, end, g1 - g0 + 1 - (t1 - t0 if self.touch else 0)

    def pieces(self, start, length, disp):
        """As views.map_through_view: (index, offset, length) of every piece of
        the accesses, in data-stream order."""
        start = np.asarray(start, np.int64)
        length = np.asarray(length, np.int64)
        keep = np.flatnonzero(length > 0)
        s, e = start[keep], start[keep] + length[keep]
        g0, g1 = self._locate(s)[0], self._locate(e - 1)[0]
        counts = g1 - g0 + 1
        which = np.repeat(np.arange(len(keep)), counts)
        g = np.repeat(g0 - (np.cumsum(counts) - counts), counts) + np.arange(len(which))
        tile, j = np.divmod(g, self.nblocks)
        at = tile * self.size + j * self.block           # the piece's first data byte
        ds = np.maximum(at, s[which])
        de = np.minimum(at + self.block, e[which])
        off = disp + tile * self.extent + self.offsets(j) + (ds - at)
        ln = de - ds
        if not self.touch:
            return keep[which], off, ln
        new = np.ones(len(off), bool)             # pieces of one access across a tile's end
        new[1:] = (which[1:] != which[:-1]) | (off[1:] != off[:-1] + ln[:-1])
        heads = np.flatnonzero(new)
        return keep[which[heads]], off[heads], np.add.reduceat(ln, heads) if len(heads) else ln


def _arith(displs):
    """(first, step) of an arithmetic progression, or None."""
    d = [int(x) for x in displs]
    if not d:
        return None
    step = d[1] - d[0] if len(d) > 1 else 0
    return (d[0], step) if all(b - a == step for a, b in zip(d, d[1:])) else None


def _levels(types, tid, depth=0):
    """(base, [(count, stride), ...] outermost first, block) of type `tid`, or
    None when it is not one regular nest."""
    node = types.get(tid)
    if node is None or depth > 64:
        return None
    c, ints, addrs = node["comb"], node["ints"], node["addrs"]
    if c == NAMED:
        return (0, [], int(node["size"])) if node["size"] > 0 else None
    if not node["kids"]:
        return None
    kid = node["kids"][0]
    inner = _levels(types, kid, depth + 1)
    if inner is None:
        return None
    base, lev, block = inner
    ext = int(types[kid]["extent"])
    if c in (DUP, RESIZED):
        return inner
    if c == CONTIGUOUS:
        return base, [(int(ints[0]), ext)] + lev, block
    if c == VECTOR:
        return base, [(int(ints[0]), int(ints[2]) * ext), (int(ints[1]), ext)] + lev, block
    if c == HVECTOR:
        return base, [(int(ints[0]), int(addrs[0])), (int(ints[1]), ext)] + lev, block
    n = int(ints[0])
    if c in (INDEXED, HINDEXED):
        blens = ints[1:1 + n]
        if n < 1 or (blens != blens[0]).any():
            return None
        blen = int(blens[0])
        ap = _arith(ints[1 + n:1 + 2 * n] * ext if c == INDEXED else addrs[:n])
    elif c in (INDEXED_BLOCK, HINDEXED_BLOCK):
        blen = int(ints[1])
        ap = _arith(ints[2:2 + n] * ext if c == INDEXED_BLOCK else addrs[:n])
    elif c == STRUCT and n == 1:
        blen, ap = int(ints[1]), (int(addrs[0]), 0)
    elif c == SUBARRAY:
        return _subarray(ints, base, lev, block, ext)
    else:
        return None
    if ap is None:
        return None
    return base + ap[0], [(n, ap[1]), (blen, ext)] + lev, block


def _subarray(ints, base, lev, block, ext):
    n = int(ints[0])
    if n < 1 or len(ints) < 3 * n + 2:
        return None
    sizes, subs, starts = ([int(x) for x in ints[1 + k * n:1 + (k + 1) * n]] for k in range(3))
    dims = list(range(n - 1, -1, -1)) if ints[1 + 3 * n] == 0 else list(range(n))   # fastest first
    stride, s = [0] * n, ext
    for d in dims:
        stride[d] = s
        s *= sizes[d]
    first = sum(a * b for a, b in zip(starts, stride))
    return base + first, [(subs[d], stride[d]) for d in reversed(dims)] + lev, block


def _normal(lev, block):
    """Levels of one copy dropped, runs of touching blocks made one block, and
    levels that continue each other made one; None for an empty type."""
    if any(c < 1 for c, _ in lev) or block < 1:
        return None
    lev = [(c, s) for c, s in lev if c > 1]
    changed = True
    while changed:
        changed = False
        if lev and lev[-1][1] == block:              # the innermost level touches: one block
            block *= lev.pop()[0]
            changed = True
        for k in range(len(lev) - 1):
            (c0, s0), (c1, s1) = lev[k], lev[k + 1]
            if s0 == c1 * s1:                        # level k goes on where k + 1 ends
                lev[k:k + 2] = [(c0 * c1, s1)]
                changed = True
                break
    return lev, block


def nest_of(types, root):
    """The Nest of type `root` of a rank's type records {id: node}, or None
    when the description is not one regular, increasing nest with gaps."""
    top = types.get(root)
    got = _levels(types, root)
    if top is None or got is None:
        return None
    base, lev, block = got
    got = _normal(lev, block)
    if got is None:
        return None
    lev, block = got
    extent = int(top["extent"])
    reach = block                                    # bytes from a sub-nest's first block to its end
    for c, s in reversed(lev):
        if s <= reach:                               # out of order, overlapping or touching
            return None
        reach += (c - 1) * s
    nest = Nest(base, tuple(c for c, _ in lev), tuple(s for _, s in lev), block, extent,
                touch=extent == reach)
    if extent < reach or not lev and extent == block or base < 0 or base + reach > LIMIT or nest.size != top["size"] \
            or nest.nblocks > LIMIT:
        return None
    return nest
