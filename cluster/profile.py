"""A virtual cluster's bandwidth profile: BW_CH measured by IOR (or the built-in
replayer, or given in the cluster description) for operation, access type,
collective, number of processes and transfer size (the paper's steps 3 and 4).

The profile is a pyarrow table with the columns of `SCHEMA`:

    operation      string   "write" or "read"
    access_type    string   "shared" or "unique"
    collective     bool     null: unknown
    np             int32    processes
    transfer_size  int64    bytes one process moves per operation (rs, IOR's -t)
    bandwidth_Bps  float64  BW_CH, bytes per second
    time_s         float64  the measurement's time (null if unknown)
    source         string   "ior", "builtin", "given", ...
    ops_per_process int64   operations each process made in the measurement
                            (IOR's segments when block = transfer); null: unknown
    piece          int64    the transfers went through a file view of pieces of this
                            many bytes, the processes' in turn (iomodel_replay's
                            --iomodel.piece); null: contiguous transfers
    buffer_offset  int64    the transfer buffer sat this many bytes past a 4 KiB
                            boundary (iomodel_replay's --iomodel.bufferOffset);
                            null: page-aligned, as IOR's
    file_cap       int64    the measurement's file was kept within this many bytes,
                            one stripe of the file system (characterize
                            --one-stripe); null: the sweep's volume
    think_s        float64  the processes computed (spun) this many seconds between
                            their operations (characterize --think); its time is
                            still their time in calls; null: back to back
    random         bool     each process's operations went to its block's pieces in
                            a random order (IOR's -z; characterize --random);
                            null or false: in order
    pass_bandwidths_Bps list<float64>  the point's bandwidth in each pass of the
                            sweep (characterize --repeat N), in pass order; an
                            entry is null where the pass did not count (it
                            failed, or lost its time to steal while others did
                            not); null: measured in one pass, or given
    api            string   "MPIIO" or "POSIX": the interface the measurement used
                            (IOR's -a; characterize --api); null: MPIIO
    block_transfers int64   each process wrote its segment's block of this many
                            transfers (IOR's -b / -t; characterize --for, where a
                            replay's blocks are so); null: one transfer a block,
                            as the sweep's

`Profile.bandwidth(operation, np, rs, ...)` answers BW_CH for a phase: the
measured point when there is one, else an interpolation (log-log in rs, linear
in np), never an extrapolation (beyond the measured range the nearest measured
value is used, and the note says so).  Every answer comes with a note saying
how it was obtained.

A phase of few operations is slower than its bandwidth says: each phase pays a
fixed cost (the first request, the processes not starting together, a
collective's set-up), which a long measurement spreads over many operations.
When the profile has, besides its long measurements, points of one operation
per process (`iomodel characterize` measures both) and the phase's count of
operations per process `ops` is given, the time is affine in it,

    t(ops) = a + b * ops

with b (the time of one more operation) and a (the fixed cost) solved from the
one-operation and the long point of each measured (np, rs), each interpolated
in rs and np as above; BW_CH = ops * rs * np / t(ops).  A fit whose a is
negative (one operation alone cheaper than one more in a long run: a token
bucket's burst, a write-back cache, or noisy points) is refused and said: one
operation takes the one-op time, more take b each.

A phase whose operations cover pieces of a file view (the model's
`offsets.piece`) moves its data as MPI-IO chooses for such pieces: aggregated
by collective buffering, sieved, or piece by piece.  Points with a `piece`
(`iomodel characterize --pieces`) measure that against the contiguous point of
the same kind, np, rs and operations: the phase's time is its contiguous
time times their ratio, interpolated (`_view_ratio`).  Without such points a
view is predicted as contiguous, and the note says so.

A phase whose buffers sat a few bytes past a 4 KiB boundary (the model's
`buffer_offset`; malloc puts a large buffer 16 bytes past one) copies to and
from the page cache more slowly than an aligned buffer does: on the testbed's
AMD EPYC two processes rereading 16 x 256 KiB each from ext4's page cache took
0.35 ms from aligned buffers, 0.52 ms from buffers 16 bytes past a page and
1.48 ms 8 bytes past (bench/buffer_offset.py).
Points measured at that offset (`iomodel characterize --buffer-offsets`)
answer for such a phase; without them the aligned points do, and the note says
so.

A shared file no larger than one stripe of a file system that stripes files
over several data servers sits on one of them, where the sweep's larger files
spread over several: on the two-server Gluster VC a 2 MiB file's 16 KiB writes
took 3.25 ms against 3.04 ms for the sweep's 16 MiB file (each write is a WRITE
to its shard's server plus a size update to the first shard's: one link, or
two; docs/accuracy.md, "Where shards go").  Points measured on files of one
stripe (`file_cap`, `iomodel characterize --one-stripe`) answer for a shared
file no larger (`file_size`), each in place of the sweep's point of its kind;
for larger files and file-per-process phases they are left out.

A phase whose operations go to random offsets (the model's access mode
random: random_io) can cost more than the same operations in order where
the storage pays for the order (a spinning disk's seeks, read-ahead that
misses).  Not on this project's testbed disk: random_io's 16 KiB writes cost
the same there in a random order as in order, 0.98 times the profile's
interleaved point (bench/random_order.py; docs/accuracy.md, "Random order
costs nothing on the disk").  Points with `random` (`iomodel characterize --random`: each
process's block in a random order, IOR's -z) measure that against the
in-order point of the same kind, np, rs and operations: the phase's time is its in-order time
times their ratio, interpolated as a bandwidth is (`_random_ratio`).
Without such points a random phase is predicted as in order, and the note
says so.  They answer nothing else.

A phase of independent small writes to a shared file extends the file with
a share of its writes that its layout sets (the model's `extending_writes`),
and on storage that commits a file's new size before such a write returns,
each of those costs a commit the writes in flight wait for.  The replay
writes it in blocks of k transfers that give its share (replay/ior.py).
Points with `block_transfers` k (`characterize --for`) measure that layout
against the sweep's of one transfer a block; such a phase's time is the
plain point's times their ratio, interpolated as a bandwidth is
(`_block_ratio`).  They answer nothing else.

A profile measured in passes (`characterize --repeat N`) keeps every pass's
bandwidth of every point besides their median.  `Profile.in_pass(k)` is the
profile as pass k alone measured it (a point whose pass k did not count keeps
its median): all of a pass's points come from one stretch of the cluster, so a
prediction from each pass in turn shows how far the cluster's own variation
moves it (predict's `io_time_passes_s`).  On the testbed's tmpfs a point's
passes were up to 27% apart with the host calm (docs/accuracy.md, "tmpfs varies
from launch to launch").
"""
import math
from pathlib import Path

