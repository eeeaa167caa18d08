"""A trace directory as Arrow tables: the one entry point for reading traces.

    t = Trace("run1/")          # reads and checks the rank files
    t.events                    # pyarrow.Table, one row per traced call
    t.files, t.views, t.ranks   # opens, file views, ranks
    t.extents                   # absolute byte ranges of every data access
    t.to_parquet("out/")

Tables are built once, on first use, from per-rank numpy arrays; each access
is resolved to absolute byte ranges through the file view it was made under.
A damaged trace raises TraceError naming the file and byte offset; its
`.partial` attribute is a Trace of everything before the damage
(`Trace(path, partial=True)` gives that directly, with `.errors` listing the
damage).  An empty rank file (a rank stopped after its tracer created the file,
before it wrote anything) is no damage but a rank the trace lacks (`gaps`).
"""
import functools
from pathlib import Path

import numpy as np
import pyarrow as pa

from iomodel.outputs import atomic_path

from .jobfile import JOB_NAME, job_images
from .linking import apply_ordered, latest_at_or_before, link_rank, piece_budget, resolve_rank
from .tracefile import (F_COLL, F_COMPLETE, F_ERROR, F_SAMECALL, TraceError, buffer_offsets,
                        read_rank_file)

TRACE_SUFFIX = ".iot"


# POSIX and stdio calls (tracer/wrappers.tmpl; tests/test_posix.py checks the two agree)
POSIX_READS = {"read", "__read_chk", "pread", "pread64", "__pread_chk", "__pread64_chk", "readv",
               "preadv", "preadv64"}
POSIX_WRITES = {"write", "pwrite", "pwrite64", "writev", "pwritev", "pwritev64",
                "dprintf", "vdprintf", "__dprintf_chk", "__vdprintf_chk"}
POSIX_EXPLICIT = {"pread", "pread64", "__pread_chk", "__pread64_chk", "preadv", "preadv64",
                  "pwrite", "pwrite64", "pwritev", "pwritev64"}     # at an offset the call gives
STDIO_READS = {"fread", "__fread_chk", "fread_unlocked", "__fread_unlocked_chk",
               "fgetc", "getc", "_IO_getc", "fgetc_unlocked", "getc_unlocked", "getchar", "getchar_unlocked",
               "fgets", "fgets_unlocked", "__fgets_chk", "__fgets_unlocked_chk",
               "getline", "getdelim", "__getdelim",
               "vfscanf", "fscanf", "__isoc99_vfscanf", "__isoc99_fscanf",
               "vscanf", "scanf", "__isoc99_vscanf", "__isoc99_scanf"}
STDIO_WRITES = {"fwrite", "fwrite_unlocked",
                "fputc", "putc", "_IO_putc", "fputc_unlocked", "putc_unlocked", "putchar", "putchar_unlocked",
                "fputs", "fputs_unlocked", "puts",
                "vfprintf", "fprintf", "__vfprintf_chk", "__fprintf_chk",
                "vprintf", "printf", "__vprintf_chk", "__printf_chk"}
STDIO = STDIO_READS | STDIO_WRITES | {
    "fopen", "fopen64", "fdopen", "freopen", "freopen64", "fclose", "fseek", "fseeko", "fseeko64",
    "fsetpos", "fsetpos64", "rewind", "ungetc", "ftell", "ftello", "ftello64", "fflush"}
UNDER_MPI = " under MPI"           # a POSIX call MPI-IO made inside a traced MPI call
OPENS = {"MPI_File_open", "open", "open64", "__open_2", "__open64_2", "openat", "openat64", "creat",
         "creat64", "fopen", "fopen64", "fdopen"}


def burst_routine(name):
    """The routine a data call counts as when bursts are cut (docs/commands/analyze.md,
    step 2): stdio's calls of one direction are one (fprintf, fputc and fwrite
    all write at the stream's position, so a text log is one pattern, not a
    burst per call), and so are POSIX's of one direction and file pointer
    (write, writev and dprintf at the descriptor's; pwrite and pwrite64 at
    their offset); any other routine is itself."""
    for names, kind in ((STDIO_WRITES, "fwrite"), (STDIO_READS, "fread")):
        if name in names:
            return kind
    if name in POSIX_WRITES | POSIX_READS:
        return ("pwrite" if name in POSIX_WRITES else "pread") if name in POSIX_EXPLICIT else \
            ("write" if name in POSIX_WRITES else "read")
    return name


