#!/usr/bin/env python3
"""Trace bytes per event and files per job: rank files against one job file.

Each workload runs under `iomodel trace` (4 ranks, and one on 64), in alternating pairs:
with IOMODEL_JOIN=1 (one compressed job.iot at MPI_Finalize) and IOMODEL_JOIN=0
(a raw rank-NNNNNN.iot per rank).  For each: the events, the trace's bytes and
files, the run's wall time (median of the pairs; the joined run's time
includes the copy at MPI_Finalize) and the time to read the trace's events
table (`Trace(dir).events`: decompressed, linked); the two traces' events are checked equal
but for times.  Writes bench/results/trace-bytes.json and the table between the
<!-- bench:trace-bytes --> markers of docs/performance.md.

usage: .venv/bin/python bench/trace_bytes.py [--pairs 3]
       .venv/bin/python bench/trace_bytes.py --render
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
RESULTS = ROOT / "bench" / "results" / "trace-bytes.json"
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "IOMODEL_POSIX": "0"}
SOURCES = {"simple_io": ROOT / "bench" / "simple_io.c", "random_io": ROOT / "examples" / "random_io.c",
           "btio_like": ROOT / "examples" / "btio_like.c",
           "many_events": ROOT / "tests" / "programs" / "many_events.c"}
# name, pattern, ranks, program, arguments after the data directory
WORKLOADS = [
    ("BT-IO simple-like (simple_io 64^3, 10 steps)", "regular", 4, "simple_io", ["64", "10"]),
    ("IOR-like (iomodel_replay -a MPIIO -s 4096 -t 4k, write and read)", "regular", 4, "replay",
     ["-a", "MPIIO", "-w", "-r", "-s", "4096", "-b", "4k", "-t", "4k"]),
    ("0-byte MPI_File_write_at (the tracer bench's call), 100,000", "regular", 4, "many_events", ["100000"]),
    ("btio_like 32^3, 40 steps (collective, a view)", "regular", 4, "btio_like", ["32", "32", "32", "40"]),
    ("random_io 4 KiB x 16384 (random offsets)", "irregular", 4, "random_io", ["4096", "16384"]),
    ("BT-IO simple-like on 64 ranks (simple_io 64^3, 10 steps)", "regular", 64, "simple_io", ["64", "10"]),
]


def run(work, exe, np_, args, join, tag):
    data, trace = work / f"data-{tag}", work / f"trace-{tag}"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir()
    if exe.name == "iomodel_replay":
        args = [*args, "-o", str(data / "ior.dat")]
    else:
        args = [str(data), *args]
    t = time.perf_counter()
    subprocess.run([str(ROOT / ".venv" / "bin" / "iomodel"), "trace", "-o", str(trace), "--", "mpirun",
                    "--oversubscribe", "-np", str(np_), str(exe), *args], check=True, capture_output=True,
                   env={**os.environ, **ENV, "IOMODEL_JOIN": str(join)})
    wall = time.perf_counter() - t
    shutil.rmtree(data)
    return trace, wall


def same_events(a, b):
    from iomodel.analyzer import Trace
    ta, tb = Trace(a).events, Trace(b).events
    return all(ta[c].equals(tb[c]) for c in ("rank", "seq", "routine", "offset", "bytes", "lclock", "collective",
                                             "abs_offset", "abs_end"))


def one(work, exe, name, pattern, np_, args, pairs):
    from iomodel.analyzer import Trace
    walls, sizes, reads = {1: [], 0: []}, {1: [], 0: []}, {1: [], 0: []}
    for i in range(pairs):
        for join in ((1, 0) if i % 2 == 0 else (0, 1)):
            trace, wall = run(work, exe, np_, args, join, f"{join}-{i}")
            walls[join].append(wall)
            t = time.perf_counter()
            tr = Trace(trace)
            tr.events                               # read, decoded, linked
            reads[join].append(time.perf_counter() - t)
            sizes[join].append(tr.trace_bytes)
    joined, apart = work / "trace-1-0", work / "trace-0-0"
    events = Trace(apart).events.num_rows
    row = {"workload": name, "pattern": pattern, "ranks": np_, "events": events,
           "files_joined": len(list(joined.iterdir())), "files_apart": len(list(apart.iterdir())),
           "bytes_joined": int(statistics.median(sizes[1])), "bytes_apart": int(statistics.median(sizes[0])),
           "wall_joined_s": round(statistics.median(walls[1]), 3),
           "wall_apart_s": round(statistics.median(walls[0]), 3),
           "read_joined_s": round(statistics.median(reads[1]), 3),
           "read_apart_s": round(statistics.median(reads[0]), 3),
           "same_events": same_events(joined, apart)}
    row["bytes_per_event_joined"] = round(row["bytes_joined"] / events, 2)
    row["bytes_per_event_apart"] = round(row["bytes_apart"] / events, 2)
    for d in work.glob("trace-*"):
        shutil.rmtree(d)
    return row


def synthetic(work, ranks, calls, pairs):
    """bench/synth_trace.py's BT-IO-like job in both layouts: bytes, files, and
    `iomodel analyze` end to end (median of alternating pairs), models equal."""
    import synth_trace
    out = {"ranks": ranks, "calls": calls}
    for job in (True, False):
        info = synth_trace.write_trace(work / f"synth-{int(job)}", ranks, calls, job=job)
        out["events"] = info["events"]
        out["bytes_joined" if job else "bytes_apart"] = info["trace_bytes"]
        out["files_joined" if job else "files_apart"] = len(list((work / f"synth-{int(job)}").iterdir()))
    times = {True: [], False: []}
    models = {}
    for i in range(pairs):
        for job in ((True, False) if i % 2 == 0 else (False, True)):
            model = work / f"synth-{int(job)}.json"
            t = time.perf_counter()
            subprocess.run([str(ROOT / ".venv" / "bin" / "iomodel"), "analyze", str(work / f"synth-{int(job)}"),
                            "-o", str(model), "-q"], check=True, capture_output=True)
            times[job].append(time.perf_counter() - t)
            m = json.loads(model.read_text())
            models[job] = (m["phases"], m["files"])
    out["analyze_joined_s"] = round(statistics.median(times[True]), 2)
    out["analyze_apart_s"] = round(statistics.median(times[False]), 2)
    out["same_model"] = models[True] == models[False]
    for job in (True, False):
        shutil.rmtree(work / f"synth-{int(job)}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--render", action="store_true")
    ap.add_argument("--synth-ranks", type=int, default=4096)
    ap.add_argument("--synth-calls", type=int, default=1000)
    args = ap.parse_args()
    if args.render:
        return publish(json.loads(RESULTS.read_text()))
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="iomodel-tbytes-"))
    try:
        exes = {"replay": ROOT / "tracer" / "lib" / "openmpi" / "iomodel_replay"}
        for name, src in SOURCES.items():
            exes[name] = work / name
            subprocess.run(["mpicc", "-O2", "-o", exes[name], src, "-lm"], check=True)
        rows = []
        for name, pattern, np_, prog, pargs in WORKLOADS:
            rows.append(one(work, exes[prog], name, pattern, np_, pargs, args.pairs))
            print(rows[-1], flush=True)
        synth = synthetic(work, args.synth_ranks, args.synth_calls, args.pairs)
        print(synth, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = {"machine": machine(), "pairs": args.pairs, "rows": rows, "synthetic": synth}
    RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    print(table(res))
    publish(res)


def table(res):
    out = ["| workload | pattern | ranks | events | rank files: B/event | job file: B/event | files | "
           "run time, job / rank files | read time, job / rank files |", "|---|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        out.append(f"| {r['workload']} | {r['pattern']} | {r['ranks']} | {r['events']:,} | {r['bytes_per_event_apart']:g} | "
                   f"{r['bytes_per_event_joined']:g} | {r['files_apart']} → {r['files_joined']} | "
                   f"{r['wall_joined_s']:.2f} / {r['wall_apart_s']:.2f} s | "
                   f"{r['read_joined_s']:.2f} / {r['read_apart_s']:.2f} s |")
    s = res.get("synthetic")
    if s:
        out.append(f"| synthetic BT-IO-like job (`bench/synth_trace.py`) | regular | {s['ranks']:,} | "
                   f"{s['events']:,} | {s['bytes_apart'] / s['events']:.2f} | {s['bytes_joined'] / s['events']:.2f} | "
                   f"{s['files_apart']:,} → {s['files_joined']} | | `iomodel analyze`: {s['analyze_joined_s']:.2f} / "
                   f"{s['analyze_apart_s']:.2f} s, models equal: {s['same_model']} |")
    m = res["machine"]
    out.append(f"\nUnder `iomodel trace` (more ranks than cores: oversubscribed), median of {res['pairs']} alternating pairs "
               f"(`IOMODEL_JOIN=1` against `0`); bytes are every file of the trace (headers, metadata, "
               f"`.after` continuations); each pair's events equal but for times: "
               f"{all(r['same_events'] for r in res['rows'])} ({m['date']}, {m['cores']} cores).")
    return "\n".join(out)


def publish(res):
    put_block("trace-bytes", table(res), page="docs/performance.md")


if __name__ == "__main__":
    main()
