#!/usr/bin/env python3
"""`iomodel analyze` as an MPI job against one process and `-j N` (issue 81):
a synthetic trace (bench/synth_trace.py, BT-IO-like, --ranks ranks of
--calls data calls each) analysed serially (-j 1), with -j P, and under
`mpirun -np P`, for each P of --processes.  Per run: events, processes,
wall_s, events/s, the largest peak resident memory of any of its processes
(max_rss_gib_per_process: each process's own, which for -j is the analyzer
and, apart, its largest worker), and whether the model is the serial one,
byte for byte.

Writes bench/results/analyze-mpi.json.

usage: .venv/bin/python bench/analyze_mpi.py [--ranks 4096] [--calls 2440] [--processes 2] [--keep DIR]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import synth_trace
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "analyze-mpi.json"
PYTHON = str(ROOT / ".venv" / "bin" / "python")
# each process of a run writes its own peak resident memory (KiB), and its children's
WRAP = ("import json, os, resource, sys\n"
        "from iomodel.cli import main\n"
        "rc = main(sys.argv[2:])\n"
        "me, kids = (resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
        "open(os.path.join(sys.argv[1], f'rss.{os.getpid()}'), 'w').write(json.dumps([me, kids]))\n"
        "sys.exit(rc)\n")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "OMPI_MCA_pml": "ob1"}


def run(launch, trace, model, rss_dir, env, *options):
    """One analysis (`launch`: [] or mpirun's words): its wall time, the largest
    peak resident memory of its processes (GiB) and how many reported."""
    shutil.rmtree(rss_dir, ignore_errors=True)
    rss_dir.mkdir()
    t0 = time.monotonic()
    subprocess.run([*launch, PYTHON, "-c", WRAP, rss_dir, "analyze", trace, "-o", model, "-q", *options],
                   check=True, env=env)
    wall = time.monotonic() - t0
    peaks = [json.loads(f.read_text()) for f in rss_dir.glob("rss.*")]
    return wall, max(max(x) for x in peaks) / 2 ** 20, len(peaks)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ranks", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=2440, help="data calls per rank (4096 x 2440: 10^7 events)")
    ap.add_argument("--processes", default="2", help="comma-separated process counts (default: %(default)s)")
    ap.add_argument("--keep", type=Path, help="write the trace here and keep it")
    ap.add_argument("-o", type=Path, default=RESULTS)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="iomodel-amp-"))
    trace = args.keep or work / "trace"
    try:
        info = synth_trace.write_trace(trace, ranks=args.ranks, calls=args.calls, job=True)
        env = {**os.environ, **MPI_ENV}
        serial = work / "serial.json"
        runs = []
        for mode, p in [("serial", 1)] + [(m, int(x)) for x in args.processes.split(",") for m in ("-j", "mpirun")]:
            out = work / f"{mode}{p}.json"
            launch = ["mpirun", "-np", str(p)] if mode == "mpirun" else []
            wall, rss, n = run(launch, trace, out, work / "rss", env, *([] if launch else ["-j", str(p)]))
            runs.append({"mode": mode, "processes": p, "events": info["events"], "wall_s": round(wall, 2),
                         "events_per_s": round(info["events"] / wall), "max_rss_gib_per_process": round(rss, 3),
                         "same_as_serial": out.read_bytes() == (out if mode == "serial" else serial).read_bytes()})
            if mode == "serial":
                shutil.copy(out, serial)
            print(json.dumps(runs[-1]), flush=True)
        result = {"machine": machine(), "ranks": args.ranks, "calls": args.calls, "runs": runs}
        args.o.write_text(json.dumps(result, indent=1) + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
