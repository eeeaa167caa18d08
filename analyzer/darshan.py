"""A Darshan log with DXT as the analyzer's input table (an `Ops`, analyzer/ops.py).

    ops = ops_from_darshan("run.darshan")

Darshan's DXT modules keep one record per (file, rank) with a segment per read
or write: offset, length, start and end (seconds from the job's start, which
is Darshan's time zero, taken in MPI_Init).  Each segment becomes one row:

- The rows come from DXT_MPIIO (one per MPI-IO read or write call) when the
  log has it, else from DXT_POSIX (one per POSIX read or write, after MPI-IO's
  collective buffering and data sieving, if any).  `source.inferred` says which,
  and `source.module` names it.
- DXT_MPIIO offsets are absolute byte offsets (Darshan asks MPI for the byte
  offset through the file view) but Darshan built against Open MPI, and
  Darshan 3.1, record -1.  Such an offset is taken from DXT_POSIX: the POSIX
  segments of the same rank and file, the same operation, that lie within the
  MPI call's time and together cover one contiguous range of exactly its
  length.  Otherwise it stays -1 (unknown) and `source.unavailable` says how many.
- Darshan does not record file views: an operation with a known offset is
  taken as one contiguous range (end = offset + bytes, pieces 1).
- Darshan records neither the MPI routine, nor whether a call was
  nonblocking, nor which file pointer it used, nor the communication between
  operations: routine, pointer and nonblocking are null and lclock is -1 (the
  phase finder then splits bursts by idle time).  Whether a call was
  collective is not in DXT either, but the MPI-IO module's counters of the
  same file and rank (or of all ranks, in a record Darshan reduced to rank
  -1) count collective and independent reads and writes: where they count
  only one kind for an operation (read or write), every DXT_MPIIO segment of
  it is that kind; where they count both, the segments that overlap in time
  a segment of every other rank on the file are the collective ones if they
  are exactly as many as the counters say (_collective), else null.  A log
  with no MPI-IO record at all (a POSIX application) holds only the
  application's own POSIX calls: each independent, through an open of its
  process's own (comm_size 1), as a trace records them.
- comm_size is 1 in a one-process job; in a larger job it is 1 for a file that
  exactly one rank accessed and that Darshan's MPI-IO counters do not show
  opened collectively (inferred, and said so); -1 (unknown) otherwise.
- Syncs: DXT has none, but the counters count a file's fsync and fdatasync
  (POSIX) or MPI_File_sync (MPI-IO) calls per rank, or for all ranks in a
  record Darshan reduced.  `Ops.syncs` keeps them per written file, and
  mark_synced marks a write phase `synced` from them where they can tell
  which phase was synced.
- application.hosts comes from the host name DXT keeps with each record;
  ranks with no DXT record are counted under the key "unknown".
- run_time_s is Darshan's job run time (for a log with whole-second times, as
  older Darshan versions write: end - start + 1 s, which Darshan reports).

PyDarshan (`pip install darshan`, the `darshan` extra of iomodel) is imported
only when a log is read, and reads it in a process of its own (read_log):
its C library, libdarshan-util, crashes, aborts or says no more than a line
on its standard error on many a damaged log.  A file that is not a Darshan
log, a truncated or damaged log and a log without DXT raise
DarshanInputError (a ValueError) naming the file; for the last, the message
says what the log holds (DXT traces POSIX and MPI-IO only: a log of stdio
I/O, or of none, gives no model).
"""
import os
import struct
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .contained import ChildFailed, run_contained
from .ops import OPS_SCHEMA, Ops

DARSHAN_MAGIC = 6567223     # darshan-log-format.h: DARSHAN_MAGIC_NR
HEADER_3_41 = 1328          # sizeof(struct darshan_header) since log format 3.41

ENABLE_DXT = ("Darshan traces individual operations only with DXT enabled, which is off by "
              "default: run the application again with `export DXT_ENABLE_IO_TRACE=1` (or, with "
              "a Darshan config file named by DARSHAN_CONFIG_PATH, a line "
              "`MOD_ENABLE DXT_POSIX,DXT_MPIIO`)")

