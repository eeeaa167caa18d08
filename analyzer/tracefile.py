"""Parse one rank's trace file (docs/trace-format.md) into numpy arrays.

The file is a 256-byte header followed by chunks; event chunks are arrays of
32-byte records read with one np.frombuffer each, so the cost is per chunk,
not per event.  Damage (a short file, a bad magic or checksum, a gap in the
event sequence) stops the parse at that chunk: what came before is kept in
the result and the damage is described by a TraceError naming the file and
the byte offset.
"""
import signal
import struct
from dataclasses import dataclass, field

import numpy as np

from iomodel.models.schema import MAX_NP

from .typemap import MAX_SIZE, check_counts, check_type, flatten
from .typenest import nest_of

MAGIC = b"IOMTRACE"
VERSION = 5                     # this iomodel writes version 5
VERSIONS = (1, 2, 3, 4, 5)      # and reads 1 (no buffer records), 2 (no stop chunk), 3 (views as
                                # pieces), 4 (no unseen-move records)
HEADER = struct.Struct("<8sIIiiIiIIQQqQQ128s48s")
CHUNK = struct.Struct("<IHHQQQQQQ")
CHUNK_MAGIC = 0x4B4E4843
# a tick counter's plausible period: from 1 THz to 100 kHz
MIN_NS_PER_TICK, MAX_NS_PER_TICK = 1e-3, 1e4
CHUNK_EVENTS, CHUNK_META, CHUNK_END, CHUNK_STOP = 1, 2, 3, 4
STOP = struct.Struct("<QQQiIII")         # good_end, events_kept, events_total, errno, how, lclock, pad
STILL_RUNNING = 0xFFFFFFFF
MAX_SEQ = 2 ** 62                        # no rank makes more events than this
META = struct.Struct("<IIQ")
(META_ROUTINES, META_OPEN, META_VIEW, META_PATH, META_PROGRAM, META_BUFFER, META_LOST, META_TYPE,
 META_UNSEEN) = range(1, 10)
UNSEEN_FIXED = struct.Struct("<IIqq")           # slot, pad, the position the tracer kept, the stream's
OPEN_FIXED = struct.Struct("<Iiii")
VIEW_FIXED = struct.Struct("<IIqqqqqQII")     # ..., datarep length, type ref (version 4; 0: none)
TYPE_FIXED = struct.Struct("<IIiiiIqqq")       # id, combiner, ni, na, nd, pad, size, lb, extent
DISPLACEMENT_CURRENT = -54278278               # MPI_DISPLACEMENT_CURRENT (Open MPI's and MPICH's mpi.h)
END_HOW = {0: "MPI_Finalize", 1: "MPI_Abort", 2: "exit without MPI_Finalize",
           4: "exit (not an MPI program)"}
END_SIGNAL = 3                           # how = 3 | signal number << 8

RECORD_DTYPE = np.dtype([
    ("op", "u1"), ("flags", "u1"), ("slot", "<u2"), ("lclock", "<u4"),
    ("offset", "<i8"), ("t0", "<u8"), ("dt", "<u4"), ("bytes", "<u4"),
])
assert RECORD_DTYPE.itemsize == 32
OP_EXTENSION = 0xFF
U32_MAX = 0xFFFFFFFF


F_COLL, F_WRITE, F_READ, F_POST, F_COMPLETE, F_ERROR, F_NOPOS, F_SAMECALL = 1, 2, 4, 8, 16, 32, 64, 128
NO_SLOT = 0xFFFF


class TraceError(Exception):
    """A trace that cannot be read whole.  `partial` holds what could be read."""

    def __init__(self, path, offset, problem, partial=None):
        where = f"at byte {offset}: " if offset is not None else ""
        super().__init__(f"{path}: {where}{problem}")
        self.path, self.offset, self.problem, self.partial = path, offset, problem, partial


