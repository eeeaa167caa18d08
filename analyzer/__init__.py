"""iomodel.analyzer: from a trace directory to Arrow tables (and, later, to an I/O model)."""
from .trace import Trace, TraceError, open_trace

__all__ = ["Trace", "TraceError", "open_trace"]
