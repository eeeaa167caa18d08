"""`analyze` on every core: the per-rank stages run in worker processes.

The trace's rank traces (rank files, job images) are split into one
contiguous block per worker, balanced by bytes.  Each worker, forked from the
analyzer, reads its ranks (tracefile, linking: analyzer/ops.py's read_ranks)
and keeps their operations; the analyzer gathers what the model needs of the
whole job (paths and routines, clocks, files, ordered calls), then asks the
workers for the gaps that set the burst threshold (pass 1), and each worker
reduces its ranks to bursts in its own memory (pass 2).  Where every process
has the same sequence of bursts (a table: analyzer/phase_groups.py) the
workers also reduce their rows to their share of each phase's numbers
(phases.NUMBERS), and the analyzer merges the shares; otherwise, or where a
phase's processes differ in their request sizes, or the layer under MPI-IO is
traced, the workers write their bursts into memory they share with the
analyzer, which finds the phases over all of them.  The model is the one the
serial analysis builds: same order of paths, routines, hosts and ranks
(docs/commands/analyze.md, "Cores").

Any failure in a worker (a damaged trace above all) sends the analysis back to
the serial path, which reports it as it always does.
"""
import mmap
import multiprocessing
import os
import traceback
from dataclasses import dataclass

import numpy as np
import numpy.ma  # noqa: F401  np.unique imports it on first use: once here, not once in each worker

from . import collective_splits
from . import coverage, reread  # noqa: F401  read_ranks's own imports, likewise before the fork
from .ops import RanksRead, place_ordered, rank_file_rows, ranks_used, read_ranks
from .phase_groups import table_of
from .phases import (BURST_DTYPES, BURST_FIELDS, BURST_KEY_FIELDS, FIRSTS, MERGE, NUMBERS, _agg, _burst_key,
                     _busy_after_entry, _merge_calls, phase_numbers, rank_burst_count, rank_gap_values,
                     rank_reduce, rank_wishes)
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
    """What the analyzer keeps of a rank whose operations are in a worker
    (what _lower_layer reads; its files and routines are the Ops's file_rows
    and used, gathered by each worker for all its ranks)."""
    rank: int
    n: int
    reread: object           # None when unknown, as RankOps.reread
    lower: dict

    def __len__(self):
        return self.n


# ------------------------------------------------------------------ worker

def _facts(r, origin):
    return {"rank": r.rank, "n": len(r), "reread": None if r.reread is None else True,
            "lower": r.lower, "origin": origin}


def _remap(r, path_map, routine_map, shift):
    """A rank's operations onto the job's path and routine indices and its host's clock."""
    r.path = path_map[r.path]
    r.routine = routine_map[r.routine].astype(np.int16)
    if r.called is not None:
        r.called = routine_map[r.called].astype(np.int16)
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


class Stopped(Exception):
    """The analyzer told a worker to stop (it goes serial, or it failed)."""


def _serve(conn, sources, fd):
    """A worker: read the ranks of `sources`, then answer the analyzer's passes.
    fd: the shared memory the bursts go into; None (another node): they go
    back in the answer."""
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
        summary["file_rows"], summary["used"] = rank_file_rows(ranks), ranks_used(ranks)
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
        ask = conn.recv()
        if ask[0] == "wishes":      # where each rank would split its collective bursts
            tally = collective_splits.Tally()
            for r, m in zip(ranks, metas):
                if len(r):
                    tally.add(*rank_wishes(r, m, of_path, threshold, nroutines))
            conn.send(("wishes", tally.result()))
            ask = conn.recv()
        own, counts, mixed, nested, calls, busy = _own_bursts(ranks, metas, of_path, clock, threshold,
                                                              nroutines, ask[1])
        del ranks
        table = table_of(own, lambda c: _burst_key(c, nroutines), BURST_KEY_FIELDS) \
            if len(own["rank"]) else None
        sig = None if table is None else (own["rank"][::table.width].tolist(), table.keys, table.kmul)
        conn.send(("bursts", counts, sig, mixed, nested, calls, busy))
        while True:             # the analyzer asks for the numbers of the phases, or the bursts
            ask = conn.recv()
            if ask[0] == "numbers":
                conn.send(("numbers", _table_numbers(table, nested)))
            elif ask[0] == "busy":
                entry, need = ask[1:]
                off = table.s("offset0")
                conn.send(("busy", table.hi(_busy_after_entry(table.s, entry, table.spread)),
                           {p: off[:, table.col[p]] for p in need}))
            elif ask[0] == "columns" and fd is None:
                conn.send(("columns", {f: own[f] for f in BURST_FIELDS}))
            elif ask[0] == "columns":
                total, dests = ask[1:]
                with _Columns(fd, total) as cols:
                    at = 0
                    for (_, n), to in zip(counts, dests):
                        for f in BURST_FIELDS:
                            cols[f][to:to + n] = own[f][at:at + n]
                        at += n
                conn.send(("columns",))
            else:
                break
    except Stopped:
        pass
    except BaseException:   # noqa: B036 - anything: the analyzer goes serial
        try:
            conn.send(("error", traceback.format_exc()))
        except OSError:     # the analyzer is gone
            pass
    finally:
        conn.close()