@dataclass
class RankTrace:
    path: str
    rank: int
    nranks: int
    pid: int
    thread_level: int
    hostname: str
    real_origin_ns: int
    ns_per_tick: float
    routines: list
    events: "Columns"                   # event columns, in seq order (index = seq)
    t_start: np.ndarray                 # seconds since time zero
    t_end: np.ndarray
    opens: list = field(default_factory=list)    # dicts: seq, slot, amode, comm_size, comm_rank, path
    views: list = field(default_factory=list)    # dicts: seq, slot, disp, etype_size, ..., blocks
    types: dict = field(default_factory=dict)    # type records by id: a view's filetype described
    type_blocks: dict = field(default_factory=dict)   # those flattened so far (analyzer/typemap.py)
    named: list = field(default_factory=list)    # dicts: seq, path, kind (1 delete, 2 failed open; None: unknown)
    command: list = field(default_factory=list)  # the program's argv
    buffers: list = field(default_factory=list)  # (seq, buffer address mod 4096) where it changed
    unseen: list = field(default_factory=list)   # dicts: seq, slot, moved: a stream's position moved
                                                 # by calls the tracer does not see (version 5)
    records: int = 0                     # event records on disk, extensions included
    end: str = None                      # how the run ended, None if no end record
    stopped: dict = None                 # tracing stopped early (a failed write): how far, why
    version: int = VERSION               # of the trace format
    lost_before_start: int = None        # events kept before MPI_Init when its buffers filled
    final_lclock: int = None
    mono_origin_ns: int = 0              # CLOCK_MONOTONIC at time zero