def interface(name):
    """The I/O interface of a routine: MPI-IO, POSIX or STDIO (a call MPI-IO made:
    POSIX under MPI-IO)."""
    if name.endswith(UNDER_MPI):
        return "POSIX under MPI-IO"
    if name.startswith("MPI_"):
        return "MPI-IO"
    return "STDIO" if name in STDIO else "POSIX"


def routine_traits(name):
    """What a routine's name says about the access it makes: MPI-IO's, or the
    application's own POSIX and stdio calls (a call MPI-IO made underneath is no
    data access of the application's)."""
    if not name.startswith("MPI_"):
        read, write = name in POSIX_READS | STDIO_READS, name in POSIX_WRITES | STDIO_WRITES
        data = read or write
        return dict(data=data, write=write, read=read,
                    pointer=("explicit" if name in POSIX_EXPLICIT else "individual") if data else None,
                    collective=False, nonblocking=False, split=False, interface=interface(name))
    if name.endswith("_c"):     # an MPI-4 large-count form: the same access as MPI_X
        name = name[:-2]
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
                split=data and name.endswith("_begin"), interface="MPI-IO")


def _lists(arrays):
    """One Arrow list of int64 a numpy array, without a Python int an element."""
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in arrays], dtype=np.int64)])
    values = pa.array(np.concatenate(arrays) if arrays else np.zeros(0, np.int64), pa.int64())
    if offsets[-1] < 2 ** 31:
        return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), values)
    return pa.LargeListArray.from_arrays(pa.array(offsets), values)


def _empty(path):
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


# The events table's columns before their Arrow types (`Trace._tables`): each
# holds what the rank files and the linking give, in the type it is stored in.
EVENT_COLUMNS = {"rank": np.int32, "seq": np.int64, "routine": np.int32, "open_id": np.int64,
                 "file_id": np.int32, "flags": np.uint8, "lclock": np.uint32, "offset": np.int64,
                 "bytes": np.int64, "t_start": np.float64, "t_end": np.float64, "request": np.int64,
                 "t_complete": np.float64, "abs_offset": np.int64, "abs_end": np.int64,
                 "resolved": bool, "pieces": np.int32, "buffer_offset": np.int16}


