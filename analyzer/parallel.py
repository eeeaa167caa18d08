"""`analyze` on every core: the per-rank stages run in worker processes.

The trace's rank traces (rank files, job images) are split into one
contiguous block per worker, balanced by bytes.  Each worker, forked from the
analyzer, reads its ranks (tracefile, linking: analyzer/ops.py's read_ranks)
and keeps their operations; the analyzer gathers what the model needs of the
whole job (paths and routines, clocks, files, ordered calls), then asks the
workers for the gaps that set the burst threshold (pass 1) and for their
ranks' bursts (pass 2), and finds the phases over all the bursts itself.  The
model is the one the serial analysis builds: same order of paths, routines,
hosts and ranks (docs/commands/analyze.md, "Cores").

Any failure in a worker (a damaged trace above all) sends the analysis back to
the serial path, which reports it as it always does.
"""
import mmap
import multiprocessing
import os
import traceback
from dataclasses import dataclass

import numpy as np

from .ops import RanksRead, place_ordered, read_ranks
from .phases import (BURST_DTYPES, BURST_FIELDS, _merge_calls, rank_burst_count,
                     rank_gap_values, rank_reduce)
from .trace import SAME_CLOCK_MAX_S
from .tracefile import read_rank_file

# below this many trace bytes, forking the workers costs more than it saves
MIN_PARALLEL_BYTES = 4 << 20


class WorkerFailed(Exception):
    """A worker could not do its part; the serial analysis takes over."""


def cores():
    """The cores this process may run on (taskset, cgroups' cpusets)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def workers_for(trace, jobs):
    """How many workers analyse `trace`: `jobs`, or (None) one per core for a
    trace of MIN_PARALLEL_BYTES or more; at most one a rank, and none where
    they cannot share memory with the analyzer (no memfd: not Linux)."""
    if not hasattr(os, "memfd_create"):
        return 1
    if jobs is None:
        jobs = cores() if trace.trace_bytes >= MIN_PARALLEL_BYTES else 1
    return min(jobs, len(trace.rank_files))


def source_bytes(src):
    """The work a rank trace is: its raw size in a job file, else its file's size."""
    return getattr(src, "raw_size", None) or os.path.getsize(src)


def split_sources(sources, parts):
    """`parts` contiguous, non-empty blocks of `sources` (at most one a
    source), each ending where the bytes so far come nearest to its share."""
    cum = np.cumsum([source_bytes(s) for s in sources], dtype=np.float64)
    parts = min(parts, len(sources))
    bounds = [0]
    for i in range(1, parts):
        target = cum[-1] * i / parts
        c = int(np.searchsorted(cum, target)) + 1          # the first block end reaching it
        if c > 1 and target - cum[c - 2] < cum[c - 1] - target:
            c -= 1                                         # the one before is nearer
        bounds.append(min(max(c, bounds[-1] + 1), len(sources) - (parts - i)))
    bounds.append(len(sources))
    return [sources[a:b] for a, b in zip(bounds, bounds[1:])]


@dataclass
class RankFacts:
    """What the analyzer keeps of a rank whose operations are in a worker:
    what Ops.features, file_groups, _file_stats and _lower_layer read."""
    rank: int
    n: int
    single: dict
    extent: dict
    routine: np.ndarray      # the routines it used (global indices)
    collective: np.ndarray   # the collectivity values it has
    reread: object           # None when unknown, as RankOps.reread
    lower: dict

    def __len__(self):
        return self.n


# ------------------------------------------------------------------ worker

def _facts(r, origin):
    return {"rank": r.rank, "n": len(r), "single": r.single, "extent": r.extent,
            "routine": np.unique(r.routine), "collective": np.unique(r.collective),
            "reread": None if r.reread is None else True, "lower": r.lower, "origin": origin}


def _remap(r, path_map, routine_map, shift):
    """A rank's operations onto the job's path and routine indices and its host's clock."""
    r.path = path_map[r.path]
    r.routine = routine_map[r.routine].astype(np.int16)
    r.extent = {int(path_map[q]): e for q, e in r.extent.items()}
    r.single = {int(path_map[q]): s for q, s in r.single.items()}
    if r.lower is not None:
        r.lower["path"] = path_map[r.lower["path"]]
    if shift:
        r.t_start = r.t_start + shift
        r.t_end = r.t_end + shift
        if r.lower is not None:
            r.lower["t_start"] = r.lower["t_start"] + shift
            r.lower["t_end"] = r.lower["t_end"] + shift