import numpy   # not `np`: np is a process count everywhere here
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["Profile", "ProfileError", "SCHEMA", "summary", "format_summary", "ops_per_process"]

SCHEMA = pa.schema([
    ("operation", pa.string()),
    ("access_type", pa.string()),
    ("collective", pa.bool_()),
    ("np", pa.int32()),
    ("transfer_size", pa.int64()),
    ("bandwidth_Bps", pa.float64()),
    ("time_s", pa.float64()),
    ("source", pa.string()),
    ("ops_per_process", pa.int64()),
    ("piece", pa.int64()),
    ("buffer_offset", pa.int64()),
    ("file_cap", pa.int64()),
    ("think_s", pa.float64()),
    ("random", pa.bool_()),
    ("pass_bandwidths_Bps", pa.list_(pa.float64())),
    ("api", pa.string()),
    ("block_transfers", pa.int64()),
])
APIS = ("MPIIO", "POSIX")

OPERATIONS = ("write", "read", "reread")   # reread: read back through the write's open
ACCESS_TYPES = ("shared", "unique")
MiB = 1 << 20


# Below this many bytes past a page, copies from the page cache into a buffer were
# measured slower than aligned (bench/results/buffer-offset.json: 8 and 16 B); from
# 32 B on about as fast.  Writes (copies out of the buffer) do not step so (below).
SLOW_BUFFER_OFFSET = 32


def _offset_points(every, operation, buffer_offset, collective):
    """(contiguous points measured with buffers at the phase's offset, the offset
    they were measured at), or ([], None).  A write takes the points of the
    nearest measured offset when its own was not measured: what an unaligned
    buffer costs a write is the one more page each transfer spans (through FUSE
    direct I/O, one more request from 128 KiB on: a 256 KiB write from 16 B past
    a page goes as 131056 + 131072 + 16 bytes), whatever the offset; the disk
    VC's writes measured alike at every offset, tmpfs's scattered, at 2064 B
    as at 16 B (bench/results/buffer-offset.json).  Only points of the
    phase's collective flag answer: `characterize` measures writes so only when
    independent (a collective write's data reaches the file system from the
    aggregators' buffers)."""
    placed = [r for r in every if r["buffer_offset"] and r["piece"] is None
              and (collective is None or r["collective"] == collective)]
    offsets = {r["buffer_offset"] for r in placed}
    if buffer_offset in offsets:
        at = buffer_offset
    elif operation == "write" and offsets:
        at = min(offsets, key=lambda o: (abs(o - buffer_offset), o))
    else:
        return [], None
    return [r for r in placed if r["buffer_offset"] == at], at


def _offset_note(operation, buffer_offset, at, collective):
    """What the note says of a phase's buffer offset: the points measured at it
    (`at`: the offset they were measured at), or the aligned ones and whether
    measuring the offset is worth it (it is for reads a few bytes past a page,
    and for independent writes at any offset: `characterize --buffer-offsets`)."""
    head = f"buffers {buffer_offset} B past 4 KiB: "
    if at == buffer_offset:
        return head + "points measured so"
    if at is not None:
        return head + (f"points measured {at} B past used (a write's transfers each span one "
                       "more page at any offset)")
    if operation == "write":
        if collective:
            return None            # the aggregators' buffers write it: aligned points answer
        return head + (f"no write point measured past a page (characterize --buffer-offsets "
                       f"{buffer_offset}), aligned ones used")
    if buffer_offset < SLOW_BUFFER_OFFSET:
        return head + (f"no point measured so (characterize --buffer-offsets {buffer_offset}), "
                       "aligned ones used")
    return head + f"aligned points used (from {SLOW_BUFFER_OFFSET} B on, as fast as aligned)"


class ProfileError(ValueError):
    """A profile that cannot be read, or cannot answer a question (no point at all)."""


def size_text(n):
    """Bytes as the paper writes them (MB = MiB), exact bytes in brackets when not whole."""
    if n >= MiB:
        return f"{n / MiB:.4g} MiB"
    if n >= 1024:
        return f"{n / 1024:.4g} KiB"
    return f"{n} B"


def _coll(c):
    return {True: "collective", False: "independent", None: "collective unknown"}[c]