def _own_bursts(ranks, metas, of_path, clock, threshold, nroutines, contest):
    """A worker's ranks reduced to bursts, in rank order, in its own memory
    (anonymous memory, which gets huge pages, unlike memory shared with the
    analyzer: 4 KiB pages faulted in one by one); with (rank, bursts) of each
    rank, the request sizes and nested strides by burst index, the collective
    calls and (rank, time inside its data calls) of each rank."""
    # counted first, so that the arrays are of the bursts' own size (arrays of
    # the worst case, one burst an operation, would keep a huge page at the end
    # of each column) and no copy joins the ranks' bursts
    total = sum(rank_burst_count(r, m, of_path, clock, threshold, None, contest, nroutines)
                for r, m in zip(ranks, metas) if len(r))
    own = {f: np.empty(total, t) for f, t in BURST_DTYPES.items()}
    counts, mixed, nested, calls, busy = [], {}, {}, None, []
    at = 0
    for i in sorted(range(len(ranks)), key=lambda i: ranks[i].rank):
        r = ranks[i]
        ranks[i] = None          # spent: its memory goes as the bursts come
        if not len(r):
            counts.append((r.rank, 0))
            continue
        b, m, nst, c, t = rank_reduce(r, metas[i], of_path, clock, threshold, nroutines, None, contest)
        n = len(b["rank"])
        for f in BURST_FIELDS:
            own[f][at:at + n] = b[f]
        counts.append((r.rank, n))
        mixed.update({at + k: v for k, v in m.items()})
        nested.update({at + k: v for k, v in nst.items()})
        calls = _merge_calls(calls, c)
        busy.append((r.rank, t))
        at += n
    own["mixed"] = np.zeros(at, bool)
    own["mixed"][list(mixed)] = True
    return own, counts, mixed, nested, calls, busy


def _table_numbers(table, nested):
    """A worker's share of the phases' numbers (its ranks a table): the
    reductions over its rows, the lowest rank's values, the first offsets of
    its first and last rows and whether its own rows' differences are all the
    first's, and each phase's nest of strides if all its rows have the same
    (else DIFFERENT)."""
    num = phase_numbers(table)
    num.update({"first_" + g: table.first(g) for g in FIRSTS})
    off = table.s("offset0")
    num["off_first"], num["off_last"] = off[0][table.col], off[-1][table.col]
    num["steady"], num["step"] = table.steps(off)
    nests = []
    for p in range(table.nph):
        levels = {repr(nested.get(int(i))): nested.get(int(i)) for i in table.sel(p)} if nested else {"": None}
        nests.append(next(iter(levels.values())) if len(levels) == 1 else DIFFERENT)
    return num, nests, table.edges