def _serve(conn, sources, fd):
    """A worker: read the ranks of `sources`, then answer the analyzer's passes."""
    try:
        origins = []

        def traces():
            for src in sources:
                r = read_rank_file(src)
                origins.append((r.hostname, int(r.mono_origin_ns), r.t_start is not None))
                yield r
        read = read_ranks(traces())
        ranks = read.ranks
        facts = [_facts(r, o) for r, o in zip(ranks, origins)]
        summary = {k: getattr(read, k) for k in ("ordered", "paths", "routines", "hosts", "finals",
                                                 "fin_end", "nranks", "first_command", "coverage")}
        conn.send(("read", facts, summary))
        path_map, routine_map, shifts, fixes, of_path, clock, nroutines = conn.recv()
        for r, shift in zip(ranks, shifts):
            _remap(r, path_map, routine_map, shift)
        for fix in fixes:
            read.fix(fix)
        metas, values = [], set()
        for r in ranks:
            meta, v = rank_gap_values(r, of_path, clock)
            metas.append(meta)
            values |= v
        conn.send(("gaps", values))
        threshold = conn.recv()
        order = sorted(range(len(ranks)), key=lambda i: ranks[i].rank)
        conn.send(("counts", [(ranks[i].rank, rank_burst_count(ranks[i], metas[i], of_path, clock,
                                                                threshold) if len(ranks[i]) else 0)
                              for i in order]))
        total, dests = conn.recv()     # where the analyzer wants each rank's bursts
        mixed, nested, calls, busy = {}, {}, None, []
        with _Columns(fd, total) as cols:
            for i, at in zip(order, dests):
                r = ranks[i]
                ranks[i] = None          # spent: its memory goes as the bursts come
                if not len(r):
                    continue
                b, m, nst, c, t = rank_reduce(r, metas[i], of_path, clock, threshold, nroutines)
                n = len(b["rank"])
                for f in BURST_FIELDS:
                    cols[f][at:at + n] = b[f]
                mixed.update({at + k: v for k, v in m.items()})
                nested.update({at + k: v for k, v in nst.items()})
                calls = _merge_calls(calls, c)
                busy.append((r.rank, t))
        conn.send(("bursts", mixed, nested, calls, busy))
    except BaseException:   # noqa: B036 - anything: the analyzer goes serial
        try:
            conn.send(("error", traceback.format_exc()))
        except OSError:     # the analyzer is gone
            pass
    finally:
        conn.close()


RECORD_BYTES = sum(np.dtype(t).itemsize for t in BURST_DTYPES.values())


class _Columns:
    """The bursts of the whole job as columns (BURST_FIELDS, one after the
    other) in the shared memory file `fd`: the workers write their ranks'
    bursts where the analyzer says, and the analyzer uses them in place."""

    def __init__(self, fd, n):
        self.map = mmap.mmap(fd, max(RECORD_BYTES * n, 1))
        self.cols, at = {}, 0
        for f, t in BURST_DTYPES.items():
            self.cols[f] = np.frombuffer(self.map, t, n, at)
            at += np.dtype(t).itemsize * n

    def __getitem__(self, f):
        return self.cols[f]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cols = None
        self.map.close()


# ------------------------------------------------------------------ analyzer