def _point(p, i):
    """One point dict (keys of the cluster description or of the table) -> a row tuple."""
    def get(*names, default=KeyError):
        for n in names:
            if n in p:
                return p[n]
        if default is KeyError:
            raise ProfileError(f"bandwidth point {i}: missing {names[0]!r}")
        return default
    op = get("operation")
    if op not in OPERATIONS:
        raise ProfileError(f"bandwidth point {i}: operation must be write, read or reread, got {op!r}")
    at = get("access_type", default="shared")
    if at not in ACCESS_TYPES:
        raise ProfileError(f"bandwidth point {i}: access_type must be shared or unique, got {at!r}")
    coll = get("collective", default=None)
    if coll is not None and not isinstance(coll, bool):
        raise ProfileError(f"bandwidth point {i}: collective must be true, false or null, got {coll!r}")
    np_ = get("np")
    if isinstance(np_, bool) or not isinstance(np_, int) or np_ < 1:
        raise ProfileError(f"bandwidth point {i}: np must be an integer >= 1, got {np_!r}")
    rs = get("transfer_size", "rs")
    if isinstance(rs, bool) or not isinstance(rs, int) or rs < 1:
        raise ProfileError(f"bandwidth point {i}: rs must be an integer number of bytes >= 1, got {rs!r}")
    bw = get("bandwidth_Bps", "bw_Bps")
    if isinstance(bw, bool) or not isinstance(bw, (int, float)) or not math.isfinite(bw) or bw <= 0:
        raise ProfileError(f"bandwidth point {i}: bandwidth must be a number > 0 (B/s), got {bw!r}")
    t = get("time_s", default=None)
    src = get("source", default="given")
    ops = get("ops_per_process", "segments", default=None)
    if ops is not None and (isinstance(ops, bool) or not isinstance(ops, int) or ops < 1):
        raise ProfileError(f"bandwidth point {i}: ops_per_process must be an integer >= 1, got {ops!r}")
    piece = get("piece", default=None)
    if piece is not None and (isinstance(piece, bool) or not isinstance(piece, int) or piece < 1):
        raise ProfileError(f"bandwidth point {i}: piece must be an integer number of bytes >= 1, "
                           f"got {piece!r}")
    boff = get("buffer_offset", default=None)
    if boff is not None and (isinstance(boff, bool) or not isinstance(boff, int) or
                             not 0 <= boff <= 4095):
        raise ProfileError(f"bandwidth point {i}: buffer_offset must be 0 to 4095 bytes, got {boff!r}")
    cap = get("file_cap", default=None)
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise ProfileError(f"bandwidth point {i}: file_cap must be an integer number of bytes >= 1, "
                           f"got {cap!r}")
    think = get("think_s", default=None)
    if think is not None and (isinstance(think, bool) or not isinstance(think, (int, float)) or
                              not math.isfinite(think) or think <= 0):
        raise ProfileError(f"bandwidth point {i}: think_s must be a number of seconds > 0, "
                           f"got {think!r}")
    rnd = get("random", default=None)
    if rnd is not None and not isinstance(rnd, bool):
        raise ProfileError(f"bandwidth point {i}: random must be true, false or null, got {rnd!r}")
    api = get("api", default=None)
    if api is not None and api not in APIS:
        raise ProfileError(f"bandwidth point {i}: api must be MPIIO or POSIX, got {api!r}")
    passes = get("pass_bandwidths_Bps", default=None)
    if passes is not None and (not isinstance(passes, (list, tuple)) or not passes or any(
            b is not None and (isinstance(b, bool) or not isinstance(b, (int, float)) or
                               not math.isfinite(b) or b <= 0) for b in passes)):
        raise ProfileError(f"bandwidth point {i}: pass_bandwidths_Bps must be a list of bandwidths "
                           f"> 0 (B/s) or nulls, got {passes!r}")
    block = get("block_transfers", default=None)
    if block is not None and (isinstance(block, bool) or not isinstance(block, int) or block < 1):
        raise ProfileError(f"bandwidth point {i}: block_transfers must be an integer >= 1 or null, "
                           f"got {block!r}")
    return (op, at, coll, np_, rs, float(bw), (None if t is None else float(t)), str(src), ops, piece,
            boff or None, cap, (None if think is None else float(think)), rnd or None,
            None if passes is None else [None if b is None else float(b) for b in passes],
            api, None if block == 1 else block)


def computing_text(size, np, at):
    """'64 KiB at np 2 computing 1000 us between operations: 3900.0 us per op'
    of computing_points' [(k, t_k), ...]."""
    return (f"{size_text(size)} at np {np} computing {', '.join(f'{k * 1e6:.0f}' for k, _ in at)} us "
            f"between operations: {', '.join(f'{tk * 1e6:.1f}' for _, tk in at)} us per op")


