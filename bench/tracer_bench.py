#!/usr/bin/env python3
"""Tracer overhead benchmark: cost per traced event, trace size, logical-clock cost.

Runs bench/tracer_micro.c (1 rank, file in /dev/shm) untraced and traced,
alternately, REPEATS times; the overhead is the median over those pairs of
(traced - untraced) time per call.  Writes bench/results/tracer.json, prints
the table and puts it between the <!-- bench:tracer --> markers of the README
and docs/performance.md; --render does only that, from the results file.

usage: .venv/bin/python bench/tracer_bench.py [--calls N] [--repeats R]
       .venv/bin/python bench/tracer_bench.py --render
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from doc_blocks import put_block
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "tracer.json"
GOALS = {"write0_overhead_ns": 50, "write4k_overhead_ns": 50, "bytes_per_event": 40,
         "comm_overhead_ns": 5, "view_overhead_ns": 10000, "pwrite0_overhead_ns": 50,
         "pwrite4k_overhead_ns": 50, "pwrite_excluded_overhead_ns": 30}


def run(exe, shm, calls, env):
    cmd = ["mpirun", "-np", "1", "--bind-to", "core", exe, shm, str(calls)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=400000)
    ap.add_argument("--repeats", type=int, default=11)
    ap.add_argument("--render", action="store_true",
                    help=f"only put the figures of {RESULTS.relative_to(ROOT)} into the docs")
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    sys.path.insert(0, str(ROOT))
    from iomodel.tracer import library_path
    from iomodel.analyzer import Trace

    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    work = Path(tempfile.mkdtemp(prefix="iomodel-bench-", dir="/dev/shm"))
    try:
        exe = work / "tracer_micro"
        subprocess.run(["mpicc", "-O2", "-Wall", "-Wextra", "-o", exe, ROOT / "bench" / "tracer_micro.c"],
                       check=True)
        trace_dir = work / "trace"
        traced_env = {**env, "LD_PRELOAD": str(library_path()), "IOMODEL_TRACE_DIR": str(trace_dir)}
        keys = ("write0_ns", "write4k_ns", "comm_ns", "view_ns", "pwrite0_ns", "pwrite4k_ns",
                "pwrite_excluded_ns")
        plain, traced, diffs = {k: [] for k in keys}, {k: [] for k in keys}, {k: [] for k in keys}
        clock = []   # one read of the tracer's clock, timed in every run
        for i in range(args.repeats):
            a = run(exe, work, args.calls, env)
            b = run(exe, work, args.calls, traced_env)
            for k in keys:
                plain[k].append(a[k])
                traced[k].append(b[k])
                diffs[k].append(b[k] - a[k])
            clock += [a["clock_ns"], b["clock_ns"]]
            print(f"run {i + 1}/{args.repeats}: untraced {a}  traced {b}", file=sys.stderr)
        trace = Trace(trace_dir)
        events = trace.events.num_rows
        size = sum(f.stat().st_size for f in trace.rank_files)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    med = {k: round(statistics.median(v), 2) for k, v in diffs.items()}
    res = {
        "machine": machine(),
        "calls_per_measure": args.calls,
        "repeats": args.repeats,
        "untraced_ns_median": {k: round(statistics.median(v), 2) for k, v in plain.items()},
        "traced_ns_median": {k: round(statistics.median(v), 2) for k, v in traced.items()},
        "write0_overhead_ns": med["write0_ns"],
        "write4k_overhead_ns": med["write4k_ns"],
        "comm_overhead_ns": med["comm_ns"],
        "view_overhead_ns": med["view_ns"],
        "pwrite0_overhead_ns": med["pwrite0_ns"],
        "pwrite4k_overhead_ns": med["pwrite4k_ns"],
        "pwrite_excluded_overhead_ns": med["pwrite_excluded_ns"],
        # Two reads a traced call (entry and return): the part of the cost the
        # machine's clock sets, whatever the tracer's code.
        "clock_read_ns": round(statistics.median(clock), 2),
        "trace_events": events,
        "trace_bytes": size,
        "bytes_per_event": round(size / events, 2),
        "goals": GOALS,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    print(table(res))
    publish(res)


def publish(res):
    put_block("tracer", table(res))
    put_block("tracer", table(res), page="docs/performance.md")


def table(res):
    rows = [("MPI_File_write_at, 0 bytes", "write0_ns", "write0_overhead_ns", "ns/event"),
            ("MPI_File_write_at, 4 KiB", "write4k_ns", "write4k_overhead_ns", "ns/event"),
            ("MPI_Barrier(MPI_COMM_SELF), logical clock", "comm_ns", "comm_overhead_ns", "ns/call"),
            ("MPI_File_set_view, S3D-IO's 48^3 filetype flattened", "view_ns", "view_overhead_ns", "ns/call"),
            ("pwrite, 0 bytes, a file followed", "pwrite0_ns", "pwrite0_overhead_ns", "ns/event"),
            ("pwrite, 4 KiB, a file followed", "pwrite4k_ns", "pwrite4k_overhead_ns", "ns/event"),
            ("pwrite, 0 bytes, a path left out (/dev/null)", "pwrite_excluded_ns",
             "pwrite_excluded_overhead_ns", "ns/call")]
    out = ["| measure | untraced | traced | tracer cost | goal |", "|---|---|---|---|---|"]
    for name, k, o, unit in rows:
        if k not in res["untraced_ns_median"]:      # results from before the row
            continue
        out.append(f"| {name} | {res['untraced_ns_median'][k]:.1f} ns | {res['traced_ns_median'][k]:.1f} ns"
                   f" | {res[o]:.1f} {unit} | <= {res['goals'][o]} |")
    out.append(f"| trace size | | | {res['bytes_per_event']:.2f} B/event | <= {res['goals']['bytes_per_event']} |")
    if "clock_read_ns" in res:
        out.append(f"| the tracer's clock (time-stamp counter), read twice an event | {res['clock_read_ns']:.1f} ns"
                   f" a read | | {2 * res['clock_read_ns']:.1f} ns/event of the above | |")
    m = res["machine"]
    out.append(f"\n{m['cpu']}, {m['cores']} cores, Linux {m['kernel']}, {m['mpi']}; medians of "
               f"{res['repeats']} side-by-side pairs of runs, {res['calls_per_measure']} calls each ({m['date']}).")
    return "\n".join(out)


if __name__ == "__main__":
    main()