UNAVAILABLE_ALWAYS = [
    "the MPI routine of each operation",
    "whether an operation was nonblocking",
    "which file pointer an operation used (explicit offset, individual or shared)",
    "the logical clock (communication between operations): bursts are split by idle time",
    "file views: whether an operation covers several ranges of the file",
    "where each operation's memory buffer sits within 4 KiB",
]


# DXT traces the operations of these modules only (DXT_POSIX, DXT_MPIIO)
TRACED_MODULES = ("POSIX", "MPI-IO")
# modules whose records are of no file (a histogram of the job's bytes over time, MPI
# and Cray system counters): left out of what a log is said to hold
NO_FILES = ("HEATMAP", "APMPI", "APXC")


def _records(report, mod):
    """A module's records as dicts (with "id", "rank", and "counters" where it has them)."""
    if mod == "LUSTRE":     # PyDarshan's generic reader skips LUSTRE's layout records
        report.mod_read_all_lustre_records(dtype="dict", warnings=False)
    else:
        report.mod_read_all_records(mod, dtype="dict", warnings=False)
    return report.records[mod] if mod in report.records else []


def _without_dxt(report):
    """What a log without DXT holds, and why that gives no model (a clause)."""
    held = {m: _records(report, m) for m in report.modules if m not in NO_FILES}

    def files(mods):
        n = len({int(r["id"]) for m in mods for r in held[m]})
        return f"{n} file{'s' if n != 1 else ''}"
    traced = [m for m in TRACED_MODULES if m in held]
    if traced:
        return (f"it holds {' and '.join(traced)} counters ({files(traced)}) but no DXT trace of "
                f"the operations, which the model needs. {ENABLE_DXT}.")
    if not held:
        return ("it holds no record of any file (the run read and wrote no file Darshan follows: "
                "it leaves out /etc, /dev, /usr, /proc, /sys and the like, and the directories "
                "DARSHAN_EXCLUDE_DIRS names)")
    what = []
    for mod, recs in held.items():
        n = files([mod])
        if mod == "STDIO":
            n += ": " + ", ".join(f"{sum(int(r['counters'][k]) for r in recs)} bytes {how}"
                                  for k, how in (("STDIO_BYTES_WRITTEN", "written"),
                                                 ("STDIO_BYTES_READ", "read")))
        what.append(f"{mod} records ({n})")
    stdio = " (`iomodel trace` records stdio calls)" if "STDIO" in held else ""
    return (f"it holds only {' and '.join(what)}, and Darshan's DXT traces the operations of "
            f"POSIX and MPI-IO only: the other modules keep per-file counters, not the "
            f"operations an I/O model is made of{stdio}")


class DarshanInputError(ValueError):
    """A file that cannot give an Ops: not a Darshan log, truncated, or without DXT."""


def _import_darshan():
    try:
        import darshan  # noqa: F401
        import darshan.report  # noqa: F401
    except ImportError as e:
        raise ImportError("reading Darshan logs needs PyDarshan: `pip install darshan` "
                          "(or `.venv/bin/pip install 'iomodel[darshan]'`)") from e
    return darshan


def _check_header(path):
    """The file's size, which its Darshan 3 log header says it needs; or raise.

    Checked here before libdarshan-util sees the file, which says a truncated
    log is one only by crashing.  The header (darshan-log-format.h) maps the
    name records' region and each module's, which follow one another up to
    the end of the file."""
    with open(path, "rb") as f:
        head = f.read(HEADER_3_41)
    for order in "<>":
        if len(head) >= 16 and head[:2] == b"3." and \
                struct.unpack(order + "q", head[8:16])[0] == DARSHAN_MAGIC:
            # 3.41 (Darshan 3.4) widened the partial flag to 64 bits and the map to 64 modules
            at, count = (32, 1 + 64) if head[:4] >= b"3.41" else (24, 1 + 16)
            size = at + 16 * count + 4 * (count - 1)        # the map, then each module's version
            if len(head) < size:
                return size
            maps = struct.unpack(f"{order}{2 * count}Q", head[at:at + 16 * count])
            return max((off + n for off, n in zip(maps[::2], maps[1::2]) if n), default=size)
    raise DarshanInputError(f"{path}: not a Darshan log (no Darshan 3 log header)")


# The reader's time: a base, and so much a MiB of log (some 25 times what PyDarshan
# takes on a busy machine: docs/security.md, "Darshan logs")
READ_SECONDS = (10.0, 60.0)