class Profile:
    """A bandwidth profile (see the module docstring); `table` is the pyarrow table."""

    def __init__(self, table=None):
        if table is None:
            table = SCHEMA.empty_table()
        for name in ("ops_per_process", "piece", "buffer_offset", "file_cap", "think_s", "random",
                     "pass_bandwidths_Bps", "api", "block_transfers"):
            if name not in table.column_names:     # profiles from before them
                table = table.append_column(name, pa.nulls(table.num_rows, SCHEMA.field(name).type))
        missing = [n for n in SCHEMA.names if n not in table.column_names]
        if missing:
            raise ProfileError(f"profile table lacks column(s) {', '.join(missing)}")
        try:
            self.table = table.select(SCHEMA.names).cast(SCHEMA)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
            raise ProfileError(f"profile table has the wrong column types: {e}") from None
        self._rows = None

    # -- construction ---------------------------------------------------------------

    @classmethod
    def from_points(cls, points):
        """From dicts with operation, np, rs (or transfer_size), bw_Bps (or
        bandwidth_Bps), and optionally access_type (default shared),
        collective (default null), time_s, source (default "given")."""
        rows = [_point(p, i) for i, p in enumerate(points)]
        cols = list(zip(*rows)) if rows else [[] for _ in SCHEMA.names]
        return cls(pa.table({n: pa.array(list(c), type=SCHEMA.field(n).type)
                             for n, c in zip(SCHEMA.names, cols)}, schema=SCHEMA))

    @classmethod
    def read(cls, path):
        """A Parquet profile file."""
        import pyarrow.parquet as pq
        path = Path(path)
        try:
            table = pq.read_table(path)
        except FileNotFoundError:
            raise ProfileError(f"{path}: no such profile file") from None
        except (OSError, pa.ArrowInvalid) as e:
            raise ProfileError(f"{path}: not a readable Parquet profile: {e}") from None
        try:
            return cls(table)
        except ProfileError as e:
            raise ProfileError(f"{path}: {e}") from None

    @classmethod
    def load(cls, cluster):
        """A cluster's profile: its Parquet file (cluster.profile_path), if any,
        plus the points of its description (cluster.bandwidth_points)."""
        parts = []
        path = getattr(cluster, "profile_path", None)
        if path is not None:
            try:
                parts.append(cls.read(path).table)
            except ProfileError as e:    # the file that named it, then the profile's own problem
                raise ProfileError(f"{getattr(cluster, 'path', None) or getattr(cluster, 'name', 'cluster')}: "
                                   f"profile: {e}") from None
        points = getattr(cluster, "bandwidth_points", None) or []
        if points:
            try:
                parts.append(cls.from_points(points).table)
            except ProfileError as e:
                raise ProfileError(f"{getattr(cluster, 'path', None) or getattr(cluster, 'name', 'cluster')}: {e}") from None
        return cls(pa.concat_tables(parts) if parts else None)

    def save(self, path):
        """Write the profile as Parquet, whole or not at all."""
        import pyarrow.parquet as pq
        from iomodel.outputs import atomic_path
        with atomic_path(path) as tmp:
            pq.write_table(self.table, str(tmp))
        return Path(path)

    def __len__(self):
        return self.table.num_rows

    def __add__(self, other):
        return Profile(pa.concat_tables([self.table, other.table]))

    @property
    def passes(self):
        """How many passes the profile's points were measured in (0: one, or none
        known): the longest of their pass_bandwidths_Bps."""
        lengths = pc.list_value_length(self.table.column("pass_bandwidths_Bps"))
        return int(pc.max(lengths).as_py() or 0) if len(self) else 0

    def in_pass(self, k):
        """The profile as pass k (0-based) alone measured it: each point's
        bandwidth that pass's, its time scaled to match (the passes move the same
        bytes); a point without a pass k that counted keeps its median."""
        col = self.table.column("pass_bandwidths_Bps").to_pylist()
        median = self.table.column("bandwidth_Bps").to_numpy()
        pick = numpy.array([bw[k] if bw and k < len(bw) and bw[k] is not None else numpy.nan for bw in col],
                        dtype=float)
        bw = numpy.where(numpy.isnan(pick), median, pick)
        t = self.table.column("time_s").to_numpy(zero_copy_only=False).astype(float)
        t = pa.array(t * median / bw, type=pa.float64(), mask=numpy.isnan(t))
        table = self.table.set_column(SCHEMA.get_field_index("bandwidth_Bps"), "bandwidth_Bps",
                                      pa.array(bw, type=pa.float64()))
        table = table.set_column(SCHEMA.get_field_index("time_s"), "time_s", t)
        return Profile(table.set_column(SCHEMA.get_field_index("pass_bandwidths_Bps"), "pass_bandwidths_Bps",
                                        pa.nulls(len(self), SCHEMA.field("pass_bandwidths_Bps").type)))

    def pass_spread(self, max_rs=None):
        """Per point measured in two passes or more that counted: (slowest -
        fastest) / median bandwidth of its passes, as a numpy array (empty when
        no point has passes): how far the cluster itself moved between passes.
        max_rs: of the points of requests that small or smaller only."""
        out = []
        for bws, med, rs in zip(self.table.column("pass_bandwidths_Bps").to_pylist(),
                                self.table.column("bandwidth_Bps").to_pylist(),
                                self.table.column("transfer_size").to_pylist()):
            if max_rs is not None and rs > max_rs:
                continue
            got = [b for b in bws or () if b is not None]
            if len(got) >= 2:
                # time is bytes / bandwidth: the spread of the passes' times
                ts = [1.0 / b for b in got]
                out.append((max(ts) - min(ts)) * med)
        return numpy.array(out, dtype=float)

    def rows(self):
        """The points as a list of dicts (cached)."""
        if self._rows is None:
            self._rows = self.table.to_pylist()
        return self._rows

    # -- the question ---------------------------------------------------------------

    def bandwidth(self, operation, np, rs, access_type="shared", collective=None, ops=None,
                  piece=None, buffer_offset=None, file_size=None, random=False, api="MPIIO", block=None):
        """BW_CH (B/s) for `np` processes each moving `rs` bytes per operation,
        and a note saying how it was obtained.

        Points are chosen among those of the same operation, access type and
        collective flag (collective None: any); when there are none, the
        collective flag is relaxed, then the access type (the note says so).
        Repeated measurements of one (np, rs) are averaged.  Between measured
        transfer sizes at one np: log-log interpolation; between measured np:
        linear interpolation of those values; above the measured sizes or
        outside the measured np: the nearest measured value ("extrapolated:
        nearest measured ..."); below the smallest measured size: a time per
        operation affine in rs through the two smallest sizes, bounded by
        theirs (`_below_smallest`).
        `ops`: the phase's operations per process; with one-operation points in
        the profile, the time is affine in it (module docstring).
        `piece`: the phase's operations cover pieces of a file view this long
        on average: the time is multiplied by the measured view ratio.
        `buffer_offset`: the phase's buffers sat so many bytes past a 4 KiB
        boundary: the contiguous points measured at that offset answer (a
        write's: those of the nearest measured offset, `_offset_points`), else
        the aligned ones (the note says which).
        `file_size`: the bytes of the phase's shared file: when no more than the
        `file_cap` of points measured on one stripe, those answer in place of
        the sweep's points of their kind (`_one_stripe`); else they are left out.
        `random`: the phase's operations go to random offsets: the time is
        multiplied by the measured random ratio (`_random_ratio`).
        `api`: the interface of the phase's calls (MPIIO, or POSIX for POSIX and
        stdio phases): the points measured through it answer, else MPI-IO's
        (the note says so).
        `block`: the replay writes the phase in blocks of so many transfers
        (a shared file's independent writes, replay/ior.py): the time is
        multiplied by the measured block ratio (`_block_ratio`).
        ProfileError when the profile has no point at all for the operation.
        """
        if operation not in OPERATIONS:
            raise ProfileError(f"operation must be write, read or reread, got {operation!r}")
        if np < 1 or rs < 1:
            raise ProfileError(f"np and rs must be >= 1, got np {np}, rs {rs}")
        # points computing between operations answer only given_back, random ones only
        # a random phase's ratio
        notes = []
        mine = [r for r in self.rows() if r["operation"] == operation and (r["api"] or "MPIIO") == api]
        if not mine and api != "MPIIO":
            mine = [r for r in self.rows() if r["operation"] == operation and r["api"] in (None, "MPIIO")]
            if mine:
                notes.append(f"no {api} point measured (characterize --api {api}): MPI-IO's used")
        randoms = [r for r in mine if r["random"]]
        blocks = [r for r in mine if r["block_transfers"]]
        every = [r for r in mine if r["think_s"] is None and not r["random"] and not r["block_transfers"]]
        if not every:
            have = sorted({r["operation"] for r in self.rows()})
            raise ProfileError(f"no {operation} bandwidth in the profile"
                               + (f" (it has only {', '.join(have)})" if have else " (it is empty)"))
        aligned = [r for r in every if not r["buffer_offset"]]
        if buffer_offset and piece is not None:
            # through a view MPI-IO moves the data between the file and buffers of its own
            # (two-phase I/O's, data sieving's), and the view points were measured aligned
            notes.append(f"buffers {buffer_offset} B past 4 KiB: not counted through a view")
            buffer_offset = None
        if buffer_offset:
            placed, at = _offset_points(every, operation, buffer_offset, collective)
            note = _offset_note(operation, buffer_offset, at, collective)
            if note:
                notes.append(note)
            if placed:
                every = placed + [r for r in aligned if r["piece"] is not None]
            else:
                every = aligned or every
        else:
            every = aligned or every
        rows = _one_stripe([r for r in every if r["piece"] is None], file_size, notes)
        # a view's ratio is against the aligned contiguous points it was measured beside
        plain = [r for r in aligned if r["piece"] is None and not r["file_cap"]]
        if not rows:       # e.g. the profile of a replay whose phases all went through views
            notes.append(f"only {operation} points through views of pieces: used as they are")
            return self._contiguous(self._match(every, access_type, collective, notes), np, rs, ops,
                                    notes)
        cand = self._match(rows, access_type, collective, notes)
        bw, how = self._contiguous(cand, np, rs, ops, notes)
        if piece is not None:
            views = [r for r in every if r["piece"] is not None and r["access_type"] == access_type
                     and (collective is None or r["collective"] == collective)]
            ratio, note = _view_ratio(views, [r for r in plain if r["access_type"] == access_type],
                                      np, rs, piece)
            bw, how = (bw if ratio is None else bw / ratio), f"{how}; {note}"
        if random:
            ratio, note = _random_ratio([r for r in randoms if r["access_type"] == access_type],
                                        [r for r in plain if r["access_type"] == access_type], np, rs)
            bw, how = (bw if ratio is None else bw / ratio), f"{how}; {note}"
        if block and block > 1:
            ratio, note = _block_ratio([r for r in blocks if r["access_type"] == access_type
                                        and (collective is None or r["collective"] == collective)],
                                       [r for r in plain if r["access_type"] == access_type], np, rs, block)
            bw, how = (bw if ratio is None else bw / ratio), f"{how}; {note}"
        return bw, how

    def computing_points(self, operation, np, rs, access_type="shared", contended=True, collective=False):
        """The points computing between operations (`think_s`, characterize
        --think) of this operation, access type and np whose size, the measured
        one nearest rs (log scale), has back-to-back points at np and (with
        `contended`) at 1 process, t_np above t_1 (else the others cost nothing
        to give back): (size, t_np, t_1, [(k, t_k), ...] by k), times per
        operation (time in calls, t_1 None without `contended`); None without
        such points.  `collective`: of the collective points (computing between
        collective operations) instead of the independent ones."""
        def per_op(r):
            return r["np"] * r["transfer_size"] / r["bandwidth_Bps"]

        def kind(r, n):
            return (r["operation"] == operation and r["np"] == n and r["access_type"] == access_type
                    and r["collective"] is collective)

        def mean(xs):
            return sum(xs) / len(xs) if xs else None
        think = [r for r in self.rows() if r["think_s"] and kind(r, np)]
        plain = [r for r in self.rows() if r["think_s"] is None and r["piece"] is None and not r["random"]
                 and not r["block_transfers"]
                 and not r["buffer_offset"] and not r["file_cap"]]

        def back_to_back(n, size):      # the long points; one-op ones where a size has no other
            pts = [r for r in plain if kind(r, n) and r["transfer_size"] == size]
            return mean([per_op(r) for r in pts if r["ops_per_process"] != 1]) or mean([per_op(r) for r in pts])
        for size in sorted({r["transfer_size"] for r in think}, key=lambda s: (abs(math.log(s / rs)), s)):
            back, alone = back_to_back(np, size), back_to_back(1, size)
            if back is not None and (not contended or (alone is not None and back > alone)):
                at = sorted((r["think_s"], per_op(r)) for r in think if r["transfer_size"] == size)
                return size, back, alone, at
        return None

    def given_back(self, operation, np, rs, access_type="shared"):
        """(g, note): the share of the time each process computes between its
        independent operations that the storage gave back to the others' waits,
        or None when the profile has no point computing between operations
        (`think_s`, characterize --think) of this operation, access type and np
        with back-to-back points of its size at np and at 1 process.  From the
        points of the measured size nearest rs (log scale; computing_points):
        with t_1, t_np and t_k their times per operation (time in calls) and k
        the time computed, t_np - t_k = g x min(k, t_np - t_1), g fitted by
        least squares over the measured k (the longest weigh most: 30 us of
        computing against a disk's 6 ms writes tells nothing) within 0 and 1.
        Served in turn, a device gives it all (the others have it alone
        meanwhile): g = 1; shared among the requests in flight, the processes
        stay in step and it gives none: g = 0."""
        pts = self.computing_points(operation, np, rs, access_type)
        if pts is None:
            return None
        size, tn, t1, at = pts
        share = [min(k, tn - t1) for k, _ in at]
        g = sum(m * (tn - tk) for m, (_, tk) in zip(share, at)) / sum(m * m for m in share)
        g = min(1.0, max(0.0, g))
        return g, f"{computing_text(size, np, at)} against {tn * 1e6:.1f} back to back and " \
                  f"{t1 * 1e6:.1f} alone, {g:.0%} given back"

    def after_computing(self, operation, np, rs, k, access_type="shared", collective=False):
        """(t, note): the time of one of np processes' independent operations
        of rs bytes when each computes k seconds before it, from the points
        computing between operations (`think_s`, characterize --think) of the
        measured size nearest rs (computing_points): t_k interpolated in log k
        between the measured k around it, the nearest one's when k is outside
        them by no more than a factor of 2, scaled to rs (t_k rs / size); None
        further out or without such points.  Computing evicts what the next
        operation would have found in the processor's caches: on the testbed's
        disk two processes' 16 KiB rereads from the page cache took 4.5 us
        back to back, 4.0 computing 30 us between, 4.6 at 60 us, 5.7 at 120 us
        and 9.3 at 1 ms (docs/accuracy.md, "Rereads after
        computing are slower")."""
        pts = self.computing_points(operation, np, rs, access_type, contended=False, collective=collective)
        if pts is None:
            return None
        size, tn, _, at = pts
        if not at[0][0] / 2 <= k <= at[-1][0] * 2:
            return None
        tk = at[0][1] if k < at[0][0] else at[-1][1]
        for (ka, ta), (kb, tb) in zip(at, at[1:]):
            if ka <= k < kb:
                tk = ta + (tb - ta) * math.log(k / ka) / math.log(kb / ka)
                break
        t = tk * rs / size
        return t, (f"{computing_text(size, np, at)} against {tn * 1e6:.1f} back to back: "
                   f"{tk * 1e6:.1f} at {k * 1e6:.1f} us" + (f", {t * 1e6:.1f} for {size_text(rs)}"
                                                            if rs != size else ""))

    @staticmethod
    def _contiguous(cand, np, rs, ops, notes):
        """(bandwidth, note) from contiguous candidate points (the docstring above)."""
        one = [r for r in cand if r["ops_per_process"] == 1]
        long_ = [r for r in cand if r["ops_per_process"] != 1]
        if ops is None or not one or not long_:
            # one kind of point only: each answers for any phase (as the paper's profile)
            bw, how = _lookup(long_ or one, np, rs)
            return bw, "; ".join(notes + [how])
        # t(ops) = a + b * ops. b, the time of one more operation: from each long
        # point, made exact where a one-operation point was measured at the same
        # (np, rs); where only the one-operation point was measured (a size whose
        # long measurement needed one operation), that point (a = 0 there).
        firsts = {}
        for r in one:
            firsts.setdefault((r["np"], r["transfer_size"]), []).append(r["bandwidth_Bps"])
        per_op, longs = [], set()
        for r in long_:
            n, size, k = r["np"], r["transfer_size"], r["ops_per_process"] or 1
            longs.add((n, size))
            t_long = k * size * n / r["bandwidth_Bps"]
            b = t_long / k
            if k > 1 and (n, size) in firsts:
                t_one = size * n / (sum(firsts[(n, size)]) / len(firsts[(n, size)]))
                if t_long > t_one:
                    b = (t_long - t_one) / (k - 1)
            per_op.append({**r, "bandwidth_Bps": size * n / b})
        per_op += [r for r in one if (r["np"], r["transfer_size"]) not in longs]
        bw_inf, how_inf = _lookup(per_op, np, rs)
        bw_one, how_one = _lookup(one, np, rs)
        b = rs * np / bw_inf
        a = rs * np / bw_one - b
        k = max(1, int(ops))
        if a >= 0:
            t = a + b * k
            notes.append(f"{k} op{'s' * (k > 1)} per process: fixed {a * 1e6:.0f} us + {k} x {b * 1e6:.1f} us "
                         f"(per op: {how_inf}; one op: {how_one})")
            return k * rs * np / t, "; ".join(notes)
        # a negative fixed cost (one operation alone cheaper than one more of a long
        # run: a token bucket's burst, a write-back cache, or two noisy points) is no
        # time: refused; one op is the one-op point, more are the per-op time each
        t_one = rs * np / bw_one
        t = t_one if k == 1 else b * k
        notes.append(f"{k} op{'s' * (k > 1)} per process: " +
                     (f"the one-op time, {t_one * 1e6:.1f} us" if k == 1 else f"{k} x {b * 1e6:.1f} us") +
                     f" (per op: {how_inf}; one op: {how_one}; a fixed cost fitted at {a * 1e6:.0f} us, "
                     f"below 0: refused, one op alone was faster than one more of a long run)")
        return k * rs * np / t, "; ".join(notes)

    @staticmethod
    def _match(rows, access_type, collective, notes):
        def coll_ok(r):
            return collective is None or r["collective"] == collective
        steps = [
            (lambda r: r["access_type"] == access_type and coll_ok(r), None),
            (lambda r: r["access_type"] == access_type,
             f"no {_coll(collective)} {access_type} points: used {access_type} points of any kind"),
            (lambda r: coll_ok(r),
             f"no {access_type} points: used {'/'.join(sorted({r['access_type'] for r in rows}))} ones"),
            (lambda r: True, f"no {access_type} {_coll(collective)} points: used any"),
        ]
        for keep, note in steps:
            cand = [r for r in rows if keep(r)]
            if cand:
                if note:
                    notes.append(note)
                return cand
        raise AssertionError("unreachable: rows is not empty")


