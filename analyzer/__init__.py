"""iomodel.analyzer: from a trace directory (or a Darshan log) to Arrow tables and to the I/O model."""
import os
from pathlib import Path

from .trace import Trace, TraceError, open_trace

__all__ = ["Trace", "TraceError", "open_trace", "load_ops", "analyze"]


def load_ops(path, partial=False):
    """The data operations of a trace directory or a Darshan log (.darshan);
    partial: of a damaged trace, what comes before the damage."""
    path = Path(path)
    if path.is_file() and path.suffix == ".darshan":
        from .darshan import ops_from_darshan
        return ops_from_darshan(path)
    from .ops import ops_from_trace
    return ops_from_trace(Trace(path, lazy=True, partial=partial))


def analyze(path, max_comm_gap=None, max_idle_s=None, jobs=None, partial=False, mpi=True, max_memory=None):
    """The I/O model (a dict, docs/model-format.md) of a trace or Darshan log.
    A trace's per-rank stages run in `jobs` processes (analyzer/parallel.py;
    None: one per core, for traces of at least MIN_PARALLEL_BYTES; 1: none).
    partial: a damaged trace's model of what comes before the damage (read in
    one process), marked partial.  Run as one of several processes of an MPI
    launch (mpirun, srun; mpi4py), unless mpi is False, the processes share a
    trace's per-rank stages (analyzer/mpi_job.py); process 0 returns the model,
    the others None (and a log, or --partial, is process 0's alone).
    max_memory: each process's bound in bytes (None: a share of its node's
    memory, analyzer/memory_bound.py); a process whose rank traces do not fit
    in it reads them in pieces, again in each pass."""
    from .phases import build_model
    path = Path(path)
    from .mpi_job import analyze_in_job, world

    def build(ops, workers=None):
        return build_model(ops, max_comm_gap=max_comm_gap, max_idle_s=max_idle_s, workers=workers,
                           consume=workers is None)
    comm = world() if mpi else None
    if comm is not None:
        if path.is_dir() and not partial:
            return analyze_in_job(comm, path, build, lambda: build(load_ops(path)), max_memory)
        if comm.Get_rank():
            return None
    if path.is_dir() and not partial:
        from . import memory_bound, parallel
        trace = Trace(path, lazy=True)
        jobs = parallel.workers_for(trace, jobs)
        if jobs > 1:        # each worker's bound: the analyzer, apart, is one process more
            piece = memory_bound.piece_bytes(memory_bound.budget(max_memory, jobs + 1))
            workers = parallel.RankWorkers(trace.rank_files, jobs, piece)
        else:               # one process: where the trace does not fit, a thread reads it in pieces
            piece = memory_bound.piece_bytes(memory_bound.budget(max_memory, 1), analyzer=True)
            fits = len(trace.rank_files) < 2 or sum(parallel.source_bytes(s) for s in trace.rank_files) <= piece
            workers = None if fits or not hasattr(os, "memfd_create") else \
                parallel.RankWorkers.in_thread(trace.rank_files, piece)
        if workers is not None:
            try:
                return build(workers.read(path, empty=trace.empty_ranks), workers)
            except parallel.WorkerFailed:
                pass        # the serial analysis reports what stopped the workers
            finally:
                workers.close()
    return build(load_ops(path, partial))