def read_limits(path):
    """(seconds, bytes) the reader of the log at `path` may take: READ_SECONDS,
    and the memory the machine has free (at least 1 GiB)."""
    seconds = READ_SECONDS[0] + READ_SECONDS[1] * os.path.getsize(path) / 2 ** 20
    try:
        with open("/proc/meminfo") as f:
            free = next(int(line.split()[1]) << 10 for line in f if line.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError):
        free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return seconds, max(free, 1 << 30)


# where in PyDarshan a string of the log is decoded (cffi_backend.py), and what it is
DECODED = {"log_get_job": "the job's metadata", "log_get_exe": "the command line",
           "log_get_mounts": "the mount table", "log_get_name_records": "a file's name",
           "log_lookup_name_records": "a file's name",
           "log_get_dxt_record": "the host name of a DXT record"}


def _pydarshan_error(path, e):
    """An exception raised inside PyDarshan while it read the log at `path`, as
    the DarshanInputError that names the file and what could not be read; None
    for one raised elsewhere (ours: a bug)."""
    import darshan
    pkg = os.path.dirname(darshan.__file__) + os.sep
    inside = [f.name for f in traceback.extract_tb(e.__traceback__) if f.filename.startswith(pkg)]
    if not inside:
        return None
    if isinstance(e, UnicodeDecodeError):
        what = next((DECODED[n] for n in reversed(inside) if n in DECODED), "a string")
        return DarshanInputError(f"{path}: the Darshan log could not be read: {what} is not UTF-8 "
                                 f"text (byte 0x{e.object[e.start]:02x} at {e.start}): is it damaged?")
    return DarshanInputError(f"{path}: the Darshan log could not be read: PyDarshan failed in "
                             f"{inside[-1]} ({type(e).__name__}: {e}): is it damaged?")


def _read(path):
    """What ops_from_darshan needs of the log, read by PyDarshan: run in the
    reader process (read_log), whose value must be plain data.  The log is
    closed before the value is returned, so that a crash of libdarshan-util
    while it cleans up fails the read too."""
    darshan = _import_darshan()
    try:
        with darshan.DarshanReport(str(path), read_all=False, dtype="dict") as report:
            modules = report.modules
            log = {"job": report.metadata["job"], "exe": report.metadata.get("exe") or "",
                   "modules": {m: {"len": int(v["len"]), "partial_flag": bool(v.get("partial_flag"))}
                               for m, v in modules.items()}}
            if "DXT_MPIIO" not in modules and "DXT_POSIX" not in modules:
                log["without_dxt"] = _without_dxt(report)
                return log
            dxt = {mod: _dxt(report, mod) for mod in ("DXT_MPIIO", "DXT_POSIX")}
            mpi = dxt["DXT_MPIIO"][0]
            # the counters of the traced layer's module, those the model reads
            counted = "MPI-IO" if mpi is not None and len(mpi["rank"]) else "POSIX"
            log.update(dxt=dxt, counters={counted: _counters(report, counted, COUNTED[counted])})
            ids = {int(i) for seg, _ in dxt.values() if seg is not None for i in np.unique(seg["id"])}
            log["names"] = {i: report.name_records[i] for i in ids if i in report.name_records}
    except MemoryError:
        raise
    except Exception as e:                      # noqa: BLE001 - PyDarshan's, or ours (raised again)
        if isinstance(e, RuntimeError) and str(e) == "Failed to open file.":
            return {"unopened": True}           # libdarshan-util refused it, saying why
        raise _pydarshan_error(path, e) or e
    return log


def read_log(path):
    """_read(path) in a reader process of its own (analyzer/contained.py): a
    crash, an abort, a hang or a runaway allocation of libdarshan-util on a
    damaged log is a DarshanInputError naming the file, as is anything the
    library says on its standard error (its only word on damage it survives)."""
    seconds, memory = read_limits(path)
    try:
        log, said = run_contained(_read, (path,), seconds=seconds, memory=memory)
    except ChildFailed as e:
        said = f" (libdarshan-util said: {e.said})" if e.said else ""
        raise DarshanInputError(f"{path}: the Darshan log could not be read: {e.reason}{said}: "
                                f"is it damaged?") from None
    if "unopened" in log:
        raise DarshanInputError(f"{path}: not a readable Darshan log" +
                                (f" (libdarshan-util said: {said})" if said else ""))
    if said:
        raise DarshanInputError(f"{path}: the Darshan log could not be read: libdarshan-util "
                                f"said: {said}: is it damaged?")
    return log


