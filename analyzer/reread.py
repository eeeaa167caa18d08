"""Reads that read back what the same process wrote in the same open.

Such a read can be served by the client's cache (the kernel page cache, a
FUSE file system's pages, a Lustre client's), while IOR always closes and
reopens the file between its write and its read, and so reads from the
servers.  The analyzer marks these reads so that the model says which read
phases reread (docs/model-format.md, `reread_bytes`) and the replay can keep
the file open between the write and the read.

The rule, per rank and per open of a file: a read is a reread when every
contiguous range it covers (through its view: one range, or the pieces of a
subarray) lies wholly inside the union of the ranges that the rank wrote
through the same open before that open's first read.  A read through a view
the tracer could not decode exactly (capped, or a darray) is not one.
(Writes after the first read are not counted: a pattern that alternates
writes and reads of new data is rare, and counting them would need a union
per read.)
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


def reread_mask(open_idx, write, known, ext_op, ext_off, ext_len):
    """Per operation of one rank (in call order): is it a reread.

    open_idx: the rank's open each operation went through (int, >= 0);
    write: bool; known: bool, its byte ranges are exactly known; ext_op,
    ext_off, ext_len: the contiguous absolute ranges the operations cover
    (ext_op: the operation's index; several ranges for one operation through
    a non-contiguous view)."""
    n_ops = len(write)
    out = np.zeros(n_ops, bool)
    if not n_ops or write.all() or not write.any():
        return out
    # only opens that have both writes and reads can reread (few: a loop is
    # fine); open ids are small, so counts beat np.unique's hashing
    n = int(open_idx.max()) + 1
    both = np.flatnonzero((np.bincount(open_idx[write], minlength=n) > 0)
                          & (np.bincount(open_idx[~write], minlength=n) > 0))
    if not len(both):
        return out
    ext_open, ext_write = open_idx[ext_op], write[ext_op] & known[ext_op]
    ext_read = ~write[ext_op] & known[ext_op]
    for o in both:
        here = np.flatnonzero(open_idx == o)
        first_read = here[np.argmax(~write[here])]
        w = np.flatnonzero((ext_open == o) & ext_write & (ext_op < first_read))
        r = np.flatnonzero((ext_open == o) & ext_read)
        if not len(w) or not len(r):
            continue
        ms, me = _merged(ext_off[w], ext_off[w] + ext_len[w])
        a, b = ext_off[r], ext_off[r] + ext_len[r]
        k = np.searchsorted(ms, a, side="right") - 1  # the range that starts at or before a
        inside = (k >= 0) & (b <= me[np.maximum(k, 0)])
        # a read rereads when it covers some range and every one is inside
        covered = np.bincount(ext_op[r], minlength=n_ops) > 0
        outside = np.bincount(ext_op[r][~inside], minlength=n_ops) > 0
        out |= covered & ~outside
    return out
