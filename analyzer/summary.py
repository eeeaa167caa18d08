"""The numbers `iomodel trace-info` prints, computed from a Trace's tables."""

import numpy as np


def summarize(trace):
    ev = trace.events
    ranks = trace.ranks
    routine = ev["routine"].combine_chunks()
    names = routine.dictionary.to_pylist()
    idx = routine.indices.to_numpy(zero_copy_only=False)
    calls = ev["call"].to_numpy(zero_copy_only=False)
    counts = np.bincount(idx[calls], minlength=len(names)) if len(idx) else np.zeros(len(names), int)
    data = ev["data"].to_numpy(zero_copy_only=False)
    nbytes = ev["bytes"].to_numpy()
    write = ev["write"].to_numpy(zero_copy_only=False) & data
    read = ev["read"].to_numpy(zero_copy_only=False) & data
    ok = ~ev["error"].to_numpy(zero_copy_only=False)
    # failed calls by routine: MPI's returned an MPI error; POSIX's and stdio's failed (an
    # open of a file that is not there: ENOENT), which is no MPI error
    nfailed = np.bincount(idx[~ok], minlength=len(names)) if len(idx) else np.zeros(len(names), int)
    failed = {n: int(nfailed[i]) for i, n in enumerate(names) if nfailed[i]}
    mpi_errors = sum(v for n, v in failed.items() if n.startswith("MPI_"))
    per_routine = {}
    for i, n in enumerate(names):
        if counts[i]:
            sel = (idx == i) & data & ok
            per_routine[n] = {"calls": int(counts[i]), "bytes": int(nbytes[sel].sum())}
    files = {}
    fid = ev["file_id"].to_numpy()
    for i, p in enumerate(trace.paths):
        sel = (fid == i) & ok
        files[p] = {"ranks": int(len(np.unique(ev["rank"].to_numpy()[sel]))),
                    "bytes_written": int(nbytes[sel & write].sum()),
                    "bytes_read": int(nbytes[sel & read].sum())}
    t0, t1 = ev["t_start"].to_numpy(), ev["t_end"].to_numpy()
    return {
        "trace": str(trace.path),
        "ranks": int(ranks.num_rows),
        "nranks": int(max(ranks["nranks"].to_pylist(), default=0)),
        "hosts": sorted(set(ranks["hostname"].to_pylist())),
        "ended_by": sorted({e or "nothing (killed or still running)" for e in ranks["ended_by"].to_pylist()}),
        "files": list(trace.paths),
        "file_stats": files,
        "events": {n: v["calls"] for n, v in per_routine.items()},
        "routine_bytes": {n: v["bytes"] for n, v in per_routine.items() if v["bytes"]},
        "total_events": int(ev.num_rows),
        "bytes_written": int(nbytes[write & ok].sum()),
        "bytes_read": int(nbytes[read & ok].sum()),
        "duration_s": float(t1.max() - max(t0.min(), 0.0)) if len(t0) else 0.0,
        "errors": int((~ok).sum()),
        "mpi_errors": mpi_errors,
        "posix_errors": int((~ok).sum()) - mpi_errors,
        "failed": failed,
        "damage": [str(e) for e in trace.errors],
        "gaps": (trace.gaps or {}).get("notes", []),
        "trace_bytes": trace.trace_bytes,
    }