def _dxt(report, mod):
    """Per segment of a DXT module: arrays rank, rec_id, write, offset, length,
    t_start, t_end; and rank -> host name."""
    if mod not in report.modules:
        return None, {}
    report.mod_read_all_dxt_records(mod, dtype="dict", warnings=False)
    ranks, ids, write, hosts = [], [], [], {}
    off, length, t0, t1 = [], [], [], []
    for rec in report.records[mod]:  # each a one-record collection: rec[key] reads the record
        hosts.setdefault(int(rec["rank"]), rec["hostname"])
        for is_write, key in ((True, "write_segments"), (False, "read_segments")):
            segs = rec[key]
            off.extend(s["offset"] for s in segs)
            length.extend(s["length"] for s in segs)
            t0.extend(s["start_time"] for s in segs)
            t1.extend(s["end_time"] for s in segs)
            ranks.extend([int(rec["rank"])] * len(segs))
            ids.extend([int(rec["id"])] * len(segs))
            write.extend([is_write] * len(segs))
    return {"rank": np.array(ranks, np.int64), "id": np.array(ids, np.uint64),
            "write": np.array(write, bool), "offset": np.array(off, np.int64),
            "length": np.array(length, np.int64), "t_start": np.array(t0, np.float64),
            "t_end": np.array(t1, np.float64)}, hosts


def _posix_offsets(mpi, posix):
    """Offsets for the DXT_MPIIO segments recorded as -1, from DXT_POSIX (see
    the module's docstring); -1 where no POSIX segments match."""
    off = mpi["offset"].copy()
    todo = np.flatnonzero(off < 0)
    if posix is None or not len(todo) or not len(posix["rank"]):
        return off
    groups = {}
    order = np.lexsort((posix["t_start"], posix["write"], posix["id"], posix["rank"]))
    keys = list(zip(posix["rank"][order].tolist(), posix["id"][order].tolist(),
                    posix["write"][order].tolist()))
    for i, k in zip(order, keys):
        groups.setdefault(k, []).append(i)
    groups = {k: np.array(v) for k, v in groups.items()}
    used = np.zeros(len(posix["rank"]), bool)
    for i in todo:
        cand = groups.get((int(mpi["rank"][i]), int(mpi["id"][i]), bool(mpi["write"][i])))
        if cand is None:
            continue
        t0, t1 = mpi["t_start"][i], mpi["t_end"][i]
        starts = posix["t_start"][cand]
        lo, hi = np.searchsorted(starts, t0, "left"), np.searchsorted(starts, t1, "right")
        sel = cand[lo:hi]
        sel = sel[(posix["t_end"][sel] <= t1) & ~used[sel] & (posix["offset"][sel] >= 0)]
        if not len(sel):
            continue
        sel = sel[np.argsort(posix["offset"][sel], kind="stable")]
        o, n = posix["offset"][sel], posix["length"][sel]
        if n.sum() == mpi["length"][i] and np.array_equal(o[1:], o[:-1] + n[:-1]):
            off[i] = o[0]
            used[sel] = True
    return off


def _counters(report, mod, names):
    """Per (record id, rank) of a counter module: the named counters, or {}."""
    if mod not in report.modules:
        return {}
    report.mod_read_all_records(mod, dtype="dict", warnings=False)
    out = {}
    for rec in report.records[mod]:
        c = rec["counters"]
        out[(int(rec["id"]), int(rec["rank"]))] = {k: int(c.get(k, 0)) for k in names}
    return out


def _counted(log, mod, names):
    """Per (record id, rank): the named counters of `mod` the reader kept (COUNTED), or {}."""
    return {k: {n: c[n] for n in names} for k, c in log["counters"].get(mod, {}).items()}


