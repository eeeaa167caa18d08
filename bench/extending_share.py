#!/usr/bin/env python3
"""Which writes extend their file, and what they cost: from traces of an
application (issue 79, BT-IO simple on the disk mounted `sync`).

For each trace and each file written: the writes (data calls), the share
that extended the file in the order they started (a write extends it when
its end passes every end before it), their mean time in ms against the
others', and the share of the others that overlapped in time a write that
extended the file (they wait for its journal commit). Then the same share
as if the ranks went in lockstep: the k-th write of every rank in round k,
within a round in rank order (and, beside it, in a random order): a share of
the layout alone, which the trace of one run on any file system gives.

Writes bench/results/extending-share.json (one entry a trace, by its
directory's name) and prints the table.

usage: .venv/bin/python bench/extending_share.py TRACE [TRACE ...]
"""
import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from iomodel.analyzer.trace import Trace  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "extending-share.json"


def extends(ends):
    """Per write, in the given order: does its end pass every end before it."""
    before = np.r_[0, np.maximum.accumulate(ends)[:-1]]
    return ends > before


def lockstep(rank, ends, within):
    """The share of writes (by rank, each rank's in call order) that extend
    their file when every rank makes its k-th write in round k, the ranks of
    a round in the order `within`."""
    first = np.r_[0, np.flatnonzero(np.diff(rank)) + 1]
    k = np.arange(len(rank)) - np.repeat(first, np.diff(np.r_[first, len(rank)]))
    return float(extends(ends[np.lexsort((within, k))]).mean())


def overlapped(t0, t1, ext):
    """Per write that did not extend the file: did a write that did overlap it in time."""
    s = np.argsort(t0[ext])
    starts, reach = t0[ext][s], np.maximum.accumulate(t1[ext][s])
    k = np.searchsorted(starts, t1[~ext]) - 1        # the last extending write started before its end
    return (k >= 0) & (reach[np.maximum(k, 0)] > t0[~ext])


def file_rows(trace):
    ev = Trace(trace).events
    c = {f: ev[f].to_numpy(zero_copy_only=False)
         for f in ("rank", "seq", "write", "data", "file_id", "t_start", "t_end", "abs_end")}
    rng = np.random.default_rng(0)
    for f in np.unique(c["file_id"][c["write"] & c["data"]]):
        w = c["write"] & c["data"] & (c["file_id"] == f) & (c["abs_end"] >= 0)
        t0, t1, ends, rank, seq = (c[x][w] for x in ("t_start", "t_end", "abs_end", "rank", "seq"))
        order = np.lexsort((rank, t0))
        t0, t1, ends, rank, seq = t0[order], t1[order], ends[order], rank[order], seq[order]
        ext = extends(ends)
        ms = (t1 - t0) * 1e3
        over = overlapped(t0, t1, ext)
        order = np.lexsort((seq, rank))             # lockstep: by rank, then call order
        yield {"file": int(f), "writes": int(w.sum()), "extending": float(ext.mean()),
               "ms_extending": float(ms[ext].mean()),
               "ms_within": float(ms[~ext].mean()) if (~ext).any() else None,
               "within_overlapping_extending": float(over.mean()) if len(over) else None,
               "lockstep_rank_order": lockstep(rank[order], ends[order], rank[order]),
               "lockstep_random_order": lockstep(rank[order], ends[order], rng.random(len(order)))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 usage=".venv/bin/python bench/extending_share.py TRACE [TRACE ...]")
    ap.add_argument("traces", nargs="+", metavar="TRACE", help="a trace directory of the application")
    traces = ap.parse_args().traces
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    print(f"{'trace':34} file writes extending  ms: ext  within  within overlapping ext  lockstep (rank, random)")
    for t in traces:
        rows = list(file_rows(t))
        results[Path(t).name] = rows
        for r in rows:
            within = "-" if r["ms_within"] is None else f"{r['ms_within']:.3f}"
            over = "-" if r["within_overlapping_extending"] is None else f"{r['within_overlapping_extending']:.0%}"
            print(f"{Path(t).name:34} {r['file']:4} {r['writes']:6} {r['extending']:9.0%} {r['ms_extending']:9.3f} "
                  f"{within:>7} {over:>23}  {r['lockstep_rank_order']:.0%}, {r['lockstep_random_order']:.0%}")
    RESULTS.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
