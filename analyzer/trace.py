"""A trace directory as Arrow tables: the one entry point for reading traces.

    t = Trace("run1/")          # opens lazily; nothing is read yet
    t.events                    # pyarrow.Table, one row per traced call
    t.files, t.views, t.ranks   # opens, file views, ranks
    t.extents                   # absolute byte ranges of every data access
    t.to_parquet("out/")

Tables are built once, on first use, from per-rank numpy arrays; each access
is resolved to absolute byte ranges through the file view it was made under.
A damaged trace raises TraceError naming the file and byte offset; its
`.partial` attribute is a Trace of everything before the damage
(`Trace(path, partial=True)` gives that directly, with `.errors` listing the
damage).
"""
import functools
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from .tracefile import (F_COLL, F_COMPLETE, F_ERROR, F_NOPOS, F_SAMECALL, NO_SLOT, TraceError,
                        read_rank_file)
from .views import contiguous, map_through_view

TRACE_SUFFIX = ".iot"


def routine_traits(name):
    """What an MPI routine's name says about the access it makes."""
    data = name.startswith("MPI_File_") and ("write" in name or "read" in name) \
        and not name.endswith("_end")
    if "ordered" in name:
        pointer = "ordered"
    elif "shared" in name:
        pointer = "shared"
    elif "_at" in name:
        pointer = "explicit"
    else:
        pointer = "individual"
    return dict(data=data, write=data and "write" in name, read=data and "read" in name,
                pointer=pointer if data else None,
                collective=data and ("_all" in name or "ordered" in name),
                nonblocking=data and name.startswith("MPI_File_i"),
                split=data and name.endswith("_begin"))