def _kind(r):
    """What a one-stripe point stands in for: the sweep's point of the same
    access, collective flag, np, size, buffer offset and one operation or many."""
    return (r["access_type"], r["collective"], r["np"], r["transfer_size"], r["buffer_offset"],
            r["ops_per_process"] == 1)


def _one_stripe(rows, file_size, notes):
    """Contiguous rows for a phase on a file of `file_size` bytes (None: not one
    shared file): the points measured on one stripe (`file_cap`) in place of the
    sweep's points of their kind when the file fits in it, else without them."""
    capped = [r for r in rows if r["file_cap"]]
    if not capped:
        return rows
    rest = [r for r in rows if not r["file_cap"]]
    fit = [r for r in capped if file_size is not None and file_size <= r["file_cap"]]
    if not fit:
        return rest
    have = {_kind(r) for r in fit}
    notes.append(f"a shared file of {size_text(file_size)}, within one stripe: points measured "
                 f"on files of one stripe ({size_text(max(r['file_cap'] for r in fit))}) used "
                 "where measured")
    return fit + [r for r in rest if _kind(r) not in have]


def _view_ratio(views, contiguous, np, rs, piece):
    """(time through a view of pieces / contiguous time, note) at (np, rs, piece),
    or (None, note) without view points.  Each view point's ratio is against the
    contiguous point (of the same access type) with its collective flag, np, rs
    and operations per process.  At
    each measured piece the ratio is interpolated as a bandwidth is (`_lookup`:
    log-log in rs, linear in np, the nearest beyond the measured range), then
    log-linearly in the piece between the two measured pieces around it (the
    nearest outside them)."""
    base = {(r["collective"], r["np"], r["transfer_size"], r["ops_per_process"]): r["bandwidth_Bps"]
            for r in contiguous}
    by_piece = {}
    for r in views:
        b = base.get((r["collective"], r["np"], r["transfer_size"], r["ops_per_process"]))
        if b:
            by_piece.setdefault(r["piece"], []).append({**r, "bandwidth_Bps": b / r["bandwidth_Bps"]})
    if not by_piece:
        return None, (f"a view of pieces of {size_text(piece)}: no view point measured "
                      "(characterize --pieces), predicted as contiguous")
    pieces = sorted(by_piece)
    at = {p: _lookup_ratio(by_piece[p], np, rs) for p in pieces}
    if piece in at:
        ratio, how = at[piece], "measured piece"
    elif piece < pieces[0] or piece > pieces[-1]:
        near = pieces[0] if piece < pieces[0] else pieces[-1]
        ratio, how = at[near], f"nearest measured piece {size_text(near)}"
    else:
        lo = max(p for p in pieces if p < piece)
        hi = min(p for p in pieces if p > piece)
        f = (math.log(piece) - math.log(lo)) / (math.log(hi) - math.log(lo))
        ratio = at[lo] + f * (at[hi] - at[lo])
        how = f"interpolated between pieces {size_text(lo)} and {size_text(hi)}"
    return ratio, f"a view of pieces of {size_text(piece)}: time x {ratio:.3g} ({how})"


