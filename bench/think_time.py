#!/usr/bin/env python3
"""Does computing between a process's operations shorten the others' waits?

predict's `_computing_between` (cluster/predict.py) takes the time a process
computes between its independent operations, k, off the wait d = t_np - t_1 its
operation has for the others' (where operations last milliseconds: t_1 +
max(d - k, 0)), as on a device that serves requests in turn: while one process
computes, the other has the device to itself.  A device that shares itself
among the requests in flight keeps the processes in step instead (they finish
together, compute together and come back together), and computing saves
nothing: t_np whatever k.  This bench measures which a storage directory is.

Runs the built-in replayer (tracer/lib/iomodel_replay) on each directory given,
one launch per measurement: a file per process (-F), 16 writes of 64 KiB each
(fpp_io 64KiBx16's phase), at 1 process and at 2 processes computing (spinning,
--iomodel.think) k between their writes, for each k in --think.  The
configurations run in a new order in each of --rounds rounds, so a slow stretch
of the machine falls on one configuration's run, not on all of one's.  Per
(directory, k): the median over the rounds of the time per write inside the
calls (the slowest process's iomodelIoTime / 16), next to what each of the two
models expects from the k = 0 points.  Writes bench/results/think-time.json and
prints the table.

usage: .venv/bin/python bench/think_time.py --dir DIR [--dir DIR ...]
       e.g. after IOMODEL_DISK_WRITE_BPS=62914560 IOMODEL_DISK_READ_BPS=62914560
       testbed/disk/start.sh: --dir /tmp/iomodel-testbed/disk/work
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from iomodel.replay.host import steal_s, stolen_since
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "think-time.json"
TRANSFER, OPS = 64 << 10, 16
THINKS = (0.0, 0.00014, 0.001, 0.002, 0.004)   # 0.14 ms: fpp_io 64KiBx16's own
ENV = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ob1",
       **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
          if os.geteuid() == 0 else {})}


def per_write(replayer, directory, np_, think):
    """Seconds per write of one replayer launch: the slowest process's time in its calls / OPS."""
    with tempfile.TemporaryDirectory(prefix="iomodel-think.", dir=directory) as d:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np_), str(replayer), "-a", "MPIIO", "-F", "-w",
               "-b", str(TRANSFER * OPS), "-t", str(TRANSFER), "-s", "1", "-o", f"{d}/f",
               "-O", "summaryFormat=JSON", *([f"--iomodel.think={think:.6f}"] if think else [])]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
        if out.returncode != 0:
            sys.exit(f"think_time: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
        return json.loads(out.stdout)["tests"][0]["Results"][0]["iomodelIoTime"] / OPS


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", action="append", required=True, help="a directory on the storage to test")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--think", default=",".join(f"{k:g}" for k in THINKS),
                    help="seconds computed between writes at 2 processes, comma-separated (0 is always measured)")
    ap.add_argument("-o", default=str(RESULTS))
    args = ap.parse_args()
    replayer = ROOT / "tracer" / "lib" / "iomodel_replay"
    if not replayer.is_file():
        sys.exit(f"think_time: {replayer} not found: run scripts/setup.sh first")
    try:   # k = 0, the back-to-back point, is what the others are measured against
        thinks = sorted({0.0, *(float(k) for k in args.think.split(","))})
    except ValueError:
        sys.exit(f"think_time: --think {args.think}: expected seconds, comma-separated")
    if thinks[0] < 0:
        sys.exit(f"think_time: --think {args.think}: times cannot be negative")
    configs = [(1, 0.0)] + [(2, k) for k in thinks]
    dirs = []
    for directory in args.dir:
        if not os.path.isdir(directory):
            sys.exit(f"think_time: {directory}: no such directory (start its VC first)")
        times = {c: [] for c in configs}
        steal0 = steal_s()
        for _ in range(args.rounds):
            for c in random.sample(configs, len(configs)):
                times[c].append(per_write(replayer, directory, *c))
        stolen = stolen_since(steal0) or 0.0
        t1 = statistics.median(times[(1, 0.0)])
        tn = statistics.median(times[(2, 0.0)])
        rows = []
        for k in thinks:
            rows.append({"np": 2, "think_s": k, "per_write_s": statistics.median(times[(2, k)]),
                         "runs_s": times[(2, k)],
                         "in_turn_expects_s": t1 + max(tn - t1 - k, 0.0),   # predict's lockstep
                         "shared_expects_s": tn})
        dirs.append({"dir": directory, "np1_per_write_s": t1, "np1_runs_s": times[(1, 0.0)],
                     "steal_s": stolen, "rows": rows})
        print(f"{directory}: 1 process {t1 * 1e3:.3f} ms a write; steal {stolen:.2f} s")
        print("| k (ms) | 2 processes, ms a write | served in turn expects | shared expects |")
        print("|---|---|---|---|")
        for r in rows:
            print(f"| {r['think_s'] * 1e3:g} | {r['per_write_s'] * 1e3:.3f} | "
                  f"{r['in_turn_expects_s'] * 1e3:.3f} | {r['shared_expects_s'] * 1e3:.3f} |")
    Path(args.o).write_text(json.dumps({"machine": machine(), "transfer": TRANSFER, "ops": OPS,
                                        "rounds": args.rounds, "dirs": dirs}, indent=1) + "\n")
    print(f"wrote {args.o}")


if __name__ == "__main__":
    main()
