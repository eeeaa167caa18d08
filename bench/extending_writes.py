#!/usr/bin/env python3
"""Do small writes that extend a file cost more than those within it?
(issue 79: BT-IO simple S on the disk, whose 240-byte writes the replayer
makes slower than the application does)

On a file system mounted `sync` (the testbed's disk), a write past the end
of the file changes its size, metadata the journal must commit before the
write returns; a write within the file, to blocks already there, does not.
IOR's layout of small transfers (-s N -b t -t t: segment i of rank r at
(i * np + r) * t) makes nearly every write extend the file. This bench runs
the same writes (4 ranks, 864 of 240 bytes each, independent MPI-IO, the
built-in replayer) three ways, in a new order each round:

- segmented: IOR's layout, each write past the end;
- block per rank: rank r's writes in its own block, only the last rank's
  past the end, the others into holes;
- overwrite: the segmented file written again (-E), no write past the end;
- with --blocks K,...: blocks of K transfers a rank and segment (-b K t),
  (np + K - 1) / (np K) of the writes past the end with the ranks in lockstep.

Per layout the median over the rounds of the slowest process's time per
write.  With --trace DIR (a trace of the application), per file its writes'
shares that extended it, as they started and in lockstep
(bench/extending_share.py).  Writes its entry into
bench/results/extending-writes.json and prints the table.

usage: .venv/bin/python bench/extending_writes.py --dir DIR [--rounds 3] [--trace T] [--blocks 2,5]
       DIR on a started disk VC (testbed/disk/start.sh), e.g. /tmp/iomodel-testbed/disk/work
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine_info import machine  # noqa: E402
import extending_share  # noqa: E402
import rounds  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "extending-writes.json"
ENV = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1", "OMPI_MCA_pml": "ob1",
       **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
          if os.geteuid() == 0 else {})}
LAYOUTS = ("segmented", "block per rank", "overwrite")


def per_write(replayer, args, path, flags):
    """The slowest process's seconds per write of one replayer launch."""
    cmd = ["mpirun", "--oversubscribe", "-np", str(args.np), str(replayer), "-a", "MPIIO", "-w",
           "-o", str(path), "-O", "summaryFormat=JSON", *flags]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=ENV)
    if out.returncode != 0:
        sys.exit(f"extending_writes: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return json.loads(out.stdout)["tests"][0]["Results"][0]["iomodelIoTime"] / args.ops


def measure(replayer, args, layout):
    d = Path(args.dir)
    seg = ["-s", str(args.ops), "-b", str(args.rs), "-t", str(args.rs)]
    if layout == "segmented":
        return per_write(replayer, args, d / "extending-seg", seg)
    if layout == "block per rank":
        return per_write(replayer, args, d / "extending-block",
                         ["-s", "1", "-b", str(args.rs * args.ops), "-t", str(args.rs)])
    if layout.startswith("blocks of "):         # k transfers a rank and segment
        k = int(layout.split()[2])
        return per_write(replayer, args, d / "extending-blocks",
                         ["-s", str(args.ops // k), "-b", str(args.rs * k), "-t", str(args.rs)])
    per_write(replayer, args, d / "extending-over", [*seg, "-k"])        # the file to write again
    try:
        return per_write(replayer, args, d / "extending-over", [*seg, "-E"])
    finally:
        (d / "extending-over").unlink(missing_ok=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="a directory on the started disk VC")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--rs", type=int, default=240, help="bytes a write")
    ap.add_argument("--ops", type=int, default=864, help="writes per process")
    ap.add_argument("--trace", help="a trace of the application")
    ap.add_argument("--blocks", type=lambda t: [int(x) for x in t.split(",") if x], default=[],
                    help="also IOR's layout with blocks of K transfers a rank and segment, for each K "
                         "of this list (K dividing --ops): (np + K - 1) / (np K) of the writes extend "
                         "the file in lockstep")
    ap.add_argument("-o", default=str(RESULTS))
    args = ap.parse_args()
    if any(k < 1 or args.ops % k for k in args.blocks):
        ap.error(f"--blocks: each K must divide --ops ({args.ops})")
    replayer = rounds.replayer("extending_writes")
    layouts = LAYOUTS + tuple(f"blocks of {k}" for k in args.blocks)
    times = rounds.in_rounds(layouts, args.rounds, lambda v: measure(replayer, args, v))
    rows = {v: {"per_write_s": statistics.median(t), "runs_s": t} for v, t in times.items()}
    result = {"machine": machine(), "dir": args.dir, "np": args.np, "rs": args.rs, "ops": args.ops,
              "rounds": args.rounds, "layouts": rows,
              "application": list(extending_share.file_rows(args.trace)) if args.trace else None}
    Path(args.o).write_text(json.dumps(result, indent=1) + "\n")
    print("| layout | per write |\n|---|---|")
    for v, d in rows.items():
        print(f"| {v} | {d['per_write_s'] * 1e3:.3f} ms |")
    for d in result["application"] or []:
        print(f"application: file {d['file']}: {d['writes']} writes, {d['extending']:.0%} past the file's end "
              f"in the order they started, {d['lockstep_rank_order']:.0%} in lockstep")


if __name__ == "__main__":
    main()
