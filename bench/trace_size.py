#!/usr/bin/env python3
"""Trace bytes of file views: S3D-like checkpoints at three grid sizes, views
stored as type descriptions (the default) and as the tracer's flattened pieces.

Runs tests/programs/s3d_like.c (blocking, 4 ranks: 5 files of 4 views a rank)
at grids of 16, 32 and 64 cells a side under `iomodel trace`, once per way of
storing views (IOMODEL_VIEWS=types, pieces), and counts per view the bytes of
its view record and of the type records it brought (docs/trace-format.md).
Writes bench/results/trace-size.json and the table between the
<!-- bench:trace-size --> markers of docs/performance.md.

usage: .venv/bin/python bench/trace_size.py [--grids 16,32,64]
       .venv/bin/python bench/trace_size.py --render
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from doc_blocks import put_block
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "trace-size.json"
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "IOMODEL_POSIX": "0",
       "IOMODEL_JOIN": "0"}      # the rank files: their records as written
NP = 4


def pad8(n):
    return (n + 7) // 8 * 8


def view_bytes(rank):
    """Bytes of a rank's view and type records, as docs/trace-format.md lays them out."""
    from iomodel.analyzer.tracefile import META, TYPE_FIXED, VIEW_FIXED

    def stored(v):     # pieces in the record: a described view's only with IOMODEL_VIEWS=both
        return len(v["pieces"]) if "pieces" in v else 0 if "type_id" in v else len(v["blocks"])
    views = sum(META.size + VIEW_FIXED.size + 16 * stored(v) + pad8(len(v["datarep"])) for v in rank.views)
    types = sum(META.size + TYPE_FIXED.size + pad8(4 * len(t["ints"])) + 8 * len(t["addrs"])
                + pad8(4 * len(t["kids"])) for t in rank.types.values())
    return views + types


def one(exe, work, grid, how):
    from iomodel.analyzer.tracefile import read_rank_file
    data, trace = work / f"data-{how}-{grid}", work / f"trace-{how}-{grid}"
    data.mkdir()
    subprocess.run([str(ROOT / ".venv" / "bin" / "iomodel"), "trace", "-o", str(trace), "--", "mpirun",
                    "--oversubscribe", "-np", str(NP), str(exe), str(data), "blocking", *[str(grid)] * 3],
                   check=True, capture_output=True, env={**os.environ, **ENV, "IOMODEL_VIEWS": how})
    ranks = [read_rank_file(f) for f in sorted(trace.glob("rank-*.iot"))]
    nviews = sum(len(r.views) for r in ranks)
    vbytes = sum(view_bytes(r) for r in ranks)
    out = {"grid": grid, "views": how, "trace_bytes": sum(f.stat().st_size for f in trace.glob("rank-*.iot")),
           "view_count": nviews, "view_bytes": vbytes, "bytes_per_view": round(vbytes / nviews, 1),
           "pieces_per_view": round(sum(len(v["blocks"]) for r in ranks for v in r.views) / nviews, 1)}
    shutil.rmtree(data)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grids", default="16,32,64")
    ap.add_argument("--render", action="store_true")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="iomodel-tsize-"))
    try:
        exe = work / "s3d_like"
        subprocess.run(["mpicc", "-O2", "-o", exe, ROOT / "tests" / "programs" / "s3d_like.c"], check=True)
        rows = [one(exe, work, int(g), how) for g in args.grids.split(",") for how in ("types", "pieces")]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"machine": machine(), "app": f"s3d_like blocking, {NP} ranks", "rows": rows}
    RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    print(table(res))
    publish(res)


def table(res):
    out = ["| grid | views stored as | views | pieces a view | bytes a view | trace bytes |", "|---|---|---|---|---|---|"]
    for r in res["rows"]:
        how = "type descriptions" if r["views"] == "types" else "pieces"
        out.append(f"| {r['grid']}^3 | {how} | {r['view_count']} | {r['pieces_per_view']:g} | "
                   f"{r['bytes_per_view']:g} | {r['trace_bytes']:,} |")
    m = res["machine"]
    out.append(f"\n{res['app']}; the bytes of a view's record and of the type records it brought, "
               f"averaged over the trace's views ({m['date']}).")
    return "\n".join(out)


def publish(res):
    put_block("trace-size", table(res), page="docs/performance.md")


if __name__ == "__main__":
    main()
