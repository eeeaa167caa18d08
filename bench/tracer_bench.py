#!/usr/bin/env python3
"""Tracer overhead benchmark: cost per traced event, trace size, logical-clock cost.

Runs bench/tracer_micro.c (1 rank, file in /dev/shm) untraced and traced,
alternately, REPEATS times, under each MPI iomodel is built for (the program
built with that MPI's mpicc, the tracer of that build).  Two measures of the
cost per call: process pairs, the median over those pairs of (traced -
untraced) time per call; and in-process blocks, where each process times
alternating blocks of calls through the wrapper and through the real function
(the median over the pairs of traced - untraced of that difference), which
cancels the drift that moves a syscall's time from one process to the next by
more than the cost measured.  The goals apply to the in-process figure where
there is one.  Writes bench/results/tracer.json, prints
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
         "pwrite4k_overhead_ns": 50, "pwrite_excluded_overhead_ns": 30, "fputc_overhead_ns": 50,
         "fwrite4k_overhead_ns": 50}


# the calls bench/tracer_micro.c also times in alternating blocks within a process
IN_PROCESS = ("write0_ns", "write4k_ns", "pwrite0_ns", "pwrite4k_ns", "pwrite_excluded_ns", "fputc_ns",
              "fwrite4k_ns")

# each MPI's compiler and launcher, one rank bound to a core
TOOLS = {"openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "-np", "1", "--bind-to", "core"]),
         "mpich": ("mpicc.mpich", ["mpiexec.mpich", "-n", "1", "-bind-to", "core"])}


def tools(family, only):
    """(mpicc, launcher argv) of a family; plain mpicc/mpirun where the MPI is the only one."""
    cc, launch = TOOLS[family]
    if not shutil.which(cc) and only:
        return "mpicc", ["mpirun", *launch[1:]]
    return cc, launch


def run(launch, exe, shm, calls, env):
    out = subprocess.run([*launch, exe, shm, str(calls)], capture_output=True, text=True, check=True,
                         env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def quartiles(values):
    return [round(q, 1) for q in statistics.quantiles(values, n=4)[::2]]


def figures(plain, traced, diffs, clock, inproc, trace, library):
    """One MPI's results: medians, overheads and the trace's size."""
    med = {k: round(statistics.median(v), 2) for k, v in diffs.items()}
    events = trace.events.num_rows
    size = trace.trace_bytes
    return {
        "library": library,
        "untraced_ns_median": {k: round(statistics.median(v), 2) for k, v in plain.items()},
        "traced_ns_median": {k: round(statistics.median(v), 2) for k, v in traced.items()},
        **{f"{k[:-3]}_overhead_ns": v for k, v in med.items()},
        # the pairs' own spread: quartiles of (traced - untraced)
        "overhead_quartiles_ns": {k[:-3]: quartiles(v) for k, v in diffs.items()},
        # wrapper - real function within each process, traced minus untraced
        "in_process_overhead_ns": {k[:-3]: round(statistics.median(v), 2) for k, v in inproc.items()},
        "in_process_quartiles_ns": {k[:-3]: quartiles(v) for k, v in inproc.items()},
        # Two reads a traced call (entry and return): the part of the cost the
        # machine's clock sets, whatever the tracer's code.
        "clock_read_ns": round(statistics.median(clock), 2),
        "trace_events": events,
        "trace_bytes": size,
        "bytes_per_event": round(size / events, 2),
    }


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
    from iomodel.mpi import builds
    from iomodel.analyzer import Trace

    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    keys = ("write0_ns", "write4k_ns", "comm_ns", "view_ns", "pwrite0_ns", "pwrite4k_ns",
            "pwrite_excluded_ns", "fputc_ns", "fwrite4k_ns")
    work = Path(tempfile.mkdtemp(prefix="iomodel-bench-", dir="/dev/shm"))
    mpis = {}
    try:
        setups = {}
        available = builds()
        for family, build in available.items():
            cc, launch = tools(family, len(available) == 1)
            exe = work / f"tracer_micro-{family}"
            subprocess.run([cc, "-O2", "-Wall", "-Wextra", "-o", exe, ROOT / "bench" / "tracer_micro.c"],
                           check=True)
            trace_dir = work / f"trace-{family}"
            setups[family] = (launch, exe, trace_dir, {**env, "LD_PRELOAD": str(build.tracer),
                                                       "IOMODEL_TRACE_DIR": str(trace_dir)})
        runs = {f: ({k: [] for k in keys}, {k: [] for k in keys}, {k: [] for k in keys}, [],
                    {k: [] for k in IN_PROCESS}) for f in setups}
        for i in range(args.repeats):
            for family, (launch, exe, _, traced_env) in setups.items():
                plain, traced, diffs, clock, inproc = runs[family]
                a = run(launch, exe, work, args.calls, env)
                b = run(launch, exe, work, args.calls, traced_env)
                for k in keys:
                    plain[k].append(a[k])
                    traced[k].append(b[k])
                    diffs[k].append(b[k] - a[k])
                clock += [a["clock_ns"], b["clock_ns"]]
                for k in IN_PROCESS:
                    inproc[k].append(b["in_process"][k] - a["in_process"][k])
                print(f"run {i + 1}/{args.repeats} {family}: untraced {a}  traced {b}", file=sys.stderr)
        for family, (_, _, trace_dir, _) in setups.items():
            mpis[family] = figures(*runs[family], Trace(trace_dir), available[family].describe())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"machine": machine(), "calls_per_measure": args.calls, "repeats": args.repeats,
           "mpis": mpis, "goals": GOALS}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(res, indent=2) + "\n")
    print(table(res))
    publish(res)


# the README's rows; docs/performance.md has them all
README_ROWS = ("write0", "write4k", "comm", "pwrite0", "pwrite4k", "pwrite_excluded")


def publish(res):
    put_block("tracer", table(res, README_ROWS))
    put_block("tracer", table(res), page="docs/performance.md")


def table(res, only=None):
    rows = [("MPI_File_write_at, 0 bytes", "write0", "ns/event"),
            ("MPI_File_write_at, 4 KiB", "write4k", "ns/event"),
            ("MPI_Barrier(MPI_COMM_SELF), logical clock", "comm", "ns/call"),
            ("MPI_File_set_view, S3D-IO's 48^3 filetype described", "view", "ns/call"),
            ("pwrite, 0 bytes, a file followed", "pwrite0", "ns/event"),
            ("pwrite, 4 KiB, a file followed", "pwrite4k", "ns/event"),
            ("pwrite, 0 bytes, a path left out (/dev/null)", "pwrite_excluded", "ns/call"),
            ("fputc, 1 byte, a stream followed", "fputc", "ns/event"),
            ("fwrite, 4 KiB, a stream followed", "fwrite4k", "ns/event")]
    mpis = list(res["mpis"].values())
    head = "".join(f" {m['library']}: untraced | cost, in-process blocks | cost, process pairs |" for m in mpis)
    out = [f"| measure |{head} goal |", "|---|" + "---|---|---|" * len(mpis) + "---|"]

    def cost(median, quarts, unit):
        return " |" if median is None else f" {median:.1f} {unit} ({quarts[0]:.0f} to {quarts[1]:.0f}) |"

    for name, k, unit in rows:
        if only and k not in only:
            continue
        cells = "".join(f" {m['untraced_ns_median'][k + '_ns']:.1f} ns |"
                        + cost(m["in_process_overhead_ns"].get(k), m["in_process_quartiles_ns"].get(k), unit)
                        + cost(m[k + "_overhead_ns"], m["overhead_quartiles_ns"][k], unit) for m in mpis)
        out.append(f"| {name} |{cells} <= {res['goals'][k + '_overhead_ns']} |")
    cells = "".join(f" | | {m['bytes_per_event']:.2f} B/event |" for m in mpis)
    out.append(f"| trace size |{cells} <= {res['goals']['bytes_per_event']} |")
    cells = "".join(f" {m['clock_read_ns']:.1f} ns a read | {2 * m['clock_read_ns']:.1f} ns/event of the above | |"
                    for m in mpis)
    if not only:
        out.append(f"| the tracer's clock (time-stamp counter), read twice an event |{cells} |")
    m = res["machine"]
    out.append(f"\n{m['cpu']}, {m['cores']} cores, Linux {m['kernel']}; medians of {res['repeats']} "
               f"side-by-side pairs of runs under each MPI, {res['calls_per_measure']} calls each, "
               f"the pairs' quartiles in brackets; in-process blocks: the median of "
               f"{res['calls_per_measure'] // 800} alternating pairs of 100-call blocks within each run, "
               f"through the wrapper and the real function ({m['date']}).")
    return "\n".join(out)


if __name__ == "__main__":
    main()
