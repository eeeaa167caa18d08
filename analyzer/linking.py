"""Link each rank's events to their file opens, views and completions, and
resolve every data access to absolute byte ranges: numpy per rank, no loop
over events (the loops are over opens, views and ordered calls)."""
from dataclasses import dataclass

import numpy as np

from .tracefile import F_COMPLETE, F_ERROR, F_NOPOS, NO_SLOT
from .typemap import MAX_BLOCKS
from .views import contiguous, map_through_view, span_through_view

INT32_MAX = np.iinfo(np.int32).max       # the pieces column's most
PIECES_HELD = MAX_BLOCKS                  # accesses' pieces made at most, per rank or per trace held whole


def piece_budget():
    """A budget of pieces (PIECES_HELD) for resolve_rank, to share among ranks held at once."""
    return [PIECES_HELD]


@dataclass
class RankLinks:
    raw: object             # the RankTrace
    routine: np.ndarray     # index into the trace-wide routine list
    open_idx: np.ndarray    # index into raw.opens, -1 for none
    view_idx: np.ndarray    # index into raw.views, -1 for the default view
    data: np.ndarray        # a data access (not a completion)
    nbytes: np.ndarray      # bytes (completions: those of their post)
    start: np.ndarray       # first byte in the view's data stream
    request: np.ndarray     # post <-> completion seq, -1
    t_complete: np.ndarray  # for posts: end of the completing call


def latest_at_or_before(rec_slot, rec_seq, slot, seq):
    """For each (slot, seq): the index of the last record of that slot whose
    seq is <= seq, or -1.  Records are opens or views (slots are reused)."""
    rec_slot = np.asarray(rec_slot, np.int64)
    rec_seq = np.asarray(rec_seq, np.int64)
    out = np.full(len(slot), -1, np.int64)
    if not len(rec_slot):
        return out
    key = (rec_slot << 44) | rec_seq
    order = np.argsort(key, kind="stable")
    i = np.searchsorted(key[order], (slot << 44) | seq, side="right") - 1
    cand = order[np.clip(i, 0, None)]
    ok = (i >= 0) & (rec_slot[cand] == slot) & (slot != NO_SLOT)
    out[ok] = cand[ok]
    return out


def link_rank(r, routine_index, is_data):
    """routine_index: this rank's op id -> trace-wide routine index."""
    ev, n = r.events, len(r.events)
    rid = routine_index[ev["op"]]
    seq = np.arange(n, dtype=np.int64)
    slot = ev["slot"].astype(np.int64)
    oid = latest_at_or_before([o["slot"] for o in r.opens], [o["seq"] for o in r.opens], slot, seq)
    vid = latest_at_or_before([v["slot"] for v in r.views], [v["seq"] for v in r.views], slot, seq)
    # a view only applies to the open it was set on
    if r.views:
        vseq = np.array([v["seq"] for v in r.views], np.int64)
        oseq = np.array([o["seq"] for o in r.opens] or [0], np.int64)
        stale = (vid >= 0) & ((oid < 0) | (vseq[np.clip(vid, 0, None)] < oseq[np.clip(oid, 0, None)]))
        vid[stale] = -1
    completion = (ev["flags"] & F_COMPLETE) != 0
    data = is_data[rid] & ~completion
    # nonblocking I/O: a completion's offset is the seq of its post
    request = np.full(n, -1, np.int64)
    t_complete = np.full(n, np.nan)
    post = ev["offset"][completion]
    linked = (post >= 0) & (post < n)
    ci, pi = np.flatnonzero(completion)[linked], post[linked]
    request[ci], request[pi] = pi, ci
    t_complete[pi] = r.t_end[ci]
    nbytes = ev["bytes"].copy()
    nbytes[ci] = ev["bytes"][pi]
    etype = np.array([v["etype_size"] for v in r.views] + [1], np.int64)  # [-1]: default view
    start = ev["offset"] * etype[vid]
    return RankLinks(r, rid, oid, vid, data, nbytes, start, request, t_complete)


def apply_ordered(links, is_ordered):
    """An ordered call (MPI_File_write_ordered, ...) records the shared pointer
    before the collective call; rank r's data starts after the bytes of the
    lower ranks of the file's communicator in that same call, the k-th ordered
    call on the file.  The call's start is the lowest pointer its ranks saw:
    ROMIO's ranks take and move the pointer in turn, so a rank that asks late
    may see it moved by lower ranks already; none can move it before rank 0
    has asked."""
    groups = {}
    for li, l in enumerate(links):
        kth = {}
        for e in np.flatnonzero(l.data & is_ordered[l.routine] & (l.open_idx >= 0)):
            o = l.raw.opens[l.open_idx[e]]
            k = kth[o["path"]] = kth.get(o["path"], -1) + 1
            groups.setdefault((o["path"], k), []).append((o["comm_rank"], li, e))
    for members in groups.values():
        before = min((links[li].start[e] for _, li, e in members if links[li].start[e] >= 0), default=-1)
        if before < 0:      # no rank knew the pointer (F_NOPOS): nothing to place
            continue
        for _, li, e in sorted(members):
            links[li].start[e] = before
            before += links[li].nbytes[e]


