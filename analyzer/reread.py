"""Reads that read back what the same process wrote in the same open.

Such a read can be served by the client's cache (the kernel page cache, a
FUSE file system's pages, a Lustre client's), while IOR always closes and
reopens the file between its write and its read, and so reads from the
servers.  The analyzer marks these reads so that the model says which read
phases reread (docs/model-format.md, `reread_bytes`) and the replay can keep
the file open between the write and the read.

The rule, per rank and per open of a file: a read is a reread when it is one
contiguous range wholly inside the union of the ranges that the rank wrote
through the same open before that open's first read.  (Writes after the
first read are not counted: a pattern that alternates writes and reads of
new data is rare, and counting them would need a union per read.)
"""
import numpy as np


def _merged(starts, ends):
    """The union of ranges [starts, ends) as sorted disjoint ranges."""
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]         # a gap before it: a new range
    head = np.flatnonzero(new)
    return s[head], np.maximum.reduceat(e, head)


def reread_mask(open_idx, write, offset, nbytes, pieces):
    """Per operation of one rank (in call order): is it a reread.

    open_idx: the rank's open each operation went through (int, >= 0);
    write: bool; offset: first byte (-1 unknown); nbytes; pieces: contiguous
    ranges the operation covers (1: one range)."""
    out = np.zeros(len(write), bool)
    if not len(write) or write.all() or not write.any():
        return out
    known = (offset >= 0) & (pieces == 1)
    # only opens that have both writes and reads can reread (few: a loop is
    # fine); open ids are small, so counts beat np.unique's hashing
    n = int(open_idx.max()) + 1
    both = np.flatnonzero((np.bincount(open_idx[write], minlength=n) > 0)
                          & (np.bincount(open_idx[~write], minlength=n) > 0))
    for o in both:
        here = np.arange(len(write)) if n == 1 else np.flatnonzero(open_idx == o)
        wr = write[here]
        first_read = here[np.argmax(~wr)]
        w = here[wr & (here < first_read) & known[here]]
        r = here[~wr & known[here]]
        if not len(w) or not len(r):
            continue
        ms, me = _merged(offset[w], offset[w] + nbytes[w])
        a, b = offset[r], offset[r] + nbytes[r]
        k = np.searchsorted(ms, a, side="right") - 1  # the range that starts at or before a
        inside = (k >= 0) & (b <= me[np.maximum(k, 0)])
        out[r] = inside
    return out