COLL = {True: ("MPIIO_COLL_WRITES", "MPIIO_SPLIT_WRITES"), False: ("MPIIO_COLL_READS", "MPIIO_SPLIT_READS")}
INDEP = {True: ("MPIIO_INDEP_WRITES", "MPIIO_NB_WRITES"), False: ("MPIIO_INDEP_READS", "MPIIO_NB_READS")}
# the counters the model reads, of the module of the layer DXT traced (collective and
# independent calls, collective opens, syncs; reads and writes, for a partial trace)
COUNTED = {"MPI-IO": (*COLL[True], *COLL[False], *INDEP[True], *INDEP[False], "MPIIO_COLL_OPENS",
                      "MPIIO_SYNCS"),
           "POSIX": ("POSIX_READS", "POSIX_WRITES", "POSIX_FSYNCS", "POSIX_FDSYNCS")}


def _collective(cnt, seg):
    """Per DXT_MPIIO segment: 1 collective, 0 independent, -1 unknown, from
    `cnt`, the MPI-IO counters per (record id, rank) (a record Darshan reduced
    for all ranks has rank -1).  Where they count calls of one kind only for
    the segment's file, rank and operation, it is that kind.  Where they count
    both (S3D-IO's rank 0 writes the header alone, then every process its
    data collectively), the time tells which: a collective call overlaps a
    call of every other process on the file, an independent one may not; the
    segments that do are taken as the collective ones only if they are
    exactly as many as the counters count, per rank (or in all, for a reduced
    record), and the others as many as the independent ones."""
    out = np.full(len(seg["rank"]), -1, np.int8)
    if not cnt or not len(out):
        return out
    rid = seg["id"].astype(np.uint64)
    keys = np.stack([rid.view(np.int64), seg["rank"], seg["write"].astype(np.int64)], 1)
    uniq, inv = np.unique(keys, axis=0, return_inverse=True)
    inv = inv.ravel()
    kind = np.full(len(uniq), -1, np.int8)
    mixed = {}                 # (id, write) -> {rank or -1: (collective count, independent count)}
    for i, (fid, rank, write) in enumerate(uniq.tolist()):
        fid &= 0xFFFFFFFFFFFFFFFF
        own = (fid, rank) in cnt
        c = cnt.get((fid, rank)) or cnt.get((fid, -1))
        if c is None:
            continue
        coll = sum(c[k] for k in COLL[bool(write)])
        indep = sum(c[k] for k in INDEP[bool(write)])
        if coll and not indep:
            kind[i] = 1
        elif indep and not coll:
            kind[i] = 0
        elif coll and indep:
            mixed.setdefault((fid, write), {})[rank if own else -1] = (coll, indep)
    out = kind[inv]
    for (fid, write), counts in mixed.items():
        on = np.flatnonzero((rid == np.uint64(fid)) & (seg["write"] == bool(write)))
        cand = _overlaps_every_other_rank(seg["rank"][on], seg["t_start"][on], seg["t_end"][on])
        for rank, (coll, indep) in counts.items():
            mine = np.ones(len(on), bool) if rank == -1 else seg["rank"][on] == rank
            if cand is not None and cand[mine].sum() == coll and (~cand[mine]).sum() == indep:
                out[on[mine]] = cand[mine]
    return out


def _overlaps_every_other_rank(rank, t0, t1):
    """Per call: does it overlap in time a call of every other rank (None
    when only one rank made calls)."""
    ranks = np.unique(rank)
    if len(ranks) < 2:
        return None
    ok = np.ones(len(rank), bool)
    for q in ranks:
        sel = rank == q
        order = np.argsort(t0[sel], kind="stable")
        starts, ends = t0[sel][order], np.maximum.accumulate(t1[sel][order])
        k = np.searchsorted(starts, t1, side="right")       # q's calls started by each one's end
        hit = (k > 0) & (ends[np.maximum(k - 1, 0)] >= t0)
        ok &= hit | sel
    return ok


# per DXT module: the counter module, its counters of sync calls, and those calls
SYNCS = {"DXT_POSIX": ("POSIX", ("POSIX_FSYNCS", "POSIX_FDSYNCS"), "fsync or fdatasync"),
         "DXT_MPIIO": ("MPI-IO", ("MPIIO_SYNCS",), "MPI_File_sync")}


