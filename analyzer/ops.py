"""The analyzer's input: one table of data operations, whatever the source.

A trace (analyzer/trace.py) and a Darshan log (analyzer/darshan.py) are both
turned into an `Ops`: a pyarrow table with one row per data operation and the
application's metadata.  The phase finder (analyzer/phases.py) reads only this.

Columns (a value the source cannot give is null, or -1 for integers):

    rank        int32    MPI_COMM_WORLD rank
    path        string   file path as the application named it
    write       bool     write (else read)
    routine     string   MPI routine (null: unknown)
    collective  bool     (null: unknown)
    bytes       int64    bytes moved
    offset      int64    first absolute byte in the file (-1: unknown)
    end         int64    one past the last byte (-1: unknown)
    pieces      int32    contiguous ranges the access covers (0: unknown)
    t_start     float64  seconds since time zero
    t_end       float64  when it completed (nonblocking: at its Wait/Test/_end)
    lclock      int64    communication calls the rank made before it (-1: unknown)
    comm_size   int32    size of the communicator the file was opened on (-1: unknown)
    pointer     string   explicit / individual / shared / ordered (null: unknown)
    nonblocking bool     (null: unknown)

Rows are sorted by (rank, t_start) and, within a rank, in call order.
"""
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

OPS_SCHEMA = pa.schema([
    ("rank", pa.int32()), ("path", pa.string()), ("write", pa.bool_()), ("routine", pa.string()),
    ("collective", pa.bool_()), ("bytes", pa.int64()), ("offset", pa.int64()), ("end", pa.int64()),
    ("pieces", pa.int32()), ("t_start", pa.float64()), ("t_end", pa.float64()),
    ("lclock", pa.int64()), ("comm_size", pa.int32()), ("pointer", pa.string()),
    ("nonblocking", pa.bool_()),
])

FEATURES = ("explicit_offsets", "individual_pointers", "shared_pointers", "blocking",
            "nonblocking", "collective", "independent")


@dataclass
class Ops:
    table: pa.Table                 # OPS_SCHEMA
    name: str                       # application name
    command: list                   # its command line
    np: int                         # ranks
    hosts: dict                     # host -> ranks on it
    run_time_s: float = None
    source: dict = field(default_factory=dict)   # kind, path, unavailable, inferred
    # communication calls at the end of each rank's run (for the last gap), or None
    final_lclock: dict = None

    def features(self):
        t = self.table
        ptr = set(t["pointer"].drop_null().to_pylist())
        nb, coll = t["nonblocking"], t["collective"]

        def known(col, value):
            if col.null_count == len(col):
                return None
            return bool(pc.any(pc.equal(col, value)).as_py())
        return {
            "explicit_offsets": "explicit" in ptr if ptr else None,
            "individual_pointers": "individual" in ptr if ptr else None,
            "shared_pointers": bool(ptr & {"shared", "ordered"}) if ptr else None,
            "blocking": known(nb, False),
            "nonblocking": known(nb, True),
            "collective": known(coll, True),
            "independent": known(coll, False),
        }


def ops_from_trace(trace, name=None, command=None):
    """The data operations of a Trace (calls that returned an error are left out)."""
    from .trace import routine_traits
    ev = trace.events
    data = ev["data"].to_numpy(zero_copy_only=False) & ~ev["error"].to_numpy(zero_copy_only=False)
    ev = ev.filter(pa.array(data))
    files = trace.files
    comm_size_of_open = files["comm_size"].to_numpy()
    open_id = ev["open_id"].to_numpy()
    paths = np.array(trace.paths + [""], dtype=object)
    routine = ev["routine"].to_pylist()
    pointer = [routine_traits(r)["pointer"] for r in routine]
    t_end = ev["t_end"].to_numpy()
    t_complete = ev["t_complete"].to_numpy()
    nonblocking = ev["nonblocking"].to_numpy(zero_copy_only=False)
    table = pa.table({
        "rank": ev["rank"],
        "path": pa.array(paths[ev["file_id"].to_numpy()].tolist(), pa.string()),
        "write": ev["write"],
        "routine": pa.array(routine, pa.string()),
        "collective": ev["collective"],
        "bytes": ev["bytes"],
        "offset": ev["abs_offset"],
        "end": ev["abs_end"],
        "pieces": ev["pieces"],
        "t_start": ev["t_start"],
        "t_end": pa.array(np.where(nonblocking & ~np.isnan(t_complete), t_complete, t_end)),
        "lclock": pa.array(ev["lclock"].to_numpy().astype(np.int64)),
        "comm_size": pa.array(comm_size_of_open[open_id].astype(np.int32)),
        "pointer": pa.array(pointer, pa.string()),
        "nonblocking": ev["nonblocking"],
    }, schema=OPS_SCHEMA)
    table = table.take(pc.sort_indices(table, [("rank", "ascending")]))  # stable: call order kept
    ranks = trace.ranks
    hosts = {}
    for h in ranks["hostname"].to_pylist():
        hosts[h] = hosts.get(h, 0) + 1
    all_ev = trace.events
    fin = [r for r in all_ev["routine"].to_pylist()]
    t_fin = all_ev["t_end"].to_numpy()
    run_time = float(max(t for r, t in zip(fin, t_fin) if r == "MPI_Finalize")) \
        if "MPI_Finalize" in fin else (float(t_fin.max()) if len(t_fin) else None)
    nranks = int(ranks["nranks"].to_pylist()[0]) if ranks.num_rows else 0
    return Ops(table, name or trace.program_name, command or trace.program_command, nranks, hosts,
               run_time, source={"kind": "trace", "path": str(trace.path), "unavailable": [],
                                 "inferred": []},
               final_lclock=dict(zip(ranks["rank"].to_pylist(), ranks["final_lclock"].to_pylist())))