def _random_ratio(randoms, in_order, np, rs):
    """(time in a random order / time in order, note) at (np, rs), or (None,
    note) without random points.  Each random point's ratio is against the
    in-order point with its collective flag, np, rs and operations per process;
    the ratios are interpolated as a bandwidth is (`_lookup`: log-log in rs,
    linear in np, the nearest beyond the measured range and below the smallest
    size)."""
    base = {(r["collective"], r["np"], r["transfer_size"], r["ops_per_process"]): r["bandwidth_Bps"]
            for r in in_order}
    ratios = []
    for r in randoms:
        b = base.get((r["collective"], r["np"], r["transfer_size"], r["ops_per_process"]))
        if b:
            ratios.append({**r, "bandwidth_Bps": b / r["bandwidth_Bps"]})
    if not ratios:
        return None, ("random offsets: no random point measured (characterize --random), "
                      "predicted as in order")
    ratio = _lookup_ratio(ratios, np, rs)
    return ratio, f"random offsets: time x {ratio:.3g} (the profile's random points against in order)"


def _block_ratio(blocks, plain, np, rs, block):
    """(time in blocks of `block` transfers / time in the sweep's layout, note)
    at (np, rs), or (None, note) without such points.  Each point's ratio is
    against the longest plain point of its collective flag, np and rs (its
    operations are the plain one's rounded down to a multiple of the block),
    interpolated as `_random_ratio`'s."""
    base = {}               # the longest plain point of each (collective, np, rs): a block's ops are rounded
    for r in sorted(plain, key=lambda r: r["ops_per_process"] or 0):
        base[(r["collective"], r["np"], r["transfer_size"])] = r["bandwidth_Bps"]
    ratios = []
    for r in blocks:
        b = base.get((r["collective"], r["np"], r["transfer_size"]))
        if b and r["block_transfers"] == block:
            ratios.append({**r, "bandwidth_Bps": b / r["bandwidth_Bps"]})
    if not ratios:
        return None, (f"blocks of {block} transfers: no point measured so (characterize --for), "
                      f"predicted as the sweep's layout of one transfer a block")
    ratio = _lookup_ratio(ratios, np, rs)
    return ratio, (f"blocks of {block} transfers: time x {ratio:.3g} (the profile's points in such blocks "
                   f"against one transfer a block)")