def _syncs(log, mod, seg, path_of_id):
    """Per written path: what Darshan's counters say of its syncs (see mark_synced):
    {"syncs": calls counted, "writers": processes that wrote it, "reduced": the
    counters are one record for all ranks, "every": every writer synced it, or
    (reduced) there are at least as many calls as writers}."""
    counted, names, _ = SYNCS[mod]
    cnt = _counted(log, counted, names)
    out = {}
    wrote = seg["write"]
    for fid in np.unique(seg["id"][wrote]).tolist():
        writers = np.unique(seg["rank"][wrote & (seg["id"] == np.uint64(fid))]).tolist()
        reduced = (fid, -1) in cnt
        per = [sum(cnt[(fid, -1)].values())] if reduced else \
            [sum(cnt.get((fid, r), {}).values()) for r in writers]
        out[path_of_id(fid)] = {"syncs": sum(per), "writers": len(writers), "reduced": reduced,
                                "every": per[0] >= len(writers) if reduced else min(per) > 0}
    return out


def mark_synced(phases, files, syncs, module):
    """Mark `synced` the write phases a Darshan log's counters show synced, in
    place; the sentences for source.inferred and source.unavailable.

    A trace says which write each sync followed (analyzer/ops.py, _synced);
    Darshan counts a file's sync calls per rank (or for all ranks at once, in
    a record it reduced) but not when they came.  So a file's syncs tell which
    phase they followed only where its writes are one phase: synced when every
    process that wrote it synced it (or, reduced, there are at least as many
    calls as writers), taken as after the writes.  Where the writes are
    several phases, none is marked, and the notes say why."""
    calls = SYNCS[module][2]
    inferred, unavailable = [], []
    for f in files:
        written = [syncs[p] for p in f["paths"] if p in syncs]
        total = sum(x["syncs"] for x in written)
        if not total:
            continue
        writes = [ph for ph in phases if ph["file"] == f["id"] and ph["operation"] == "write"]
        if len(writes) > 1:
            unavailable.append(
                f"which of the {len(writes)} write phases of {f['name']} (phases "
                f"{', '.join(str(ph['id']) for ph in writes)}) were synced: Darshan counts {total} "
                f"{calls} calls on it, not when they came; none is marked synced (IOR's -e)")
        elif writes and all(x["every"] for x in written):
            writes[0]["synced"] = True
            n = sum(x["writers"] for x in written)
            how = (f"{total} {calls} calls on {f['name']} in one record Darshan summed over its "
                   f"{n} writing processes, taken as one at least by each" if written[0]["reduced"]
                   else f"{calls} calls on {f['name']} by each of the {n} processes that wrote it "
                        f"({total} in all)")
            inferred.append(f"phase {writes[0]['id']} synced (IOR's -e): Darshan's counters show "
                            f"{how}, and its writes are that one phase; the syncs are taken as "
                            f"after them (the log does not say when)")
        elif writes:
            inferred.append(f"phase {writes[0]['id']} not synced: Darshan counts {total} {calls} "
                            f"calls on {f['name']}, but not by every process that wrote it")
    return inferred, unavailable


def _run_time(job, last_end, inferred):
    """The job's run time, at least until its last traced operation ended."""
    run_time = float(job["run_time"])
    if not job.get("start_time_nsec") and not job.get("end_time_nsec"):
        inferred.append(f"run time: this log keeps whole seconds; Darshan counts it as end - "
                        f"start + 1 = {run_time:g} s")
    if last_end > run_time:
        # Darshan 3.5 times DXT from the start of its setup in MPI_Init on each rank, and
        # takes the job's start time later in that setup
        inferred.append(f"run time: {last_end:g} s, when the last traced operation ended, after "
                        f"the {run_time:g} s Darshan gives the job (DXT's time zero comes before "
                        f"the job's start time Darshan records)")
        run_time = last_end
    return run_time


