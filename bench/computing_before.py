#!/usr/bin/env python3
"""Why collective writes after computing are slower in the profile than in
the application (issue 79): is it the computing, or the CPU it takes from the
storage that shares the cores?

predict's `collective-after-computing` correction takes a collective phase's
time from the profile's points measured after the replayer spun k seconds
between the calls.  On the testbed's disk VC those points are 1.1 to 1.8
times the back-to-back ones, while NAS BT-IO's own dumps, after its solver's
steps, take the back-to-back time.  The VC's device (throttlefs, a FUSE
daemon, and the loop device's worker) runs on the same 2 cores as the 4
ranks.  This bench runs one collective write shape (by default BT-IO class
W's dump: 4 ranks, 138,240 bytes each through a view of 480-byte pieces, 40
dumps) on a started disk VC, one launch per measurement, the variants in a
new order each round:

- back-to-back: the dumps one after the other;
- sleep: each dump after k seconds of sleep and a barrier (replay as modelled);
- spin: each dump after k seconds of spinning (the profile's computing point);
- barrier, spin: each dump after a barrier and k seconds of spinning, so that
  the processes come in together, as the application's, which communicate
  between dumps;
- spin, daemon first: the same, with throttlefs at nice -20, so that the
  spinning ranks cannot take its core.

Per variant: the median over the rounds of the time per dump (the slowest
process's time in its calls / dumps), and its ratio to back to back.  With
--app MODEL.json (models of the application's runs on the same VC), the
application's own time per dump (its write phases after the first) beside.

Writes its entry (by computing time and piece) into
bench/results/computing-before.json and prints the table.

usage: .venv/bin/python bench/computing_before.py --dir DIR [--think 0.025] [--rounds 5] [--app M.json ...]
       DIR on a started disk VC, e.g. after IOMODEL_DISK_WRITE_BPS=62914560
       IOMODEL_DISK_READ_BPS=62914560 testbed/disk/start.sh: /tmp/iomodel-testbed/disk/work
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from machine_info import machine  # noqa: E402
import rounds  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "computing-before.json"
ENV = {**os.environ, "OMPI_MCA_mpi_yield_when_idle": "1",
       **({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
          if os.geteuid() == 0 else {})}
VARIANTS = ("back-to-back", "sleep", "spin", "barrier, spin", "spin, daemon first")


def daemon_pid():
    """The throttlefs serving the disk VC DIR is on, or None."""
    out = subprocess.run(["pgrep", "-x", "throttlefs"], capture_output=True, text=True)
    pids = out.stdout.split()
    return int(pids[0]) if len(pids) == 1 else None


def renice(pid, nice):
    """All of pid's threads at `nice` (FUSE serves requests on several)."""
    for tid in os.listdir(f"/proc/{pid}/task"):
        os.setpriority(os.PRIO_PROCESS, int(tid), nice)


def per_dump(replayer, directory, args, variant):
    """Seconds per dump of one replayer launch."""
    extra = {"back-to-back": [], "sleep": [f"--iomodel.gap={args.think}", "--iomodel.gapBarrier"],
             "spin": [f"--iomodel.think={args.think}"],
             "barrier, spin": ["--iomodel.gapBarrier", f"--iomodel.think={args.think}"],
             "spin, daemon first": [f"--iomodel.think={args.think}"]}[variant]
    with tempfile.TemporaryDirectory(prefix="iomodel-before.", dir=directory) as d:
        cmd = ["mpirun", "--oversubscribe", "-np", str(args.np), str(replayer), "-a", "MPIIO", "-c", "-w",
               "-s", str(args.dumps), "-b", str(args.rs), "-t", str(args.rs), "-o", f"{d}/f",
               *([f"--iomodel.piece={args.piece}"] if args.piece else []), "-O", "summaryFormat=JSON", *extra]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=ENV)
        if out.returncode != 0:
            sys.exit(f"computing_before: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
        return json.loads(out.stdout)["tests"][0]["Results"][0]["iomodelIoTime"] / args.dumps


def app_per_dump(paths):
    """The application's median time per dump over its models' write phases after the first."""
    times = []
    for p in paths:
        m = json.loads(Path(p).read_text())
        times += [ph["io_time_s"] for ph in m["phases"] if ph["operation"] == "write" and ph["id"] > 1]
    return statistics.median(times) if times else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, help="a directory on the started disk VC")
    ap.add_argument("--think", type=float, default=0.025, help="seconds computed (or slept) before each dump")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--rs", type=int, default=138240, help="bytes per process and dump")
    ap.add_argument("--piece", type=int, default=480, help="the view's piece, bytes (0: no view)")
    ap.add_argument("--dumps", type=int, default=40)
    ap.add_argument("--app", nargs="*", default=[], help="models of the application's runs on the VC")
    ap.add_argument("-o", default=str(RESULTS))
    args = ap.parse_args()
    replayer = rounds.replayer("computing_before")
    pid = daemon_pid()
    if pid is None:
        sys.exit("computing_before: no single throttlefs running: start the disk VC first (testbed/disk/start.sh)")

    def measure(v):
        renice(pid, -20 if v == "spin, daemon first" else 0)
        try:
            return per_dump(replayer, args.dir, args, v)
        finally:
            renice(pid, 0)
    times = rounds.in_rounds(VARIANTS, args.rounds, measure)
    back = statistics.median(times["back-to-back"])
    rows = {v: {"per_dump_s": statistics.median(t), "runs_s": t, "ratio": statistics.median(t) / back}
            for v, t in times.items()}
    app = app_per_dump(args.app)
    result = {"machine": machine(), "dir": args.dir, "np": args.np, "rs": args.rs, "piece": args.piece,
              "dumps": args.dumps, "think_s": args.think, "rounds": args.rounds, "variants": rows,
              "application": None if app is None else {"models": [str(p) for p in args.app], "per_dump_s": app,
                                                       "ratio": app / back}}
    # one entry per (computing time, piece): the view's and the profile's plain point
    out = Path(args.o)
    runs = json.loads(out.read_text()).get("runs", {}) if out.exists() else {}
    runs[f"think {args.think:g} s, piece {args.piece or 'none'}"] = result
    out.write_text(json.dumps({"runs": runs}, indent=1) + "\n")
    print("| variant | per dump | x back to back |\n|---|---|---|")
    for v, d in rows.items():
        print(f"| {v} | {d['per_dump_s'] * 1e3:.2f} ms | {d['ratio']:.2f} |")
    if app is not None:
        print(f"| the application | {app * 1e3:.2f} ms | {app / back:.2f} |")


if __name__ == "__main__":
    main()