def _within(counts, room):
    """Which accesses' pieces, in order, fit in what is left of the budget
    (room: [pieces], spent here)."""
    fit = np.cumsum(counts) <= room[0]
    room[0] -= int(counts[fit].sum())
    return fit


def resolve_rank(l, need=None, direct=True, room=None):
    """Absolute byte ranges of a rank's data accesses through their views.

    Returns (abs_offset, abs_end, resolved, pieces) per event and (seq,
    offset, length) per extent, extents ordered by seq.  A view whose
    description is a regular nest (typenest.py) gives its accesses' offsets,
    ends and pieces arithmetically, and its extents only for the events in
    `need` (a mask; None: every event); direct=False flattens every view.
    The pieces made are at most room[0] (piece_budget(); a reader of several
    ranks shares one): an access past it is one extent, its first byte to its
    end, not resolved (a damaged count of bytes made billions)."""
    room = piece_budget() if room is None else room
    r, n = l.raw, len(l.data)
    abs_off = np.full(n, -1, np.int64)
    abs_end = np.full(n, -1, np.int64)
    resolved = np.zeros(n, bool)
    pieces = np.zeros(n, np.int32)
    flags = r.events["flags"]
    usable = np.flatnonzero(l.data & ((flags & (F_NOPOS | F_ERROR)) == 0) & (l.open_idx >= 0))
    by_view = usable[np.argsort(l.view_idx[usable], kind="stable")]
    cuts = np.flatnonzero(np.diff(l.view_idx[by_view])) + 1
    flat, nested = [], []
    for sel in np.split(by_view, cuts) if len(by_view) else []:
        k = l.view_idx[sel[0]]
        nest, exact = None, True
        if k < 0:
            disp, blocks, extent, exact = 0, None, None, True
        else:
            v = r.views[k]
            disp, extent = v["disp"], v["filetype_extent"]
            nest = v["nest"] if direct and "type_id" in v else None
            if nest is None and "type_id" in v:     # as much of the filetype as the accesses need
                blocks, capped, undecoded = v.blocks_upto(_data_needed(l, sel, v["filetype_size"]))
                exact = not (capped or undecoded)
            elif nest is None:
                blocks = v["blocks"]
                exact = not (v["capped"] or v["undecoded"])
        resolved[sel] = exact
        if nest is not None:
            keep = sel[l.nbytes[sel] > 0]
            first, end, count = nest.span(l.start[keep], l.nbytes[keep])
            abs_off[keep], abs_end[keep], pieces[keep] = disp + first, disp + end, np.minimum(count, INT32_MAX)
            want = keep if need is None else keep[need[keep]]
            fit = _within(pieces[want], room)
            take, over = want[fit], want[~fit]
            if len(take):
                j, o, ln = nest.pieces(l.start[take], l.nbytes[take], disp)
                nested.append((take[j], o, ln))
            nested.append((over, abs_off[over], abs_end[over] - abs_off[over]))
            resolved[over] = False
        elif blocks is None or not exact or contiguous(blocks, extent):
            keep = sel[l.nbytes[sel] > 0]  # contiguous (approximated when not exact)
            flat.append((keep, disp + l.start[keep], l.nbytes[keep]))
        else:
            keep = sel[l.nbytes[sel] > 0]
            first, end, count = span_through_view(l.start[keep], l.nbytes[keep], disp, blocks, extent,
                                                  v["filetype_size"])
            fit = _within(count, room)
            take, over = keep[fit], keep[~fit]
            j, o, ln = map_through_view(l.start[take], l.nbytes[take], disp, blocks, extent,
                                        v["filetype_size"])
            flat += [(take[j], o, ln), (over, first[~fit], (end - first)[~fit])]
            resolved[over] = False
            pieces[over] += np.minimum(count[~fit] - 1, INT32_MAX - 1).astype(np.int32)   # the blocks it reaches
    w, o, ln = _by_event(flat)
    if len(w):
        first = np.ones(len(w), bool)
        first[1:] = w[1:] != w[:-1]
        abs_off[w[first]] = o[first]
        np.maximum.at(abs_end, w, o + ln)
        pieces += np.bincount(w, minlength=n).astype(np.int32)
    if nested:
        w, o, ln = _by_event(flat + nested)
    return abs_off, abs_end, resolved, pieces, (w, o, ln)


def _data_needed(l, sel, size):
    """The data bytes of one tile of a view's filetype its accesses `sel` reach
    (the filetype's size where one crosses a tile's end): the most of its
    blocks they need."""
    if size <= 0:
        return None
    s = l.start[sel]
    end = s + np.maximum(l.nbytes[sel], 1) - (s // size) * size
    return int(min(size, end.max())) if len(end) else 1


def _by_event(parts):
    """(event, offset, length) parts as one set of arrays, by event (stable)."""
    if not parts:
        return (np.zeros(0, np.int64),) * 3
    w, o, ln = (np.concatenate(x) for x in zip(*parts))
    order = np.argsort(w, kind="stable")
    return w[order], o[order], ln[order]
