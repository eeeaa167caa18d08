#!/usr/bin/env python3
"""Phases that overlap across processes: solver_like's last dump and its reads.

Runs examples/solver_like.c (2 ranks, 48^3 cells, 4 dumps) RUNS times on
DIR, traced with the layer under MPI-IO (IOMODEL_UNDER_MPI=1), and reports per
run: each rank's collective calls (start, end), the time a rank spent in the
system calls under each dump (pwritev) and the stalls among them (over 2 ms),
and how much of one rank's read phase fell inside the other's last dump.
On the one-server Gluster VC, the rank that finishes its last dump first
reads all four dumps back while the other is still writing (the collective
reads do not wait for it); its reads then share the link with the other's
small writes.  Writes bench/results/phase-overlap.json.

usage: .venv/bin/python bench/phase_overlap.py [--dir /tmp/iomodel-testbed/gluster] [--runs 3]
(the Gluster VC started: IOMODEL_GLUSTER_RATE=300mbit testbed/gluster/start.sh, as root)
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

import numpy as np

from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "phase-overlap.json"
ARGS = ["48", "48", "48", "4", "10"]
ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
       "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ob1", "IOMODEL_UNDER_MPI": "1"}
STALL_S = 2e-3


def one_run(exe, data, trace):
    from iomodel.analyzer import Trace
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    subprocess.run([str(ROOT / ".venv" / "bin" / "iomodel"), "trace", "-o", str(trace), "--",
                    "mpirun", "--oversubscribe", "-np", "2", str(exe), str(data), *ARGS],
                   check=True, capture_output=True, env={**os.environ, **ENV})
    ev = Trace(trace).events
    rank = ev["rank"].to_numpy()
    routine = np.asarray(ev["routine"].to_pylist())
    t0, t1 = ev["t_start"].to_numpy(), ev["t_end"].to_numpy()
    out = {}
    for r in (0, 1):
        coll = np.flatnonzero((rank == r) & np.isin(routine, ["MPI_File_write_at_all", "MPI_File_read_at_all"]))
        under = np.flatnonzero((rank == r) & (routine == "pwritev under MPI"))
        dumps = []
        for i in coll[:4]:
            inside = under[(t0[under] >= t0[i]) & (t1[under] <= t1[i])]
            d = t1[inside] - t0[inside]
            dumps.append({"start_s": round(t0[i], 4), "end_s": round(t1[i], 4), "pwritev_calls": len(d),
                          "pwritev_s": round(d.sum(), 4), "stalls": int((d > STALL_S).sum()),
                          "stalls_s": round(d[d > STALL_S].sum(), 4)})
        reads = [(round(t0[i], 4), round(t1[i], 4)) for i in coll[4:]]
        out[f"rank{r}"] = {"dumps": dumps, "reads": reads}
    # the rank that ends its last dump last, and what the other read meanwhile
    late = max((0, 1), key=lambda r: out[f"rank{r}"]["dumps"][-1]["end_s"])
    last_write_end = out[f"rank{late}"]["dumps"][-1]["end_s"]
    out["late_rank"] = late
    out["early_rank_reading_during_late_last_dump_s"] = round(
        sum(max(0.0, min(b, last_write_end) - a) for a, b in out[f"rank{1 - late}"]["reads"]), 4)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", default="/tmp/iomodel-testbed/gluster", help="where the application writes")
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="iomodel-overlap-"))
    try:
        exe = work / "solver_like"
        subprocess.run(["mpicc", "-O2", "-o", exe, ROOT / "examples" / "solver_like.c", "-lm"], check=True)
        runs = [one_run(exe, Path(args.dir) / "phase-overlap", work / f"trace{i}") for i in range(args.runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(Path(args.dir) / "phase-overlap", ignore_errors=True)

    def med(f):
        return round(statistics.median(f(run) for run in runs), 3)
    def late(x):
        return x[f"rank{x['late_rank']}"]

    def early(x):
        return x[f"rank{1 - x['late_rank']}"]
    summary = {
        "late_rank_dumps_1_to_3_s": med(lambda x: statistics.median(d["end_s"] - d["start_s"]
                                                                    for d in late(x)["dumps"][:3])),
        "late_rank_last_dump_s": med(lambda x: late(x)["dumps"][3]["end_s"] - late(x)["dumps"][3]["start_s"]),
        "late_rank_stalls_dumps_1_to_3": med(lambda x: statistics.median(d["stalls"] for d in late(x)["dumps"][:3])),
        "late_rank_stalls_last_dump": med(lambda x: late(x)["dumps"][3]["stalls"]),
        "early_rank_read_phase_s": med(lambda x: early(x)["reads"][-1][1] - early(x)["reads"][0][0]),
        "early_rank_reading_during_late_last_dump_s": med(lambda x: x["early_rank_reading_during_late_last_dump_s"]),
        "late_rank_read_phase_s": med(lambda x: late(x)["reads"][-1][1] - late(x)["reads"][0][0]),
    }
    res = {"machine": machine(), "dir": args.dir, "app": "solver_like " + " ".join(ARGS), "np": 2,
           "summary_medians": summary, "runs": runs}
    RESULTS.write_text(json.dumps(res, indent=1) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