class Trace:
    def __init__(self, path, partial=False):
        self.path = Path(path)
        if not self.path.is_dir():
            raise TraceError(str(self.path), None, "no such trace directory")
        self.rank_files = sorted(self.path.glob("rank-*" + TRACE_SUFFIX))
        if not self.rank_files:
            raise TraceError(str(self.path), None, f"no rank-*{TRACE_SUFFIX} files: not an iomodel trace")
        self.partial = partial
        self.errors = []
        self._rank_traces()  # read now: raise (or list in .errors) any damage

    @functools.cached_property
    def _raw(self):
        out = []
        for f in self.rank_files:
            try:
                out.append(read_rank_file(str(f)))
            except TraceError as e:
                self.errors.append(e)
                if e.partial is not None:
                    out.append(e.partial)
        seen = {}
        for r in out:
            if r.rank in seen:
                self.errors.append(TraceError(r.path, 16, f"rank {r.rank} is also in {seen[r.rank]}"))
            seen[r.rank] = r.path
        out = [r for r in out if seen[r.rank] == r.path]
        return sorted(out, key=lambda r: r.rank)

    def _rank_traces(self):
        raw = self._raw
        if self.errors and not self.partial:
            err = self.errors[0]
            err.partial = Trace(self.path, partial=True)
            raise err
        return raw

    # ---------------------------------------------------------------- tables
    @functools.cached_property
    def ranks(self):
        raw = self._rank_traces()
        damaged = {e.path: str(e) for e in self.errors}
        return pa.table({
            "rank": pa.array([r.rank for r in raw], pa.int32()),
            "hostname": [r.hostname for r in raw],
            "pid": pa.array([r.pid for r in raw], pa.int64()),
            "nranks": pa.array([r.nranks for r in raw], pa.int32()),
            "thread_level": pa.array([r.thread_level for r in raw], pa.int32()),
            "events": pa.array([len(r.events) for r in raw], pa.int64()),
            "ended_by": [r.end for r in raw],
            "final_lclock": pa.array([r.final_lclock for r in raw], pa.int64()),
            "damage": [damaged.get(r.path) for r in raw],
            "path": [r.path for r in raw],
        })

    @functools.cached_property
    def _opens(self):
        rows = [dict(o, rank=r.rank) for r in self._rank_traces() for o in r.opens]
        paths = sorted({o["path"] for o in rows})
        return rows, paths

    @property
    def paths(self):
        """Distinct file paths opened, as the application named them."""
        return self._opens[1]

    @functools.cached_property
    def files(self):
        rows, paths = self._opens
        pid = {p: i for i, p in enumerate(paths)}
        return pa.table({
            "open_id": pa.array(range(len(rows)), pa.int64()),
            "rank": pa.array([o["rank"] for o in rows], pa.int32()),
            "file_id": pa.array([pid[o["path"]] for o in rows], pa.int32()),
            "path": [o["path"] for o in rows],
            "amode": pa.array([o["amode"] for o in rows], pa.int32()),
            "comm_size": pa.array([o["comm_size"] for o in rows], pa.int32()),
            "comm_rank": pa.array([o["comm_rank"] for o in rows], pa.int32()),
            "seq": pa.array([o["seq"] for o in rows], pa.int64()),
        })

    @functools.cached_property
    def views(self):
        vrows = [dict(v, rank=r.rank) for r in self._rank_traces() for v in r.views]
        return pa.table({
            "rank": pa.array([v["rank"] for v in vrows], pa.int32()),
            "seq": pa.array([v["seq"] for v in vrows], pa.int64()),
            "open_id": pa.array(self._view_open_ids, pa.int64()),
            "disp": pa.array([v["disp"] for v in vrows], pa.int64()),
            "etype_size": pa.array([v["etype_size"] for v in vrows], pa.int64()),
            "filetype_size": pa.array([v["filetype_size"] for v in vrows], pa.int64()),
            "filetype_extent": pa.array([v["filetype_extent"] for v in vrows], pa.int64()),
            "blocks": pa.array([len(v["blocks"]) for v in vrows], pa.int64()),
            "block_offsets": [v["blocks"][:, 0].tolist() for v in vrows],
            "block_lengths": [v["blocks"][:, 1].tolist() for v in vrows],
            "capped": [v["capped"] for v in vrows],
            "undecoded": [v["undecoded"] for v in vrows],
            "datarep": [v["datarep"] for v in vrows],
        })

    @property
    def events(self):
        return self._tables[0]

    @property
    def extents(self):
        return self._tables[1]

    # ------------------------------------------------------------- building
    @functools.cached_property
    def _view_open_ids(self):
        return self._tables[2]

    @functools.cached_property
    def _tables(self):
        raw = self._rank_traces()
        routines = sorted({n for r in raw for n in r.routines})
        traits = [routine_traits(n) for n in routines]
        cols = {k: [] for k in ("rank", "seq", "routine", "open_id", "flags", "lclock", "offset",
                                "bytes", "t_start", "t_end", "request", "t_complete",
                                "abs_offset", "abs_end", "resolved")}
        ext = {k: [] for k in ("rank", "seq", "file_id", "offset", "length")}
        view_open_ids = []
        rows, paths = self._opens
        pid = {p: i for i, p in enumerate(paths)}
        prep = []
        base = 0
        for r in raw:
            ev, n = r.events, len(r.events)
            gmap = np.array([routines.index(x) for x in r.routines] or [0], np.int32)
            if n and ev["op"].max() >= len(r.routines):
                raise TraceError(r.path, None, "event refers to a routine missing from the routine table")
            rid = gmap[ev["op"]]
            seq = np.arange(n, dtype=np.int64)
            slot = ev["slot"].astype(np.int64)
            # which open each event belongs to: latest open of the same slot before it
            okey = np.array([(o["slot"] << 44) | o["seq"] for o in r.opens], np.int64)
            order = np.argsort(okey, kind="stable")
            ekey = (slot << 44) | seq
            idx = np.searchsorted(okey[order], ekey, side="right") - 1
            oid = np.full(n, -1, np.int64)
            ok = (idx >= 0) & (slot != NO_SLOT)
            cand = order[np.clip(idx, 0, None)] if len(order) else np.zeros(n, np.int64)
            if len(order):
                oslot = np.array([o["slot"] for o in r.opens], np.int64)
                ok &= oslot[cand] == slot
                oid[ok] = cand[ok]
            # which view each event is under: latest set_view on its open before it
            vkey = np.array([(v["slot"] << 44) | v["seq"] for v in r.views], np.int64)
            vorder = np.argsort(vkey, kind="stable")
            vid = np.full(n, -1, np.int64)
            if len(vorder):
                vidx = np.searchsorted(vkey[vorder], ekey, side="right") - 1
                vc = vorder[np.clip(vidx, 0, None)]
                vslot = np.array([v["slot"] for v in r.views], np.int64)
                vseq = np.array([v["seq"] for v in r.views], np.int64)
                oseq = np.array([o["seq"] for o in r.opens] or [0], np.int64)
                vv = (vidx >= 0) & (oid >= 0) & (vslot[vc] == slot)
                vv &= vseq[vc] > oseq[np.clip(oid, 0, None)]
                vid[vv] = vc[vv]
            for v in r.views:  # the open each view was set on
                k = np.searchsorted(okey[order], (v["slot"] << 44) | v["seq"], side="right") - 1
                view_open_ids.append(int(order[k]) + base if k >= 0 else -1)
            is_data = np.array([t["data"] for t in traits], bool)[rid]
            flags = ev["flags"]
            completion = (flags & F_COMPLETE) != 0
            data = is_data & ~completion
            # nonblocking: link posts and completions (a completion's offset is its post's seq)
            request = np.full(n, -1, np.int64)
            t_complete = np.full(n, np.nan)
            post = ev["offset"][completion]
            linked = (post >= 0) & (post < n)
            ci = np.flatnonzero(completion)[linked]
            pi = post[linked]
            request[ci] = pi
            request[pi] = ci
            t_complete[pi] = r.t_end[ci]
            nbytes = ev["bytes"].copy()
            nbytes[ci] = ev["bytes"][pi]
            esize = np.ones(n, np.int64)
            for k, v in enumerate(r.views):
                esize[vid == k] = v["etype_size"]
            base += len(r.opens)
            prep.append((r, ev, n, rid, seq, oid, vid, flags, completion, data, request,
                         t_complete, nbytes, ev["offset"] * esize))
        self._apply_ordered(prep, traits, routines)
        open_base = 0
        for (r, ev, n, rid, seq, oid, vid, flags, completion, data, request, t_complete, nbytes,
             start) in prep:
            abs_off = np.full(n, -1, np.int64)
            abs_end = np.full(n, -1, np.int64)
            resolved = np.zeros(n, bool)
            usable = data & ((flags & (F_NOPOS | F_ERROR)) == 0) & (oid >= 0)
            for k in np.unique(vid[usable]):
                sel = np.flatnonzero(usable & (vid == k))
                if k < 0:
                    disp, blocks, extent, exact = 0, np.array([[0, 1]]), 1, True
                else:
                    v = r.views[k]
                    disp, blocks, extent = v["disp"], v["blocks"], v["filetype_extent"]
                    exact = not (v["capped"] or v["undecoded"])
                if k < 0 or contiguous(blocks, extent) or not exact:
                    w, o, ln = sel, disp + start[sel], nbytes[sel]  # contiguous (or approximated)
                    w, o, ln = w[ln > 0], o[ln > 0], ln[ln > 0]
                else:
                    j, o, ln = map_through_view(start[sel], nbytes[sel], disp, blocks, extent)
                    w = sel[j]
                resolved[sel] = exact
                ext["rank"].append(np.full(len(w), r.rank, np.int32))
                ext["seq"].append(w)
                ext["file_id"].append(np.array([pid[r.opens[i]["path"]] for i in oid[w]] or [],
                                               np.int32).reshape(-1))
                ext["offset"].append(o)
                ext["length"].append(ln)
                if len(w):
                    first = np.ones(len(w), bool)
                    first[1:] = w[1:] != w[:-1]
                    abs_off[w[first]] = o[first]
                    np.maximum.at(abs_end, w, o + ln)
            cols["rank"].append(np.full(n, r.rank, np.int32))
            cols["seq"].append(seq)
            cols["routine"].append(rid)
            cols["open_id"].append(np.where(oid >= 0, oid + open_base, -1))
            cols["flags"].append(flags)
            cols["lclock"].append(ev["lclock"])
            cols["offset"].append(ev["offset"])
            cols["bytes"].append(nbytes)
            cols["t_start"].append(r.t_start)
            cols["t_end"].append(r.t_end)
            cols["request"].append(request)
            cols["t_complete"].append(t_complete)
            cols["abs_offset"].append(abs_off)
            cols["abs_end"].append(abs_end)
            cols["resolved"].append(resolved)
            open_base += len(r.opens)
        cat = {k: (np.concatenate(v) if v else np.zeros(0)) for k, v in cols.items()}
        rid = cat["routine"].astype(np.int32)
        flags = cat["flags"].astype(np.uint8)
        tr = {k: np.array([t[k] for t in traits] or [False], bool)[rid] if len(rid) else
              np.zeros(0, bool) for k in ("data", "write", "read", "collective", "nonblocking", "split")}
        completion = (flags & F_COMPLETE) != 0
        open_id = cat["open_id"].astype(np.int64)
        file_of_open = np.array([pid[o["path"]] for o in rows] or [0], np.int32)
        file_id = np.where(open_id >= 0, file_of_open[np.clip(open_id, 0, None)], -1)
        events = pa.table({
            "rank": pa.array(cat["rank"].astype(np.int32)),
            "seq": pa.array(cat["seq"].astype(np.int64)),
            "routine": pa.DictionaryArray.from_arrays(pa.array(rid), pa.array(routines, pa.string())),
            "file_id": pa.array(file_id.astype(np.int32)),
            "open_id": pa.array(open_id),
            "data": pa.array(tr["data"] & ~completion),
            "write": pa.array(tr["write"]),
            "read": pa.array(tr["read"]),
            "collective": pa.array(tr["collective"] | ((flags & F_COLL) != 0)),
            "nonblocking": pa.array(tr["nonblocking"] | tr["split"]),
            "completion": pa.array(completion),
            # False for the 2nd, 3rd... request one Wait/Test call completed
            "call": pa.array((flags & F_SAMECALL) == 0),
            "error": pa.array((flags & F_ERROR) != 0),
            "lclock": pa.array(cat["lclock"].astype(np.uint32)),
            "offset": pa.array(cat["offset"].astype(np.int64)),
            "bytes": pa.array(cat["bytes"].astype(np.int64)),
            "t_start": pa.array(cat["t_start"].astype(np.float64)),
            "t_end": pa.array(cat["t_end"].astype(np.float64)),
            "request": pa.array(cat["request"].astype(np.int64)),
            "t_complete": pa.array(cat["t_complete"].astype(np.float64)),
            "abs_offset": pa.array(cat["abs_offset"].astype(np.int64)),
            "abs_end": pa.array(cat["abs_end"].astype(np.int64)),
            "resolved": pa.array(cat["resolved"].astype(bool)),
        })
        ecat = {k: (np.concatenate(v) if v else np.zeros(0, np.int64)) for k, v in ext.items()}
        extents = pa.table({
            "rank": pa.array(ecat["rank"].astype(np.int32)),
            "seq": pa.array(ecat["seq"].astype(np.int64)),
            "file_id": pa.array(ecat["file_id"].astype(np.int32)),
            "offset": pa.array(ecat["offset"].astype(np.int64)),
            "length": pa.array(ecat["length"].astype(np.int64)),
        })
        return events, extents, view_open_ids

    @staticmethod
    def _apply_ordered(prep, traits, routines):
        """An ordered call (MPI_File_write_ordered, ...) records the shared
        pointer before the collective call, the same on every rank; rank r's
        data starts after the bytes of the lower ranks of the file's
        communicator in that same call (the k-th ordered call on the file)."""
        ordered = np.array([t["pointer"] == "ordered" for t in traits] or [False], bool)
        groups = {}
        for i, (r, ev, n, rid, seq, oid, vid, flags, comp, data, req, tc, nbytes, start) in enumerate(prep):
            sel = np.flatnonzero(data & ordered[rid] & (oid >= 0))
            kth = {}
            for e in sel:  # ordered calls are collective and few: a loop over them is fine
                o = r.opens[oid[e]]
                k = kth[o["path"]] = kth.get(o["path"], -1) + 1
                groups.setdefault((o["path"], k), []).append((o["comm_rank"], i, e))
        for members in groups.values():
            members.sort()
            before = 0
            for _, i, e in members:
                prep[i][13][e] += before
                before += prep[i][12][e]

    def to_parquet(self, outdir):
        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("events", "files", "views", "ranks", "extents"):
            pq.write_table(getattr(self, name), out / f"{name}.parquet")
        return out


def open_trace(path, partial=False):
    return Trace(path, partial=partial)


__all__ = ["Trace", "TraceError", "open_trace", "routine_traits"]
