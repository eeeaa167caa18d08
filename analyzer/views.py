"""Map accesses through MPI file views to absolute byte ranges, vectorised.

A view is (disp, etype size, filetype blocks, filetype extent).  An access
starts at byte `start` of the view's data stream (its etype offset times the
etype size) and moves `length` bytes; the data stream is the filetype's
blocks, tiled every `extent` bytes from `disp`.  All accesses of one view are
mapped together with numpy: no loop over events.
"""
import numpy as np


def _locator(blocks, size):
    """(blocks, cumulative data bytes, the tile's data bytes, locate) of a
    view: locate(x) is the global block number (tile * n + block) holding
    data byte x."""
    blocks = np.asarray(blocks, np.int64).reshape(-1, 2)
    cum = np.concatenate([[0], np.cumsum(blocks[:, 1])])
    size = cum[-1] if size is None else size
    n = len(blocks)

    def locate(x):
        tile = x // size
        return tile * n + np.searchsorted(cum, x - tile * size, side="right") - 1
    return blocks, cum, size, locate


def span_through_view(start, length, disp, blocks, extent, size=None):
    """Per access (length > 0), without making its pieces: its first byte in
    the file, its end, and how many of the filetype's blocks it reaches (its
    pieces before those that touch are merged)."""
    blocks, cum, size, locate = _locator(blocks, size)
    start, length = np.asarray(start, np.int64), np.asarray(length, np.int64)
    n = len(blocks)
    if n == 0 or size <= 0:     # no data in the view: no piece, nowhere (as map_through_view)
        none = np.full(len(start), -1, np.int64)
        return none, none.copy(), np.zeros(len(start), np.int64)

    def byte(x):        # the file offset of data byte x
        tile, j = np.divmod(locate(x), n)
        return disp + tile * extent + blocks[j, 0] + (x - tile * size - cum[j])
    g0, g1 = locate(start), locate(start + length - 1)
    return byte(start), byte(start + length - 1) + 1, g1 - g0 + 1


def map_through_view(start, length, disp, blocks, extent, size=None):
    """Byte ranges of accesses through one view.

    start, length: int64 arrays (data-stream bytes).  blocks: (n, 2) int64
    array of (offset, length) within the filetype: all its blocks, or, with
    `size` (the filetype's data bytes), its first ones, enough for every
    access's bytes within a tile.  Returns (index, offset, length) arrays:
    for each piece, the access it belongs to and its absolute file range;
    adjacent pieces of one access are merged, pieces are in data-stream order.
    """
    start = np.asarray(start, np.int64)
    length = np.asarray(length, np.int64)
    keep = np.flatnonzero(length > 0)
    blocks, cum, size, locate = _locator(blocks, size)
    if len(keep) == 0 or len(blocks) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    n = len(blocks)
    s, e = start[keep], start[keep] + length[keep]
    g0, g1 = locate(s), locate(e - 1)
    counts = g1 - g0 + 1
    which = np.repeat(np.arange(len(keep)), counts)
    first = np.repeat(np.cumsum(counts) - counts, counts)
    g = np.repeat(g0, counts) + (np.arange(len(which)) - first)
    tile, j = np.divmod(g, n)
    piece_start = tile * size + cum[j]
    ds = np.maximum(piece_start, s[which])
    de = np.minimum(piece_start + blocks[j, 1], e[which])
    off = disp + tile * extent + blocks[j, 0] + (ds - piece_start)
    ln = de - ds
    # merge pieces of the same access that touch
    new = np.ones(len(off), bool)
    new[1:] = (which[1:] != which[:-1]) | (off[1:] != off[:-1] + ln[:-1])
    heads = np.flatnonzero(new)
    return keep[which[heads]], off[heads], np.add.reduceat(ln, heads)


def contiguous(blocks, extent):
    """True when the filetype is one block filling its extent (no holes)."""
    blocks = np.asarray(blocks).reshape(-1, 2)
    return len(blocks) == 1 and blocks[0, 0] == 0 and blocks[0, 1] == extent