def ops_from_darshan(path, name=None, command=None):
    """The data operations of a Darshan log with DXT (see the module's docstring)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such Darshan log")
    _import_darshan()
    size, need = os.path.getsize(path), _check_header(path)
    if size < need:
        raise DarshanInputError(f"{path}: truncated Darshan log ({size} bytes, its header "
                                f"describes {need})")
    log = read_log(path)
    job = log["job"]
    nprocs = int(job["nprocs"])
    modules = log["modules"]
    if "without_dxt" in log:
        raise DarshanInputError(f"{path}: no I/O model can be made from this Darshan log: "
                                f"{log['without_dxt']}")
    unavailable = list(UNAVAILABLE_ALWAYS)
    inferred = []
    mpi, mpi_hosts = log["dxt"]["DXT_MPIIO"]
    posix, posix_hosts = log["dxt"]["DXT_POSIX"]
    if mpi is not None and len(mpi["rank"]):
        mod, seg = "DXT_MPIIO", mpi
        inferred.append("operations from Darshan's DXT_MPIIO trace: one per MPI-IO read or "
                        "write call")
        if posix is not None:
            only_posix = set(posix["id"].tolist()) - set(mpi["id"].tolist())
            if only_posix:
                inferred.append(f"{len(only_posix)} file(s) accessed only through POSIX (not "
                                f"MPI-IO) are left out")
        unknown = int((mpi["offset"] < 0).sum())
        if unknown:
            seg = dict(mpi, offset=_posix_offsets(mpi, posix))
            found = unknown - int((seg["offset"] < 0).sum())
            if found:
                inferred.append(f"file offsets of {found} of {len(mpi['rank'])} operations from "
                                f"DXT_POSIX: DXT_MPIIO records -1 (as Darshan built against Open "
                                f"MPI does), and the POSIX reads or writes of the same rank and "
                                f"file during the call cover one contiguous range of its length")
            if unknown - found:
                unavailable.append(f"the file offset of {unknown - found} of {len(mpi['rank'])} "
                                   f"operations: DXT_MPIIO records -1 (as Darshan built against "
                                   f"Open MPI does) and no DXT_POSIX segment of the same rank and "
                                   f"file matches")
    else:
        mod, seg = "DXT_POSIX", posix if posix is not None else mpi
        inferred.append("operations from Darshan's DXT_POSIX trace (the log has no DXT_MPIIO "
                        "operations): one per POSIX read or write, after any MPI-IO collective "
                        "buffering or data sieving")
    if modules.get(mod, {}).get("partial_flag"):
        cnt = _counted(log, "MPI-IO" if mod == "DXT_MPIIO" else "POSIX",
                        ["MPIIO_INDEP_READS", "MPIIO_COLL_READS", "MPIIO_SPLIT_READS",
                         "MPIIO_NB_READS", "MPIIO_INDEP_WRITES", "MPIIO_COLL_WRITES",
                         "MPIIO_SPLIT_WRITES", "MPIIO_NB_WRITES"] if mod == "DXT_MPIIO"
                        else ["POSIX_READS", "POSIX_WRITES"])
        total = sum(sum(v.values()) for v in cnt.values())
        counted = f"; Darshan's counters count {total} reads and writes" if total else ""
        unavailable.append(f"the later operations: the log marks {mod} incomplete (its DXT memory "
                           f"filled up during the run), it keeps {len(seg['rank'])}{counted}")

    n = len(seg["rank"])
    outside = (seg["rank"] < 0) | (seg["rank"] >= nprocs)
    if outside.any():
        raise DarshanInputError(f"{path}: damaged Darshan log: a {mod} record of rank "
                                f"{int(seg['rank'][outside][0])}, outside the job's {nprocs} "
                                f"process{'es' * (nprocs != 1)}")
    collective = np.full(n, -1, np.int8)
    # no MPI-IO at all: the POSIX calls are the application's own (not those MPI-IO
    # makes beneath its calls), each through an open of its process's own
    own_posix = mod == "DXT_POSIX" and "MPI-IO" not in modules
    if mod == "DXT_MPIIO" and "MPI-IO" in modules:
        collective = _collective(_counted(log, "MPI-IO", [*COLL[True], *COLL[False], *INDEP[True],
                                                         *INDEP[False]]), seg)
        known = int((collective >= 0).sum())
        if known:
            inferred.append(f"whether an operation was collective, for {known} of {n} operations, "
                            f"from Darshan's MPI-IO counters of its file and rank: of one kind "
                            f"only, or of both and as many as its calls that overlap in time "
                            f"a call of every other process (collective) and the others")
        if known < n:
            unavailable.append(f"whether an operation was collective, for {n - known} of {n} "
                               f"operations (Darshan's MPI-IO counters of their file count both "
                               f"kinds, in other numbers than their calls' overlaps in time, or "
                               f"none)")
    elif own_posix:
        collective[:] = 0
        inferred.append("the log has no MPI-IO record: every operation is a POSIX call of the "
                        "application's own, so independent, through an open of its process's "
                        "own (comm_size 1)")
    else:
        unavailable.append("whether an operation was collective")
    names = log["names"]
    ids = seg["id"]
    uniq_ids, id_idx = np.unique(ids, return_inverse=True)
    path_of_id = [names.get(int(i), str(int(i))) for i in uniq_ids.tolist()]
    paths = np.array(path_of_id, dtype=object)[id_idx] if n else np.zeros(0, object)

    # comm_size, per file (record id)
    comm = np.full(len(uniq_ids), -1, np.int32)
    if nprocs == 1 or own_posix:
        comm[:] = 1
    elif n:
        width = int(seg["rank"].max()) + 1
        pairs = np.unique(id_idx * width + seg["rank"])         # distinct (file, rank)
        single = np.flatnonzero(np.bincount(pairs // width, minlength=len(uniq_ids)) == 1)
        if len(single):
            counted = mod == "DXT_MPIIO" and "MPI-IO" in modules
            coll = Counter()
            if counted:
                for (rid, _), c in _counted(log, "MPI-IO", ["MPIIO_COLL_OPENS"]).items():
                    coll[rid] += c["MPIIO_COLL_OPENS"]
            single = [k for k in single if not coll[int(uniq_ids[k])]]
            comm[single] = 1
            if single:
                how = "and Darshan's MPI-IO counters show no collective open" if counted else \
                    "(Darshan does not record communicators)"
                inferred.append(f"comm_size 1 for {len(single)} file(s) accessed by exactly one "
                                f"rank {how}")
    comm_size = comm[id_idx] if n else np.zeros(0, np.int32)

    offset = seg["offset"]
    known = offset >= 0
    if known.any():
        inferred.append("each operation with a known offset is taken as one contiguous range "
                        "(end = offset + bytes)")
    offset = np.where(known, offset, -1)
    end = np.where(known, offset + seg["length"], -1)
    table = pa.table({
        "rank": pa.array(seg["rank"].astype(np.int32)),
        "path": pa.array(paths.tolist(), pa.string()),
        "write": pa.array(seg["write"]),
        "routine": pa.nulls(n, pa.string()),
        "collective": pa.array(collective == 1, mask=collective < 0),
        "bytes": pa.array(seg["length"]),
        "offset": pa.array(offset.astype(np.int64)),
        "end": pa.array(end.astype(np.int64)),
        "pieces": pa.array(known.astype(np.int32)),
        "t_start": pa.array(seg["t_start"]),
        "t_end": pa.array(seg["t_end"]),
        "lclock": pa.array(np.full(n, -1, np.int64)),
        "comm_size": pa.array(comm_size.astype(np.int32)),
        "pointer": pa.nulls(n, pa.string()),
        "nonblocking": pa.nulls(n, pa.bool_()),
        "buffer_offset": pa.nulls(n, pa.int16()),
    }, schema=OPS_SCHEMA)
    table = table.take(pc.sort_indices(table, [("rank", "ascending"), ("t_start", "ascending"),
                                               ("t_end", "ascending")]))

    host_of_rank = dict(posix_hosts)
    host_of_rank.update(mpi_hosts)
    hosts = dict(Counter(h for r, h in host_of_rank.items() if 0 <= r < nprocs))
    seen = sum(hosts.values())
    if seen < nprocs:
        hosts["unknown"] = nprocs - seen
        unavailable.append(f"the host of {nprocs - seen} of {nprocs} ranks (no DXT record): "
                           f"counted under \"unknown\"")
    if seen:
        inferred.append("hosts from the host name Darshan's DXT keeps with each rank's records")

    # Darshan joins the arguments with spaces, unquoted: split on spaces
    argv = log["exe"].split()
    if command is None:
        command = argv
    if not argv:
        unavailable.append("the command line (the log's is empty)")
    if name is None:
        name = os.path.basename(argv[0]) if argv else path.stem
    run_time = _run_time(job, float(seg["t_end"].max()) if n else 0.0, inferred)
    ops = Ops(table, name, list(command), nprocs, hosts, run_time,
              source={"kind": "darshan", "path": str(path), "module": mod,
                      "unavailable": unavailable, "inferred": inferred},
              final_lclock=None)
    ops.syncs = _syncs(log, mod, seg, lambda i: names.get(int(i), str(int(i))))
    return ops
