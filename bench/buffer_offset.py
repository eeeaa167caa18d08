#!/usr/bin/env python3
"""Transfer time against where the buffer sits within 4 KiB.

Runs the built-in replayer (tracer/lib/iomodel_replay) on each directory given:
2 processes, a file each (-F), 4 MiB per process written and read back through
the same open (--iomodel.reread) in transfers of each size, the buffer
--iomodel.bufferOffset bytes past a 4 KiB boundary.  The offsets run in a new
order in each of REPEATS rounds, so a slow stretch of the machine falls on one
offset's run, not on all of one offset's.  Per (directory, size, offset): the
median over the rounds of the write's and the read's time inside their calls
(iomodelIoTime), and its ratio to offset 0's.  Writes
bench/results/buffer-offset.json and prints the table.

usage: .venv/bin/python bench/buffer_offset.py [--dir DIR ...] [--repeats R]
       (default: --dir /dev/shm; add the disk VC's work directory, e.g.
       /tmp/iomodel-testbed/disk/work after testbed/disk/start.sh)
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

from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "buffer-offset.json"
OFFSETS = (0, 8, 16, 32, 48, 64, 2064)     # 2064: 16 past a 64-byte line, far from the page start
SIZES = (16 << 10, 256 << 10, 1 << 20)
PER_PROCESS = 4 << 20
NP = 2
ENV = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1",
       **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
          if os.geteuid() == 0 else {})}


def one_run(replayer, directory, size, offset):
    """(write s, read s) of one replayer run, each the slowest process's time in its calls."""
    with tempfile.TemporaryDirectory(prefix="iomodel-bufoff.", dir=directory) as d:
        cmd = ["mpirun", "--oversubscribe", "-np", str(NP), str(replayer), "-a", "MPIIO", "-F",
               "-w", "-r", "--iomodel.reread", "-b", str(PER_PROCESS), "-t", str(size), "-s", "1",
               f"--iomodel.bufferOffset={offset}", "-o", f"{d}/f", "-O", "summaryFormat=JSON"]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
        if out.returncode != 0:
            sys.exit(f"buffer_offset: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
        res = {r["access"]: r["iomodelIoTime"] for r in json.loads(out.stdout)["tests"][0]["Results"]}
        return res["write"], res["read"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", action="append", help="a directory on the storage to measure "
                    "(repeatable; default /dev/shm)")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("-o", "--output", default=str(RESULTS))
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from iomodel.replay.results import replayer_path
    replayer = replayer_path()
    dirs = args.dir or ["/dev/shm"]
    times = {}
    rng = random.Random(1)
    for rnd in range(args.repeats):
        for directory in dirs:
            for size in SIZES:
                order = list(OFFSETS)
                rng.shuffle(order)
                for off in order:
                    times.setdefault((directory, size, off), []).append(
                        one_run(replayer, directory, size, off))
        print(f"round {rnd + 1}/{args.repeats} done", file=sys.stderr)
    rows = []
    for directory in dirs:
        for size in SIZES:
            base = None
            for off in OFFSETS:
                t = times[(directory, size, off)]
                w = statistics.median(x[0] for x in t)
                r = statistics.median(x[1] for x in t)
                base = base or (w, r)
                rows.append({"dir": directory, "transfer": size, "buffer_offset": off,
                             "write_s": w, "read_s": r, "write_vs_aligned": w / base[0],
                             "read_vs_aligned": r / base[1],
                             "read_runs_s": sorted(x[1] for x in t)})
    doc = {"machine": machine(), "np": NP, "bytes_per_process": PER_PROCESS,
           "repeats": args.repeats, "rows": rows,
           "what": "median over the rounds of the slowest process's time in its write and read "
                   "calls (reread through the write's open), and its ratio to the aligned buffer's"}
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(json.dumps(doc, indent=1) + "\n")
    print(render(doc))
    print(f"\nwritten to {args.output}")


def render(doc):
    lines = ["| storage | transfer | buffer offset | write ms | read ms | read / aligned |",
             "|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(f"| {r['dir']} | {r['transfer'] >> 10} KiB | {r['buffer_offset']} | "
                     f"{r['write_s'] * 1e3:.2f} | {r['read_s'] * 1e3:.3f} | "
                     f"{r['read_vs_aligned']:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
