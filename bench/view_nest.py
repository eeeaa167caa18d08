#!/usr/bin/env python3
"""Views read as nests against views flattened: the analyzer's step that maps
every access through its view (analyzer/linking.py resolve_rank).

Traces S3D-like checkpoints (tests/programs/s3d_like.c, blocking, 8 ranks:
MPI_Dims_create's 2 x 2 x 2, so a view's pieces are runs of G/2 doubles, NV *
G*G/4 of them) at two grid sizes, and huge_view.c (2 ranks, a pencil of a
4096^3 grid: 16 Mi pieces a view, more than the flattening takes).  Then, per
trace, in alternating pairs in this process: every rank's accesses resolved
with its views read as nests (as `iomodel analyze` does: pieces only for the
opens that write and read) and with its views flattened, each from the rank
file read afresh (a view caches its flattening).  Writes
bench/results/view-nest.json and the table between the <!-- bench:view-nest
--> markers of docs/performance.md.

usage: .venv/bin/python bench/view_nest.py [--pairs 5] [--grids 32,64]
       .venv/bin/python bench/view_nest.py --render
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from doc_blocks import put_block
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "view-nest.json"
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "IOMODEL_POSIX": "0"}


def trace(work, name, np_, *args):
    exe = work / name
    if not exe.exists():
        subprocess.run(["mpicc", "-O2", "-o", exe, ROOT / "tests" / "programs" / f"{name}.c"], check=True)
    tag = "-".join([name, *map(str, args)])
    data, out = work / f"data-{tag}", work / f"trace-{tag}"
    data.mkdir()
    subprocess.run([str(ROOT / ".venv" / "bin" / "iomodel"), "trace", "-o", str(out), "--", "mpirun",
                    "--oversubscribe", "-np", str(np_), str(exe), str(data), *map(str, args)],
                   check=True, capture_output=True, env={**os.environ, **ENV})
    shutil.rmtree(data)
    return out


def resolve_all(trace_dir, direct):
    """Seconds to resolve every rank's accesses, and what they resolved to."""
    import numpy as np
    from iomodel.analyzer.linking import link_rank, resolve_rank
    from iomodel.analyzer.ops import _trait_arrays, _written_and_read
    from iomodel.analyzer.trace import Trace
    from iomodel.analyzer.tracefile import read_rank_file
    spent, got, views = 0.0, [], []
    for f in Trace(trace_dir).rank_files:
        r = read_rank_file(f)
        t = _trait_arrays(r.routines)
        l = link_rank(r, np.arange(len(r.routines), dtype=np.int32), t["data"])
        need = _written_and_read(l, t["write"], len(r.opens))
        t0 = time.perf_counter()
        out = resolve_rank(l, need=need, direct=direct)
        spent += time.perf_counter() - t0
        sel = l.data & (l.nbytes > 0)
        got.append([a[sel].tolist() for a in out[:4]])
        views += r.views
    return spent, got, views


def measure(trace_dir, label, pairs):
    import numpy as np
    nest_s, flat_s = [], []
    for i in range(pairs):
        for direct in ((True, False) if i % 2 == 0 else (False, True)):
            s, got, views = resolve_all(trace_dir, direct)
            (nest_s if direct else flat_s).append(s)
            if direct:
                by_nest = got
                nests = [v["nest"] for v in views if "type_id" in v]
            else:
                by_flat, capped = got, any(v["capped"] for v in views)
    ratios = [f / n for n, f in zip(nest_s, flat_s)]
    return {"trace": label, "views": len(nests), "nests": sum(n is not None for n in nests),
            "pieces_per_view": int(np.median([n.nblocks for n in nests if n is not None])),
            "accesses": sum(len(r[0]) for r in by_nest),
            "nest_s": statistics.median(nest_s), "flat_s": statistics.median(flat_s),
            "ratio": statistics.median(ratios), "ratio_range": [min(ratios), max(ratios)],
            "flattening_capped": capped, "same": by_nest == by_flat}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--grids", default="32,64")
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="iomodel-nest-", dir="/dev/shm" if Path("/dev/shm").is_dir() else None))
    try:
        rows = []
        for g in args.grids.split(","):
            t = trace(work, "s3d_like", 8, "blocking", g, g, g)
            rows.append(measure(t, f"s3d_like {g}^3, 8 ranks", args.pairs))
        t = trace(work, "huge_view", 2)
        rows.append(measure(t, "huge_view 4096^3 pencils, 2 ranks", args.pairs))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {"machine": machine(), "pairs": args.pairs, "rows": rows}
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    publish(result)


def publish(result):
    lines = ["| trace | views (nests) | pieces a view | accesses | as nests | flattened | flattened / nests (range) | flattening capped | same results |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lo, hi = r["ratio_range"]
        lines.append(f"| {r['trace']} | {r['views']} ({r['nests']}) | {r['pieces_per_view']:,} | {r['accesses']} "
                     f"| {r['nest_s'] * 1e3:.1f} ms | {r['flat_s'] * 1e3:.1f} ms | x{r['ratio']:.1f} "
                     f"({lo:.1f} to {hi:.1f}) | {'yes' if r['flattening_capped'] else 'no'} "
                     f"| {'yes' if r['same'] else 'no'} |")
    m = result["machine"]
    lines += ["", f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores; the time of resolve_rank over every "
              f"rank, medians of {result['pairs']} alternating pairs in one process "
              f"({m.get('date', '?')})."]
    put_block("view-nest", "\n".join(lines), page="docs/performance.md")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