def _cstr(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def _parse_meta(buf, rt, path, base):
    pos = 0
    while pos < len(buf):
        if len(buf) - pos < META.size:
            raise TraceError(path, base + pos, "metadata record cut short")
        mtype, mlen, seq = META.unpack_from(buf, pos)
        if mlen < META.size or pos + mlen > len(buf) or mlen % 8:
            raise TraceError(path, base + pos, f"metadata record with bad length {mlen}")
        body = buf[pos + META.size: pos + mlen]
        if seq > MAX_SEQ:
            raise TraceError(path, base + pos, f"metadata record for event {seq}, past any rank's count")
        try:
            _parse_meta_record(mtype, body, seq, rt, path, base + pos)
        except (struct.error, ValueError, IndexError, OverflowError) as e:
            raise TraceError(path, base + pos, f"corrupt metadata record (type {mtype}): {e}") from None
        pos += mlen


def _parse_meta_record(mtype, body, seq, rt, path, where):
    """One metadata record into the rank's lists; a malformed field raises."""
    if mtype == META_ROUTINES:
        n = struct.unpack_from("<I", body)[0]
        names = bytes(body[8:]).split(b"\0")[:n]
        rt.routines = [x.decode() for x in names]
        if len(rt.routines) < n:
            raise ValueError(f"a routine table of {n} names holds {len(rt.routines)}")
    elif mtype == META_OPEN:
        slot, amode, csize, crank = OPEN_FIXED.unpack_from(body)
        rt.opens.append(dict(seq=seq, slot=slot, amode=amode, comm_size=csize, comm_rank=crank,
                             path=_cstr(bytes(body[OPEN_FIXED.size:]))))
    elif mtype == META_VIEW:
        (slot, flags, disp, esize, fsize, flb, fext, nb, rlen, tref) = VIEW_FIXED.unpack_from(body)
        o = VIEW_FIXED.size
        # MPI_File_set_view: an etype's size is an int and not 0; a displacement is a
        # byte of the file, or MPI_DISPLACEMENT_CURRENT (the same number in both ABIs)
        if not 0 < esize < 2 ** 31 or not 0 <= fsize <= MAX_SIZE or \
                (disp < 0 and disp != DISPLACEMENT_CURRENT):
            raise ValueError(f"a view of etype size {esize}, filetype size {fsize} and "
                             f"displacement {disp}, which MPI_File_set_view would not take")
        if 16 * nb + rlen > len(body) - o:
            raise ValueError(f"a view of {nb} blocks in a record of {len(body)} bytes")
        blocks = np.frombuffer(body, dtype="<i8", count=2 * nb, offset=o).reshape(nb, 2)
        rep = bytes(body[o + 16 * nb: o + 16 * nb + rlen]).decode("utf-8", "replace")
        view = dict(seq=seq, slot=slot, disp=disp, etype_size=esize, filetype_size=fsize,
                    filetype_lb=flb, filetype_extent=fext, undecoded=bool(flags & 2), datarep=rep)
        if rt.version >= 4 and tref:
            if tref - 1 not in rt.types:
                raise ValueError(f"a view of type {tref - 1}, which no type record before it describes")
            # described: its pieces flattened when first asked for (IOMODEL_VIEWS=both:
            # the tracer's own beside it, as `pieces`)
            view = DescribedView(view, type_id=tref - 1, types=rt.types, memo=rt.type_blocks)
            if nb:
                view["pieces"] = blocks.copy()
        else:
            view.update(blocks=blocks.copy(), capped=bool(flags & 1))
        rt.views.append(view)
    elif mtype == META_TYPE:
        (tid, comb, ni, na, nd, _, size, lb, ext) = TYPE_FIXED.unpack_from(body)
        o = TYPE_FIXED.size
        li, lk = (4 * ni + 7) // 8 * 8, (4 * nd + 7) // 8 * 8
        if min(ni, na, nd) < 0 or o + li + 8 * na + lk > len(body):
            raise ValueError(f"a type of {ni} integers, {na} addresses and {nd} types "
                             f"in a record of {len(body)} bytes")
        kids = np.frombuffer(body, "<u4", nd, o + li + 8 * na).tolist()
        if tid != len(rt.types) or any(k >= tid for k in kids):
            raise ValueError(f"type {tid} out of order, or made of a type not described before it")
        ints = np.frombuffer(body, "<i4", ni, o).astype(np.int64)
        check_counts(comb, ints, na, nd)
        addrs = np.frombuffer(body, "<i8", na, o + li).copy()
        check_type(comb, size, ints, addrs, kids, rt.types)
        rt.types[tid] = dict(comb=comb, size=size, lb=lb, extent=ext, ints=ints, addrs=addrs, kids=kids)
    elif mtype == META_PROGRAM:
        n = min(struct.unpack_from("<I", body)[0], len(body) - 8)
        rt.command = [a.decode("utf-8", "replace") for a in bytes(body[8:8 + n]).split(b"\0")
                      if a][:1024]
    elif mtype == META_PATH:
        # version 3: u32 kind (1 delete, 2 failed open), u32 pad, the path; before, the path alone
        at = 8 if rt.version >= 3 else 0
        kind = struct.unpack_from("<I", body)[0] if at and len(body) >= 4 else None
        rt.named.append(dict(seq=seq, path=_cstr(bytes(body[at:])), kind=kind))
    elif mtype == META_LOST:
        rt.lost_before_start = struct.unpack_from("<Q", body)[0]
    elif mtype == META_BUFFER:
        off = struct.unpack_from("<I", body)[0]
        if off > 4095:
            raise ValueError(f"a buffer {off} bytes past a page, not within 4 KiB")
        rt.buffers.append((seq, off))
    elif mtype == META_UNSEEN:
        slot, _, kept, seen = UNSEEN_FIXED.unpack_from(body)
        rt.unseen.append(dict(seq=seq, slot=slot, moved=seen - kept))
    else:
        raise TraceError(path, where, f"unknown metadata record type {mtype}")


class DescribedView(dict):
    """A view whose filetype the trace describes: `blocks` and `capped` are
    computed from the description when first read (analyzer/typemap.py), and
    so is `nest`, its regular nest or None (analyzer/typenest.py)."""

    def __init__(self, fields, type_id, types, memo):
        super().__init__(fields, type_id=type_id)
        self._types, self._memo = types, memo

    def __missing__(self, key):
        if key == "nest":
            try:
                self["nest"] = nest_of(self._types, self["type_id"])
            except (ValueError, IndexError, KeyError, OverflowError):
                self["nest"] = None
            return self["nest"]
        if key not in ("blocks", "capped"):
            raise KeyError(key)
        blocks, capped, undecoded = self.blocks_upto(None)
        self.update(blocks=blocks, capped=capped, undecoded=undecoded)
        return self[key]

    def blocks_upto(self, limit):
        """(blocks, capped, undecoded): the filetype's blocks that hold its first
        `limit` data bytes (None: all of them; analyzer/typemap.py), as much as
        the accesses through the view need."""
        if "blocks" in self and (limit is None or not self["capped"]):
            return self["blocks"], self["capped"], self["undecoded"]
        try:
            blocks, capped = flatten(self._types, self["type_id"], self._memo, limit)
            return blocks, capped, self["undecoded"]
        except (ValueError, IndexError, MemoryError):
            # the records were checked when read; what is left (no memory) is not
            # decoded: mapped as contiguous and not counted as resolved, as a darray
            return np.zeros((0, 2), np.int64), False, True


class Columns(dict):
    """A rank's events as named numpy columns (op, flags, slot, lclock, offset,
    bytes, t0, t1), all of one length; len() is the number of events."""

    def __len__(self):
        return len(self["op"])


def _fold_extensions(recs):
    """Records -> event columns: 64-bit bytes and end times, extension records
    folded in.  Without extensions (the usual case) the columns are views of
    the records, not copies."""
    ext = recs["op"] == OP_EXTENSION
    if not ext.any():
        cols = Columns((k, recs[k]) for k in ("op", "flags", "slot", "lclock", "offset", "t0"))
        cols["bytes"] = recs["bytes"].astype(np.int64)
        cols["t1"] = recs["t0"] + recs["dt"]
        return cols
    base = recs[~ext]
    cols = Columns((k, base[k].copy()) for k in ("op", "flags", "slot", "lclock", "offset", "t0"))
    cols["bytes"] = base["bytes"].astype(np.int64)
    cols["t1"] = base["t0"] + base["dt"]
    xi = np.flatnonzero(ext)
    owner = xi - np.arange(1, len(xi) + 1)      # index among events of the record before each extension
    owner, xi = owner[xi > 0], xi[xi > 0]
    big_b = base["bytes"][owner] == U32_MAX
    big_t = base["dt"][owner] == U32_MAX
    cols["bytes"][owner[big_b]] = recs["offset"][xi[big_b]]
    cols["t1"][owner[big_t]] = recs["t0"][xi[big_t]]
    return cols


def _errno_name(n):
    """ENOSPC (No space left on device), from an errno number."""
    import errno
    import os
    name = errno.errorcode.get(n)
    return f"{name} ({os.strerror(n)})" if name else f"error {n}"


def _ended_by(how):
    """The end chunk's `how` as words: the call or the signal that ended the rank."""
    if how & 0xFF == END_SIGNAL and how >> 8:
        try:
            return f"signal {signal.Signals(how >> 8).name}"
        except ValueError:
            return f"signal {how >> 8}"
    return END_HOW.get(how, f"end code {how}")


def read_rank_file(source):
    """Read one rank's trace: a rank file's path, or a rank's image in a job
    file (analyzer.jobfile.JobImage).  Raises TraceError (with .partial) on damage."""
    path = str(source)
    if hasattr(source, "read_bytes"):
        data = memoryview(source.read_bytes())
    else:
        with open(path, "rb") as f:
            data = memoryview(f.read())
    if len(data) < HEADER.size:
        raise TraceError(path, len(data), f"file is {len(data)} bytes, shorter than the "
                         f"{HEADER.size}-byte header (not a complete iomodel trace)")
    (magic, version, hsize, rank, nranks, pid, tlevel, clock_kind, evsize, tick0, mono0, real0,
     cal_ticks, cal_ns, host, _) = HEADER.unpack_from(data)
    if magic != MAGIC:
        raise TraceError(path, 0, "not an iomodel trace (bad magic)")
    if version not in VERSIONS or evsize != RECORD_DTYPE.itemsize:
        raise TraceError(path, 8, f"trace format version {version} with {evsize}-byte events; "
                         f"this iomodel reads versions {', '.join(map(str, VERSIONS))} with "
                         f"{RECORD_DTYPE.itemsize}-byte events")
    if hsize != HEADER.size:
        raise TraceError(path, 12, f"corrupt header: header size {hsize}, expected {HEADER.size}")
    if not (0 < nranks <= MAX_NP and 0 <= rank < nranks):
        raise TraceError(path, 16, f"corrupt header: rank {rank} of {nranks} ranks (at most {MAX_NP})")
    rt = RankTrace(path, rank, nranks, pid, tlevel, _cstr(host), real0, 1.0, [],
                   None, None, None, mono_origin_ns=mono0, version=version)
    chunks, pairs, error = [], [(cal_ticks, cal_ns)], None
    pos, next_seq = hsize, 0
    while pos < len(data):
        if len(data) - pos < CHUNK.size:
            error = (pos, f"truncated: {len(data) - pos} bytes left where a {CHUNK.size}-byte "
                          "chunk header was expected")
            break
        magic, ctype, chsize, plen, count, first, ticks, ns, csum = CHUNK.unpack_from(data, pos)
        if magic != CHUNK_MAGIC or chsize != CHUNK.size:
            error = (pos, "corrupt: no chunk header here")
            break
        body = data[pos + chsize: pos + chsize + plen]
        if len(body) < plen:
            error = (pos, f"truncated: chunk of {plen} bytes has only {len(body)}")
            break
        fields = (ctype + plen + count + first + ticks + ns) % 2**64
        if plen % 8 or (int(np.frombuffer(body, "<u8").sum(dtype=np.uint64)) + fields) % 2**64 != csum:
            error = (pos, "corrupt: chunk checksum does not match")
            break
        if first > MAX_SEQ or count > MAX_SEQ:
            error = (pos, f"corrupt: chunk of {count} records from event {first}, past any rank's count")
            break
        if ctype == CHUNK_EVENTS:
            if plen != count * RECORD_DTYPE.itemsize:
                error = (pos, f"corrupt: event chunk of {plen} bytes claims {count} records")
                break
            if first != next_seq:
                error = (pos, f"corrupt: event chunk starts at event {first}, expected {next_seq}")
                break
            recs = np.frombuffer(body, RECORD_DTYPE)
            chunks.append(recs)
            next_seq += int(np.count_nonzero(recs["op"] != OP_EXTENSION))
        elif ctype == CHUNK_META:
            try:
                _parse_meta(body, rt, path, pos + chsize)
            except TraceError as e:
                error = (e.offset, e.problem)
                break
        elif ctype == CHUNK_END:
            if plen < 16:
                error = (pos, f"corrupt: end chunk of {plen} bytes")
                break
            events_total, how, lclock = struct.unpack_from("<QII", body)
            rt.end, rt.final_lclock = _ended_by(how), lclock
        elif ctype == CHUNK_STOP and version >= 3:
            if count and plen < STOP.size:
                error = (pos, f"corrupt: stop chunk of {plen} bytes")
                break
            if count:                   # tracing stopped early: a failed write
                good_end, kept, total, errno_, how, lclock, _ = STOP.unpack_from(body)
                rt.stopped = {"events_kept": kept, "events_total": total, "error": _errno_name(errno_),
                              "at_byte": good_end}
                if how != STILL_RUNNING:
                    rt.end, rt.final_lclock = _ended_by(how), lclock
                if good_end < pos + chsize + plen or good_end > len(data) or kept > total:
                    error = (pos, f"corrupt: stop chunk says the trace ends at byte {good_end} after "
                                  f"{kept} of {total} events")
                    break
                data = data[:good_end]   # what a failed write left past it is not the trace's
        else:
            error = (pos, f"corrupt: unknown chunk type {ctype}")
            break
        pairs.append((ticks, ns))
        pos += chsize + plen
    records = chunks[0] if len(chunks) == 1 else (np.concatenate(chunks) if chunks else np.zeros(0, RECORD_DTYPE))
    events = _fold_extensions(records)
    # every event names a routine of the table (its op indexes it)
    bad = np.flatnonzero(events["op"] >= len(rt.routines))
    if len(bad):
        first_bad = int(bad[0])
        op = int(events["op"][first_bad])
        events = Columns((k, v[:first_bad]) for k, v in events.items())
        if not error:
            error = (None, f"corrupt: event {first_bad} names routine number {op}, which the "
                           f"routine table ({len(rt.routines)} names) does not have")
    # Tick rate from the clock pair farthest from time zero.
    if clock_kind == 0:
        rt.ns_per_tick = 1.0
    else:
        t, n = max(pairs, key=lambda p: abs(p[0] - tick0))
        dt = int(t) - int(tick0)
        rt.ns_per_tick = (int(n) - int(mono0)) / dt if dt else 1.0
        # the header has no checksum: a damaged time zero shows as a counter no
        # machine has (the x86 TSC ticks at 0.2 to 5 GHz); a pair within a
        # microsecond of time zero is too close to tell the rate, only its sign
        span_ns = abs(int(n) - int(mono0))
        if rt.ns_per_tick < 0 or (span_ns >= 1000 and
                                  not MIN_NS_PER_TICK <= rt.ns_per_tick <= MAX_NS_PER_TICK):
            raise TraceError(path, 40, f"corrupt header: its time zero ({int(tick0)} ticks, "
                             f"{int(mono0)} ns) and the clock pair ({int(t)} ticks, {int(n)} ns) "
                             f"give {rt.ns_per_tick:.3g} ns per tick, not a clock's rate")
    scale = rt.ns_per_tick * 1e-9
    rt.events = events
    rt.records = len(records)
    # ticks since time zero, signed (calls that began before it are negative)
    origin = np.uint64(tick0)
    rt.t_start = (events["t0"] - origin).view(np.int64) * scale
    rt.t_end = (events["t1"] - origin).view(np.int64) * scale
    if error:
        raise TraceError(path, error[0], error[1], partial=rt)
    return rt


def buffer_offsets(buffers, n):
    """Each of a rank's n events' buffer offset within 4 KiB: the latest buffer
    record at or before it (the tracer records one where it changes), -1 before
    the first."""
    if not buffers:
        return np.full(n, -1, np.int16)
    seqs, offs = np.array(buffers, np.int64).T
    at = np.searchsorted(seqs, np.arange(n), side="right") - 1
    return np.where(at >= 0, offs[np.maximum(at, 0)], -1).astype(np.int16)