def _lookup_ratio(points, np, rs):
    """A ratio at (np, rs) from points at one piece: as `_lookup`, but the
    nearest measured size below the smallest (a ratio has no cost per byte)."""
    smallest = min(r["transfer_size"] for r in points)
    return _lookup(points, np, max(rs, smallest))[0]


def ops_per_process(phase):
    """A phase's operations per process: its weight over np * rs (at least 1)."""
    return max(1, round(phase["weight"] / (phase["np"] * max(phase["rs"], 1))))


def _lookup(cand, np, rs):
    """(bandwidth, how) from candidate rows: measured, or interpolated in rs
    (log-log) at the measured np around `np` and linearly between them, or the
    nearest measured value outside the measured range."""
    by_np = {}
    for r in cand:
        by_np.setdefault(r["np"], {}).setdefault(r["transfer_size"], []).append(r["bandwidth_Bps"])
    nps = sorted(by_np)
    notes = []
    if np in by_np:
        bw, how = _in_rs(by_np[np], rs)
        return bw, how if how == "measured" else f"{how} at np {np}"
    if np < nps[0] or np > nps[-1]:
        near = nps[0] if np < nps[0] else nps[-1]
        bw, how = _in_rs(by_np[near], rs)
        notes.append(f"extrapolated: nearest measured np {near} (measured np {nps[0]}..{nps[-1]})")
        if how != "measured":
            notes.append(how)
        return bw, "; ".join(notes)
    lo = max(n for n in nps if n < np)
    hi = min(n for n in nps if n > np)
    b0, h0 = _in_rs(by_np[lo], rs)
    b1, h1 = _in_rs(by_np[hi], rs)
    f = (np - lo) / (hi - lo)
    notes.append(f"interpolated in np between {lo} and {hi}")
    for n, h in ((lo, h0), (hi, h1)):
        if h != "measured":
            notes.append(f"{h} at np {n}")
    return b0 + f * (b1 - b0), "; ".join(notes)


