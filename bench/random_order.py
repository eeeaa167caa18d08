#!/usr/bin/env python3
"""Do writes at random offsets cost more than the same writes in order?

`iomodel characterize --random` measures a random twin of each independent
point so that predict can scale a random phase (the model's access mode
random) by what the order costs on the cluster (cluster/profile.py).  This bench
measures that cost directly on a storage directory, with random_io
16KiBx256's phase: 2 processes, 256 independent writes of 16 KiB each to one
shared file.  Per round, in a new order each round (a slow stretch of the
machine then falls on one configuration's run, not on all of one's):

  - interleaved: the profile's in-order point, 256 segments of one transfer
    (rank r's k-th write at (2k + r) x 16 KiB);
  - in order: each rank's 4 MiB block written front to back (-s 1 -b 4m);
  - random: the same block in a random order (-z), random_io's layout;
  - the application: examples/random_io.c under the tracer, its write
    phase's io_time_s / 256 (what the accuracy bench measures).

The replayer's figure is the slowest process's time in its calls / 256
(iomodelIoTime).  Rounds whose runs lost 5% of their wall time or more to the
hypervisor (steal) are left out of the medians and counted.  Writes
bench/results/random-order.json and prints the table.

usage: .venv/bin/python bench/random_order.py --dir DIR [--rounds N]
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
import time
from pathlib import Path

from iomodel.replay.host import STOLEN_SHARE, steal_s, stolen_since
from machine_info import machine

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "random-order.json"
TRANSFER, OPS, NP = 16 << 10, 256, 2
IOMODEL = [sys.executable, "-m", "iomodel"]
ENV = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ob1",
       **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
          if os.geteuid() == 0 else {})}
LAYOUTS = {"interleaved": ["-s", str(OPS), "-b", str(TRANSFER)],
           "in order": ["-s", "1", "-b", str(TRANSFER * OPS)],
           "random": ["-s", "1", "-b", str(TRANSFER * OPS), "-z"]}


def run(cmd, what):
    try:
        out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=300, env=ENV)
    except subprocess.TimeoutExpired:
        sys.exit(f"random_order: {what} did not end within 300 s: {' '.join(map(str, cmd))}")
    if out.returncode != 0:
        sys.exit(f"random_order: {what} failed ({out.returncode}): {' '.join(map(str, cmd))}\n{out.stderr}")
    return out.stdout


def replayer_write(replayer, directory, layout):
    """Seconds per write of one replayer launch in that layout."""
    with tempfile.TemporaryDirectory(prefix="iomodel-order.", dir=directory) as d:
        out = run(["mpirun", "--oversubscribe", "-np", NP, replayer, "-a", "MPIIO", "-w", "-t", TRANSFER,
                   *LAYOUTS[layout], "-o", f"{d}/f", "-O", "summaryFormat=JSON"], layout)
        return json.loads(out)["tests"][0]["Results"][0]["iomodelIoTime"] / OPS


def application_write(app, directory, work):
    """Seconds per write of random_io 16KiBx256's write phase, traced and analyzed."""
    with tempfile.TemporaryDirectory(prefix="iomodel-order.", dir=directory) as d:
        trace, model = work / "trace", work / "model.json"
        run([*IOMODEL, "trace", "-o", trace, "--", "mpirun", "--oversubscribe", "-np", NP, app, d,
             TRANSFER, OPS], "random_io")
    run([*IOMODEL, "analyze", trace, "-o", model, "-q"], "iomodel analyze")
    phase = json.loads(model.read_text())["phases"][0]
    if phase["operation"] != "write" or phase["access_mode"] != "random":
        sys.exit(f"random_order: random_io's first phase came out a {phase['access_mode']} "
                 f"{phase['operation']}, not the random write this bench times ({model})")
    return phase["io_time_s"] / OPS


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="a directory on the storage to test")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("-o", default=str(RESULTS))
    args = ap.parse_args()
    if args.rounds < 1:
        ap.error(f"--rounds {args.rounds}: expected 1 or more")
    replayer = ROOT / "tracer" / "lib" / "iomodel_replay"
    if not replayer.is_file():
        sys.exit(f"random_order: {replayer} not found: run scripts/setup.sh first")
    if not os.path.isdir(args.dir):
        sys.exit(f"random_order: {args.dir}: no such directory (start its VC first)")
    configs = [*LAYOUTS, "application"]
    times, stolen = {c: [] for c in configs}, {c: 0 for c in configs}
    with tempfile.TemporaryDirectory(prefix="iomodel-order.") as tmp:
        work = Path(tmp)
        app = work / "random_io"
        run(["mpicc", "-O2", "-o", app, ROOT / "examples" / "random_io.c", "-lm"], "mpicc")
        for i in range(args.rounds):
            this = {}
            for c in random.sample(configs, len(configs)):
                s0, t0 = steal_s(), time.monotonic()
                t = application_write(app, args.dir, work) if c == "application" else \
                    replayer_write(replayer, args.dir, c)
                lost, wall = stolen_since(s0), time.monotonic() - t0
                if lost is not None and lost >= STOLEN_SHARE * wall:
                    stolen[c] += 1            # the hypervisor's time, not the storage's
                    this[c] = f"{c} {t * 1e6:.0f} us (lost {lost:.2f} s of {wall:.2f} s to steal: set aside)"
                else:
                    times[c].append(t)
                    this[c] = f"{c} {t * 1e6:.0f} us"
            print(f"round {i + 1}/{args.rounds}: " + ", ".join(this[c] for c in configs), file=sys.stderr)
    if any(not times[c] for c in configs):
        sys.exit(f"random_order: every run of {', '.join(c for c in configs if not times[c])} lost "
                 f"{STOLEN_SHARE:.0%} of its time or more to steal: rerun when the host is calmer")
    med = {c: statistics.median(times[c]) for c in configs}
    rows = [{"layout": c, "per_write_s": med[c], "runs_s": times[c], "set_aside_for_steal": stolen[c],
             "against_interleaved": med[c] / med["interleaved"]} for c in configs]
    print(f"{args.dir}: {NP} processes, {OPS} writes of {TRANSFER >> 10} KiB each to one file")
    print("| layout | us a write (median) | against interleaved | runs kept | set aside (steal) |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['layout']} | {r['per_write_s'] * 1e6:.1f} | {r['against_interleaved']:.3f} | "
              f"{len(r['runs_s'])} | {r['set_aside_for_steal']} |")
    Path(args.o).write_text(json.dumps({"machine": machine(), "dir": args.dir, "np": NP, "transfer": TRANSFER,
                                        "ops": OPS, "rounds": args.rounds, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.o}")


if __name__ == "__main__":
    main()