class Trace:
    def __init__(self, path, partial=False, lazy=False):
        self.path = Path(path)
        if not self.path.is_dir():
            raise TraceError(str(self.path), None, "no such trace directory")
        self.partial = partial
        self.errors = []
        # the ranks' traces: rank files, and the images in a job file
        files = sorted(self.path.glob("rank-*" + TRACE_SUFFIX))
        self.empty_files = [f for f in files if _empty(f)]
        self.rank_files = [f for f in files if f not in self.empty_files]
        job = self.path / JOB_NAME
        if job.exists():
            try:
                self.rank_files += job_images(job)
            except TraceError as e:
                if not partial:
                    raise
                self.errors.append(e)
        if not self.rank_files and not self.errors and self.empty_files:
            raise TraceError(str(self.path), None, f"every rank file is empty ({len(self.empty_files)}): "
                             "the ranks were stopped before the tracer wrote anything (in MPI_Init)")
        if not self.rank_files and not self.errors:
            raise TraceError(str(self.path), None, f"no rank-*{TRACE_SUFFIX} files or {JOB_NAME}: "
                             "not an iomodel trace")
        if not lazy:
            self._rank_traces()  # read now: raise (or list in .errors) any damage

    @property
    def empty_ranks(self):
        """The ranks whose files are empty, by the files' names."""
        return [int(f.name[len("rank-"):-len(TRACE_SUFFIX)]) for f in self.empty_files
                if f.name[len("rank-"):-len(TRACE_SUFFIX)].isdigit()]

    @property
    def trace_bytes(self):
        """The bytes of the trace's files: rank files, job file, continuations."""
        files = {Path(str(getattr(f, "job", f))) for f in self.rank_files}
        files |= set(self.path.glob("rank-*" + TRACE_SUFFIX + ".after"))
        return sum(f.stat().st_size for f in files)

    def scan(self):
        """Each rank's trace in turn, read when reached and not kept, so that
        memory holds one rank at a time (what the analyzer needs).  Damage
        raises TraceError as Trace() does, or with partial=True is listed in
        .errors and what comes before it is given."""
        if "_raw" in self.__dict__:
            yield from self._raw
            return
        seen, clock = {}, _HostClock()
        for f in self.rank_files:
            try:
                r = clock.align(read_rank_file(f))
            except TraceError as e:
                if not self.partial:
                    e.partial = Trace(self.path, partial=True)
                    raise e
                self.errors.append(e)
                r = e.partial
                if r is None:
                    continue
                clock.align(r)
            if r.rank in seen:
                err = TraceError(r.path, 16, f"rank {r.rank} is also in {seen[r.rank]}")
                if not self.partial:
                    err.partial = Trace(self.path, partial=True)
                    raise err
                self.errors.append(err)
                continue
            seen[r.rank] = r.path
            yield r

    @functools.cached_property
    def _raw(self):
        out = []
        for f in self.rank_files:
            try:
                out.append(read_rank_file(f))
            except TraceError as e:
                self.errors.append(e)
                if e.partial is not None:
                    out.append(e.partial)
        seen = {}
        for r in out:
            if r.rank in seen:
                self.errors.append(TraceError(r.path, 16, f"rank {r.rank} is also in {seen[r.rank]}"))
            seen[r.rank] = r.path
        out = sorted((r for r in out if seen[r.rank] == r.path), key=lambda r: r.rank)
        budget = [0]        # every rank held at once: one budget of flattened pieces for all
        for r in out:
            r.type_blocks["budget"] = budget
        clock = _HostClock()
        return [clock.align(r) for r in out]

    def _rank_traces(self):
        raw = self._raw
        if self.errors and not self.partial:
            err = self.errors[0]
            err.partial = Trace(self.path, partial=True)
            raise err
        return raw

    @functools.cached_property
    def gaps(self):
        """What the trace lacks (analyzer/coverage.py): None when it is whole, else
        the lists of ranks missing, without events or stopped early, and notes."""
        from .coverage import Coverage
        coverage = Coverage()
        damaged = {e.path for e in self.errors}
        for r in self._rank_traces():
            coverage.add(r, damaged=r.path in damaged)
        coverage.add_empty(self.empty_ranks)
        return coverage.partial()

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
            "stopped": [None if not r.stopped else
                        f"after {r.stopped['events_kept']} of {r.stopped['events_total']} events: "
                        f"{r.stopped['error']}" for r in raw],
            "path": [r.path for r in raw],
        })

    @functools.cached_property
    def _opens(self):
        """The opens (rows) and every path the trace names: opened, deleted, or
        named by an open that failed."""
        raw = self._rank_traces()
        rows = [dict(o, rank=r.rank) for r in raw for o in r.opens]
        paths = sorted({o["path"] for o in rows} | {x["path"] for r in raw for x in r.named})
        return rows, paths

    @property
    def program_command(self):
        """Rank 0's command line, as the tracer read it at MPI_Init."""
        raw = self._rank_traces()
        return list(raw[0].command) if raw else []

    @property
    def program_name(self):
        return self.program_name_of(self.program_command)

    @staticmethod
    def program_name_of(cmd):
        """The program's name: its first argument, or the script an interpreter runs."""
        cmd = list(cmd or [])
        if len(cmd) > 1 and Path(cmd[0]).name.startswith(("python", "pypy")):
            return Path(next((a for a in cmd[1:] if not a.startswith("-")), cmd[0])).name
        return Path(cmd[0]).name if cmd else "unknown"

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
        vrows = [dict(v, rank=r.rank, blocks=v["blocks"], capped=v["capped"])
                 for r in self._rank_traces() for v in r.views]
        return pa.table({
            "rank": pa.array([v["rank"] for v in vrows], pa.int32()),
            "seq": pa.array([v["seq"] for v in vrows], pa.int64()),
            "open_id": pa.array(self._view_open_ids, pa.int64()),
            "disp": pa.array([v["disp"] for v in vrows], pa.int64()),
            "etype_size": pa.array([v["etype_size"] for v in vrows], pa.int64()),
            "filetype_size": pa.array([v["filetype_size"] for v in vrows], pa.int64()),
            "filetype_extent": pa.array([v["filetype_extent"] for v in vrows], pa.int64()),
            "blocks": pa.array([len(v["blocks"]) for v in vrows], pa.int64()),
            # lists straight from the blocks' arrays (no Python int a block)
            "block_offsets": _lists([v["blocks"][:, 0] for v in vrows]),
            "block_lengths": _lists([v["blocks"][:, 1] for v in vrows]),
            "capped": [v["capped"] for v in vrows],
            "undecoded": [v["undecoded"] for v in vrows],
            # the filetype's description in the trace (its type records), null: stored as pieces
            "type_id": pa.array([v.get("type_id") for v in vrows], pa.int64()),
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
    def _routines(self):
        names = sorted({n for r in self._rank_traces() for n in r.routines})
        return names, [routine_traits(n) for n in names]

    def _trait(self, key):
        return np.array([t[key] for t in self._routines[1]] + [False], bool)

    @functools.cached_property
    def _links(self):
        names = self._routines[0]
        links = []
        for r in self._rank_traces():
            if len(r.events) and int(r.events["op"].max()) >= len(r.routines):
                raise TraceError(r.path, None, "an event names a routine missing from the routine table")
            index = np.array([names.index(x) for x in r.routines] or [0], np.int32)
            links.append(link_rank(r, index, self._trait("data")))
        is_ordered = np.array([t["pointer"] == "ordered" for t in self._routines[1]] + [False], bool)
        apply_ordered(links, is_ordered)
        return links

    @functools.cached_property
    def _view_open_ids(self):
        out, base = [], 0
        for r in self._rank_traces():
            slots = np.array([v["slot"] for v in r.views], np.int64)
            seqs = np.array([v["seq"] for v in r.views], np.int64)
            oid = latest_at_or_before([o["slot"] for o in r.opens], [o["seq"] for o in r.opens], slots, seqs)
            out += [int(i) + base if i >= 0 else -1 for i in oid]
            base += len(r.opens)
        return out

    @functools.cached_property
    def _tables(self):
        rows, paths = self._opens
        pid = {p: i for i, p in enumerate(paths)}
        names = self._routines[0]
        # each column filled in place, rank after rank: concatenating per-rank arrays
        # held both them and the result (a trace's events twice over) at the end
        n_all = sum(len(l.data) for l in self._links)
        c = {k: np.empty(n_all, t) for k, t in EVENT_COLUMNS.items()}
        ext = {k: [] for k in ("rank", "seq", "file_id", "offset", "length")}
        open_base = at = 0
        room = piece_budget()       # every rank's extents held at once: one budget of pieces
        for l in self._links:
            r, n = l.raw, len(l.data)
            abs_off, abs_end, resolved, pieces, (w, o, ln) = resolve_rank(l, room=room)
            file_of_open = np.array([pid[x["path"]] for x in r.opens] + [-1], np.int32)
            for k, v in (("rank", r.rank), ("seq", np.arange(n)),
                         ("routine", l.routine), ("open_id", np.where(l.open_idx >= 0, l.open_idx + open_base, -1)),
                         ("file_id", file_of_open[l.open_idx]), ("flags", r.events["flags"]),
                         ("lclock", r.events["lclock"]), ("offset", r.events["offset"]),
                         ("bytes", l.nbytes), ("t_start", r.t_start), ("t_end", r.t_end),
                         ("request", l.request), ("t_complete", l.t_complete),
                         ("abs_offset", abs_off), ("abs_end", abs_end), ("resolved", resolved),
                         ("pieces", pieces), ("buffer_offset", buffer_offsets(r.buffers, n))):
                c[k][at:at + n] = v
            for x in r.named:           # a delete's or a failed open's file, which no open gives
                if x["seq"] < n:
                    c["file_id"][at + x["seq"]] = pid[x["path"]]
            for k, v in (("rank", np.full(len(w), r.rank, np.int32)), ("seq", w),
                         ("file_id", file_of_open[l.open_idx[w]]), ("offset", o), ("length", ln)):
                ext[k].append(v)
            open_base += len(r.opens)
            at += n
        rid = c["routine"]
        flags = c["flags"]
        completion = (flags & F_COMPLETE) != 0
        trait = {k: self._trait(k)[rid] for k in ("data", "write", "read", "collective", "nonblocking", "split")}
        events = pa.table({
            "rank": pa.array(c["rank"], pa.int32()),
            "seq": pa.array(c["seq"], pa.int64()),
            "routine": pa.DictionaryArray.from_arrays(pa.array(rid), pa.array(names, pa.string())),
            "file_id": pa.array(c["file_id"], pa.int32()),
            "open_id": pa.array(c["open_id"], pa.int64()),
            "data": pa.array(trait["data"] & ~completion),
            "write": pa.array(trait["write"]),
            "read": pa.array(trait["read"]),
            "collective": pa.array(trait["collective"] | ((flags & F_COLL) != 0)),
            "nonblocking": pa.array(trait["nonblocking"] | trait["split"]),
            "completion": pa.array(completion),
            # False for the 2nd, 3rd... request one Wait/Test call completed
            "call": pa.array((flags & F_SAMECALL) == 0),
            "error": pa.array((flags & F_ERROR) != 0),
            "lclock": pa.array(c["lclock"], pa.uint32()),
            "offset": pa.array(c["offset"], pa.int64()),
            "bytes": pa.array(c["bytes"], pa.int64()),
            "t_start": pa.array(c["t_start"], pa.float64()),
            "t_end": pa.array(c["t_end"], pa.float64()),
            "request": pa.array(c["request"], pa.int64()),
            "t_complete": pa.array(c["t_complete"], pa.float64()),
            "abs_offset": pa.array(c["abs_offset"], pa.int64()),
            "abs_end": pa.array(c["abs_end"], pa.int64()),
            "resolved": pa.array(c["resolved"]),
            "pieces": pa.array(c["pieces"], pa.int32()),
            # where the call's buffer sat within 4 KiB (null: not a data access, or a
            # version-1 trace, which did not record it)
            "buffer_offset": pa.array(c["buffer_offset"], pa.int16(),
                                      mask=(c["buffer_offset"] < 0) | ~(trait["data"] & ~completion)),
        })
        e = {k: np.concatenate(v) if v else np.zeros(0, np.int64) for k, v in ext.items()}
        extents = pa.table({
            "rank": pa.array(e["rank"], pa.int32()),
            "seq": pa.array(e["seq"], pa.int64()),
            "file_id": pa.array(e["file_id"], pa.int32()),
            "offset": pa.array(e["offset"], pa.int64()),
            "length": pa.array(e["length"], pa.int64()),
        })
        return events, extents

    def to_parquet(self, outdir):
        import pyarrow.parquet as pq     # only here: it takes a share of every command's start
        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        for name in ("events", "files", "views", "ranks", "extents"):
            with atomic_path(out / f"{name}.parquet") as tmp:
                pq.write_table(getattr(self, name), tmp)
        return out


# Two ranks' monotonic clocks differ by more than this: not one clock after all
# (a time namespace); keep the barrier's alignment.
SAME_CLOCK_MAX_S = 1.0


class _HostClock:
    """Each rank's time zero is its own exit from the tracer's barrier, and ranks
    leave a barrier up to hundreds of microseconds apart when they outnumber the
    cores (4 ranks on 2 CPUs).  Ranks on one host share CLOCK_MONOTONIC, so put
    each on the time zero of the host's lowest rank (the first one given):
    exact within a host, a barrier's exit skew between hosts."""

    def __init__(self):
        self.ref = {}

    def align(self, r):
        ref = self.ref.setdefault(r.hostname, r.mono_origin_ns)
        shift = (int(r.mono_origin_ns) - int(ref)) * 1e-9
        if shift and abs(shift) < SAME_CLOCK_MAX_S and r.t_start is not None:
            r.t_start = r.t_start + shift
            r.t_end = r.t_end + shift
        return r


def open_trace(path, partial=False):
    return Trace(path, partial=partial)


__all__ = ["Trace", "TraceError", "open_trace", "routine_traits", "interface"]