def _in_rs(sizes, rs):
    """sizes: {transfer_size: [bandwidths]} at one np -> (bandwidth, how)."""
    pts = sorted((s, sum(b) / len(b)) for s, b in sizes.items())
    if rs in sizes:
        return dict(pts)[rs], "measured"
    measured = f"(measured {size_text(pts[0][0])}..{size_text(pts[-1][0])})"
    if rs > pts[-1][0]:
        return pts[-1][1], f"extrapolated: nearest measured rs {size_text(pts[-1][0])} {measured}"
    if rs < pts[0][0]:
        return _below_smallest(pts, rs, measured)
    for (s0, b0), (s1, b1) in zip(pts, pts[1:]):
        if s0 < rs < s1:
            f = (math.log(rs) - math.log(s0)) / (math.log(s1) - math.log(s0))
            return math.exp(math.log(b0) + f * (math.log(b1) - math.log(b0))), \
                f"interpolated (log-log) in rs between {size_text(s0)} and {size_text(s1)}"
    raise AssertionError("unreachable")


def _below_smallest(pts, rs, measured):
    """A request smaller than any measured: its time per operation is affine
    in rs through the two smallest measured sizes (a fixed cost per request
    plus a cost per byte), kept between that of the smallest size's bandwidth
    (time in proportion to the bytes) and that size's time per operation (a
    smaller request costs no more).  Latency-bound points (S3D's 512-byte
    headers under a profile from 4 KiB) give about the smallest size's time;
    bandwidth-bound ones (the paper's VCs, measured from 8 MiB) its bandwidth.
    One measured size: its bandwidth."""
    s0, b0 = pts[0]
    t0 = s0 / b0
    if len(pts) < 2:
        return b0, f"extrapolated: the bandwidth of the only measured rs {size_text(s0)}"
    s1, b1 = pts[1]
    slope = (s1 / b1 - t0) / (s1 - s0)
    t = min(t0, max(t0 * rs / s0, t0 + slope * (rs - s0)))
    return rs / t, (f"extrapolated: time per op affine in rs through {size_text(s0)} and {size_text(s1)}, "
                    f"between the bandwidth and the time of one op of {size_text(s0)} {measured}")


def summary(profile):
    """Peak bandwidth per operation and access type, with where it was measured
    (like the paper's Table VI): a list of dicts with operation, access_type,
    peak_Bps, rs, np, collective, source, points (how many points)."""
    best = {}
    for r in profile.rows():
        if r["piece"] is not None or r["buffer_offset"] or r["file_cap"] or r["think_s"] or r["random"] \
                or r["block_transfers"]:
            continue              # a view's, an unaligned buffer's, one stripe's, computing, random, blocks: not a peak
        key = (r["operation"], r["access_type"])
        b = best.setdefault(key, {"operation": key[0], "access_type": key[1], "peak_Bps": -1.0, "points": 0})
        b["points"] += 1
        if r["bandwidth_Bps"] > b["peak_Bps"]:
            b.update(peak_Bps=r["bandwidth_Bps"], rs=r["transfer_size"], np=r["np"],
                     collective=r["collective"], source=r["source"])
    order = {(o, a): i for i, (o, a) in enumerate((o, a) for o in OPERATIONS for a in ACCESS_TYPES)}
    return [best[k] for k in sorted(best, key=order.get)]


def format_summary(profile):
    """summary() as a text table (bandwidth in MiB/s, as the paper's MB/s)."""
    rows = summary(profile)
    if not rows:
        return "empty profile"
    lines = [f"{'operation':<9} {'access':<7} {'peak MiB/s':>11} {'at rs':>11} {'np':>5}  {'kind':<18} points"]
    for r in rows:
        lines.append(f"{r['operation']:<9} {r['access_type']:<7} {r['peak_Bps'] / MiB:>11.1f} "
                     f"{size_text(r['rs']):>11} {r['np']:>5}  {_coll(r['collective']):<18} {r['points']}")
    spread = profile.pass_spread()
    if len(spread):
        lines.append(f"\n{len(spread)} point(s) measured in {profile.passes} passes: their passes' times "
                     f"(slowest - fastest) / median {numpy.median(spread):.1%} at the median point, "
                     f"{numpy.percentile(spread, 90):.1%} at the 90th percentile, {spread.max():.1%} "
                     "at most (the cluster's own variation: predict's pass by pass)")
        small = profile.pass_spread(max_rs=SMALL_RS)
        if len(small):       # single small requests are the unsteadiest (S3D's 512-byte headers)
            lines.append(f"of which {len(small)} of requests of {size_text(SMALL_RS)} or less: "
                         f"{numpy.median(small):.1%} at the median point, {small.max():.1%} at most")
    return "\n".join(lines)


SMALL_RS = 4096