class RankWorkers:
    """The worker processes of one analysis, and what they told of their ranks."""

    def __init__(self, sources, jobs):
        ctx = multiprocessing.get_context("fork")
        self.conns, self.procs, self.jobs = [], [], jobs
        # the bursts come back through memory the workers share with the analyzer
        self.fd = os.memfd_create("iomodel-bursts", os.MFD_CLOEXEC)
        for block in split_sources(sources, jobs):
            mine, theirs = ctx.Pipe()
            p = ctx.Process(target=_serve, args=(theirs, block, self.fd), daemon=True)
            p.start()
            theirs.close()
            self.conns.append(mine)
            self.procs.append(p)

    def close(self):
        os.close(self.fd)
        for c in self.conns:
            c.close()
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.kill()
                p.join()

    def _recv(self, conn, kind):
        try:
            msg = conn.recv()
        except (EOFError, OSError) as e:
            raise WorkerFailed(f"a worker ended without answering ({e})") from None
        if msg[0] == "error":
            raise WorkerFailed(msg[1])
        if msg[0] != kind:
            raise WorkerFailed(f"a worker answered {msg[0]!r} for {kind!r}")
        return msg[1:]

    def read(self, path, name=None, command=None):
        """Stage 1: every worker reads its ranks; the job's Ops of RankFacts."""
        got = [self._recv(c, "read") for c in self.conns]
        pindex, rindex = {}, {}
        hosts, finals, fin_end, ref = {}, {}, {}, {}
        nranks, first_command, coverage, seen = 0, None, None, set()
        ordered, facts, self.rank_base, self.maps = [], [], [], []
        for facts_w, s in got:
            path_map = np.array([pindex.setdefault(p, len(pindex)) for p in s["paths"]] + [-1], np.int32)
            routine_map = np.array([rindex.setdefault(n, len(rindex)) for n in s["routines"]] + [0],
                                   np.int32)
            shifts = []
            for f in facts_w:       # each rank onto its host's first rank's clock (trace._HostClock)
                if f["rank"] in seen:
                    raise WorkerFailed(f"rank {f['rank']} is in two rank traces")
                seen.add(f["rank"])
                host, origin, timed = f["origin"]
                shift = (origin - ref.setdefault(host, origin)) * 1e-9
                shift = shift if shift and abs(shift) < SAME_CLOCK_MAX_S and timed else 0.0
                shifts.append(shift)
                if f["rank"] in s["fin_end"]:
                    fin_end[f["rank"]] = s["fin_end"][f["rank"]] + shift
                lower = f["lower"]
                if lower is not None:
                    lower = {**lower, "path": path_map[lower["path"]],
                             "t_start": lower["t_start"] + shift if shift else lower["t_start"],
                             "t_end": lower["t_end"] + shift if shift else lower["t_end"]}
                facts.append(RankFacts(f["rank"], f["n"],
                                       {int(path_map[q]): v for q, v in f["single"].items()},
                                       {int(path_map[q]): e for q, e in f["extent"].items()},
                                       np.unique(routine_map[f["routine"]]), f["collective"],
                                       f["reread"], lower))
            base = len(facts) - len(facts_w)
            self.rank_base.append(base)
            for o in s["ordered"]:
                o.rank_index += base
                ordered.append(o)
            for h, c in s["hosts"].items():
                hosts[h] = hosts.get(h, 0) + c
            finals.update(s["finals"])
            nranks = max(nranks, s["nranks"])
            first_command = first_command or s["first_command"]
            if coverage is None:
                coverage = s["coverage"]
            else:
                coverage.merge(s["coverage"])
            self.maps.append((path_map, routine_map, shifts))
        routines_all = list(rindex)
        self.fixes = [[] for _ in self.conns]
        bases = self.rank_base + [len(facts)]
        for o, off, npieces, end in place_ordered(ordered):
            w = next(i for i in range(len(self.conns)) if bases[i] <= o.rank_index < bases[i + 1])
            self.fixes[w].append((o.rank_index - bases[w], o.op_index, off, npieces, end))
            ext = facts[o.rank_index].extent           # as RanksRead.fix moves it
            q = pindex[o.path]
            ext[q] = max(ext.get(q, -1), end)
        self.nroutines = len(routines_all)
        whole = RanksRead(ranks=[], paths=list(pindex), routines=routines_all, hosts=hosts,
                          finals=finals, fin_end=fin_end, nranks=nranks,
                          first_command=first_command, coverage=coverage)
        ops = whole.ops(path, name, command)
        ops.ranks = sorted(facts, key=lambda f: f.rank)
        ops.has_reread = bool(facts) and all(f.reread is not None for f in facts)
        return ops

    def gap_values(self, of_path, clock):
        """Pass 1 in the workers: the union of their ranks' gap values."""
        for c, (path_map, routine_map, shifts), fixes in zip(self.conns, self.maps, self.fixes):
            c.send((path_map, routine_map, shifts, fixes, of_path, clock, self.nroutines))
        values = set()
        for c in self.conns:
            values |= self._recv(c, "gaps")[0]
        return values

    def bursts(self, threshold):
        """Pass 2 in the workers: all ranks' bursts in rank order, their
        request sizes and nested strides by burst index, the collective calls
        and the ranks' times inside their data calls."""
        for c in self.conns:
            c.send(threshold)
        counts = [self._recv(c, "counts")[0] for c in self.conns]
        # each rank's bursts at their place in rank order
        segments = sorted((rank, w, k, n) for w, cw in enumerate(counts) for k, (rank, n) in enumerate(cw))
        dests = [[0] * len(cw) for cw in counts]
        at = 0
        for rank, w, k, n in segments:
            dests[w][k] = at
            at += n
        os.ftruncate(self.fd, max(RECORD_BYTES * at, 1))
        for c, d in zip(self.conns, dests):
            c.send((at, d))
        got = [self._recv(c, "bursts") for c in self.conns]
        cols = _Columns(self.fd, at).cols    # the map lives as long as its columns
        mixed, nested, calls, busy = {}, {}, None, []
        for m, nst, c, t in got:
            mixed.update(m)
            nested.update(nst)
            calls = _merge_calls(calls, c)
            busy += t
        return cols, mixed, nested, calls, [t for _, t in sorted(busy)]
