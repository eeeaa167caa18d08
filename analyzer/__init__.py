"""iomodel.analyzer: from a trace directory (or a Darshan log) to Arrow tables and to the I/O model."""
from pathlib import Path

from .trace import Trace, TraceError, open_trace

__all__ = ["Trace", "TraceError", "open_trace", "load_ops", "analyze"]


def load_ops(path):
    """The data operations of a trace directory or a Darshan log (.darshan)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".darshan":
        from .darshan import ops_from_darshan
        return ops_from_darshan(path)
    from .ops import ops_from_trace
    return ops_from_trace(Trace(path, lazy=True))


def analyze(path, max_comm_gap=None, max_idle_s=None, jobs=None):
    """The I/O model (a dict, docs/model-format.md) of a trace or Darshan log.
    A trace's per-rank stages run in `jobs` processes (analyzer/parallel.py;
    None: one per core, for traces of at least MIN_PARALLEL_BYTES; 1: none)."""
    from .phases import build_model
    path = Path(path)
    if path.is_dir() and jobs != 1:
        from . import parallel
        trace = Trace(path, lazy=True)
        jobs = parallel.workers_for(trace, jobs)
        if jobs > 1:
            workers = parallel.RankWorkers(trace.rank_files, jobs)
            try:
                ops = workers.read(path)
                return build_model(ops, max_comm_gap=max_comm_gap, max_idle_s=max_idle_s,
                                   workers=workers)
            except parallel.WorkerFailed:
                pass        # the serial analysis reports what stopped the workers
            finally:
                workers.close()
    return build_model(load_ops(path), max_comm_gap=max_comm_gap, max_idle_s=max_idle_s,
                       consume=True)