DIFFERENT = "different"        # a phase whose rows have different nests


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

    def __init__(self, sources, jobs, conns=None, fd=None):
        """Forked workers for `sources` in `jobs` blocks; or, given `conns`
        (and the shared memory `fd` of those that share it), workers that
        already run (analyzer/mpi_job.py)."""
        self.threshold_sent = False
        if conns is not None:
            self.conns, self.procs, self.jobs, self.fd = conns, [], len(conns), fd
            return
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
        for c in self.conns:
            c.close()
        os.close(self.fd)
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

    def read(self, path, name=None, command=None, empty=()):
        """Stage 1: every worker reads its ranks; the job's Ops of RankFacts
        (`empty`: the ranks whose files are empty, which no worker reads)."""
        got = [self._recv(c, "read") for c in self.conns]
        pindex, rindex = {}, {}
        hosts, finals, fin_end, ref = {}, {}, {}, {}
        nranks, first_command, coverage, seen = 0, None, None, set()
        ordered, facts, self.rank_base, self.maps = [], [], [], []
        file_rows, used_routines, used_colls = [], [], []
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
                facts.append(RankFacts(f["rank"], f["n"], f["reread"], lower))
            rows = dict(s["file_rows"], path=path_map[s["file_rows"]["path"]].astype(np.int64))
            file_rows.append(rows)
            used_routines.append(routine_map[s["used"][0]])
            used_colls.append(s["used"][1])
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
        rows = {k: np.concatenate([r[k] for r in file_rows]) for k in file_rows[0]}
        row_of = None
        for o, off, npieces, end in place_ordered(ordered):
            w = next(i for i in range(len(self.conns)) if bases[i] <= o.rank_index < bases[i + 1])
            self.fixes[w].append((o.rank_index - bases[w], o.op_index, off, npieces, end))
            if row_of is None:
                row_of = {(k, q): i for i, (k, q) in enumerate(zip(rows["rank"].tolist(),
                                                                   rows["path"].tolist()))}
            i = row_of.get((facts[o.rank_index].rank, pindex[o.path]))   # as RanksRead.fix moves it
            if i is None:       # an ordered call on a file its rank never opened: serially
                raise WorkerFailed(f"rank {facts[o.rank_index].rank}'s ordered call on {o.path}, "
                                   "which it did not open")
            rows["extent"][i] = max(rows["extent"][i] if rows["accessed"][i] else -1, end)
            rows["accessed"][i] = True
        self.nroutines = len(routines_all)
        coverage.add_empty(empty)
        whole = RanksRead(ranks=[], paths=list(pindex), routines=routines_all, hosts=hosts,
                          finals=finals, fin_end=fin_end, nranks=nranks,
                          first_command=first_command, coverage=coverage)
        ops = whole.ops(path, name, command)
        ops.ranks = sorted(facts, key=lambda f: f.rank)
        ops.file_rows = rows
        ops.used = (np.unique(np.concatenate(used_routines)), np.unique(np.concatenate(used_colls)))
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

    def wishes(self, threshold):
        """Where the workers' ranks would split their collective bursts: their tally."""
        for c in self.conns:
            c.send(threshold)
            c.send(("wishes",))
        self.threshold_sent = True
        tally = collective_splits.Tally()
        for c in self.conns:
            tally.add_counts(*self._recv(c, "wishes")[0])
        return tally.result()

    def bursts(self, threshold, contest=None, lower=None):
        """Pass 2 in the workers, with the collective splits their
        communicators decided (`contest`): (merged, columns, calls, in_calls, mixed,
        nested).  Where every process has the same sequence of bursts (a
        table) and `lower` is empty, merged is a Merged, the phases' numbers
        reduced in the workers, and the rest is None, {} and {}; else merged
        is None and columns holds all ranks' bursts in rank order (in shared
        memory), mixed and nested their request sizes and nested strides by
        burst index.  calls: the collective calls; in_calls: each rank's time
        inside its data calls, in rank order."""
        for c in self.conns:
            if not self.threshold_sent:
                c.send(threshold)
            c.send(("contest", contest))
        got = [self._recv(c, "bursts") for c in self.conns]
        calls, busy = None, []
        for g in got:           # counts, table signature, mixed, nested, calls, busy
            calls = _merge_calls(calls, g[4])
            busy += g[5]
        in_calls = [t for _, t in sorted(busy)]
        try:
            merged = None if lower else self._merged([g[1] for g in got])
            if merged is not None:
                return merged, None, calls, in_calls, {}, {}
            return (None, self._columns([g[0] for g in got]), calls, in_calls,
                    *self._by_burst([g[0] for g in got], [g[2] for g in got], [g[3] for g in got]))
        finally:
            for c in self.conns:
                try:
                    c.send(("done",))
                except OSError:     # that worker is gone (WorkerFailed says why)
                    pass

    def _merged(self, sigs):
        """The phases' numbers merged from the workers' tables, or None where
        the job's bursts are no table or a phase's processes differ."""
        if not sigs or any(s is None for s in sigs):
            return None
        rows, keys, kmul = list(sigs[0][0]), sigs[0][1], sigs[0][2]
        for r, k, m in sigs[1:]:
            if m != kmul or not np.array_equal(k, keys) or r[0] <= rows[-1]:
                return None
            rows += r
        for c in self.conns:
            c.send(("numbers",))
        parts = [self._recv(c, "numbers")[0] for c in self.conns]
        n = {"count": sum(num["count"] for num, _, _ in parts)}
        for name, (how, _) in NUMBERS.items():
            n[name] = MERGE[how].reduce([num[name] for num, _, _ in parts])
        if not _agg(n)["uniform"].all():
            return None     # processes that differ: their bursts are looked at one by one
        n.update({"first_" + g: parts[0][0]["first_" + g] for g in FIRSTS})
        n["affine"], n["per_rank"] = _merge_affine([num for num, _, _ in parts],
                                                   [len(s[0]) for s in sigs])
        need = np.flatnonzero((n["known"] == 1) & (n["count"] > 1) & ~n["affine"]).tolist()
        for c in self.conns:
            c.send(("busy", n["entry"], need))
        answers = [self._recv(c, "busy") for c in self.conns]
        n["busy"] = np.maximum.reduce([a[0] for a in answers])
        starts = {p: np.concatenate([a[1][p] for a in answers]) for p in need}
        nests = [x[0] if all(y == x[0] for y in x) and x[0] != DIFFERENT else None
                 for x in zip(*(nst for _, nst, _ in parts))]
        return Merged(n, keys, kmul, parts[0][2], np.array(rows), nests, starts)

    def _columns(self, counts):
        """The workers' bursts written into the shared memory, each rank's at
        its place in rank order: (the columns, where each worker's ranks went)."""
        segments = sorted((rank, w, k, n) for w, cw in enumerate(counts) for k, (rank, n) in enumerate(cw))
        dests = [[0] * len(cw) for cw in counts]
        at = 0
        for rank, w, k, n in segments:
            dests[w][k] = at
            at += n
        os.ftruncate(self.fd, max(RECORD_BYTES * at, 1))
        for c, d in zip(self.conns, dests):
            c.send(("columns", at, d))
        cols = _Columns(self.fd, at)
        for c, d, cw in zip(self.conns, dests, counts):
            got = self._recv(c, "columns")
            if got:             # a worker without the shared memory: its bursts, written here
                pos = 0
                for (_, n), to in zip(cw, d):
                    for f in BURST_FIELDS:
                        cols[f][to:to + n] = got[0][f][pos:pos + n]
                    pos += n
        self.dests = dests
        return cols.cols    # the map lives as long as its columns

    def _by_burst(self, counts, mixeds, nesteds):
        """The workers' dicts by their own burst index, by the burst's place in rank order."""
        out = ({}, {})
        for cw, d, *dicts in zip(counts, self.dests, mixeds, nesteds):
            starts = np.cumsum([0] + [n for _, n in cw])
            for into, got in zip(out, dicts):
                for i, v in got.items():
                    k = int(np.searchsorted(starts, i, side="right")) - 1
                    into[d[k] + i - int(starts[k])] = v
        return out


