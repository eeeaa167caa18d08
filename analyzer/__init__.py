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


def analyze(path, max_comm_gap=None, max_idle_s=None):
    """The I/O model (a dict, docs/model-format.md) of a trace or Darshan log."""
    from .phases import build_model
    return build_model(load_ops(path), max_comm_gap=max_comm_gap, max_idle_s=max_idle_s,
                       consume=True)
