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

Under a memory bound (analyzer/memory_bound.py) a worker whose block does not
fit takes it in pieces, each a _Share the analyzer talks to as to a worker of
its own (PieceConn, over the worker's one link), and holds one at a time: a
piece's operations come back for each pass from a spill file, or from the
trace.  Neither end's sends wait for the other to receive.

Any failure in a worker (a damaged trace above all) sends the analysis back to
the serial path, which reports it as it always does.
"""
import collections
import copy
import mmap
import multiprocessing
import os
import pickle
import queue
import shutil
import tempfile
import threading
import traceback
from dataclasses import dataclass

import numpy as np
import numpy.ma  # noqa: F401  np.unique imports it on first use: once here, not once in each worker

from . import collective_splits, extending, memory_bound
from . import coverage, reread  # noqa: F401  read_ranks's own imports, likewise before the fork
from .ops import RanksRead, place_ordered, rank_file_rows, ranks_used, read_ranks
from .phase_groups import table_of
from .phases import (BURST_DTYPES, BURST_FIELDS, BURST_KEY_FIELDS, FIRSTS, MERGE, NUMBERS, _agg, _burst_key,
                     _busy_after_entry, _merge_calls, metadata_ops, phase_numbers, rank_burst_count,
                     rank_gap_values, rank_reduce, rank_wishes, STASH_KEY_FIELDS, stash_starts)
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
    """The work a rank trace is: its raw size in a job file (which a damaged
    index may give as 0), else its file's size."""
    raw = getattr(src, "raw_size", None)
    return os.path.getsize(src) if raw is None else raw


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


NOT_YET = object()


class _Share:
    """One piece of a worker's block of rank traces, and its answers to the
    analyzer's passes.  Kept (the block fits the memory bound: one piece), its
    operations are read once and held until reduced to bursts, and its bursts
    held until the analysis ends; else (bounded memory) each pass that needs
    them reads the piece's operations again from the trace, and its bursts are
    made again where a later ask needs them, so that a worker holds one
    piece's at a time.  fd: the shared memory the bursts go into; None
    (another node): they go back in the answer."""

    def __init__(self, sources, fd, keep, spill=None):
        self.sources, self.fd, self.keep, self.spill = sources, fd, keep, spill
        self.held = None            # kept: the RanksRead, then its bursts (_Bursts)
        self.maps = None            # path and routine maps, clock shifts, fixes, of_path, clock, nroutines
        self.threshold, self.contest, self.numbers = NOT_YET, NOT_YET, None
        self.busy_spill = None      # what the busy, rounds and extending asks read of the table (_spill_busy)
        self.shared = None          # which file groups are shared (the writes' ends kept of them)
        self.rounds = None          # {phase: its writes' ends}, between the rounds and extending asks

    def _read(self):
        origins = []

        def traces():
            for src in self.sources:
                r = read_rank_file(src)
                origins.append((r.hostname, int(r.mono_origin_ns), r.t_start is not None))
                yield r
        return read_ranks(traces()), origins

    def first(self):
        """The read: what the analyzer gathers of the piece's ranks."""
        read, origins = self._read()
        ranks = read.ranks
        facts = [_facts(r, o) for r, o in zip(ranks, origins)]
        summary = {k: getattr(read, k) for k in ("ordered", "paths", "routines", "hosts", "finals",
                                                 "fin_end", "nranks", "first_command", "coverage")}
        summary["file_rows"], summary["used"] = rank_file_rows(ranks), ranks_used(ranks)
        if self.keep:
            self.held = read
        elif self.spill is not None:    # its operations as read, for the passes to come
            self.spill = _pickled(self.spill, ranks)    # None (no room): the passes read the trace again
        return ("read", facts, summary)

    def _again(self):
        """The piece's operations once more (bounded memory), placed on the
        job's paths, routines and clocks: from its spill file, or read and
        linked again from the trace."""
        if self.spill is not None:
            with open(self.spill, "rb") as f:
                read = RanksRead(ranks=pickle.load(f))
        else:
            read, _ = self._read()
        self._place(read)
        return read.ranks

    def _ranks(self):
        """The piece's operations on the job's paths, routines and clocks, and
        their library metadata masks (rank_gap_values' meta)."""
        if self.held is not None:
            return self.held.ranks, self.metas
        ranks = self._again()
        return ranks, [self._meta(r) for r in ranks]

    def _place(self, read):
        path_map, routine_map, shifts, fixes = self.maps[:4]
        for r, shift in zip(read.ranks, shifts):
            _remap(r, path_map, routine_map, shift)
        for fix in fixes:
            read.fix(fix)

    def _meta(self, r):
        of_path, clock = self.maps[4:6]
        return metadata_ops(r, of_path[r.path]) if clock else None

    def _bursts(self):
        """The piece's bursts (_Bursts): held, or made again."""
        if isinstance(self.held, _Bursts):
            return self.held
        ranks, metas = self._ranks()
        of_path, clock, nroutines = self.maps[4:]
        b = _Bursts(*_own_bursts(ranks, metas, of_path, clock, self.threshold, nroutines, self.contest,
                                 self.shared), nroutines)
        if self.keep:
            self.held, self.metas = b, None     # the operations are spent
        return b

    def _spill_busy(self, b):
        """Keep in the spill directory the few columns of the piece's table
        that the busy ask reads, and its stash of writes' ends with where each
        burst's starts (the rounds ask's), so that they do not make the bursts
        again: one burst pass a piece."""
        if b.table is not None and self.spill is not None:
            part = copy.copy(b.table)
            part.b = {f: b.table.b[f] for f in BUSY_FIELDS}
            part.stash, part.stash_at = b.stash, self._stash_at(b)
            self.busy_spill = _pickled(self.spill + ".busy", part)

    def _stash_at(self, b):
        return stash_starts({f: b.own[f] for f in STASH_KEY_FIELDS}, self.shared)[0]

    def _busy_table(self):
        """The piece's table (kept, or made again) with its stash and where
        each burst's writes' ends start in it (stash, stash_at)."""
        if self.busy_spill is None:
            b = self._bursts()
            table = copy.copy(b.table)
            table.stash, table.stash_at = b.stash, self._stash_at(b)
            return table
        with open(self.busy_spill, "rb") as f:
            return pickle.load(f)

    def answer(self, msg):
        """The answer to one of the analyzer's messages (None: it wants none)."""
        if self.maps is None:           # pass 1: the job's maps; the answer, the gap values
            self.maps = msg
            of_path, clock = msg[4:6]
            if self.held is not None:
                self._place(self.held)
                ranks = self.held.ranks
            else:
                ranks = self._again()
            metas, values = [], set()
            for r in ranks:
                meta, v = rank_gap_values(r, of_path, clock)
                metas.append(meta)
                values |= v
            self.metas = metas if self.held is not None else None
            return ("gaps", values)
        if self.threshold is NOT_YET:
            self.threshold = msg
            return None
        ask = msg[0]
        of_path, clock, nroutines = self.maps[4:]
        if ask == "wishes":             # where each rank would split its collective bursts
            tally = collective_splits.Tally()
            ranks, metas = self._ranks()
            for r, m in zip(ranks, metas):
                if len(r):
                    tally.add(*rank_wishes(r, m, of_path, self.threshold, nroutines))
            return ("wishes", tally.result())
        if ask == "contest":
            self.contest, self.shared = msg[1:]
            b = self._bursts()
            if not self.keep:           # the numbers now, from the bursts at hand
                self.numbers = None if b.table is None else _table_numbers(b.table, b.nested)
                self._spill_busy(b)
            sig = None if b.table is None else (b.own["rank"][::b.table.width].tolist(), b.table.keys,
                                                b.table.kmul)
            return ("bursts", b.counts, sig, b.mixed, b.nested, b.calls, b.busy)
        if ask == "numbers":
            if self.numbers is None:
                b = self._bursts()
                self.numbers = _table_numbers(b.table, b.nested)
            return ("numbers", self.numbers)
        if ask == "busy":
            entry, need = msg[1:]
            table = self._busy_table()
            off = table.s("offset0")
            return ("busy", table.hi(_busy_after_entry(table.s, entry, table.spread)),
                    {p: off[:, table.col[p]] for p in need})
        if ask == "rounds":             # the phases' writes' ends, and each round's highest of them
            t = self._busy_table()
            self.rounds = {p: extending.phase_ends(t.stash, t.stash_at[t.sel(p)], nops) for p, nops in msg[1]}
            return ("rounds", {p: extending.round_maxima(e) for p, e in self.rounds.items()})
        if ask == "extending":          # how many extend the file, from the piece's thresholds
            counts = {p: extending.count_extending(self.rounds[p], t) for p, t in msg[1].items()}
            self.rounds = None
            return ("extending", counts)
        if ask == "columns":
            b = self._bursts()
            own, counts = b.own, b.counts
            if self.fd is None:
                return ("columns", {f: own[f] for f in BURST_FIELDS})
            total, dests = msg[1:]
            with _Columns(self.fd, total) as cols:
                at = 0
                for (_, n), to in zip(counts, dests):
                    for f in BURST_FIELDS:
                        cols[f][to:to + n] = own[f][at:at + n]
                    at += n
            return ("columns",)
        raise ValueError(f"the analyzer asked {ask!r}")


class _Bursts:
    """A piece's bursts in rank order (_own_bursts) and their table where
    every rank of it has the same sequence (analyzer/phase_groups.py)."""

    def __init__(self, own, counts, mixed, nested, calls, busy, stash, nroutines):
        self.own, self.counts, self.mixed, self.nested, self.calls, self.busy = own, counts, mixed, nested, \
            calls, busy
        self.stash = stash          # the ends of the independent writes to shared files (rank_bursts)
        self.table = table_of(own, lambda c: _burst_key(c, nroutines), BURST_KEY_FIELDS) \
            if len(own["rank"]) else None


def serve(conn, blocks, fd, keep):
    """A worker: answer the analyzer for each piece of `blocks` (its messages
    come as (piece, message)) until every piece is told it is done.  A piece
    that fails answers with its error once and drops what comes for it after,
    so that the analyzer, which goes serial, takes every answer it is owed
    and no message is left unreceived.  `conn`'s sends must not wait for the
    analyzer to receive: it sends a piece's next message before it takes the
    answers to the last (the links below, and MPI's isend)."""
    spill = None if keep else memory_bound.spill_dir()
    if spill is not None:
        spill = tempfile.mkdtemp(prefix="iomodel-pieces-", dir=spill)
    shares = {i: _Share(b, fd, keep, spill and os.path.join(spill, f"piece-{i}.pickle"))
              for i, b in enumerate(blocks)}
    failed = set()
    try:
        for i in list(shares):
            _answer(conn, shares, failed, i, None)
        while shares:
            i, msg = conn.recv()
            if _is_done(msg):
                shares.pop(i, None)
            elif i not in failed:
                _answer(conn, shares, failed, i, msg)
    except (OSError, EOFError):         # the analyzer is gone
        pass
    finally:
        conn.close()
        if spill is not None:
            shutil.rmtree(spill, ignore_errors=True)


def _pickled(path, obj):
    """`obj` pickled into the file `path`: the path, or None where there is no room."""
    try:
        with open(path, "wb") as f:
            pickle.dump(obj, f, protocol=5)
        return path
    except OSError:
        _remove(path)
        return None


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _answer(conn, shares, failed, i, msg):
    try:
        out = shares[i].first() if msg is None else shares[i].answer(msg)
    except BaseException:   # noqa: B036 - anything: the analyzer goes serial
        out = ("error", traceback.format_exc())
        failed.add(i)
    if out is not None:
        conn.send((i, out))


class _SendingEnd:
    """An end of a pipe between the analyzer and a forked worker, whose sends a
    thread makes: a pipe's send waits while the pipe is full, and neither end
    may wait for the other to receive.  The worker sends a piece's answer
    while the analyzer sends the next piece's message; and the analyzer,
    whose sends to one worker would wait while that worker works through its
    pieces, would keep the next worker waiting for its own."""

    def __init__(self, conn):
        self.conn, self.out = conn, queue.Queue()
        self.thread = threading.Thread(target=self._send, daemon=True)
        self.thread.start()

    def _send(self):
        while (msg := self.out.get()) is not None:
            try:
                self.conn.send(msg)
            except OSError:     # the analyzer is gone
                return

    def send(self, msg):
        self.out.put(msg)

    def recv(self):
        return self.conn.recv()

    def close(self):
        self.out.put(None)
        self.thread.join()
        self.conn.close()


def _serve_forked(conn, blocks, fd, keep):
    serve(_SendingEnd(conn), blocks, fd, keep)


def _is_done(msg):
    """The analyzer's ("done",), told apart from messages of arrays."""
    return isinstance(msg, tuple) and len(msg) == 1 and isinstance(msg[0], str) and msg[0] == "done"


# what the busy ask reads of a table (_busy_after_entry, and the first offsets)
BUSY_FIELDS = ("t0", "first_end", "collective", "busy", "offset0")


# the analyzer's requests a worker answers (the others only tell it something)
_ASKS = {"wishes", "contest", "numbers", "busy", "rounds", "extending", "columns"}


def _asks(msg):
    """Whether a message of the analyzer's wants an answer."""
    if isinstance(msg, tuple) and msg and isinstance(msg[0], str):
        return msg[0] in _ASKS
    return isinstance(msg, tuple) and len(msg) == 7      # the maps of pass 1: answered with its gaps


def _own_bursts(ranks, metas, of_path, clock, threshold, nroutines, contest, shared):
    """A worker's ranks reduced to bursts, in rank order, in its own memory
    (anonymous memory, which gets huge pages, unlike memory shared with the
    analyzer: 4 KiB pages faulted in one by one); with (rank, bursts) of each
    rank, the request sizes and nested strides by burst index, the collective
    calls, (rank, time inside its data calls) of each rank and the stash of the
    ends of its independent writes to shared files (phases.rank_bursts)."""
    # counted first, so that the arrays are of the bursts' own size (arrays of
    # the worst case, one burst an operation, would keep a huge page at the end
    # of each column) and no copy joins the ranks' bursts
    total = sum(rank_burst_count(r, m, of_path, clock, threshold, None, contest, nroutines)
                for r, m in zip(ranks, metas) if len(r))
    own = {f: np.empty(total, t) for f, t in BURST_DTYPES.items()}
    counts, mixed, nested, calls, busy, stash = [], {}, {}, None, [], []
    at = 0
    for i in sorted(range(len(ranks)), key=lambda i: ranks[i].rank):
        r = ranks[i]
        ranks[i] = None          # spent: its memory goes as the bursts come
        if not len(r):
            counts.append((r.rank, 0))
            continue
        b, m, nst, c, t, ends = rank_reduce(r, metas[i], of_path, clock, threshold, nroutines, None, contest,
                                            shared)
        stash.append(ends)
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
    return own, counts, mixed, nested, calls, busy, np.concatenate(stash or [np.zeros(0, np.int64)])


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

class PieceConn:
    """The analyzer's end of its link to one piece of a worker's block: its
    messages go with the piece's number over the worker's link, its answers
    are taken in turn (an answer for another piece that comes first waits in
    the inbox), and closing takes every answer it is owed before it says done,
    so that no worker is left waiting to send."""

    def __init__(self, link, i, inbox):
        self.link, self.i, self.inbox = link, i, inbox
        self.pending, self.gone = 1, False      # owed: the read

    def send(self, msg):
        if self.gone:           # told it is done
            return
        self.link.send((self.i, msg))
        self.pending += _asks(msg)
        self.gone = _is_done(msg)

    def recv(self):
        box = self.inbox[self.i]
        while not box:
            j, msg = self.link.recv()
            self.inbox[j].append(msg)
        msg = box.popleft()
        self.pending -= 1
        if msg[0] == "error":           # it answers nothing more, and waits to be told it is done
            self.pending = 0
        return msg

    def close(self):
        try:
            while self.pending > 0 and not self.gone:
                self.recv()
            self.send(("done",))
        except (EOFError, OSError):     # the worker is gone
            self.gone = True


def piece_conns(link, pieces):
    """The analyzer's PieceConns over one worker's `link`, one a piece."""
    inbox = {i: collections.deque() for i in range(pieces)}
    return [PieceConn(link, i, inbox) for i in range(pieces)]


def split_pieces(block, piece_bytes):
    """A worker's block of rank traces in pieces of at most about
    `piece_bytes` raw bytes (one rank trace is never split; None: one piece)."""
    total = sum(source_bytes(s) for s in block)
    if piece_bytes is None or total <= piece_bytes:
        return [block]
    return split_sources(block, -(-total // max(int(piece_bytes), 1)))


class ThreadLink:
    """The analyzer's link to a worker that runs in a thread of its own
    process (MPI's process 0 reading its own block; one process under a
    memory bound): queues, and the memory it shares is its own."""

    def __init__(self, pieces, fd):
        self.to, self.back = queue.Queue(), queue.Queue()
        end = _QueueEnd(self.back, self.to)
        self.thread = threading.Thread(target=serve, args=(end, pieces, fd, len(pieces) == 1), daemon=True)
        self.thread.start()

    def send(self, msg):
        self.to.put(msg)

    def recv(self):
        return self.back.get()

    def close(self):
        self.thread.join()


class _QueueEnd:
    def __init__(self, out, into):
        self.out, self.into = out, into

    def send(self, msg):
        self.out.put(msg)

    def recv(self):
        return self.into.get()

    def close(self):
        pass


class RankWorkers:
    """The worker processes of one analysis, and what they told of their ranks."""

    def __init__(self, sources, jobs, piece_bytes=None, links=None, conns=None, fd=None):
        """Forked workers for `sources` in `jobs` blocks, each block in pieces of
        about `piece_bytes` raw bytes (split_pieces); or, given the `links` to
        workers that already run and the PieceConns over them (and the shared
        memory `fd` of those that share it), those (analyzer/mpi_job.py)."""
        self.threshold_sent = False
        if links is not None:
            self.links, self.conns, self.procs, self.jobs, self.fd = links, conns, [], len(links), fd
            return
        ctx = multiprocessing.get_context("fork")
        self.links, self.conns, self.procs, self.jobs = [], [], [], jobs
        # the bursts come back through memory the workers share with the analyzer
        self.fd = os.memfd_create("iomodel-bursts", os.MFD_CLOEXEC)
        pipes = []
        for block in split_sources(sources, jobs):
            pieces = split_pieces(block, piece_bytes)
            mine, theirs = ctx.Pipe()
            p = ctx.Process(target=_serve_forked, args=(theirs, pieces, self.fd, len(pieces) == 1),
                            daemon=True)
            p.start()
            theirs.close()
            pipes.append((mine, len(pieces)))
            self.procs.append(p)
        for mine, n in pipes:       # their sending threads once every worker is forked: none forks with one
            link = _SendingEnd(mine)
            self.links.append(link)
            self.conns += piece_conns(link, n)

    @classmethod
    def in_thread(cls, sources, piece_bytes):
        """One worker, a thread of this process, for `sources` in pieces."""
        fd = os.memfd_create("iomodel-bursts", os.MFD_CLOEXEC)
        pieces = split_pieces(sources, piece_bytes)
        link = ThreadLink(pieces, fd)
        return cls(None, None, links=[link], conns=piece_conns(link, len(pieces)), fd=fd)

    def close(self):
        for c in self.conns:
            c.close()
        for link in self.links:
            link.close()
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

    def bursts(self, threshold, contest=None, lower=None, shared=None):
        """Pass 2 in the workers, with the collective splits their
        communicators decided (`contest`): (merged, columns, calls, in_calls, mixed,
        nested).  Where every process has the same sequence of bursts (a
        table) and `lower` is empty, merged is a Merged, the phases' numbers
        reduced in the workers, and the rest is None, {} and {}; else merged
        is None and columns holds all ranks' bursts in rank order (in shared
        memory), mixed and nested their request sizes and nested strides by
        burst index.  calls: the collective calls; in_calls: each rank's time
        inside its data calls, in rank order.  `shared`: which file groups
        are shared (their independent writes' ends are kept, for the writes
        that extend the file: Merged.extending)."""
        for c in self.conns:
            if not self.threshold_sent:
                c.send(threshold)
            c.send(("contest", contest, shared))
        got = [self._recv(c, "bursts") for c in self.conns]
        calls, busy = None, []
        for g in got:           # counts, table signature, mixed, nested, calls, busy
            calls = _merge_calls(calls, g[4])
            busy += g[5]
        in_calls = [t for _, t in sorted(busy)]
        try:
            merged = None if lower else self._merged([g[1] for g in got], shared)
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

    def _merged(self, sigs, shared):
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
        merged = Merged(n, keys, kmul, parts[0][2], np.array(rows), nests, starts)
        merged.extending = self._extending(n, shared)
        return merged

    def _extending(self, n, shared):
        """{phase: how many of its writes extend the file in lockstep}
        (analyzer/extending.py): the workers' rounds' maxima, in rank order,
        give each its thresholds, and each counts its own."""
        need, file_end = extending.qualifying(n, shared)
        if not len(need):
            return {}
        ask = [(p, int(n["nops_lo"][p])) for p in need.tolist()]
        for c in self.conns:
            c.send(("rounds", ask))
        maxima = [self._recv(c, "rounds")[0] for c in self.conns]
        thresholds = {p: extending.block_thresholds(int(file_end[p]), [m[p] for m in maxima]) for p, _ in ask}
        for i, c in enumerate(self.conns):
            c.send(("extending", {p: t[i] for p, t in thresholds.items()}))
        counts = [self._recv(c, "extending")[0] for c in self.conns]
        return {p: sum(x[p] for x in counts) for p, _ in ask}

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
        self.extending = {}     # {phase: writes that extend the file} (Workers._extending)

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