def _merge_affine(parts, rows):
    """Whether each phase's first offsets are affine in the rank over the
    workers' rows taken in order, and the step from its first row to its
    second, from each worker's first and last offsets, its own first step and
    whether its own steps are all that."""
    acc, total = parts[0], rows[0]
    step, ok, last = acc["step"], acc["steady"].copy(), acc["off_last"]
    for num, r in zip(parts[1:], rows[1:]):
        across = num["off_first"] - last
        step = step if total > 1 else across
        ok &= (across == step) & num["steady"] & ((num["step"] == step) | (r < 2))
        last, total = num["off_last"], total + r
    return ok & (total > 1), step


class Merged:
    """The phases of a job whose processes have the same bursts, from the
    numbers its workers reduced (as a grouping, analyzer/phase_groups.py,
    for phases._phases)."""

    def __init__(self, numbers, keys, kmul, edges, ranks, nests, starts):
        self.numbers, self.keys, self.kmul, self.edges = numbers, keys, kmul, edges
        self.nph = len(keys)
        self.rows, self.nests, self.starts = ranks, nests, starts

    def detail(self, p):
        return _MergedBursts(self, p)


class _MergedBursts:
    """What phases._phase reads of one phase's bursts (phases.PhaseBursts)."""

    def __init__(self, merged, p):
        self.m, self.p = merged, p

    def ranks(self):
        return self.m.rows

    def nest(self):
        return self.m.nests[self.p]

    def starts(self):
        return self.m.starts[self.p]
